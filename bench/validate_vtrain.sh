#!/usr/bin/env bash
# Checks `pipewright simulate` against 1,549 measured training iterations of
# GPT models under Megatron-DeepSpeed on A100 GPUs, published with vTrain
# (Bang et al., MICRO 2024; bench/data/vtrain_measured_*.csv, MIT licence):
#   - single: 1,440 runs on one node of 2, 4 or 8 GPUs: hidden 1024 and 2048,
#     12 to 24 layers, sequence 1024, micro-batches of 1 to 8, every data ×
#     tensor × pipeline layout of the GPUs;
#   - multi: 109 runs of 3.6B to 175B models on 64 to 512 GPUs, sequence 2048.
# Builds nothing; writes one project per run into a temporary folder,
# simulates them and prints markdown tables (docs/validation.md).
#
#   PIPEWRIGHT=build/release/cli/pipewright bench/validate_vtrain.sh
#
# Settings (environment):
#   PIPEWRIGHT   the pipewright binary (default build/release/cli/pipewright,
#                else `pipewright` on the PATH)
#   SETS         "single", "multi" or both (default "single multi")
#   SPEC         the device type of every GPU (default A100-80GB; see
#                docs/validation.md for why)
#   INTER_NODE   a node's network in GB/s (default 100: vTrain's configurations
#                give 800 Gbps a node)
#   EFFICIENCY   price layers with the flat model at this fraction of peak
#                FLOP/s (`--efficiency`) instead of the kernel model
#   LIMIT        simulate only every LIMIT-th run of each set (default 1: all)
#   JOBS         simulations at once (default: the machine's cores)
#   OUT          folder for the generated projects and results.csv (default a
#                new folder under /tmp)
set -euo pipefail

source "$(dirname "$0")/validation_common.sh" vtrain

PIPEWRIGHT=$PIPEWRIGHT OUT=$OUT DATA="$here/data" BENCH="$here" \
    SETS=${SETS:-single multi} SPEC=${SPEC:-A100-80GB} INTER_NODE=${INTER_NODE:-100} \
    EFFICIENCY=${EFFICIENCY:-} LIMIT=${LIMIT:-1} JOBS=${JOBS:-$(nproc)} python3 - <<'PYTHON'
import concurrent.futures
import csv
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.environ["BENCH"])
from validation_common import device, dgx_topology, simulate_json  # noqa: E402

PW = os.environ["PIPEWRIGHT"]
OUT = os.environ["OUT"]
DATA = os.environ["DATA"]
SETS = os.environ["SETS"].split()
SPEC = os.environ["SPEC"]
INTER_NODE = float(os.environ["INTER_NODE"])
EFFICIENCY = os.environ["EFFICIENCY"]
LIMIT = max(1, int(os.environ["LIMIT"]))
JOBS = max(1, int(os.environ["JOBS"]))

VOCAB = 50257  # GPT-2's, padded as Megatron pads it (below)


def read_runs(name):
    """The measured runs of one set, as dicts with the columns' short names."""
    path = os.path.join(DATA, f"vtrain_measured_{name}.csv")
    with open(path) as f:
        # The header of the single-node set starts with "#" too.
        lines = [line for line in f if not line.startswith("#") or line.startswith("# GPUs,")]
    rows = list(csv.reader(lines))
    header, body = rows[0], rows[1:]
    keys = {"# GPUs": "gpus", "global batch": "batch", "micro batch": "mb",
            "hidden size": "hidden", "attention heads": "heads", "# layers": "layers",
            "sequence length": "seq", "tensor parallelism": "T", "data parallelism": "d",
            "pipeline parallelism": "p", "iteration time (ms)": "measured_ms",
            "Parameters (billion)": "billions"}
    runs = []
    for i, row in enumerate(body):
        run = {keys[h]: float(v) if h in ("iteration time (ms)", "Parameters (billion)") else int(v)
               for h, v in zip(header, row)}
        run["set"], run["index"] = name, i
        runs.append(run)
    return runs[::LIMIT]


def padded_vocab(T):
    """Megatron's padding: a multiple of 128 × the tensor-parallel size."""
    multiple = 128 * T
    return (VOCAB + multiple - 1) // multiple * multiple


