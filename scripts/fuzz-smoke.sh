#!/usr/bin/env bash
# Builds the loader fuzz target (fuzz/loader_fuzz.cpp: projects, schedule
# CSVs, timelines, profiles, device catalogs, layers) with clang (libFuzzer,
# ASan, UBSan) and runs it for a while on the seed corpus and the shipped
# examples and device catalog.
#
#   scripts/fuzz-smoke.sh [seconds]      (default 60)
#
# Exits 0 when the fuzzer found nothing, non-zero (and prints the reproducer)
# when it found a crash, leak, timeout or out-of-memory input. Reproduce with
#   build-fuzz/fuzz/loader_fuzz <reproducer>
# (a reproducer's first byte names the loader it went to: see kLoaders).
#
# Environment:
#   PIPEWRIGHT_FUZZ_BUILD_DIR  build folder        (default: <repo>/build-fuzz)
#   PIPEWRIGHT_FUZZ_ARTIFACTS  reproducers folder  (default: <build>/fuzz-artifacts)
#   PIPEWRIGHT_FUZZ_JOBS       build parallelism   (default: 2)
set -euo pipefail

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [seconds]   (a positive whole number, default 60)" >&2
  exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PIPEWRIGHT_FUZZ_BUILD_DIR:-$root/build-fuzz}"
artifacts="${PIPEWRIGHT_FUZZ_ARTIFACTS:-$build/fuzz-artifacts}"
jobs="${PIPEWRIGHT_FUZZ_JOBS:-2}"

for tool in clang++ cmake; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "fuzz-smoke: $tool not found (scripts/setup-debian.sh installs it)" >&2
    exit 2
  fi
done

# libFuzzer's runtime comes with libclang-rt-<version>-dev on Debian.
probe="$(mktemp -d "${TMPDIR:-/tmp}/pipewright-fuzz-probe.XXXXXX")"
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
  >"$probe/probe.cpp"
if ! clang++ -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" \
  >"$probe/log" 2>&1; then
  cat "$probe/log" >&2
  echo "fuzz-smoke: clang++ cannot link -fsanitize=fuzzer; install libclang-rt-14-dev" \
    "(scripts/setup-debian.sh)" >&2
  rm -rf "$probe"
  exit 2
fi
rm -rf "$probe"

# A folder configured with another compiler cannot be switched in place.
if [ -f "$build/CMakeCache.txt" ] &&
  ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$build/CMakeCache.txt"; then
  echo "fuzz-smoke: $build was configured with another compiler; starting it afresh"
  rm -rf "$build"
fi

generator=()
if command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi

# Everything instrumented for coverage and checked by ASan/UBSan; UB aborts
# instead of printing and going on; libstdc++ checks container bounds.
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"
flags+=" -fno-omit-frame-pointer -D_GLIBCXX_ASSERTIONS"

echo "fuzz-smoke: configuring $build"
mkdir -p "$build"
log="$build/fuzz-smoke-configure.log"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" "${generator[@]}" \
  -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_CXX_FLAGS="$flags" \
  -DPIPEWRIGHT_BUILD_FUZZ=ON \
  -DPIPEWRIGHT_BUILD_GUI=OFF \
  -DPIPEWRIGHT_BUILD_BACKEND=OFF \
  -DPIPEWRIGHT_BUILD_TESTS=OFF \
  -DPIPEWRIGHT_BUILD_BENCH=OFF >"$log" 2>&1 || {
  cat "$log" >&2
  echo "fuzz-smoke: configuring failed" >&2
  exit 2
}

echo "fuzz-smoke: building loader_fuzz"
cmake --build "$build" --target loader_fuzz -j "$jobs"
fuzzer="$build/fuzz/loader_fuzz"

# The fuzzer adds what it learns to its corpus folder: give it a copy.
work="$(mktemp -d "${TMPDIR:-/tmp}/pipewright-fuzz.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$artifacts"
# Each seed starts with the byte that hands it to its loader (kLoaders in
# fuzz/loader_fuzz.cpp); fuzz/corpus/<folder>/ holds the seeds of one loader.
seed() {  # tag file
  { printf '%s' "$1"; cat "$2"; } >"$work/corpus/$1-$(basename "$2")"
}
for pair in project:P timeline:T profile:R devices:D layer:L csv:C runs:M hfconfig:H; do
  for f in "$root/fuzz/corpus/${pair%%:*}"/*; do
    seed "${pair##*:}" "$f"
  done
done
for f in "$root"/assets/examples/*.json; do
  seed P "$f"
done
seed D "$root/assets/devices.json"
for f in "$root"/assets/models/*.json; do
  seed H "$f"
done
# Only this run's reproducers count.
rm -f "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*

dict=()
if [ -f "$root/fuzz/loader_fuzz.dict" ]; then
  dict=(-dict="$root/fuzz/loader_fuzz.dict")
fi

echo "fuzz-smoke: fuzzing for ${seconds}s"
status=0
# The outer timeout only guards against a fuzzer that does not stop itself.
UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  timeout --kill-after=30 "$((seconds + 120))" \
  "$fuzzer" "${dict[@]}" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 \
  "$work/corpus" || status=$?

shopt -s nullglob
found=("$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*)
if [ "$status" -ne 0 ] || [ ${#found[@]} -gt 0 ]; then
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "fuzz-smoke: the fuzzer did not stop after ${seconds}s and was killed" >&2
  fi
  echo "fuzz-smoke: FAILED (exit status $status)" >&2
  for f in "${found[@]}"; do
    echo "fuzz-smoke: reproducer: $f  (run: $fuzzer $f)" >&2
  done
  [ "$status" -ne 0 ] || status=1
  exit "$status"
fi
echo "fuzz-smoke: no crash in ${seconds}s"
