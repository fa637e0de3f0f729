#!/usr/bin/env bash
# Checks `pipewright simulate` against published Megatron-LM figures
# (docs/validation.md): the weak-scaling table of Narayanan et al. 2021,
# "Efficient Large-Scale Language Model Training on GPU Clusters Using
# Megatron-LM" (Table 1: GPT models of 1.7B to 1T parameters on A100-80GB DGX
# nodes of 8 GPUs), and GPT-3 175B on 1,024 GPUs. Builds nothing; writes the
# project files into a temporary folder and prints markdown tables.
#
#   PIPEWRIGHT=build/release/cli/pipewright bench/validate_megatron.sh
#
# Settings (environment):
#   PIPEWRIGHT   the pipewright binary (default build/release/cli/pipewright,
#                else `pipewright` on the PATH)
#   EFFICIENCY   price layers with the flat model at this fraction of peak
#                FLOP/s (`--efficiency`) instead of the kernel model (default)
#   INTER_NODE   a node's network in GB/s for every row (default 200: a DGX
#                A100's 8 × 25 GB/s InfiniBand ports, which the simulator
#                shares among the groups that cross them at once)
#   ROWS         rows of Table 1 to simulate, by model size (default all:
#                "1.7B 3.6B 7.5B 18.4B 39.1B 76.1B 145.6B 310.1B 529.6B 1T")
#   TIMEOUT      seconds one simulation may take before its row is skipped
#                (default 60)
#   OUT          folder for the generated projects (default a new folder
#                under /tmp)
set -euo pipefail

source "$(dirname "$0")/validation_common.sh" megatron

PIPEWRIGHT=$PIPEWRIGHT OUT=$OUT EXAMPLES="$here/../assets/examples" BENCH="$here" \
    EFFICIENCY=${EFFICIENCY:-} INTER_NODE=${INTER_NODE:-} TIMEOUT=${TIMEOUT:-60} \
    ROWS=${ROWS:-} python3 - <<'PYTHON'
import json
import os
import subprocess
import sys

sys.path.insert(0, os.environ["BENCH"])
from validation_common import GPUS_PER_NODE, device, dgx_topology  # noqa: E402
import time

PW = os.environ["PIPEWRIGHT"]
OUT = os.environ["OUT"]
EXAMPLES = os.environ["EXAMPLES"]
EFFICIENCY = os.environ["EFFICIENCY"]
INTER_NODE = os.environ["INTER_NODE"]
TIMEOUT = float(os.environ["TIMEOUT"])
ROWS = os.environ["ROWS"].split()

SEQ = 2048      # sequence length (Table 1: every model)
VOCAB = 51200   # vocabulary (Table 1: every model; a multiple of 8)
GiB = 2**30

# Narayanan et al. 2021, Table 1 (the same figures as the Megatron-LM
# README's table of April 2021): size, attention heads, hidden, layers,
# tensor size T, pipeline size p, GPUs, global batch, achieved teraFLOP/s per
# GPU.
TABLE1 = [
    ("1.7B", 24, 2304, 24, 1, 1, 32, 512, 137),
    ("3.6B", 32, 3072, 30, 2, 1, 64, 512, 138),
    ("7.5B", 32, 4096, 36, 4, 1, 128, 512, 142),
    ("18.4B", 48, 6144, 40, 8, 1, 256, 1024, 135),
    ("39.1B", 64, 8192, 48, 8, 2, 512, 1536, 138),
    ("76.1B", 80, 10240, 60, 8, 4, 1024, 1792, 140),
    ("145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 148),
    ("310.1B", 128, 16384, 96, 8, 16, 1920, 2160, 155),
    ("529.6B", 128, 20480, 105, 8, 35, 2520, 2520, 163),
    ("1T", 160, 25600, 128, 8, 64, 3072, 3072, 163),
]


def paper_flops(batch, layers, hidden):
    """FLOPs of one iteration by the paper's formula (with full recomputation)."""
    s, l, h, V = SEQ, layers, hidden, VOCAB
    return 96 * batch * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))


