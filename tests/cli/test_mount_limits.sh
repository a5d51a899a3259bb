#!/usr/bin/env bash
# trowel mount and its limits: a mount point that is missing or no folder
# (exit 1, naming it; not a usage error), and nested archives counted
# against --mem-limit. A zlib-compressed .vpp_pc holds a 3 MiB .str2_pc
# (made here with trowel create -t vpp): under a limit too small for it,
# its folder (which needs it decoded whole) gives EIO with a message
# naming it, while the mount stays up, the other entry reads and the str2
# as a file reads too (streamed); under a limit that fits, every
# nested file has its bytes and the peak RSS of the mount stays under the
# limit. Skipped where /dev/fuse cannot be opened; no mount is left behind.
. "${BASH_SOURCE%/*}/lib.sh"
. "${BASH_SOURCE%/*}/mount_lib.sh"

# ------------------------------------------------------- the mount point
echo hello >hello.txt
"$TROWEL" create -q -t vpp -o hello.vpp_pc hello.txt
run "$TROWEL" mount hello.vpp_pc nowhere
assert_rc "a missing mount point: exit 1 (a bad operand, not a usage error)" 1
assert_eq "a missing mount point: says so, naming it" \
    "trowel: nowhere: no such folder to mount on (make it first)" "$ERR"
if [ -e nowhere ]; then fail "a missing mount point is not made"; else pass; fi
run "$TROWEL" mount hello.vpp_pc hello.txt
assert_rc "a file as the mount point: exit 1" 1
assert_eq "a file as the mount point: says so" \
    "trowel: hello.txt: the mount point must be a folder" "$ERR"
mkdir locked
chmod 000 locked
run "$TROWEL" mount hello.vpp_pc locked/inside
if [ "$(id -u)" = 0 ]; then
    assert_rc "a mount point inside a folder root may enter but it is missing: exit 1" 1
else
    assert_rc "a mount point that cannot be reached: exit 1" 1
    assert_contains "a mount point that cannot be reached: says why" "$ERR" \
        "locked/inside: cannot use as the mount point: Permission denied"
fi
chmod 755 locked

# ------------------------------------------ a nested archive and --mem-limit
mkdir inner
for i in 1 2 3; do
    head -c 1048576 /dev/urandom >"inner/part$i.bin"
done
(cd inner && "$TROWEL" create -q -t vpp -o ../inner.str2_pc -- part1.bin part2.bin part3.bin)
echo small >small.txt
"$TROWEL" create -q -t vpp -O compressed=1 -o outer.vpp_pc inner.str2_pc small.txt
assert_eq "the outer archive holds the str2 compressed" "zlib" \
    "$("$TROWEL" list -l outer.vpp_pc | awk '$5 == "inner.str2_pc" { print $4 }')"

# 1 MiB: the 3 MiB str2 cannot be decoded; the rest of the mount lives on.
mount_fg tight outer.vpp_pc tight -r --mem-limit 1M
assert_eq "tight: the small entry reads" "small" "$(cat tight/small.txt 2>&1)"
run ls tight/inner.str2_pc.d
assert_rc "tight: ls of the nested folder fails" 2
assert_contains "tight: ls: EIO" "$ERR" "Input/output error"
# The str2 as a file is a zlib entry: streamed, it reads under 1 MiB.
assert_same_file "tight: the 3 MiB str2 itself reads (streamed)" tight/inner.str2_pc inner.str2_pc
assert_contains "tight: the mount says why, naming the entry and the limit" "$(cat tight.err)" \
    "trowel: outer.vpp_pc: inner.str2_pc: over the memory limit: needs 3 MiB"
assert_contains "tight: ... and which option sets it" "$(cat tight.err)" "limit 1 MiB (--mem-limit)"
if mountpoint -q tight && kill -0 "$FG_PID" 2>/dev/null; then pass; else fail "tight: the mount stays up"; fi
assert_eq "tight: the small entry still reads after the failures" "small" "$(cat tight/small.txt 2>&1)"
unmount_fg tight tight

# 32 MiB: everything fits; the nested archive's bytes count, and the peak
# RSS of the whole mount (program, libfuse, cache) stays under the limit.
# In an ASan build (make sanitize) the runtime's own memory (shadow,
# quarantine: set to 0 here) is no part of trowel's: there the check is
# on the growth of the peak RSS from the mount's start, 20 MiB already.
ASAN_OPTIONS="quarantine_size_mb=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    mount_fg roomy outer.vpp_pc roomy -r --views --mem-limit 32M
base=0
if [ "${TROWEL_SANITIZE:-OFF}" = ON ]; then
    base=$(awk '/^VmRSS:/ { print $2 }' "/proc/$FG_PID/status" 2>/dev/null)
fi
for i in 1 2 3; do
    assert_same_file "roomy: nested part$i.bin" "roomy/inner.str2_pc.d/part$i.bin" "inner/part$i.bin"
done
assert_same_file "roomy: the str2 itself" roomy/inner.str2_pc inner.str2_pc
cat_all roomy
assert_eq "roomy: every file (views too) reads" "0 " "$RC $ERR"
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$FG_PID/status" 2>/dev/null)
if [ -n "$hwm" ] && [ -n "$base" ] && [ $((hwm - base)) -lt 32768 ]; then
    pass
else
    fail "roomy: peak RSS under --mem-limit 32M" "VmHWM: ${hwm:-unknown} kB (less ${base:-unknown} kB)"
fi
assert_eq "roomy: nothing on stderr" "" "$(cat roomy.err)"
unmount_fg roomy roomy

finish
