#!/usr/bin/env bash
# trowel create -t vpp: every version and mode trowel writes round-trips
# (many small files, empty files, names at the length limit, one file of
# 100 MiB); the corpus rebuilds byte-identically from its manifest; the
# zlib and LZ4 streams trowel writes decode with zlib and the lz4 command;
# -O base= adds, replaces and deletes entries; hostile archives of every
# version fail cleanly with nothing left behind.
. "${BASH_SOURCE%/*}/lib.sh"

have_cmd python3 || skip_all "python3 is needed to make the test files"

mkdir src
python3 - <<'PY'
import random
random.seed(7)
for i in range(60):
    n = random.choice([0, 1, 17, 2047, 2048, 2049, 5000, 70000])
    data = bytes((random.getrandbits(8) if j % 3 == 0 else 65 + j % 7) for j in range(n))
    open("src/f%02d.bin" % i, "wb").write(data)
open("src/empty.dat", "wb").close()
open("src/" + "n" * 251 + ".txt", "wb").write(b"a name of 255 bytes")
PY

roundtrip() { # VERSION COMPRESSED CONDENSED ALIGN
    local tag="v$1 compressed=$2 condensed=$3 align=$4"
    rm -rf out x
    (cd src && "$TROWEL" create -t vpp -O version="$1" -O compressed="$2" -O condensed="$3" \
        -O align="$4" -o ../out.vpp_pc -- * 2>/dev/null)
    if [ ! -f out.vpp_pc ]; then fail "$tag: create"; return; fi
    run "$TROWEL" verify out.vpp_pc
    assert_rc "$tag: verify" 0
    mkdir x
    run "$TROWEL" extract out.vpp_pc -C x
    assert_rc "$tag: extract" 0
    if diff -r src x >/dev/null; then pass; else fail "$tag: extracted files differ"; fi
    rm -f out.vpp_pc
}

for v in 3 6 10 17; do
    for mode in "0 0 16" "1 0 16" "0 1 1" "0 1 16" "0 1 64" "1 1 1" "1 1 16" "1 1 64"; do
        roundtrip $v $mode
    done
done
roundtrip 4 0 0 16
roundtrip 4 1 0 16
run "$TROWEL" create -t vpp -O version=4 -O condensed=1 -o v4c.vpp_pc src/f00.bin
assert_rc "v4 cannot be condensed: a usage error" 2
assert_contains "v4 cannot be condensed: says why" "$ERR" "version 4 (Saints Row 2) packfiles cannot be condensed"
assert_no_file "v4 condensed: no output" v4c.vpp_pc
# A name the reader could not read back is refused (found by fuzz_create_manifest).
printf 'c' >src/.c
run "$TROWEL" create -t vpp -O version=4 -o dot.vpp_pc -C src .c f00.bin
assert_rc "v4, a name with nothing before its '.': a usage error" 2
assert_contains "v4, '.c': says why" "$ERR" \
    "'.c' cannot be stored: a version 4 packfile keeps the part before the last '.' apart"
assert_no_file "v4, '.c': no output" dot.vpp_pc
run "$TROWEL" create -t vpp -O version=3 -o dot3.vpp_pc -C src .c
assert_rc "v3 keeps the name whole: '.c' is stored" 0
assert_eq "v3: '.c' reads back" ".c" "$("$TROWEL" list dot3.vpp_pc)"
rm -f src/.c
run "$TROWEL" create -t vpp -O version=5 -o v5.vpp_pc src/f00.bin
assert_contains "version 5 is refused" "$ERR" "trowel writes packfile versions 1, 3, 4, 6, 10 and 17, not 5"
run "$TROWEL" create -t vpp -o long.vpp_pc "$(python3 -c 'print("m" * 256)')"
assert_rc "a missing source: exit 1" 1

# The corpus rebuilds byte for byte from its manifests (raw .vpp_pc and the
# game's compressed+condensed .str2_pc, unfinished zlib stream at level 9).
RFG="$TROWEL_CORPUS/volition/rfg"
if [ -f "$RFG/xray_effect.str2_pc" ]; then
    for f in cloth_sim.vpp_pc dlc01_l1.vpp_pc dlcp01_activities.vpp_pc xray_effect.str2_pc; do
        rm -rf x m.json re.vpp
        mkdir x
        run "$TROWEL" extract "$RFG/$f" -C x --manifest m.json
        assert_rc "$f: extract --manifest" 0
        (cd x && "$TROWEL" create --manifest ../m.json -o ../re.vpp)
        assert_same_file "$f: rebuilt byte for byte" "$RFG/$f" re.vpp
        rm -f same.vpp
        "$TROWEL" create -t vpp -O base="$RFG/$f" -o same.vpp
        assert_same_file "$f: base= with nothing changed gives the same bytes" "$RFG/$f" same.vpp
    done
