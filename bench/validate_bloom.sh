#!/usr/bin/env bash
# Checks `pipewright simulate` against the measured training of BLOOM-176B
# (BigScience, 2022): Megatron-DeepSpeed on 48 nodes of 8 A100-80GB at Jean
# Zay, as its logs and benchmarks were published in
# bigscience-workshop/bigscience (train/tr11-176B-ml/, Apache-2.0):
#   - the run itself: T4 × p12 × d8, micro-batches of 2, global batch 2048,
#     105.22 s an iteration (chronicles.md, 2022-03-18);
#   - the layouts benchmarked before it on the same 48 nodes
#     (chronicles-prequel.md, "Rebalancing layers"): T8 against T4, 64, 112
#     and 128 heads, micro-batches of 2 and 4.
# Builds nothing; writes one project per row into a temporary folder,
# simulates them and prints a markdown table (docs/validation.md).
#
#   PIPEWRIGHT=build/release/cli/pipewright bench/validate_bloom.sh
#
# Settings (environment):
#   PIPEWRIGHT   the pipewright binary (default build/release/cli/pipewright,
#                else `pipewright` on the PATH)
#   INTER_NODE   a node's network in GB/s (default 50: four Omni-Path links of
#                100 Gbit/s a node)
#   EFFICIENCY   price layers with the flat model at this fraction of peak
#                FLOP/s (`--efficiency`) instead of the kernel model
#   OUT          folder for the generated projects (default a new folder under
#                /tmp)
set -euo pipefail

source "$(dirname "$0")/validation_common.sh" bloom

PIPEWRIGHT=$PIPEWRIGHT OUT=$OUT BENCH="$here" INTER_NODE=${INTER_NODE:-50} EFFICIENCY=${EFFICIENCY:-} \
    python3 - <<'PYTHON'
import json
import os
import sys

sys.path.insert(0, os.environ["BENCH"])
from validation_common import GPUS_PER_NODE, device, dgx_topology, simulate_json  # noqa: E402

PW = os.environ["PIPEWRIGHT"]
OUT = os.environ["OUT"]
INTER_NODE = float(os.environ["INTER_NODE"])
EFFICIENCY = os.environ["EFFICIENCY"]

NODES = 48
SEQ = 2048
HIDDEN = 14336
LAYERS = 70
VOCAB = 250880  # --pad-vocab-size-to 250880
BATCH = 2048

# (label, T, p, micro-batch, heads, measured seconds an iteration, measured
# memory in GB as the benchmark table gives it (None: not given), source)
ROWS = [
    ("the run", 4, 12, 2, 112, 105.22, None, "chronicles.md, iteration 12695"),
    ("benchmark", 8, 12, 2, 64, 121.63, 40, "chronicles-prequel.md"),
    ("benchmark", 4, 12, 2, 64, 102.03, 59, "chronicles-prequel.md"),
    ("benchmark", 4, 12, 2, 112, 104.50, 59, "chronicles-prequel.md"),
    ("benchmark", 4, 12, 2, 128, 105.89, 60, "chronicles-prequel.md"),
    ("benchmark", 4, 12, 4, 64, 102.27, 73, "chronicles-prequel.md"),
]


def paper_flops():
    """Megatron-LM's FLOPs of an iteration with full recomputation, the
    formula BigScience's logs report TFLOPs by (Megatron-LM PR #251)."""
    s, l, h, V = SEQ, LAYERS, HIDDEN, VOCAB
    return 96 * BATCH * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))


def stage_layers(p):
    """DeepSpeed's partition 'type:transformer|embedding': the two embeddings
    count as layers, so 72 over 12 stages puts the embedding and 5 blocks on
    the first, 6 blocks on each middle one, 5 blocks and the tied head on
    the last."""
    per_stage = (LAYERS + 2) // p
    assert per_stage * p == LAYERS + 2
    stages = []
    first_block = 0
    for s in range(p):
        blocks = per_stage - (1 if s in (0, p - 1) else 0)
        first = "embed" if s == 0 else f"block{first_block}"
        last = "lm_head" if s == p - 1 else f"block{first_block + blocks - 1}"
        stages.append((first, last))
        first_block += blocks
    assert first_block == LAYERS
    return stages


