#!/usr/bin/env bash
# `make run`: shows every format family trowel supports, on sample files this
# script makes itself (with trowel's own writers, and from bytes written here
# the way tests/cli builds its fixtures), then prints what it made and where.
#   SZDD          create (normal, QBasic), info, list, verify, extract, JSON;
#                 Debian's mscompress as a peer when installed
#   Valve         VCD scenes -> scenes.image; list (names from the sources),
#                 decompile, merge an edited and a new scene into it, verify
#   Cinematique   assets (font, animation, mask, sprite set, background,
#                 sample, script, savegame) -> PNG/WAV/JSON; packed into part
#                 files and a VOL.CNF that scummvm-tools' extract_cine reads
#                 back when installed
#   Trespasser    a generated height map -> WTD terrain -> PNG/OBJ/GLB (the
#                 quad tree's mesh too) and a shaded preview, and
#                 back to the same WTD bits; an SPZ page file round trip
#                 a GROFF scene made, listed, rebuilt from extract --manifest;
#                 a GRF world (tests/tools/make_grf.py) to JSON, OBJ, GLB
#   SCUMM         a tiny hand-built game (scripts/make-scumm-sample.sh, XORed
#                 like v5/v6): info shows the xor69 filter, list, verify,
#                 extract from the index with the data file found beside it
#   Volition      VPP packfiles built from generated files: v3 raw, the
#                 RFG .str2_pc mode (compressed+condensed), SR4's v10, v17
#                 LZ4; info, list, verify, extract, manifest rebuild, edit;
#                 ASM: a shipped RFG .asm_pc to JSON and back byte for byte,
#                 a container updated by building its str2 (-O asm=)
# Every step checks its result; the script stops at the first failure.
# Usage: scripts/run-samples.sh [BUILD-DIR] (default build; samples go to
# BUILD-DIR/samples, or to $TROWEL_SAMPLES when set: tests/cli uses that).
set -euo pipefail
trap 'echo "make run: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$here/$build" ;; esac
trowel="$build/trowel"
samples=${TROWEL_SAMPLES:-$build/samples}
rm -rf "$samples"
mkdir -p "$samples"
cd "$samples"

show() { printf '\n$ %s\n' "$*" | sed "s|$build/||g; s|$here/||g"; "$@"; }
section() { printf '\n==== %s\n' "$*"; }
# made FILE... : remembers outputs for the summary at the end.
summary=()
made() { for f in "$@"; do summary+=("$f"); done; }
zeros() { head -c "$1" /dev/zero; }
# repeat N BYTES: the printf escapes in BYTES, N times.
# shellcheck disable=SC2059 # BYTES is a format of escapes on purpose
repeat() { local i; for ((i = 0; i < $1; i++)); do printf "$2"; done; }

