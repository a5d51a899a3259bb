#!/usr/bin/env bash
# convert's outputs: the target comes from --to, else from OUT's extension,
# which must name a target of the input's format (else exit 2, listing
# them); a .png/.gif OUT gives one file where the target writes a folder
# (the sheet, the first animation); several INPUTs go each to its own
# output under -o DIR.
. "${BASH_SOURCE%/*}/lib.sh"

OQ="$TROWEL_CORPUS/scumm/openquest"
EZ2="$TROWEL_CORPUS/valve/ez2/scenes"
[ -f "$OQ/cube.cost" ] && [ -f "$EZ2/office_wake.vcd" ] || skip_all "corpus absent"

# ---- the target from OUT's extension
for ext in jpg tiff JPEG; do
    run "$TROWEL" convert "$OQ/cube.cost" -o "cube.$ext"
    assert_rc "-o cube.$ext: a usage error" 2
    assert_contains "-o cube.$ext: lists the format's targets" "$ERR" \
        "'.$(printf %s "$ext" | tr A-Z a-z)' names no target of scumm-cost (its targets: json, png, gif)"
    assert_no_file "-o cube.$ext: nothing written" "cube.$ext"
done
run "$TROWEL" convert "$EZ2/office_wake.vcd" -o wake.bvcd
assert_rc "-o wake.bvcd: the bvcd target" 0
run "$TROWEL" convert "$EZ2/office_wake.vcd" --to bvcd -o wake2.bvcd
assert_same_file "-o wake.bvcd is --to bvcd" wake2.bvcd wake.bvcd
run "$TROWEL" convert "$EZ2/office_wake.vcd" -o wake.png
assert_rc "-o wake.png for a VCD (no png target): a usage error" 2
assert_contains "-o wake.png: the VCD's targets" "$ERR" "its targets: json, vcd, bvcd, json-full"
run "$TROWEL" convert "$EZ2/office_wake.vcd" -o wake.JSON
assert_rc "-o wake.JSON: json (any case)" 0
run "$TROWEL" convert "$EZ2/office_wake.vcd" -o wake-noext
assert_rc "-o without an extension: json" 0
assert_same_file "-o without an extension: json" wake.JSON wake-noext

# ---- a folder target and a .png/.gif name: one file
run "$TROWEL" convert "$OQ/cube.cost" --to png -o cube.d
assert_rc "--to png -o cube.d: the folder" 0
assert_file_exists "the folder has the sheet" cube.d/sheet.png
run "$TROWEL" convert "$OQ/cube.cost" -o cube.png
assert_rc "-o cube.png: one file" 0
if [ -f cube.png ] && [ ! -d cube.png ]; then pass; else fail "-o cube.png is a file, not a folder"; fi
assert_same_file "-o cube.png: the folder's sheet" cube.d/sheet.png cube.png
assert_eq "-o cube.png: no scratch folder left" "" "$(ls -a | grep tmp-)"
run "$TROWEL" convert "$OQ/cube.cost" --to png -o cube.png
assert_rc "-o cube.png again: refused" 1
assert_contains "-o cube.png again: exists" "$ERR" "exists"
run "$TROWEL" convert "$OQ/cube.cost" --to gif -o gifs
run "$TROWEL" convert "$OQ/cube.cost" -o cube.gif
assert_rc "-o cube.gif: one file" 0
first=$(ls gifs | sort | head -n 1)
assert_same_file "-o cube.gif: the first animation" "gifs/$first" cube.gif
assert_contains "-o cube.gif: says which of how many" "$ERR" \
    "the first of $(ls gifs | wc -l | tr -d ' ') animations ($first)"
run "$TROWEL" convert "$OQ/cube.cost" --to png -o other.gif
assert_rc "--to png -o other.gif: a usage error" 2
assert_no_file "--to png -o other.gif: nothing" other.gif
if [ -f "$OQ/tentacle.000" ]; then
    run "$TROWEL" convert "$OQ/tentacle.000" -o game.png
    assert_rc "a whole game to one .png: a usage error" 2
    assert_contains "a whole game to one .png: says how to choose" "$ERR" "-O costume=N"
    assert_no_file "a whole game to one .png: nothing" game.png
    assert_eq "a whole game to one .png: no scratch folder left" "" "$(ls -a | grep tmp-)"
else
    skip "tentacle.000 absent"
fi

# ---- several INPUTs
run "$TROWEL" convert "$OQ/cube.cost" "$OQ/zif.cost" "$EZ2/office_wake.vcd" -o many
assert_rc "three INPUTs" 0
assert_eq "three INPUTs: one output each" \
    $'cube.cost.json\noffice_wake.vcd.json\nzif.cost.json' "$(ls many)"
"$TROWEL" convert "$OQ/zif.cost" -o zif.json
assert_same_file "each output is that INPUT's alone" zif.json many/zif.cost.json
run "$TROWEL" convert --to png "$OQ/cube.cost" "$OQ/zif.cost" -o many
assert_rc "two INPUTs to a folder target" 0
assert_same_file "a folder target: NAME.d" cube.d/sheet.png many/cube.cost.d/sheet.png
run "$TROWEL" convert "$OQ/cube.cost" "$OQ/zif.cost"
assert_rc "several INPUTs without -o: a usage error" 2
touch afile
run "$TROWEL" convert "$OQ/cube.cost" "$OQ/zif.cost" -o afile
assert_rc "several INPUTs, -o a file: a usage error" 2
printf 'junk' >junk.bin
run "$TROWEL" convert "$OQ/cube.cost" junk.bin -o mixed
assert_rc "several INPUTs, one bad: exit 1" 1
assert_file_exists "several INPUTs, one bad: the others are done" mixed/cube.cost.json

finish
