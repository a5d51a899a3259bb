#!/usr/bin/env python3
"""Builds a small Trespasser texture directory from the documented layout:
DIR/lvl-130.pid (three rasters over palette 0: a 3x3 paletted picture, its
1x1 mip, and a 2x1 bump map) and DIR/pages.bin, the page file's bytes, which
the caller packs into lvl-130.spz with `trowel create -t spz`.
Usage: make_pid.py DIR"""
import os
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out, exist_ok=True)
# palette 0: 3 colours (B, G, R, flags) + 4 slack bytes
pal = (struct.pack('<III', 16 + 4 * 3, 3, 0x0BADF00D)
       + bytes([0, 0, 0, 0, 0, 0, 255, 0, 255, 0, 0, 0]) + bytes(4))
pix8 = bytes([0, 1, 2, 1, 2, 0, 2, 0, 1])                     # 3x3 at 0
mip = bytes([2])                                              # 1x1 at 9
bump = struct.pack('<2H', 5 | 7 << 4 | 9 << 10, 15 | 63 << 4)  # 2x1 at 10
low = 0x12345678


def raster(size, off, w, h, bits, transparent, isbump, palette, hsh):
    return struct.pack('<11I4xQ', size, off, w, h, w, bits, 0, transparent, isbump, 0,
                       palette, hsh)


rs = (raster(9, 0, 3, 3, 8, 1, 0, 0, low | 3 << 32 | 3 << 42) +
      raster(1, 9, 1, 1, 8, 1, 0, 0, low | 1 << 32 | 1 << 42) +
      raster(4, 10, 2, 1, 16, 0, 1, 0xFFFFFFFF, 0xCAFE0001 | 2 << 32 | 1 << 42))
head = struct.pack('<8I', 0x130, 16, 32 + len(pal), 3, 32, 1, 0, 3)
with open(os.path.join(out, 'lvl-130.pid'), 'wb') as f:
    f.write(head + pal + rs)
with open(os.path.join(out, 'pages.bin'), 'wb') as f:
    f.write(pix8 + mip + bump)
