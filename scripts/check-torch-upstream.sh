#!/usr/bin/env bash
# Builds and tests the LibTorch backend against current upstream PyTorch 2.x
# from PyPI (issue 17): the default `torch` wheel, which is built with CUDA
# and ships NCCL in nvidia-* wheels. Installs it into a virtual environment
# outside the source tree (kept between runs), configures the `ci` preset
# without the studio against it, builds every program with CUDA and NCCL
# compiled in, checks that they link the wheel's libraries, and runs the
# tests of the backend and the command line on CPUs (the CUDA build runs on
# a machine without a GPU). Debian's LibTorch 1.13 stays the default build.
#
#   scripts/check-torch-upstream.sh [--if-cached] [BUILD_DIR]
#       BUILD_DIR            default build/torch-upstream
#       --if-cached          skip (exit 0, saying so) unless the environment
#                            is already installed: never downloads (for CI)
#   PIPEWRIGHT_TORCH_VENV    the environment; default
#                            ${XDG_CACHE_HOME:-~/.cache}/pipewright/torch-upstream
#   PIPEWRIGHT_TORCH_SPEC    what pip installs; default `torch` (the newest)
#   PIPEWRIGHT_TORCH_UPGRADE=1  upgrade a cached environment to the newest
#   PYTHON                   the interpreter that makes the environment (python3)
#   CUDA_HOME                the CUDA toolkit (nvcc), default /usr/local/cuda
#
# The first run downloads about 3 GB (5.3 GB installed); see
# docs/contributing.md for the times.
set -euo pipefail
cd "$(dirname "$0")/.."

if_cached=0
if [ "${1:-}" = --if-cached ]; then
    if_cached=1
    shift
fi
case "${1:-}" in
    -*) echo "usage: scripts/check-torch-upstream.sh [--if-cached] [BUILD_DIR]" >&2; exit 2 ;;
esac
build=${1:-build/torch-upstream}
venv=${PIPEWRIGHT_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/pipewright/torch-upstream}
spec=${PIPEWRIGHT_TORCH_SPEC:-torch}
cuda=${CUDA_HOME:-/usr/local/cuda}
python=${PYTHON:-python3}
# Written once pip has installed torch completely: a half-finished download
# is redone, never used.
stamp="$venv/.pipewright-installed"

say() { echo "check-torch-upstream: $*"; }
fail() { echo "check-torch-upstream: $*" >&2; exit 1; }
phase_start=$SECONDS
phase() {
    say "$1 took $((SECONDS - phase_start)) s"
    phase_start=$SECONDS
}

if [ ! -f "$stamp" ] && [ $if_cached -eq 1 ]; then
    say "skipped: no installed torch in $venv (run scripts/check-torch-upstream.sh once; it downloads about 3 GB)"
    exit 0
fi
[ -x "$cuda/bin/nvcc" ] || fail "needs the CUDA toolkit's nvcc at $cuda/bin/nvcc (set CUDA_HOME): torch's CMake files look for it"

# ---- 1. the wheel ----------------------------------------------------------
if [ ! -f "$stamp" ] || [ "${PIPEWRIGHT_TORCH_UPGRADE:-0}" = 1 ]; then
    parent=$(dirname "$venv")
    mkdir -p "$parent"
    free_kb=$(df -Pk "$parent" | awk 'NR == 2 { print $4 }')
    [ "$free_kb" -gt $((8 * 1024 * 1024)) ] ||
        fail "the environment needs about 8 GB free in $parent (5.3 GB installed, plus pip's temporary files); $((free_kb / 1024 / 1024)) GB are"
    if [ ! -x "$venv/bin/python" ]; then
        say "making the environment $venv"
        "$python" -m venv "$venv"
    fi
    say "installing $spec from PyPI into $venv (about 3 GB the first time)"
    rm -f "$stamp"
    "$venv/bin/python" -m pip install --no-cache-dir --progress-bar off --upgrade "$spec" ||
        fail "pip could not install $spec into $venv (its message is above)"
    touch "$stamp"
    phase "installing torch"
else
    say "using the installed torch in $venv"
fi

