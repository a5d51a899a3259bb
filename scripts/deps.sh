#!/usr/bin/env bash
# Checks the Debian packages trowel needs and installs the missing ones.
#   scripts/deps.sh build   compiler, CMake, libraries (what `make` needs)
#   scripts/deps.sh test    build + the peers the tests cross-check against, fuse3 (mount), python3-pil
#                           (PNG pixels) and valgrind (the README example test)
#   scripts/deps.sh ci      test + clang/libFuzzer (sanitizers, fuzzing)
#   scripts/deps.sh bench   test + hyperfine
# Installs with apt-get as root, or through sudo; says what to run otherwise.
set -euo pipefail

level=${1:-build}
build=(cmake make gcc pkg-config zlib1g-dev libjson-c-dev liblzma-dev libpng-dev libfuse3-dev)
test=(libmspack-dev mscompress xz-utils python3 python3-pil valgrind scummvm-tools fuse3)
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

installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

missing=()
for pkg in "${want[@]}"; do
  installed "$pkg" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

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
