#!/usr/bin/env bash
# create -r, the inverse of extract -r: each nested archive X is rebuilt
# from the X.d/ folder extract -r wrote and stored under X, in the order and
# layout of the record 'extract -r --manifest' keeps (or of the file X), and
# the ASM beside a rebuilt .str2_pc is updated. Without -r such a tree is
# refused, never stored flat. The game's dlcp01_activities.vpp_pc (eight
# str2_pc and their ASM) comes back byte for byte, and so does a packfile
# holding it (two levels of nesting).
. "${BASH_SOURCE%/*}/lib.sh"

RFG="$TROWEL_CORPUS/volition/rfg"
V="$RFG/dlcp01_activities.vpp_pc"
[ -f "$V" ] || skip_all "no Volition corpus at $RFG"
have_cmd jq || skip_all "jq is needed"

# ---- extract -r --manifest records each nested archive's manifest.
run "$TROWEL" extract -r --manifest m.json -C t "$V"
assert_rc "extract -r --manifest" 0
assert_json_eq "manifest: eight nested records" m.json '.nested | length' 8
assert_json_eq "manifest: a record's format" m.json '.nested["DLC_HA_08_08.str2_pc"].format' vpp
assert_json_eq "manifest: a record's entries" m.json \
    '.nested["DLC_HA_08_08.str2_pc"].entries[0].name' dlc01_08_08_129.layer_pc
assert_json_eq "manifest: a record's layout" m.json '.nested["DLC_HA_08_08.str2_pc"].condensed' true
run "$TROWEL" extract --manifest plain.json -C t2 "$V"
assert_json_eq "without -r: no record" plain.json '.nested' MISSING

# ---- Without -r the tree is refused, naming create -r; nothing written.
run "$TROWEL" create -t vpp -C t -o flat.vpp_pc .
assert_rc "no -r: exit 2" 2
assert_contains "no -r: names the folder" "$ERR" ".str2_pc.d: holds the entries of the nested archive"
assert_contains "no -r: says what to do" "$ERR" "use 'create -r' to rebuild"
assert_no_file "no -r: no output" flat.vpp_pc
run "$TROWEL" create --manifest m.json -C t -o flat.vpp_pc
assert_rc "no -r, manifest entries: exit 2" 2
assert_contains "no -r, manifest entries: says what to do" "$ERR" "create -r"
assert_no_file "no -r, manifest entries: no output" flat.vpp_pc
# Leaving the folders out is a choice the user can make.
run "$TROWEL" create -t vpp -C t --exclude '*.d' -o outer-only.vpp_pc .
assert_rc "--exclude '*.d': allowed" 0
run "$TROWEL" list outer-only.vpp_pc
assert_eq "--exclude '*.d': the nine outer entries" 9 "$(printf '%s\n' "$OUT" | wc -l)"

# ---- create -r gives the archive back, byte for byte.
mkdir tmp
TMPDIR=$PWD/tmp run "$TROWEL" create -r --manifest m.json -C t -o back.vpp_pc
assert_rc "create -r" 0
assert_same_file "create -r: the game's packfile again" "$V" back.vpp_pc
assert_eq "create -r: no temporary left" "" "$(ls -A tmp)"
assert_eq "create -r, nothing changed: quiet" "" "$ERR"

