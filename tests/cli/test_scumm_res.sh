#!/usr/bin/env bash
# scumm-res on the two ScummC games of the corpus: the xor69 filter chain in
# info, block trees checked against an independent walk (python), extracted
# costumes equal to the standalone files, verify, the index and data file
# found from either, and hostile copies that exit 1 with clear messages.
. "${BASH_SOURCE%/*}/lib.sh"

OQ="$TROWEL_CORPUS/scumm/openquest"
R7="$TROWEL_CORPUS/scumm/road7"
[ -f "$OQ/tentacle.001" ] && [ -f "$R7/scummc7.001" ] || skip_all "the SCUMM games of the corpus are absent"

# ---- detection and the filter chain
run "$TROWEL" info "$OQ/tentacle.001"
assert_rc "info v6 data" 0
assert_eq "info v6: the chain" "$OQ/tentacle.001: xor69 → scumm-res" "$(printf '%s\n' "$OUT" | head -1)"
assert_contains "info v6: version" "$OUT" "  version: 6"
run "$TROWEL" info "$R7/scummc7.000"
assert_eq "info v7 index: no filter" "$R7/scummc7.000: scumm-res" "$(printf '%s\n' "$OUT" | head -1)"
assert_contains "info v7: version" "$OUT" "  version: 7"
run "$TROWEL" info -t scumm-res "$OQ/tentacle.000"
assert_eq "info -t scumm-res keeps the filter" "$OQ/tentacle.000: xor69 → scumm-res" \
    "$(printf '%s\n' "$OUT" | head -1)"
run "$TROWEL" info --json "$OQ/tentacle.001"
assert_contains "info --json v6: the filters array" "$(printf '%s' "$OUT" | tr -d ' \n')" '"filters":["xor69"]'
run "$TROWEL" info --json "$R7/scummc7.001"
assert_not_contains "info --json of a plain file: no filters key" "$OUT" '"filters"'
run "$TROWEL" info -t cine-part "$OQ/tentacle.000"
assert_rc "info -t another format: not peeled, refused" 1

# ---- block trees, against an independent walk of the decrypted files
if have_cmd python3; then
    tree_check() { # NAME DATAFILE KEY
        "$TROWEL" list --json "$2" >list.json
        python3 - "$2" "$3" list.json <<'EOF'
import json, struct, sys
path, key, listed = sys.argv[1], int(sys.argv[2], 16), sys.argv[3]
def load(p):
    return bytes(b ^ key for b in open(p, 'rb').read())
def blocks(d, off, end):
    while off < end:
        tag, size = d[off:off+4].decode(), struct.unpack('>I', d[off+4:off+8])[0]
        yield tag, off, size
        off += size
want = []
data = load(path)
for tag, off, size in blocks(data, 8, len(data)):
    want.append(('data', tag, off, size))
    if tag == 'LFLF':
        want.pop()
        for t2, o2, s2 in blocks(data, off + 8, off + size):
            want.append(('data', t2, o2, s2))
            if t2 == 'ROOM':
                want += [('data', t3, o3, s3) for t3, o3, s3 in blocks(data, o2 + 8, o2 + s2)]
index = load(path[:-1] + '0')
want += [('index', t, o, s) for t, o, s in blocks(index, 0, len(index))]
got = [(e['file'], e['tag'], e['offset'], e['size']) for e in json.load(open(listed))['entries']]
print('same' if sorted(got) == sorted(want) else 'differ: %d listed, %d walked' % (len(got), len(want)))
EOF
    }
    assert_eq "v6: the listed block tree is the walked one" same "$(tree_check v6 "$OQ/tentacle.001" 69)"
    assert_eq "v7: the listed block tree is the walked one" same "$(tree_check v7 "$R7/scummc7.001" 0)"
else
    skip "python3 is absent: block trees not walked independently"
fi
run "$TROWEL" list "$OQ/tentacle.001"
assert_eq "v6: 231 entries" 231 "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')"
assert_eq "v6: COST blocks named from DCOS" \
    $'room06/cost005.cost\nroom06/cost004.cost\nroom06/cost003.cost\nroom06/cost002.cost\nroom06/cost001.cost\nroom08/cost006.cost' \
    "$(printf '%s\n' "$OUT" | grep '\.cost$')"
