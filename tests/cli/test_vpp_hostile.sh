#!/usr/bin/env bash
# Hostile packfiles and ASM files, beyond those of test_vpp.sh and
# test_vpp_create.sh: absolute names, names climbing out through a v17
# directory with backslashes, zlib and LZ4 bombs both ways (declared size
# small with a huge expansion, declared size huge with a small stream),
# huge declared sizes and counts under --mem-limit, a v3 name table without
# NUL, ASM counts past the file. Each: exit 1, the exact message, nothing
# outside DIR, no partial file.
. "${BASH_SOURCE%/*}/lib.sh"

python3 - <<'PY'
import os, struct, zlib

def v10(names, entries, data, flags=0):
    n = len(entries)
    body = b"".join(entries) + names
    h = struct.pack("<IIIIIII", 12 + 28 + len(body) + len(data), flags, n, 24 * n,
                    len(names), len(data), 0xFFFFFFFF)
    return struct.pack("<II", 0x51890ACE, 10) + b"\0\0\0\0" + h + body + data

def entry10(name_off, size, csize, flags=0):
    return struct.pack("<QIIIHH", name_off, 0, size, csize, flags, 1)

def v17(dirname, name, data):
    names = dirname + b"\0" + name + b"\0"
    dir_size = 48 + 8
    data_off = 0x78 + dir_size + len(names)
    h = struct.pack("<IIIIIIII", 0x51890ACE, 17, 0, 0, 1, 1, dir_size, len(names))
    h += struct.pack("<QQQQQ", data_off + len(data), len(data), 2**64 - 1, 0, data_off)
    e = struct.pack("<QQQQQHHI", len(dirname) + 1, 0, 0, len(data), 2**64 - 1, 0, 1, 0)
    return h.ljust(0x78, b"\0") + e + struct.pack("<Q", 0) + names + data

def write(name, data):
    open(name, "wb").write(data)

# An absolute name (v10), and a v17 directory that climbs out with
# backslashes (the reader turns them into '/') or is absolute.
write("abs.vpp_pc", v10(os.getcwd().encode() + b"/abs.txt\0", [entry10(0, 2, 0xFFFFFFFF)], b"hi"))
write("back.vpp_pc", v17(b"..\\..", b"back.txt", b"hi"))
write("absdir.vpp_pc", v17(os.getcwd().encode(), b"absdir.txt", b"hi"))
# zlib bombs: 10 MiB of zeros declared as 1 MiB; 1 KiB declared as 4 GiB.
bomb = zlib.compress(b"\0" * (10 << 20), 9)
write("zbomb.vpp_pc", v10(b"b.bin\0", [entry10(0, 1 << 20, len(bomb), 1)], bomb, 1))
small = zlib.compress(b"\0" * 1024, 9)
write("zhuge.vpp_pc", v10(b"h.bin\0", [entry10(0, 0xFFFFFFF0, len(small), 1)], small, 1))
# A stored entry declaring 4 GiB in a tiny file.
write("stored_huge.vpp_pc", v10(b"s.bin\0", [entry10(0, 0xFFFFFFF0, 0xFFFFFFFF)], b"hi"))
# 200,000 entries, really there: their directory needs more than 1 MiB.
N = 200000
write("many.vpp_pc", v10(b"".join(b"f%06d\0" % i for i in range(N)),
                         [entry10(8 * i, 0, 0xFFFFFFFF) for i in range(N)], b""))
