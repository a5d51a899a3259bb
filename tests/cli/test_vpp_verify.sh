#!/usr/bin/env bash
# trowel verify on Volition packfiles that the other commands call damaged
# or that cannot be extracted as they are, all built from the corpus: the
# game's compressed+condensed xray_effect.str2_pc with an entry's
# compressed size set to 0xFFFFFFFF or to 0, or two sizes shifted by a
# byte (each entry's compressed size is checked against the stream, and
# the header's against their sum); cloth_sim.vpp_pc with two entries of
# one name, exactly or but for case. Empty names are refused with the
# offset of the name.
. "${BASH_SOURCE%/*}/lib.sh"

have_cmd python3 || skip_all "python3 is needed to make the test files"
RFG="$TROWEL_CORPUS/volition/rfg"
[ -f "$RFG/xray_effect.str2_pc" ] || skip_all "no Volition corpus at $RFG"

run "$TROWEL" verify "$RFG/xray_effect.str2_pc"
assert_rc "the str2 as the game made it verifies" 0

# Entry i's directory record is at 0x800 + 28 i; its compressed size at +20.
python3 - "$RFG/xray_effect.str2_pc" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
def patch(name, *fields):
    b = bytearray(d)
    for off, value in fields:
        struct.pack_into("<I", b, off, value)
    open(name, "wb").write(b)
csize = lambda i: 0x800 + 28 * i + 20
first, second = (struct.unpack_from("<I", d, csize(i))[0] for i in (0, 1))
for i in range(3):
    patch("ff%d.str2_pc" % i, (csize(i), 0xFFFFFFFF))
    patch("zero%d.str2_pc" % i, (csize(i), 0))
patch("shifted.str2_pc", (csize(0), first + 1), (csize(1), second - 1))
patch("header_ff.str2_pc", (0x168, 0xFFFFFFFF))
PY
for i in 0 1 2; do
    run "$TROWEL" verify "ff$i.str2_pc"
    assert_rc "entry $i's compressed size 0xFFFFFFFF: verify fails" 1
    assert_contains "entry $i's compressed size 0xFFFFFFFF: says which" "$ERR" \
        "compressed size 4294967295 passes the end of the stream"
    assert_contains "entry $i's compressed size 0xFFFFFFFF: the field's offset" "$ERR" \
        "(offset 0x$(printf '%x' $((0x800 + 28 * i + 20))))"
    run "$TROWEL" list "ff$i.str2_pc"
    assert_rc "entry $i's compressed size 0xFFFFFFFF: list calls it damaged" 1
    run "$TROWEL" verify "zero$i.str2_pc"
    assert_rc "entry $i's compressed size 0: verify fails" 1
    assert_contains "entry $i's compressed size 0: says which" "$ERR" \
        "compressed size 0 does not match the stream"
    assert_contains "entry $i's compressed size 0: the header's size is not the sum" "$ERR" \
        "the header's compressed size 681 is not the entries'"
done
run "$TROWEL" verify ff0.str2_pc
assert_eq "one problem for a size past the end, not one per entry" 1 "$(grep -c 'compressed size' <<<"$ERR")"
run "$TROWEL" verify shifted.str2_pc
assert_rc "two sizes shifted by a byte (the sum kept): verify fails" 1
assert_contains "two sizes shifted by a byte: says which" "$ERR" \
    "xray_effect.mat_pc: compressed size 201 does not match the stream"
run "$TROWEL" verify header_ff.str2_pc
assert_rc "the header's compressed size 0xFFFFFFFF: verify fails" 1
assert_contains "the header's compressed size 0xFFFFFFFF: says so" "$ERR" \
    "the header's compressed size 4294967295 is not the entries' 681 (offset 0x168)"

# Two entries of one name (each with the hash of its name, so that only
# the names are wrong).
python3 - "$RFG/cloth_sim.vpp_pc" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", d, 0x154)[0]
names = 0x800 + (28 * n + 2047) // 2048 * 2048
def name_at(i):
    off = names + struct.unpack_from("<I", d, 0x800 + 28 * i)[0]
    return off, d[off:d.index(b"\0", off)]
def vhash(s):
    h = 0
    for c in s.lower():
        h = ((h << 6 | h >> 26) & 0xFFFFFFFF) ^ c
    return h
def twin(out, i, j, name):
    b = bytearray(d)
    off, old = name_at(j)
    assert len(old) == len(name)
    b[off:off + len(name)] = name
    struct.pack_into("<I", b, 0x800 + 28 * j + 12, vhash(name))
    open(out, "wb").write(b)
_, first = name_at(0)
twin("twins.vpp_pc", 0, 7, first)
twin("case_twins.vpp_pc", 0, 9, first.upper())
# An empty name: entry 2's name offset at the NUL after entry 0's name.
b = bytearray(d)
struct.pack_into("<I", b, 0x800 + 28 * 2, len(first))
open("empty_name.vpp_pc", "wb").write(b)
PY
run "$TROWEL" verify twins.vpp_pc
assert_rc "two entries of one name: verify fails" 1
assert_contains "two entries of one name: says which" "$ERR" \
    "hess_props.sim_pc.str2_pc: entry 7 has the name of entry 0 (offset 0x8c4)"
mkdir out
run "$TROWEL" extract -C out twins.vpp_pc
assert_rc "two entries of one name: extract fails too" 1
run "$TROWEL" verify case_twins.vpp_pc
assert_rc "two names equal but for case: verify fails" 1
assert_contains "two names equal but for case: says why" "$ERR" \
    "entry 9 has the name of entry 0 (hess_props.sim_pc.str2_pc, the game does not tell case apart)"

# Empty names give the offset of the name, not 0.
run "$TROWEL" list empty_name.vpp_pc
assert_rc "an empty name: refused" 1
assert_contains "an empty name: its offset (names at 0x1000, + 25)" "$ERR" \
    "entry 2 has an empty name (offset 0x1019)"
python3 - "$TROWEL_SOURCE/fuzz/corpus/vpp/synthetic_v1.vpp" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[0x800 + 64] = 0  # entry 1's name field
open("v1_empty.vpp", "wb").write(d)
PY
run "$TROWEL" list v1_empty.vpp
assert_rc "an empty v1 name: refused" 1
assert_contains "an empty v1 name: its offset" "$ERR" "entry 1 has an empty name (offset 0x840)"

finish
