#!/usr/bin/env bash
# scenes.image (vsif) and its LZMA codec through the command line: list with
# --names, extract as text and --raw, create from a game folder, merge into
# a base image, verify, hostile images, and liblzma's xz as a peer.
. "${BASH_SOURCE%/*}/lib.sh"

EZ2="$TROWEL_CORPUS/valve/ez2"
IMG="$EZ2/scenes/scenes.image"
if [ ! -f "$IMG" ]; then
    skip_all "$IMG is absent: vsif CLI tests"
fi

# ---- info and list
run "$TROWEL" info "$IMG"
assert_rc "info exit" 0
assert_contains "info: format" "$OUT" "vsif"
run "$TROWEL" info --json "$IMG"
printf '%s' "$OUT" >info.json
assert_json_eq "info --json: version" info.json .version 2
assert_json_eq "info --json: scene_count" info.json .scene_count 51
assert_json_eq "info --json: string_count" info.json .string_count 505

run "$TROWEL" list "$IMG"
assert_rc "list exit" 0
assert_eq "list: 51 lines" 51 "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')"
assert_contains "list: unknown names as %08x.vcd" "$OUT" "0049e643.vcd"

run "$TROWEL" list --json --names "$EZ2" "$IMG"
assert_rc "list --names exit" 0
printf '%s' "$OUT" >list.json
assert_json_valid "list --json is JSON" list.json
named=$(grep -o '"name": *"scenes/[^"]*"' list.json | wc -l | tr -d ' ')
assert_eq "list --names: all 51 scenes named" 51 "$named"
assert_contains "list --json: crc key" "$OUT" '"crc"'
assert_contains "list --json: compressed key" "$OUT" '"compressed": true'
assert_contains "list --json: msecs key" "$OUT" '"msecs"'
assert_contains "list --json: sounds key" "$OUT" '"sounds"'

printf 'scenes/f02_lobby1.vcd\n' >names.txt
run "$TROWEL" list --names names.txt "$IMG"
assert_contains "list --names LIST: named" "$OUT" "scenes/f02_lobby1.vcd"

# ---- extract: text VCDs under their names, or the BVCD with --raw
run "$TROWEL" extract --names "$EZ2" -C game "$IMG"
assert_rc "extract exit" 0
assert_eq "extract: 51 files" 51 "$(find game -type f | wc -l | tr -d ' ')"
assert_file_exists "extract: under scenes/" game/scenes/f02_lobby1.vcd
assert_contains "extract: text VCD" "$(head -c 40 game/scenes/f02_lobby1.vcd)" "// Choreo version 1"
assert_file_exists "extract: subfolders kept" game/scenes/_old/op.vcd

run "$TROWEL" extract --raw -C raw "$IMG" 0049e643.bvcd
assert_rc "extract --raw exit" 0
assert_eq "extract --raw: BVCD" "98 118 99 100 4" "$(bytes raw/0049e643.bvcd 0 5)"

run "$TROWEL" extract -O bogus=1 -C bad "$IMG"
assert_usage_error "extract -O unknown key"

# ---- create from the extracted game folder, then from the corpus folder
run "$TROWEL" create -t vsif -o rebuilt.image -C game scenes
assert_rc "create from a folder exit" 0
run "$TROWEL" verify rebuilt.image
assert_rc "rebuilt image verifies" 0
run "$TROWEL" list --json --names game rebuilt.image
printf '%s' "$OUT" >rebuilt.json
assert_eq "rebuilt: 51 named scenes" 51 "$(grep -o '"name": *"scenes/' rebuilt.json | wc -l | tr -d ' ')"
# The scenes' durations and sounds match the real image's (same CRC order).
strip() { grep -o '"\(crc\|msecs\|sounds\)": *\(\[[^]]*\]\|[^,}]*\)' "$1"; }
assert_eq "rebuilt: crc, msecs and sounds as the real image" "$(strip list.json)" "$(strip rebuilt.json)"

# The corpus folder holds scenes.image and .txt files too: they are ignored.
run "$TROWEL" create -t vsif -o direct.image -C "$EZ2" scenes
assert_rc "create -C gamedir scenes exit" 0
run "$TROWEL" list --json direct.image
printf '%s' "$OUT" >direct.json
assert_eq "direct: same summaries" "$(strip list.json)" "$(strip direct.json)"

run "$TROWEL" create -t vsif -O version=3 -O compress=none -o v3.image -C game scenes
assert_rc "create -O version=3 compress=none" 0
run "$TROWEL" info --json v3.image
printf '%s' "$OUT" >v3.json
assert_json_eq "v3 image: version 3" v3.json .version 3
run "$TROWEL" list --json v3.image
assert_not_contains "compress=none: nothing compressed" "$OUT" '"compressed": true'
assert_contains "v3: lastspeech_msecs" "$OUT" '"lastspeech_msecs"'
run "$TROWEL" create -t vsif -O version=9 -o bad.image -C game scenes
assert_usage_error "create -O version=9"
assert_no_file "bad option leaves no file" bad.image

