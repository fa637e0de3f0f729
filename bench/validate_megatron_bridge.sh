#!/usr/bin/env bash
# Checks `pipewright simulate` against Megatron-Bridge's published
# pre-training speeds of Llama 3 8B on one node of eight GPUs: DGX-B200,
# DGX-GB200 and DGX-H100, FP8 with per-tensor current scaling (NVIDIA-NeMo/
# Megatron-Bridge, Apache-2.0, docs/performance-summary.md, the 25.11 and
# 25.09 NeMo containers; the layouts from the recipes'
# scripts/performance/configs/llama/llama3_workload_base_configs.py).
# Settings chosen from the recipes before comparing: 8,192 tokens, global
# batch 128, no tensor, pipeline or context parallelism; the Blackwell rows
# micro-batches of 2 with the distributed optimizer (ZeRO-1), the H100 row
# micro-batches of 1 under Megatron's FSDP (ZeRO-3); TransformerEngine's
# attention (cuDNN's fused kernel); the blocks' GEMMs in FP8, the rest in
# bfloat16; AdamW; the H100 recipe recomputes the first 5 of the 32 blocks
# (Megatron's block method: training.recompute_blocks). Not modelled: the
# Blackwell recipes capture the iteration in CUDA graphs (the simulation has
# no host time to save).
# Then Llama 3 70B on eight DGX-H100 nodes as its FP8 recipe lays it out
# (tensor 4 with sequence parallelism × pipeline 8, interleaved with 5 chunks
# a rank, × data 2 with the distributed optimizer; micro-batches of 1;
# global batch 128 in the 25.11 container, 256 in 26.02.01); not modelled:
# the recipe overlaps the tensor-parallel communication with the GEMMs
# (TransformerEngine's userbuffers), which the simulation keeps on the
# critical path.
# Builds nothing; writes one project per row into a temporary folder,
# simulates them and prints markdown tables (docs/validation.md).
#
#   PIPEWRIGHT=build/release/cli/pipewright bench/validate_megatron_bridge.sh
#
# Settings (environment):
#   PIPEWRIGHT   the pipewright binary (default build/release/cli/pipewright,
#                else `pipewright` on the PATH)
#   OUT          folder for the generated projects (default a new folder under
#                /tmp)
set -euo pipefail

source "$(dirname "$0")/validation_common.sh" megatron-bridge

PIPEWRIGHT=$PIPEWRIGHT OUT=$OUT BENCH="$here" python3 - <<'PYTHON'
import json
import os
import sys

sys.path.insert(0, os.environ["BENCH"])
from validation_common import (device, dgx_topology, imported_model, print_row,  # noqa: E402
                               project_of, simulate_json, write_project)

PW = os.environ["PIPEWRIGHT"]
OUT = os.environ["OUT"]
GPUS = 8
SEQUENCE = 8192
BATCH = 128
EXAMPLE = os.path.join(os.environ["BENCH"], "..", "assets", "examples",
                       "llama3.1-8b-h100-node.json")
MODELS = os.path.join(os.environ["BENCH"], "..", "assets", "models")

# (system, catalog device, NVLink GB/s each way per GPU, micro-batch, ZeRO
#  stage, blocks recomputed (recompute_num_layers; 0: none), published
#  tokens/s per GPU in the 25.11 and 25.09 containers).
ROWS = [
    ("DGX-B200", "B200", 900, 2, 1, 0, 30624, 29994),
    ("DGX-GB200", "GB200", 900, 2, 1, 0, 31508, 31357),
    ("DGX-H100", "H100-SXM", 450, 1, 3, 5, 14451, 14079),
]


def project(name, spec, nvlink, micro, zero, recompute, kernel, dtype):
    with open(EXAMPLE) as f:
        model = json.load(f)["model"]
    names = [layer["name"] for layer in model["layers"]]
    topology = dgx_topology(GPUS, spec, 400)
    topology["links"]["intra_container"]["bandwidth_GBps"] = nvlink
    j = {
        "format": "pipewright-project",
        "version": 1,
        "model": model,
        "topology": topology,
        # One stage a replica: gradient accumulation over the micro-batches.
        "placement": [{"device": device(0), "layers": {"from": names[0], "to": names[-1]}}],
        "training": {"batch_size": BATCH, "microbatch_size": micro, "schedule": "1f1b",
                     "dtype": dtype, "attention_kernel": kernel,
                     "optimizer": {"type": "adamw", "lr": 3e-4, "weight_decay": 0.1},
                     "steps": 10, "seed": 0},
        "data_parallel": {"size": GPUS, "zero_stage": zero},
    }
    if recompute:
        j["training"]["activation_checkpointing"] = True
        j["training"]["recompute_blocks"] = recompute
    return write_project(OUT, name, j)


def tokens_per_gpu(result):
    return BATCH * SEQUENCE / result["iteration_time_s"] / GPUS