# ---------------------------------------------------------------- SZDD
section "Trespasser / MS COMPRESS: SZDD"
mkdir -p szdd/src szdd/out
cat "$here"/docs/*.md "$here"/src/core/*.c >szdd/src/MANUAL.TXT
LC_ALL=C awk 'BEGIN { srand(7); for (i = 0; i < 20000; i++)
  printf "%c", (i % 97 < 60) ? 65 + int(rand() * 4) : i % 256 }' >szdd/src/TABLE.DAT
show "$trowel" formats --ids
show "$trowel" create -t szdd -o szdd/MANUAL.TX_ -C szdd/src MANUAL.TXT
show "$trowel" create -t szdd -O variant=qbasic -o szdd/TABLE.DA_ -C szdd/src TABLE.DAT
if command -v mscompress >/dev/null; then
  cp szdd/src/TABLE.DAT szdd/peer.dat
  (cd szdd && mscompress peer.dat && rm peer.dat) # makes peer.dat_
fi
show "$trowel" info szdd/*_
show "$trowel" list -l szdd/MANUAL.TX_
show "$trowel" verify szdd/*_
show "$trowel" extract -C szdd/out szdd/MANUAL.TX_
show "$trowel" extract -C szdd/out szdd/TABLE.DA_
show "$trowel" convert szdd/MANUAL.TX_ -o szdd/MANUAL.json
cmp szdd/out/MANUAL.TXT szdd/src/MANUAL.TXT
# A QBasic header records no missing character: the name comes back as TABLE.DA.
cmp "szdd/out/$("$trowel" list szdd/TABLE.DA_)" szdd/src/TABLE.DAT
if [ -f szdd/peer.dat_ ]; then
  show "$trowel" extract -C szdd/out/peer szdd/peer.dat_
  cmp szdd/out/peer/peer.dat szdd/src/TABLE.DAT
  made szdd/peer.dat_
fi
made szdd/MANUAL.TX_ szdd/TABLE.DA_ szdd/MANUAL.json szdd/out/MANUAL.TXT

# --------------------------------------------------------------- Valve
section "Valve Source: choreography scenes and scenes.image"
mkdir -p valve/game/scenes/chapter1 valve/edit/scenes/chapter1
# scene ACTOR SOUND START END: a text VCD with one speak event.
scene() {
  cat <<EOF
// Choreo version 1
actor "$1"
{
  channel "audio"
  {
    event speak "$2"
    {
      time $3 $4
      param "$2"
      fixedlength
      cctype "cc_master"
      cctoken ""
    }
  }
}
fps 60
snap off
EOF
}
scene Alyx alyx.hello 0.500000 2.250000 >valve/game/scenes/intro.vcd
scene Barney barney.gotcha 0.000000 1.500000 >valve/game/scenes/chapter1/gate.vcd
scene Kleiner kleiner.welcome 1.000000 4.000000 >valve/game/scenes/chapter1/lab.vcd
show "$trowel" info valve/game/scenes/intro.vcd
show "$trowel" convert valve/game/scenes/intro.vcd -o valve/intro.bvcd
show "$trowel" convert valve/intro.bvcd --to json-full -o valve/intro.json
show "$trowel" create -t vsif -o valve/scenes.image -C valve/game scenes
show "$trowel" info valve/scenes.image
show "$trowel" list -l valve/scenes.image
show "$trowel" list -l --names valve/game valve/scenes.image
show "$trowel" extract --names valve/game -C valve/decompiled valve/scenes.image
[ -f valve/decompiled/scenes/chapter1/lab.vcd ]
# Merge: one scene edited (a longer line), one new, the rest kept from the base.
scene Kleiner kleiner.welcome_long 1.000000 6.500000 >valve/edit/scenes/chapter1/lab.vcd
scene Alyx alyx.bye 0.000000 1.250000 >valve/edit/scenes/outro.vcd
show "$trowel" create -t vsif -O base=valve/scenes.image -o valve/merged.image -C valve/edit scenes
# --names takes a folder of sources or a list of names, one a line.
printf 'scenes/%s\n' intro.vcd outro.vcd chapter1/gate.vcd chapter1/lab.vcd >valve/names.txt
show "$trowel" list -l --names valve/names.txt valve/merged.image
show "$trowel" verify valve/merged.image
show "$trowel" extract --names valve/names.txt -C valve/merged valve/merged.image
grep -q kleiner.welcome_long valve/merged/scenes/chapter1/lab.vcd
show "$trowel" convert valve/merged.image -o valve/merged.json
made valve/intro.bvcd valve/intro.json valve/scenes.image valve/decompiled/scenes \
  valve/merged.image valve/merged/scenes valve/merged.json

# --------------------------------------------------------- Cinematique
section "Delphine Cinematique: assets to PNG, WAV and JSON"
mkdir -p cine/assets cine/png cine/wav cine/json
cd cine/assets
# TEXTE.DAT: 78 glyphs of 16 x 8 (64 bytes each: four planes of 2 bytes a row);
# every glyph a box of colour 1..15 with a dot in colour 15.
{
  printf '\x00\x08\x02\x70'
  for ((g = 0; g < 78; g++)); do
    c=$((g % 15 + 1))
    for ((row = 0; row < 8; row++)); do
      for ((plane = 0; plane < 4; plane++)); do
        if (((c >> plane) & 1)); then
          if ((row == 0 || row == 7)); then printf '\xff\xfe'; else printf '\x80\x02'; fi
        elif ((row == 3)); then printf '\x10\x00'
        else printf '\x00\x00'; fi
      done
    done
  done
} >TEXTE.DAT
# WALK.ANI: 16 x 4 pixels, 3 frames (a bar moving down a row each frame).
{
  printf 'ANIM\x00\x08\x00\x04\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00'
  for f in 0 1 2; do
    for row in 0 1 2 3; do
      if [ "$row" = "$f" ]; then printf '\xff\xff\x00\x00\xff\xff\x00\x00'; else zeros 8; fi
    done
  done
} >WALK.ANI
# DOOR.MSK: 16 x 4 pixels, 1 frame, a frame of set bits.
{ printf 'MASK\x00\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00'
  printf '\xff\xff\x80\x01\x80\x01\xff\xff'; } >DOOR.MSK
# ROBOT.SET: one four-plane frame of 16 x 1 pixels.
{ printf 'SET\x00\x00\x01\x00\x00\x00\x00\x00\x08\x00\x01\x00\x04\x00\x00\x00\x00\x00\x00'
  printf '\xf0\x0f\xcc\x33\xaa\x55\xff\x00'; } >ROBOT.SET
# ROOM.PI1: an Atari ST low-resolution picture, 16 colours in stripes.
{
  printf '\x00\x00'
  printf '\x00\x00\x07\x00\x07\x70\x00\x70\x00\x77\x00\x07\x07\x07\x07\x77'
  printf '\x03\x00\x03\x30\x00\x30\x00\x33\x00\x03\x03\x03\x04\x44\x02\x22'
  repeat 4000 '\xff\x00\x0f\xf0\x33\xcc\x55\xaa'
} >ROOM.PI1
# BOOM.AMI: a short signed 8-bit decaying square wave.
for ((i = 0; i < 64; i++)); do
  a=$((100 - i)); printf "\\x$(printf %02x "$a")%.0s" 1 2 3 4
  printf "\\x$(printf %02x $((256 - a)))%.0s" 1 2 3 4
done >BOOM.AMI
# AUTO00.PRC: two scripts of 3 and 1 bytes.
printf '\x00\x02\x00\x03\x00\x01\xaa\xbb\xcc\xdd' >AUTO00.PRC
# FW.SAV: a Future Wars savegame (part PART01, 30-byte animation entries).
{
  printf '\x00\x01PART01'; zeros $((0x5F - 8))
  printf '\x00\xff\x00\x20'; zeros $((0x2315 - 0x63))
  zeros $((255 * 30 + 12)); printf '\x00\x00\x00\x00'
} >FW.SAV
cd "$samples"
for f in TEXTE.DAT WALK.ANI DOOR.MSK ROBOT.SET ROOM.PI1 BOOM.AMI AUTO00.PRC FW.SAV; do
  show "$trowel" info "cine/assets/$f"
done
show "$trowel" convert cine/assets/TEXTE.DAT -o cine/png/font.png
show "$trowel" convert cine/assets/TEXTE.DAT --to glyphmap -o cine/json/font-glyphs.json
show "$trowel" convert cine/assets/WALK.ANI -o cine/png/walk.png
show "$trowel" convert cine/assets/WALK.ANI -O frame=1 -o cine/png/walk-frame1.png
show "$trowel" convert cine/assets/DOOR.MSK -o cine/png/door.png
show "$trowel" convert cine/assets/ROBOT.SET -o cine/png/robot.png
show "$trowel" convert cine/assets/ROOM.PI1 -o cine/png/room.png
show "$trowel" convert cine/assets/BOOM.AMI -O rate=11025 -o cine/wav/boom.wav
show "$trowel" convert cine/assets/AUTO00.PRC -o cine/json/auto00.json
show "$trowel" convert cine/assets/FW.SAV --to savejson -o cine/json/fw-save.json
show "$trowel" create -t cine-save -o cine/FW-again.SAV cine/json/fw-save.json
cmp cine/FW-again.SAV cine/assets/FW.SAV
for f in cine/png/*.png; do [ "$(head -c 4 "$f" | tail -c 3)" = PNG ]; done
[ "$(head -c 4 cine/wav/boom.wav)" = RIFF ]
made cine/png/*.png cine/wav/boom.wav cine/json/*.json

section "Delphine Cinematique: part files, VOL.CNF, and extract_cine"
mkdir -p cine/vol
show "$trowel" create -t cine-part -o cine/vol/PART01 -C cine/assets TEXTE.DAT WALK.ANI \
  DOOR.MSK ROBOT.SET ROOM.PI1 AUTO00.PRC
show "$trowel" create -t cine-part -o cine/vol/SOUNDS -C cine/assets BOOM.AMI FW.SAV
show "$trowel" list -l cine/vol/PART01
show "$trowel" verify cine/vol/PART01 cine/vol/SOUNDS
show "$trowel" create -t cine-volcnf -o cine/vol/VOL.CNF -C cine/vol PART01 SOUNDS
show "$trowel" list -l cine/vol/VOL.CNF
show "$trowel" extract -C cine/unpacked cine/vol/VOL.CNF
cmp cine/unpacked/PART01/ROOM.PI1 cine/assets/ROOM.PI1
cmp cine/unpacked/SOUNDS/BOOM.AMI cine/assets/BOOM.AMI
made cine/vol/PART01 cine/vol/SOUNDS cine/vol/VOL.CNF cine/unpacked

extract_cine=$(command -v scummvm-tools-cli || true)
[ -z "$extract_cine" ] && [ -x /usr/games/scummvm-tools-cli ] && extract_cine=/usr/games/scummvm-tools-cli
peer_note="scummvm-tools not installed: extract_cine did not check the part files"
if [ -n "$extract_cine" ]; then
  # extract_cine reads a part file, or VOL.CNF (by that name) with the volumes
  # in the current folder.
  mkdir -p cine/extract_cine/part cine/extract_cine/vol
  printf '\n$ scummvm-tools-cli --tool extract_cine -o cine/extract_cine/part cine/vol/PART01\n'
  "$extract_cine" --tool extract_cine -o cine/extract_cine/part cine/vol/PART01 \
    >cine/extract_cine/part.log 2>&1
  printf '%s entries unpacked, ok\n' "$(grep -c '^ok' cine/extract_cine/part.log)"
  [ "$(grep -c '^ok' cine/extract_cine/part.log)" = 6 ]
  printf '\n$ (cd cine/vol && scummvm-tools-cli --tool extract_cine -o ../extract_cine/vol VOL.CNF)\n'
  (cd cine/vol && "$extract_cine" --tool extract_cine -o ../extract_cine/vol VOL.CNF) \
    >cine/extract_cine/vol.log 2>&1
  printf '%s entries unpacked, ok\n' "$(grep -c '^ok' cine/extract_cine/vol.log)"
  [ "$(grep -c '^ok' cine/extract_cine/vol.log)" = 8 ]
  if grep -i 'error' cine/extract_cine/part.log cine/extract_cine/vol.log; then
    echo "make run: extract_cine reported an error" >&2
    exit 1
  fi
  for f in TEXTE.DAT WALK.ANI DOOR.MSK ROBOT.SET ROOM.PI1 AUTO00.PRC; do
    cmp "cine/extract_cine/part/$f" "cine/assets/$f"
    cmp "cine/extract_cine/vol/$f" "cine/assets/$f"
  done
  cmp cine/extract_cine/vol/BOOM.AMI cine/assets/BOOM.AMI
  cmp cine/extract_cine/vol/FW.SAV cine/assets/FW.SAV
  peer_note="extract_cine ($extract_cine) read PART01 and VOL.CNF back: every file identical"
  made cine/extract_cine
fi

# ------------------------------------------------------- Trespasser
section "Trespasser: WTD wavelet terrain and SPZ page files"
mkdir -p tres/out
# A 100 x 60 height map made here (two hills and a valley), 8 bits a sample.
LC_ALL=C awk 'BEGIN { for (y = 0; y < 60; y++) for (x = 0; x < 100; x++) {
  h = 90 + 60 * exp(-((x - 30) ^ 2 + (y - 25) ^ 2) / 300) + 80 * exp(-((x - 75) ^ 2 + (y - 40) ^ 2) / 200) - 40 * exp(-((y - 50) ^ 2) / 30)
  printf "%c", int(h) } }' >tres/hills.raw
show "$trowel" create -t tres-wtd -O width=100 -O height=60 -O scale=0.25 -o tres/hills.wtd tres/hills.raw
show "$trowel" info tres/hills.wtd
show "$trowel" verify tres/hills.wtd
show "$trowel" convert tres/hills.wtd --to png -O width=100 -O height=60 -o tres/out/hills.png
show "$trowel" convert tres/hills.wtd --to png -o tres/out/hills-extent.png
show "$trowel" convert tres/hills.wtd --to obj -O width=100 -O height=60 -o tres/out/hills.obj
show "$trowel" convert tres/hills.wtd --to glb -O width=100 -O height=60 -o tres/out/hills.glb
show "$trowel" convert tres/hills.wtd --to glb -o tres/out/hills-tree.glb
show "$trowel" convert tres/hills.wtd --to png -O shade=1 -o tres/out/hills-shaded.png
# The decoded extent encodes back to the very same file (the transform is
# lossless on integers, and the edge repeats the same way).
show "$trowel" create -t tres-wtd -O scale=0.25 -o tres/again.wtd tres/out/hills-extent.png
cmp tres/hills.wtd tres/again.wtd
cp tres/hills.raw tres/pages-130.swp
show "$trowel" create -t spz -o tres/pages-130.spz tres/pages-130.swp
show "$trowel" info tres/pages-130.spz
show "$trowel" extract -C tres/out tres/pages-130.spz
cmp tres/out/pages-130.swp tres/pages-130.swp
made tres/hills.wtd tres/out/hills.png tres/out/hills.obj tres/out/hills.glb tres/out/hills-tree.glb tres/out/hills-shaded.png tres/pages-130.spz
if command -v python3 >/dev/null; then
  # A PID texture directory from the documented layout, its pages packed as SPZ
  # beside it: one PNG per raster, the mip chain in one folder, the bump map
  # with its angle map, and index.json.
  python3 "$here/tests/tools/make_pid.py" tres/pid
  show "$trowel" create -t spz -o tres/pid/lvl-130.spz tres/pid/pages.bin
  show "$trowel" list tres/pid/lvl-130.pid
  show "$trowel" extract -C tres/textures tres/pid/lvl-130.pid
  made tres/pid/lvl-130.pid tres/textures
fi

section "Trespasser: GROFF scenes and worlds"
mkdir -p tres/scn
printf 'scene data' >tres/scn/Hierarchy
printf 'partitions' >tres/scn/Partitions
show "$trowel" create -t groff -o tres/sample.scn -C tres/scn Hierarchy Partitions
show "$trowel" info tres/sample.scn
show "$trowel" list --json tres/sample.scn
show "$trowel" verify tres/sample.scn
show "$trowel" extract -C tres/sample tres/sample.scn --manifest tres/sample.json
show "$trowel" create --manifest tres/sample.json -C tres/sample -o tres/again.scn
cmp tres/again.scn tres/sample.scn
made tres/sample.scn tres/sample
if command -v python3 >/dev/null; then
  # A small world: sections from the documented layouts, assembled by create.
  python3 "$here/tests/tools/make_grf.py" tres/world plain
  show "$trowel" create --manifest tres/world/manifest.json -C tres/world -o tres/world.grf
  show "$trowel" info tres/world.grf
  show "$trowel" convert tres/world.grf --to placements -o tres/world-placements.json
  show "$trowel" convert tres/world.grf --to obj -o tres/world.obj
  show "$trowel" convert tres/world.grf --to mtl -o tres/world.mtl
  show "$trowel" convert tres/world.grf --to glb -o tres/world.glb
  cat tres/world.obj
  made tres/world.grf tres/world-placements.json tres/world.obj tres/world.mtl tres/world.glb
fi

# --------------------------------------------------------------- SCUMM
section "SCUMM: index and data files (XORed), found as siblings"
mkdir -p scumm
"$here/scripts/make-scumm-sample.sh" scumm/MINI xor
show "$trowel" info scumm/MINI.001
show "$trowel" list -l scumm/MINI.000
show "$trowel" verify scumm/MINI.000
show "$trowel" extract -C scumm/out scumm/MINI.000
[ "$(head -c 4 scumm/out/room01/cost001.cost)" = COST ] # written decrypted
[ "$("$trowel" info --json scumm/MINI.001 | grep -cx '    "xor69"')" = 1 ] # in "filters"
made scumm/MINI.000 scumm/MINI.001 scumm/out

# ------------------------------------------------------------ SCUMM costume
section "SCUMM: a costume built from PNG frames, to a sheet, GIFs and back"
# The three 16x4 frames of WALK.ANI (indexed PNG, colours 0-15) become the
# pictures of a 16-colour COST: limb 0 walks through them in all four
# directions (animations 8-11) and stands on the first (12-15).
mkdir -p scumm/src
for i in 0 1 2; do
  "$trowel" convert cine/assets/WALK.ANI -O frame=$i -o scumm/src/pic_00$i.png
done
{
  printf '{\n  "format": "scumm-cost", "version": 6, "format_byte": 88, "colours": 16,\n'
  printf '  "animation_count": 16,\n'
  printf '  "palette": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],\n  "pictures": [\n'
  for i in 0 1 2; do
    printf '    {"file": "pic_00%d.png", "w": 16, "h": 4, "rel_x": -8, "rel_y": -4, "move_x": 0, "move_y": 0}%s\n' \
      "$i" "$([ $i -lt 2 ] && echo ,)"
  done
  printf '  ],\n  "limbs": [[0, 1, 2], null, null, null, null, null, null, null, null, null, null, null, null, null, null, null],\n'
  printf '  "commands": [0, 1, 2],\n  "animations": [\n'
  for a in 8 9 10 11 12 13 14 15; do
    last=2; [ $a -ge 12 ] && last=0
    printf '    {"index": %d, "limbs": [{"limb": 0, "kind": "sequence", "start": 0, "last": %d, "loop": true}]}%s\n' \
      "$a" "$last" "$([ $a -lt 15 ] && echo ,)"
  done
  printf '  ]\n}\n'
} >scumm/src/costume.json
show "$trowel" create -t scumm-cost -o scumm/walker.cost -C scumm/src .
show "$trowel" info scumm/walker.cost
# Its colours are room colours 0-15: the frames' own PNG palette gives them.
show "$trowel" convert scumm/walker.cost --to png -O palette=scumm/src/pic_000.png -o scumm/png
show "$trowel" convert scumm/walker.cost --to gif -O delay=20 -O palette=scumm/src/pic_000.png \
  -o scumm/gif
ls scumm/png scumm/gif
# The folder convert wrote builds the same costume again.
"$trowel" create -t scumm-cost -o scumm/again.cost -C scumm/png .
cmp scumm/walker.cost scumm/again.cost
made scumm/walker.cost scumm/png scumm/gif

# ------------------------------------------------------------- Volition
section "Volition: VPP packfiles"
mkdir -p vpp/src vpp/out
cat "$here"/docs/*.md >vpp/src/readme.txt
awk 'BEGIN { srand(8); for (i = 0; i < 50000; i++) printf "%c", 32 + int(rand() * 90) }' >vpp/src/noise.xtbl
: >vpp/src/empty.rfgzone_pc
cp "$here"/src/format/volition/vpp.c vpp/src/packer.c
show "$trowel" create -t vpp -o vpp/raw.vpp_pc -C vpp/src readme.txt noise.xtbl empty.rfgzone_pc packer.c
show "$trowel" create -t vpp -O compressed=1 -O condensed=1 -O align=1 -o vpp/stream.str2_pc \
  -C vpp/src readme.txt noise.xtbl empty.rfgzone_pc packer.c
show "$trowel" create -t vpp -O version=10 -O compressed=1 -o vpp/sr4.vpp_pc -C vpp/src \
  readme.txt noise.xtbl packer.c
show "$trowel" create -q -t vpp -O version=17 -O compressed=1 -o vpp/sr2022.vpp_pc -C vpp/src \
  readme.txt noise.xtbl packer.c
made vpp/raw.vpp_pc vpp/stream.str2_pc vpp/sr4.vpp_pc vpp/sr2022.vpp_pc
show "$trowel" info vpp/stream.str2_pc
show "$trowel" list -l vpp/sr4.vpp_pc
show "$trowel" verify vpp/*.vpp_pc vpp/*.str2_pc
show "$trowel" extract -C vpp/out vpp/stream.str2_pc --manifest vpp/stream.json
for f in readme.txt noise.xtbl empty.rfgzone_pc packer.c; do cmp "vpp/out/$f" "vpp/src/$f"; done
show "$trowel" create --manifest vpp/stream.json -C vpp/out -o vpp/rebuilt.str2_pc
cmp vpp/rebuilt.str2_pc vpp/stream.str2_pc
printf 'edited\n' >vpp/out/noise.xtbl
show "$trowel" create -t vpp -O base=vpp/stream.str2_pc -O delete=empty.rfgzone_pc \
  -o vpp/edited.str2_pc -C vpp/out noise.xtbl
show "$trowel" list vpp/edited.str2_pc
made vpp/rebuilt.str2_pc vpp/edited.str2_pc

section "Volition: ASM asset-assembler files"
mkdir -p asm/src
# A real Red Faction Guerrilla ASM that ships with the sources (the seed of
# fuzz_asm: the game's dlc_activity_containers.asm_pc): to JSON and back.
rfg_asm="$here/fuzz/corpus/asm/v5_dlc_activity.asm_pc"
show "$trowel" info "$rfg_asm"
show "$trowel" convert --to json -o asm/dlc_activity.json "$rfg_asm"
show "$trowel" create --manifest asm/dlc_activity.json -o asm/dlc_activity.asm_pc
cmp asm/dlc_activity.asm_pc "$rfg_asm"
# An ASM of our own whose container "items" describes a str2 not built yet
# (sizes 0), then the str2 built and the ASM updated with it in one step.
cat >asm/items.json <<'JSON'
{"format": "asm", "entries": [], "asm": {"version": 5, "containers": [
  {"name": "items", "type": 6, "flags": 0, "base_offset": 0, "read_size": 0, "sizes": [],
   "primitives": [
     {"name": "zone.layer_pc", "type": 3, "allocator": 0, "flags": 0, "split_ext": 0,
      "cpu_size": 0, "gpu_size": 0},
     {"name": "tex.cpeg_pc", "type": 5, "allocator": 0, "flags": 4, "split_ext": 0,
      "cpu_size": 0, "gpu_size": 0}]}]}}
JSON
show "$trowel" create --manifest asm/items.json -o asm/items.asm_pc
show "$trowel" list -l asm/items.asm_pc
cp "$here"/docs/formats/asm.md asm/src/zone.layer_pc
head -c 3000 vpp/src/noise.xtbl >asm/src/tex.cpeg_pc
cat "$here"/src/format/volition/asm*.c >asm/src/tex.gpeg_pc
show "$trowel" create -t vpp -O compressed=1 -O condensed=1 -O align=1 -O asm=asm/items.asm_pc \
  -o asm/items.str2_pc -C asm/src zone.layer_pc tex.cpeg_pc tex.gpeg_pc
show "$trowel" list -l asm/items.asm_pc
show "$trowel" verify asm/items.asm_pc
# The container now holds the str2's data start, compressed size and sizes.
str2_info=$("$trowel" info asm/items.str2_pc)
asm_row=$("$trowel" list -l asm/items.asm_pc | tail -n 1)
read -r asm_size asm_packed asm_offset _ <<<"$asm_row"
[ "$asm_size" = $(($(stat -c %s asm/src/zone.layer_pc) + $(stat -c %s asm/src/tex.cpeg_pc) + \
  $(stat -c %s asm/src/tex.gpeg_pc))) ]
[ "$asm_packed" = "$(sed -n 's/^  compressed_size: //p' <<<"$str2_info")" ]
[ "$((asm_offset))" = "$(sed -n 's/^  data_start: //p' <<<"$str2_info")" ]
made asm/dlc_activity.asm_pc asm/items.asm_pc asm/items.str2_pc

section "Volition codecs: zlib and LZ4 streams, read back by their own tools"
mkdir -p codecs
cat "$here"/docs/*.md >codecs/docs.txt
show "$trowel" compress -c zlib -O level=9 -o codecs/docs.zlib codecs/docs.txt
show "$trowel" compress -c lz4 -o codecs/docs.lz4 codecs/docs.txt
show "$trowel" decompress -c zlib -o codecs/back.txt codecs/docs.zlib
cmp codecs/back.txt codecs/docs.txt
if command -v python3 >/dev/null; then # zlib's own inflate, through python3
  python3 -c 'import sys, zlib; sys.stdout.buffer.write(zlib.decompress(open(sys.argv[1], "rb").read()))' \
    codecs/docs.zlib | cmp - codecs/docs.txt
fi
if command -v lz4 >/dev/null; then
  lz4 -q -d -c codecs/docs.lz4 | cmp - codecs/docs.txt
  lz4 -q -c codecs/docs.txt >codecs/peer.lz4
  show "$trowel" decompress -c lz4 -o codecs/peer.txt codecs/peer.lz4
  cmp codecs/peer.txt codecs/docs.txt
fi
made codecs/docs.zlib codecs/docs.lz4

# -------------------------------------------------------------- summary
section "Summary"
printf 'Samples made in %s:\n' "${samples#"$here"/}"
for f in "${summary[@]}"; do
  if [ -d "$f" ]; then
    printf '  %-34s %s files\n' "$f/" "$(find "$f" -type f | wc -l | tr -d ' ')"
  else
    printf '  %-34s %8s bytes\n' "$f" "$(stat -c %s "$f")"
  fi
done
printf 'SZDD: MANUAL.TXT %s -> MANUAL.TX_ %s bytes' \
  "$(stat -c %s szdd/src/MANUAL.TXT)" "$(stat -c %s szdd/MANUAL.TX_)"
[ -f szdd/peer.dat_ ] && printf ' (TABLE.DAT: trowel %s, mscompress %s)' \
  "$(stat -c %s szdd/TABLE.DA_)" "$(stat -c %s szdd/peer.dat_)"
printf '\nValve: 3 scenes compiled into scenes.image, decompiled, 1 edited + 1 new merged (%s scenes)\n' \
  "$("$trowel" list valve/merged.image | wc -l | tr -d ' ')"
printf 'Trespasser: a 100x60 height map -> hills.wtd (%s bytes) -> PNG/OBJ/GLB, re-encoded bit for bit; SPZ round trip\n' \
  "$(stat -c %s tres/hills.wtd)"
printf 'Cinematique: 8 assets converted to PNG/WAV/JSON, packed into 2 part files and VOL.CNF\n'
[ -d tres/textures ] && printf 'Trespasser: a PID texture directory to %s PNGs and index.json\n' \
  "$(find tres/textures -name '*.png' | wc -l | tr -d ' ')"
printf 'Trespasser: a GROFF scene rebuilt from its sections; a GRF world to placements, OBJ + MTL and GLB\n'
printf 'SCUMM: a costume built from 3 PNG frames, converted to a sheet + atlas and %s GIFs, rebuilt identical\n' \
  "$(ls scumm/gif | wc -l | tr -d ' ')"

printf 'Codecs: zlib %s and LZ4 %s bytes from %s, read back by zlib and the lz4 command\n' \
  "$(stat -c %s codecs/docs.zlib)" "$(stat -c %s codecs/docs.lz4)" "$(stat -c %s codecs/docs.txt)"
printf 'Volition: 4 packfiles (v3 raw, v3 compressed+condensed, v10, v17 LZ4), rebuilt from a manifest byte for byte, edited in place\n'
printf 'Volition: a shipped RFG ASM to JSON and back byte for byte; an ASM container updated by building its str2 (create -t vpp -O asm=)\n'
printf '%s\n' "$peer_note"
printf 'SCUMM: a 1-room game read through the xor69 filter, %s blocks extracted decrypted\n' \
  "$(find scumm/out -type f | wc -l | tr -d ' ')"
printf 'Every sample read back to identical bytes.\n'
