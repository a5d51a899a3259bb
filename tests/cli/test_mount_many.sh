#!/usr/bin/env bash
# trowel mount of an archive of 20,000 entries (a condensed VPP made by
# trowel create): building the tree costs time linear in the entries (a
# folder's children are found through a hash index while it is built; a
# scan per entry took about 15 s here for 20,000), so mounting and listing
# it take seconds at most. ls and find count every entry; stat and cat
# give the bytes of a few of them.
# Skipped where /dev/fuse cannot be opened; no mount is left behind.
. "${BASH_SOURCE%/*}/lib.sh"
. "${BASH_SOURCE%/*}/mount_lib.sh"

N=20000
mkdir src
awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++) { f = sprintf("src/e%05d.txt", i); printf "entry %d\n", i > f; close(f) } }'
assert_eq "the $N sources are made" "$N" "$(find src -type f | wc -l)"
(cd src && "$TROWEL" create -q -t vpp -O condensed=1 -o ../many.vpp_pc -- *)
assert_eq "create -t vpp of $N entries" 0 $?

start=$(date +%s%N)
mount_fg many many.vpp_pc m
count=$(ls m | wc -l)
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
assert_eq "ls lists every entry (and nothing else: .trowel is hidden)" "$N" "$count"
if [ "$elapsed_ms" -lt 8000 ]; then
    pass
else
    fail "mounting and listing $N entries takes under 8 s" "it took $elapsed_ms ms"
fi
assert_eq "the first entry's bytes" "entry 0" "$(cat m/e00000.txt)"
assert_eq "an entry in the middle" "entry 12345" "$(cat m/e12345.txt)"
assert_eq "the last entry" "entry 19999" "$(cat m/e19999.txt)"
assert_eq "stat gives the size" 12 "$(stat -c %s m/e19999.txt)"
run cat m/e20000.txt
assert_rc "a name past the last is not there" 1
assert_contains "cat: no such file" "$ERR" "No such file or directory"
assert_eq "find sees every file once" "$N" "$(find m -path m/.trowel -prune -o -type f -print | sort -u | wc -l)"
assert_eq "nothing on stderr" "" "$(cat m.err)"
unmount_fg many m

finish
