"""pipewright.import_config: the project a Hugging Face config describes."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Union

from . import _core
from ._project import Project
from ._views import plain

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class ImportedConfig:
    """What ``import_config`` made of a config: the project and what it counts."""

    project: Project
    architecture: str
    parameters: int
    # A token's: for a mixture of experts, the experts it is routed to.
    active_parameters: int
    # What the model prices otherwise than the config's model runs, in words.
    notes: List[str]
    device_spec: str

    def _repr_html_(self) -> str:
        active = ("" if self.active_parameters == self.parameters
                  else f" ({self.active_parameters:,} active per token)")
        notes = "".join(f"<li>{n}</li>" for n in self.notes)
        return (f"<b>{self.architecture}</b>: {self.parameters:,} parameters{active} "
                f"on {self.device_spec}" + (f"<ul>{notes}</ul>" if notes else ""))


def import_config(config: Union[PathLike, Mapping[str, Any]], *, seq_len: Optional[int] = None,
                  devices: int = 1, nodes: int = 1, device_spec: str = "H100-SXM",
                  batch_size: int = 32, microbatches: Optional[int] = None) -> ImportedConfig:
    """The decoder a Hugging Face ``config.json`` describes, as ``pipewright import`` makes it.

    ``config`` is the file's path or its dict (``AutoConfig.from_pretrained(...).to_dict()``
    gives one). The model (Llama, Mistral, Mixtral, Qwen2/3, Qwen3-MoE, Gemma 2/3, gpt-oss,
    Phi-3/4, DeepSeek-V2/V3 or GPT-2) is placed over ``nodes`` × ``devices`` of ``device_spec`` (a
    catalog name: ``pipewright.devices()``), split by the planner, in micro-batches of the
    ``batch_size`` (twice the stages unless ``microbatches`` says), bfloat16 and flash
    attention on GPUs, AdamW. ``seq_len`` defaults to the config's positions, at most 4,096.
    A config the model cannot describe raises ProjectError naming its field.
    """
    if isinstance(config, Mapping):
        document, what = dict(config), "config"
    elif isinstance(config, (str, os.PathLike)):
        what = os.fspath(config)
        with open(what, encoding="utf-8") as f:
            document = json.load(f)
    else:
        raise TypeError("config is a path to a config.json or its dict, not "
                        f"{type(config).__name__}")
    handle, summary = _core.import_config(
        plain(document), what, os.getcwd(), seq_len, devices, nodes, device_spec, batch_size,
        microbatches)
    return ImportedConfig(project=Project(handle), architecture=summary["architecture"],
                          parameters=summary["parameters"],
                          active_parameters=summary["active_parameters"],
                          notes=list(summary["notes"]), device_spec=summary["device_spec"])
