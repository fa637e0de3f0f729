#!/usr/bin/env python3
"""Writes bench/deepseek-v3-h800-2048.json: DeepSeek-V3 as its report trains it.

The DeepSeek-V3 Technical Report (arXiv:2412.19437, section 3.2) trains the
671 B model on 2,048 H800s, 256 nodes of 8: pipeline 16 (DualPipe), expert
parallelism 64 spanning 8 nodes, ZeRO-1 data parallelism, no tensor
parallelism; NVLink inside a node, one 400 Gb/s InfiniBand NIC per GPU. This
poses it for `pipewright simulate` (docs/validation.md, "DeepSeek-V3 on 2,048
H800s"):

- the model is `pipewright import assets/models/deepseek-v3.json --seq-len 4096`
  (61 blocks, latent attention, 256 routed experts top-8 + 1 shared; the
  multi-token prediction module left out);
- 32 stages in a V over 16 ranks for `dualpipev` (stage s and 31 − s on rank
  s): the embedding and the first two blocks, then two blocks a stage, the
  last block alone, then the norm and the head, so that rank 0 holds both
  the embedding and the head, as the report places them;
- pipeline rank p on nodes 16p … 16p + 15, replica r on node 16p + r // 8,
  GPU r % 8: each stage's 128 replicas fill 16 nodes, and the expert-parallel
  group of replicas 0–63 spans 8 nodes of 8 GPUs;
- NVLink at the H800's 200 GB/s a direction (NCCL's efficiency for NVLink,
  0.8 makes it the report's 160 GB/s), the network at 8 × 50 GB/s a node;
- batch 15,360 sequences of 4,096 tokens in micro-batches of 1, bfloat16
  (Pipewright has no FP8 training dtype), AdamW, no activation recompute.

Usage: python3 bench/make_deepseek_v3_project.py [PIPEWRIGHT] [OUT] [1f1b]
(defaults: build/cli/pipewright, bench/deepseek-v3-h800-2048.json). With
`1f1b` it writes the same cluster and batch as 16 stages, one a rank (the
embedding and 3 blocks, 14 stages of 4 blocks, 2 blocks with the norm and the
head), for the 1F1B and ZB rows of docs/validation.md.
"""
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
PIPEWRIGHT = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build/cli/pipewright")
OUT = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "bench/deepseek-v3-h800-2048.json"
FLAT = len(sys.argv) > 3 and sys.argv[3] == "1f1b"

PIPELINE, REPLICAS, EXPERT_PARALLEL, PER_NODE = 16, 128, 64, 8
NODES = PIPELINE * REPLICAS // PER_NODE  # 256
NODES_PER_RANK = REPLICAS // PER_NODE  # 16

with tempfile.TemporaryDirectory() as tmp:
    imported = pathlib.Path(tmp) / "deepseek-v3.json"
    subprocess.run([PIPEWRIGHT, "import", str(ROOT / "assets/models/deepseek-v3.json"),
                    "--seq-len", "4096", "--device-spec", "H800", "-o", str(imported)],
                   check=True, stdout=subprocess.DEVNULL)
    model = json.loads(imported.read_text())["model"]

layers = [layer["name"] for layer in model["layers"]]
assert len(layers) == 64 and layers[0] == "embed_tokens" and layers[-1] == "lm_head", layers


def device(rank, replica):
    return f"node{rank * NODES_PER_RANK + replica // PER_NODE}/c0/gpu{replica % PER_NODE}"


if FLAT:
    stages = [["embed_tokens", "layers.0", "layers.1", "layers.2"]]
    stages += [[f"layers.{3 + 4 * k + i}" for i in range(4)] for k in range(14)]
    stages += [["layers.59", "layers.60", "norm", "lm_head"]]
else:
    stages = [["embed_tokens", "layers.0", "layers.1"]]
    stages += [[f"layers.{2 * k}", f"layers.{2 * k + 1}"] for k in range(1, 30)]
    stages += [["layers.60"], ["norm", "lm_head"]]
assert [name for stage in stages for name in stage] == layers


def v_rank(stage):
    if FLAT:
        return stage
    return stage if stage < PIPELINE else 2 * PIPELINE - 1 - stage


model = {"name": "deepseek-v3", "input": model["input"], "loss": model["loss"],
         "layers": model["layers"]}
project = {
    "format": "pipewright-project",
    "version": 1,
    "model": model,
    "topology": {
        "links": {"intra_container": {"bandwidth_GBps": 200},
                  "inter_node": {"bandwidth_GBps": 400}},
        "nodes": [{"name": f"node{n}", "containers": [{"name": "c0", "devices": [
            {"name": f"gpu{g}", "spec": "H800"} for g in range(PER_NODE)]}]}
                  for n in range(NODES)],
    },
    "placement": [{"device": device(v_rank(s), 0), "layers": {"from": st[0], "to": st[-1]}}
                  for s, st in enumerate(stages)],
    "training": {"batch_size": 15360, "microbatch_size": 1, "schedule": "1f1b" if FLAT else "dualpipev",
                 "optimizer": {"type": "adamw", "lr": 2.2e-4, "weight_decay": 0.1},
                 "steps": 10, "dtype": "bfloat16", "seed": 0},
    "data_parallel": {"size": REPLICAS, "zero_stage": 1,
                      "replicas": [[device(p, r) for p in range(PIPELINE)]
                                   for r in range(1, REPLICAS)]},
    "expert_parallel": {"size": EXPERT_PARALLEL},
}


def dump(value, indent=0):
    """Indented JSON with each layer, node, stage and replica on one line."""
    pad = " " * indent
    if isinstance(value, dict) and any(isinstance(v, (dict, list)) for v in value.values()) \
            and not ("containers" in value or "device" in value or "type" in value):
        items = [f'{pad}  {json.dumps(k)}: {dump(v, indent + 2).lstrip()}' for k, v in value.items()]
        return pad + "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list) and value and isinstance(value[0], (dict, list)):
        items = [dump(v, indent + 2) for v in value]
        return pad + "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return pad + json.dumps(value, separators=(", ", ": "))


OUT.write_text(dump(project) + "\n")
print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")