run "$TROWEL" list "$R7/scummc7.000"
assert_eq "v7 from the index: the AKOS blocks" $'room02/akos002.akos\nroom01/akos001.akos' \
    "$(printf '%s\n' "$OUT" | grep '\.akos$')"
run "$TROWEL" list -l "$R7/scummc7.001" room02/akos002.akos
assert_contains "v7: the AKOS's offset and size" "$OUT" " 492     492  0x14659  stored  room02/akos002.akos"

# ---- extract: decrypted blocks, equal to ScummC's standalone costumes
run "$TROWEL" extract "$OQ/tentacle.000" -C oq
assert_rc "extract v6 (from the index)" 0
assert_same_file "zif is costume 2" "$OQ/zif.cost" oq/room06/cost002.cost
assert_same_file "carol is costume 3" "$OQ/carol.cost" oq/room06/cost003.cost
assert_same_file "bluecup is costume 4" "$OQ/bluecup.cost" oq/room06/cost004.cost
assert_same_file "cube is costume 5" "$OQ/cube.cost" oq/room06/cost005.cost
assert_eq "v6: 231 files" 231 "$(find oq -type f | wc -l | tr -d ' ')"
assert_eq "v6: LOFF decrypted" LOFF "$(head -c 4 oq/loff.loff)"
run "$TROWEL" extract "$R7/scummc7.001" -C r7 room02/akos002.akos
assert_same_file "santa is costume 2 of road7" "$R7/santa.akos" r7/room02/akos002.akos

# ---- verify
run "$TROWEL" verify "$OQ/tentacle.001" "$R7/scummc7.000"
assert_rc "verify both games" 0

# ---- hostile copies (v7: plain bytes to poke)
cp "$R7/scummc7.000" G.000
cp "$R7/scummc7.001" G.001
chmod u+w G.000 G.001
printf '\000\001\000\000' | dd of=G.001 bs=1 seek=$((0x14659 + 4)) conv=notrunc status=none
run "$TROWEL" verify G.001
assert_rc "verify: a block past its parent: exit 1" 1
assert_contains "verify: a block past its parent: said" "$ERR" \
    "block AKOS (65536 bytes) runs past the end of LFLF at 0x14845"
run "$TROWEL" list G.001
assert_rc "list: a block past its parent: exit 1 (damaged)" 1
assert_contains "list: the rest is still listed" "$OUT" "room01/akos001.akos"
run "$TROWEL" extract G.001 -C bad
assert_rc "extract damaged: exit 1" 1
assert_same_file "extract damaged: the readable costume comes out" \
    <("$TROWEL" extract --stdout "$R7/scummc7.001" room01/akos001.akos) bad/room01/akos001.akos
cp "$R7/scummc7.001" G.001
printf '\000\000\000\000' | dd of=G.001 bs=1 seek=$((0x14659 + 4)) conv=notrunc status=none
run "$TROWEL" verify G.001
assert_rc "verify: a zero size (a loop): exit 1" 1
assert_contains "verify: a zero size: said" "$ERR" "block AKOS declares 0 bytes, less than its own header"
cp "$R7/scummc7.001" G.001
printf '\067' | dd of=G.000 bs=1 seek=$((0x142 + 8 + 2 + 3 + 8)) conv=notrunc status=none
run "$TROWEL" verify G.000
assert_rc "verify: an index offset off its tag: exit 1" 1
assert_contains "verify: an index offset off its tag: said" "$ERR" \
    "DCOS: resource 2 points at 0x1465a in room 2, where no block starts, not COST or AKOS"
printf '\377' | dd of=G.000 bs=1 seek=$((0x142 + 8)) conv=notrunc status=none
run "$TROWEL" list G.000
assert_rc "list: a directory larger than its block: exit 1" 1
assert_contains "list: a directory larger than its block: said" "$ERR" \
    "directory DCOS lists 255 resources but holds room for 3"
rm G.000
run "$TROWEL" list G.001
assert_rc "list without the index: still works" 0
assert_contains "list without the index: warns" "$ERR" "warning: no index: G.000 is not beside G.001"

finish
