"""akos_codec16.py: AKOS codec 16 cels, written and read from the format notes
(shared/seeds/scumm-costumes.txt 2.4.3, shared/formats/scumm-costumes.md):
byte 0 bits per literal colour, byte 1 the first colour, then a bit stream
read least significant bit first from byte 2 on. For each pixel, row after
row: write the colour; then, unless a repeat is running, read a bit: 0 keeps
the colour; 1 then 0: a literal of `bpp` bits; 1 then 1: a 3-bit d, d != 4
adds d - 4 to the colour, d == 4 reads an 8-bit count and repeats the colour
count - 1 more pixels.

  make IN.akos OUT.akos PIXELS.hex   IN with its one cel replaced by a codec 16
                                     cel (20x16) using every kind of code,
                                     repeats of more than 127 pixels included;
                                     PIXELS.hex: the pixels decode() gives
  png FILE                           the indices of an 8-bit indexed PNG, hex
"""
import struct
import sys
import zlib

W, H, BPP = 20, 16, 8


class Bits:
    def __init__(self):
        self.bits = []

    def put(self, value, n):  # n bits of value, least significant first
        self.bits += [(value >> i) & 1 for i in range(n)]

    def data(self):
        padded = self.bits + [0] * (-len(self.bits) % 8 + 16)
        return bytes(sum(padded[i + k] << k for k in range(8)) for i in range(0, len(padded), 8))


def encode(first, codes):
    """codes: ("same",), ("literal", c), ("delta", d), ("repeat", count)."""
    b = Bits()
    for code in codes:
        if code[0] == "same":
            b.put(0, 1)
        elif code[0] == "literal":
            b.put(0b01, 2)
            b.put(code[1], BPP)
        elif code[0] == "delta":
            b.put(0b11, 2)
            b.put(code[1] + 4, 3)
        else:
            b.put(0b11, 2)
            b.put(4, 3)
            b.put(code[1], 8)
    return bytes([BPP, first]) + b.data()


def decode(cel, w, h):
    bpp, colour = cel[0], cel[1]
    stream = cel[2:]
    pos = [0]

    def bit():
        i = pos[0]
        pos[0] += 1
        return (stream[i // 8] >> (i % 8)) & 1 if i // 8 < len(stream) else 0

    def bits(n):
        return sum(bit() << k for k in range(n))

    out, repeat = [], 0
    for _ in range(w * h):
        out.append(colour)
        if repeat > 0:
            repeat -= 1
        elif bit():
            if bit():
                d = bits(3)
                if d != 4:
                    colour = (colour + d - 4) & 255
                else:
                    repeat = bits(8) - 1
            else:
                colour = bits(bpp)
    return out


def blocks(d):
    p = 8
    while p + 8 <= len(d):
        n = struct.unpack(">I", d[p + 4:p + 8])[0]
        yield d[p:p + 4], d[p + 8:p + n]
        p += n


def make(src, dst, hexfile):
    # 320 pixels: a literal, a 200-pixel repeat (more than 7 bits can
    # count), deltas up and down, a 130-less repeat across rows, literals of
    # 255 (transparent), and plain same-colour steps.
    codes = [("literal", 40), ("repeat", 200), ("delta", 3), ("same",), ("delta", -4),
             ("repeat", 129), ("literal", 255), ("same",), ("delta", -1), ("literal", 7),
             ("delta", 2)] + [("same",)] * (W * H)
    cel = encode(12, codes)
    pixels = decode(cel, W, H)
    assert pixels[1:201] == [40] * 200, "the 200-pixel repeat"
    out = b""
    for tag, data in blocks(open(src, "rb").read()):
        if tag == b"AKHD":
            data = data[:4] + struct.pack("<HHH", 1, 1, 16) + data[10:]
        elif tag == b"AKOF":
            data = struct.pack("<IH", 0, 0)
        elif tag == b"AKCI":
            data = struct.pack("<HHhhhh", W, H, -10, -16, 0, 0)
        elif tag == b"AKCD":
            data = cel
        out += tag + struct.pack(">I", 8 + len(data)) + data
    open(dst, "wb").write(b"AKOS" + struct.pack(">I", 8 + len(out)) + out)
    open(hexfile, "w").write(bytes(pixels).hex() + "\n")


def paeth(a, b, c):
    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def png_indices(path):
    d = open(path, "rb").read()
    assert d[:8] == b"\x89PNG\r\n\x1a\n"
    p, idat, head = 8, b"", None
    while p < len(d):
        n = struct.unpack(">I", d[p:p + 4])[0]
        tag, body = d[p + 4:p + 8], d[p + 8:p + 8 + n]
        if tag == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif tag == b"IDAT":
            idat += body
        p += 12 + n
    w, h, depth, ctype, _, _, interlace = head
    assert depth == 8 and ctype == 3 and interlace == 0, "not an 8-bit indexed PNG"
    raw, rows, prev = zlib.decompress(idat), [], bytes(w)
    for y in range(h):
        f, line = raw[y * (w + 1)], bytearray(raw[y * (w + 1) + 1:(y + 1) * (w + 1)])
        for x in range(w):
            a, b, c = line[x - 1] if x else 0, prev[x], prev[x - 1] if x else 0
            pred = [0, a, b, (a + b) // 2][f] if f < 4 else paeth(a, b, c)
            line[x] = (line[x] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return b"".join(rows)


if sys.argv[1] == "make":
    make(*sys.argv[2:5])
elif sys.argv[1] == "png":
    print(png_indices(sys.argv[2]).hex())
else:
    raise SystemExit(__doc__)
