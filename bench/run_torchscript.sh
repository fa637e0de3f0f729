#!/usr/bin/env bash
# Imported TorchScript models on this machine's CPUs (issue 16):
#   - how long `pipewright import` takes on torchvision's ResNet-50 (22
#     layers at --depth 1, each run once on an example batch);
#   - real runs of two imported models on two worker processes (1F1B, one
#     thread per rank) beside what `simulate --profile` predicts for them
#     and what the import's FLOP counts predict with the catalog's CPU:
#       * a small CNN with batch-norm (tests/torchscript/make_fixtures.py),
#       * the GPT of the same script, 6 blocks of width 128, 64 tokens.
# Files are written with Debian's python3-torch. The variants take turns,
# ROUNDS times; each run reports the median iteration after the warm-up,
# and the table shows the median over the rounds.
#
#   PIPEWRIGHT=build/ci/cli/pipewright ROUNDS=3 STEPS=20 bench/run_torchscript.sh
set -euo pipefail

rounds=${ROUNDS:-3}
steps=${STEPS:-20}
warmup=${WARMUP:-5}
python=${PYTHON:-/usr/bin/python3}

# shellcheck source=bench/run_common.sh
source "$(dirname "$0")/run_common.sh"

if ! "$python" -c "import torch, torchvision" 2> /dev/null; then
    echo "run_torchscript.sh: needs python3-torch and python3-torchvision ($python)" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
"$python" - "$work" "$here/tests/torchscript" << 'PY'
import sys, torch, torchvision
sys.path.insert(0, sys.argv[2])
import make_fixtures as f
out = sys.argv[1]
torch.manual_seed(0)
torch.jit.script(torchvision.models.resnet50()).save(out + "/resnet50.pt")
torch.jit.script(f.SmallCnn()).save(out + "/cnn.pt")
torch.jit.script(f.SmallGpt(vocabulary=512, context=64, width=128, heads=4, layers=6)).save(
    out + "/gpt.pt")
PY

imports=()
for round in $(seq 1 "$rounds"); do
    start=$(date +%s.%N)
    "$pipewright" import "$work/resnet50.pt" --input-shape 3,224,224 --depth 1 --devices 4 \
        --dry-run > /dev/null
    imports+=("$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')")
done
echo "import of ResNet-50 (22 layers, --depth 1): median $(echo "${imports[*]}" | median) s" \
    "over $rounds rounds"
echo

"$pipewright" import "$work/cnn.pt" --input-shape 3,32,32 --devices 2 -b 64 -m 4 \
    --out "$work/cnn.json" > /dev/null
"$pipewright" import "$work/gpt.pt" --input-shape 64 --input-dtype int64 --depth 1 \
    --devices 2 -b 16 -m 4 --out "$work/gpt.json" > /dev/null
variants=(cnn gpt)
for v in "${variants[@]}"; do
    "$pipewright" profile "$work/$v.json" --threads 1 --out "$work/$v-profile.json" \
        > /dev/null 2>&1
done
run_rounds

printf '| %-36s | %14s | %22s |\n' model "measured (ms)" "simulate --profile (ms)"
printf '|%s|%s|%s|\n' "--------------------------------------" "---------------:" \
    "-----------------------:"
for v in "${variants[@]}"; do
    t=$(echo "${times[$v]}" | median)
    sim=$("$pipewright" simulate "$work/$v.json" --profile "$work/$v-profile.json" --json |
        jq '.iteration_time_s')
    case $v in
        cnn) name="CNN 3x32x32, batch 64, 2 stages" ;;
        gpt) name="GPT 6 x 128, 64 tokens, batch 16" ;;
    esac
    awk -v n="$name" -v t="$t" -v s="$sim" 'BEGIN {
        printf "| %-36s | %14.1f | %22.1f |\n", n, t * 1000, s * 1000 }'
done