def project(name, heads, hidden, layers, T, p, gpus, batch, schedule="1f1b", chunks=1,
            sequence_parallel=False, inter_node_GBps=None, zero_stage=0):
    """A project in the style of assets/examples/gpt3-175b-p4d-t8.json."""
    d = gpus // (T * p)
    assert d * T * p == gpus, name
    stages = p * chunks
    assert layers % stages == 0, name
    per_stage = layers // stages
    model = [{"name": "embed", "type": "embedding", "num_embeddings": VOCAB,
              "embedding_dim": hidden}]
    # Megatron-LM's default dropout (0.1 on the attention and the residual
    # branches), which the paper's runs kept.
    model += [{"name": f"block{i}", "type": "transformer_block", "hidden": hidden,
               "heads": heads,
               "attention_dropout": 0.1, "hidden_dropout": 0.1} for i in range(layers)]
    model += [{"name": "ln_f", "type": "layernorm", "features": hidden},
              {"name": "lm_head", "type": "linear", "in_features": hidden,
               "out_features": VOCAB, "bias": False}]
    # Pipeline rank r sits on the first device of the r-th group of T GPUs;
    # the data-parallel replicas follow in the default layout.
    placement = []
    for s in range(stages):
        first = "embed" if s == 0 else f"block{s * per_stage}"
        last = "lm_head" if s == stages - 1 else f"block{(s + 1) * per_stage - 1}"
        placement.append({"device": device(s % p * T), "layers": {"from": first, "to": last}})
    if inter_node_GBps is None:
        inter_node_GBps = float(INTER_NODE) if INTER_NODE else 25.0 * GPUS_PER_NODE
    out = {
        "format": "pipewright-project",
        "version": 1,
        "model": {"name": f"gpt-{name.lower()}", "input": {"shape": [SEQ], "dtype": "int64"},
                  "loss": "cross_entropy", "layers": model},
        "topology": dgx_topology(gpus, "A100-80GB", inter_node_GBps),
        "placement": placement,
        "training": {
            "batch_size": batch,
            "microbatch_size": 1,
            "schedule": schedule,
            "optimizer": {"type": "adamw", "lr": 6e-05, "weight_decay": 0.1},
            "steps": 10,
            "dtype": "bfloat16",
            "activation_checkpointing": True,
            # Megatron-LM of 2021 added each micro-batch's gradients to the
            # main gradients in its data-parallel hook
            # (param.main_grad.add_(param.grad.data)), before
            # gradient_accumulation_fusion existed.
            "gradient_accumulation": "add",
        },
    }
    if T > 1:
        out["tensor_parallel"] = {"size": T, "sequence_parallel": sequence_parallel}
    if d > 1:
        # Megatron-LM of 2021 all-reduced the gradients after the pipeline's
        # flush (its "local" DDP), without ZeRO; DeepSpeed's pipeline engine
        # reduces them after the flush too, with ZeRO stage 1 for MT-NLG.
        out["data_parallel"] = {"size": d, "zero_stage": zero_stage,
                                "overlap_gradient_sync": False}
    return out


def simulate(path):
    """(result JSON, wall seconds), or (None, reason) when it fails or is too slow."""
    cmd = [PW, "simulate", path, "--json"]
    if EFFICIENCY:
        cmd += ["--efficiency", EFFICIENCY]
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, f"skipped: over {TIMEOUT:g} s"
    wall = time.monotonic() - start
    if done.returncode != 0:
        return None, "refused: " + done.stderr.strip().splitlines()[0]
    return json.loads(done.stdout), wall


def peak_GiB(result):
    return max(d["peak_memory_bytes"] for d in result["devices"]) / GiB


def all_fit(result):
    return all(d["fits"] for d in result["devices"])


def capacity_GiB(result):
    return min(d["memory_capacity_bytes"] for d in result["devices"]) / GiB


def interleave_chunks(layers, p):
    """Smallest number (>= 2) of model chunks per device that splits the layers evenly."""
    if p == 1:
        return 0
    per_device = layers // p
    return next((v for v in range(2, per_device + 1) if per_device % v == 0), 0)


def row_text(cells):
    return "| " + " | ".join(cells) + " |"