# ---- merge: replace one scene, add one, keep the rest
mkdir -p mod/scenes
cp game/scenes/f02_lobby1.vcd mod/scenes/office_wake.vcd
cp game/scenes/f02_lobby1.vcd mod/scenes/my_new_scene.vcd
run "$TROWEL" create -t vsif -O base="$IMG" -o merged.image -C mod scenes
assert_rc "merge exit" 0
run "$TROWEL" verify merged.image
assert_rc "merged image verifies" 0
run "$TROWEL" list merged.image
assert_eq "merged: 52 scenes" 52 "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')"
run "$TROWEL" list --names mod merged.image
assert_contains "merged: the new scene is there" "$OUT" "scenes/my_new_scene.vcd"
run "$TROWEL" extract --names "$EZ2" -C merged merged.image scenes/_old/op.vcd
assert_same_file "merged: untouched scenes decompile as before" game/scenes/_old/op.vcd merged/scenes/_old/op.vcd
run "$TROWEL" extract --names "$EZ2" -C merged merged.image scenes/office_wake.vcd
assert_same_file "merged: the replaced scene is the new one" game/scenes/f02_lobby1.vcd merged/scenes/office_wake.vcd

# ---- a whole v3 image, names partly unknown: extract all, rebuild, same scenes
TSP="$TROWEL_CORPUS/valve/tsp"
if [ -f "$TSP/scenes/scenes.image" ]; then
    run "$TROWEL" extract --names "$TSP" -C tsp "$TSP/scenes/scenes.image"
    assert_rc "tsp: extract all" 0
    assert_eq "tsp: 283 scenes under their CRC" 283 "$(find tsp -maxdepth 1 -name '*.vcd' | wc -l | tr -d ' ')"
    run "$TROWEL" create -t vsif -O version=3 -o tsp.image -C tsp .
    assert_rc "tsp: rebuild from everything extracted" 0
    run "$TROWEL" extract --names "$TSP" -C tsp2 tsp.image
    assert_rc "tsp: extract the rebuild" 0
    if diff -r tsp tsp2 >/dev/null; then pass; else fail "tsp: rebuilt scenes decompile the same"; fi
    run "$TROWEL" verify tsp.image
    assert_rc "tsp: the rebuild verifies (its summaries are consistent)" 0
    # With a manifest: version and each scene's stored/compressed choice kept.
    run "$TROWEL" extract --names "$TSP" --manifest tsp.json -C tspm "$TSP/scenes/scenes.image"
    assert_rc "tsp: extract --manifest" 0
    assert_json_eq "manifest: version" tsp.json .version 3
    run "$TROWEL" create --manifest tsp.json -C tspm -o tspm.image
    assert_rc "tsp: create --manifest (no -t)" 0
    run "$TROWEL" info --json tspm.image
    printf '%s' "$OUT" >tspm-info.json
    assert_json_eq "create --manifest: version 3" tspm-info.json .version 3
    run "$TROWEL" list --json tspm.image
    assert_eq "create --manifest: the 162 raw scenes stay raw" 162 \
        "$(printf '%s' "$OUT" | grep -o '"compressed": false' | wc -l | tr -d ' ')"
    run "$TROWEL" verify -v "$TSP/scenes/scenes.image"
    assert_rc "tsp: the real image verifies (its 16 stale summary sounds are harmless)" 0
    assert_eq "tsp: 16 warnings about stale sounds (-v: all of them)" 16 \
        "$(printf '%s\n' "$ERR" | grep -c 'warning: .*summary lists sounds')"
else
    skip "tsp image absent: v3 round trip"
fi

# ---- hostile images
head -c 5000 "$IMG" >cut.image
run "$TROWEL" list cut.image
assert_rc "truncated image: exit 1" 1
assert_contains "truncated image: names the file" "$ERR" "trowel: cut.image: "
cp "$IMG" swapped.image
chmod u+w swapped.image
eo=$(u32le "$IMG" 16)
dd if="$IMG" of=swapped.image bs=1 skip=$((eo + 16)) seek="$eo" count=16 conv=notrunc 2>/dev/null
dd if="$IMG" of=swapped.image bs=1 skip="$eo" seek=$((eo + 16)) count=16 conv=notrunc 2>/dev/null
run "$TROWEL" verify swapped.image
assert_rc "unsorted CRCs: verify exit 1" 1
assert_contains "unsorted CRCs: says so" "$ERR" "sorted"

# ---- the codec, with xz (liblzma) as the peer
head -c 50000 "$TROWEL" >sample.bin
run "$TROWEL" compress -c vsif-lzma -o sample.lz sample.bin
assert_rc "compress -c vsif-lzma" 0
assert_eq "vsif-lzma: LZMA id" "76 90 77 65" "$(bytes sample.lz 0 4)"
assert_eq "vsif-lzma: actual size" 50000 "$(u32le sample.lz 4)"
assert_eq "vsif-lzma: lzma size" $(($(wc -c <sample.lz) - 17)) "$(u32le sample.lz 8)"
run "$TROWEL" decompress -c vsif-lzma -o sample.out sample.lz
assert_same_file "vsif-lzma round trip" sample.bin sample.out
if command -v xz >/dev/null 2>&1; then
    tail -c +18 sample.lz | xz -d --format=raw --lzma1=lc=3,lp=0,pb=2,dict=64KiB >sample.xz.out 2>/dev/null
    assert_same_file "xz --format=raw --lzma1 decodes trowel's stream" sample.bin sample.xz.out
else
    skip "xz is absent: peer check"
fi
head -c 30 sample.lz >short.lz
run "$TROWEL" decompress -c vsif-lzma -o short.out short.lz
assert_rc "short blob: exit 1" 1
assert_no_file "short blob: no output" short.out

finish