# The str2 files come from their folders, not from the copies beside them:
# with those gone, the records rebuild them just the same.
mkdir gone
cp -r t/. gone/
rm gone/*.str2_pc
run "$TROWEL" create -r --manifest m.json -C gone -o gone.vpp_pc
assert_rc "create -r, str2 files removed: exit 0" 0
assert_same_file "create -r, str2 files removed: the same packfile" "$V" gone.vpp_pc
# Without a record nor the file, there is no way to know the layout.
run "$TROWEL" create -r -t vpp -C gone -o nothing.vpp_pc .
assert_rc "no record, no file: exit 2" 2
assert_contains "no record, no file: says why" "$ERR" \
    ".str2_pc': it is not beside its folder, and no manifest from 'extract -r --manifest' describes it"
assert_no_file "no record, no file: no output" nothing.vpp_pc

# A file X that is no archive, and no record: refused the same way.
mkdir broken
cp -r t/. broken/
printf 'not a packfile' >broken/DLC_HA_08_08.str2_pc
run "$TROWEL" create -r -t vpp -C broken -o broken.vpp_pc .
assert_rc "X no archive, no record: exit 2" 2
assert_contains "X no archive, no record: says why" "$ERR" \
    "cannot tell how to rebuild 'DLC_HA_08_08.str2_pc': it does not open as an archive with a manifest"
assert_no_file "X no archive, no record: no output" broken.vpp_pc
# With the record it does not matter what the file holds.
run "$TROWEL" create -r --manifest m.json -C broken -o fixed.vpp_pc
assert_same_file "X no archive, with the record: the game's packfile" "$V" fixed.vpp_pc
# -v: the ASM checked and unchanged is told.
run "$TROWEL" create -r -v --manifest m.json -C t -o verbose.vpp_pc
assert_contains "-v, nothing changed: the ASM said unchanged" "$ERR" \
    "t/dlc_activity_containers.asm_pc: ASM unchanged (its containers already matched)"

# Without --manifest the layout of each nested archive is read from the
# file X beside its folder: each str2 is the game's again.
run "$TROWEL" create -r -t vpp -C t -o byname.vpp_pc .
assert_rc "create -r without manifest" 0
run "$TROWEL" extract -C byname byname.vpp_pc
for s in t/*.str2_pc; do
    assert_same_file "without manifest: $(basename "$s")" "$s" "byname/$(basename "$s")"
done

# ---- An edit inside X.d/ lands in the rebuilt X, and its ASM follows.
cp -r t edit
L=edit/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc
head -c 5000 /dev/zero >>"$L"
run "$TROWEL" create -r --manifest m.json -C edit -o edited.vpp_pc
assert_rc "edited: create -r" 0
assert_contains "edited: says the ASM changed" "$ERR" \
    "dlc_activity_containers.asm_pc: ASM updated (the copy stored in edited.vpp_pc), 1 container: DLC_HA_08_08 (1 primitive resized, size 9060 -> 14060"
run "$TROWEL" verify edited.vpp_pc
assert_rc "edited: verify" 0
run "$TROWEL" extract -r -C ed edited.vpp_pc
assert_same_file "edited: the nested entry holds the edit" "$L" \
    ed/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc
run "$TROWEL" info ed/DLC_HA_08_08.str2_pc
packed=$(printf '%s\n' "$OUT" | sed -n 's/^  compressed_size: //p')
run "$TROWEL" convert --to json -o ed.json ed/dlc_activity_containers.asm_pc
assert_json_eq "edited ASM: cpu size" ed.json '.asm.containers[1].primitives[0].cpu_size' 14060
assert_json_eq "edited ASM: read size = the new str2's" ed.json '.asm.containers[1].read_size' "$packed"
assert_json_eq "edited ASM: the others keep theirs" ed.json \
    '.asm.containers[0].primitives[0].cpu_size' 13752
# The same ASM as 'create -O asm=' gives for that str2.
cp t/dlc_activity_containers.asm_pc by_hand.asm_pc
chmod u+w by_hand.asm_pc
jq '.nested["DLC_HA_08_08.str2_pc"]' m.json >ha.json
run "$TROWEL" create --manifest ha.json -C edit/DLC_HA_08_08.str2_pc.d -o DLC_HA_08_08.str2_pc \
    -O asm=by_hand.asm_pc
assert_rc "by hand: create -O asm=" 0
assert_same_file "edited: the ASM -O asm= makes" by_hand.asm_pc ed/dlc_activity_containers.asm_pc
assert_same_file "edited: the str2 -O asm= makes" DLC_HA_08_08.str2_pc ed/DLC_HA_08_08.str2_pc

# ---- Two levels: a packfile holding dlcp01_activities.vpp_pc.
mkdir src
cp "$V" src/dlcp01_activities.vpp_pc
printf 'a note\n' >src/note.txt
run "$TROWEL" create -t vpp -O version=3 -C src -o outer.vpp_pc .
assert_rc "outer: create" 0
run "$TROWEL" extract -r --manifest outer.json -C o outer.vpp_pc
assert_rc "outer: extract -r" 0
assert_file_exists "outer: two levels down" \
    o/dlcp01_activities.vpp_pc.d/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc
assert_json_eq "outer: record of a record" outer.json \
    '.nested["dlcp01_activities.vpp_pc"].nested["DLC_HA_08_08.str2_pc"].format' vpp
rm o/dlcp01_activities.vpp_pc o/dlcp01_activities.vpp_pc.d/*.str2_pc
run "$TROWEL" create -r --manifest outer.json -C o -o outer2.vpp_pc
assert_rc "outer: create -r" 0
assert_same_file "outer: the same bytes, two levels rebuilt" outer.vpp_pc outer2.vpp_pc
run "$TROWEL" create -r -v --manifest outer.json -C o -o outer3.vpp_pc
assert_contains "outer -v: nested names as list -r shows them" "$OUT" \
    "dlcp01_activities.vpp_pc/DLC_HA_08_08.str2_pc/dlc01_08_08_129.layer_pc"

finish
