"""bench/gen_asm.py OUT.json CONTAINERS PRIMITIVES: the JSON of a large ASM
v12 (Saints Row IV) for `trowel create -t asm --manifest OUT.json`: three
remap tables, CONTAINERS containers of PRIMITIVES primitives each (every
third one split into CPU and GPU files), 16 bytes of aux data and a stub
parent on every other container. Deterministic: the same arguments give the
same bytes."""
import json
import sys

out, containers, prims = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
EXT = ["cpeg_pc", "cmesh_pc", "rig_pc", "anim_pc", "cchk_pc"]


def remap(kind, n):
    return [{"name": "%s_%02d" % (kind, i), "index": i} for i in range(n)]


def primitive(c, p):
    gpu = 500 + 11 * p if p % 3 == 0 else 0
    return {"name": "zone_%05d_item_%03d.%s" % (c, p, EXT[p % 5]), "type": p % 7,
            "allocator": p % 3, "flags": 4 if gpu else 0, "split_ext": p % 2,
            "cpu_size": 1000 + 37 * p + c, "gpu_size": gpu, "alloc_group": p % 4}


def container(c):
    ps = [primitive(c, p) for p in range(prims)]
    sizes = [s for p in ps for s in (p["cpu_size"], p["gpu_size"])]
    return {"name": "zone_%05d" % c, "type": 6, "flags": 0x100 if c % 5 == 0 else 0,
            "base_offset": 6144 + c, "compression": 9,
            "stub_parent": "" if c % 2 else "parent_%d" % (c // 2),
            "aux_data": "%032x" % (c * 0x9E3779B97F4A7C15 % (1 << 128)),
            "read_size": 100000 + c, "sizes": sizes, "primitives": ps}


doc = {"format": "asm", "entries": [],
       "asm": {"version": 12, "allocators": remap("alloc", 12),
               "primitive_types": remap("prim", 40), "container_types": remap("cont", 9),
               "containers": [container(c) for c in range(containers)]}}
with open(out, "w") as f:
    json.dump(doc, f, indent=2)
