#!/usr/bin/env bash
# Checks the Debian packages trowel needs and installs the missing ones.
#   scripts/deps.sh build   compiler, CMake, libraries (what `make` needs)
#   scripts/deps.sh test    build + the peers the tests cross-check against, fuse3 (mount),
#                           python3-pil (PNG pixels), valgrind (the README example test),
#                           zsh and fish (completions), and node + npm with Khronos'
#                           gltf-validator (npm, into build/node) for .glb
#   scripts/deps.sh ci      test + clang/libFuzzer (sanitizers, fuzzing)
#   scripts/deps.sh bench   test + hyperfine
# Installs with apt-get as root, or through sudo; says what to run otherwise.
set -euo pipefail

level=${1:-build}
build=(cmake make gcc pkg-config zlib1g-dev libjson-c-dev liblzma-dev libpng-dev liblz4-dev libgif-dev libfuse3-dev libmicrohttpd-dev libjs-three)
test=(libmspack-dev mscompress xz-utils python3 python3-pil valgrind scummvm-tools lz4 zsh fish nodejs fuse3 chromium curl)
ci=(clang libclang-rt-dev)
bench=(hyperfine time)

want=("${build[@]}")
case "$level" in
  build) ;;
  test) want+=("${test[@]}") ;;
  ci) want+=("${test[@]}" "${ci[@]}") ;;
  bench) want+=("${test[@]}" "${bench[@]}") ;;
  *) echo "usage: $0 build|test|ci|bench" >&2; exit 2 ;;
esac

# A nodejs that bundles npm (NodeSource's) conflicts with Debian's npm package:
# ask for npm only when there is no npm command.
if [ "$level" != build ] && ! command -v npm >/dev/null 2>&1; then
  want+=(npm)
fi

installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

# npm libraries, installed (once) beside the build into build/node: Khronos'
# glTF validator (tests/tools/gltf_validate.js) and playwright-core, which
# drives Debian's chromium through the viewer's page (tests/tools/view_browser.js).
node_deps() {
  [ "$level" = build ] && return 0
  local dir=${TROWEL_NODE_DIR:-build/node} want=() pkg
  for pkg in gltf-validator playwright-core; do
    [ -f "$dir/node_modules/$pkg/package.json" ] || want+=("$pkg")
  done
  [ ${#want[@]} -eq 0 ] && return 0
  command -v npm >/dev/null 2>&1 || { echo "trowel: npm is missing" >&2; return 1; }
  echo "trowel: installing ${want[*]} (npm) into $dir" >&2
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund gltf-validator playwright-core >/dev/null
}

missing=()
for pkg in "${want[@]}"; do
  installed "$pkg" || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  node_deps
  exit 0
fi

echo "trowel: installing missing packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  run=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  run=(sudo)
else
  echo "trowel: need root to install: ${missing[*]}" >&2
  echo "trowel: run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# The package lists may be empty or stale on a fresh machine.
"${run[@]}" apt-get update -qq || true
if ! "${run[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  echo "trowel: apt-get could not install: ${missing[*]}" >&2
  exit 1
fi
node_deps