else
    skip "no Volition corpus at $RFG"
fi

# Archives made at other zlib levels than the corpus's rebuild byte for
# byte: create --manifest must use the manifest's level (the level changes
# the bytes in every compressed mode; the manifest reads it from the first
# stream's header, which tells 1, 6 and 9 apart).
for level in 1 6 9; do
    for mode in "3 1 0" "3 1 1" "6 1 1" "10 1 0"; do
        set -- $mode
        tag="level=$level v$1 compressed=$2 condensed=$3"
        rm -rf lv lv.vpp lv.json lv.re
        (cd src && "$TROWEL" create -t vpp -O version=$1 -O compressed=$2 -O condensed=$3 \
            -O level=$level -o ../lv.vpp f05.bin f06.bin f07.bin f08.bin)
        run "$TROWEL" extract lv.vpp -C lv --manifest lv.json
        assert_json_eq "$tag: the manifest's level" lv.json .level "$level"
        (cd lv && "$TROWEL" create --manifest ../lv.json -o ../lv.re)
        assert_same_file "$tag: rebuilt byte for byte" lv.vpp lv.re
    done
done
# ... and the level does change the bytes, so the check above can fail.
(cd src && "$TROWEL" create -t vpp -O compressed=1 -O condensed=1 -O level=1 -o ../l1.vpp f05.bin f06.bin)
(cd src && "$TROWEL" create -t vpp -O compressed=1 -O condensed=1 -O level=9 -o ../l9.vpp f05.bin f06.bin)
assert_ne "levels 1 and 9 give other bytes" "$(sha256_of l1.vpp)" "$(sha256_of l9.vpp)"

# Streams trowel writes decode with zlib itself and with the lz4 command.
(cd src && "$TROWEL" create -t vpp -O version=3 -O compressed=1 -O level=1 -o ../z.vpp_pc f05.bin f06.bin)
(cd src && "$TROWEL" create -t vpp -O compressed=1 -O condensed=1 -O align=16 -o ../s.str2_pc f05.bin f06.bin f07.bin)
(cd src && "$TROWEL" create -t vpp -O version=17 -O compressed=1 -o ../l.vpp_pc f05.bin f06.bin 2>/dev/null)
run "$TROWEL" list --json z.vpp_pc
printf '%s\n' "$OUT" >z.json
run "$TROWEL" list --json l.vpp_pc
printf '%s\n' "$OUT" >l.json
python3 - <<'PY'
import json, zlib, sys
def spans(arc, listing):
    d = open(arc, "rb").read()
    for e in json.load(open(listing))["entries"]:
        yield e["name"], d[e["offset"]:e["offset"] + e["packed_size"]]
for name, z in spans("z.vpp_pc", "z.json"):
    assert z[:2] == b"\x78\x01", "level 1 header"
    assert zlib.decompress(z) == open("src/" + name, "rb").read(), name
for i, (name, z) in enumerate(spans("l.vpp_pc", "l.json")):
    open("frame%d.lz4" % i, "wb").write(z)
d = open("s.str2_pc", "rb").read()
stream = d[6144:]
assert stream.endswith(b"\x00\x00\xff\xff"), "the game's unfinished end"
out = zlib.decompressobj().decompress(stream)
want = b""
for n in ("f05.bin", "f06.bin", "f07.bin"):
    b = open("src/" + n, "rb").read()
    want += b
    if n != "f07.bin":
        want += b"\0" * (-len(want) % 16)
assert out == want, "solid stream"
PY
assert_eq "zlib decodes what trowel writes" 0 "$?"
if have_cmd lz4; then
    lz4 -dq frame0.lz4 frame0.out && lz4 -dq frame1.lz4 frame1.out
    assert_same_file "lz4 -d decodes v17 frames (1)" src/f05.bin frame0.out
    assert_same_file "lz4 -d decodes v17 frames (2)" src/f06.bin frame1.out
else
    skip "no lz4 command"
fi

