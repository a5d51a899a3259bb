#!/usr/bin/env python3
"""Independent checks of trowel's terrain outputs (standard library only).

    terrain_check.py png FILE           size, depth, text chunks, min/max pixel
    terrain_check.py mesh OBJ PNG [all] the OBJ against the height PNG
    terrain_check.py glb FILE           the GLB's position bounds

png: decodes the PNG here (zlib + the five PNG filters), apart from trowel
and libpng. mesh: every vertex (Y-up: x east, y up, z = -north, a terrain
made with spacing 1 from the origin) must sit on a quad vertex and, inside
the extent (or everywhere with `all`), at the PNG's height (offset + scale
x pixel, times coef-to-world from its text chunks); every triangle must
face up (counter-clockwise seen from +Y); every edge inside the extent
must be shared by exactly two triangles (no T-junction cracks); and the
triangles must cover the extent once. Prints one summary line.
"""
import json
import struct
import sys
import zlib


def read_png(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit('not a PNG')
    pos, idat, text = 8, b'', {}
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            w, h, depth, colour, _, _, interlace = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        elif kind == b'tEXt':
            key, _, value = body.partition(b'\0')
            text[key.decode('latin-1')] = value.decode('latin-1')
        pos += 12 + n
    if colour != 0 or interlace != 0 or depth not in (8, 16):
        sys.exit('not a plain gray PNG')
    bpp = depth // 8
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append([line[i] << 8 | line[i + 1] if bpp == 2 else line[i]
                     for i in range(0, stride, bpp)])
        prev = line
    return w, h, depth, text, rows


def read_obj(path):
    v, f = [], []
    for line in open(path):
        t = line.split()
        if t and t[0] == 'v':
            v.append(tuple(map(float, t[1:4])))
        elif t and t[0] == 'f':
            f.append([int(x.split('/')[0]) - 1 for x in t[1:]])
    return v, f


def mesh(obj, png, everywhere):
    w, h, _, text, rows = read_png(png)
    n = w - 1
    offset = int(text.get('trowel:height-offset', 0))
    scale = int(text.get('trowel:height-scale', 1))
    metres = float(text.get('trowel:coef-to-world', 1))
    v, f = read_obj(obj)
    mismatch = 0
    for x, up, z in v:
        qx, qy = round(x), round(-z)
        if abs(qx - x) > 1e-6 or abs(qy + z) > 1e-6 or not (0 <= qx <= n and 0 <= qy <= n):
            sys.exit('vertex (%g, %g, %g) is not on a quad vertex' % (x, up, z))
        if (qx < n and qy < n) or everywhere:
            want = (offset + scale * rows[qy][qx]) * metres
            mismatch += abs(want - up) > 1e-3 * max(1.0, abs(want))
    edges, area, down = {}, 0.0, 0
    for tri in f:
        a, b, c = (v[i] for i in tri)
        # Seen from +Y, with east = x and north = -z.
        cross = (b[0] - a[0]) * (-c[2] + a[2]) - (-b[2] + a[2]) * (c[0] - a[0])
        area += cross / 2
        down += cross <= 0
        for p, q in ((tri[0], tri[1]), (tri[1], tri[2]), (tri[2], tri[0])):
            key = (min(p, q), max(p, q))
            edges[key] = edges.get(key, 0) + 1

    def on_border(i):
        return round(v[i][0]) in (0, n) or round(-v[i][2]) in (0, n)

    open_edges = sum(1 for (p, q), k in edges.items()
                     if k != 2 and not (on_border(p) and on_border(q) and k == 1 and
                                        (round(v[p][0]) == round(v[q][0]) or
                                         round(v[p][2]) == round(v[q][2]))))
    print('vertices %d faces %d mismatched %d open %d facing-down %d area %g' %
          (len(v), len(f), mismatch, open_edges, down, area))


def glb(path):
    data = open(path, 'rb').read()
    magic, _, _ = struct.unpack('<4sII', data[:12])
    n, kind = struct.unpack('<I4s', data[12:20])
    if magic != b'glTF' or kind != b'JSON':
        sys.exit('not a GLB')
    doc = json.loads(data[20:20 + n])
    lo, hi = [1e30] * 3, [-1e30] * 3
    for m in doc['meshes']:
        for p in m['primitives']:
            acc = doc['accessors'][p['attributes']['POSITION']]
            lo = [min(a, b) for a, b in zip(lo, acc['min'])]
            hi = [max(a, b) for a, b in zip(hi, acc['max'])]
    print('min %s max %s' % (' '.join('%g' % x for x in lo), ' '.join('%g' % x for x in hi)))


def main():
    what = sys.argv[1]
    if what == 'png':
        w, h, depth, text, rows = read_png(sys.argv[2])
        flat = [p for r in rows for p in r]
        print('size %dx%d depth %d min %d max %d' % (w, h, depth, min(flat), max(flat)))
        for k in sorted(text):
            print('text %s=%s' % (k, text[k]))
    elif what == 'mesh':
        mesh(sys.argv[2], sys.argv[3], len(sys.argv) > 4 and sys.argv[4] == 'all')
    elif what == 'glb':
        glb(sys.argv[2])
    else:
        sys.exit('png, mesh or glb')


if __name__ == '__main__':
    main()
