#!/usr/bin/env python3
"""An independent reader of Trespasser .wtd terrains, for cross-checks.

Written from ../shared/formats/trespasser.md and the game's data-format
description, apart from trowel's C code and in another shape: the update
sums are gathered node by node into a dictionary (as the game's
AccumulateWavelets feeds its vertices), the maximum-border reflection uses
the game's vertex renumbering formulas literally, and Python's floor
division does the rounding. Prints the heights as rows of integers
(row 0 first, each the full quad extent), or exits 1 with a message.
Standard library only.
"""
import struct
import sys


def main(path):
    data = open(path, 'rb').read()
    if len(data) % 4:
        sys.exit('not whole 32-bit words')
    words = struct.unpack('<%dI' % (len(data) // 4), data)
    pos = 0

    def read(n):
        nonlocal pos
        v = 0
        for _ in range(n):
            if pos >= 32 * len(words):
                sys.exit('bit stream runs out')
            v = v << 1 | (words[pos // 32] >> (31 - pos % 32)) & 1
            pos += 1
        return v

    if read(16) != 1001:
        sys.exit('not version 1001')
    read(32)
    read(32)
    root = read(32)
    root -= (root >> 31) << 32
    mapping = struct.unpack('<4i15f', bytes(read(8) for _ in range(76)))
    n = mapping[2]
    coef = {}  # (x, y) -> value; wavelets first, then scaling values

    def log2(v):
        return v.bit_length() - 1 if v > 0 else 0

    def node(x, y, s, size_bits, max_bits):
        if size_bits == 0 or not read(1):
            return
        branch, biggest = read(size_bits), read(max_bits)
        width = log2(biggest) + 2
        w = [read(width) for _ in range(3)]
        w = [-(u >> 1) if u & 1 else u >> 1 for u in w]
        h = s // 2
        coef[(x + h, y)], coef[(x + h, y + h)], coef[(x, y + h)] = w
        for dx, dy in ((0, 0), (1, 0), (1, 1), (0, 1)):
            node(x + dx * h, y + dy * h, h, log2(branch) + 1, log2(biggest) + 1)

    node(0, 0, n, 30, 30)
    coef[(0, 0)] = root

    def corners(x, y, s):
        return [(x, y), (x + s, y), (x + s, y + s), (x, y + s)]

    s = n
    while s >= 2:
        h = s // 2
        nodes = [(x, y) for y in range(0, n, s) for x in range(0, n, s)]
        sums = {}
        for x, y in nodes:
            w0, w1, w2 = (coef.get((x + h, y), 0), coef.get((x + h, y + h), 0),
                          coef.get((x, y + h), 0))
            diag = (x // s + y // s) % 2 == 1
            acc = [w0 + w2, w0, 0, w2]
            if diag:
                acc[1] += w1
                acc[3] += w1
            else:
                acc[0] += w1
                acc[2] += w1
            if x == 0:
                acc[0] += w0
                acc[3 if diag else 0] += w1
            if y == 0:
                acc[0] += w2
                acc[1 if diag else 0] += w1
            if x == 0 and y == 0:
                acc[0] += w1
            for k, c in enumerate(corners(x, y, s)):
                sums[c] = sums.get(c, 0) + acc[k]
        for (cx, cy), total in sums.items():
            if cx < n and cy < n:
                coef[(cx, cy)] = coef.get((cx, cy), 0) - (total + 4) // 8
        for x, y in nodes:
            def scaling(vt):
                if x + s == n:
                    vt = (vt >> 1) | (vt & 2)
                if y + s == n:
                    vt = (vt ^ (vt >> 1)) & 1
                return coef[corners(x, y, s)[vt]]
            diag = (x // s + y // s) % 2 == 1
            coef[(x + h, y)] = coef.get((x + h, y), 0) + (scaling(0) + scaling(1) + 1) // 2
            centre = (scaling(1) + scaling(3)) if diag else (scaling(0) + scaling(2))
            coef[(x + h, y + h)] = coef.get((x + h, y + h), 0) + (centre + 1) // 2
            coef[(x, y + h)] = coef.get((x, y + h), 0) + (scaling(0) + scaling(3) + 1) // 2
        s //= 2
    for y in range(n):
        print(' '.join(str(coef[(x, y)]) for x in range(n)))


if __name__ == '__main__':
    main(sys.argv[1])
