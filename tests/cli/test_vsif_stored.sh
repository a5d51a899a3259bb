#!/usr/bin/env bash
# Scenes extracted as stored BVCD rebuild (issue 17). `extract --raw` names
# scenes .bvcd and its manifest records them (with the image's string pool,
# which their indices point into), so `create --manifest` gives the same
# bytes. A scene whose string indices fall outside the pool cannot become
# text: extract writes its stored bytes (.bvcd) with one warning, exits 0,
# and the manifest still rebuilds the image byte for byte.
. "${BASH_SOURCE%/*}/lib.sh"

EZ2="$TROWEL_CORPUS/valve/ez2"
TSP="$TROWEL_CORPUS/valve/tsp/scenes/scenes.image"
if [ ! -f "$EZ2/scenes/scenes.image" ] || [ ! -f "$TSP" ]; then
    skip_all "the ez2 and tsp images are absent: stored-scene tests"
fi

put_i16le() { # FILE OFFSET VALUE
    local v=$3 esc
    esc=$(printf '\\%03o\\%03o' $((v & 255)) $(((v >> 8) & 255)))
    # shellcheck disable=SC2059 # the escapes are the point
    printf "$esc" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# ---- --raw: .bvcd names, a manifest that rebuilds the same bytes
run "$TROWEL" create -t vsif -O version=3 -O compress=lzma -o lz.image -C "$EZ2" scenes
assert_rc "a compressed v3 image built" 0
run "$TROWEL" extract --raw --manifest raw.json -C raw lz.image
assert_rc "extract --raw --manifest exit" 0
assert_eq "extract --raw: every scene named .bvcd" 51 "$(find raw -name '*.bvcd' | wc -l | tr -d ' ')"
assert_eq "extract --raw: no .vcd" 0 "$(find raw -name '*.vcd' | wc -l | tr -d ' ')"
assert_json_eq "manifest: entries marked as stored scenes" raw.json '.entries[0].bvcd' true
assert_json_eq "manifest: the image's pool, in order" raw.json '.strings | length' 505
run "$TROWEL" create --manifest raw.json -C raw -o lz2.image
assert_rc "create --manifest from raw scenes exit" 0
assert_same_file "raw extraction rebuilds the same bytes" lz.image lz2.image

run "$TROWEL" extract --raw --names "$EZ2" -C named lz.image
assert_file_exists "--raw --names: names keep their path, with .bvcd" named/scenes/_old/op.bvcd

# tsp (Valve's LZMA streams cannot be reproduced): the rebuilt image holds
# the same scenes, BVCD for BVCD, the same pool and the same summaries.
run "$TROWEL" extract --raw --manifest tsp.json -C tsp "$TSP"
run "$TROWEL" create --manifest tsp.json -C tsp -o tsp2.image
assert_rc "tsp: create --manifest from raw scenes exit" 0
run "$TROWEL" extract --raw -C tsp2 tsp2.image
assert_eq "tsp: every BVCD comes back the same" "" "$(diff -r tsp tsp2 2>&1)"
entries=$(u32le "$TSP" 16)
assert_eq "tsp: header, string table and pool identical" \
    "$(head -c "$entries" "$TSP" | od -An -tx1)" "$(head -c "$entries" tsp2.image | od -An -tx1)"
run "$TROWEL" list --json "$TSP"
printf '%s' "$OUT" >tsp.list.json
run "$TROWEL" list --json tsp2.image
printf '%s' "$OUT" >tsp2.list.json
assert_eq "tsp: the 301 summaries (stale sounds included) are kept" \
    "$(python3 -c 'import json,sys; print([(e["crc"],e["msecs"],e["lastspeech_msecs"],e["sounds"]) for e in json.load(open(sys.argv[1]))["entries"]])' tsp.list.json)" \
    "$(python3 -c 'import json,sys; print([(e["crc"],e["msecs"],e["lastspeech_msecs"],e["sounds"]) for e in json.load(open(sys.argv[1]))["entries"]])' tsp2.list.json)"

# An edited .bvcd is summarised again (its CRC no longer matches the
# manifest's): here one scene's file replaced by another's, whose length
# differs. Reusing the recorded summary would make verify fail.
cp -r raw edited
first=$(find edited -name '*.bvcd' | sort | head -1)
cp "$(find edited -name '*.bvcd' | sort | sed -n 2p)" "$first"
run "$TROWEL" create --manifest raw.json -C edited -o edited.image
assert_rc "an edited .bvcd rebuilds" 0
run "$TROWEL" verify edited.image
assert_rc "an edited .bvcd gets its own summary: verify is clean" 0
run "$TROWEL" create -t vsif -o nomanifest.image -C raw .
assert_rc "stored scenes without the manifest: nothing to build" 2
assert_contains "stored scenes without the manifest: one warning says why" "$ERR" \
    "51 stored scenes (.bvcd, first"

# A manifest written before .bvcd names (raw BVCDs named .vcd) is refused
# clearly, not as "unexpected token".
mkdir old && cp raw/0049e643.bvcd old/0049e643.vcd
run "$TROWEL" create -t vsif -o old.image -C old .
assert_rc "a BVCD named .vcd: exit 1" 1
assert_contains "a BVCD named .vcd: said so" "$ERR" "this is a stored scene (BVCD), not text"
assert_no_file "a BVCD named .vcd: no image left behind" old.image

# ---- a scene that cannot become text is kept
run "$TROWEL" create -t vsif -O compress=none -o plain.image -C "$EZ2" scenes
eo=$(u32le plain.image 16)
crc=$(printf '%08x' "$(u32le plain.image $((eo + 48)))")
off=$(u32le plain.image $((eo + 52)))
cp plain.image bad.image
# Byte 11 of a BVCD is the first string index (an event's or an actor's
# name): point it far outside the 505-string pool.
put_i16le bad.image $((off + 11)) 28672
assert_ne "the scene was changed" "$(od -An -tx1 plain.image)" "$(od -An -tx1 bad.image)"
run "$TROWEL" list bad.image
assert_contains "list: the scene is named .bvcd" "$OUT" "$crc.bvcd"
run "$TROWEL" extract --manifest bad.json -C bad bad.image
assert_rc "extract: the scene is kept intact: exit 0" 0
assert_eq "extract: one warning" 1 "$(printf '%s\n' "$ERR" | grep -c .)"
assert_contains "extract: the warning names the scene and the index" "$ERR" \
    "$crc.bvcd: string index 28672 is outside the pool of 505 strings"
assert_eq "extract: the others are text, this one stored" "50 1" \
    "$(find bad -name '*.vcd' | wc -l | tr -d ' ') $(find bad -name '*.bvcd' | wc -l | tr -d ' ')"
assert_eq "extract: its stored bytes, exactly" \
    "$(dd if=bad.image bs=1 skip="$off" count="$(u32le bad.image $((eo + 56)))" 2>/dev/null | od -An -tx1)" \
    "$(od -An -tx1 "bad/$crc.bvcd")"
run "$TROWEL" create --manifest bad.json -C bad -o bad2.image
assert_rc "create --manifest exit" 0
assert_same_file "the image with an unreadable scene rebuilds byte for byte" bad.image bad2.image
run "$TROWEL" verify bad.image
assert_rc "verify still reports the out-of-pool index" 1
assert_contains "verify: names it" "$ERR" "BVCD string index 28672 outside the pool of 505 strings"
# The same scene in a compressed image (its index patched before LZMA).
run "$TROWEL" create --manifest bad.json -C bad -O compress=lzma -o badlz.image
run "$TROWEL" extract --manifest badlz.json -C badlz badlz.image
assert_rc "compressed: extract exit 0" 0
assert_same_file "compressed: the stored scene is the same BVCD" "bad/$crc.bvcd" "badlz/$crc.bvcd"
run "$TROWEL" create --manifest badlz.json -C badlz -o badlz2.image
assert_same_file "compressed: rebuilds byte for byte" badlz.image badlz2.image

finish
