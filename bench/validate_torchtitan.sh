#!/usr/bin/env bash
# Checks `pipewright simulate` against torchtitan's published benchmarks of
# Llama 3.1 8B, 70B and 405B on up to 512 H100s (pytorch/torchtitan,
# benchmarks/llama3_h100_202412_torchtitan.md, BSD-3-Clause; torchtitan
# 9dec370 of 2024-12-26): FSDP alone, FSDP with tensor parallelism, and FSDP
# with tensor and pipeline parallelism under 1F1B and interleaved 1F1B, and
# with context parallelism at 32K to 256K tokens.
# Builds nothing; imports the model presets (assets/models), writes one
# project per row into a temporary folder, simulates them and prints a
# markdown table (docs/validation.md).
#
#   PIPEWRIGHT=build/release/cli/pipewright bench/validate_torchtitan.sh
#
# Settings (environment):
#   PIPEWRIGHT   the pipewright binary (default build/release/cli/pipewright,
#                else `pipewright` on the PATH)
#   OUT          folder for the generated projects (default a new folder under
#                /tmp)
set -euo pipefail

source "$(dirname "$0")/validation_common.sh" torchtitan

PIPEWRIGHT=$PIPEWRIGHT OUT=$OUT BENCH="$here" MODELS="$here/../assets/models" python3 - <<'PYTHON'
import os
import sys

sys.path.insert(0, os.environ["BENCH"])
from validation_common import (device, dgx_topology, imported_model, print_row,  # noqa: E402
                               project_of, simulate_json, write_project)

PW = os.environ["PIPEWRIGHT"]
OUT = os.environ["OUT"]
MODELS = os.environ["MODELS"]
SEQ = 8192  # torchtitan's Llama 3.1 configs, where a row gives none
GiB = 2**30

# The benchmark's hardware: Grand Teton hosts of 8 H100s of 96 GB HBM2e
# (2.4 TB/s) at a 500 W power limit, NVLink inside, 400 Gbit/s of RDMA a GPU.
# The catalog's H100-SXM (80 GB HBM3, 3.35 TB/s, 700 W) is the nearest
# entry: its memory is set to 96 GB, the rest is left as it is.
MEMORY_GIB = round(96e9 / GiB, 2)
NVLINK_GBPS = 450
NETWORK_GBPS = 400  # a node: 8 × 50 GB/s

# (table, row, preset, GPUs, T, p, FSDP, local batch, micro-batches,
#  checkpointing, dtype, schedule, stages a rank, what torchtitan adds,
#  published TPS/GPU, published memory GiB[, context-parallel size,
#  sequence]). FSDP is the data-parallel size less context parallelism:
#  the replicas are FSDP × CP, each group of CP sharing its sequences.
ROWS = [
    ("1", "FSDP", "llama-3.1-8b", 8, 1, 1, 8, 2, 1, "selective", "bfloat16", "1f1b", 1,
     "—", 5762, 82.4),
    ("3", "FSDP", "llama-3.1-8b", 128, 1, 1, 128, 2, 1, "selective", "bfloat16", "1f1b", 1,
     "—", 5605, 67.0),
    ("4", "2D", "llama-3.1-70b", 256, 8, 1, 32, 16, 1, True, "float8", "1f1b", 1,
     "torch.compile", 829, 71.9),
    ("5", "1F1B", "llama-3.1-405b", 512, 8, 8, 8, 32, 8, True, "float8", "1f1b", 1,
     "torch.compile, AsyncTP", 100, 82.5),
    ("5", "Interleaved 1F1B", "llama-3.1-405b", 512, 8, 8, 8, 32, 8, True, "float8",
     "interleaved-1f1b", 2, "torch.compile, AsyncTP", 128, 72.7),
] + [
    ("2", f"CP {cp}", "llama-3.1-8b", 8, 1, 1, 8 // cp, 1, 1, True, "float8", "1f1b", 1,
     "torch.compile", tps, memory, cp, seq)
    for cp, seq, tps, memory in [(1, 32768, 3890, 83.9), (2, 65536, 2540, 84.2),
                                 (4, 131072, 1071, 84.0), (8, 262144, 548, 84.5)]
] + [
    ("6", f"CP {cp}", "llama-3.1-405b", 512, 8, 8, 8 // cp, 8, 8, True, "float8", "1f1b", 1,
     "torch.compile, AsyncTP", tps, memory, cp, seq)
    for cp, seq, tps, memory in [(1, 32768, 76, 75.3), (2, 65536, 47, 75.9),
                                 (4, 131072, 31, 77.1), (8, 262144, 16, 84.9)]
]


