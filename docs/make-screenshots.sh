#!/usr/bin/env bash
# Regenerates every picture in docs/images from the built studio, so that the
# documentation's screenshots stay reproducible.
#
#   docs/make-screenshots.sh [STUDIO]
#
# STUDIO is the pipewright-studio program (default: $STUDIO, else the first of
# build/release, build/ci, build/dev that has one). Needs ImageMagick's
# `convert` (Debian: imagemagick) for the crops of the concept pictures. Runs
# without a display (Qt's offscreen platform). The Run panel pictures make
# short real runs on the CPUs, so the whole script takes a minute or two.
#
# Every picture is a 1600x1000 window (`pipewright-studio --screenshot`);
# the concept-* pictures are crops of it at fixed places: the view panel
# (timeline, metrics or comparison) or the model table and cluster canvas
# above it. If the window's layout changes, adjust the geometries below and
# look at every picture before committing it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

studio="${1:-${STUDIO:-}}"
if [ -z "$studio" ]; then
  for candidate in build/release build/ci build/dev; do
    if [ -x "$candidate/gui/pipewright-studio" ]; then
      studio="$candidate/gui/pipewright-studio"
      break
    fi
  done
fi
if [ -z "$studio" ] || [ ! -x "$studio" ]; then
  echo "usage: $0 [path/to/pipewright-studio]   (or set STUDIO; build it first)" >&2
  exit 2
fi
if ! command -v convert >/dev/null 2>&1; then
  echo "make-screenshots: ImageMagick's convert is needed for the crops (apt install imagemagick)" >&2
  exit 2
fi

export QT_QPA_PLATFORM=offscreen
images=docs/images
mkdir -p "$images"
work="$(mktemp -d "${TMPDIR:-/tmp}/pipewright-shots.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The studio keeps runs and profiles of examples in its data folder: a fresh
# one, so that the pictures do not depend on what this machine measured before.
export XDG_DATA_HOME="$work/data"

size=1600x1000
# Crops of a 1600x1000 window: WIDTHxHEIGHT+LEFT+TOP.
view_panel=1066x537+190+440   # the Timeline / Metrics / Comparison panel
design_area=1066x392+190+48   # the model table and the cluster canvas
canvas_area=418x392+838+48    # the cluster canvas alone

made=()

# shot OUT.png [studio options...] PROJECT: the whole window.
shot() {
  local out="$1"
  shift
  "$studio" --screenshot "$out" --size "$size" "$@" 2>"$work/studio.log" || {
    cat "$work/studio.log" >&2
    echo "make-screenshots: the studio failed on $*" >&2
    exit 1
  }
}

# full NAME [studio options...] [PROJECT]: docs/images/NAME.png, the whole window.
full() {
  local name="$1"
  shift
  shot "$images/$name.png" "$@"
  made+=("$name.png")
  echo "$images/$name.png"
}

# crop NAME GEOMETRY [studio options...] PROJECT: a part of the window.
crop() {
  local name="$1" geometry="$2"
  shift 2
  shot "$work/$name.png" "$@"
  convert "$work/$name.png" -crop "$geometry" +repage -strip "$images/$name.png"
  made+=("$name.png")
  echo "$images/$name.png"
}

ex=assets/examples
four=docs/examples/four-stages

