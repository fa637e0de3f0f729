#!/usr/bin/env bash
# Compiles the backend's CUDA and NCCL code paths (syntax and types only, no
# object files) on a machine without a CUDA LibTorch: Debian's LibTorch ships
# the c10/ATen CUDA headers and c10d's ProcessGroupNCCL.hpp, and a CUDA
# toolkit provides cuda_runtime.h and nccl.h. Catches breakage in the code a
# CPU-only build never compiles. Uses the flags of an existing build folder.
#
#   scripts/check-cuda-sources.sh [BUILD_DIR]   (default build/ci)
#   CUDA_HOME=/usr/local/cuda NCCL_INCLUDE_DIR=... to point elsewhere
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build/ci}
cuda=${CUDA_HOME:-/usr/local/cuda}
nccl=${NCCL_INCLUDE_DIR:-$cuda/include}
db="$build/compile_commands.json"
[ -f "$db" ] || { echo "check-cuda-sources: $db is missing; configure that build first" >&2; exit 2; }
[ -f "$cuda/include/cuda_runtime.h" ] || { echo "check-cuda-sources: no CUDA toolkit at $cuda (set CUDA_HOME)" >&2; exit 2; }
nccl_flags=(-DPIPEWRIGHT_WITH_NCCL -DUSE_C10D_NCCL -isystem "$nccl")
if [ ! -f "$nccl/nccl.h" ]; then
    echo "check-cuda-sources: no nccl.h in $nccl (set NCCL_INCLUDE_DIR); checking the CUDA path without NCCL"
    nccl_flags=()
fi
command -v jq >/dev/null || { echo "check-cuda-sources: needs jq (scripts/setup-debian.sh installs it)" >&2; exit 2; }

# A CPU-only LibTorch lacks the one header its CUDA build generates
# (c10/cuda/impl/cuda_cmake_macros.h); it only says that c10_cuda is shared.
shim=$(mktemp -d)
trap 'rm -rf "$shim"' EXIT
if [ ! -f /usr/include/c10/cuda/impl/cuda_cmake_macros.h ]; then
    mkdir -p "$shim/c10/cuda/impl"
    echo '#define C10_CUDA_BUILD_SHARED_LIBS' >"$shim/c10/cuda/impl/cuda_cmake_macros.h"
fi

# Every translation unit that has CUDA- or NCCL-only code (under backend/src/).
sources=(execution/action_clock.cpp execution/compute_device.cpp transport/transport_nccl.cpp
         run/worker.cpp profile/profiler_layers.cpp execution/gradient_sync.cpp
         layers/context_exchange.cpp
         transport/device_group.cpp profile/device_collectives.cpp
         profile/profiler.cpp run/launcher.cpp execution/executor.cpp)
# transport_nccl.cpp is not in a CPU build's database: it borrows transport.cpp's flags.
flags_of() {
    jq -r --arg f "backend/src/$1" '.[] | select(.file | endswith($f)) | .command' "$db"
}
status=0
for src in "${sources[@]}"; do
    if [ "$src" = transport/transport_nccl.cpp ] && [ ${#nccl_flags[@]} -eq 0 ]; then
        continue
    fi
    from=$src
    [ "$src" = transport/transport_nccl.cpp ] && from=transport/transport.cpp
    cmd=$(flags_of "$from")
    [ -n "$cmd" ] || { echo "check-cuda-sources: $from is not in $db" >&2; exit 2; }
    # Drop the output, the precompiled header (built without these macros)
    # and the source; add the CUDA configuration.
    read -r -a words <<<"$cmd"
    args=()
    skip=0
    for w in "${words[@]}"; do
        if [ $skip -eq 1 ]; then skip=0; continue; fi
        case "$w" in
            -o|-include) skip=1 ;;
            -c|-Winvalid-pch|*/backend/src/*.cpp) ;;
            *) args+=("$w") ;;
        esac
    done
    echo "check-cuda-sources: $src"
    if ! "${args[@]}" -fsyntax-only -DPIPEWRIGHT_WITH_CUDA -DUSE_CUDA "${nccl_flags[@]}" \
            -isystem "$shim" -isystem "$cuda/include" -include torch/torch.h "backend/src/$src"; then
        status=1
    fi
done
[ $status -eq 0 ] && echo "check-cuda-sources: the CUDA${nccl_flags:+ and NCCL} paths compile"
exit $status