def torchtitan_split(blocks, stages):
    """Blocks per stage as torchtitan's generate_split_points cuts them: the
    first stage the base share, the middle ones one more while the remainder
    lasts, the last what is left."""
    if stages == 1:
        return [blocks]
    base, extra = divmod(blocks, stages)
    sizes = [base]
    for _ in range(1, stages - 1):
        sizes.append(base + (1 if extra > 0 else 0))
        extra -= 1 if extra > 0 else 0
    sizes.append(blocks - sum(sizes))
    return sizes


def project(name, preset, gpus, T, p, fsdp, local_batch, microbatches, checkpointing, dtype,
            schedule, chunks, cp=1, seq=SEQ):
    model = imported_model(PW, os.path.join(MODELS, preset + ".json"), seq, OUT)
    names = [layer["name"] for layer in model["layers"]]
    blocks = [n for n in names if n.startswith("layers.")]
    stages = p * chunks
    placement = []
    at = 0
    for k, size in enumerate(torchtitan_split(len(blocks), stages)):
        first = names[0] if k == 0 else blocks[at]
        last = names[-1] if k == stages - 1 else blocks[at + size - 1]
        at += size
        # Stage k on rank k mod p, each rank a node's tensor-parallel group.
        placement.append({"device": device((k % p) * T), "layers": {"from": first, "to": last}})
    topology = dgx_topology(gpus, "H100-SXM", NETWORK_GBPS)
    topology["links"]["intra_container"]["bandwidth_GBps"] = NVLINK_GBPS
    for node in topology["nodes"]:
        for gpu in node["containers"][0]["devices"]:
            gpu["memory_GiB"] = MEMORY_GIB
    training = {"batch_size": fsdp * local_batch, "microbatch_size": local_batch // microbatches,
                "schedule": schedule, "dtype": dtype,
                "optimizer": {"type": "adamw", "lr": 8e-5, "weight_decay": 0.1},
                "activation_checkpointing": checkpointing, "steps": 10, "seed": 0}
    j = project_of(model, topology, placement, training,
                   data_parallel={"size": fsdp * cp, "zero_stage": 3})
    if cp > 1:
        # torchtitan's default: the keys and values all-gathered.
        j["context_parallel"] = {"size": cp, "exchange": "all_gather"}
    if T > 1:
        j["tensor_parallel"] = {"size": T, "sequence_parallel": True}
    return write_project(OUT, name, j)


print(f"Pipewright: {PW}")
print(f"Projects:   {OUT}")
print("Costs:      kernel model; H100-SXM with 96 GB; NVLink 450 GB/s, 400 GB/s a node")
print()
print(f"Llama 3.1 at {SEQ} tokens a sequence on H100s, ZeRO-3 (FSDP) over the data-parallel "
      "groups, AdamW; tokens a second per GPU (TPS/GPU):")
print()
print("| table | row | model | GPUs | FSDP × T × p | sequence | local batch (m × b) | recompute | dtype "
      "| torchtitan also | published TPS/GPU | simulated TPS/GPU | simulated / published "
      "| bubble | peak memory: published / simulated |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
simulated = {}
for (table, row, preset, gpus, T, p, fsdp, local_batch, m, ckpt, dtype, schedule, chunks,
     extras, published, memory, *context) in ROWS:
    cp, seq = context if context else (1, SEQ)
    name = f"table{table}-{preset}-{row.lower().replace(' ', '-')}"
    path = project(name, preset, gpus, T, p, fsdp, local_batch, m, ckpt, dtype, schedule,
                   chunks, cp, seq)
    result, error = simulate_json(PW, path)
    cells = [table, row, "Llama " + preset.split("-")[1] + " " + preset.split("-")[2].upper(),
             f"{gpus:,}",
             f"{fsdp} × {T} × {p}" + (f" (v = {chunks})" if chunks > 1 else "") +
             (f" × CP {cp}" if cp > 1 else ""), f"{seq:,}",
             f"{local_batch} ({m} × {local_batch // m})",
             "full" if ckpt is True else ckpt, dtype, extras, f"{published:,}"]
    if result is None:
        print_row(cells + [error, "—", "—", "—"])
        continue
    iteration = result["iteration_time_s"]
    tps = fsdp * local_batch * seq / iteration / gpus
    simulated[(table, row)] = tps
    peak = max(d["peak_memory_bytes"] for d in result["devices"]) / GiB
    cells += [f"{tps:,.0f}", f"{tps / published:.2f}", f"{100 * result['bubble_fraction']:.1f} %",
              f"{memory} / {peak:.1f} GiB"]
    print_row(cells)
print()
one, two = simulated.get(("5", "1F1B")), simulated.get(("5", "Interleaved 1F1B"))
if one and two:
    print(f"Interleaved 1F1B over 1F1B (table 5): published {128 / 100:.2f} ×, "
          f"simulated {two / one:.2f} ×")
PYTHON
