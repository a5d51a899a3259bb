#!/usr/bin/env bash
# Trespasser terrain (tres-wtd) and page files (spz) from the command line:
# the game's real height fields encoded and decoded exactly, an independent
# Python reader (tests/tools/wtd_reference.py) agreeing with trowel, PNG
# pixels read by PIL and by tests/tools/terrain_check.py, heights beyond 16
# bits (65,536 and below 0) through the PNG and back to the same bits, the
# quad-tree mesh (Y-up, watertight, at the heights) and the grid mesh, a
# terrain lining up with a GRF world, hostile files (exit 1, clear
# message, no output left), and an SPZ round trip. Every helper's exit
# status is checked.
. "${BASH_SOURCE%/*}/lib.sh"

HF="$TROWEL_CORPUS/trespasser/heightfields"
REF="$TROWEL_SOURCE/tests/tools/wtd_reference.py"
CHECK="$TROWEL_SOURCE/tests/tools/terrain_check.py"
have_cmd python3 || skip_all "python3 is needed for the independent readers"

# assert_rc_of_last NAME STATUS: a helper (a Python reader, a generator)
# must succeed, or its output proves nothing.
assert_rc_of_last() {
    if [ "$2" = 0 ]; then pass; else fail "$1" "exit status $2"; fi
}
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
run "$TROWEL" info --json gen.wtd
assert_rc "info --json: exit 0" 0
printf '%s\n' "$OUT" >info.json
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
assert_rc "convert --to png, whole extent: exit 0" 0
python3 "$REF" gen.wtd >ref.txt
assert_rc_of_last "reference reader on gen.wtd" $?
got=$(python3 "$CHECK" png full.png)
assert_rc_of_last "terrain_check png full.png" $?
assert_contains "PNG: the extent and its last row and column" "$got" "size 65x65 depth 16"
assert_contains "PNG: offset in a text chunk" "$got" "text trowel:height-offset=0"
assert_contains "PNG: scale in a text chunk" "$got" "text trowel:height-scale=1"
if [ -n "$PY" ]; then
    got=$("$PY" - <<'PYEOF'
from PIL import Image
im = Image.open('full.png')
w, h = im.size
px = list(im.getdata())
inner = [px[y * w + x] for y in range(h - 1) for x in range(w - 1)]
ref = [int(t) for t in open('ref.txt').read().split()]
print(len(inner), inner == ref)
PYEOF
)
    assert_rc_of_last "PIL read of full.png" $?
    assert_eq "reference reader = trowel on all 64x64 heights" "4096 True" "$got"
else
    skip "no python3 with PIL: reference reader not compared"