def project(run):
    """The run as a Pipewright project: Megatron-DeepSpeed's GPT, ranks in its order."""
    T, d, p = run["T"], run["d"], run["p"]
    gpus, hidden, layers = run["gpus"], run["hidden"], run["layers"]
    assert T * d * p == gpus, run
    assert layers % p == 0, run
    vocab = padded_vocab(T)
    model = [{"name": "embed", "type": "embedding", "num_embeddings": vocab,
              "embedding_dim": hidden}]
    # Megatron-DeepSpeed's default dropout (0.1 on the attention and the
    # residual branches), which vTrain's runs kept.
    model += [{"name": f"block{i}", "type": "transformer_block", "hidden": hidden,
               "heads": run["heads"],
               "attention_dropout": 0.1, "hidden_dropout": 0.1} for i in range(layers)]
    model += [{"name": "ln_f", "type": "layernorm", "features": hidden},
              {"name": "lm_head", "type": "linear", "in_features": hidden,
               "out_features": vocab, "bias": False}]
    # Megatron-LM's and DeepSpeed's rank order: the tensor-parallel rank
    # varies fastest, then the data-parallel one, then the pipeline stage, so
    # stage s of replica r starts at GPU T · (r + d · s).
    per_stage = layers // p
    placement = []
    for s in range(p):
        first = "embed" if s == 0 else f"block{s * per_stage}"
        last = "lm_head" if s == p - 1 else f"block{(s + 1) * per_stage - 1}"
        placement.append({"device": device(T * d * s), "layers": {"from": first, "to": last}})
    microbatches = run["batch"] // (d * run["mb"])
    # DeepSpeed's pipeline runs fewer micro-batches than stages as a fill and
    # drain, which is GPipe's order; Pipewright's 1F1B asks for at least p.
    schedule = "1f1b" if microbatches >= p else "gpipe"
    out = {
        "format": "pipewright-project",
        "version": 1,
        "model": {"name": f"gpt-h{hidden}-l{layers}", "input": {"shape": [run["seq"]], "dtype": "int64"},
                  "loss": "cross_entropy", "layers": model},
        "topology": dgx_topology(gpus, SPEC, INTER_NODE),
        "placement": placement,
        "training": {
            "batch_size": run["batch"],
            "microbatch_size": run["mb"],
            "schedule": schedule,
            "optimizer": {"type": "adamw", "lr": 1e-4, "weight_decay": 0.01},
            "steps": 10,
            "dtype": "float16",
            "activation_checkpointing": True,
            # DeepSpeed's engine lets autograd add each micro-batch's
            # gradients (AccumulateGrad), a kernel of its own.
            "gradient_accumulation": "add",
        },
    }
    if T > 1:
        out["tensor_parallel"] = {"size": T, "sequence_parallel": False}
    if d > 1:
        # vTrain's configurations: no gradient buckets, so the reduction
        # follows the last backward. ZeRO stage 1, the most DeepSpeed's
        # pipeline allows; the data does not say.
        out["data_parallel"] = {
            "size": d, "zero_stage": 1, "overlap_gradient_sync": False,
            "replicas": [[device(T * (r + d * s)) for s in range(p)] for r in range(1, d)]}
    return out, schedule


def simulate(run):
    """Adds the simulated iteration (ms), fit and schedule to the run, or the reason it failed."""
    name = f"{run['set']}-{run['index']:04d}.json"
    path = os.path.join(OUT, name)
    proj, run["schedule"] = project(run)
    with open(path, "w") as f:
        json.dump(proj, f)
    result, error = simulate_json(PW, path, EFFICIENCY, timeout=120)
    if result is None:
        run["error"] = error
        return run
    run["simulated_ms"] = result["iteration_time_s"] * 1e3
    run["fits"] = all(dev["fits"] for dev in result["devices"])
    run["host_bound"] = result.get("kernel_pace", {}).get("likely_host_bound", False)
    return run


