#!/usr/bin/env bash
# Throughput of real runs (issue 3, "Speed" 1-3), measured side by side in
# one session: the same project trained by
#   - Pipewright with naive model parallelism, GPipe and 1F1B (2 ranks x 1 thread),
#   - Pipewright as one process training the whole model with 2 threads and
#     no micro-batching (a one-device variant of the project, made here),
#   - PyTorch's own GPipe, torch.distributed.pipeline.sync.Pipe (Debian's
#     python3-torch, same model, batch and chunks, 2 threads), when installed.
# The variants take turns, ROUNDS times, so that a change in the machine's load
# hits all of them alike; each run reports the median iteration time of its
# steps after the warm-up, and the table shows the median over the rounds.
#
#   bench/run_throughput.sh [PROJECT]
#   PIPEWRIGHT=build-launch-rel/cli/pipewright ROUNDS=5 STEPS=8 bench/run_throughput.sh
set -euo pipefail

project=${1:-assets/examples/mlp-2048-cpu.json}
pipewright=${PIPEWRIGHT:-build-launch-rel/cli/pipewright}
rounds=${ROUNDS:-3}
steps=${STEPS:-6}
warmup=${WARMUP:-2}
python=${PYTHON:-/usr/bin/python3}

for tool in jq "$pipewright"; do
    if ! command -v "$tool" > /dev/null; then
        echo "run_throughput.sh: $tool not found (build Pipewright in Release, or set PIPEWRIGHT)" >&2
        exit 2
    fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The one-device variant: every layer on one CPU device, one micro-batch.
jq '.topology.nodes = [{"name": "localhost", "containers": [{"name": "proc",
        "devices": [{"name": "cpu0", "spec": "cpu"}]}]}]
    | .placement = [{"device": "localhost/proc/cpu0", "layers": [.model.layers[].name]}]
    | .training.microbatches = 1 | .training.schedule = "gpipe"' "$project" > "$work/single.json"

batch=$(jq '.training.batch_size' "$project")
chunks=$(jq '.training.microbatches' "$project")

# PyTorch's GPipe on the same model: Linear layers of the project with ReLU
# between, split where the project's placement splits them.
cat > "$work/torch_pipe.py" << 'PY'
import json, os, statistics, sys, tempfile, time
import torch
import torch.distributed.rpc as rpc
from torch.distributed.pipeline.sync import Pipe

project = json.load(open(sys.argv[1]))
steps, warmup, threads = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads)
torch.manual_seed(0)
layers = {}
for spec in project["model"]["layers"]:
    if spec["type"] == "linear":
        layers[spec["name"]] = torch.nn.Linear(spec["in_features"], spec["out_features"])
    elif spec["type"] == "relu":
        layers[spec["name"]] = torch.nn.ReLU()
    else:
        sys.exit("torch_pipe.py: only linear and relu layers, got " + spec["type"])
stages = [torch.nn.Sequential(*[layers[n] for n in p["layers"]]) for p in project["placement"]]
t = project["training"]
batch, chunks = t["batch_size"], t["microbatches"]
rpc.init_rpc("worker", rank=0, world_size=1, rpc_backend_options=rpc.TensorPipeRpcBackendOptions(
    init_method="file://" + tempfile.mktemp()))
model = Pipe(torch.nn.Sequential(*stages), chunks=chunks, checkpoint="never")
opt = torch.optim.SGD(model.parameters(), lr=t["optimizer"]["lr"], momentum=0.9)
width = project["model"]["input"]["shape"][0]
x = torch.randn(batch, width)
y = torch.randn(batch, layers[project["model"]["layers"][-1]["name"]].out_features)
times = []
for step in range(steps):
    start = time.perf_counter()
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x).local_value(), y)
    loss.backward()
    opt.step()
    times.append(time.perf_counter() - start)
rpc.shutdown()
median = statistics.median(times[warmup:])
print(json.dumps({"iteration_time_s": median, "throughput_samples_per_s": batch / median}))
PY
have_torch_pipe=no
if "$python" -c 'import torch.distributed.pipeline.sync' 2> /dev/null; then
    have_torch_pipe=yes
fi

run_pipewright() {  # name, extra args...
    local name=$1
    shift
    "$pipewright" run "$@" --steps "$steps" --warmup "$warmup" --json --overwrite --out "$work/$name" \
        2> "$work/$name.err" | jq -r '.iteration_time_s' >> "$work/$name.times"
}

variants="naive gpipe 1f1b single"
[ "$have_torch_pipe" = yes ] && variants="$variants torch-pipe"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)," \
    "$rounds rounds x $steps steps ($warmup warm-up), batch $batch, $chunks micro-batches"
for round in $(seq "$rounds"); do
    for v in $variants; do
        case $v in
            naive | gpipe | 1f1b)
                run_pipewright "$v" "$project" --schedule "$v" --threads-per-rank 1 ;;
            single)
                run_pipewright single "$work/single.json" --threads-per-rank 2 ;;
            torch-pipe)
                "$python" "$work/torch_pipe.py" "$project" "$steps" "$warmup" 2 \
                    | jq -r '.iteration_time_s' >> "$work/torch-pipe.times" ;;
        esac
    done
    echo "# round $round done, load: $(cut -d' ' -f1-3 /proc/loadavg)"
done

median() { sort -g "$1" | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
naive_time=$(median "$work/naive.times")
printf '| %-36s | %14s | %10s | %11s |\n' variant "iteration (ms)" "samples/s" "vs naive"
printf '|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..38})" "$(printf -- '-%.0s' {1..15}):" \
    "$(printf -- '-%.0s' {1..11}):" "$(printf -- '-%.0s' {1..12}):"
for v in $variants; do
    case $v in
        naive) label="pipewright naive, 2 ranks x 1 thread" ;;
        gpipe) label="pipewright gpipe, 2 ranks x 1 thread" ;;
        1f1b) label="pipewright 1f1b, 2 ranks x 1 thread" ;;
        single) label="pipewright 1 process x 2 threads" ;;
        torch-pipe) label="torch Pipe (GPipe), 2 threads" ;;
    esac
    t=$(median "$work/$v.times")
    awk -v l="$label" -v t="$t" -v n="$naive_time" -v b="$batch" \
        'BEGIN {printf "| %-36s | %14.1f | %10.1f | %10.2fx |\n", l, t * 1000, b / t, n / t}'
done
if [ "$have_torch_pipe" = no ]; then
    echo "torch.distributed.pipeline.sync is not available to $python (Debian: apt-get install" \
        "python3-torch); PyTorch's Pipe was not measured"
fi