fi
run "$TROWEL" create -t tres-wtd -o back.wtd full.png
assert_rc "create from trowel's own PNG: exit 0" 0
assert_same_file "PNG -> create: the same WTD bits" gen.wtd back.wtd

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
            assert_rc_of_last "$name: PIL read" $?
            assert_eq "$name: every height back" "($w, $h) True" "$got"
        fi
    done
    # an independent reader on a real map (the smallest non-trivial one)
    cp "$HF/phytestheightmap.RAW" phy.raw
    "$TROWEL" create -t tres-wtd -o phy.wtd -O width=80 -O height=80 phy.raw || exit 1
    python3 "$REF" phy.wtd >phy.txt
    assert_rc_of_last "reference reader on phy.wtd" $?
    got=$(python3 -c "
rows = [list(map(int, l.split())) for l in open('phy.txt')]
raw = open('phy.raw', 'rb').read()
print(len(rows) == 128 and all(rows[y][x] == raw[min(y, 79) * 80 + min(x, 79)] for y in range(128) for x in range(128)))")
    assert_rc_of_last "comparing phy.txt" $?
    assert_eq "reference reader decodes the game's phytest map exactly" True "$got"
else
    skip "trespasser height fields absent from the corpus"
fi

# ---- meshes: a crop is a full-resolution grid, Y-up (x east, y up, z south)
run "$TROWEL" convert gen.wtd --to obj -O width=37 -O height=21 -o gen.obj
assert_rc "convert --to obj" 0
assert_eq "OBJ: one vertex per sample" 777 "$(grep -c '^v ' gen.obj)"
assert_eq "OBJ: two triangles per cell" 1440 "$(grep -c '^f ' gen.obj)"
got=$(python3 - <<'PYEOF'
import struct
# An independent OBJ read: every face index valid, every vertex at
# (x, height x 0.01, -y) in world units, Y-up.
v, f = [], []
for line in open('gen.obj'):
    t = line.split()
    if t and t[0] == 'v':
        v.append(tuple(map(float, t[1:4])))
    elif t and t[0] == 'f':
        f.append([int(x.split('/')[0]) for x in t[1:]])
raw = struct.unpack('<%dH' % (37 * 21), open('gen16.raw', 'rb').read())
ok_faces = all(len(x) == 3 and all(1 <= i <= len(v) for i in x) for x in f)
ok_verts = all(abs(v[y * 37 + x][0] - x) < 1e-6 and abs(v[y * 37 + x][2] + y) < 1e-6 and
               abs(v[y * 37 + x][1] - raw[y * 37 + x] * 0.01) < 1e-3
               for y in range(21) for x in range(37))
print(ok_faces, ok_verts)
PYEOF
)
assert_rc_of_last "independent OBJ read" $?
assert_eq "OBJ read independently: faces valid, vertices at the heights" "True True" "$got"

# The quad tree's own mesh (the default): the header's vertices, at the
# PNG's heights inside the extent, facing up, watertight, covering it once.
run "$TROWEL" convert gen.wtd --to obj -o tree.obj
assert_rc "tree mesh: exit 0" 0
assert_eq "tree mesh: one vertex per vertex of the tree" \
    "$(json_get info.json .vertex_count)" "$(grep -c '^v ' tree.obj)"
got=$(python3 "$CHECK" mesh tree.obj full.png)
assert_rc_of_last "terrain_check mesh tree.obj" $?
assert_contains "tree mesh: at the heights, up, no cracks, the extent once" "$got" \
    "mismatched 0 open 0 facing-down 0 area 4096"
# A tree whose every node is significant is the full grid: then the last
# row and column agree too (the game's border rule in both readings).
python3 -c "
import random, struct
random.seed(7)
open('dense.raw', 'wb').write(struct.pack('<4096H', *[random.randrange(65536) for _ in range(4096)]))
" || exit 1
"$TROWEL" create -t tres-wtd -o dense.wtd -O width=64 -O height=64 dense.raw || exit 1
"$TROWEL" convert dense.wtd --to png -o dense.png || exit 1
"$TROWEL" convert dense.wtd --to obj -o dense.obj || exit 1
got=$(python3 "$CHECK" mesh dense.obj dense.png all)
assert_rc_of_last "terrain_check mesh dense.obj" $?
assert_eq "a full tree: every vertex, border included, at the PNG's height" \
    "vertices 4225 faces 8192 mismatched 0 open 0 facing-down 0 area 4096" "$got"
run "$TROWEL" convert gen.wtd --to obj -O grid=16 -o grid.obj
assert_rc "grid=16: exit 0" 0
assert_eq "grid=16: 17 x 17 vertices" 289 "$(grep -c '^v ' grid.obj)"
got=$(python3 "$CHECK" mesh grid.obj full.png all)
assert_rc_of_last "terrain_check mesh grid.obj" $?
assert_contains "grid=16: at the PNG's heights, up, covering the extent" "$got" \
    "mismatched 0 open 0 facing-down 0 area 4096"
run "$TROWEL" convert gen.wtd --to obj -O grid=12 -o bad.obj
assert_usage_error "grid= not a power of two"
assert_no_file "grid=12: nothing written" bad.obj
run "$TROWEL" convert gen.wtd --to obj -O grid=16 -O width=3 -o bad.obj
assert_usage_error "grid= with a crop"

run "$TROWEL" convert gen.wtd --to glb -O width=37 -O height=21 -o gen.glb
assert_rc "convert --to glb" 0
assert_eq "GLB magic" "103 108 84 70" "$(bytes gen.glb 0 4)"
run "$TROWEL" convert gen.wtd --to glb -o tree.glb
assert_rc "tree mesh as GLB: exit 0" 0
for glb in gen.glb tree.glb; do
    node "$TROWEL_SOURCE/tests/tools/gltf_validate.js" "$glb" >val.txt 2>&1
    case $? in
        0) pass ;;
        2) skip "gltf-validator not installed (scripts/deps.sh test)" ;;
        *) fail "$glb fails the Khronos validator: $(cat val.txt)" ;;
    esac
