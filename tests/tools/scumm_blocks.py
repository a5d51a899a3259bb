"""scumm_blocks.py: an independent reader of SCUMM resource files (v5-v7),
written from shared/formats/scumm-costumes.md ("Where costumes live"): every
block is a 4-character tag + big-endian u32 size (header included); v5/v6
files are XORed with 0x69 (detected from the first tag).

  hashes INDEX DATA        one line per block trowel lists as an entry:
                           "index|data OFFSET TAG SHA256" (the index's
                           top-level blocks; LOFF, each LFLF's children and
                           each ROOM's children in the data file)
  unxor IN OUT             IN without its XOR (plain files are copied)
  palette PALS OUT          the first APAL (palette 0) of a PALS block as
                           extract writes it, as 768 raw bytes
  break-costumes IN OUT N  IN with the format byte of its first N COST
                           blocks set to 0x42 (no such format), XOR kept
"""
import hashlib
import struct
import sys

KNOWN_FIRST = (b"LECF", b"RNAM", b"MAXS")


def load(path):
    raw = open(path, "rb").read()
    xored = bytes(b ^ 0x69 for b in raw[:4]) in KNOWN_FIRST
    return (bytes(b ^ 0x69 for b in raw) if xored else raw), xored


def blocks(d, start, end):
    p = start
    while p + 8 <= end:
        tag, size = d[p:p + 4], struct.unpack(">I", d[p + 4:p + 8])[0]
        if size < 8 or p + size > end:
            raise SystemExit("bad block at 0x%x" % p)
        yield p, tag.decode("ascii"), size
        p += size


def entries(index, data):
    out = []
    for p, tag, size in blocks(index, 0, len(index)):
        out.append(("index", p, tag, size, index))
    lecf_size = struct.unpack(">I", data[4:8])[0]
    for p, tag, size in blocks(data, 8, lecf_size):
        if tag == "LOFF":
            out.append(("data", p, tag, size, data))
        if tag != "LFLF":
            continue
        for q, t, n in blocks(data, p + 8, p + size):
            out.append(("data", q, t, n, data))
            if t == "ROOM":
                for r, u, m in blocks(data, q + 8, q + n):
                    out.append(("data", r, u, m, data))
    return out


def main():
    cmd = sys.argv[1]
    if cmd == "hashes":
        index, _ = load(sys.argv[2])
        data, _ = load(sys.argv[3])
        for f, p, tag, size, d in entries(index, data):
            print(f, p, tag, hashlib.sha256(d[p:p + size]).hexdigest())
    elif cmd == "palette":
        d = open(sys.argv[2], "rb").read()
        assert d[:4] == b"PALS", "not a PALS block"
        for p, tag, size in blocks(d, 8, len(d)):
            if tag == "WRAP":
                for q, t, n in blocks(d, p + 8, p + size):
                    if t == "APAL":
                        open(sys.argv[3], "wb").write(d[q + 8:q + 8 + 768])
                        return
        raise SystemExit("no APAL in WRAP")
    elif cmd == "unxor":
        d, _ = load(sys.argv[2])
        open(sys.argv[3], "wb").write(d)
    elif cmd == "break-costumes":
        d, xored = load(sys.argv[2])
        d, left = bytearray(d), int(sys.argv[4])
        for p, tag, size in blocks(d, 8, len(d)):
            if tag != "LFLF":
                continue
            for q, t, n in blocks(d, p + 8, p + size):
                if t == "COST" and left > 0:
                    d[q + 15] = 0x42  # block + 8 (header) + 7: the format byte
                    left -= 1
        out = bytes(b ^ 0x69 for b in d) if xored else bytes(d)
        open(sys.argv[3], "wb").write(out)
    else:
        raise SystemExit(__doc__)


main()
