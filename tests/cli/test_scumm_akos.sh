#!/usr/bin/env bash
# AKOS costumes beyond the corpus costume itself: the AKSQ walker and
# disassembler stay inside the block (a command whose operands end the
# block: santa.akos with AKSQ = C0 A3 05, issue 22.1); codec 16 cels with
# every kind of code, repeats longer than 127 pixels included, decode pixel
# for pixel as tests/tools/akos_codec16.py (written from the notes) does.
. "${BASH_SOURCE%/*}/lib.sh"

R7="$TROWEL_CORPUS/scumm/road7"
[ -f "$R7/santa.akos" ] || skip_all "no SCUMM corpus in $TROWEL_CORPUS"
have_cmd python3 || skip_all "no python3: the costumes under test are not made"
TOOLS="${TROWEL_SOURCE:-${BASH_SOURCE%/*}/../..}/tests/tools"

# --- AKSQ: C0A3 (start-talkie-in-var) is 3 bytes and has no jump target
python3 "$TOOLS/akos_replace_block.py" "$R7/santa.akos" c0a3.akos AKSQ C0A305
run "$TROWEL" convert c0a3.akos --to json -o c0a3.json
assert_rc "C0A3 at the end of AKSQ: converts" 0
assert_json_eq "C0A3: opcode" c0a3.json '.structure.aksq[0].op' C0A3
assert_json_eq "C0A3: its one operand" c0a3.json '.structure.aksq[0].operands' '[5]'
assert_json_eq "C0A3: no jump target read past the block" c0a3.json \
    '.structure.aksq[0].target' MISSING
assert_json_eq "C0A3: nothing after it" c0a3.json '.structure.aksq[1]' MISSING
for to in png gif; do
    rm -rf "out-$to"
    run "$TROWEL" convert c0a3.akos --to "$to" -o "out-$to"
    assert_rc "C0A3 at the end of AKSQ: --to $to" 0
done

# A jump command cut by the end of the block (C0 A1 and one operand byte):
# not a command at all, reported as cut, nothing read past it.
python3 "$TOOLS/akos_replace_block.py" "$R7/santa.akos" c0a1.akos AKSQ C0A105
run "$TROWEL" convert c0a1.akos --to json -o c0a1.json
assert_rc "C0A1 cut by the end of AKSQ: converts" 0
assert_json_eq "C0A1 cut: reported" c0a1.json '.structure.aksq[0].error' "unknown or cut opcode"
assert_json_eq "C0A1 cut: its bytes" c0a1.json '.structure.aksq[0].bytes' '[192,161,5]'

# --- codec 16: every code, checked pixel by pixel against the tool's decoder
python3 "$TOOLS/akos_codec16.py" make "$R7/santa.akos" c16.akos c16.hex
run "$TROWEL" convert c16.akos --to png -o c16
assert_rc "codec 16 cel: converts" 0
assert_json_eq "codec 16 cel: 20 wide" c16/costume.json '.pictures[0].w' 20
assert_eq "codec 16 cel: the pixels the independent decoder gives" "$(cat c16.hex)" \
    "$(python3 "$TOOLS/akos_codec16.py" png c16/pic_000.png)"

# --- a short RGBS (96 colours, not 256) is still the costume's palette
rgbs=$(python3 -c 'print(bytes((i * 5 + 1) % 256 for i in range(288)).hex())')
python3 "$TOOLS/akos_replace_block.py" "$R7/santa.akos" rgbs.akos RGBS "$rgbs"
run "$TROWEL" convert rgbs.akos --to png -o rgbs
assert_rc "short RGBS: converts" 0
assert_eq "short RGBS: no stand-in warning" "" "$ERR"
assert_json_eq "short RGBS: said" rgbs/costume.json .palette_from "the costume's RGBS block"
akpl1=$(json_get rgbs/costume.json '.palette[1]')
want=$(python3 -c 'import sys; k = int(sys.argv[1])
print("%02x%02x%02x" % tuple((i * 5 + 1) % 256 for i in range(3 * k, 3 * k + 3)))' "$akpl1")
assert_json_eq "short RGBS: colour 1 is RGBS entry AKPL[1] ($akpl1)" rgbs/costume.json \
    '.palette_rgb[1]' "$want"

finish
