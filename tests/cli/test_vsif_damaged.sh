#!/usr/bin/env bash
# Damaged scenes.image files through the command line: a file cut in the
# middle of its scene data lists and extracts every scene that is still
# whole, names each one that is not, and exits 1, leaving no partial file;
# a scene whose stream is corrupt fails alone; bytes after a scene's BVCD
# inside its stored data (raw or compressed) are verify problems; a merge
# says what each source did (-v) and warns about a source that matches no
# scene of the base.
. "${BASH_SOURCE%/*}/lib.sh"

IMG="$TROWEL_CORPUS/valve/ez2/scenes/scenes.image"
if [ ! -f "$IMG" ]; then
    skip_all "$IMG is absent: damaged vsif CLI tests"
fi

# put_u32le FILE OFFSET VALUE: writes a little-endian 32-bit number.
put_u32le() {
    local v=$3 esc
    esc=$(printf '\\%03o\\%03o\\%03o\\%03o' $((v & 255)) $(((v >> 8) & 255)) \
        $(((v >> 16) & 255)) $(((v >> 24) & 255)))
    # shellcheck disable=SC2059 # the escapes are the point
    printf "$esc" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

size=$(wc -c <"$IMG" | tr -d ' ')
eo=$(u32le "$IMG" 16)
data_start=$(u32le "$IMG" $((eo + 4)))

# ---- cut in the middle of the scene data (ez2's pool and tables take the
# first 12,500 bytes, so cutting the file itself in half would leave no
# scene at all): 23 scenes are whole, 28 are cut off.
cut=$((data_start + (size - data_start) / 2))
head -c "$cut" "$IMG" >half.image
run "$TROWEL" list half.image
assert_rc "cut image: list exits 1" 1
assert_eq "cut image: list shows the 23 whole scenes" 23 "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')"
assert_contains "cut image: list shows the first scene" "$OUT" "0049e643.vcd"
assert_not_contains "cut image: a lost scene is not listed" "$OUT" "6d9a9143.vcd"
assert_eq "cut image: the first 5 lost scenes, the image's summary, a count of the rest, and list's verdict" 8 \
    "$(printf '%s\n' "$ERR" | wc -l | tr -d ' ')"
assert_contains "cut image: counts the lost scenes not shown" "$ERR" \
    "trowel: half.image: 23 more messages not shown (-v shows them all)"
run "$TROWEL" list -v half.image
assert_eq "cut image, -v: one line per lost scene, a summary, and list's verdict" 30 \
    "$(printf '%s\n' "$ERR" | wc -l | tr -d ' ')"
assert_contains "cut image: names each lost scene" "$ERR" \
    "trowel: half.image: warning: 6d9a9143.vcd: scene data at 0x43bb (196 bytes) runs past the end of the file (offset 0x43bb)"
assert_contains "cut image: says how much is left" "$ERR" \
    "trowel: half.image: warning: damaged image: 23 of its 51 scenes can be read"

run "$TROWEL" info half.image
assert_rc "cut image: info exits 1" 1
assert_contains "cut image: info still shows the header" "$OUT" "scene_count"

run "$TROWEL" list --json half.image
assert_rc "cut image: list --json exits 1" 1
printf '%s' "$OUT" >half.json
assert_json_valid "cut image: list --json is still JSON" half.json

run "$TROWEL" extract -C out half.image
assert_rc "cut image: extract exits 1" 1
assert_eq "cut image: the 23 whole scenes are written, nothing else" 23 \
    "$(ls -A out | wc -l | tr -d ' ')"
listed=$("$TROWEL" list half.image 2>/dev/null | sort)
assert_eq "cut image: the files are the ones listed" "$listed" "$(ls out | sort)"
run "$TROWEL" extract -C whole "$IMG"
same=0
for f in out/*; do
    cmp -s "$f" "whole/${f#out/}" && same=$((same + 1))
done
assert_eq "cut image: each written scene is the same as from the whole image" 23 "$same"

run "$TROWEL" verify half.image
assert_rc "cut image: verify exits 1" 1
assert_contains "cut image: verify names a lost scene" "$ERR" \
    "trowel: half.image: 6d9a9143.vcd: scene data at 0x43bb (196 bytes) runs past the end of the file (offset 0x43bb)"
assert_contains "cut image: verify counts the problems" "$ERR" "28 problems found"

# The file itself cut in half ends inside the entry table: no scene is
# whole, which is said, and nothing is written.
head -c $((size / 2)) "$IMG" >halved.image
run "$TROWEL" list halved.image
assert_rc "halved file: list exits 1" 1
assert_eq "halved file: nothing listed" "" "$OUT"
assert_contains "halved file: says so" "$ERR" \
    "trowel: halved.image: warning: damaged image: 0 of its 51 scenes can be read"
run "$TROWEL" extract -C none halved.image
assert_rc "halved file: extract exits 1" 1
assert_dir_empty "halved file: nothing written" none

# A cut inside the entry table: the entries before the cut still count.
head -c $((eo + 16 * 10 + 5)) "$IMG" >table.image
run "$TROWEL" list table.image
assert_rc "cut table: exit 1" 1
assert_contains "cut table: says how many entries are lost" "$ERR" \
    "the table of 51 scene entries at 0x2980 runs past the end of the file: 41 of them are lost"

# -q keeps the warnings quiet (those about entries only counted), not the
# summary nor the exit status.
run "$TROWEL" list -q half.image
assert_rc "cut image: list -q still exits 1" 1
assert_eq "cut image: list -q prints only the summary" \
    "trowel: half.image: 28 messages not shown (-v shows them all)"$'\n'"trowel: half.image: damaged: not every entry can be read" "$ERR"

# The base of a merge must be whole: its lost scenes would be dropped.
mkdir -p mod/scenes
printf '// Choreo version 1\nactor "a"\n{\n  channel "c"\n  {\n  }\n}\n' >mod/scenes/x.vcd
run "$TROWEL" create -t vsif -O base=half.image -o merged.image -C mod scenes
assert_rc "damaged base: create exits 1" 1
assert_contains "damaged base: says so" "$ERR" "base image half.image: it is damaged: 6d9a9143.vcd: scene data"
assert_no_file "damaged base: no output" merged.image

# ---- one scene's LZMA stream broken: only that scene fails.
cp "$IMG" corrupt.image
chmod u+w corrupt.image
printf '\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377' |
    dd of=corrupt.image bs=1 seek=$((data_start + 40)) conv=notrunc 2>/dev/null
run "$TROWEL" list corrupt.image
assert_rc "corrupt stream: list exits 0 (the directory is whole)" 0
run "$TROWEL" extract -C bad corrupt.image
assert_rc "corrupt stream: extract exits 1" 1
assert_eq "corrupt stream: the other 50 scenes are written" 50 "$(ls -A bad | wc -l | tr -d ' ')"
assert_contains "corrupt stream: names the scene" "$ERR" "trowel: corrupt.image: 0049e643.vcd: "
assert_no_file "corrupt stream: no file for it" bad/0049e643.vcd

# ---- bytes after a scene's BVCD inside its stored data
run "$TROWEL" extract -C game --names "$TROWEL_CORPUS/valve/ez2" "$IMG"
run "$TROWEL" create -t vsif -O compress=none -o raw.image -C game scenes
assert_rc "raw image built" 0
n=$(u32le raw.image 8)
reo=$(u32le raw.image 16)
last=$((reo + 16 * (n - 1)))
len=$(u32le raw.image $((last + 8)))
off=$(u32le raw.image $((last + 4)))
crc=$(printf '%08x' "$(u32le raw.image "$last")")
head -c 1000 /dev/zero >>raw.image
put_u32le raw.image $((last + 8)) $((len + 1000))
run "$TROWEL" verify raw.image
assert_rc "trailing bytes (stored): verify exits 1" 1
assert_contains "trailing bytes (stored): named, counted, located" "$ERR" \
    "$(printf 'trowel: raw.image: %s.vcd: 1000 bytes follow the scene'"'"'s BVCD (%d bytes) in its stored data (offset 0x%x)' "$crc" "$len" $((off + len)))"
run "$TROWEL" extract --raw -C rawout raw.image "$crc.bvcd"
assert_rc "trailing bytes: the scene still extracts" 0
assert_eq "extract --raw writes the stored data, trailing bytes included" $((len + 1000)) \
    "$(wc -c <"rawout/$crc.bvcd" | tr -d ' ')"
# 64 MiB of them (a sparse file) under an 8 MiB memory limit: a raw scene
# is parsed where it lies, never loaded whole.
cp raw.image big.image
truncate -s $(($(wc -c <raw.image) + 67108864)) big.image
put_u32le big.image $((last + 8)) $((len + 1000 + 67108864))
run "$TROWEL" verify --mem-limit 8M big.image
assert_rc "64 MiB of trailing bytes: verify exits 1" 1
assert_contains "64 MiB of trailing bytes: counted" "$ERR" \
    "$crc.vcd: $((1000 + 67108864)) bytes follow the scene's BVCD ($len bytes) in its stored data"

# The same inside an LZMA stream: the scene's BVCD and 500 zeros, compressed.
run "$TROWEL" create -t vsif -O compress=lzma -o lz.image -C game scenes
n=$(u32le lz.image 8)
leo=$(u32le lz.image 16)
last=$((leo + 16 * (n - 1)))
off=$(u32le lz.image $((last + 4)))
crc=$(printf '%08x' "$(u32le lz.image "$last")")
run "$TROWEL" extract --raw -C lzout lz.image "$crc.bvcd"
bvcd_len=$(wc -c <"lzout/$crc.bvcd" | tr -d ' ')
cp "lzout/$crc.bvcd" padded.bvcd
head -c 500 /dev/zero >>padded.bvcd
run "$TROWEL" compress -c vsif-lzma -o padded.lz padded.bvcd
head -c "$off" lz.image >lzpad.image
cat padded.lz >>lzpad.image
put_u32le lzpad.image $((last + 8)) "$(wc -c <padded.lz | tr -d ' ')"
run "$TROWEL" verify lzpad.image
assert_rc "trailing bytes (compressed): verify exits 1" 1
assert_contains "trailing bytes (compressed): named and counted" "$ERR" \
    "$(printf 'trowel: lzpad.image: %s.vcd: 500 bytes follow the scene'"'"'s BVCD (%d bytes) in its decompressed data' "$crc" "$bvcd_len")"
run "$TROWEL" verify lz.image
assert_rc "without them the image verifies" 0

# ---- create -v with a base: what each source did
mkdir -p edit/scenes
cp game/scenes/f02_lobby1.vcd edit/scenes/office_wake.vcd
cp game/scenes/f02_lobby1.vcd edit/scenes/ofice_wake.vcd
run "$TROWEL" create -v -t vsif -O base="$IMG" -o edited.image -C edit scenes
assert_rc "create -v with a base: exit 0" 0
assert_contains "create -v: the replaced scene" "$ERR" \
    "trowel: edited.image: scenes/office_wake.vcd: replaces scene 4427af8c of the base image"
assert_contains "create -v: the added scene" "$ERR" \
    "trowel: edited.image: scenes/ofice_wake.vcd: added as a new scene (bd8fec43)"
assert_contains "create: a source matching no scene of the base is a warning" "$ERR" \
    "trowel: edited.image: warning: scenes/ofice_wake.vcd: no scene of the base image $IMG has this name: added"
run "$TROWEL" create -t vsif -O base="$IMG" -o edited2.image -C edit scenes
assert_not_contains "create without -v: no notes" "$ERR" "replaces scene"
assert_contains "create without -v: the warning still" "$ERR" "warning: scenes/ofice_wake.vcd"
assert_same_file "create -v writes the same image" edited.image edited2.image

finish
