#!/usr/bin/env bash
# bench/bench_trespasser.sh [BUILD_DIR]
#
# Trespasser's codecs and terrain, timed with peak memory (/usr/bin/time -v):
#   SPZ decode vs SZDD decode: the same 16,000,000 bytes compressed both ways
#     by trowel (create -t spz / -t szdd), expanded with extract --stdout;
#     the two differ only in the LZSS window set-up, so they should match.
#   WTD encode and decode of an 8192 x 8192-extent terrain (67,108,864
#     samples, 8 bits, made here): create -t tres-wtd from raw, then
#     convert --to png (16-bit heights).
#   GROFF extract vs cp: a 268 MB GROFF of 32 sections of 8 MiB (random
#     bytes, made by create -t groff) extracted, against cp of the file.
#   WTD terrain meshes (convert --to glb from the quad tree): peak RSS, time
#     and output size against the tree's vertex count, for a sparse
#     8192-extent terrain (flat but for two hills and a plateau, like the real
#     demo level: most of it a few large quads) and a dense 1024-extent one
#     (the 8192 terrain's corner: every node significant). BENCH_TRES_PART=mesh
#     runs only this part.
#   PID to PNG vs Pillow: a texture directory of 64 paletted 512 x 512
#     textures with mips down to 64 (256 rasters, 22 MB of pixels) packed as
#     SPZ (made here from the documented layout), extract to 256 PNGs in 64
#     folders, against Pillow (python3-pil) writing the same pictures into
#     the same tree from the raw page file and palette
#     (so trowel also expands the SPZ and reads the PID; both use zlib's
#     default level and no PNG filter for paletted pictures).
# Prints the median wall time and the median peak RSS of BENCH_RUNS runs
# (default 5; the terrain: BENCH_TERRAIN_RUNS, default 3), and the ratio of
# the peer's time to trowel's (above 1: trowel is faster). Before every run
# the outputs are removed and `sync` writes back what is dirty (untimed).
# Builds nothing.
#
# Inputs (the same bytes on any machine with the same files):
#   pages: /usr/share/common-licenses/* in name order, repeated to 8,000,000
#          bytes, then libc.so.6 repeated to 6,000,000, then 2,000,000 zeros.
#   terrain: row y is a sine-and-ridge row of 8192 samples rotated by 3y,
#          raised by a slow swell of y (python3, standard library).
set -euo pipefail

