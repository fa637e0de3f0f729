#!/usr/bin/env bash
# Installs every Debian 12 package Pipewright needs to build, test and run.
# Idempotent: packages already present are skipped. Works as root or via sudo.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config git clang clang-format
  libclang-rt-14-dev
  # core, sim, cli
  nlohmann-json3-dev libcli11-dev
  # tests and benchmarks (python3-yaml: the launch-files tests read the
  # Kubernetes manifests back)
  libgtest-dev libgmock-dev libbenchmark-dev python3 python3-yaml
  # the Python module (`import pipewright`, python/) and its pytest suite
  # (tests/python); matplotlib for the example notebook's timeline plot
  # (examples/python, run by the tests); pandas stays optional
  python3-dev pybind11-dev python3-pytest python3-matplotlib
  # desktop studio
  qt6-base-dev qt6-svg-dev libqcustomplot-dev libqcustomplot2.1-qt6
  libgl-dev xvfb xauth
  # the fonts the studio draws with where no desktop chooses them (offscreen,
  # as docs/make-screenshots.sh and the test docs.screenshots run it): DejaVu
  # Sans for all text, Noto Sans Mono for the Run panel's log (fontconfig's
  # monospace once it is installed). Other packages pull them in, but by
  # chance: DejaVu through matplotlib and fontconfig, Noto through ghostscript.
  fonts-dejavu-core fonts-noto-mono
  # real execution (LibTorch with c10d; OpenBLAS so Torch does not fall back
  # to the reference BLAS, which is ~40x slower)
  libtorch-dev libgloo-dev libopenblas0-openmp
  # packages and their tests: cpack's dependency scan (dpkg-shlibdeps), the
  # desktop entry, AppStream and MIME checks (tests/packaging)
  dpkg-dev desktop-file-utils appstream shared-mime-info
  # the benchmark scripts of real runs (bench/run_throughput.sh, run_fidelity.sh)
  jq
  # the TorchScript files of the import tests (tests/torchscript/make_fixtures.py);
  # never a runtime dependency
  python3-torch python3-torchvision
)

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "setup-debian.sh: run as root or install sudo" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
