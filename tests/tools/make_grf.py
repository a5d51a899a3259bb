#!/usr/bin/env python3
"""Writes the sections of a small GRF world, and a trowel manifest naming
them, from the layouts in docs/formats/groff.md, for `trowel create
--manifest` to assemble (tests and `make run`; no game data involved).

    make_grf.py DIR plain|heap|v10

plain: version 15, one object "Box" (one triangle, a mapping and a
       material with one texture) placed at (10, 20, 30), scale 2, and an
       object "Marker" without geometry; a value table gives Box the class
       "CInstance" and a float "Mass" 2.5.
heap:  version 13 with the optimised bit, one object "Slab": a mesh heap
       holding one quad (two triangles) and no material (default colour),
       rotated by pi/2 about Z.
v10:   like plain but version 10, which the game refuses.
"""
import json
import math
import os
import struct
import sys

MAGIC = 0x0ACEBABE
SECTION = 0x80000000


def u32(*v):
    return struct.pack('<%dI' % len(v), *v)


def f32(*v):
    return struct.pack('<%df' % len(v), *v)


def cstr(text):
    return text.encode() + b'\0'


def handle_record(name):
    return cstr(name) + u32(0x10000, 0x10003, 3) + bytes([1])


def value_table():
    """Symbols Class (0x200) and Mass (0x201); values: object 100 with
    members 101 and 102, string 101 'Class' = CInstance, float 102 'Mass'
    = 2.5. Each value: type, scope, ref status, handles value/symbol/target
    (id, refcount), payload, key handle."""
    t = cstr('World') + handle_record('World.Sym') + cstr('World.Sym')
    t += u32(2) + cstr('Class') + u32(0x200, 1) + cstr('Mass') + u32(0x201, 1)
    t += handle_record('World.Val') + u32(3)
    t += bytes([6, 1, 0]) + u32(100, 1, 0, 0, 0, 0) + u32(2, 101, 1, 102, 1) + u32(100, 1)
    t += bytes([5, 1, 0]) + u32(101, 1, 0x200, 1, 0, 0) + cstr('CInstance') + u32(101, 1)
    t += bytes([4, 1, 0]) + u32(102, 1, 0x201, 1, 0, 0) + f32(2.5) + u32(102, 1)
    return t


def build(kind):
    version = {'plain': 15, 'heap': 13, 'v10': 10}[kind]
    optimised = kind == 'heap'
    sections = []   # (name, user flags, bytes)
    names = {}      # symbol name -> handle

    def sym(name):
        if name not in names:
            names[name] = 0x00400000 + 0x20 * len(names)
        return names[name]

    def handle(name):
        return SECTION + [s[0] for s in sections].index(name)

    header = u32(MAGIC, version | (0x80000000 if optimised else 0))
    sections.append(['.header', 0x1, header])
    sections.append(['.region', 0x2, b''])
    if kind in ('plain', 'v10'):
        sections.append(['Box', 0x4, b''])
        sections.append(['Box-geometry', 0x8, b''])
        sections.append(['Box-mapping', 0x10, b''])
        sections.append(['Box-material', 0x20, b''])
        sections.append(['Marker', 0x4, b''])
        sections.append(['Attributes', 0x2000, value_table()])
        tex = sym('Maps\\rock.bmp')
        v = max(version, 11)
        geo = (f32(0, 0, 0) if v >= 14 else b'') + u32(3, 1, 3) + (u32(0) if v >= 13 else b'')
        geo += u32(10, 20, 30)
        geo += f32(0, 0, 0, 1, 0, 0, 0, 1, 0) + u32(0, 1, 2) + f32(0, 0, 1) + f32(0, 0, 1) * 3
        mapping = u32(handle('Box-material'), 3, 1) + f32(0, 0, 1, 0, 0, 1) + u32(0, 1, 2) + u32(0)
        material = u32(1, tex, 0, 0) + (u32(255, 128, 0) if v >= 15 else b'')
        material += f32(0.5, 1.0, 0.0, 1.0, 0.0)
        obj = u32(sym('Box'), handle('Box-geometry'), handle('Box-mapping'), 0, 0, 0, 0)
        marker = u32(sym('Marker'), 0, 0, 0, 0, 0, 0)
        for s in sections:
            s[2] = {'Box': obj, 'Box-geometry': geo, 'Box-mapping': mapping,
                    'Box-material': material, 'Marker': marker}.get(s[0], s[2])
        placements = [(handle('Box'), sym('Box'), (10, 20, 30), (0, 0, 0), 2.0, 100),
                      (handle('Marker'), sym('Marker'), (1, 2, 3), (0, 0, 0), 1.0, 0)]
        attributes = handle('Attributes')
    else:
        sections.append(['Slab', 0x4, b''])
        sections.append(['Slab-geometry', 0x8, b''])
        points = f32(0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0)
        verts = b''.join(u32(i) + f32(0, 0, 1) + f32(i % 2, i // 2) + u32(0, 0) for i in range(4))
        heap = u32(0, 1) + u32(0x00102030) + f32(0, 0, 0) + u32(4, 4, 4, 0, 1)
        heap += points + verts + u32(0, 1, 2, 3) + u32(4, 0) + f32(0, 0, 1, 0) + u32(0, 0, 0, 0)
        for s in sections:
            if s[0] == 'Slab':
                s[2] = u32(sym('Slab'), handle('Slab-geometry'), 0, 0, 0, 0, 0)
            elif s[0] == 'Slab-geometry':
                s[2] = heap
        placements = [(handle('Slab'), sym('Slab'), (0, 0, 0), (0, 0, math.pi / 2), 1.0, 0)]
        attributes = 0
    region = u32(len(placements))
    for section, name, pos, rot, scale, attr in placements:
        region += u32(section, name) + f32(*pos) + f32(*rot) + f32(scale)
        if version >= 12:
            region += u32(attr, 1 if attr else 0)
    if version >= 12:
        region += u32(attributes)
    sections[1][2] = region
    for s in sections:
        sym(s[0])
    return sections, names


def main():
    out, kind = sys.argv[1], sys.argv[2]
    sections, names = build(kind)
    os.makedirs(out, exist_ok=True)
    entries = []
    for i, (name, flags, data) in enumerate(sections):
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)
        entries.append({'name': name, 'symbol': name, 'symbol_handle': names[name],
                        'section_handle': SECTION + i, 'user_flags': flags})
    symbols = [{'name': n, 'handle': h, 'refcount': 1}
               for n, h in sorted(names.items(), key=lambda kv: kv[0].encode())]
    manifest = {'trowel_manifest': 1, 'format': 'groff', 'entries': entries,
                'symbols': symbols}
    with open(os.path.join(out, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=1)


if __name__ == '__main__':
    main()
