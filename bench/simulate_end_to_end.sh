#!/usr/bin/env bash
# End-to-end `pipewright simulate` of a large 1F1B pipeline, two builds side
# by side (bench/README.md, "simulate end to end").
#
#   bench/simulate_end_to_end.sh BEFORE AFTER
#
# BEFORE and AFTER are `pipewright` binaries. First it checks that both write
# the same: `simulate` and `simulate --json` byte for byte, `--timeline` and
# `--trace` files the same events in any order (bench/same_events.py), for
# every project in assets/examples, and `simulate` and `simulate --json` of
# the large case (its `--timeline` and `--trace` too with FILES=1: 1 GB of
# files, and about 10 GB of memory to compare them unordered). Then it runs `simulate --json` of the large case ROUNDS times per
# binary, the binaries taking turns, and prints the median wall time, user
# and system time, peak RSS, and actions per second of wall time.
#
# Settings (environment): P (128 stages, one per device) and M (4096
# micro-batches) of the large case, ROUNDS (7), FILES (0), PLAIN_P and
# PLAIN_M (512, 8192): a second case run once per binary as plain
# `simulate` for its peak memory (0 to skip), OUT (a temporary folder).
set -euo pipefail

if [[ $# -ne 2 ]]; then
    sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
before=$(realpath "$1")
after=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
examples="$here/../assets/examples"
P=${P:-128}
M=${M:-4096}
ROUNDS=${ROUNDS:-7}
FILES=${FILES:-0}
PLAIN_P=${PLAIN_P:-512}
PLAIN_M=${PLAIN_M:-8192}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")

big="$OUT/p${P}m${M}.json"
python3 "$here/make_wide_project.py" "$P" "$big" --per-node 8 --schedule 1f1b --microbatches "$M"

# Runs `simulate` with both binaries, writing into $OUT/{before,after}, and
# compares stdout, the exit status and every file named after "--".
same() {
    local name=$1 project=$2
    shift 2
    local status=0 side binary
    for side in before after; do
        binary=$before
        [[ $side == after ]] && binary=$after
        mkdir -p "$OUT/$side"
        (cd "$OUT/$side" && "$binary" simulate "$project" "$@" >"$name.out" 2>"$name.err") ||
            echo "exit $?" >>"$OUT/$side/$name.out"
    done
    if ! cmp -s "$OUT/before/$name.out" "$OUT/after/$name.out"; then
        echo "DIFFERENT: $name (stdout)"
        status=1
    fi
    local arg
    for arg in "$@"; do
        if [[ $arg == *.json && -f "$OUT/before/$arg" ]]; then
            if ! cmp -s "$OUT/before/$arg" "$OUT/after/$arg" &&
                ! python3 "$here/same_events.py" "$OUT/before/$arg" "$OUT/after/$arg"; then
                echo "DIFFERENT: $name ($arg)"
                status=1
            fi
            rm -f "$OUT/before/$arg" "$OUT/after/$arg"
        fi
    done
    return $status
}

echo "== same outputs"
different=0
checked=0
for project in "$examples"/*.json; do
    base=$(basename "$project" .json)
    for variant in plain json files; do
        case $variant in
            plain) args=() ;;
            json) args=(--json) ;;
            files) args=(--timeline timeline.json --trace trace.json) ;;
        esac
        same "$base-$variant" "$project" "${args[@]}" || different=1
        checked=$((checked + 1))
    done
done
same "big-plain" "$big" || different=1
same "big-json" "$big" --json || different=1
checked=$((checked + 2))
if [[ $FILES == 1 ]]; then
    same "big-files" "$big" --timeline timeline.json --trace trace.json \
        --max-output-size 4GiB || different=1
    checked=$((checked + 1))
fi
if [[ $different != 0 ]]; then
    echo "the outputs differ (files in $OUT/before and $OUT/after)"
    exit 1
fi
echo "$checked cases: identical"

# wall s, user s, system s, peak RSS KiB of one run
measure() {
    local binary=$1
    shift
    /usr/bin/time -f "%e %U %S %M" -o "$OUT/time.txt" "$binary" simulate "$@" >/dev/null
    cat "$OUT/time.txt"
}

median() {
    sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

actions=$("$after" simulate "$big" --export-csv "$OUT/schedule.csv" >/dev/null &&
    tr ',' '\n' <"$OUT/schedule.csv" | grep -c .)
compute=$(tr ',' '\n' <"$OUT/schedule.csv" | grep -cv 'SEND\|RECV\|^$')
echo
echo "== simulate --json, p = $P, m = $M, 1f1b: $actions actions ($compute compute), $ROUNDS rounds"
for side in before after; do
    : >"$OUT/$side.times"
done
for ((round = 1; round <= ROUNDS; ++round)); do
    for side in before after; do
        binary=$before
        [[ $side == after ]] && binary=$after
        measure "$binary" "$big" --json >>"$OUT/$side.times"
    done
done
printf '%-7s %9s %9s %9s %12s %14s %16s\n' build "wall s" "user s" "sys s" "peak MiB" "actions/s" "compute/s"
for side in before after; do
    wall=$(cut -d' ' -f1 "$OUT/$side.times" | median)
    user=$(cut -d' ' -f2 "$OUT/$side.times" | median)
    sys=$(cut -d' ' -f3 "$OUT/$side.times" | median)
    rss=$(cut -d' ' -f4 "$OUT/$side.times" | median)
    awk -v side="$side" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v a="$actions" \
        -v c="$compute" 'BEGIN { printf "%-7s %9.3f %9.3f %9.3f %12.0f %12.2f M/s %12.2f M/s\n",
            side, w, u, s, r / 1024, a / w / 1e6, c / w / 1e6 }'
done
for side in before after; do
    echo "$side rounds (wall user sys KiB): $(tr '\n' ';' <"$OUT/$side.times")"
done

if [[ $PLAIN_P != 0 ]]; then
    plain="$OUT/p${PLAIN_P}m${PLAIN_M}.json"
    python3 "$here/make_wide_project.py" "$PLAIN_P" "$plain" --per-node 8 --schedule 1f1b \
        --microbatches "$PLAIN_M"
    echo
    echo "== plain simulate, p = $PLAIN_P, m = $PLAIN_M, once per build"
    for side in before after; do
        binary=$before
        [[ $side == after ]] && binary=$after
        read -r wall user sys rss < <(measure "$binary" "$plain")
        awk -v side="$side" -v w="$wall" -v r="$rss" \
            'BEGIN { printf "%-7s wall %.2f s, peak RSS %.0f MiB\n", side, w, r / 1024 }'
    done
fi