def ranks(values):
    """Ranks from 1, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs, ys):
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    return cov / math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))


def quantile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def row_text(cells):
    return "| " + " | ".join(cells) + " |"


def summary_row(label, runs):
    ratios = [r["simulated_ms"] / r["measured_ms"] for r in runs]
    errors = [abs(x - 1) for x in ratios]
    within = sum(e <= 0.10 for e in errors) / len(errors)
    return row_text([label, str(len(runs)), f"{statistics.median(ratios):.2f}",
                     f"{quantile(ratios, 0.1):.2f}", f"{quantile(ratios, 0.9):.2f}",
                     f"{statistics.fmean(errors):.1%}", f"{within:.0%}"])


SUMMARY_HEADER = [row_text(["runs", "count", "simulated / measured: median", "10th", "90th",
                            "mean absolute error", "within 10 %"]),
                  "|---|---|---|---|---|---|---|"]


def layout_choice(runs, key):
    """Within each model and batch, how the simulated order of layouts compares with the measured one."""
    groups = {}
    for r in runs:
        groups.setdefault(key(r), []).append(r)
    pair_errors, picks, losses, rhos = [], 0, [], []
    groups = [g for g in groups.values() if len(g) >= 2]
    for g in groups:
        for i in range(len(g)):
            for j in range(i + 1, len(g)):
                a, b = g[i], g[j]
                sim = a["simulated_ms"] / b["simulated_ms"]
                meas = a["measured_ms"] / b["measured_ms"]
                pair_errors.append(abs(sim / meas - 1))
        best_measured = min(g, key=lambda r: r["measured_ms"])
        chosen = min(g, key=lambda r: r["simulated_ms"])
        picks += chosen is best_measured
        losses.append(chosen["measured_ms"] / best_measured["measured_ms"] - 1)
        if len(g) >= 3:
            rhos.append(spearman([r["simulated_ms"] for r in g], [r["measured_ms"] for r in g]))
    return groups, pair_errors, picks, losses, rhos


print(f"Pipewright: {PW}")
print(f"Projects:   {OUT}")
print(f"Costs:      {'flat model at ' + EFFICIENCY + ' of peak' if EFFICIENCY else 'kernel model'}; "
      f"{SPEC}; a node's network {INTER_NODE:g} GB/s")
print()
all_runs = []
for name in SETS:
    runs = read_runs(name)
    with concurrent.futures.ThreadPoolExecutor(JOBS) as pool:
        done = list(pool.map(simulate, runs))
    all_runs += done

with open(os.path.join(OUT, "results.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["set", "index", "gpus", "batch", "mb", "hidden", "heads", "layers", "seq", "T", "d",
                "p", "schedule", "measured_ms", "simulated_ms", "fits", "host_bound", "error"])
    for r in all_runs:
        w.writerow([r["set"], r["index"], r["gpus"], r["batch"], r["mb"], r["hidden"], r["heads"],
                    r["layers"], r["seq"], r["T"], r["d"], r["p"], r.get("schedule", ""),
                    r["measured_ms"], f"{r['simulated_ms']:.3f}" if "simulated_ms" in r else "",
                    r.get("fits", ""), r.get("host_bound", ""), r.get("error", "")])

for name in SETS:
    runs = [r for r in all_runs if r["set"] == name]
    failed = [r for r in runs if "error" in r]
    ok = [r for r in runs if "error" not in r]
    print(f"## {name}: {len(runs)} runs, {len(failed)} refused, "
          f"{sum(not r['fits'] for r in ok)} simulated as not fitting in memory")
    print()
    reasons = {}
    for r in failed:
        reasons.setdefault(r["error"], []).append(str(r["index"]))
    for reason, which in reasons.items():
        print(f"- refused ({len(which)}: runs {', '.join(which)}): {reason}")
    if failed:
        print()
    if not ok:
        continue
    rho = spearman([r["simulated_ms"] for r in ok], [r["measured_ms"] for r in ok])
    print(f"Rank correlation (Spearman) of simulated and measured times: {rho:.3f}")
    print()
    print("\n".join(SUMMARY_HEADER))
    print(summary_row("all", ok))
    for warned, label in ((True, "warned: likely host-bound"), (False, "not warned")):
        sel = [r for r in ok if r.get("host_bound") == warned]
        if sel:
            print(summary_row(label, sel))
    for label, field in (("micro-batch", "mb"), ("tensor-parallel size", "T"),
                         ("pipeline stages", "p"), ("data-parallel size", "d"),
                         ("hidden", "hidden"), ("GPUs", "gpus")):
        for value in sorted({r[field] for r in ok}):
            sel = [r for r in ok if r[field] == value]
            print(summary_row(f"{label} {value}", sel))
    print()
    # A stage's time per micro-batch and per layer it holds (the iteration over
    # the micro-batches each stage runs, over its layers): where it stops
    # falling as the work shrinks, something other than the kernels sets it.
    print("Per micro-batch and per layer of a stage, medians (ms):")
    print()
    print(row_text(["hidden", "micro-batch", "tensor-parallel size", "runs", "measured",
                    "simulated", "simulated / measured"]))
    print("|---|---|---|---|---|---|---|")
    cells = {}
    for r in ok:
        per = r["batch"] // (r["d"] * r["mb"]) * r["layers"] / r["p"]
        cells.setdefault((r["hidden"], r["mb"], r["T"]), []).append(
            (r["measured_ms"] / per, r["simulated_ms"] / per))
    for (hidden, mb, T), v in sorted(cells.items()):
        if len(v) < 4:
            continue
        meas = statistics.median(x[0] for x in v)
        sim = statistics.median(x[1] for x in v)
        print(row_text([str(hidden), str(mb), str(T), str(len(v)), f"{meas:.2f}", f"{sim:.2f}",
                        f"{sim / meas:.2f}"]))
    print()
    least = min(x for v in cells.values() for x, _ in v)
    print(f"The least any run took per micro-batch and layer: {least:.2f} ms measured; "
          f"simulated, {min(y for v in cells.values() for _, y in v):.2f} ms.")
    print()
    groups, pair_errors, picks, losses, rhos = layout_choice(
        ok, lambda r: (r["hidden"], r["heads"], r["layers"], r["seq"], r["batch"], r["gpus"]))
    if groups:
        print(f"Layouts of one model, batch and GPU count ({len(groups)} groups of "
              f"{min(len(g) for g in groups)}–{max(len(g) for g in groups)} runs):")
        print()
        print(f"- the simulated ratio of two layouts' times against the measured one: "
              f"median error {statistics.median(pair_errors):.1%}, 90th percentile "
              f"{quantile(pair_errors, 0.9):.1%} ({len(pair_errors)} pairs);")
        if rhos:
            print(f"- rank correlation within a group: median {statistics.median(rhos):.2f}, "
                  f"lowest {min(rhos):.2f};")
        wrong = [x for x in losses if x > 0]
        print(f"- the layout simulated fastest is the measured fastest in {picks} of "
              f"{len(groups)} groups"
              + (f"; in the others it runs {statistics.median(wrong):.1%} slower than the "
                 f"measured fastest (median; largest {max(wrong):.1%})." if wrong else "."))
        print()
PYTHON
