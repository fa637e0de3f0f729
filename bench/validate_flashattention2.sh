#!/usr/bin/env bash
# Checks `pipewright simulate` against the end-to-end training speeds the
# FlashAttention-2 paper publishes (Dao 2023, arXiv 2307.08691, Table 1):
# GPT-style models of 1.3B and 2.7B parameters trained on one node of 8
# A100 80GB SXM, at 2K and 8K tokens a sequence, with FlashAttention-2 and
# without a fused attention (HuggingFace's GPT-2). The settings are those of
# the paper's training code (Dao-AILab/flash-attention, BSD-3-Clause,
# training/configs/experiment/pile/gpt3xl-*.yaml and gpt3-2.7B-*.yaml):
# DDP with ZeRO-1 over the 8 GPUs, bf16 autocast (fp32 gradients), AdamW,
# no activation checkpointing, the per-GPU batch an 80 GB GPU gets and the
# global batch in accumulated micro-batches.
# Builds nothing; writes one project per row into a temporary folder,
# simulates them and prints a markdown table (docs/validation.md).
#
#   PIPEWRIGHT=build/release/cli/pipewright bench/validate_flashattention2.sh
#
# Settings (environment):
#   PIPEWRIGHT   the pipewright binary (default build/release/cli/pipewright,
#                else `pipewright` on the PATH)
#   OUT          folder for the generated projects (default a new folder under
#                /tmp)
set -euo pipefail

source "$(dirname "$0")/validation_common.sh" flashattention2

PIPEWRIGHT=$PIPEWRIGHT OUT=$OUT BENCH="$here" python3 - <<'PYTHON'
import json
import os
import subprocess
import sys

sys.path.insert(0, os.environ["BENCH"])
from validation_common import (device, dgx_topology, print_row, simulate_json,  # noqa: E402
                               write_project)

PW = os.environ["PIPEWRIGHT"]
OUT = os.environ["OUT"]
GPUS = 8
VOCAB = 50264  # GPT-2's 50,257 padded to a multiple of 8 (pad_vocab_size_multiple)

# (model, hidden, heads, layers, sequence, flash, per-GPU batch, global
#  batch, published TFLOP/s per GPU). The per-GPU batches are the configs'
# for a GPU of 80 GB; HuggingFace's 8K rows have no config, and are left out.
ROWS = [
    ("GPT3-1.3B", 2048, 16, 24, 2048, True, 8, 512, 196),
    ("GPT3-1.3B", 2048, 16, 24, 8192, True, 4, 128, 220),
    ("GPT3-2.7B", 2560, 32, 32, 2048, True, 4, 512, 205),
    ("GPT3-2.7B", 2560, 32, 32, 8192, True, 4, 128, 225),
    ("GPT3-1.3B", 2048, 16, 24, 2048, False, 2, 512, 142),
    ("GPT3-2.7B", 2560, 32, 32, 2048, False, 1, 512, 149),
]


def flops_per_sequence(hidden, layers, seq):
    """The paper's count (Megatron-LM's): 6 · seqlen · parameters +
    12 · layers · hidden · seqlen², with GPT-2's parameters (blocks, tied
    token embedding, learned positions, final norm)."""
    params = 12 * layers * hidden**2 + 13 * layers * hidden + VOCAB * hidden + seq * hidden \
        + 2 * hidden
    return 6 * seq * params + 12 * layers * hidden * seq**2


def project(name, hidden, heads, layers, seq, flash, local, global_batch):
    config = os.path.join(OUT, f"{name}.config.json")
    with open(config, "w") as f:
        json.dump({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
                   "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5,
                   "n_embd": hidden, "n_head": heads, "n_layer": layers, "n_inner": None,
                   "n_positions": seq, "n_ctx": seq, "vocab_size": VOCAB,
                   "tie_word_embeddings": True}, f)
    imported = os.path.join(OUT, f"{name}.import.json")
    subprocess.run([PW, "import", config, "--seq-len", str(seq), "--device-spec", "A100-80GB",
                    "--out", imported], check=True, capture_output=True)
    with open(imported) as f:
        model = json.load(f)["model"]
    for layer in model["layers"]:
        if layer["type"] == "transformer_block":
            layer["flash_attention"] = flash
    names = [layer["name"] for layer in model["layers"]]
    j = {
        "format": "pipewright-project",
        "version": 1,
        "model": model,
        # One node of 8 A100s, its NVLink at 300 GB/s (the DDP ring's only link).
        "topology": dgx_topology(GPUS, "A100-80GB", 200),
        # One stage a replica: each micro-batch's forward and backward before
        # the next's (1F1B on one stage), as gradient accumulation runs them.
        "placement": [{"device": device(0), "layers": {"from": names[0], "to": names[-1]}}],
        "training": {"batch_size": global_batch, "microbatch_size": local,
                     "schedule": "1f1b", "dtype": "bfloat16", "gradient_dtype": "float32",
                     "optimizer": {"type": "adamw", "lr": 2e-4, "weight_decay": 0.1},
                     "activation_checkpointing": False, "steps": 10, "seed": 0},
        "data_parallel": {"size": GPUS, "zero_stage": 1},
    }
    return write_project(OUT, name, j)


print(f"Pipewright: {PW}")
print(f"Projects:   {OUT}")
print("Costs:      kernel model; 8 × A100-80GB, NVLink 300 GB/s; flash attention as "
      "FlashAttention-2")
print()
print("| model | sequence | attention | per-GPU batch × accumulated | published TFLOP/s per GPU "
      "| simulated | simulated / published | iteration | peak memory |")
print("|---|---|---|---|---|---|---|---|---|")
simulated = {}
for model, hidden, heads, layers, seq, flash, local, global_batch, published in ROWS:
    name = f"{model.lower()}-{seq}-{'flash2' if flash else 'unfused'}"
    path = project(name, hidden, heads, layers, seq, flash, local, global_batch)
    result, error = simulate_json(PW, path)
    cells = [model, f"{seq:,}", "FlashAttention-2" if flash else "unfused (HuggingFace)",
             f"{local} × {global_batch // (GPUS * local)}", f"{published}"]
    if result is None:
        print_row(cells + [error, "—", "—", "—"])
        continue
    iteration = result["iteration_time_s"]
    tflops = global_batch * flops_per_sequence(hidden, layers, seq) / iteration / GPUS / 1e12
    simulated[(model, seq, flash)] = tflops
    peak = max(d["peak_memory_bytes"] for d in result["devices"]) / 2**30
    cells += [f"{tflops:.0f}", f"{tflops / published:.2f}", f"{iteration:.2f} s",
              f"{peak:.1f} GiB" + ("" if result["all_fit"] else " (does not fit)")]
    print_row(cells)
print()
for model, two, eight in (("GPT3-1.3B", 196, 220), ("GPT3-2.7B", 205, 225)):
    a, b = simulated.get((model, 2048, True)), simulated.get((model, 8192, True))
    if a and b:
        print(f"{model}, 8K over 2K with FlashAttention-2: published {eight / two:.2f} ×, "
              f"simulated {b / a:.2f} ×")
for model, unfused, flash in (("GPT3-1.3B", 142, 196), ("GPT3-2.7B", 149, 205)):
    a, b = simulated.get((model, 2048, False)), simulated.get((model, 2048, True))
    if a and b:
        print(f"{model} at 2K, FlashAttention-2 over unfused: published {flash / unfused:.2f} ×, "
              f"simulated {b / a:.2f} ×")
PYTHON
