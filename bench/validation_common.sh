# What the validation scripts (validate_*.sh) share: sourced, not run. Sets
# `here` (this folder), PIPEWRIGHT (the binary: $PIPEWRIGHT, else the release
# build, else `pipewright` on the PATH; the script stops when there is none)
# and OUT (the folder for the generated projects: $OUT, else a new one under
# /tmp named after $1), both as absolute paths.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ -z "${PIPEWRIGHT:-}" ]]; then
    if [[ -x "$here/../build/release/cli/pipewright" ]]; then
        PIPEWRIGHT="$here/../build/release/cli/pipewright"
    else
        PIPEWRIGHT=$(command -v pipewright || true)
    fi
fi
if [[ -z "$PIPEWRIGHT" || ! -x "$PIPEWRIGHT" ]]; then
    echo "$(basename "$0"): no pipewright binary (set PIPEWRIGHT)" >&2
    exit 2
fi
OUT=${OUT:-$(mktemp -d "/tmp/pipewright-$1.XXXXXX")}
mkdir -p "$OUT"
PIPEWRIGHT=$(realpath "$PIPEWRIGHT")
OUT=$(realpath "$OUT")
