#!/usr/bin/env bash
# trowel mount of an archive with archives inside (the eight .str2_pc in
# dlcp01_activities.vpp_pc): with -r each shows as ENTRY.d/ beside its
# entry, and the tree is the one `trowel extract -r` writes, compared
# file by file with cmp. A damaged nested archive gives EIO for its folder only, with a
# message; the rest stays readable and the mount unmounts cleanly.
# Skipped where /dev/fuse cannot be opened; no mount is left behind.
. "${BASH_SOURCE%/*}/lib.sh"
. "${BASH_SOURCE%/*}/mount_lib.sh"

RFG="$TROWEL_CORPUS/volition/rfg"
V="$RFG/dlcp01_activities.vpp_pc"
[ -f "$V" ] || skip_all "no Volition corpus at $RFG"

# ------------------------------------------- the whole tree, as extract -r
run "$TROWEL" extract -r -C x "$V"
assert_rc "extract -r" 0
assert_eq "extract -r writes eight nested folders" 8 "$(find x -name '*.str2_pc.d' -type d | wc -l)"
mount_fg vpp "$V" m -r
assert_eq "ls shows each str2 and its folder" \
    "$(cd x && ls)" "$(ls m)"
assert_eq "ls of a nested folder lists the str2's entries" \
    "$("$TROWEL" list x/DLC_HA_08_08.str2_pc)" \
    "$(ls m/DLC_HA_08_08.str2_pc.d)"
assert_eq "the nested entry's bytes" "" \
    "$(cmp m/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc x/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc 2>&1)"
same_tree vpp m x
walk vpp m x layer
assert_eq "vpp: nothing on stderr" "" "$(cat m.err)"
unmount_fg vpp m

# Without -r the mount is extract's tree: no folders for nested archives.
run "$TROWEL" extract -C plain "$V"
assert_rc "extract" 0
mount_fg plain "$V" pm
same_tree plain pm plain
if [ -e pm/DLC_HA_08_08.str2_pc.d ]; then fail "plain: no ENTRY.d/ without -r"; else pass; fi
unmount_fg plain pm

# ------------------------------ a damaged str2 inside: EIO for it only
run "$TROWEL" extract -C flat "$V"
assert_rc "extract the str2 files" 0
truncate -s 1000 flat/DLC_HA_08_08.str2_pc
(cd flat && "$TROWEL" create -t vpp -o ../damaged.vpp_pc -- *)
assert_eq "create a vpp holding a truncated str2" 0 $?
run "$TROWEL" extract -r -C dx damaged.vpp_pc
assert_rc "extract -r of the damaged one: exit 1" 1
mount_fg damaged damaged.vpp_pc dm --recursive
run ls dm/DLC_HA_08_08.str2_pc.d
assert_rc "ls of the damaged nested folder fails" 2
assert_contains "ls: EIO" "$ERR" "Input/output error"
assert_contains "the mount says why, naming the folder" "$(cat dm.err)" \
    "damaged.vpp_pc: DLC_HA_08_08.str2_pc.d: the packfile is cut short"
run cat dm/DLC_HA_08_08.str2_pc.d/dlc01_08_08_129.layer_pc
assert_rc "nothing inside the damaged folder" 1
assert_same_file "the truncated str2 itself reads as stored" \
    dm/DLC_HA_08_08.str2_pc flat/DLC_HA_08_08.str2_pc
# Everything extract -r wrote (all but the damaged str2's entries) reads the same.
rm -rf dx/DLC_HA_08_08.str2_pc.d
(cd dm && find . -path ./.trowel -prune -o -path ./DLC_HA_08_08.str2_pc.d -prune -o -print | sort) >dm.list
(cd dx && find . -print | sort) >dx.list
assert_eq "damaged: the other folders and files are all there" "$(cat dx.list)" "$(cat dm.list)"
bad=""
while IFS= read -r f; do
    cmp -s "dm/$f" "dx/$f" || bad="$bad $f"
done < <(cd dx && find . -type f -printf '%P\n')
assert_eq "damaged: the rest reads as extract -r wrote it" "" "$bad"
unmount_fg damaged dm

finish