def project(T, p, mb, heads):
    gpus = NODES * GPUS_PER_NODE
    d = gpus // (T * p)
    assert T * p * d == gpus
    model = [{"name": "embed", "type": "embedding", "num_embeddings": VOCAB,
              "embedding_dim": HIDDEN},
             # --embed-layernorm; ALiBi adds no parameters and no kernel of
             # its own (its bias is added inside the fused softmax).
             {"name": "embed_ln", "type": "layernorm", "features": HIDDEN}]
    # The tr11 script sets no dropout flags: Megatron-DeepSpeed's 0.1 on the
    # attention and the residual branches.
    model += [{"name": f"block{i}", "type": "transformer_block", "hidden": HIDDEN,
               "heads": heads,
               "attention_dropout": 0.1, "hidden_dropout": 0.1} for i in range(LAYERS)]
    model += [{"name": "ln_f", "type": "layernorm", "features": HIDDEN},
              {"name": "lm_head", "type": "linear", "in_features": HIDDEN,
               "out_features": VOCAB, "bias": False}]
    # Megatron-DeepSpeed's rank order: tensor-parallel rank fastest, then the
    # data-parallel one, then the stage; stage s of replica r starts at GPU
    # T · (r + d · s).
    placement = [{"device": device(T * d * s), "layers": {"from": first, "to": last}}
                 for s, (first, last) in enumerate(stage_layers(p))]
    return {
        "format": "pipewright-project",
        "version": 1,
        "model": {"name": f"bloom-176b-h{heads}", "input": {"shape": [SEQ], "dtype": "int64"},
                  "loss": "cross_entropy", "tie_word_embeddings": True, "layers": model},
        "topology": dgx_topology(gpus, "A100-80GB", INTER_NODE),
        "placement": placement,
        "training": {
            "batch_size": BATCH,
            "microbatch_size": mb,
            # DeepSpeed's TrainSchedule: one forward, one backward in turn
            # after a warm-up, non-interleaved.
            "schedule": "1f1b",
            "optimizer": {"type": "adam", "lr": 6e-5},
            "steps": 10,
            "dtype": "bfloat16",
            "activation_checkpointing": True,
            # Autograd adds each micro-batch's gradients, then DeepSpeed's
            # BF16_Optimizer adds them into its fp32 copy: a kernel of its own.
            "gradient_accumulation": "add",
            # That copy: BF16_Optimizer "accumulates grads in fp32" (the
            # README). The bf16 gradients it also keeps are not counted.
            "gradient_dtype": "float32",
        },
        "tensor_parallel": {"size": T, "sequence_parallel": False},
        # BF16_Optimizer "implements its own ZeRO stage 1"; DeepSpeed's
        # pipeline reduces the gradients after the flush.
        "data_parallel": {
            "size": d, "zero_stage": 1, "overlap_gradient_sync": False,
            "replicas": [[device(T * (r + d * s)) for s in range(p)] for r in range(1, d)]},
    }


flops = paper_flops()
gpus = NODES * GPUS_PER_NODE
print(f"Pipewright: {PW}")
print(f"Projects:   {OUT}")
print(f"Costs:      {'flat model at ' + EFFICIENCY + ' of peak' if EFFICIENCY else 'kernel model'}; "
      f"inter-node link: {INTER_NODE:g} GB/s a node")
print()
print(f"BLOOM-176B on {gpus} A100-80GB, batch {BATCH} of {SEQ} tokens, Megatron-LM's formula: "
      f"{flops:.4g} FLOPs an iteration.")
print()
print("| source | T × p × d | micro-batch | heads | m | measured | simulated | simulated / measured "
      "| measured TFLOP/s | simulated TFLOP/s | bubble | measured memory | simulated peak memory |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for label, T, p, mb, heads, measured, memory_GB, source in ROWS:
    d = gpus // (T * p)
    path = os.path.join(OUT, f"bloom-176b-t{T}-p{p}-mb{mb}-h{heads}.json")
    with open(path, "w") as f:
        json.dump(project(T, p, mb, heads), f, indent=1)
    result, reason = simulate_json(PW, path, EFFICIENCY)
    cells = [f"{label} ({source})", f"{T} × {p} × {d}", str(mb), str(heads),
             str(BATCH // (d * mb)), f"{measured:.2f} s"]
    if result is None:
        print("| " + " | ".join(cells + [reason] + ["—"] * 6) + " |")
        continue
    it = result["iteration_time_s"]
    peak = max(dev["peak_memory_bytes"] for dev in result["devices"]) / 2**30
    fits = all(dev["fits"] for dev in result["devices"])
    bubble = result["bubble_fraction"]  # over all devices
    cells += [f"{it:.2f} s", f"{it / measured:.2f}", f"{flops / (measured * gpus) / 1e12:.1f}",
              f"{flops / (it * gpus) / 1e12:.1f}", f"{bubble:.1%}",
              f"{memory_GB} GB" if memory_GB else "—",
              f"{peak:.1f} GiB" + ("" if fits else " (does not fit)")]
    print("| " + " | ".join(cells) + " |")
PYTHON