done

# ---- heights past 16 bits, as in the game's demo terrain: a plateau at
# exactly 65,536 units and heights below 0 at the far edge. The map is a
# PNG written here (standard library) whose text chunks say height = -2 +
# 2 x pixel and that its 65 x 65 vertices are an extent of 64 and its
# maximum border, so the encoder gets the whole range.
python3 - <<'PYEOF'
import random, struct, zlib
random.seed(11)
n = 65
rows = []
for y in range(n):
    row = []
    for x in range(n):
        if 20 <= x < 40 and 20 <= y < 40:
            row.append(32769)               # -2 + 2 x 32769 = 65536
        elif x >= 60:
            row.append(0)                   # -2
        else:
            row.append(random.randrange(500, 30000))
    rows.append(row)
def chunk(kind, body):
    return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body))
raw = b''.join(b'\0' + struct.pack('>%dH' % n, *r) for r in rows)
png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', n, n, 16, 0, 0, 0, 0))
png += chunk(b'tEXt', b'trowel:height-offset\0-2') + chunk(b'tEXt', b'trowel:height-scale\x002')
png += chunk(b'tEXt', b'trowel:tres-wtd-extent\x0064')
png += chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')
open('wide-in.png', 'wb').write(png)
PYEOF
assert_rc_of_last "writing wide-in.png" $?
run "$TROWEL" create -t tres-wtd -o wide.wtd wide-in.png
assert_rc "create a terrain from -2 to 65,536: exit 0" 0
run "$TROWEL" verify wide.wtd
assert_rc "verify it" 0
run "$TROWEL" convert wide.wtd --to json -o wide.json
assert_rc "convert --to json" 0
assert_json_eq "json: lowest height" wide.json .heights.min -2
assert_json_eq "json: highest height (the plateau)" wide.json .heights.max 65536
assert_json_eq "json: PNG offset" wide.json .heights.png_offset -2
assert_json_eq "json: PNG scale" wide.json .heights.png_scale 2
run "$TROWEL" convert wide.wtd --to png -o wide.png
assert_rc "--to png of heights past 16 bits: exit 0 (refused before)" 0
assert_contains "--to png: says how the range is mapped" "$ERR" "offset -2 and scale 2"
got=$(python3 "$CHECK" png wide.png)
assert_rc_of_last "terrain_check png wide.png" $?
assert_contains "wide PNG: the whole range in 16 bits" "$got" "size 65x65 depth 16 min 0 max 32769"
assert_contains "wide PNG: offset chunk" "$got" "text trowel:height-offset=-2"
assert_contains "wide PNG: scale chunk" "$got" "text trowel:height-scale=2"
run "$TROWEL" create -t tres-wtd -o wide-back.wtd wide.png
assert_rc "create from the wide PNG: exit 0" 0
assert_same_file "wide PNG -> create: the same WTD bits" wide.wtd wide-back.wtd
run "$TROWEL" convert wide.wtd --to obj -o wide.obj
assert_rc "wide terrain as a tree mesh" 0
got=$(python3 "$CHECK" mesh wide.obj wide.png)
assert_rc_of_last "terrain_check mesh wide.obj" $?
assert_contains "wide tree mesh: at the heights inside the extent, sound" "$got" \
    "mismatched 0 open 0 facing-down 0 area 4096"
