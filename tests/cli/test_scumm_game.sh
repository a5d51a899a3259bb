#!/usr/bin/env bash
# SCUMM whole games (scumm-res) against tests/tools/scumm_blocks.py, an
# independent reader: every block trowel extracts has the SHA-256 the
# reader computes from the corpus game; a game with broken costumes
# converts all the others, names each broken one and exits 1.
. "${BASH_SOURCE%/*}/lib.sh"

OQ="$TROWEL_CORPUS/scumm/openquest"
R7="$TROWEL_CORPUS/scumm/road7"
[ -f "$OQ/tentacle.000" ] && [ -f "$R7/scummc7.000" ] || skip_all "no SCUMM corpus in $TROWEL_CORPUS"
have_cmd python3 || skip_all "no python3: the independent reader cannot run"
TOOLS="${TROWEL_SOURCE:-${BASH_SOURCE%/*}/../..}/tests/tools"
BLOCKS="$TOOLS/scumm_blocks.py"

# --- a game with broken costumes: every other costume is converted
mkdir two six
cp "$OQ/tentacle.000" two/
cp "$OQ/tentacle.000" six/
python3 "$BLOCKS" break-costumes "$OQ/tentacle.001" two/tentacle.001 2
python3 "$BLOCKS" break-costumes "$OQ/tentacle.001" six/tentacle.001 6
run "$TROWEL" convert two/tentacle.000 --to png -o out-two
assert_rc "two broken costumes: exit 1" 1
assert_contains "two broken: the first is named with its reason" "$ERR" \
    "room06/cost005.cost: COST: format 0x42"
assert_contains "two broken: the second too" "$ERR" "room06/cost004.cost: COST: format 0x42"
assert_contains "two broken: a count at the end" "$ERR" \
    "2 of 6 costumes could not be converted (see above); the other 4 were written"
for c in room06/cost001 room06/cost002 room06/cost003 room08/cost006; do
    assert_file_exists "two broken: $c still converted" "out-two/$c/sheet.png"
done
assert_no_file "two broken: nothing for cost005" out-two/room06/cost005
for to in png gif; do
    run "$TROWEL" convert six/tentacle.000 --to "$to" -o "out-six-$to"
    assert_rc "six broken ($to): exit 1" 1
    assert_eq "six broken ($to): five named, then the count" 6 "$(printf '%s\n' "$ERR" | wc -l)"
    assert_contains "six broken ($to): the count says -v lists all" "$ERR" \
        "6 of 6 costumes could not be converted (the first 5 are above; -v lists all)"
done
run "$TROWEL" convert -v six/tentacle.000 --to png -o out-six-v
assert_rc "six broken, -v: exit 1" 1
assert_contains "six broken, -v: the sixth is named" "$ERR" "room08/cost006.cost: COST: format 0x42"

# --- the version comes from the blocks, not from the XOR
mkdir plain index-only7 index-only6
python3 "$BLOCKS" unxor "$OQ/tentacle.000" plain/tentacle.000
python3 "$BLOCKS" unxor "$OQ/tentacle.001" plain/tentacle.001
cp plain/tentacle.000 index-only6/
cp "$R7/scummc7.000" index-only7/
check_version() { # NAME FILE VERSION WHY
    run "$TROWEL" info "$2"
    assert_rc "$1: info" 0
    assert_contains "$1: version $3" "$OUT" "version: $3"
    assert_contains "$1: what told it" "$OUT" "version_from: $4"
}
check_version "tentacle (XORed v6)" "$OQ/tentacle.000" 6 "COST costumes, PALS palettes"
check_version "tentacle data file" "$OQ/tentacle.001" 6 "COST costumes, PALS palettes"
check_version "un-XORed tentacle" plain/tentacle.000 6 "COST costumes, PALS palettes"
check_version "un-XORed tentacle data file" plain/tentacle.001 6 "COST costumes, PALS palettes"
assert_contains "un-XORed tentacle: not XORed" "$OUT" "xor69: no"
check_version "scummc7 (v7)" "$R7/scummc7.000" 7 "AKOS costumes"
check_version "un-XORed tentacle index alone" index-only6/tentacle.000 6 "AARY in the index"
check_version "scummc7 index alone" index-only7/scummc7.000 7 "MAXS of 138 bytes"

finish
