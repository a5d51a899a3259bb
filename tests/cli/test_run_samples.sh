#!/usr/bin/env bash
# `make run` (scripts/run-samples.sh) works: every family's samples are made,
# read back and summarised, and the summary names each of them.
. "${BASH_SOURCE%/*}/lib.sh"

TROWEL_SAMPLES="$WORK/samples" run bash "$TROWEL_SOURCE/scripts/run-samples.sh" "$(dirname "$TROWEL")"
assert_rc "make run: exit 0" 0
# list --names reports how many names it recovered on stderr, and the merge
# warns that outro.vcd matched no scene of its base (it is added), and
# create -O asm= says what it changed in the ASM; nothing else may appear
# there.
assert_eq "make run: nothing on stderr but name counts" "" \
  "$(printf '%s\n' "$ERR" | grep -v -E -e '^trowel: [^:]+: [0-9]+ of [0-9]+ names recovered$' \
     -e '^trowel: valve/merged.image: warning: scenes/outro.vcd: no scene of the base image valve/scenes.image has this name: added$' \
     -e '^trowel: asm/items.asm_pc: ASM updated, 1 container: items \(2 primitives resized, size 0 -> [0-9]+, read size 0 -> [0-9]+\)$' || true)"
assert_contains "make run: the merged image names recovered" "$ERR" \
  "valve/merged.image: 4 of 4 names recovered"
for f in szdd/MANUAL.TX_ valve/scenes.image valve/merged.image cine/png/room.png \
    cine/wav/boom.wav cine/json/fw-save.json cine/vol/VOL.CNF scumm/MINI.000 scumm/MINI.001; do
    assert_contains "summary lists $f" "$OUT" "  $f "
    assert_file_exists "$f made" "samples/$f"
done
for f in asm/dlc_activity.asm_pc asm/items.asm_pc asm/items.str2_pc; do
    assert_contains "summary lists $f" "$OUT" "  $f "
    assert_file_exists "$f made" "samples/$f"
done
assert_same_file "make run: the shipped ASM rebuilt from its JSON" \
    "$TROWEL_SOURCE/fuzz/corpus/asm/v5_dlc_activity.asm_pc" samples/asm/dlc_activity.asm_pc
rows=$(printf '%s\n' "$OUT" | grep -A2 '^\$ trowel list -l asm/items.asm_pc$' | grep ' container  items$')
assert_eq "make run: the ASM container before its str2 is built" \
    "   0       0     0x0  container  items" "$(head -n 1 <<<"$rows")"
assert_contains "make run: after, it starts where the str2's data does" "$(tail -n 1 <<<"$rows")" \
    "  0x1800  container  items"
assert_contains "summary: the ASM sample" "$OUT" "Volition: a shipped RFG ASM to JSON and back byte for byte"
assert_contains "summary: the merge" "$OUT" "1 edited + 1 new merged (4 scenes)"
assert_contains "summary: the SCUMM sample" "$OUT" "SCUMM: a 1-room game read through the xor69 filter, 12 blocks extracted decrypted"
assert_contains "make run: info shows the filter chain" "$OUT" "scumm/MINI.001: xor69 → scumm-res"
assert_contains "summary: all read back" "$OUT" "Every sample read back to identical bytes."
if [ -x /usr/games/scummvm-tools-cli ] || have_cmd scummvm-tools-cli; then
    assert_contains "extract_cine read the part files" "$OUT" "read PART01 and VOL.CNF back"
else
    skip "scummvm-tools not installed: make run's extract_cine check"
fi

finish
