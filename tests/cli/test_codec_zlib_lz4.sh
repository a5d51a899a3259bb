#!/usr/bin/env bash
# trowel compress / decompress -c zlib and -c lz4, cross-checked both ways
# against independent tools: python3's zlib module and the lz4 command.
. "${BASH_SOURCE%/*}/lib.sh"

# Input: the project's own sources, some text and some binary.
cat "$TROWEL_SOURCE"/src/codec/*.c "$TROWEL_SOURCE"/src/core/*.c >text.in
head -c 300000 "$TROWEL" >>text.in
want=$(sha256_of text.in)
size=$(wc -c <text.in | tr -d ' ')

# ---- zlib: trowel writes, python3's zlib reads (every level).
for level in 0 1 6 9; do
    run "$TROWEL" compress -c zlib -O "level=$level" -o "l$level.z" text.in
    assert_rc "compress -c zlib level=$level" 0
    python3 -c 'import sys, zlib; sys.stdout.buffer.write(zlib.decompress(open(sys.argv[1], "rb").read()))' \
        "l$level.z" >"l$level.py" 2>/dev/null
    assert_file_sha256 "python3 zlib decodes trowel's level $level" "l$level.py" "$want"
done
assert_eq "level 1 header 78 01" "120 1" "$(bytes l1.z 0 2)"
assert_eq "level 9 header 78 da" "120 218" "$(bytes l9.z 0 2)"
run "$TROWEL" compress -c zlib -o default.z text.in
assert_same_file "default level is 6" default.z l6.z

# ---- zlib: python3 writes (finished, and sync-flushed never finished), trowel reads.
python3 -c 'import sys, zlib; sys.stdout.buffer.write(zlib.compress(open(sys.argv[1], "rb").read(), 9))' \
    text.in >py.z
run "$TROWEL" decompress -c zlib -o py.out py.z
assert_rc "decompress python3's zlib stream" 0
assert_file_sha256 "python3's zlib stream decodes" py.out "$want"
python3 - text.in >sync.z <<'EOF'
import sys, zlib
data = open(sys.argv[1], "rb").read()
c = zlib.compressobj(1)
out = b""
for i in range(0, len(data), 10000):          # one sync flush per "file"
    out += c.compress(data[i:i + 10000]) + c.flush(zlib.Z_SYNC_FLUSH)
sys.stdout.buffer.write(out)                  # never finished
EOF
assert_eq "python3's unfinished stream ends 00 00 ff ff" "0000ffff" "$(tail -c 4 sync.z | od -An -tx1 | tr -d ' \n')"
run "$TROWEL" decompress -c zlib --size "$size" -o sync.out sync.z
assert_rc "unfinished stream with --size: exit 0" 0
assert_file_sha256 "unfinished stream with --size: every byte" sync.out "$want"
assert_eq "unfinished stream with --size: quiet" "" "$ERR"
run "$TROWEL" decompress -c zlib -o sync2.out sync.z
assert_rc "unfinished stream without --size: exit 0" 0
assert_file_sha256 "unfinished stream without --size: every byte" sync2.out "$want"
assert_contains "unfinished stream without --size: warns" "$ERR" \
    "warning: the zlib stream stops at a flush point without its end ($size bytes)"

# ---- zlib refusals: bomb, truncation, bad checksum; nothing left behind.
mkdir bad
head -c 50000000 /dev/zero | python3 -c 'import sys, zlib; sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read(), 9))' >bomb.z
run "$TROWEL" decompress -c zlib --size 1000 -o bad/bomb bomb.z
assert_rc "zlib bomb over --size: exit 1" 1
assert_contains "zlib bomb: says so" "$ERR" \
    "trowel: bomb.z: the zlib stream decodes to more than the 1000 bytes expected (offset 0x"
assert_dir_empty "zlib bomb: nothing left" bad
zsize=$(wc -c <py.z | tr -d ' ')
head -c $((zsize / 2)) py.z >cut.z
run "$TROWEL" decompress -c zlib -o bad/cut cut.z
assert_rc "truncated zlib: exit 1" 1
assert_contains "truncated zlib: offset of the end" "$ERR" \
    "$(printf '(offset 0x%x)' $((zsize / 2)))"
assert_dir_empty "truncated zlib: nothing left" bad
cp py.z adler.z
printf '\x00' | dd of=adler.z bs=1 seek=$((zsize - 1)) conv=notrunc 2>/dev/null
[ "$(tail -c 1 py.z | od -An -tx1 | tr -d ' ')" = "00" ] && printf '\x01' | dd of=adler.z bs=1 seek=$((zsize - 1)) conv=notrunc 2>/dev/null
run "$TROWEL" decompress -c zlib -o bad/adler adler.z
assert_rc "bad Adler-32: exit 1" 1
assert_contains "bad Adler-32: says so" "$ERR" \
    "trowel: adler.z: the zlib stream's Adler-32 does not match $(printf '(offset 0x%x)' $((zsize - 4)))"
assert_dir_empty "bad Adler-32: nothing left" bad

# ---- lz4: trowel writes, the lz4 command reads.
if command -v lz4 >/dev/null 2>&1; then
    for level in 1 9; do
        run "$TROWEL" compress -c lz4 -O "level=$level" -o "l$level.lz4" text.in
        assert_rc "compress -c lz4 level=$level" 0
        lz4 -dc "l$level.lz4" >"l$level.lz4out" 2>/dev/null
        assert_file_sha256 "lz4 -d decodes trowel's level $level" "l$level.lz4out" "$want"
    done
    assert_eq "LZ4 magic 04 22 4d 18" "4 34 77 24" "$(bytes l1.lz4 0 4)"
    # The lz4 command writes (default, linked blocks, small blocks, block
    # checksums, content size), trowel reads.
    for opts in "" "-BD" "-B4 -BD" "--content-size -BX" "-9 -BD"; do
        # shellcheck disable=SC2086
        lz4 -q -c $opts text.in >peer.lz4
        run "$TROWEL" decompress -c lz4 -o peer.out --force peer.lz4
        assert_rc "decompress lz4 $opts" 0
        assert_file_sha256 "trowel decodes 'lz4 $opts'" peer.out "$want"
        run "$TROWEL" decompress -c lz4 --size "$size" -o peer.sized --force peer.lz4
        assert_rc "decompress lz4 $opts --size" 0
        assert_file_sha256 "trowel decodes 'lz4 $opts' --size" peer.sized "$want"
    done
    # Refusals: a bomb, a truncated frame, a damaged content checksum.
    head -c 50000000 /dev/zero | lz4 -q -c >bomb.lz4
    run "$TROWEL" decompress -c lz4 --size 4096 -o bad/bomb bomb.lz4
    assert_rc "lz4 bomb: exit 1" 1
    assert_contains "lz4 bomb: says so" "$ERR" "the LZ4 stream decodes to more than the 4096 bytes expected"
    assert_dir_empty "lz4 bomb: nothing left" bad
    lz4 -q -c text.in >whole.lz4
    lsize=$(wc -c <whole.lz4 | tr -d ' ')
    head -c $((lsize - 100)) whole.lz4 >cut.lz4
    run "$TROWEL" decompress -c lz4 -o bad/cut cut.lz4
    assert_rc "truncated lz4: exit 1" 1
    assert_contains "truncated lz4: offset of the end" "$ERR" \
        "the LZ4 stream is cut short after"
    assert_contains "truncated lz4: offset" "$ERR" "$(printf '(offset 0x%x)' $((lsize - 100)))"
    assert_dir_empty "truncated lz4: nothing left" bad
    cp whole.lz4 sum.lz4
    last=$(tail -c 1 whole.lz4 | od -An -tu1 | tr -d ' ')
    printf "$(printf '\\%03o' $(((last + 1) % 256)))" | dd of=sum.lz4 bs=1 seek=$((lsize - 1)) conv=notrunc 2>/dev/null
    run "$TROWEL" decompress -c lz4 -o bad/sum sum.lz4
    assert_rc "bad content checksum: exit 1" 1
    assert_contains "bad content checksum: says so" "$ERR" "the LZ4 frame's content checksum does not match"
    assert_dir_empty "bad content checksum: nothing left" bad
else
    skip "no lz4 command: LZ4 peer checks not run"
fi

# ---- levels: usage errors (exit 2), nothing written.
run "$TROWEL" compress -c zlib -O level=10 -o bad/x text.in
assert_rc "zlib level=10: usage error" 2
assert_contains "zlib level=10: says the range" "$ERR" "zlib levels go from 0 to 9, not '10'"
run "$TROWEL" compress -c lz4 -O level=0 -o bad/x text.in
assert_rc "lz4 level=0: usage error" 2
run "$TROWEL" compress -c szdd -O level=1 -o bad/x text.in
assert_rc "szdd has no levels: usage error" 2
assert_contains "szdd has no levels: says so" "$ERR" "codec szdd takes no options"
run "$TROWEL" compress -c zlib -O speed=1 -o bad/x text.in
assert_rc "unknown codec option: usage error" 2
assert_dir_empty "usage errors: nothing written" bad

# ---- pipes both ways.
"$TROWEL" compress -c zlib <text.in | "$TROWEL" decompress -c zlib >pipe.z.out
assert_file_sha256 "zlib through pipes" pipe.z.out "$want"
"$TROWEL" compress -c lz4 - <text.in | "$TROWEL" decompress -c lz4 - >pipe.lz4.out
assert_file_sha256 "lz4 through pipes" pipe.lz4.out "$want"

# ---- both listed by formats.
run "$TROWEL" formats
assert_contains "formats lists zlib" "$OUT" "zlib"
assert_contains "formats lists lz4" "$OUT" "lz4"

finish
