#!/usr/bin/env bash
# docs.screenshots: the documentation's pictures are what the studio makes
# now. Regenerates them all with docs/make-screenshots.sh into OUT_DIR (never
# docs/images) and compares them with docs/images
# (docs_screenshots_compare.cpp), so that drift fails a build instead of
# reaching a user.
#
#   docs_screenshots_test.sh SOURCE_DIR STUDIO COMPARE OUT_DIR
#
# OUT_DIR is emptied first and kept afterwards, so the fresh pictures (and,
# for a drifted one, NAME.diff.png with its differences in red) can be looked at.
set -euo pipefail

source_dir="$1"
studio="$2"
compare="$3"
out="$4"

rm -rf "$out"
mkdir -p "$out"

# --strict: a picture in docs/images that the script does not make fails.
# The comparison runs either way, so that every problem is said at once.
made=yes
if ! "$source_dir/docs/make-screenshots.sh" --out "$out" --strict "$studio"; then
  made=no
fi

# studio-run*.png show real runs on this machine's CPUs: their measured
# times, and so their lanes and tables, differ from run to run. They are
# compared by size only (the script has still made them, so --run and
# --profile work). Every other picture came out identical to the last pixel
# in three runs here; the threshold allows for another CPU's rounding in
# antialiasing, and 0.001 % is at most 16 stray pixels of a whole window.
echo
same=yes
if ! "$compare" --threshold 16 --tolerance 0.001 --size-only 'studio-run*.png' \
  "$source_dir/docs/images" "$out"; then
  same=no
fi

if [ "$made" = no ]; then
  echo "docs.screenshots: docs/make-screenshots.sh failed (its message is above)" >&2
fi
if [ "$same" = no ]; then
  cat >&2 <<MESSAGE

docs.screenshots: the pictures marked DRIFT above differ from what the studio
makes now (the fresh ones are in $out).
If the change is meant, regenerate them in docs/images:
  docs/make-screenshots.sh $studio
then look at each changed picture (git status docs/images) and commit them.
MESSAGE
fi
[ "$made" = yes ] && [ "$same" = yes ]