# Edits: replace in place, add at the end, delete, untouched entries kept.
mkdir e
printf 'replaced\n' >e/f03.bin
printf 'added\n' >e/added.txt
for mode in "3 0 0" "3 1 0" "3 1 1" "10 1 0" "17 1 0" "17 1 1"; do
    set -- $mode
    rm -rf o.vpp_pc n.vpp_pc x
    (cd src && "$TROWEL" create -t vpp -O version=$1 -O compressed=$2 -O condensed=$3 -o ../o.vpp_pc -- * 2>/dev/null)
    (cd e && "$TROWEL" create -t vpp -O base=../o.vpp_pc -O delete=f01.bin -O delete=empty.dat \
        -o ../n.vpp_pc f03.bin added.txt 2>/dev/null)
    run "$TROWEL" list n.vpp_pc
    assert_eq "edit v$1 $2$3: order" "f00.bin f02.bin f03.bin f04.bin" "$(printf '%s\n' "$OUT" | head -4 | tr '\n' ' ' | sed 's/ $//')"
    assert_eq "edit v$1 $2$3: added last" "added.txt" "$(printf '%s\n' "$OUT" | tail -1)"
    mkdir x
    run "$TROWEL" extract n.vpp_pc -C x
    assert_same_file "edit v$1 $2$3: replaced" e/f03.bin x/f03.bin
    assert_same_file "edit v$1 $2$3: kept" src/f59.bin x/f59.bin
    assert_no_file "edit v$1 $2$3: deleted" x/f01.bin
done
# Compressed-only entries of the base are copied as stored, not re-encoded.
(cd src && "$TROWEL" create -t vpp -O compressed=1 -O level=1 -o ../o1.vpp_pc f05.bin f06.bin)
(cd e && "$TROWEL" create -t vpp -O base=../o1.vpp_pc -O level=9 -o ../n1.vpp_pc added.txt)
assert_eq "edit: untouched entries copied as stored" "$(bytes o1.vpp_pc 6144 16)" "$(bytes n1.vpp_pc 6144 16)"
run "$TROWEL" create -t vpp -O base=o1.vpp_pc -O delete=nothere -o n2.vpp_pc
assert_contains "delete= of a missing entry" "$ERR" "-O delete=nothere: the base has no entry of that name"
assert_no_file "delete= of a missing entry: no output" n2.vpp_pc

# One file of 100 MiB, raw and LZ4 (v17).
head -c $((100 << 20)) /dev/zero | tr '\0' 'z' >big.bin
printf 'tail' >>big.bin
for mode in "3 0" "17 1"; do
    set -- $mode
    rm -rf big.vpp_pc x
    "$TROWEL" create -t vpp -O version=$1 -O compressed=$2 -o big.vpp_pc big.bin 2>/dev/null
    mkdir x
    run "$TROWEL" extract big.vpp_pc -C x
    assert_same_file "100 MiB file, v$1 compressed=$2" big.bin x/big.bin
    # through a pipe (spliced straight into it) and to a file descriptor
    "$TROWEL" extract big.vpp_pc --stdout big.bin | cmp -s - big.bin
    assert_eq "100 MiB file, v$1 compressed=$2, through a pipe" 0 "$?"
    "$TROWEL" extract big.vpp_pc --stdout big.bin >x/fd.bin
    assert_same_file "100 MiB file, v$1 compressed=$2, to a descriptor" big.bin x/fd.bin
    # appended to a file: O_APPEND takes no splice, so the bytes already in
    # trowel's pipe must be written the ordinary way, and the rest after them
    printf 'head' >x/app.bin
    "$TROWEL" extract big.vpp_pc --stdout big.bin >>x/app.bin
    { printf 'head'; cat big.bin; } | cmp -s - x/app.bin
    assert_eq "100 MiB file, v$1 compressed=$2, appended to a file" 0 "$?"
done
rm -rf big.bin big.vpp_pc x

# Hand-made v1 (Red Faction) and big-endian v3 (console) archives read.
SEEDS="${BASH_SOURCE%/*}/../../fuzz/corpus/vpp"
rm -rf x && mkdir x
run "$TROWEL" extract "$SEEDS/synthetic_v1.vpp" -C x
assert_rc "v1: extract" 0
assert_eq "v1: first file" "RF1 texture" "$(cat x/a.tga)"
assert_eq "v1: second file" "table" "$(cat x/b.tbl)"
rm -rf x && mkdir x
run "$TROWEL" extract "$SEEDS/synthetic_v3_be.vpp_xbox2" -C x
assert_rc "big-endian v3: extract" 0
assert_eq "big-endian v3: first file" "hello" "$(cat x/a.txt)"
assert_eq "big-endian v3: second file" "abcd" "$(cat x/b.bin)"
run "$TROWEL" info "$SEEDS/synthetic_v3_be.vpp_xbox2"
assert_contains "big-endian v3: info says so" "$OUT" "byte_order: big-endian"
# The damaged Switch magic has its own message.
{ printf '\xce\x0d\x0a\x89'; head -c 4000 "$SEEDS/synthetic_v1.vpp" | tail -c +5; } >switch.vpp_pc
run "$TROWEL" list -t vpp switch.vpp_pc
assert_rc "damaged magic: exit 1" 1
assert_contains "damaged magic: says why" "$ERR" "the packfile magic is damaged (CE 0D 0A 89"