build=${1:-build}
runs=${BENCH_RUNS:-5}
terrain_runs=${BENCH_TERRAIN_RUNS:-3}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/lib.sh" # take, ratio
trowel=$build/trowel
[[ -x $trowel ]] || { echo "bench_trespasser: $trowel is missing (build first)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench_trespasser: /usr/bin/time is not installed" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-tres.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
part=${BENCH_TRES_PART:-all}

# measure NAME RUNS CMD...: median seconds and median peak RSS (MiB).
measure() {
    local name=$1 n=$2
    shift 2
    local times=() rss=()
    for ((i = 0; i < n; i++)); do
        rm -rf out.run
        sync
        /usr/bin/time -v -o t.txt "$@" > /dev/null
        times+=("$(awk -F': ' '/Elapsed \(wall clock\)/ { split($2, a, ":");
            s = 0; for (k = 1; k in a; k++) s = s * 60 + a[k]; print s }' t.txt)")
        rss+=("$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' t.txt)")
    done
    local mt mr
    mt=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    mr=$(printf '%s\n' "${rss[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    printf '%-34s %8s s %9s MiB  (%d runs)\n' "$name" "$mt" "$mr" "$n"
    MEDIAN=$mt
}

if [[ $part == all ]]; then
{
    take 8000000 $(ls /usr/share/common-licenses/* | sort)
    take 6000000 /usr/lib/x86_64-linux-gnu/libc.so.6
    head -c 2000000 /dev/zero
} > pages.swp
cp pages.swp pages.bin
"$trowel" create -t spz -o pages.spz pages.swp
"$trowel" create -t szdd -o pages.bi_ pages.bin

echo "pages: $(stat -c %s pages.swp) bytes; spz $(stat -c %s pages.spz), szdd $(stat -c %s pages.bi_)"
measure "SPZ decode (extract --stdout)" "$runs" "$trowel" extract --stdout pages.spz
spz_time=$MEDIAN
measure "SZDD decode (extract --stdout)" "$runs" "$trowel" extract --stdout pages.bi_
echo "  SPZ decode against SZDD decode (the same loop): $(ratio "$MEDIAN" "$spz_time")"

# ---- GROFF: stored sections out of a container, against cp of it
mkdir sections
for i in $(seq -w 1 32); do head -c $((8 << 20)) /dev/urandom >"sections/s$i.bin"; done
(cd sections && "$trowel" create -q -t groff -o ../big.grf -- *)
rm -rf sections
measure "GROFF extract, 32 x 8 MiB" "$runs" "$trowel" extract -q big.grf -C out.run
groff_time=$MEDIAN
measure "cp of the same file" "$runs" cp big.grf out.run
echo "  GROFF: $(stat -c %s big.grf) bytes; cp's time / trowel's: $(ratio "$MEDIAN" "$groff_time")"
rm -f big.grf

# ---- PID + SPZ to PNG, against Pillow writing the same pictures into the
# same tree (GROUP/WxH.png: one folder per mip chain)
mkdir pid
python3 - pid <<'PYEOF'
import os, random, struct, sys
out = sys.argv[1]
rnd = random.Random(130)
colours = bytes(b for i in range(256) for b in (i, 255 - i, (i * 7) & 255, 0))
pal = struct.pack('<III', 16 + 4 * 256, 256, 0x5EED) + colours + bytes(4)
pages = bytearray()
rasters = b''
n = 0
with open(os.path.join(out, 'list.txt'), 'w') as listing:
    for k in range(64):  # 64 textures of 512 x 512 with mips down to 64: 256 rasters
        for side in (512, 256, 128, 64):
            # strokes over noise: compresses like a texture, not like zeros
            row = bytes(rnd.randrange(256) for _ in range(side))
            pic = b''.join(row[y % 17:] + row[:y % 17] for y in range(side))
            group = 0x10000 + k
            rasters += struct.pack('<11I4xQ', len(pic), len(pages), side, side, side, 8, 0, 0, 0,
                                   0, 0, group | side << 32 | side << 42)
            listing.write('%d %d %08x\n' % (len(pages), side, group))
            pages += pic
            n += 1
head = struct.pack('<8I', 0x130, 16, 32 + len(pal), n, 32, 1, 0, n)
open(os.path.join(out, 'bench.pid'), 'wb').write(head + pal + rasters)
open(os.path.join(out, 'pages.bin'), 'wb').write(pages)
open(os.path.join(out, 'palette.bin'), 'wb').write(colours)
PYEOF
"$trowel" create -q -t spz -o pid/bench.spz pid/pages.bin
cat >pil_peer.py <<'PYEOF'
import os
from PIL import Image
pages = open('pid/pages.bin', 'rb').read()
colours = open('pid/palette.bin', 'rb').read()
palette = b''.join(bytes((colours[i + 2], colours[i + 1], colours[i])) for i in range(0, 1024, 4))
for line in open('pid/list.txt'):
    off, side, group = line.split()
    off, side = int(off), int(side)
    os.makedirs('out.run/' + group, exist_ok=True)
    im = Image.frombytes('P', (side, side), pages[off:off + side * side])
    im.putpalette(palette)
    im.save('out.run/%s/%dx%d.png' % (group, side, side))
PYEOF
echo "pid: $(stat -c %s pid/pages.bin) bytes of pixels, spz $(stat -c %s pid/bench.spz)"
measure "PID to 256 PNGs (extract)" "$runs" "$trowel" extract -q pid/bench.pid -C out.run
pid_time=$MEDIAN
[[ $(find out.run -name '*.png' | wc -l) == 256 ]] || { echo "bench_trespasser: PID extract lost pictures" >&2; exit 1; }
measure "Pillow, the same 256 PNGs" "$runs" /usr/bin/python3 pil_peer.py
[[ $(find out.run -name '*.png' | wc -l) == 256 ]] || { echo "bench_trespasser: the Pillow peer lost pictures" >&2; exit 1; }
echo "  PID: Pillow's time / trowel's: $(ratio "$MEDIAN" "$pid_time")"
rm -rf pid out.run

python3 - <<'PYEOF'
import math
n = 8192
base = bytes(int(100 + 60 * math.sin(x * 0.0123) + 30 * math.sin(x * 0.071) * math.cos(x * 0.0021))
             for x in range(n))
with open('terrain.raw', 'wb') as f:
    for y in range(n):
        k = (3 * y) % n
        swell = int(20 * math.sin(y * 0.004))
        table = bytes(max(0, min(255, v + swell)) for v in range(256))
        f.write((base[k:] + base[:k]).translate(table))
PYEOF
measure "WTD encode 8192x8192 (create)" "$terrain_runs" \
    "$trowel" create -t tres-wtd -O width=8192 -O height=8192 -o terrain.wtd --force terrain.raw
echo "terrain: $(stat -c %s terrain.raw) samples -> $(stat -c %s terrain.wtd) bytes"
measure "WTD decode 8192x8192 (to png)" "$terrain_runs" \
    "$trowel" convert terrain.wtd --to png -o terrain.png --force
measure "WTD verify 8192x8192" "$terrain_runs" "$trowel" verify terrain.wtd
fi

# ---- WTD terrain meshes from the quad tree: memory and output against the
# tree's vertices (sparse 8192 extent; dense 1024 extent)
python3 - <<'PYEOF'
import math
n = 8192
flat = bytes([100]) * n
# Two small hills and a plateau with sharp edges (the real demo level has
# one at exactly 65,536 units), the rest flat: most of the extent is a few
# large quads, as in real levels.
hills = [(1500, 2200, 40, 90), (5200, 3100, 30, 120)]
with open('sparse.raw', 'wb') as f:
    for y in range(n):
        row = None
        for cx, cy, r, h in hills:
            if abs(y - cy) < 3 * r:
                row = row or bytearray(flat)
                for x in range(max(0, cx - 3 * r), min(n, cx + 3 * r)):
                    row[x] = min(255, row[x] + int(h * math.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (r * r))))
        if 6000 <= y < 6200:
            row = row or bytearray(flat)
            row[3000:3200] = bytes([220]) * 200
        f.write(bytes(row) if row is not None else flat)
PYEOF
"$trowel" create -q -t tres-wtd -O width=8192 -O height=8192 -o sparse.wtd --force sparse.raw
python3 - <<'PYEOF'
import math
n = 1024
base = bytes(int(100 + 60 * math.sin(x * 0.0123) + 30 * math.sin(x * 0.071) * math.cos(x * 0.0021))
             for x in range(8192))[:n]
with open('dense.raw', 'wb') as f:
    for y in range(n):
        k = (3 * y) % n
        f.write(bytes((v + int(20 * math.sin(y * 0.004))) % 256 for v in base[k:] + base[:k]))
PYEOF
"$trowel" create -q -t tres-wtd -O width=1024 -O height=1024 -o dense.wtd --force dense.raw
for t in sparse dense; do
    info=$("$trowel" info --json "$t.wtd")
    vertices=$(printf '%s' "$info" | python3 -c 'import json, sys; print(json.load(sys.stdin)["vertex_count"])')
    extent=$(printf '%s' "$info" | python3 -c 'import json, sys; print(json.load(sys.stdin)["extent"])')
    echo "$t: extent $extent, $(stat -c %s "$t.wtd") bytes, $vertices vertices in the tree"
    measure "  $t: tree mesh to glb" "$terrain_runs" "$trowel" convert "$t.wtd" --to glb -o "$t.glb" --force
    echo "    glb $(stat -c %s "$t.glb") bytes ($(awk -v b="$(stat -c %s "$t.glb")" -v v="$vertices" 'BEGIN { printf "%.1f", b / v }') bytes a vertex)"
    measure "  $t: tree mesh to obj" "$terrain_runs" "$trowel" convert "$t.wtd" --to obj -o "$t.obj" --force
    echo "    obj $(stat -c %s "$t.obj") bytes"
done
measure "  sparse: grid=1024 to glb" "$terrain_runs" "$trowel" convert sparse.wtd --to glb -O grid=1024 -o grid.glb --force
echo "    glb $(stat -c %s grid.glb) bytes (1025 x 1025 vertices, from the dense decode)"
