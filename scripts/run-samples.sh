#!/usr/bin/env bash
# `make run`: makes sample files with trowel itself (and with Debian's
# mscompress when it is there, to show the two agree), then runs trowel's
# main job on them: formats, info, list, extract, verify, convert.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
trowel="$here/$build/trowel"
samples="$here/$build/samples"
rm -rf "$samples"
mkdir -p "$samples/src" "$samples/out"

show() { printf '\n$ %s\n' "$*" | sed "s|$here/||g"; "$@"; }

# Sources: the project's own text and a deterministic binary table.
cat "$here"/docs/*.md "$here"/src/core/*.c > "$samples/src/MANUAL.TXT"
LC_ALL=C awk 'BEGIN { srand(7); for (i = 0; i < 20000; i++)
  printf "%c", (i % 97 < 60) ? 65 + int(rand() * 4) : i % 256 }' > "$samples/src/TABLE.DAT"

show "$trowel" create -t szdd -o "$samples/MANUAL.TX_" -C "$samples/src" MANUAL.TXT
show "$trowel" create -t szdd -O variant=qbasic -o "$samples/TABLE.DA_" -C "$samples/src" TABLE.DAT
if command -v mscompress >/dev/null; then
  cp "$samples/src/TABLE.DAT" "$samples/peer.dat"
  (cd "$samples" && mscompress peer.dat && rm peer.dat)   # makes peer.dat_
fi

show "$trowel" formats
show "$trowel" info "$samples"/*_
show "$trowel" list -l "$samples/MANUAL.TX_"
show "$trowel" list --json "$samples/TABLE.DA_"
show "$trowel" verify "$samples"/*_
show "$trowel" extract -C "$samples/out" "$samples/MANUAL.TX_"
show "$trowel" extract -C "$samples/out" "$samples/TABLE.DA_"
show "$trowel" convert "$samples/MANUAL.TX_" --to json
if [ -f "$samples/peer.dat_" ]; then
  show "$trowel" extract -C "$samples/out/peer" "$samples/peer.dat_"
  cmp "$samples/out/peer/peer.dat" "$samples/src/TABLE.DAT"
fi
cmp "$samples/out/MANUAL.TXT" "$samples/src/MANUAL.TXT"
# A QBasic header records no missing character: the name comes back as TABLE.DA.
cmp "$samples/out/$("$trowel" list "$samples/TABLE.DA_")" "$samples/src/TABLE.DAT"
printf '\nsizes: MANUAL.TXT %s -> MANUAL.TX_ %s bytes' \
  "$(stat -c %s "$samples/src/MANUAL.TXT")" "$(stat -c %s "$samples/MANUAL.TX_")"
[ -f "$samples/peer.dat_" ] && printf ' (TABLE.DAT: trowel %s, mscompress %s)' \
  "$(stat -c %s "$samples/TABLE.DA_")" "$(stat -c %s "$samples/peer.dat_")"
printf '\nall samples extracted back to identical bytes (%s)\n' "${samples#$here/}"
