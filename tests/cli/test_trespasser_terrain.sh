#!/usr/bin/env bash
# Trespasser terrain (tres-wtd) and page files (spz) from the command line:
# the game's real height fields encoded and decoded exactly, an independent
# Python reader (tests/tools/wtd_reference.py) agreeing with trowel, PNG
# pixels read by PIL, OBJ/GLB meshes, hostile files (exit 1, clear message,
# no output left), and an SPZ round trip.
. "${BASH_SOURCE%/*}/lib.sh"

HF="$TROWEL_CORPUS/trespasser/heightfields"
REF="$TROWEL_SOURCE/tests/tools/wtd_reference.py"
PY=
for candidate in python3 /usr/bin/python3; do
    if "$candidate" -c 'import PIL' >/dev/null 2>&1; then
        PY=$candidate
        break
    fi
done

# ---- a generated 16-bit map (no corpus needed): 37 x 21, odd sizes
"${PY:-python3}" - <<'PYEOF' || exit 1
import random, struct
random.seed(5)
v = [random.randrange(65536) for _ in range(37 * 21)]
open('gen16.raw', 'wb').write(struct.pack('<%dH' % len(v), *v))
PYEOF
run "$TROWEL" create -t tres-wtd -o gen.wtd -O width=37 -O height=21 -O scale=0.01 gen16.raw
assert_rc "create from raw 16-bit: exit 0" 0
assert_eq "create: silent" "" "$OUT$ERR"
"$TROWEL" info --json gen.wtd > info.json
assert_json_valid "info --json" info.json
assert_eq "info: extent is the next power of two" 64 "$(json_get info.json .extent)"
assert_eq "info: version 1001" 1001 "$(json_get info.json .version)"
assert_eq "info: CoefToWorld is the scale" 0.00999999978 "$(json_get info.json .coef_to_world)"
assert_eq "info: world extent, 1 m apart" 64 "$(json_get info.json .world_width)"
run "$TROWEL" verify gen.wtd
assert_rc "verify: counts and branch sizes agree" 0

if [ -n "$PY" ]; then
    run "$TROWEL" convert gen.wtd --to png -O width=37 -O height=21 -o gen.png
    assert_rc "convert --to png" 0
    got=$("$PY" - <<'PYEOF'
import struct
from PIL import Image
im = Image.open('gen.png')
raw = struct.unpack('<%dH' % (37 * 21), open('gen16.raw', 'rb').read())
print(im.mode in ('I', 'I;16'), im.size, list(im.getdata()) == list(raw))
PYEOF
)
    assert_eq "PNG: 16-bit gray, every pixel the height" "True (37, 21) True" "$got"
else
    skip "no python3 with PIL (python3-pil): PNG pixels not compared"
fi

# ---- the independent reader agrees with trowel on every height
run "$TROWEL" convert gen.wtd --to png -o full.png
assert_rc "convert gen.wtd to png" 0
if [ -n "$PY" ]; then
    run python3 "$REF" gen.wtd
    assert_rc "the reference reader reads gen.wtd" 0
    cp "$OUT_FILE" ref.txt
    got=$("$PY" - <<'PYEOF'
from PIL import Image
im = Image.open('full.png')
px = list(im.getdata())
ref = [int(t) for t in open('ref.txt').read().split()]
print(len(px), px == ref)
PYEOF
)
    assert_eq "reference reader = trowel on all 64x64 heights" "4096 True" "$got"
else
    skip "no python3 with PIL: reference reader not compared"
fi

