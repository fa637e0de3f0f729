#!/usr/bin/env bash
# Start-up of the command line (issue 11): the wall time of short commands,
# for several programs side by side. The programs take turns, ROUNDS times, so
# that a change in the machine's load hits all of them alike; the table shows
# the median and the fastest round of each.
#
#   bench/startup.sh PROGRAM...
#   ROUNDS=31 bench/startup.sh build/ci/cli/pipewright build/ci/cli/pipewright-backend
#
# pipewright-backend parses the same command line as the front end but links
# LibTorch, as the front end did before issue 11: it stands in for the old
# program.
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: $0 PROGRAM..." >&2
    exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${ROUNDS:-21}
example="$root/assets/examples/dummy-2gpu.json"
commands=("--version" "simulate $example")

# now_ns: a monotonic clock in nanoseconds, without a subprocess of its own.
now_ns() {
    local t=$EPOCHREALTIME
    echo $((${t%.*} * 1000000000 + 10#${t#*.} * 1000))
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for ((round = 0; round < rounds; ++round)); do
    for ((p = 1; p <= $#; ++p)); do
        program=${!p}
        for ((c = 0; c < ${#commands[@]}; ++c)); do
            # shellcheck disable=SC2086
            start=$(now_ns)
            "$program" ${commands[c]} > /dev/null
            end=$(now_ns)
            echo $(((end - start) / 1000)) >> "$work/$p-$c"
        done
    done
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
fastest() { sort -n "$1" | head -1; }
printf '%-40s %-22s %12s %12s\n' program command "median ms" "fastest ms"
for ((p = 1; p <= $#; ++p)); do
    for ((c = 0; c < ${#commands[@]}; ++c)); do
        label=${commands[c]%% *}
        printf '%-40s %-22s %12.1f %12.1f\n' "${!p}" "$label" \
            "$(echo "$(median "$work/$p-$c") / 1000" | bc -l)" \
            "$(echo "$(fastest "$work/$p-$c") / 1000" | bc -l)"
    done
done
echo "($rounds rounds in rotation; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg))"
