"""make_cost.py OUT MASK [SIZE]: a small SCUMM v6 COST block written from the
seed (shared/seeds/scumm-costumes.txt, 1. COST), for tests of how the
animation count follows the size field.

The costume has one animation (index 0) whose definition comes right after
the animation-offset table, with limb mask MASK (hex). SIZE is the 32-bit
size field (default 0: "if(size) num_anim++", so the count byte holds 1
and the table has one slot). Each limb set in MASK plays one command,
picture 0 of its own limb table; limb L's picture is 2x3 pixels of colour
L+1 (limb 15 = bit 0x0001). Format 0x58 (16 colours), palette entry i = 16+i.
"""
import struct
import sys

out, mask = sys.argv[1], int(sys.argv[2], 16)
size_field = int(sys.argv[3]) if len(sys.argv) > 3 else 0
limbs = [l for l in range(16) if mask & (0x8000 >> l)]
count_byte = 1 if size_field == 0 else 0        # one animation either way
slots = count_byte + (1 if size_field else 0)    # entries in the offset table

header = 6 + 2                                   # size + "CO", count, format
palette = bytes(16 + i for i in range(16))
table_at = header + len(palette)                 # cmd offset, 16 limbs, anims
anim_at = table_at + 2 + 32 + 2 * slots
anim = struct.pack("<H", mask) + b"".join(struct.pack("<HB", 0, 0) for _ in limbs)
cmds_at = anim_at + len(anim)
cmds = bytes([0])                                # picture 0 of the limb table
tables_at = cmds_at + len(cmds)
pics_at = tables_at + 2 * len(limbs)
pics, table_entries = b"", []
for i, l in enumerate(limbs):
    table_entries.append(pics_at + len(pics))
    colour = (l + 1) & 15
    pics += struct.pack("<HHhhhh", 2, 3, 0, 0, 0, 0) + bytes([colour << 4 | 6])
limb_offsets = [0] * 16
for i, l in enumerate(limbs):
    limb_offsets[l] = tables_at + 2 * i
body = struct.pack("<I", size_field) + b"CO" + bytes([count_byte, 0x58]) + palette
body += struct.pack("<H", cmds_at) + struct.pack("<16H", *limb_offsets)
body += struct.pack("<%dH" % slots, *([anim_at] + [0] * (slots - 1)))
assert len(body) == anim_at
body += anim + cmds + struct.pack("<%dH" % len(limbs), *table_entries) + pics
open(out, "wb").write(b"COST" + struct.pack(">I", 8 + len(body)) + body)
