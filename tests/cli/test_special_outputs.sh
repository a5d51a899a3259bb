#!/usr/bin/env bash
# -o naming a character device or a FIFO writes into it, as cp does, and
# leaves the node as it was: renaming a finished file over it would replace
# /dev/null itself (it did, with --force). A block device is refused. The
# device used is a private null device made here, never the system's.
. "${BASH_SOURCE%/*}/lib.sh"

DEFAULT="$TROWEL_CORPUS/szdd/DEFAULT.PA_"
[ -f "$DEFAULT" ] || skip_all "$DEFAULT is absent"

if mknod -m 666 null c 1 3 2>/dev/null; then
    run "$TROWEL" decompress -c szdd -o null -f "$DEFAULT"
    assert_rc "decompress -o DEVICE --force: exit 0" 0
    assert_eq "the device is still a character device" "character special file" "$(stat -c %F null)"
    run "$TROWEL" convert "$DEFAULT" -o null
    assert_rc "convert -o DEVICE (no --force: nothing is replaced): exit 0" 0
    assert_eq "still a device after convert" "character special file" "$(stat -c %F null)"
    run "$TROWEL" compress -c zlib -o null "$DEFAULT"
    assert_rc "compress -o DEVICE: exit 0" 0
    assert_eq "still a device after compress" "character special file" "$(stat -c %F null)"
else
    skip "mknod needs root: the character-device case"
fi

mkfifo pipe
cat pipe >from-pipe &
reader=$!
run "$TROWEL" convert "$DEFAULT" -o pipe
assert_rc "convert -o FIFO: exit 0" 0
wait "$reader"
assert_eq "the FIFO is still a FIFO" "fifo" "$(stat -c %F pipe)"
assert_contains "what went through the FIFO" "$(cat from-pipe)" '"format": "szdd"'

finish
