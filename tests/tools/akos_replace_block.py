"""akos_replace_block.py IN OUT TAG HEXBYTES: writes IN (an AKOS block) to
OUT with the data of its child block TAG replaced by HEXBYTES (or such a
block added at the end when IN has none), fixing the child's and the AKOS
block's sizes (big-endian, header included)."""
import struct
import sys

src, dst, tag, data = sys.argv[1], sys.argv[2], sys.argv[3].encode(), bytes.fromhex(sys.argv[4])
d = open(src, "rb").read()
assert d[:4] == b"AKOS", "not an AKOS block"
out, p, found = bytearray(), 8, False
while p + 8 <= len(d):
    t, n = d[p:p + 4], struct.unpack(">I", d[p + 4:p + 8])[0]
    if t == tag and not found:
        out += t + struct.pack(">I", 8 + len(data)) + data
        found = True
    else:
        out += d[p:p + n]
    p += n
if not found:
    out += tag + struct.pack(">I", 8 + len(data)) + data
open(dst, "wb").write(b"AKOS" + struct.pack(">I", 8 + len(out)) + out)
