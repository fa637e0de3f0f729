"""Pipewright from Python: plan and simulate pipeline-parallel training in process.

>>> import pipewright
>>> project = pipewright.load("assets/examples/resnet50-2gpu-pipelined.json")
>>> result = project.simulate(microbatches=12)
>>> result.iteration_time_s, result.bubble

The module links Pipewright's core and simulator only (no Torch, no Qt);
real runs stay with the ``pipewright`` program. docs/python.md walks through it.
"""

from ._config_import import ImportedConfig, import_config
from ._catalogs import (compare, devices, layers, load_schedule_csv, save_schedule_csv,
                        schedule, schedule_from_csv, schedule_to_csv, schedules)
from ._core import __version__
from ._errors import ProjectError
from ._project import Project, load
from ._results import PlanResult, ScheduleComparison, SimulationResult
from ._run import RunError, RunResult, run
from ._views import ListView, Section

__all__ = [
    "ImportedConfig", "ListView", "PlanResult", "Project", "ProjectError", "RunError", "RunResult",
    "ScheduleComparison", "Section", "SimulationResult",
    "__version__", "compare", "devices", "import_config", "layers", "load", "load_schedule_csv",
    "run", "save_schedule_csv", "schedule", "schedule_from_csv", "schedule_to_csv", "schedules",
]