# v3: a name table without NUL.
h = bytearray(2048)
struct.pack_into("<II", h, 0, 0x51890ACE, 3)
struct.pack_into("<IIIIIIII", h, 0x14C, 0, 0, 1, 2048 * 3 + 2, 28, 6, 2, 0xFFFFFFFF)
d = bytearray(2048); struct.pack_into("<IIIIIII", d, 0, 0, 0, 0, 0, 2, 0xFFFFFFFF, 0)
n = bytearray(2048); n[0:6] = b"abcdef"; n[6:] = b"g" * (2048 - 6)
write("nonul3.vpp_pc", bytes(h + d + n) + b"hi")
PY
head -c 1048576 /dev/zero >z.bin
"$TROWEL" create -t vpp -O version=17 -O compressed=1 -o lz4src.vpp_pc z.bin 2>/dev/null
python3 - <<'PY'
import struct
d = bytearray(open("lz4src.vpp_pc", "rb").read())
struct.pack_into("<Q", d, 0x78 + 24, 1 << 40)   # declared: 1 TiB
open("lz4huge.vpp_pc", "wb").write(d)
struct.pack_into("<Q", d, 0x78 + 24, 1000)      # declared: 1000 bytes
open("lz4small.vpp_pc", "wb").write(d)
PY
rm z.bin
LZ4_PACKED=$("$TROWEL" list --json lz4src.vpp_pc | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"][0]["packed_size"])')
LZ4_AT=$((2048 + LZ4_PACKED))

# hostile FILE MESSAGE [OPTION...]: extract fails with exactly MESSAGE and
# leaves nothing in DIR or beside it.
hostile() {
    local f=$1 msg=$2
    shift 2
    rm -rf jail && mkdir jail
    run "$TROWEL" extract "$@" "$f" -C jail/dir
    assert_rc "$f: exit 1" 1
    assert_eq "$f: the message" "$msg" "$ERR"
    assert_eq "$f: nothing in DIR" "" "$(find jail -type f)"
    assert_eq "$f: nothing outside DIR" "" "$(find . -maxdepth 1 -name '*.txt')"
}
UNSAFE="(absolute, drive, '..', or control characters)"
# Each refusal gives the entry's offset: where its data starts (after the
# names, whose length depends on the folder's).
ABS_AT=$(printf '0x%x' $((64 + ${#PWD} + 9)))
ABSDIR_AT=$(printf '0x%x' $((0x78 + 56 + ${#PWD} + 1 + 11)))
hostile abs.vpp_pc "trowel: abs.vpp_pc: $PWD/abs.txt: refusing unsafe entry name '$PWD/abs.txt' $UNSAFE (offset $ABS_AT)"
hostile back.vpp_pc "trowel: back.vpp_pc: ../../back.txt: refusing unsafe entry name '../../back.txt' $UNSAFE (offset 0xbf)"
hostile absdir.vpp_pc "trowel: absdir.vpp_pc: $PWD/absdir.txt: refusing unsafe entry name '$PWD/absdir.txt' $UNSAFE (offset $ABSDIR_AT)"
# (where the zlib bomb is stopped depends on how zlib hands out its output)
hostile zbomb.vpp_pc "$(
    "$TROWEL" extract zbomb.vpp_pc -C zb 2>&1 >/dev/null | sed -n '/decodes to more than the 1048576 bytes expected (offset 0x[0-9a-f]*)$/p'
    rm -rf zb
)"
assert_contains "zbomb.vpp_pc: says why" "$ERR" "trowel: zbomb.vpp_pc: b.bin: the zlib stream decodes to more than the 1048576 bytes expected (offset 0x"
hostile zhuge.vpp_pc "trowel: zhuge.vpp_pc: h.bin: 17 bytes of zlib cannot decode to the 4294967280 bytes expected (offset 0x57)"
hostile zhuge.vpp_pc "trowel: zhuge.vpp_pc: h.bin: 17 bytes of zlib cannot decode to the 4294967280 bytes expected (offset 0x57)" --mem-limit 4M
hostile lz4huge.vpp_pc "trowel: lz4huge.vpp_pc: z.bin: $LZ4_PACKED bytes of LZ4 cannot decode to the 1099511627776 bytes expected (offset 0x$(printf %x $LZ4_AT))" --mem-limit 4M
W_STORED="entry 0 (s.bin): 4294967280 bytes at offset 70 run past the end of the 72-byte file (offset 0x28)"
hostile stored_huge.vpp_pc "trowel: stored_huge.vpp_pc: warning: $W_STORED"$'\n'"trowel: stored_huge.vpp_pc: s.bin: $W_STORED" --mem-limit 1M
hostile many.vpp_pc "trowel: many.vpp_pc: over the memory limit: needs 7.6 MiB for reading the archive's directory, 257 KiB already in use, limit 1 MiB (--mem-limit)" --mem-limit 1M
hostile nonul3.vpp_pc "trowel: nonul3.vpp_pc: entry 0's name has no NUL within the name table (or passes 255 bytes) (offset 0x1000)"

# An LZ4 frame that holds more than it declares: stopped at the declared size.
rm -rf jail && mkdir jail
run "$TROWEL" extract lz4small.vpp_pc -C jail/dir
assert_rc "lz4small: exit 1" 1
assert_contains "lz4small: says why" "$ERR" "trowel: lz4small.vpp_pc: z.bin: the LZ4 stream decodes to more than the 1000 bytes expected"
assert_eq "lz4small: nothing in DIR" "" "$(find jail -type f)"

# The huge count is fine without the limit (the directory is really there).
run "$TROWEL" list many.vpp_pc
assert_rc "200,000 entries: list without a limit" 0
assert_eq "200,000 entries: every one" 200000 "$(printf '%s\n' "$OUT" | wc -l)"

# ASM: counts that cannot fit in the file.
python3 - <<'PY'
import struct
def s(t): return struct.pack("<H", len(t)) + t
def container(name, prims, size_count):
    return (s(name) + struct.pack("<BHHIII", 6, 0x80, prims, 6144, size_count, 100))
head = struct.pack("<IHH", 0xBEEFFEED, 5, 1)
open("prims.asm_pc", "wb").write(head + container(b"c0", 65535, 0))
open("sizes.asm_pc", "wb").write(head + container(b"c0", 0, 0x40000000))
open("conts.asm_pc", "wb").write(struct.pack("<IHH", 0xBEEFFEED, 5, 65535) + container(b"c0", 0, 0))
PY
run "$TROWEL" list prims.asm_pc
assert_rc "ASM primitive count past the file: exit 1" 1
assert_eq "ASM primitive count past the file: the message" \
    "trowel: prims.asm_pc: warning: container 0 (c0): 65535 primitives cannot fit in the 0 bytes left; it is not listed (offset 0x1d)"$'\n'"trowel: prims.asm_pc: damaged: not every entry can be read" "$ERR"
run "$TROWEL" list sizes.asm_pc
assert_rc "ASM size count past the file: exit 1" 1
assert_eq "ASM size count past the file: the message" \
    "trowel: sizes.asm_pc: warning: container 0 (c0): 1073741824 sizes cannot fit in the 0 bytes left; it is not listed (offset 0x1d)"$'\n'"trowel: sizes.asm_pc: damaged: not every entry can be read" "$ERR"
run "$TROWEL" list --mem-limit 1M conts.asm_pc
assert_rc "ASM container count past the file: exit 1" 1
assert_eq "ASM container count past the file: the one there is listed" c0 "$OUT"
assert_eq "ASM container count past the file: the message" \
    "trowel: conts.asm_pc: warning: container 1: needs 2 bytes at offset 0x1d but the data ends at 0x1d; it and the 65533 after it are not listed (offset 0x1d)"$'\n'"trowel: conts.asm_pc: damaged: not every entry can be read" "$ERR"

# A v17 entry whose size is 2^64 - 1 (found by fuzz_vpp: that is the
# library's "size not known", and the entry decoded to whatever its LZ4
# frame held). The directory is refused.
run "$TROWEL" list "$TROWEL_SOURCE/fuzz/corpus/vpp/regression_v17_size_all_ones.vpp_pc"
assert_rc "size 2^64 - 1: exit 1" 1
assert_contains "size 2^64 - 1: says so" "$ERR" "entry 0's size is 2^64 - 1, which no file has (offset 0x78)"
run "$TROWEL" extract "$TROWEL_SOURCE/fuzz/corpus/vpp/regression_v17_size_all_ones.vpp_pc" -C jail/ones
assert_rc "size 2^64 - 1: extract exit 1" 1
assert_no_file "size 2^64 - 1: nothing written" jail/ones

finish
