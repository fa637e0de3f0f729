# Shared by the bench/run_*.sh scripts that compare real runs with the
# simulation: sourced, not run. Sets `pipewright` (PIPEWRIGHT, default the
# ci build's), checks that it and jq exist, makes the scratch folder `work`
# (removed on exit) and defines `median` (of the numbers on its input,
# separated by spaces).

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
