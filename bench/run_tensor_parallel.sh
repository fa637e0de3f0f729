#!/usr/bin/env bash
# Tensor parallelism against pipelining and data parallelism on this
# machine's CPUs (issue 14): the small GPT of the project trained on two
# workers as
#   - T = 2:        every layer on the first group of two (one stage),
#   - p = 2:        two pipeline stages of one worker each (1F1B),
#   - D = 2:        every layer on one worker, two replicas,
# and on four as the project gives it (T = 2 x p = 2), each with 1 thread
# per rank, beside what `simulate --profile` predicts for it (a profile of
# this machine taken first). The variants take turns, ROUNDS times; each
# run reports the median iteration time after the warm-up, and the table
# shows the median over the rounds.
#
#   bench/run_tensor_parallel.sh [PROJECT]
#   PIPEWRIGHT=build/ci/cli/pipewright ROUNDS=3 STEPS=20 bench/run_tensor_parallel.sh
set -euo pipefail

project=${1:-assets/examples/gpt-tiny-t2p2-cpu.json}
rounds=${ROUNDS:-3}
steps=${STEPS:-20}
warmup=${WARMUP:-5}

# shellcheck source=bench/run_common.sh
source "$(dirname "$0")/run_common.sh"

first=$(jq -r '.placement[0].device' "$project")
container=${first%/*}
m=$(jq '.training.microbatches' "$project")
cp "$project" "$work/t2p2.json"
jq --arg d "$first" '.placement = [{"device": $d, "layers": [.model.layers[].name]}]' \
    "$project" > "$work/t2.json"
jq --arg c "$container" '.tensor_parallel = {"size": 1}
    | .placement[1].device = ($c + "/" + (.topology.nodes[0].containers[0].devices[1].name))' \
    "$project" > "$work/p2.json"
jq --arg d "$first" --argjson m "$m" '.tensor_parallel = {"size": 1}
    | .placement = [{"device": $d, "layers": [.model.layers[].name]}]
    | .training.microbatches = ($m / 2 | floor)
    | .data_parallel = {"size": 2, "zero_stage": 0, "overlap_gradient_sync": true}' \
    "$project" > "$work/d2.json"

"$pipewright" profile "$work/p2.json" --threads 1 --out "$work/profile.json" > /dev/null 2>&1

variants=(t2 p2 d2 t2p2)
run_rounds

printf '| %-30s | %7s | %14s | %12s | %14s |\n' variant workers "measured (ms)" "samples/s" \
    "simulated (ms)"
printf '|%s|%s|%s|%s|%s|\n' "--------------------------------" "--------:" "---------------:" \
    "-------------:" "---------------:"
batch=$(jq '.training.batch_size' "$project")
for v in "${variants[@]}"; do
    t=$(echo "${times[$v]}" | median)
    sim=$("$pipewright" simulate "$work/$v.json" --profile "$work/profile.json" --json |
        jq '.iteration_time_s')
    case $v in
        t2) name="T = 2 (one stage)"; workers=2 ;;
        p2) name="p = 2 (1f1b)"; workers=2 ;;
        d2) name="D = 2"; workers=2 ;;
        t2p2) name="T = 2 x p = 2 (1f1b)"; workers=4 ;;
    esac
    awk -v n="$name" -v w="$workers" -v t="$t" -v s="$sim" -v b="$batch" 'BEGIN {
        printf "| %-30s | %7d | %14.1f | %12.1f | %14.1f |\n", n, w, t * 1000, b / t, s * 1000 }'
done
