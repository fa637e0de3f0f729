#!/usr/bin/env bash
# Builds the `tsan` preset (ThreadSanitizer, debug at -O1, no studio) and runs
# the core, sim, command-line and backend tests under it. Not part of CI: it
# takes about half an hour on two cores (see docs/contributing.md).
#
#   scripts/tsan-tests.sh [ctest arguments]      e.g. -R 'Launcher|MultiNode'
#
# The test preset sets TSAN_OPTIONS (tests/tsan.supp, halt on the first
# report). Every process writes its reports to a file of its own under
# build/tsan/tsan-reports/ (the workers of a run too, whose stderr goes to a
# run folder that the tests delete); the script prints them at the end and
# fails when there is one, even if the test that caused it passed.
#
# Environment:
#   PIPEWRIGHT_TSAN_JOBS  build parallelism (default: 2; the build runs niced)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs="${PIPEWRIGHT_TSAN_JOBS:-2}"
build=build/tsan
reports="$PWD/$build/tsan-reports"

cmake --preset tsan
# The studio is off in this preset; only the suites run below are built.
nice -n 8 cmake --build "$build" -j "$jobs" \
    --target core_tests sim_tests cli_tests backend_tests

rm -rf "$reports"
mkdir -p "$reports"
status=0
# log_path is added to the preset's options (the later option wins).
TSAN_OPTIONS="log_path=$reports/report" \
    ctest --preset tsan "$@" || status=$?

shopt -s nullglob
found=("$reports"/report.*)
if ((${#found[@]} > 0)); then
    for f in "${found[@]}"; do
        echo "==== $f"
        cat "$f"
    done
    echo "tsan-tests: ThreadSanitizer wrote ${#found[@]} report file(s), above" >&2
    exit 1
fi
if ((status != 0)); then
    echo "tsan-tests: ctest failed (exit $status) without a ThreadSanitizer report" >&2
fi
exit "$status"