# ---- the game's own height fields round-trip exactly
if [ -f "$HF/PineValley8M128x256.RAW" ]; then
    for spec in PineValley8M128x256.RAW:128:256 HeightField400x400x8.raw:400:400 80x80.RAW:80:80; do
        IFS=: read -r name w h <<<"$spec"
        cp "$HF/$name" in.raw
        run "$TROWEL" create -t tres-wtd -o t.wtd -O width="$w" -O height="$h" in.raw --force
        assert_rc "$name: create" 0
        run "$TROWEL" convert t.wtd --to png -O width="$w" -O height="$h" -o t.png --force
        assert_rc "$name: convert" 0
        if [ -n "$PY" ]; then
            got=$("$PY" -c "
from PIL import Image
im = Image.open('t.png'); raw = open('in.raw', 'rb').read()
print(im.size, list(im.getdata()) == list(raw))")
            assert_eq "$name: every height back" "($w, $h) True" "$got"
        fi
    done
    # an independent reader on a real map (the smallest non-trivial one)
    cp "$HF/phytestheightmap.RAW" phy.raw
    "$TROWEL" create -t tres-wtd -o phy.wtd -O width=80 -O height=80 phy.raw || exit 1
    got=$(python3 "$REF" phy.wtd | python3 -c "
import sys
rows = [list(map(int, l.split())) for l in sys.stdin]
raw = open('phy.raw', 'rb').read()
print(all(rows[y][x] == raw[min(y, 79) * 80 + min(x, 79)] for y in range(128) for x in range(128)))")
    assert_eq "reference reader decodes the game's phytest map exactly" True "$got"
else
    skip "trespasser height fields absent from the corpus"
fi

# ---- meshes
run "$TROWEL" convert gen.wtd --to obj -O width=37 -O height=21 -o gen.obj
assert_rc "convert --to obj" 0
assert_eq "OBJ: one vertex per sample" 777 "$(grep -c '^v ' gen.obj)"
assert_eq "OBJ: two triangles per cell" 1440 "$(grep -c '^f ' gen.obj)"
got=$(python3 - <<'PYEOF'
import struct
# An independent OBJ read: every face index valid, every vertex at
# (x, y, height x 0.01) in world units.
v, f = [], []
for line in open('gen.obj'):
    t = line.split()
    if t and t[0] == 'v':
        v.append(tuple(map(float, t[1:4])))
    elif t and t[0] == 'f':
        f.append([int(x.split('/')[0]) for x in t[1:]])
raw = struct.unpack('<%dH' % (37 * 21), open('gen16.raw', 'rb').read())
ok_faces = all(len(x) == 3 and all(1 <= i <= len(v) for i in x) for x in f)
ok_verts = all(abs(v[y * 37 + x][0] - x) < 1e-6 and abs(v[y * 37 + x][1] - y) < 1e-6 and
               abs(v[y * 37 + x][2] - raw[y * 37 + x] * 0.01) < 1e-3
               for y in range(21) for x in range(37))
print(ok_faces, ok_verts)
PYEOF
)
assert_eq "OBJ read independently: faces valid, vertices at the heights" "True True" "$got"
run "$TROWEL" convert gen.wtd --to glb -O width=37 -O height=21 -o gen.glb
assert_rc "convert --to glb" 0
assert_eq "GLB magic" "103 108 84 70" "$(bytes gen.glb 0 4)"
node "$TROWEL_SOURCE/tests/tools/gltf_validate.js" gen.glb >val.txt 2>&1
case $? in
    0) pass "GLB passes the Khronos validator" ;;
    2) skip "gltf-validator not installed (scripts/deps.sh test)" ;;
    *) fail "GLB fails the Khronos validator: $(cat val.txt)" ;;
esac

# ---- hostile files: exit 1, a clear message, nothing written
head -c 100 gen.wtd > cut.wtd
run "$TROWEL" convert cut.wtd --to png -o cut.png
assert_rc "cut bit stream: exit 1" 1
assert_contains "cut bit stream: says so" "$ERR" "bit stream runs out"
assert_no_file "cut bit stream: no PNG left" cut.png
run "$TROWEL" verify cut.wtd
assert_rc "verify of a cut stream: exit 1" 1
"${PY:-python3}" -c "
import sys
d = bytearray(open('gen.wtd', 'rb').read())
# quad extent w, h (bytes 14.. of the mapping, bit-packed: rewrite whole words)
import struct
words = list(struct.unpack('<%dI' % (len(d) // 4), bytes(d)))
def put(pos, v, n):
    for i in range(n):
        b = (v >> (n - 1 - i)) & 1
        w, s = (pos + i) // 32, 31 - (pos + i) % 32
        words[w] = (words[w] & ~(1 << s)) | (b << s)
# mapping starts at bit 112; quad w at byte 8, h at byte 12 of it, LE
for off in (8, 12):
    for k, byte in enumerate((65536).to_bytes(4, 'little')):
        put(112 + 8 * (off + k), byte, 8)
open('deep.wtd', 'wb').write(struct.pack('<%dI' % len(words), *words))
"
run "$TROWEL" convert deep.wtd --to png -o deep.png
assert_rc "extent of 16 levels: exit 1" 1
assert_contains "extent of 16 levels: says so" "$ERR" "at most 15"
assert_no_file "extent of 16 levels: no PNG left" deep.png
run "$TROWEL" create -t tres-wtd -o bad.wtd gen16.raw
assert_usage_error "raw map without width/height"
assert_no_file "raw map without width/height: no OUT" bad.wtd

# ---- SPZ: create, info, extract, verify; a declared size the stream cannot hold
for i in $(seq 1 45); do cat gen16.raw; done > pages.swp
run "$TROWEL" create -t spz -o level-130.spz pages.swp
assert_rc "spz create" 0
assert_eq "spz: u32 size first" 69930 "$(u32le level-130.spz 0)"
run "$TROWEL" extract level-130.spz -C x
assert_rc "spz extract" 0
assert_same_file "spz round trip" x/level-130.swp pages.swp
run "$TROWEL" verify level-130.spz
assert_rc "spz verify" 0
{ printf '\xff\xff\xff\x0f'; tail -c +5 level-130.spz; } > huge.spz
run "$TROWEL" extract huge.spz -C y
assert_rc "spz with a huge declared size: not detected, exit 1" 1
assert_contains "spz huge size: not taken for SPZ" "$ERR" "not a format trowel knows"
run "$TROWEL" extract -t spz huge.spz -C y
assert_rc "spz with a huge declared size, read as spz: exit 1" 1
assert_contains "spz huge size: says so" "$ERR" "can hold at most"
assert_no_file "spz huge size: nothing extracted" y/huge.swp

finish