# Where the wheel keeps what the build needs.
info=$("$venv/bin/python" - <<'EOF' 2>/dev/null
import os, torch, torch.utils
site = os.path.dirname(os.path.dirname(torch.__file__))
print(torch.__version__)
print(torch.version.cuda or "")
print(int(torch._C._GLIBCXX_USE_CXX11_ABI))
print(os.path.dirname(torch.__file__))
print(torch.utils.cmake_prefix_path)
print(os.path.join(site, "nvidia", "nccl"))
import glob
print((sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", "libcudart.so.*"))) + [""])[0])
EOF
) || fail "the torch in $venv does not import; remove $venv and run again"
{ read -r version; read -r torch_cuda; read -r cxx11_abi; read -r torch_dir; read -r cmake_prefix; read -r nccl; read -r cudart; } <<<"$info"
say "torch $version, CUDA ${torch_cuda:-none}, C++11 ABI $cxx11_abi"
[ -n "$torch_cuda" ] || fail "torch $version in $venv is a CPU-only build; this check needs the CUDA wheel (PyPI's default)"
# Debian's gtest, CLI11 and the rest use the C++11 ABI; a wheel without it
# (torch before 2.7) cannot link with them.
[ "$cxx11_abi" = 1 ] || fail "torch $version uses the pre-C++11 ABI (_GLIBCXX_USE_CXX11_ABI=0); Debian's GoogleTest and CLI11 use the new one, so the programs would not link"
[ -f "$nccl/include/nccl.h" ] || fail "no nccl.h in $nccl/include (the nvidia-nccl wheel); cannot build the NCCL transport"

# ---- 2. configure ----------------------------------------------------------
# The torch folder goes first in CMAKE_PREFIX_PATH: TorchConfig.cmake looks
# for Caffe2Config.cmake and libtorch.so with find_*(... PATHS), which search
# the system folders first and would find Debian's LibTorch 1.13.
# TORCH_CUDA_ARCH_LIST stops torch's CMake files from compiling and running a
# CUDA program to ask the GPUs of this machine (fails without one, and with
# CMake 3.25 fails anyway on C++20); no CUDA code of ours is compiled for it.
export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
log="$build/configure.log"
mkdir -p "$build"
if ! cmake --preset ci -B "$build" -DPIPEWRIGHT_BUILD_GUI=OFF -DPIPEWRIGHT_BUILD_BACKEND=ON \
        "-DCMAKE_PREFIX_PATH=$torch_dir;$cmake_prefix" "-DTorch_DIR=$cmake_prefix/Torch" \
        "-DNCCL_INCLUDE_DIR=$nccl/include" "-DNCCL_LIBRARY=$nccl/lib/libnccl.so.2" \
        "-DCUDAToolkit_ROOT=$cuda" "-DCMAKE_CUDA_COMPILER=$cuda/bin/nvcc" \
        ${cudart:+"-DCUDA_cudart_LIBRARY=$cudart"} >"$log" 2>&1; then
    cat "$log"
    fail "configuring $build against torch $version failed (above)"
fi
found=$(sed -n 's/^TORCH_LIBRARY:[A-Z]*=//p' "$build/CMakeCache.txt")
[ "$found" = "$torch_dir/lib/libtorch.so" ] ||
    fail "CMake picked ${found:-no libtorch.so}, not the wheel's $torch_dir/lib/libtorch.so; see $log"
grep -q "GPU runs with CUDA and NCCL" "$log" ||
    fail "CMake did not enable CUDA and NCCL: $(grep 'Pipewright:' "$log"); see $log"
phase "configuring"

# ---- 3. build every program and test suite --------------------------------
say "building $build (niced, -j2)"
nice -n 8 cmake --build "$build" -j2 || fail "building against torch $version failed (above)"
phase "building"

backend_program=$(find "$build" -name pipewright-backend -type f -perm -u+x | head -n 1)
[ -n "$backend_program" ] || fail "no pipewright-backend program in $build"
# The files the program loads, by their real paths. (Captured first: grep -q
# on a pipe would stop ldd or nm early, and pipefail would call that a failure.)
loads=$(ldd "$backend_program" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | xargs -r realpath)
for lib in "$torch_dir/lib/libtorch_cuda.so" "$torch_dir/lib/libc10_cuda.so" \
           "$nccl/lib/libnccl.so.2" ${cudart:+"$cudart"}; do
    grep -qxF "$(realpath "$lib")" <<<"$loads" ||
        fail "$backend_program does not load the wheel's $lib: it loads $(grep -F "$(basename "$lib" | cut -d. -f1)." <<<"$loads" || echo 'none')"
done
symbols=$(nm -C "$backend_program")
grep -q 'c10d::ProcessGroupNCCL::ProcessGroupNCCL' <<<"$symbols" ||
    fail "$backend_program has no NCCL transport compiled in"
say "$backend_program links torch $version's CUDA libraries and has the NCCL transport"

# ---- 4. the CPU tests of the backend and the command line -----------------
# No GPU here: torch::cuda::is_available() is false and every run uses CPU
# ranks, as on Debian's LibTorch.
status=0
[ -x "$build/tests/cli_tests" ] && [ -x "$build/tests/backend/backend_tests" ] ||
    fail "the test programs are missing from $build/tests"
# cli_tests runs in process (quick); the backend's, with real runs of
# several processes, go through ctest two at a time as in CI.
# torchrun's agent hosts the store; its protocol is this Torch's, not 1.13's.
export PIPEWRIGHT_TORCHRUN_PYTHON="$venv/bin/python"
say "running cli_tests"
(cd "$build/tests" && ./cli_tests --gtest_brief=1) || status=1
say "running backend_tests (ctest, two at a time)"
ctest --test-dir "$build/tests/backend" -j2 --timeout 600 --output-on-failure || status=1
phase "testing"
[ $status -eq 0 ] || fail "tests failed against torch $version (above)"

# Schedules Pipewright writes for torch (--csv-format) run in torch's own
# pipelining runtime; its stages exchange shapes as pickled objects, which
# needs numpy beside torch.
if ! "$venv/bin/python" -c "import numpy" 2>/dev/null; then
    say "installing numpy into $venv (torch's pipelining stages need it)"
    "$venv/bin/python" -m pip install --no-cache-dir --progress-bar off numpy ||
        fail "pip could not install numpy into $venv (its message is above)"
fi
cli_program=$(find "$build" -name pipewright -type f -perm -u+x | head -n 1)
[ -n "$cli_program" ] || fail "no pipewright program in $build"
say "handing Pipewright's schedules to torch's _PipelineScheduleRuntime"
"$venv/bin/python" -W ignore scripts/torch_handoff_check.py "$cli_program" ||
    fail "torch $version did not train as one process would with a schedule Pipewright wrote (above)"
phase "handing schedules to torch"
say "torch $version (CUDA $torch_cuda, NCCL): every program builds and links, and the backend's and the command line's tests pass"
