#!/usr/bin/env bash
# trowel convert for the Cinematique assets: fonts, masks, animations,
# sprite sets, backgrounds and samples, built by hand here (see
# docs/formats/cine-assets.md). Exit codes, output shape, and no output
# left behind when a conversion fails.
. "${BASH_SOURCE%/*}/lib.sh"

# zeros N: N zero bytes on stdout
zeros() { head -c "$1" /dev/zero; }
# u32be FILE OFFSET
u32be() {
    local b0 b1 b2 b3
    read -r b0 b1 b2 b3 <<<"$(bytes "$1" "$2" 4)"
    echo $((b0 * 16777216 + b1 * 65536 + b2 * 256 + b3))
}

# ---- fixtures
# TEXTE.DAT: 78 glyphs; glyph 0's top left pixel colour 1
{ printf '\x00\x08\x02\x70\x80'; zeros $((78 * 64 - 1)); } >TEXTE.DAT
# an animation: 16 x 2 pixels, 2 frames
{ printf 'ANIM\x00\x08\x00\x02\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00'; printf '\x80'; zeros 31; } >WALK.ANI
# a mask: 8 x 2 pixels, 1 frame
{ printf 'MASK\x00\x01\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00'; printf '\xa0\x01'; } >DOOR.MSK
# a set with one four-plane frame of 16 x 1 pixels
{ printf 'SET\x00\x00\x01'; printf '\x00\x00\x00\x00\x00\x08\x00\x01\x00\x04\x00\x00\x00\x00\x00\x00'; printf '\x80'; zeros 7; } >ROBOT.SET
# a PI1 background, colour 1 red at (0,0)
{ printf '\x00\x00\x00\x00\x07\x00'; zeros 28; printf '\x80'; zeros 31999; } >ROOM.PI1
# a sample
printf '\x00\x7f\x80\xff' >BOOM.AMI

# ---- formats
run "$TROWEL" formats
for id in cine-font cine-ani cine-msk cine-set cine-bg cine-sample; do
    assert_contains "formats lists $id" "$OUT" "$id"
done

# ---- font
run "$TROWEL" info TEXTE.DAT --json
assert_rc "info TEXTE.DAT" 0
printf '%s\n' "$OUT" >font-info.json
assert_json_eq "info: format" font-info.json .format cine-font
assert_json_eq "info: glyphs" font-info.json .glyphs 78
run "$TROWEL" list TEXTE.DAT
assert_rc "list TEXTE.DAT" 0
assert_eq "list: one line per glyph" 78 "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')"

run "$TROWEL" convert TEXTE.DAT -o font.png
assert_rc "convert font to png (by extension)" 0
assert_eq "font.png: PNG signature" "137 80 78 71 13 10 26 10" "$(bytes font.png 0 8)"
assert_eq "font.png: sheet width" 256 "$(u32be font.png 16)"
assert_eq "font.png: sheet height" 40 "$(u32be font.png 20)"
run "$TROWEL" convert TEXTE.DAT --to png -O frame=3 -o glyph3.png
assert_rc "convert one glyph" 0
assert_eq "glyph3.png: width" 16 "$(u32be glyph3.png 16)"
assert_eq "glyph3.png: height" 8 "$(u32be glyph3.png 20)"

run "$TROWEL" convert TEXTE.DAT --to glyphmap -o map.json
assert_rc "convert --to glyphmap" 0
assert_json_valid "glyphmap: JSON" map.json
assert_json_eq "glyphmap: glyph 0 ink" map.json ".glyphs[0].ink_width" 1
assert_json_eq "glyphmap: glyph 17 x" map.json ".glyphs[17].x" 16
assert_json_eq "glyphmap: glyph 17 y" map.json ".glyphs[17].y" 8
run "$TROWEL" convert TEXTE.DAT --to json -o struct.json
assert_rc "convert --to json" 0
assert_json_eq "json: format" struct.json .format cine-font
assert_json_eq "json: entries" struct.json ".entries[77].name" glyph_077

run "$TROWEL" convert TEXTE.DAT --to png -O frame=78 -o bad.png
assert_rc "frame past the last glyph: bad input for this file, exit 1" 1
assert_no_file "bad frame: no output" bad.png
run "$TROWEL" convert TEXTE.DAT --to png -O shade=1 -o bad.png
assert_usage_error "unknown option"
assert_no_file "unknown option: no output" bad.png
run "$TROWEL" convert TEXTE.DAT --to png -O palette=missing.pal -o bad.png
assert_rc "missing palette file: exit 1" 1
assert_no_file "missing palette: no output" bad.png

head -c 1000 TEXTE.DAT >CUT.DAT
run "$TROWEL" convert -t cine-font CUT.DAT --to png -o cut.png
assert_rc "truncated font: exit 1" 1
assert_contains "truncated font: says why" "$ERR" "glyphs need"
assert_no_file "truncated font: no output" cut.png
run "$TROWEL" info CUT.DAT
assert_rc "truncated font is not detected" 1

