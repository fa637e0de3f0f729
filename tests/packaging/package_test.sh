#!/usr/bin/env bash
# Builds the packages with CPack into a temporary folder, unpacks them and
# checks that what a user installs works:
#   - `pipewright` (.deb): the unpacked command line prints its version,
#     simulates and validates every installed example, links neither Qt nor
#     LibTorch, and the package depends on neither;
#   - `pipewright-backend` (.deb, with the backend): depends on LibTorch and
#     the same `pipewright`; unpacked beside it, `pipewright run` trains, and
#     without it `pipewright run` says that the backend is not installed;
#   - `pipewright-studio` (.deb): depends on the same `pipewright` and on Qt
#     and QCustomPlot, not on LibTorch; ships the desktop entry, metainfo,
#     icons and MIME type, which validate; the unpacked studio starts on the
#     installed example (--screenshot, offscreen) with no project argument;
#   - the .tar.gz holds a relocatable tree whose programs run where unpacked.
# Needs no root and no network. Registered by tests/packaging/CMakeLists.txt:
#   ctest --preset ci -L packaging
#
# usage: package_test.sh BUILD_DIR SOURCE_DIR CPACK VERSION WITH_GUI WITH_BACKEND [MIME_PROBE]
set -euo pipefail

if [ $# -lt 6 ]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR CPACK VERSION WITH_GUI WITH_BACKEND [MIME_PROBE]" >&2
  exit 2
fi
build=$1 source=$2 cpack=$3 version=$4 with_gui=$5 with_backend=$6 mime_probe=${7:-}
deb_version="${version}-1"
default_example=resnet50-2gpu-pipelined.json

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pipewright-package-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

step() { echo "== $*"; }
fail() {
  echo "package_test: FAIL: $*" >&2
  exit 1
}
# expect_file ROOT PATH...: every PATH exists under ROOT.
expect_file() {
  local root=$1
  shift
  for path in "$@"; do
    [ -e "$root/$path" ] || fail "$path missing from $(basename "$root")"
  done
}
# field DEB NAME: one control field of a .deb.
field() { dpkg-deb --field "$1" "$2"; }
# needed BINARY: the shared libraries a program links directly.
needed() { readelf --dynamic "$1" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'; }
# png_size FILE: "WIDTHxHEIGHT" from the PNG header.
png_size() {
  [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || return 1
  local w h
  read -r w h < <(od -An -tu4 --endian=big -j16 -N8 "$1")
  echo "${w}x${h}"
}

step "cpack (generators: DEB, TGZ)"
if ! "$cpack" --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1; then
  cat "$tmp/cpack.log" >&2
  fail "cpack failed"
fi
arch=$(dpkg --print-architecture)
cli_deb="$tmp/out/pipewright_${deb_version}_${arch}.deb"
studio_deb="$tmp/out/pipewright-studio_${deb_version}_${arch}.deb"
backend_deb="$tmp/out/pipewright-backend_${deb_version}_${arch}.deb"
[ -f "$cli_deb" ] || fail "no $(basename "$cli_deb") in: $(ls "$tmp/out")"
if [ "$with_backend" = 1 ]; then
  [ -f "$backend_deb" ] || fail "no $(basename "$backend_deb") in: $(ls "$tmp/out")"
fi
if [ "$with_gui" = 1 ]; then
  [ -f "$studio_deb" ] || fail "no $(basename "$studio_deb") in: $(ls "$tmp/out")"
fi

# ---------------------------------------------------------------------------
step "pipewright: control fields"
dpkg-deb --info "$cli_deb"
[ "$(field "$cli_deb" Package)" = pipewright ] || fail "cli package name"
[ "$(field "$cli_deb" Version)" = "$deb_version" ] || fail "cli version"
cli_depends=$(field "$cli_deb" Depends)
[[ $cli_depends == *libstdc++6* ]] || fail "pipewright Depends lacks libstdc++6: $cli_depends"
if [[ $cli_depends =~ libqt6|qcustomplot|libtorch ]]; then
  fail "pipewright (the command line) must depend on neither Qt nor LibTorch: $cli_depends"
fi
for f in Maintainer Description Section Homepage; do
  [ -n "$(field "$cli_deb" "$f")" ] || fail "pipewright has no $f field"
done

step "pipewright: unpacked program"
dpkg-deb -x "$cli_deb" "$tmp/cli"
cli="$tmp/cli/usr/bin/pipewright"
expect_file "$tmp/cli" usr/bin/pipewright "usr/share/pipewright/examples/$default_example" \
  usr/share/doc/pipewright/README.md usr/share/doc/pipewright/docs/architecture.md
if [ -f "$source/docs/man/pipewright.1" ]; then
  expect_file "$tmp/cli" usr/share/man/man1/pipewright.1.gz
  zcat "$tmp/cli/usr/share/man/man1/pipewright.1.gz" >"$tmp/pipewright.1"
  grep -q '^\.TH PIPEWRIGHT 1' "$tmp/pipewright.1" || fail "the installed man page is not pipewright(1)"
fi
[ ! -e "$tmp/cli/usr/bin/pipewright-studio" ] || fail "the studio is in the cli package"
if needed "$cli" | grep -E '^libQt|qcustomplot|^libtorch|^libc10'; then
  fail "the unpacked pipewright links Qt or LibTorch"
fi
"$cli" --version | tee "$tmp/version.txt"
grep -qF "$version" "$tmp/version.txt" || fail "pipewright --version does not say $version"
"$cli" simulate "$tmp/cli/usr/share/pipewright/examples/$default_example" | tee "$tmp/simulate.txt"
grep -q '^Iteration' "$tmp/simulate.txt" || fail "simulate printed no iteration time"
# Without the backend package, `run` says what is missing.
if "$cli" run "$tmp/cli/usr/share/pipewright/examples/mlp-cpu.json" >"$tmp/run-none.txt" 2>&1; then
  fail "pipewright run succeeded without the backend package"
fi
grep -q 'Install the pipewright-backend package' "$tmp/run-none.txt" ||
  { cat "$tmp/run-none.txt" >&2; fail "pipewright run without the backend did not say what to install"; }
# ---------------------------------------------------------------------------
if [ "$with_backend" = 1 ]; then
  step "pipewright-backend: control fields"
  dpkg-deb --info "$backend_deb"
  [ "$(field "$backend_deb" Package)" = pipewright-backend ] || fail "backend package name"
  backend_depends=$(field "$backend_deb" Depends)
  for dep in "pipewright (= $deb_version)" libtorch1.13; do
    [[ $backend_depends == *"$dep"* ]] || fail "pipewright-backend Depends lacks $dep: $backend_depends"
  done
  [[ $backend_depends != *libqt6* ]] || fail "the backend must not depend on Qt: $backend_depends"
  [[ "$(field "$cli_deb" Recommends)" == *pipewright-backend* ]] ||
    fail "pipewright does not recommend pipewright-backend"

  step "pipewright-backend: a real run from the unpacked packages"
  dpkg-deb -x "$backend_deb" "$tmp/cli"
  expect_file "$tmp/cli" usr/libexec/pipewright/pipewright-backend
  # A real (tiny) training run: the front end hands over to the backend,
  # which re-executes itself for each rank.
  "$cli" run "$tmp/cli/usr/share/pipewright/examples/mlp-cpu.json" --steps 2 --warmup 0 \
    --out "$tmp/run" >"$tmp/run.txt" 2>&1 || { cat "$tmp/run.txt" >&2; fail "pipewright run failed"; }
  [ -s "$tmp/run/timeline.json" ] || fail "pipewright run wrote no measured timeline"
fi

# Every installed example is a valid project (none left out or half copied).
for example in "$tmp"/cli/usr/share/pipewright/examples/*.json; do
  "$cli" validate "$example" >"$tmp/validate.txt" 2>&1 ||
    { cat "$tmp/validate.txt" >&2; fail "installed example $(basename "$example") does not validate"; }
done

# ---------------------------------------------------------------------------
if [ "$with_gui" = 1 ]; then
  step "pipewright-studio: control fields"
  dpkg-deb --info "$studio_deb"
  [ "$(field "$studio_deb" Package)" = pipewright-studio ] || fail "studio package name"
  studio_depends=$(field "$studio_deb" Depends)
  for dep in "pipewright (= $deb_version)" libqt6widgets6 libqt6gui6 libqt6core6 libqt6svg6 \
    libqcustomplot2.1-qt6; do
    [[ $studio_depends == *"$dep"* ]] || fail "pipewright-studio Depends lacks $dep: $studio_depends"
  done
  [[ $studio_depends != *libtorch* ]] || fail "the studio must not depend on LibTorch: $studio_depends"

  step "pipewright-studio: files"
  dpkg-deb -x "$studio_deb" "$tmp/studio"
  share=usr/share
  expect_file "$tmp/studio" usr/bin/pipewright-studio \
    "$share/applications/pipewright-studio.desktop" \
    "$share/metainfo/io.github.pipewright.Studio.metainfo.xml" \
    "$share/icons/hicolor/scalable/apps/pipewright-studio.svg" \
    "$share/mime/packages/pipewright.xml"
  for size in 16 22 24 32 48 64 128 256; do
    icon="$tmp/studio/$share/icons/hicolor/${size}x${size}/apps/pipewright-studio.png"
    [ -f "$icon" ] || fail "no ${size}x${size} icon"
    [ "$(png_size "$icon")" = "${size}x${size}" ] || fail "icon ${size}x${size} is $(png_size "$icon")"
  done
  [ ! -e "$tmp/studio/$share/pipewright/examples" ] || fail "examples belong to the cli package"
  if needed "$tmp/studio/usr/bin/pipewright-studio" | grep -E '^libtorch|^libc10'; then
    fail "the studio links LibTorch"
  fi

  step "pipewright-studio: desktop entry, metainfo and MIME type"
  desktop="$tmp/studio/$share/applications/pipewright-studio.desktop"
  desktop-file-validate "$desktop"
  grep -qx 'MimeType=application/x-pipewright-project;' "$desktop" || fail "desktop entry MimeType"
  grep -q '^Exec=pipewright-studio %f$' "$desktop" || fail "desktop entry Exec"
  # validate-tree also checks that the launchable desktop entry is installed.
  appstreamcli validate-tree --no-net --strict "$tmp/studio"
  grep -q "<release version=\"$version\"" "$tmp/studio/$share/metainfo/io.github.pipewright.Studio.metainfo.xml" ||
    fail "metainfo: the newest <release> is not $version (the project version)"

  # Both packages unpacked together, as apt installs them.
  dpkg-deb -x "$cli_deb" "$tmp/root"
  dpkg-deb -x "$studio_deb" "$tmp/root"
  # What the shared-mime-info trigger runs after installing; fails on bad XML.
  mime_log=$(XDG_DATA_DIRS="$tmp/root/$share:/usr/share" update-mime-database "$tmp/root/$share/mime" 2>&1) ||
    fail "update-mime-database: $mime_log"
  [ -z "$mime_log" ] || fail "update-mime-database complained: $mime_log"
  [ -f "$tmp/root/$share/mime/application/x-pipewright-project.xml" ] ||
    fail "update-mime-database did not register application/x-pipewright-project"
  if [ -n "$mime_probe" ]; then
    mkdir -p "$tmp/files"
    cp "$tmp/root/$share/pipewright/examples/$default_example" "$tmp/files/by-name.pipewright.json"
    cp "$tmp/root/$share/pipewright/examples/$default_example" "$tmp/files/by-content"
    cp "$source/assets/devices.json" "$tmp/files/device-catalog"
    types=$(XDG_DATA_DIRS="$tmp/root/$share:/usr/share" "$mime_probe" \
      "$tmp/files/by-name.pipewright.json" "$tmp/files/by-content" "$tmp/files/device-catalog")
    echo "$types"
    [ "$(echo "$types" | sed -n 1p)" = application/x-pipewright-project ] || fail "*.pipewright.json not a project"
    [ "$(echo "$types" | sed -n 2p)" = application/x-pipewright-project ] || fail "project not found by content"
    [ "$(echo "$types" | sed -n 3p)" != application/x-pipewright-project ] || fail "device catalog taken for a project"
  fi

  step "pipewright-studio: starts on the installed example"
  # A private home and data folders, so that neither the user's settings nor
  # a system-wide install can stand in for the unpacked tree.
  mkdir -p "$tmp/home" "$tmp/runtime"
  chmod 700 "$tmp/runtime"
  export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_DATA_HOME="$tmp/home/.local/share"
  export XDG_RUNTIME_DIR="$tmp/runtime"
  export XDG_DATA_DIRS="$tmp/root/$share" QT_QPA_PLATFORM=offscreen
  studio="$tmp/root/usr/bin/pipewright-studio"
  "$studio" --screenshot "$tmp/shot.png"
  png_size "$tmp/shot.png" >/dev/null || fail "the screenshot is not a PNG"
  # The control: spoil the installed default example. The studio must now
  # fail on that very file, proving that it opened the unpacked copy and not
  # the source tree's (which the build also knows).
  installed_example="$tmp/root/$share/pipewright/examples/$default_example"
  echo '{ not json' >"$installed_example"
  if "$studio" --screenshot "$tmp/shot2.png" 2>"$tmp/studio.err"; then
    fail "the studio did not read its installed example (it opened another copy)"
  fi
  cat "$tmp/studio.err"
  grep -qF "cannot open $installed_example" "$tmp/studio.err" ||
    fail "the studio failed for another reason than the spoiled installed example"
fi

# ---------------------------------------------------------------------------
step "tar.gz: relocatable tree"
tarballs=("$tmp"/out/pipewright-"$version"-*.tar.gz)
[ -f "${tarballs[0]}" ] || fail "no .tar.gz in: $(ls "$tmp/out")"
mkdir "$tmp/tgz"
tar -xzf "${tarballs[0]}" -C "$tmp/tgz"
tree=$(echo "$tmp"/tgz/*)
expect_file "$tree" bin/pipewright "share/pipewright/examples/$default_example" share/doc/pipewright/README.md
if [ "$with_backend" = 1 ]; then
  expect_file "$tree" libexec/pipewright/pipewright-backend
fi
"$tree/bin/pipewright" simulate "$tree/share/pipewright/examples/$default_example" >/dev/null
if [ "$with_gui" = 1 ]; then
  expect_file "$tree" bin/pipewright-studio share/applications/pipewright-studio.desktop
  QT_QPA_PLATFORM=offscreen "$tree/bin/pipewright-studio" --screenshot "$tmp/shot3.png"
  png_size "$tmp/shot3.png" >/dev/null || fail "the studio from the .tar.gz made no screenshot"
fi

echo "package_test: all checks passed"
