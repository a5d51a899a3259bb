#!/usr/bin/env bash
# Packfiles over 4 GiB (Re-Mars-tered writes them): 64-bit positions
# recomputed from sizes, `start` and the header's sizes wrapping modulo
# 2^32, file size 0xFFFFFFFF. The archives are sparse files (holes for the
# big entries), so the test writes a few KiB to disk; only the small entry
# past 4 GiB is extracted.
. "${BASH_SOURCE%/*}/lib.sh"

have_cmd python3 || skip_all "python3 is needed to make the test files"

python3 - <<'PY'
import struct
def up(v, a): return (v + a - 1) // a * a
def vhash(s):
    h = 0
    for c in s.lower():
        h = ((h << 6) | (h >> 26)) & 0xFFFFFFFF
        h ^= c
    return h
def v3(path, flags, align):
    files = [(b"hole1.bin", 0x90000000, None), (b"hole2.bin", 0x80000001, None),
             (b"tail.txt", 21, b"past four gibibytes!\n")]
    names = b"".join(n + b"\0" for n, _, _ in files)
    data_start = 2048 + 2048 + 2048
    pos, at, dirs = [], 0, b""
    name_off = 0
    for i, (n, size, _) in enumerate(files):
        pos.append(at)
        dirs += struct.pack("<7I", name_off, 0, at & 0xFFFFFFFF, vhash(n), size, 0xFFFFFFFF, 0)
        name_off += len(n) + 1
        at = at + size if i + 1 == len(files) else up(at + size, align)
    h = bytearray(2048)
    struct.pack_into("<II", h, 0, 0x51890ACE, 3)
    struct.pack_into("<8I", h, 0x14C, flags, 0, len(files), 0xFFFFFFFF, len(dirs), len(names),
                     at & 0xFFFFFFFF, 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(h + dirs.ljust(2048, b"\0") + names.ljust(2048, b"\0"))
        f.seek(data_start + pos[2])
        f.write(files[2][2])
    return data_start + pos[2]
print(v3("big.vpp_pc", 0, 2048))
print(v3("bigc.vpp_pc", 2, 16))
PY
size=$(stat -c %s big.vpp_pc)
if ((size < (1 << 32))); then fail "the archive is not over 4 GiB ($size bytes)"; fi
if (($(du -k big.vpp_pc | cut -f1) > 1024)); then skip_all "the file system here keeps no holes"; fi

for f in big.vpp_pc bigc.vpp_pc; do
    size=$(stat -c %s "$f")
    run "$TROWEL" list --json "$f"
    assert_rc "$f: list" 0
    printf '%s\n' "$OUT" >l.json
    assert_eq "$f: tail's offset is past 4 GiB" "$((size - 21))" "$(json_get l.json '.entries[2].offset')"
    assert_eq "$f: tail's size" 21 "$(json_get l.json '.entries[2].size')"
    rm -rf out
    mkdir out
    run "$TROWEL" extract "$f" -C out tail.txt
    assert_rc "$f: extract the entry past 4 GiB" 0
    assert_eq "$f: its bytes" "past four gibibytes!" "$(cat out/tail.txt)"
    run "$TROWEL" info "$f"
    assert_contains "$f: file size field wraps" "$OUT" "file_size: 4294967295"
done
assert_contains "condensed over 4 GiB: alignment found modulo 2^32" \
    "$("$TROWEL" info bigc.vpp_pc)" "alignment: 16"
rm -f big.vpp_pc bigc.vpp_pc

finish
