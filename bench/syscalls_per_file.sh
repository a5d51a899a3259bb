#!/usr/bin/env bash
# bench/syscalls_per_file.sh [BUILD_DIR [OTHER_BUILD_DIR]] [N]
#
# System calls per extracted file (issue 20), counted, not timed: strace -f
# -c of `trowel extract` of a scenes.image of N (default 5099) generated
# scenes into a fresh folder, then again with --force over that output;
# the total divided by N (the run's fixed calls, about 100, included),
# beside the same count for `cp -r` of the files and `cp -r` over them.
# With OTHER_BUILD_DIR (say a build of an earlier commit), its trowel is
# counted too and the outputs of both are compared byte for byte.
# Needs strace and python3.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
other=${2:-}
[ -z "$other" ] || other=$(cd "$other" && pwd)
n=${3:-5099}
corpus=${TROWEL_CORPUS:-$here/../shared/corpus}/valve
for tool in strace python3; do
    command -v "$tool" >/dev/null || { echo "syscalls_per_file: $tool is not installed" >&2; exit 2; }
done
[ -d "$corpus" ] || { echo "syscalls_per_file: no corpus at $corpus" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
python3 "$here/bench/gen_vsif_scenes.py" "$corpus" game "$n"
"$build/trowel" create -q -t vsif -o scenes.image -C game scenes

# per_file CMD...: total system calls of CMD (and its children) / n
per_file() {
    strace -f -c -o calls.txt "$@" >/dev/null 2>&1
    awk -v n="$n" '$NF == "total" { printf "%.2f", $4 / n }' calls.txt
}
count() { # NAME TROWEL
    local fresh over
    rm -rf "out.$1"
    fresh=$(per_file "$2" extract -q -C "out.$1" scenes.image)
    over=$(per_file "$2" extract -q --force -C "out.$1" scenes.image)
    printf '%-28s %8s %8s\n' "$1" "$fresh" "$over"
}
echo "system calls per file, $n files ($(du -sk game | cut -f1) KiB of text VCDs)"
printf '%-28s %8s %8s\n' "" fresh over
count trowel "$build/trowel"
if [ -n "$other" ]; then
    count "trowel (other build)" "$other/trowel"
    diff -r out.trowel "out.trowel (other build)" >/dev/null &&
        echo "outputs of the two builds: identical" || echo "outputs of the two builds: DIFFERENT"
fi
rm -rf cp.out
printf '%-28s %8s %8s\n' "cp -r" "$(per_file cp -r out.trowel cp.out)" \
    "$(per_file cp -r out.trowel/. cp.out/)"
