#!/usr/bin/env bash
# list -l ends with totals (entries, size, packed size) when it shows two
# entries or more; for a format that converts entries on extraction
# (scenes.image writes text VCDs) a WRITTEN column gives the bytes extract
# writes, and list --json adds "written_size" without touching its keys.
. "${BASH_SOURCE%/*}/lib.sh"

C="$TROWEL_CORPUS"
IMG="$C/valve/ez2/scenes/scenes.image"
VPP="$C/volition/rfg/dlcp01_activities.vpp_pc"
[ -f "$IMG" ] && [ -f "$VPP" ] || skip_all "corpus absent"

# ---- totals of a packfile: the sums of the columns above them
run "$TROWEL" list -l "$VPP"
assert_rc "list -l vpp: exit 0" 0
rows=$(printf '%s\n' "$OUT" | sed '1d' | sed '/^-*$/,$d')
size=$(printf '%s\n' "$rows" | awk '{ s += $1 } END { print s }')
packed=$(printf '%s\n' "$rows" | awk '{ s += $2 } END { print s }')
assert_eq "list -l vpp: a line of dashes before the totals" 1 \
    "$(printf '%s\n' "$OUT" | grep -c '^---*$')"
assert_eq "list -l vpp: the totals line" "$size $packed 9 entries" \
    "$(printf '%s\n' "$OUT" | tail -n 1 | tr -s ' ' | sed 's/^ //')"
run "$TROWEL" list -l "$VPP" 'dlc01_dm*'
assert_eq "list -l PATTERN: totals of what is shown" "3 entries" \
    "$(printf '%s\n' "$OUT" | tail -n 1 | awk '{ print $3, $4 }')"
run "$TROWEL" list -l "$VPP" dlc01_dm_01.str2_pc
assert_eq "list -l of one entry: no totals" 2 "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')"
run "$TROWEL" list -l -r "$VPP"
assert_contains "list -l -r: totals of every row, nested ones too" \
    "$(printf '%s\n' "$OUT" | tail -n 1)" "$(($(printf '%s\n' "$OUT" | sed '1d' | sed '/^-*$/,$d' | wc -l))) entries"
run "$TROWEL" list "$VPP"
assert_not_contains "list without -l: no totals" "$OUT" "entries"

# ---- scenes.image: WRITTEN is what extract writes
run "$TROWEL" list -l "$IMG"
assert_eq "list -l scenes.image: the heading" "SIZE PACKED WRITTEN OFFSET METHOD NAME" \
    "$(printf '%s\n' "$OUT" | head -n 1 | tr -s ' ' | sed 's/^ //')"
printf '%s\n' "$OUT" | sed '1d' | sed '/^-*$/,$d' | awk '{ print $6, $3 }' | sort >listed.txt
"$TROWEL" extract -q "$IMG" -C out
(cd out && for f in *; do printf '%s %s\n' "$f" "$(wc -c <"$f" | tr -d ' ')"; done) | sort >written.txt
assert_same_file "WRITTEN: each entry's size as extract writes it" written.txt listed.txt
total=$(awk '{ s += $2 } END { print s }' written.txt)
assert_eq "list -l scenes.image: the WRITTEN total" "$total" \
    "$(printf '%s\n' "$OUT" | tail -n 1 | awk '{ print $3 }')"

# ---- list --json: the keys stay, written_size is added
run "$TROWEL" list --json "$IMG"
printf '%s' "$OUT" >list.json
if have_cmd jq; then
    assert_eq "list --json: the contract's keys are still there" "true" \
        "$(jq '[.entries[] | has("name") and has("size") and has("packed_size") and has("offset")] | all' list.json)"
    assert_eq "list --json: written_size is what extract writes" "$(awk '{ print $2 }' written.txt | sort -n | tr '\n' ' ')" \
        "$(jq -r '.entries[].written_size' list.json | sort -n | tr '\n' ' ')"
    run "$TROWEL" list --json "$VPP"
    assert_eq "list --json vpp: no written_size (entries are written as stored)" "false" \
        "$(printf '%s' "$OUT" | jq '[.entries[] | has("written_size")] | any')"
else
    skip "jq absent: list --json checks"
fi

# ---- an entry that cannot be decoded: '?', and so is the total
cp "$IMG" cor.image
chmod u+w cor.image
# 16 bytes of 0xff inside the LZMA data of the first scene (at 0x30d4)
printf '\377%.0s' $(seq 16) | dd of=cor.image bs=1 seek=12530 conv=notrunc status=none
run "$TROWEL" list -l cor.image
assert_eq "a corrupt scene: WRITTEN is '?'" "? 0049e643.vcd" \
    "$(printf '%s\n' "$OUT" | awk '$6 == "0049e643.vcd" { print $3, $6 }')"
assert_eq "a corrupt scene: the WRITTEN total is '?'" "? 51 entries" \
    "$(printf '%s\n' "$OUT" | tail -n 1 | awk '{ print $3, $4, $5 }')"
run "$TROWEL" list --json cor.image
if have_cmd jq; then
    assert_eq "a corrupt scene: written_size null in JSON" null \
        "$(printf '%s' "$OUT" | jq '.entries[] | select(.name == "0049e643.vcd") | .written_size')"
fi

finish