print(f"Pipewright: {PW}")
print(f"Projects:   {OUT}")
print(f"Costs:      {'flat model at ' + EFFICIENCY + ' of peak' if EFFICIENCY else 'kernel model'}; inter-node link: "
      f"{INTER_NODE if INTER_NODE else '200'} GB/s a node")
print()
print("Table 1 of Narayanan et al. 2021: micro-batches of 1, full activation recomputation, "
      "bfloat16, AdamW, no ZeRO, gradients all-reduced after the last backward, "
      "no sequence parallelism.")
print()
print(row_text(["model", "T × p × d", "GPUs", "batch", "m", "1F1B iteration",
                "1F1B TFLOP/s", "interleaved (v: iteration)", "interleaved TFLOP/s", "published TFLOP/s",
                "error 1F1B", "error interleaved", "peak memory (1F1B / interleaved)", "sim wall"]))
print("|" + "---|" * 14)
errors = {"1f1b": [], "interleaved": []}
for name, heads, hidden, layers, T, p, gpus, batch, published in TABLE1:
    if ROWS and name not in ROWS:
        continue
    d = gpus // (T * p)
    flops = paper_flops(batch, layers, hidden)
    cells = [name, f"{T} × {p} × {d}", f"{gpus:,}", f"{batch:,}", str(batch // d)]
    results = {}
    walls = []
    v = interleave_chunks(layers, p)
    for kind, schedule, chunks in (("1f1b", "1f1b", 1), ("interleaved", "interleaved-1f1b", v)):
        if chunks == 0:
            results[kind] = None
            continue
        path = os.path.join(OUT, f"gpt-{name.lower()}-{schedule}.json")
        with open(path, "w") as f:
            json.dump(project(name, heads, hidden, layers, T, p, gpus, batch, schedule, chunks), f,
                      indent=1)
        result, wall = simulate(path)
        results[kind] = result if result is not None else wall
        if result is not None:
            walls.append(wall)
    for kind in ("1f1b", "interleaved"):
        r = results[kind]
        if kind == "interleaved":
            cells.append(f"{v}" if v else "—")
        if r is None:
            cells += ["—"] if kind == "interleaved" else ["—", "—"]
            continue
        if isinstance(r, str):
            cells += [r] if kind == "interleaved" else [r, "—"]
            continue
        tflops = flops / (r["iteration_time_s"] * gpus) / 1e12
        r["tflops"] = tflops
        if kind == "1f1b":
            cells += [f"{r['iteration_time_s']:.2f} s", f"{tflops:.0f}"]
        else:
            cells[-1] = f"{v}: {r['iteration_time_s']:.2f} s"
            cells.append(f"{tflops:.0f}")
    cells.append(str(published))
    for kind in ("1f1b", "interleaved"):
        r = results[kind]
        if isinstance(r, dict):
            err = (r["tflops"] - published) / published
            errors[kind].append(abs(err))
            cells.append(f"{err:+.1%}")
        else:
            cells.append("—")
    mem = []
    capacity = None
    for kind in ("1f1b", "interleaved"):
        r = results[kind]
        if isinstance(r, dict):
            mem.append(f"{peak_GiB(r):.1f}" + ("" if all_fit(r) else " (does not fit)"))
            capacity = capacity_GiB(r)
    cells.append(" / ".join(mem) + f" of {capacity:g} GiB" if mem else "—")
    cells.append(f"{max(walls):.2f} s" if walls else "—")
    print(row_text(cells))
print()
for kind in ("1f1b", "interleaved"):
    e = errors[kind]
    if e:
        print(f"Mean absolute error, {kind}: {sum(e) / len(e):.1%} over {len(e)} rows "
              f"(largest {max(e):.1%})")
print()

# GPT-3 175B on 1,024 GPUs, batch 1536 (96 layers, hidden 12288, 96 heads).
flops175 = paper_flops(1536, 96, 12288)
tokens = 300e9
iterations = tokens / (1536 * SEQ)
print("GPT-3 175B, batch 1536, 1,024 A100-80GB: paper's formula gives "
      f"{flops175:.4g} FLOPs an iteration.")
print()
print(row_text(["layout", "source", "iteration", "TFLOP/s per GPU", "300B tokens",
                "peak memory"]))
print("|---|---|---|---|---|---|")
for label, x in (("§5.1 estimate, 140 TFLOP/s", 140), ("README, T8 × p16 × d8, 138 TFLOP/s", 138)):
    it = flops175 / (1024 * x * 1e12)
    print(row_text([label, "published", f"{it:.1f} s", str(x),
                    f"{it * iterations / 86400:.1f} days", "—"]))
cases = [("assets/examples/gpt3-175b-a100-1024.json: T8 (SP) × p8 × d16, 1F1B",
          os.path.join(EXAMPLES, "gpt3-175b-a100-1024.json"))]
readme = os.path.join(OUT, "gpt3-175b-t8-p16-d8.json")
with open(readme, "w") as f:
    json.dump(project("175B", 96, 12288, 96, 8, 16, 1024, 1536, "1f1b", 1,
                      sequence_parallel=True), f, indent=1)
cases.append(("T8 (SP) × p16 × d8, 1F1B (the README's layout)", readme))
readme_i = os.path.join(OUT, "gpt3-175b-t8-p16-d8-interleaved.json")
with open(readme_i, "w") as f:
    json.dump(project("175B", 96, 12288, 96, 8, 16, 1024, 1536, "interleaved-1f1b", 2,
                      sequence_parallel=True), f, indent=1)
cases.append(("T8 (SP) × p16 × d8, interleaved-1f1b v=2", readme_i))
for label, path in cases:
    if not os.path.exists(path):
        print(row_text([label, "simulated", "missing file", "—", "—", "—"]))
        continue
    result, wall = simulate(path)
    if result is None:
        print(row_text([label, "simulated", wall, "—", "—", "—"]))
        continue
    it = result["iteration_time_s"]
    x = flops175 / (it * 1024) / 1e12
    print(row_text([label, "simulated", f"{it:.1f} s", f"{x:.0f}",
                    f"{it * iterations / 86400:.1f} days",
                    f"{peak_GiB(result):.1f} GiB" + ("" if all_fit(result) else " (does not fit)")]))
print()

# Smith et al. 2022, "Using DeepSpeed and Megatron to Train Megatron-Turing
# NLG 530B" (arXiv 2201.11990), §2.3-2.4: 105 layers, hidden 20480, 128 heads,
# sequence 2048, global batch 1920; each replica 8-way tensor parallel within
# a DGX A100 (80 GB) and 35-way pipelined across nodes, ZeRO data
# parallelism over 280, 350 and 420 nodes; measured 60.1, 50.2 and 44.4 s an
# iteration (126, 121 and 113 teraFLOP/s per GPU). Not stated there, and
# taken from the code it ran (Megatron-DeepSpeed): micro-batches of 1,
# DeepSpeed's 1F1B pipeline schedule, every layer recomputed, ZeRO stage 1,
# gradients reduced after the pipeline's flush and accumulated by autograd.
MTNLG = [(280, 60.1, 126), (350, 50.2, 121), (420, 44.4, 113)]
flops530 = paper_flops(1920, 105, 20480)
print("MT-NLG 530B (Smith et al. 2022), T8 × p35, batch 1920, micro-batch 1, ZeRO stage 1: "
      f"the paper's formula gives {flops530:.4g} FLOPs an iteration.")
print()
print(row_text(["nodes", "T × p × d", "m", "published iteration", "simulated iteration",
                "published TFLOP/s", "simulated TFLOP/s", "error", "bubble", "peak memory"]))
print("|---|---|---|---|---|---|---|---|---|---|")
for nodes, seconds, published in MTNLG:
    gpus = nodes * GPUS_PER_NODE
    d = gpus // (8 * 35)
    path = os.path.join(OUT, f"mt-nlg-530b-{nodes}-nodes.json")
    with open(path, "w") as f:
        json.dump(project("530B", 128, 20480, 105, 8, 35, gpus, 1920, zero_stage=1), f, indent=1)
    result, wall = simulate(path)
    cells = [str(nodes), f"8 × 35 × {d}", str(1920 // d), f"{seconds} s"]
    if result is None:
        print(row_text(cells + [wall] + ["—"] * 5))
        continue
    it = result["iteration_time_s"]
    x = flops530 / (it * gpus) / 1e12
    bubble = max(dev["bubble_fraction"] for dev in result["devices"])
    print(row_text(cells + [f"{it:.1f} s", str(published), f"{x:.0f}",
                            f"{(x - published) / published:+.1%}", f"{bubble:.1%}",
                            f"{peak_GiB(result):.1f} GiB" + ("" if all_fit(result) else " (does not fit)")]))
print()

# Korthikanti et al. 2022: a block's activations per micro-batch of b
# sequences, without recomputation: s·b·h·(10 + 24/T + 5·a·s/(h·T)) with tensor
# parallelism, s·b·h·(34/T + 5·a·s/(h·T)) with sequence parallelism as well;
# with full recomputation each block keeps its input, 2·s·b·h bytes (÷ T with
# sequence parallelism), and a backward rebuilds one block's activations.
# Under 1F1B rank r holds p − r micro-batches of its L/p blocks. The
# simulated figures are each stage's own (`simulate --json`: stash_bytes,
# transient_backward_bytes); the peaks show what fits.
example = os.path.join(EXAMPLES, "gpt3-175b-a100-1024.json")
if os.path.exists(example):
    s, b, h, a, L, T, p = SEQ, 1, 12288, 96, 96, 8, 8
    print("Activation memory of GPT-3 175B (T8 × p8, 1F1B, micro-batch 1) against "
          "Korthikanti et al. 2022, rank 0 and rank 1:")
    print()
    print(row_text(["sequence parallel", "rank", "simulated activations", "Korthikanti",
                    "difference", "kept with full recomputation (simulated / 2·s·b·h a block)",
                    "rebuilt by a backward (simulated / one block)",
                    "peak without recomputation"]))
    print("|---|---|---|---|---|---|---|---|")
    with open(example) as f:
        base = json.load(f)
    for sp in (False, True):
        runs = {}
        for ckpt in (True, False):
            variant = json.loads(json.dumps(base))
            variant["training"]["activation_checkpointing"] = ckpt
            variant["tensor_parallel"]["sequence_parallel"] = sp
            path = os.path.join(OUT, f"gpt3-175b-korthikanti-sp{int(sp)}-ckpt{int(ckpt)}.json")
            with open(path, "w") as f:
                json.dump(variant, f, indent=1)
            runs[ckpt], _ = simulate(path)
        if runs[True] is None or runs[False] is None:
            print(row_text([str(sp), "—", "simulation failed", "—", "—", "—", "—", "—"]))
            continue
        per_block = s * b * h * ((34 / T if sp else 10 + 24 / T) + 5 * a * s / (h * T))
        blocks = L // p
        for r in (0, 1):
            # One stage a rank; rank 0's embedding keeps a few KiB more (its
            # token ids, 8 bytes each under recomputation).
            plain = runs[False]["stages"][r]
            checkpointed = runs[True]["stages"][r]
            ids = s * b * 8 if r == 0 else 0
            simulated = (p - r) * plain["stash_bytes"]
            formula = per_block * blocks * (p - r)
            kept = checkpointed["stash_bytes"] - ids
            kept_formula = blocks * s * b * h * 2 / (T if sp else 1)
            rebuilt = checkpointed["transient_backward_bytes"]
            dev = runs[False]["devices"][r]
            print(row_text([str(sp).lower(), str(r), f"{simulated / GiB:.3f} GiB",
                            f"{formula / GiB:.3f} GiB",
                            f"{round((simulated - formula) / formula, 6) + 0.0:+.2%}",
                            f"{kept / 2**20:.1f} / {kept_formula / 2**20:.1f} MiB",
                            f"{rebuilt / GiB:.3f} / {per_block / GiB:.3f} GiB",
                            f"{dev['peak_memory_bytes'] / GiB:.1f} GiB"
                            + ("" if dev["fits"] else " (does not fit)")]))
PYTHON
