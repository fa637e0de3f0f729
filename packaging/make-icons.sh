#!/usr/bin/env bash
# Renders the hicolor PNG icons from the SVG source:
#   packaging/icons/hicolor/scalable/apps/pipewright-studio.svg
#   -> packaging/icons/hicolor/<N>x<N>/apps/pipewright-studio.png
# The PNGs are committed as source assets, so building and packaging need no
# SVG renderer; run this (needs rsvg-convert from librsvg2-bin) after editing
# the SVG and commit the result.
set -euo pipefail
cd "$(dirname "$0")/icons/hicolor"

if ! command -v rsvg-convert >/dev/null 2>&1; then
  echo "make-icons.sh: rsvg-convert not found (apt-get install librsvg2-bin)" >&2
  exit 1
fi

svg=scalable/apps/pipewright-studio.svg
for size in 16 22 24 32 48 64 128 256; do
  mkdir -p "${size}x${size}/apps"
  rsvg-convert --width "$size" --height "$size" --keep-aspect-ratio \
    --output "${size}x${size}/apps/pipewright-studio.png" "$svg"
  echo "make-icons.sh: ${size}x${size}/apps/pipewright-studio.png"
done
