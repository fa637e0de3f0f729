# Shared by the bench/run_*.sh scripts that compare real runs with the
# simulation: sourced, not run. Sets `pipewright` (PIPEWRIGHT, default the
# ci build's), checks that it and jq exist, makes the scratch folder `work`
# (removed on exit) and defines `median` (of the numbers on its input,
# separated by spaces) and `run_rounds` (real runs of the variants in turn).

pipewright=${PIPEWRIGHT:-build/ci/cli/pipewright}
for tool in jq "$pipewright"; do
    if ! command -v "$tool" > /dev/null; then
        echo "$(basename "$0"): $tool not found (build Pipewright, or set PIPEWRIGHT)" >&2
        exit 2
    fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {
    print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# run_rounds: runs $work/V.json for each V of `variants`, in turn, `rounds`
# times (`steps` steps after `warmup`, one thread per rank), and appends each
# run's median iteration time to times[V] (an associative array it declares).
declare -A times
run_rounds() {
    local round v
    for round in $(seq 1 "$rounds"); do
        for v in "${variants[@]}"; do
            "$pipewright" run "$work/$v.json" --steps "$steps" --warmup "$warmup" \
                --threads-per-rank 1 --json --out "$work/run-$v-$round" 2> /dev/null \
                > "$work/$v-$round.json"
            times[$v]+="$(jq '.iteration_time_s' "$work/$v-$round.json") "
        done
    done
}
