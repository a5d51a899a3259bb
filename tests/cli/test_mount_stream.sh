#!/usr/bin/env bash
# trowel mount streams what can be read at an offset: a 64 MiB entry,
# four times the --mem-limit of 16 MiB, reads back with the source's
# SHA-256 from a VPP that stores it, one that zlib-compresses it, one that
# holds it in a solid (compressed+condensed) stream and a v17 one (LZ4);
# random slices read with dd (backwards too, which restarts the decoder)
# are the source's bytes, also while another program reads the entry; the peak RSS of the mount stays under the limit
# (before streaming, the entry was decoded whole: 266 MB for 256 MiB, and
# over the limit it gave EIO). A zlib stream whose Adler-32 is wrong gives
# EIO once read to its end, and says why. Skipped where /dev/fuse cannot
# be opened; no mount is left behind.
. "${BASH_SOURCE%/*}/lib.sh"
. "${BASH_SOURCE%/*}/mount_lib.sh"

mkdir src
seq 1 9000000 | head -c 67108864 >src/big.bin
want=$(sha256sum <src/big.bin)
(cd src && "$TROWEL" create -q -t vpp -o ../stored.vpp_pc big.bin)
(cd src && "$TROWEL" create -q -t vpp -O compressed=1 -O level=1 -o ../zlib.vpp_pc big.bin)
(cd src && "$TROWEL" create -q -t vpp -O compressed=1 -O condensed=1 -O level=1 \
    -o ../solid.vpp_pc big.bin)
(cd src && "$TROWEL" create -q -t vpp -O version=17 -O compressed=1 -o ../lz4.vpp_pc big.bin)
for kind in stored zlib solid lz4; do
    method=$("$TROWEL" list --json $kind.vpp_pc | jq -r '.entries[0].method')
    case $kind in
    stored) assert_eq "$kind: the entry is stored" stored "$method" ;;
    zlib) assert_eq "$kind: the entry is one zlib stream" zlib "$method" ;;
    solid) assert_eq "$kind: the entry is in the solid stream" zlib-solid "$method" ;;
    lz4) assert_eq "$kind: the entry is LZ4" lz4 "$method" ;;
    esac
done
run "$TROWEL" extract --mem-limit 16M -C x-zlib zlib.vpp_pc
assert_rc "extract streams the zlib entry under --mem-limit 16M" 0

# In an ASan build the runtime's own memory is no part of trowel's: there
# the peak is measured from the mount's start.
peak_growth() {
    local base=0 hwm
    [ "${TROWEL_SANITIZE:-OFF}" = ON ] && base=$MOUNT_RSS
    hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$FG_PID/status" 2>/dev/null)
    echo $((${hwm:-999999999} - base))
}

for kind in stored zlib solid lz4; do
    ASAN_OPTIONS="quarantine_size_mb=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
        mount_fg "$kind" $kind.vpp_pc m-$kind --mem-limit 16M
    MOUNT_RSS=$(awk '/^VmRSS:/ { print $2 }' "/proc/$FG_PID/status" 2>/dev/null)
    assert_eq "$kind: the size is the entry's" 67108864 "$(stat -c %s m-$kind/big.bin)"
    # Random slices first, on a fresh mount (nothing in the page cache).
    random_reads "$kind" m-$kind src 12
    assert_eq "$kind: the 64 MiB entry reads whole under --mem-limit 16M" "$want" \
        "$(sha256sum <m-$kind/big.bin)"
    growth=$(peak_growth)
    if [ "$growth" -lt 16384 ]; then
        pass
    else
        fail "$kind: the mount's peak RSS stays under --mem-limit 16M" "VmHWM: $growth kB"
    fi
    assert_eq "$kind: nothing on stderr" "" "$(cat m-$kind.err)"
    unmount_fg "$kind" m-$kind
done

# Two programs reading one zlib entry at once, at different places (each
# keeps a decoder of its own): both get the source's bytes.
mount_fg "two readers" zlib.vpp_pc m-two --mem-limit 16M
sha256sum <m-two/big.bin >two.sum &
sum_pid=$!
bad=""
for off in 1000 40000000 2000000 60000000 5 33000000; do
    cmp -s <(dd if=m-two/big.bin iflag=skip_bytes,count_bytes skip=$off count=100000 2>/dev/null) \
        <(dd if=src/big.bin iflag=skip_bytes,count_bytes skip=$off count=100000 2>/dev/null) ||
        bad="$bad $off"
done
wait "$sum_pid"
assert_eq "two readers: the slices read meanwhile are the source's" "" "$bad"
assert_eq "two readers: the whole read is the source's" "$want" "$(cat two.sum)"
assert_eq "two readers: nothing on stderr" "" "$(cat m-two.err)"
unmount_fg "two readers" m-two

# The zlib stream's Adler-32 (its last 4 bytes) made wrong: everything up
# to the end reads, the read that reaches it fails with EIO and the mount
# names the entry; so does extract.
off=$("$TROWEL" list --json zlib.vpp_pc | jq '.entries[0].offset')
packed=$("$TROWEL" list --json zlib.vpp_pc | jq '.entries[0].packed_size')
cp zlib.vpp_pc adler.vpp_pc
printf '\125' | dd of=adler.vpp_pc bs=1 seek=$((off + packed - 1)) conv=notrunc 2>/dev/null
run "$TROWEL" extract -C x-adler adler.vpp_pc
assert_rc "a wrong Adler-32: extract fails" 1
mount_fg adler adler.vpp_pc m-adler --mem-limit 16M
assert_eq "a wrong Adler-32: the first MiB reads" "$(head -c 1048576 src/big.bin | sha256sum)" \
    "$(head -c 1048576 m-adler/big.bin | sha256sum)"
run cat m-adler/big.bin
assert_rc "a wrong Adler-32: reading to the end fails" 1
assert_contains "a wrong Adler-32: cat gets EIO" "$ERR" "Input/output error"
assert_contains "a wrong Adler-32: the mount names the entry" "$(cat m-adler.err)" \
    "adler.vpp_pc: big.bin: "
unmount_fg adler m-adler

finish
