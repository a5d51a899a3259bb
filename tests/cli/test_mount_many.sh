#!/usr/bin/env bash
# trowel mount of an archive of 30,000 entries (a condensed VPP made by
# trowel create): building the tree costs time linear in the entries (a
# folder's children are found through a hash index while it is built; a
# scan per entry took over 10 s here for 30,000), so mounting and listing
# it take a fraction of a second of CPU. ls and find count every entry;
# stat and cat give the bytes of a few of them.
# Skipped where /dev/fuse cannot be opened; no mount is left behind.
. "${BASH_SOURCE%/*}/lib.sh"
. "${BASH_SOURCE%/*}/mount_lib.sh"

N=30000
mkdir src
awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++) { f = sprintf("src/e%05d.txt", i); printf "entry %d\n", i > f; close(f) } }'
assert_eq "the $N sources are made" "$N" "$(find src -type f | wc -l)"
(cd src && "$TROWEL" create -q -t vpp -O condensed=1 -o ../many.vpp_pc -- *)
assert_eq "create -t vpp of $N entries" 0 $?

mount_fg many many.vpp_pc m
assert_eq "ls lists every entry (and nothing else: no .trowel without --views)" "$N" \
    "$(ls -A m | wc -l)"
assert_eq "the first entry's bytes" "entry 0" "$(cat m/e00000.txt)"
assert_eq "an entry in the middle" "entry 12345" "$(cat m/e12345.txt)"
assert_eq "the last entry" "entry 29999" "$(cat m/e29999.txt)"
assert_eq "stat gives the size" 12 "$(stat -c %s m/e29999.txt)"
run cat m/e30000.txt
assert_rc "a name past the last is not there" 1
assert_contains "cat: no such file" "$ERR" "No such file or directory"
# The CPU time of the mount so far (the tree, listing, a few lookups), not
# the wall time, which a busy machine stretches: 0.06 s here, over 10 s
# with a scan per entry.
cpu_ms=unknown
if read -r -a stat 2>/dev/null <"/proc/$FG_PID/stat"; then
    cpu_ms=$(((stat[13] + stat[14]) * 1000 / $(getconf CLK_TCK)))
fi
if [ "$cpu_ms" != unknown ] && [ "$cpu_ms" -lt 1000 ]; then
    pass
else
    fail "building and listing a tree of $N entries takes under 1 s of CPU" "it took $cpu_ms ms"
fi
assert_eq "find sees every file once" "$N" "$(find m -type f -print | sort -u | wc -l)"
assert_eq "nothing on stderr" "" "$(cat m.err)"
unmount_fg many m

finish
