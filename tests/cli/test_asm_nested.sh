#!/usr/bin/env bash
# Volition ASM files on the command line (info, list, convert --to json,
# create -t asm --manifest back to the same bytes, verify) and --recursive
# list/extract of the str2 files inside dlcp01_activities.vpp_pc, a damaged
# nested archive included.
. "${BASH_SOURCE%/*}/lib.sh"

RFG="$TROWEL_CORPUS/volition/rfg"
SR4="$TROWEL_CORPUS/volition/sr4"
[ -f "$RFG/dlcp01_activities.vpp_pc" ] || skip_all "no Volition corpus at $RFG"
have_cmd jq || skip_all "jq is needed"

# ---- ASM: JSON and back, byte for byte.
for f in "$RFG/cloth_containers.asm_pc" "$RFG/dlc_activity_containers.asm_pc" \
    "$SR4/template_customize_item.asm_pc"; do
    b=$(basename "$f" .asm_pc)
    run "$TROWEL" convert --to json -o "$b.json" "$f"
    assert_rc "convert $b" 0
    run "$TROWEL" create --manifest "$b.json" -o "$b.asm_pc"
    assert_rc "create $b from its JSON (format from the JSON)" 0
    assert_same_file "$b: same bytes" "$f" "$b.asm_pc"
    run "$TROWEL" verify "$f"
    assert_rc "verify $b" 0
done
assert_json_eq "json: v5" dlc_activity_containers.json '.asm.version' 5
assert_json_eq "json: read size" dlc_activity_containers.json '.asm.containers[0].read_size' 3715
assert_json_eq "json: primitive" dlc_activity_containers.json \
    '.asm.containers[0].primitives[0].name' dlc01_07_08_128.layer_pc
assert_json_eq "json: v12 remaps" template_customize_item.json '.asm.allocators | length' 44

run "$TROWEL" info "$RFG/dlc_activity_containers.asm_pc"
assert_contains "info: format" "$OUT" ": asm"
assert_contains "info: containers" "$OUT" "containers: 8"
run "$TROWEL" list -l "$RFG/dlc_activity_containers.asm_pc" 'DLC_HA*'
assert_contains "list -l: a container" "$OUT" "9060    2813  0x1800  container  DLC_HA_08_08"

# A JSON with a field out of range: bad input (not a usage error), nothing written.
jq '.asm.containers[0].primitives[0].cpu_size = -1' dlc_activity_containers.json >bad.json
run "$TROWEL" create --manifest bad.json -o bad.asm_pc
assert_rc "bad JSON: bad input, exit 1" 1
assert_contains "bad JSON: names the field" "$ERR" \
    "asm JSON: containers[0].primitives[0].cpu_size must be 0 to 4294967295"
assert_no_file "bad JSON: no output" bad.asm_pc
run "$TROWEL" extract -C asmout "$RFG/dlc_activity_containers.asm_pc"
assert_rc "extract of an ASM: nothing to extract" 1
assert_contains "extract of an ASM: says why" "$ERR" "holds no data"

# ---- --recursive
V="$RFG/dlcp01_activities.vpp_pc"
run "$TROWEL" list -r "$V"
assert_rc "list -r" 0
assert_eq "list -r: 9 + 8 nested entries" 17 "$(printf '%s\n' "$OUT" | wc -l)"
assert_contains "list -r: a nested path" "$OUT" "DLC_HA_08_08.str2_pc/dlc01_08_08_129.layer_pc"
run "$TROWEL" list -r --json "$V" '*/*'
printf '%s\n' "$OUT" >r.json
assert_json_eq "list -r --json: only nested (pattern on paths)" r.json '.entries | length' 8
assert_json_eq "list -r --json: nested size" r.json '.entries[1].size' 9060
assert_json_eq "list -r --json: nested name" r.json '.entries[1].name' \
    DLC_HA_08_08.str2_pc/dlc01_08_08_129.layer_pc

run "$TROWEL" extract -r -C rout "$V"
assert_rc "extract -r" 0
assert_file_exists "extract -r: the str2 itself" rout/DLC_HA_08_08.str2_pc
assert_file_exists "extract -r: its entry under .d/" rout/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc
run "$TROWEL" extract -C single rout/DLC_HA_08_08.str2_pc
assert_same_file "extract -r: nested bytes = extracting the str2 on disk" \
    single/dlc01_08_08_129.layer_pc rout/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc
assert_eq "extract -r: files written" 17 "$(find rout -type f | wc -l)"

# PATTERNs with -r: a nested path as list -r shows it, or as it is written;
# an outer archive entry they choose brings its whole tree.
run "$TROWEL" extract -r -C pout "$V" 'DLC_HA_08_08.str2_pc/*129*' '*.d/dlc01_07_08_128.layer_pc'
assert_rc "extract -r PATTERN: nested paths" 0
assert_eq "extract -r PATTERN: just the two nested entries" \
    "pout/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc
pout/dlc_ORaid_07_08_Level_1.str2_pc.d/dlc01_07_08_128.layer_pc" "$(find pout -type f | LC_ALL=C sort)"
assert_same_file "extract -r PATTERN: nested bytes" \
    rout/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc pout/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc
run "$TROWEL" extract -r -C qout "$V" 'DLC_HA_08_08.str2_pc'
assert_rc "extract -r PATTERN: an archive entry" 0
assert_eq "extract -r PATTERN: the str2 and its entry" \
    "qout/DLC_HA_08_08.str2_pc
qout/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc" "$(find qout -type f | LC_ALL=C sort)"
run "$TROWEL" extract -r -C nout "$V" '*/nothing*'
assert_rc "extract -r PATTERN: matching nothing" 1
assert_contains "extract -r PATTERN: matching nothing says so" "$ERR" "no entry matches '*/nothing*'"

# A damaged str2 inside: the outer entries are written, the nested one is
# reported, exit 1, and nothing of it is left.
cp "$V" damaged.vpp_pc
chmod u+w damaged.vpp_pc
# The first str2 starts at 0x1800; its file count (at +0x154) becomes huge.
printf '\377\377\377\177' | dd of=damaged.vpp_pc bs=1 seek=$((0x1800 + 0x154)) conv=notrunc 2>/dev/null
run "$TROWEL" extract -r -C dout damaged.vpp_pc
assert_rc "damaged nested: exit 1" 1
assert_contains "damaged nested: names the entry" "$ERR" "dlc_ORaid_07_08_Level_1.str2_pc"
assert_file_exists "damaged nested: the outer entry is written" dout/dlc_ORaid_07_08_Level_1.str2_pc
assert_no_file "damaged nested: no folder for it" dout/dlc_ORaid_07_08_Level_1.str2_pc.d
assert_file_exists "damaged nested: the others go on" dout/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc
run "$TROWEL" list -r damaged.vpp_pc
assert_rc "damaged nested: list -r exit 1" 1

# With PATTERNs, a damaged nested archive nobody chose is searched quietly:
# it fails neither the run nor says anything; one that is chosen still does.
run "$TROWEL" extract -r -C pdout damaged.vpp_pc 'dlc_activity_*.asm_pc' '*/dlc01_08_08_129.layer_pc'
assert_rc "damaged nested, not chosen: exit 0" 0
assert_eq "damaged nested, not chosen: silent" "" "$ERR"
assert_eq "damaged nested, not chosen: what the PATTERNs name" \
    "pdout/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc
pdout/dlc_activity_containers.asm_pc" "$(find pdout -type f | LC_ALL=C sort)"
run "$TROWEL" extract -r -C pcout damaged.vpp_pc 'dlc_ORaid_07_08_Level_1.str2_pc'
assert_rc "damaged nested, chosen: exit 1" 1
assert_contains "damaged nested, chosen: named" "$ERR" "dlc_ORaid_07_08_Level_1.str2_pc"

# A PATTERN for an archive entry and one for an entry inside it are both
# used (neither is reported as matching nothing).
run "$TROWEL" extract -r -C both "$V" DLC_HA_08_08.str2_pc 'DLC_HA_08_08.str2_pc/*.layer_pc' \
    'DLC_HA_08_08.str2_pc.d/*.layer_pc'
assert_rc "overlapping PATTERNs: exit 0" 0
assert_eq "overlapping PATTERNs: no complaint" "" "$ERR"

finish