# Hostile archives of every version: exit 1, a message, nothing written.
python3 - <<'PY'
import struct, zlib
def v10(n_files, names, entries, data, flags=0):
    body = b"".join(entries) + names
    h = struct.pack("<IIIIIIII", 12 + 28 + len(body) + len(data), flags, n_files, 24 * n_files,
                    len(names), len(data), 0xFFFFFFFF, 0)[:28]
    return struct.pack("<II", 0x51890ACE, 10) + b"\0\0\0\0" + h + body + data
def entry10(name_off, start, size, csize, flags=0, align=1):
    return struct.pack("<QIIIHH", name_off, start, size, csize, flags, align)
# v10: an offset past the end of the file
open("past.vpp_pc", "wb").write(v10(1, b"a.txt\0", [entry10(0, 0, 5000, 0xFFFFFFFF)], b"hi"))
# v10: a name without NUL
open("nonul.vpp_pc", "wb").write(v10(1, b"abcdef", [entry10(0, 0, 2, 0xFFFFFFFF)], b"hi"))
# v10: 1000000 files in a tiny file
open("count.vpp_pc", "wb").write(v10(1000000, b"a\0", [entry10(0, 0, 2, 0xFFFFFFFF)], b"hi"))
# v10: a name climbing out
open("climb.vpp_pc", "wb").write(v10(1, b"../x.txt\0", [entry10(0, 0, 2, 0xFFFFFFFF)], b"hi"))
# v10: a zlib bomb (declares 1 MiB, holds 10 MiB of zeros)
bomb = zlib.compress(b"\0" * (10 << 20), 9)
open("bomb.vpp_pc", "wb").write(v10(1, b"b.bin\0", [entry10(0, 0, 1 << 20, len(bomb), 1)], bomb, 1))
# v1: 64-byte entries, a size past the end
v1 = struct.pack("<IIII", 0x51890ACE, 1, 1, 0) + b"\0" * 2032
v1 += b"x.tga".ljust(60, b"\0") + struct.pack("<I", 99999) + b"\0" * 1984 + b"data"
open("v1past.vpp", "wb").write(v1)
# v17: an LZ4 frame that declares less than it holds is rejected by size
PY
for f in past nonul count climb bomb v1past; do
    ext=vpp_pc; [ $f = v1past ] && ext=vpp
    rm -rf out; mkdir out
    run "$TROWEL" extract "$f.$ext" -C out
    assert_rc "hostile $f: exit 1" 1
    assert_ne "hostile $f: a message" "" "$ERR"
    assert_eq "hostile $f: nothing left in DIR" "" "$(find out -type f)"
done
assert_eq "hostile: nothing outside DIR" "" "$(find . -maxdepth 1 -name 'x.txt')"
# An LZ4 bomb: a v17 entry that declares 10 bytes for a frame of 1 MiB.
head -c 1048576 /dev/zero >f05.bin
"$TROWEL" create -t vpp -O version=17 -O compressed=1 -o lz4src.vpp_pc f05.bin 2>/dev/null
python3 - <<'PY'
import struct
d = bytearray(open("lz4src.vpp_pc", "rb").read())
struct.pack_into("<Q", d, 0x78 + 24, 10)
open("lz4bomb.vpp_pc", "wb").write(d)
PY
rm -rf out; mkdir out
run "$TROWEL" extract lz4bomb.vpp_pc -C out f05.bin
assert_rc "LZ4 bomb: exit 1" 1
assert_contains "LZ4 bomb: says why" "$ERR" "more than the 10 bytes expected"
assert_eq "LZ4 bomb: nothing left" "" "$(find out -type f)"
# A finished solid stream (-O finish=1) ends with its Adler-32 and reads.
(cd src && "$TROWEL" create -t vpp -O compressed=1 -O condensed=1 -O finish=1 -o ../fin.str2_pc f05.bin f06.bin)
python3 -c 'import zlib, sys; zlib.decompress(open("fin.str2_pc", "rb").read()[6144:])'
assert_eq "finish=1: a complete zlib stream" 0 "$?"
run "$TROWEL" verify fin.str2_pc
assert_rc "finish=1: verify" 0
# A solid stream that ends early (cut in the middle of the second file).
(cd src && "$TROWEL" create -t vpp -O compressed=1 -O condensed=1 -o ../solid.str2_pc f05.bin f06.bin f07.bin)
head -c 6400 solid.str2_pc >cut.str2_pc
rm -rf out; mkdir out
run "$TROWEL" extract cut.str2_pc -C out
assert_rc "solid stream cut short: exit 1" 1
assert_no_file "solid stream cut short: no partial file" out/f07.bin

finish
