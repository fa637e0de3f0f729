"""Real runs from Python: ``pipewright run`` as a child process.

The module never loads Torch: a real run is the ``pipewright`` program's
work, and its ``--json`` summary comes back as a RunResult.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import tempfile
from typing import Any, Optional, Union

from ._project import PathLike, Project, load


class RunError(RuntimeError):
    """A real run that did not train to the end.

    ``message`` is the program's own account (its last ``pipewright:`` lines),
    ``exit_code`` its exit status and ``stderr`` everything it said.
    """

    def __init__(self, message: str, exit_code: int, stderr: str):
        self.message = message
        self.exit_code = exit_code
        self.stderr = stderr
        super().__init__(message)


class RunResult:
    """A finished real run, as ``pipewright run --json`` reports it (``to_dict()``).

    ``out_dir`` holds its measured timeline, trace and metrics, which
    ``pipewright.compare(simulated, result.out_dir)`` sets beside a simulation.
    """

    def __init__(self, report: dict):
        self._report = report

    def to_dict(self) -> dict:
        return copy.deepcopy(self._report)

    def __getitem__(self, key: str) -> Any:
        return self._report[key]

    @property
    def out_dir(self) -> str:
        return self._report["out_dir"]

    @property
    def iteration_time_s(self) -> float:
        """Median iteration after the warm-up steps, optimizer step included."""
        return self._report["iteration_time_s"]

    @property
    def losses(self) -> list:
        return list(self._report.get("losses", []))

    @property
    def throughput(self) -> float:
        """Samples per second."""
        return self._report["throughput_samples_per_s"]

    def __repr__(self) -> str:
        r = self._report
        losses = self.losses
        loss = f" · loss {losses[0]:.4g} → {losses[-1]:.4g}" if losses and all(
            isinstance(x, (int, float)) for x in (losses[0], losses[-1])) else ""
        return (f"<RunResult {r.get('schedule')} · {r.get('steps')} steps · "
                f"{self.iteration_time_s * 1e3:.3g} ms an iteration{loss} · {self.out_dir}>")


def _program(cli: Optional[PathLike]) -> str:
    path = os.fspath(cli) if cli is not None else (
        os.environ.get("PIPEWRIGHT_CLI") or shutil.which("pipewright"))
    if not path or not os.path.exists(path):
        raise FileNotFoundError(
            "the pipewright program was not found: put it on PATH, set PIPEWRIGHT_CLI, or "
            "pass cli=")
    return path


def _unchanged_file(project: Project) -> Optional[str]:
    """The project's own file, when what is in memory is what it holds."""
    if project.path and os.path.isfile(project.path):
        try:
            if load(project.path, check=False) == project:
                return project.path
        except Exception:  # a file changed on disk since: written afresh below
            return None
    return None


def run(project: Union[Project, PathLike], steps: Optional[int] = None, *,
        out: Optional[PathLike] = None, schedule: Optional[str] = None,
        microbatches: Optional[int] = None, data_parallel: Optional[int] = None,
        tensor_parallel: Optional[int] = None, threads_per_rank: Optional[int] = None,
        device: Optional[str] = None, force: bool = False, timeout: Optional[float] = None,
        cli: Optional[PathLike] = None) -> RunResult:
    """Trains the project for real: ``pipewright run PROJECT --json`` with these options.

    ``project`` is a Project or a project file. A Project edited since it was
    loaded is written for the run beside its own file (relative paths in it
    then still resolve), as a hidden file removed afterwards, or in a
    temporary folder where that folder cannot be written. ``timeout`` bounds
    the whole run in seconds. Raises RunError, with the program's words,
    when the run does not train to the end.
    """
    program = _program(cli)
    written = None
    if isinstance(project, Project):
        path = _unchanged_file(project)
        if path is None:
            folder = project.base_dir
            if not os.access(folder, os.W_OK):
                folder = tempfile.mkdtemp(prefix="pipewright-run-")
            handle, written = tempfile.mkstemp(prefix=".pipewright-run-", suffix=".json",
                                               dir=folder)
            os.close(handle)
            project.save(written)
            path = written
    else:
        path = os.fspath(project)
    arguments = [program, "run", path, "--json"]
    for flag, value in (("--steps", steps), ("--out", out), ("--schedule", schedule),
                        ("--microbatches", microbatches), ("--data-parallel", data_parallel),
                        ("--tensor-parallel", tensor_parallel),
                        ("--threads-per-rank", threads_per_rank), ("--device", device)):
        if value is not None:
            arguments += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    if force:
        arguments.append("--force")
    try:
        done = subprocess.run(arguments, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        raise RunError(f"the run did not end within {timeout:g} s and was stopped", -1,
                       expired.stderr or "") from None
    finally:
        if written is not None:
            os.remove(written)
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.startswith("pipewright: ")]
        message = "\n".join(line[len("pipewright: "):] for line in said[-3:]) or (
            f"pipewright run exited with {done.returncode}")
        raise RunError(message, done.returncode, done.stderr)
    return RunResult(json.loads(done.stdout))