# ---- palettes, ANI, MSK, SET
{ printf '\x00\x00\x07\x00'; zeros 28; } >red.pal
run "$TROWEL" convert WALK.ANI -O palette=red.pal -O frame=0 -o walk0.png
assert_rc "convert ani frame with palette" 0
assert_eq "walk0.png: 16 wide" 16 "$(u32be walk0.png 16)"
run "$TROWEL" convert WALK.ANI -o walk.png
assert_rc "convert ani sheet" 0
assert_eq "walk.png: two frames side by side" 32 "$(u32be walk.png 16)"
run "$TROWEL" convert DOOR.MSK -o door.png
assert_rc "convert msk" 0
assert_eq "door.png: 8 wide" 8 "$(u32be door.png 16)"
run "$TROWEL" convert DOOR.MSK -O palette=red.pal -o door2.png
assert_usage_error "palette for a mask"
assert_no_file "palette for a mask: no output" door2.png
run "$TROWEL" convert ROBOT.SET -o robot.png
assert_rc "convert set" 0
assert_eq "robot.png: 16 wide" 16 "$(u32be robot.png 16)"
run "$TROWEL" list ROBOT.SET --json
assert_rc "list set" 0
printf '%s\n' "$OUT" >robot.json
assert_json_eq "set entry type" robot.json ".entries[0].type" 4
head -c 20 ROBOT.SET >CUT.SET
run "$TROWEL" convert CUT.SET -o cutset.png
assert_rc "truncated set: exit 1" 1
assert_no_file "truncated set: no output" cutset.png

# ---- background
run "$TROWEL" convert ROOM.PI1 -o room.png
assert_rc "convert pi1" 0
assert_eq "room.png: 320 wide" 320 "$(u32be room.png 16)"
assert_eq "room.png: 200 high" 200 "$(u32be room.png 20)"
run "$TROWEL" info ROOM.PI1 --json
printf '%s\n' "$OUT" >room.json
assert_json_eq "pi1 info: variant" room.json .variant pi1
assert_json_eq "pi1 info: colour 1" room.json ".palette[1]" "#ff0000"

# ---- sample
run "$TROWEL" convert BOOM.AMI -o boom.wav -O rate=11025
assert_rc "convert sample" 0
assert_eq "boom.wav: header and samples" \
    "82 73 70 70 40 0 0 0 87 65 86 69 102 109 116 32 16 0 0 0 1 0 1 0 17 43 0 0 17 43 0 0 1 0 8 0 100 97 116 97 4 0 0 0 128 255 0 127" \
    "$(bytes boom.wav 0 48)"
run "$TROWEL" convert BOOM.AMI -o boom2.wav -O rate=0
assert_usage_error "rate=0"
assert_no_file "rate=0: no output" boom2.wav
cp BOOM.AMI boom.raw
run "$TROWEL" convert boom.raw -o raw.wav
assert_rc "no name, no claim: exit 1" 1
run "$TROWEL" convert -t cine-sample boom.raw -o raw.wav
assert_rc "-t cine-sample forces it" 0
assert_eq "forced: same samples" "128 255 0 127" "$(bytes raw.wav 44 4)"
assert_eq "forced: default rate 8287" 8287 "$(u32le raw.wav 24)"

# ---- scripts
printf '\x00\x02\x00\x03\x00\x01\xaa\xbb\xcc\xdd' >AUTO00.PRC
run "$TROWEL" list AUTO00.PRC
assert_rc "list prc" 0
assert_eq "list prc: two scripts" 2 "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')"
run "$TROWEL" convert AUTO00.PRC -o prc.json
assert_rc "convert prc to json" 0
assert_json_eq "prc json: kind" prc.json .kind prc
assert_json_eq "prc json: script 1 size" prc.json ".entries[1].size" 1
mkdir prc
run "$TROWEL" extract AUTO00.PRC -C prc
assert_rc "extract prc" 0
assert_eq "extract prc: script 0 bytes" "170 187 204" "$(bytes prc/script_000 0 3)"

# ---- savegames: a Future Wars save with 30-byte animation entries
{
    printf '\x00\x01PART01'; zeros $((0x5F - 8))
    printf '\x00\xff\x00\x20'; zeros $((0x2315 - 0x63))
    zeros $((255 * 30 + 12)); printf '\x00\x00\x00\x00'
} >FW.SAV
run "$TROWEL" info FW.SAV --json
assert_rc "info save" 0
printf '%s\n' "$OUT" >save-info.json
assert_json_eq "save info: layout" save-info.json .layout fw-pc
assert_json_eq "save info: part" save-info.json .part_name PART01
run "$TROWEL" convert FW.SAV --to savejson -o save.json
assert_rc "convert --to savejson" 0
assert_json_eq "savejson: disk" save.json .disk 1
run "$TROWEL" create -t cine-save -o AGAIN.SAV save.json
assert_rc "create cine-save from savejson" 0
assert_same_file "savejson round trip" FW.SAV AGAIN.SAV
printf '{"layout": "fw-pc", "disk": 1}' >broken.json
run "$TROWEL" create -t cine-save -o BROKEN.SAV broken.json
assert_rc "create from incomplete JSON: exit 1" 1
assert_contains "incomplete JSON: names the field" "$ERR" "part_name"
assert_no_file "incomplete JSON: no output" BROKEN.SAV

finish
