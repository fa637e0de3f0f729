"""pipewright.Project: a project file in memory, editable, simulated in process."""

from __future__ import annotations

import copy
import os
from typing import Any, List, Optional, Sequence, Union

from . import _core
from ._results import PlanResult, ScheduleComparison, SimulationResult
from ._views import plain, wrap

PathLike = Union[str, "os.PathLike[str]"]
Count = Union[int, str, None]  # a count, or "auto" for plan()
# A device calibration file (`pipewright calibrate`), or one per device type.
Calibrations = Union[PathLike, Sequence[PathLike], None]


class Project:
    """A Pipewright project (docs/project-format.md).

    Its sections read and write as attributes: ``project.model``,
    ``project.topology``, ``project.placement``, ``project.training``, and
    ``project.data_parallel`` / ``project.tensor_parallel`` when the file has
    them. Dicts of the file are views (``project.training.schedule``), lists
    are list views (``project.model.layers[0].name``); plain dicts and lists
    may be assigned to either. Every assignment is checked against the file
    format at once (wrong types, unknown fields) and refused with a
    ProjectError that leaves the project as it was; whether the whole project
    makes sense (layers that chain, a placement that covers them) is checked
    by ``validate()`` and by every simulation or plan, so that an edit may go
    through several steps that are each incomplete.
    """

    __slots__ = ("_handle", "_document")

    def __init__(self, handle: "_core.ProjectHandle"):
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_document", handle.to_dict())

    # ---- Reading and writing ----

    @classmethod
    def from_dict(cls, document: dict, *, base_dir: Optional[PathLike] = None,
                  check: bool = True) -> "Project":
        """A project from the dict a project file holds.

        ``base_dir`` is the folder that relative paths in it start from (a CSV
        schedule), the current folder by default. With ``check`` (the default)
        a project that ``pipewright validate`` would refuse raises ProjectError
        with every problem; without it only a document that is not a project
        at all does, so that one may load a project in order to fix it.
        """
        folder = os.fspath(base_dir) if base_dir is not None else os.getcwd()
        return cls(_core.ProjectHandle.from_dict(plain(document), folder, check))

    def to_dict(self) -> dict:
        """The project as its file holds it (a copy: editing it changes nothing here)."""
        return copy.deepcopy(self._document)

    def save(self, path: PathLike) -> None:
        """Writes the project file, atomically (a temporary file renamed over it)."""
        self._handle.save(os.fspath(path))

    def copy(self) -> "Project":
        return Project(self._handle.copy())

    def validate(self) -> list[tuple[str, str]]:
        """Every problem ``pipewright validate`` would list, as (path, message); empty if none."""
        return [tuple(p) for p in self._handle.problems()]

    @property
    def path(self) -> Optional[str]:
        """The file it was loaded from or last saved to; None for a dict."""
        return self._handle.path or None

    @property
    def base_dir(self) -> str:
        return self._handle.base_dir

    # ---- Sections as attributes ----

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        document = object.__getattribute__(self, "_document")
        if name not in document:
            raise AttributeError(f"the project has no {name!r} (it has {', '.join(document)})")
        return wrap(self, (name,), document[name])

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_") or name in type(self).__dict__:
            raise AttributeError(f"{name!r} cannot be set on a project")
        self._assign((name,), value)

    def __delattr__(self, name: str) -> None:
        self._remove((name,))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._document))

    def _resolve(self, path: tuple) -> Any:
        value = self._document
        for part in path:
            value = value[part]
        return value

    def _edited(self, path: tuple, edit) -> None:
        document = copy.deepcopy(self._document)
        parent = document
        for part in path[:-1]:
            parent = parent[part]
        edit(parent, path[-1])
        handle = _core.ProjectHandle.from_dict(document, self._handle.base_dir, False)
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_document", handle.to_dict())

    def _assign(self, path: tuple, value: Any) -> None:
        value = plain(value)

        def edit(parent, key):
            parent[key] = value
        self._edited(path, edit)

    def _remove(self, path: tuple) -> None:
        def edit(parent, key):
            del parent[key]
        self._edited(path, edit)

    # ---- What the command line does with it ----

    def simulate(self, schedule: Optional[str] = None, microbatches: Optional[int] = None, *,
                 schedule_csv: Optional[PathLike] = None, batch_size: Optional[int] = None,
                 data_parallel: Optional[int] = None, tensor_parallel: Optional[int] = None,
                 sequence_parallel: Optional[bool] = None, expert_parallel: Optional[int] = None,
                 context_parallel: Optional[int] = None, context_exchange: Optional[str] = None,
                 profile: Optional[PathLike] = None, calibration: Calibrations = None,
                 efficiency: Optional[float] = None, memory_margin: Optional[float] = None,
                 strict: bool = False) -> SimulationResult:
        """One training iteration simulated: ``pipewright simulate`` with these options.

        Each option replaces the project's setting for this simulation only
        (the project is not changed). ``profile`` is a file of measured costs
        (``pipewright profile``); ``calibration`` a device calibration file
        (``pipewright calibrate``) or a list of them, one per device type;
        ``efficiency`` prices every layer as its
        FLOPs at that fraction of peak; ``memory_margin`` is GiB every GPU keeps
        free beside what the memory model counts (NCCL's buffers, fragmentation).
        Raises ProjectError when the project, with the options, is not valid.
        """
        run = _core.simulate(self._handle, schedule, _path(schedule_csv), microbatches,
                             batch_size, data_parallel, tensor_parallel, sequence_parallel,
                             expert_parallel, context_parallel, context_exchange, _path(profile),
                             _paths(calibration), efficiency, memory_margin, strict)
        return SimulationResult(run)

    def compare_schedules(self, *, microbatches: Optional[int] = None,
                          batch_size: Optional[int] = None, data_parallel: Optional[int] = None,
                          tensor_parallel: Optional[int] = None,
                          sequence_parallel: Optional[bool] = None,
                          expert_parallel: Optional[int] = None,
                          context_parallel: Optional[int] = None,
                          context_exchange: Optional[str] = None,
                          profile: Optional[PathLike] = None, calibration: Calibrations = None,
                          efficiency: Optional[float] = None,
                          memory_margin: Optional[float] = None,
                          strict: bool = False) -> ScheduleComparison:
        """Every schedule and the single-device baseline: ``simulate --compare-schedules``."""
        rows, table = _core.compare_schedules(
            self._handle, None, None, microbatches, batch_size, data_parallel, tensor_parallel,
            sequence_parallel, expert_parallel, context_parallel, context_exchange, _path(profile),
            _paths(calibration), efficiency, memory_margin, strict)
        return ScheduleComparison(rows, table)

    def plan(self, schedule: Optional[str] = None, microbatches: Optional[int] = None, *,
             data_parallel: Count = None, tensor_parallel: Count = None,
             sequence_parallel: Optional[bool] = None, expert_parallel: Count = None,
             context_parallel: Count = None, profile: Optional[PathLike] = None,
             calibration: Calibrations = None, efficiency: Optional[float] = None,
             memory_margin: Optional[float] = None, strict: bool = False,
             recompute_every_block: bool = False) -> PlanResult:
        """The fastest split, schedule and micro-batch count that fit: ``pipewright plan``.

        ``schedule`` and ``microbatches`` fix those; ``data_parallel``,
        ``tensor_parallel``, ``expert_parallel`` and ``context_parallel`` take a
        count or ``"auto"`` (search every count). ``recompute_every_block``
        keeps a plan's recomputation of every block instead of the fewest that fit;
        ``memory_margin`` (GiB) is kept free on every GPU.
        The result's ``project`` is this project with the plan applied (what
        ``--apply`` writes). Ctrl-C (KeyboardInterrupt) stops a long plan.
        """
        answer = _core.plan(self._handle, schedule, microbatches, data_parallel, tensor_parallel,
                            sequence_parallel, expert_parallel, context_parallel, _path(profile),
                            _paths(calibration), efficiency, memory_margin, strict,
                            not recompute_every_block)
        planned = answer["project"]
        return PlanResult(answer["report"], Project(planned) if planned is not None else None)

    def __repr__(self) -> str:
        model = self._document.get("model", {})
        layers = len(model.get("layers", []))
        stages = len(self._document.get("placement", []))
        training = self._document.get("training", {})
        schedule = training.get("schedule", "?")
        if isinstance(schedule, dict):
            schedule = "csv " + str(schedule.get("csv", ""))
        where = f" from {self.path}" if self.path else ""
        return (f"<pipewright.Project {model.get('name', 'model')!r}{where}: {layers} layers "
                f"in {stages} stages, {schedule}>")

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Project) and self._document == other._document

    __hash__ = None


def load(path: PathLike, *, check: bool = True) -> Project:
    """Reads a project file; with ``check`` (the default) an invalid one raises ProjectError
    listing every problem ``pipewright validate`` prints."""
    return Project(_core.ProjectHandle.load(os.fspath(path), check))


def _path(value: Optional[PathLike]) -> Optional[str]:
    return None if value is None else os.fspath(value)


def _paths(value: Calibrations) -> List[str]:
    """A path, or a list of them, as a list of strings (none: empty)."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fspath(value)]
    return [os.fspath(v) for v in value]
