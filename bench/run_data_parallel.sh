#!/usr/bin/env bash
# Data parallelism against pipelining on this machine's CPUs (issue 13): the
# same model and global batch trained as
#   - D = 1 x p = 2: the project as given (two pipeline ranks),
#   - D = 2 x p = 1: every layer on the first device, two replicas (the second
#     on the project's second device), each on half the batch in micro-batches
#     of the same size,
# each with 1 thread per rank, beside what `simulate --profile` predicts for
# it (a profile of this machine taken first), with the profile's measured
# collectives and with its transfer link alone. The
# variants take turns, ROUNDS times; each run reports the median iteration
# time after the warm-up, and the table shows the median over the rounds.
#
#   bench/run_data_parallel.sh [PROJECT]
#   PIPEWRIGHT=build/dp/cli/pipewright ROUNDS=5 STEPS=30 bench/run_data_parallel.sh
set -euo pipefail

project=${1:-assets/examples/mlp-cpu.json}
rounds=${ROUNDS:-5}
steps=${STEPS:-30}
warmup=${WARMUP:-5}

# shellcheck source=bench/run_common.sh
source "$(dirname "$0")/run_common.sh"

m=$(jq '.training.microbatches' "$project")
cp "$project" "$work/pipeline.json"
# Every layer on the first device; the second replica takes the next device
# (the default layout). Half the micro-batches per replica keeps their size.
jq --argjson m "$m" '.placement = [{"device": .placement[0].device,
        "layers": [.model.layers[].name]}]
    | .training.microbatches = ($m / 2 | floor)
    | .data_parallel = {"size": 2, "zero_stage": 0, "overlap_gradient_sync": true}' \
    "$project" > "$work/replicas.json"
jq '.data_parallel.zero_stage = 1' "$work/replicas.json" > "$work/replicas-zero1.json"

# One profile (1 thread, micro-batches of the run's size, this machine's
# Gloo transfer) serves every variant: the layers and their micro-batch size
# are the same.
"$pipewright" profile "$work/pipeline.json" --threads 1 --out "$work/profile.json" \
    > /dev/null 2>&1

variants=(pipeline replicas replicas-zero1)
run_rounds

# The same profile without its measured collectives: what the simulator
# predicted before `profile` measured them (the transfer's link for all).
jq 'del(.collectives)' "$work/profile.json" > "$work/profile-links.json"
printf '| %-28s | %14s | %12s | %14s | %18s |\n' variant "measured (ms)" "samples/s" \
    "simulated (ms)" "links only (ms)"
printf '|%s|%s|%s|%s|%s|\n' "------------------------------" "---------------:" "-------------:" \
    "---------------:" "-------------------:"
batch=$(jq '.training.batch_size' "$project")
for v in "${variants[@]}"; do
    t=$(echo "${times[$v]}" | median)
    sim=$("$pipewright" simulate "$work/$v.json" --profile "$work/profile.json" --json |
        jq '.iteration_time_s')
    links=$("$pipewright" simulate "$work/$v.json" --profile "$work/profile-links.json" --json |
        jq '.iteration_time_s')
    case $v in
        pipeline) name="D = 1 x p = 2 (1f1b)" ;;
        replicas) name="D = 2 x p = 1, ZeRO 0" ;;
        replicas-zero1) name="D = 2 x p = 1, ZeRO-1" ;;
    esac
    printf '| %-28s | %14.1f | %12.0f | %14.1f | %18.1f |\n' "$name" \
        "$(echo "$t * 1000" | bc -l)" "$(echo "$batch / $t" | bc -l)" \
        "$(echo "$sim * 1000" | bc -l)" "$(echo "$links * 1000" | bc -l)"
done
echo "(each: median over $rounds rounds of the median iteration after $warmup warm-up steps of $steps)"
