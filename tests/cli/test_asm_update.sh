#!/usr/bin/env bash
# create -t vpp ... -O asm=FILE.asm_pc: the rebuilt str2 and its updated ASM
# are written as one. Rebuilding each str2 of dlcp01_activities from its
# manifest gives the game's str2 and leaves the ASM as it was; a grown entry
# leaves exactly its new size in the ASM; a file set that does not match the
# container is refused and neither file changes.
. "${BASH_SOURCE%/*}/lib.sh"

RFG="$TROWEL_CORPUS/volition/rfg"
[ -f "$RFG/dlcp01_activities.vpp_pc" ] || skip_all "no Volition corpus at $RFG"
have_cmd jq || skip_all "jq is needed"

run "$TROWEL" extract -C d "$RFG/dlcp01_activities.vpp_pc"
assert_rc "extract dlcp01" 0
cp d/dlc_activity_containers.asm_pc a.asm_pc
chmod u+w a.asm_pc
for s in d/*.str2_pc; do
    b=$(basename "$s")
    run "$TROWEL" extract -C "x.$b" --manifest "$b.json" "$s"
    run "$TROWEL" create --manifest "$b.json" -C "x.$b" -o "$b" -O asm=a.asm_pc
    assert_rc "$b: create with -O asm=" 0
    assert_same_file "$b: the game's str2 again" "$s" "$b"
done
assert_same_file "the ASM after eight updates is the game's" d/dlc_activity_containers.asm_pc a.asm_pc

# A grown entry: its size and the str2's compressed size land in the ASM.
b=DLC_HA_08_08.str2_pc
head -c 5000 /dev/zero >>"x.$b/dlc01_08_08_129.layer_pc"
run "$TROWEL" create --manifest "$b.json" -C "x.$b" -o "$b" -O asm=a.asm_pc --force
assert_rc "grown: create" 0
run "$TROWEL" info "$b"
packed=$(printf '%s\n' "$OUT" | sed -n 's/^  compressed_size: //p')
run "$TROWEL" convert --to json -o a.json a.asm_pc
assert_json_eq "grown: cpu size" a.json '.asm.containers[1].primitives[0].cpu_size' 14060
assert_json_eq "grown: size list" a.json '.asm.containers[1].sizes[0]' 14060
assert_json_eq "grown: read size = the str2's compressed size" a.json \
    '.asm.containers[1].read_size' "$packed"
assert_json_eq "grown: base offset" a.json '.asm.containers[1].base_offset' 6144
assert_json_eq "grown: the other containers keep theirs" a.json \
    '.asm.containers[0].primitives[0].cpu_size' 13752

# A file that is not a primitive: refused, neither file changes.
cp a.asm_pc before.asm_pc
cp "$b" before.str2_pc
printf 'x' >extra.txt
run "$TROWEL" create -t vpp -O compressed=1 -O condensed=1 -O asm=a.asm_pc --force -o "$b" \
    "x.$b/dlc01_08_08_129.layer_pc" extra.txt
assert_rc "mismatch: exit 2" 2
assert_contains "mismatch: names the difference" "$ERR" \
    "the str2's files do not match ASM container 'DLC_HA_08_08': the str2's file 'extra.txt' is not a primitive of the container"
assert_same_file "mismatch: ASM unchanged" before.asm_pc a.asm_pc
assert_same_file "mismatch: str2 unchanged" before.str2_pc "$b"
assert_eq "mismatch: no temporary left" "" "$(ls -A | grep '^\.trowel' || true)"

# A str2 named after no container.
run "$TROWEL" create -t vpp -O asm=a.asm_pc -o nothing.str2_pc extra.txt
assert_rc "no container: exit 2" 2
assert_contains "no container: says so" "$ERR" "the ASM has no container named after 'nothing.str2_pc'"
assert_no_file "no container: no str2" nothing.str2_pc

finish
