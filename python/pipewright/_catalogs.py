"""What Pipewright knows (schedules, devices, layer types), schedules as
action lists with PyTorch's CSV both ways, and comparisons of timelines:
the command line's answers, computed in this process."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Optional, Union

from . import _core

PathLike = Union[str, "os.PathLike[str]"]
Actions = list[list[str]]


def _command(*arguments: str) -> Any:
    """The parsed JSON that ``pipewright ARGUMENTS...`` prints; ValueError with its message."""
    code, out, err = _core.run_command(list(arguments))
    if code != 0:
        raise ValueError(err.strip().removeprefix("pipewright: ") or f"exit code {code}")
    return json.loads(out)


def schedules() -> list[dict]:
    """Every schedule generator: name, title, constraints… (``pipewright schedules --json``)."""
    return _command("schedules", "--json")


def devices() -> list[dict]:
    """The device catalog: name, kind, memory, peak TFLOP/s and the measured rates the kernel
    model prices with, attention kernels included (``pipewright devices --json``)."""
    return _command("devices", "--json")


def layers() -> list[dict]:
    """The layer types and their parameters (``pipewright layers --json``)."""
    return _command("layers", "--json")


def schedule(name: str, stages: int, microbatches: int, *,
             stage_ranks: Optional[list[int]] = None) -> Actions:
    """The action lists of a generated schedule, one list per rank, in PyTorch's
    notation (``"2F0"``, ``"1B3"``, ``"0I1"``, ``"(0F3;5B1)OVERLAP_F_B"``).

    Stage s runs on rank s unless ``stage_ranks`` says otherwise (interleaved
    schedules: ``[s % devices for s in range(stages)]``). Compute actions
    only, as PyTorch's compute-only CSV holds them.
    """
    return _core.schedule(name, stages, microbatches, stage_ranks)


def schedule_to_csv(actions: Actions, format: Optional[str] = None) -> str:
    """The action lists as CSV text. ``format`` None keeps them as given;
    ``"compute-only"`` or ``"compute-comms"`` write what torch's ``_load_csv``
    reads in that format (docs/file-formats.md)."""
    return _core.schedule_to_csv([list(row) for row in actions], format)


def schedule_from_csv(text: str) -> Actions:
    """The action lists of a CSV text (one row per rank); ValueError naming the bad cell."""
    return _core.schedule_from_csv(text)


def save_schedule_csv(actions: Actions, path: PathLike, format: Optional[str] = None) -> None:
    """Writes schedule_to_csv(actions, format) to ``path``, atomically."""
    _core.write_text_atomically(os.fspath(path), schedule_to_csv(actions, format))


def load_schedule_csv(path: PathLike) -> Actions:
    with open(path, encoding="utf-8") as file:
        return schedule_from_csv(file.read())


def compare(simulated: Any, measured: PathLike, *, force: bool = False) -> dict:
    """Simulated against measured timelines, action by action (``pipewright compare --json``).

    ``simulated`` is a Timeline JSON file or a SimulationResult (whose
    timeline goes through a temporary file; the report's ``simulated`` file
    is then None); ``measured`` the Timeline JSON of a real run
    (``pipewright run`` writes it).
    """
    from ._results import SimulationResult
    extra = ["--force"] if force else []
    if isinstance(simulated, SimulationResult):
        with tempfile.TemporaryDirectory(prefix="pipewright-") as folder:
            path = os.path.join(folder, "simulated.json")
            simulated.save(timeline=path)
            report = _command("compare", path, os.fspath(measured), "--json", *extra)
            if report.get("simulated") == path:
                report["simulated"] = None
            return report
    return _command("compare", os.fspath(simulated), os.fspath(measured), "--json", *extra)