run "$TROWEL" convert wide.wtd --to glb -o wide.glb
assert_rc "wide terrain as GLB" 0
got=$(python3 "$CHECK" glb wide.glb)
assert_rc_of_last "terrain_check glb wide.glb" $?
# Height is +Y: the plateau is the top of the Y range; x runs 0..64 east
# and z 0..-64 (north is -Z).
assert_eq "GLB: height on +Y, north on -Z" "65536 0 -64 64" \
    "$(printf '%s\n' "$got" | awk '{print $7, $8, $4, $6}')"
node "$TROWEL_SOURCE/tests/tools/gltf_validate.js" wide.glb >val.txt 2>&1
case $? in
    0) pass ;;
    2) skip "gltf-validator not installed (scripts/deps.sh test)" ;;
    *) fail "wide.glb fails the Khronos validator: $(cat val.txt)" ;;
esac

# ---- a picture to look at: 8-bit, hill-shaded, north up
run "$TROWEL" convert wide.wtd --to png -O shade=1 -o shade.png
assert_rc "shade=1: exit 0" 0
got=$(python3 "$CHECK" png shade.png)
assert_rc_of_last "terrain_check png shade.png" $?
assert_contains "shade=1: 8-bit gray over the whole extent" "$got" "size 65x65 depth 8"
run "$TROWEL" convert wide.wtd --to png -O shade=2 -o bad.png
assert_usage_error "shade=2"
run "$TROWEL" convert wide.wtd --to obj -O shade=1 -o bad.obj
assert_usage_error "shade= with a mesh"

# ---- a terrain and a GRF world from the same level line up: the GRF's
# box is placed at world (10, 20, 30) (tests/tools/make_grf.py) and the
# terrain (1 m spacing from the origin, 0.01 m a unit) has 30 m at world
# (10, 20); both meshes must put that point at Y-up (10, 30, -20).
python3 - <<'PYEOF'
import random, struct
random.seed(3)
v = [random.randrange(2000, 4000) for _ in range(32 * 32)]
v[20 * 32 + 10] = 3000
open('level.raw', 'wb').write(struct.pack('<%dH' % len(v), *v))
PYEOF
assert_rc_of_last "writing level.raw" $?
python3 "$TROWEL_SOURCE/tests/tools/make_grf.py" grf-src plain
assert_rc_of_last "make_grf.py" $?
run "$TROWEL" create --manifest grf-src/manifest.json -C grf-src -o level.grf
assert_rc "GRF world built" 0
run "$TROWEL" create -t tres-wtd -O width=32 -O height=32 -O scale=0.01 -o level.wtd level.raw
assert_rc "level terrain built" 0
run "$TROWEL" convert level.grf --to obj -o level-world.obj
assert_rc "GRF world as OBJ" 0
run "$TROWEL" convert level.wtd --to obj -o level-terrain.obj
assert_rc "terrain as OBJ" 0
got=$(python3 - <<'PYEOF'
def verts(path):
    return [tuple(float(t) for t in l.split()[1:4]) for l in open(path) if l.startswith('v ')]
world = verts('level-world.obj')
terrain = verts('level-terrain.obj')
box = world[0]   # the box's first corner: its origin, placed at (10, 20, 30)
under = [v for v in terrain if abs(v[0] - box[0]) < 1e-4 and abs(v[2] - box[2]) < 1e-4]
print('box %g %g %g' % box, 'terrain', ' '.join('%g %g %g' % v for v in under))
PYEOF
)
assert_rc_of_last "comparing the two OBJs" $?
assert_eq "GRF placement and the terrain vertex under it line up, Y-up" \
    "box 10 30 -20 terrain 10 30 -20" "$got"

# ---- hostile files: exit 1, a clear message, nothing written
head -c 100 gen.wtd > cut.wtd
run "$TROWEL" convert cut.wtd --to png -o cut.png
assert_rc "cut bit stream: exit 1" 1
assert_contains "cut bit stream: says so" "$ERR" "bit stream runs out"
assert_no_file "cut bit stream: no PNG left" cut.png
run "$TROWEL" verify cut.wtd
assert_rc "verify of a cut stream: exit 1" 1
python3 -c "
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
assert_rc_of_last "building deep.wtd" $?
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
