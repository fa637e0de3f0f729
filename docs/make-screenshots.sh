#!/usr/bin/env bash
# Regenerates every picture in docs/images from the built studio, so that the
# documentation's screenshots stay reproducible.
#
#   docs/make-screenshots.sh [--out DIR] [--strict] [STUDIO]
#
# STUDIO is the pipewright-studio program (default: $STUDIO, else the first of
# build/release, build/ci, build/dev that has one). --out DIR writes the
# pictures to DIR instead of docs/images (the check `docs.screenshots`,
# tests/gui/docs_screenshots_test.sh, regenerates them there and compares
# them with docs/images). --strict makes a picture in docs/images that this
# script does not make an error rather than a warning. Runs without a display
# (Qt's offscreen platform) and needs nothing but the build (and, for
# studio-torchscript-resnet50.png, Debian's python3-torchvision). The Run
# panel pictures make short real runs on the CPUs; the whole script takes
# about 15 s on a two-core machine.
#
# Every picture is a 1600x1000 window (`pipewright-studio --screenshot`);
# the concept-* pictures are parts of it at fixed places (`--crop`): the
# view panel (timeline, metrics or comparison) or the model table and
# cluster canvas above it. If the window's layout changes, adjust the
# geometries below and look at every picture before committing it.
set -euo pipefail

caller="$PWD"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

usage="usage: $0 [--out DIR] [--strict] [path/to/pipewright-studio]   (or set STUDIO; build it first)"
images=docs/images
out=$images
strict=no
studio="${STUDIO:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --out)
      [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
      out="$2"
      # Relative to where the script was started from, not to the checkout.
      [[ "$out" = /* ]] || out="$caller/$out"
      shift 2
      ;;
    --strict)
      strict=yes
      shift
      ;;
    -*)
      echo "$usage" >&2
      exit 2
      ;;
    *)
      studio="$1"
      shift
      ;;
  esac
done
if [ -z "$studio" ]; then
  for candidate in build/release build/ci build/dev; do
    if [ -x "$candidate/gui/pipewright-studio" ]; then
      studio="$candidate/gui/pipewright-studio"
      break
    fi
  done
fi
if [ -z "$studio" ] || [ ! -x "$studio" ]; then
  echo "$usage" >&2
  exit 2
fi
studio="$(cd "$(dirname "$studio")" && pwd)/$(basename "$studio")"

export QT_QPA_PLATFORM=offscreen
mkdir -p "$out"
work="$(mktemp -d "${TMPDIR:-/tmp}/pipewright-shots.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The studio keeps runs and profiles of examples in its data folder, and its
# settings (device calibrations in use, recent files) in its configuration
# folder: fresh ones, so that the pictures do not depend on what this machine
# measured or chose before, and making them changes neither.
export XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config"
# The fonts the pictures are drawn with, whatever else this machine has (on
# one with Noto Sans, fontconfig would prefer it to DejaVu Sans): DejaVu Sans,
# and Noto Sans Mono (else DejaVu Sans Mono) for the Run panel's log;
# scripts/setup-debian.sh installs both. The system's configuration is kept
# for everything else (hinting, antialiasing).
cat >"$work/fonts.conf" <<'XML'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>
  <selectfont>
    <acceptfont>
      <pattern><patelt name="family"><string>DejaVu Sans</string></patelt></pattern>
      <pattern><patelt name="family"><string>Noto Sans Mono</string></patelt></pattern>
      <pattern><patelt name="family"><string>DejaVu Sans Mono</string></patelt></pattern>
    </acceptfont>
    <rejectfont><pattern></pattern></rejectfont>
  </selectfont>
</fontconfig>
XML
export FONTCONFIG_FILE="$work/fonts.conf"

size=1600x1000
# Parts of a 1600x1000 window: WIDTHxHEIGHT+LEFT+TOP.
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

# full NAME [studio options...] [PROJECT]: OUT/NAME.png, the whole window.
full() {
  local name="$1"
  shift
  shot "$out/$name.png" "$@"
  made+=("$name.png")
  echo "$out/$name.png"
}

# crop NAME GEOMETRY [studio options...] PROJECT: OUT/NAME.png, a part of the window.
crop() {
  local name="$1" geometry="$2"
  shift 2
  shot "$out/$name.png" --crop "$geometry" "$@"
  made+=("$name.png")
  echo "$out/$name.png"
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
  # Opened from the work folder, so that the status bar says "Opened
  # resnet50.json" and not the temporary folder's random name.
  (cd "$work" && shot "$(cd "$root" && cd "$out" && pwd)/studio-torchscript-resnet50.png" \
    resnet50.json)
  made+=(studio-torchscript-resnet50.png)
  echo "$out/studio-torchscript-resnet50.png"
else
  echo "make-screenshots: no pipewright or python3-torchvision; studio-torchscript-resnet50.png not made (docs/images keeps its copy)" >&2
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
  echo "make-screenshots: this studio has no --run; studio-run*.png not made (docs/images keeps its copies)" >&2
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
# unnoticed: name them (with --strict, fail).
unknown=0
for file in "$images"/*.png; do
  name="$(basename "$file")"
  known=no
  for m in "${made[@]}"; do
    [ "$m" = "$name" ] && known=yes
  done
  if [ "$known" = no ]; then
    echo "make-screenshots: $file is not made by this script; add it here" >&2
    unknown=$((unknown + 1))
  fi
done
if [ "$strict" = yes ] && [ "$unknown" -gt 0 ]; then
  echo "make-screenshots: $unknown picture(s) in $images not made by this script (--strict)" >&2
  exit 1
fi