print(f"Pipewright: {PW}")
print(f"Projects:   {OUT}")
print("Costs:      kernel model; Llama 3 8B, 8,192 tokens, global batch 128 on 8 GPUs")
print()
print("| system | micro-batch × accumulated | ZeRO; recomputation | published tokens/s per GPU (25.11; 25.09) "
      "| simulated, FP8 with cuDNN attention | simulated / published (25.11) | iteration "
      "| peak memory | FP8 with FlashAttention-2 | bfloat16 with cuDNN attention |")
print("|---|---|---|---|---|---|---|---|---|---|")
for system, spec, nvlink, micro, zero, recompute, published, earlier in ROWS:
    cells = [system, f"{micro} × {BATCH // (GPUS * micro)}",
             str(zero) + (f"; first {recompute} blocks" if recompute else "; none"),
             f"{published:,}; {earlier:,}"]
    result, error = simulate_json(
        PW, project(f"{spec}-fp8-cudnn", spec, nvlink, micro, zero, recompute, "cudnn", "float8"))
    if result is None:
        print_row(cells + [error] + ["—"] * 5)
        continue
    simulated = tokens_per_gpu(result)
    peak = max(d["peak_memory_bytes"] for d in result["devices"]) / 2**30
    cells += [f"{simulated:,.0f}", f"{simulated / published:.2f}",
              f"{result['iteration_time_s']:.2f} s",
              f"{peak:.1f} GiB" + ("" if result["all_fit"] else " (does not fit)")]
    for kernel, dtype in (("flash2", "float8"), ("cudnn", "bfloat16")):
        other, error = simulate_json(
            PW, project(f"{spec}-{dtype}-{kernel}", spec, nvlink, micro, zero, recompute, kernel,
                       dtype))
        cells.append(f"{tokens_per_gpu(other):,.0f}" if other else error)
    print_row(cells)

# Llama 3 70B on 64 H100s: (global batch, published tokens/s per GPU, the
# container that published it).
LARGE = [(128, 1602, "25.11"), (256, 1639, "26.02.01")]
T, P, V, D = 4, 8, 5, 2


def llama_70b(batch, dtype):
    model = imported_model(PW, os.path.join(MODELS, "llama-3.1-70b.json"), SEQUENCE, OUT)
    names = [layer["name"] for layer in model["layers"]]
    blocks = [n for n in names if n.startswith("layers.")]
    chunks = P * V
    per_chunk = len(blocks) // chunks
    placement = []
    for k in range(chunks):
        first = names[0] if k == 0 else blocks[k * per_chunk]
        last = names[-1] if k == chunks - 1 else blocks[(k + 1) * per_chunk - 1]
        # Chunk k on pipeline rank k mod P, each rank a tensor-parallel group.
        placement.append({"device": device((k % P) * T), "layers": {"from": first, "to": last}})
    topology = dgx_topology(T * P * D, "H100-SXM", 400)
    topology["links"]["intra_container"]["bandwidth_GBps"] = 450
    training = {"batch_size": batch, "microbatch_size": 1, "schedule": "interleaved-1f1b",
                "dtype": dtype, "attention_kernel": "cudnn",
                "optimizer": {"type": "adamw", "lr": 3e-4, "weight_decay": 0.1},
                "steps": 10, "seed": 0}
    j = project_of(model, topology, placement, training,
                   tensor_parallel={"size": T, "sequence_parallel": True},
                   data_parallel={"size": D, "zero_stage": 1})
    return write_project(OUT, f"llama-3-70b-h100-{batch}-{dtype}", j)


print()
print("Llama 3 70B on 64 H100s (8 DGX nodes): tensor 4 (sequence parallel) × pipeline 8 "
      "(interleaved, 5 chunks a rank) × data 2 (ZeRO-1), micro-batches of 1, 8,192 tokens, "
      "FP8 current scaling, cuDNN attention:")
print()
print("| global batch | micro-batches a replica | published tokens/s per GPU (container) "
      "| simulated | simulated / published | iteration | bubble | peak memory "
      "| bfloat16, simulated |")
print("|---|---|---|---|---|---|---|---|---|")
for batch, published, container in LARGE:
    cells = [str(batch), str(batch // D), f"{published:,} ({container})"]
    result, error = simulate_json(PW, llama_70b(batch, "float8"))
    if result is None:
        print_row(cells + [error] + ["—"] * 5)
        continue
    gpus = T * P * D
    simulated = batch * SEQUENCE / result["iteration_time_s"] / gpus
    peak = max(d["peak_memory_bytes"] for d in result["devices"]) / 2**30
    cells += [f"{simulated:,.0f}", f"{simulated / published:.2f}",
              f"{result['iteration_time_s']:.2f} s", f"{result['bubble_fraction']:.1%}",
              f"{peak:.1f} GiB" + ("" if result["all_fit"] else " (does not fit)")]
    other, error = simulate_json(PW, llama_70b(batch, "bfloat16"))
    cells.append(f"{batch * SEQUENCE / other['iteration_time_s'] / gpus:,.0f}" if other
                 else error)
    print_row(cells)
PYTHON