# The studio tour (docs/studio.md, docs/getting-started.md and the README).
full studio-timeline
# Cluster scale: 98 devices on 13 nodes, one summary lane per node.
full studio-timeline-gpt3 "$ex/gpt3-175b-p4d.json"
# The cluster canvas at that scale: 13 nodes collapsed to load and memory.
crop studio-canvas-gpt3 "$canvas_area" "$ex/gpt3-175b-p4d.json"
full studio-metrics --tab metrics
full studio-comparison --tab comparison
# Cluster scale: the single device and zb-h1 do not fit in memory.
full studio-comparison-gpt3 --tab comparison "$ex/gpt3-175b-p4d.json"
# Data × pipeline layouts of the same cluster, each replica count planned.
full studio-layouts-gpt3 --tab layouts "$ex/gpt3-175b-p4d.json"
full studio-dark --dark "$ex/transformer-interleaved-4gpu.json"
# Tensor parallelism: each stage over 2 CPU workers, the groups' all-reduces
# as teal blocks on the communication rows.
full studio-tensor-parallel "$ex/gpt-tiny-t2p2-cpu.json"
# Bring your own model: torchvision's ResNet-50 exported with Debian's
# python3-torch and imported (docs/torchscript-import.md), on 4 A100s.
cli="$(dirname "$studio")/../cli/pipewright"
if [ -x "$cli" ] && /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  /usr/bin/python3 -c "import torch, torchvision; \
torch.jit.script(torchvision.models.resnet50()).save('$work/resnet50.pt')"
  "$cli" import "$work/resnet50.pt" --input-shape 3,224,224 --depth 1 --devices 4 \
    --device-spec A100-80GB --batch-size 64 --out "$work/resnet50.json" >/dev/null
  full studio-torchscript-resnet50 "$work/resnet50.json"
else
  echo "make-screenshots: no pipewright or python3-torchvision; studio-torchscript-resnet50.png left as it is" >&2
  made+=(studio-torchscript-resnet50.png)
fi
# The Run panel: a short real run first (needs a studio with --run and a
# `pipewright` built with the LibTorch backend next to it or on the PATH).
if "$studio" --help 2>/dev/null | grep -q -- '--run'; then
  full studio-run --tab run --run "$ex/mlp-cpu.json"
  full studio-run-timeline --run "$ex/mlp-cpu.json"
  # The same after Profile this machine: the simulation on measured costs.
  full studio-run-profiled --tab run --profile --run "$ex/mlp-cpu.json"
else
  echo "make-screenshots: this studio has no --run; studio-run*.png left as they are" >&2
  made+=(studio-run.png studio-run-timeline.png studio-run-profiled.png)
fi

# Concepts (docs/concepts.md).
crop concept-placement "$design_area" "$ex/seven-layers-two-nodes.json"
crop concept-naive "$view_panel" "$ex/resnet50-2gpu-naive.json"
crop concept-microbatches "$view_panel" "$ex/resnet50-2gpu-pipelined.json"
crop concept-gpipe "$view_panel" "$four-gpipe.json"
crop concept-1f1b "$view_panel" "$four-1f1b.json"
crop concept-interleaved "$view_panel" "$four-interleaved-1f1b.json"
crop concept-zb-h1 "$view_panel" "$four-zb-h1.json"
crop concept-zb-h2 "$view_panel" "$four-zb-h2.json"
crop concept-looped-bfs "$view_panel" "$four-looped-bfs.json"
crop concept-interleaved-zb "$view_panel" "$four-interleaved-zb.json"
crop concept-zbv "$view_panel" "$four-zbv.json"
crop concept-dualpipev "$view_panel" "$four-dualpipev.json"
crop concept-zb-auto "$view_panel" "$four-zb-auto.json"
crop concept-memory-gpipe "$view_panel" --tab metrics "$four-gpipe.json"
crop concept-memory-1f1b "$view_panel" --tab metrics "$four-1f1b.json"
crop concept-communication "$view_panel" "$ex/seven-layers-two-nodes.json"
crop concept-comparison "$view_panel" --tab comparison "$ex/resnet50-2gpu-pipelined.json"
# Data parallelism: two replicas of the ResNet-50 pipeline on four GPUs.
crop concept-data-parallel "$view_panel" "$ex/resnet50-4gpu-2x2.json"
# The canvas of a larger window, where the devices have room for their chips.
size=2200x1300 crop concept-data-parallel-canvas 520x275+1266+80 "$ex/resnet50-4gpu-2x2.json"

# Pictures in docs/images that this script does not make would go stale
# unnoticed: name them.
for file in "$images"/*.png; do
  name="$(basename "$file")"
  known=no
  for m in "${made[@]}"; do
    [ "$m" = "$name" ] && known=yes
  done
  if [ "$known" = no ]; then
    echo "make-screenshots: $file is not made by this script; add it here" >&2
  fi
done
