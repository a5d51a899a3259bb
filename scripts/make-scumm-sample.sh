#!/usr/bin/env bash
# Writes a tiny hand-built SCUMM game, no game data in it: an index (.000)
# and a data file (.001) with one room (RMHD, a PALS palette of a grey
# ramp), one script and one stand-in costume block, laid out as v6 files
# are (scumm-res reads it; the costume bytes are not a drawable costume).
# Usage: scripts/make-scumm-sample.sh OUT-STEM [xor]
#   OUT-STEM.000 and OUT-STEM.001; "xor" XORs both with 0x69 (v5/v6 style).
set -euo pipefail
stem=$1
xor=${2:-}
# shellcheck disable=SC2059 # the formats below are byte escapes on purpose
bytes() { for v in "$@"; do printf "\\$(printf %03o "$v")"; done; }
be32() { bytes $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) $(($1 & 255)); }
le32() { bytes $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
le16() { bytes $(($1 & 255)) $(($1 >> 8 & 255)); }
# block TAG FILE: the tag, the big-endian size with the header, the contents.
block() { printf '%s' "$1"; be32 $(($(stat -c %s "$2") + 8)); cat "$2"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Data file: LECF(8) LOFF(8+1+5 = 14) at 8, LFLF at 22, ROOM at 30.
le16 320 >"$tmp/rmhd"; le16 200 >>"$tmp/rmhd"; le16 0 >>"$tmp/rmhd"
for i in $(seq 0 255); do bytes "$i" "$i" "$i"; done >"$tmp/apal.data"
le32 12 >"$tmp/offs.data" # from OFFS's data to APAL's data
{ block OFFS "$tmp/offs.data"; block APAL "$tmp/apal.data"; } >"$tmp/wrap.data"
block WRAP "$tmp/wrap.data" >"$tmp/pals.data"
{ block RMHD "$tmp/rmhd"; block PALS "$tmp/pals.data"; } >"$tmp/room.data"
printf 'print "hello"\n' >"$tmp/scrp.data"
{ le32 14; printf 'CO'; bytes 3 0x58; bytes 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; } >"$tmp/cost.data"
{ block ROOM "$tmp/room.data"; block SCRP "$tmp/scrp.data"; block COST "$tmp/cost.data"; } >"$tmp/lflf.data"
room_size=$(($(stat -c %s "$tmp/room.data") + 8))
scrp_size=$(($(stat -c %s "$tmp/scrp.data") + 8))
{ bytes 1 1; le32 30; } >"$tmp/loff.data"
{ block LOFF "$tmp/loff.data"; block LFLF "$tmp/lflf.data"; } >"$tmp/lecf.data"
block LECF "$tmp/lecf.data" >"$tmp/data"
# Index: directories of two numbers each (0 unused, 1 in room 1), offsets
# from the ROOM tag.
dir() { le16 2; bytes 0 "$1"; le32 0; le32 "$2"; }
bytes 0 >"$tmp/rnam"
dir 1 0 >"$tmp/droo"
dir 1 "$room_size" >"$tmp/dscr"
{ le16 0; } >"$tmp/dsou"
dir 1 $((room_size + scrp_size)) >"$tmp/dcos"
{ le16 0; } >"$tmp/dchr"
{ block RNAM "$tmp/rnam"; block DROO "$tmp/droo"; block DSCR "$tmp/dscr"; block DSOU "$tmp/dsou"
  block DCOS "$tmp/dcos"; block DCHR "$tmp/dchr"; } >"$tmp/index"
for f in index:000 data:001; do
  if [ "$xor" = xor ]; then
    perl -0777 -pe '$_ ^= chr(0x69) x length' "$tmp/${f%%:*}" >"$stem.${f#*:}"
  else
    cp "$tmp/${f%%:*}" "$stem.${f#*:}"
  fi
done
