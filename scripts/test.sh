#!/usr/bin/env bash
# Sets up the machine (Debian packages), builds with the `ci` preset and runs
# every test. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup-debian.sh
cmake --preset ci
cmake --build --preset ci
ctest --preset ci
