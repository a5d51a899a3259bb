#!/usr/bin/env python3
"""An independent reading of Valve's binary scenes (BVCD v4), to check
trowel's `convert --to json-full` field by field.

Written from the format notes (../shared/formats/valve-vsif-bvcd.md and
docs/formats/bvcd.md), not from trowel's C code: this script reads
scenes.image files (header, string pool, entries, Valve's LZMA wrapper) and
BVCDs itself, builds for every scene the document json-full is defined to
give, asks trowel for its document, and compares every field.

    bvcd_json.py TROWEL WORKDIR INPUT...

INPUT is a scenes.image (.image: every scene, read with the image's pool),
a standalone BVCD (.bvcd: its pool as a JSON list, then the BVCD), or a text
VCD (.vcd: trowel compiles it to a standalone BVCD first, which this script
then reads). For each scene trowel converts a standalone BVCD (written here
for image scenes: the image's whole pool, then the scene's bytes).

Prints how many scenes and fields were compared and how often each field
was seen, then every difference (path, expected, trowel's); exits 1 when
any differ, when a field of the document is compared nowhere (ALL_KEYS), or
when trowel fails; 0 otherwise.
"""
import json
import lzma
import os
import struct
import subprocess
import sys
from fractions import Fraction

EVENT_TYPES = ["unspecified", "section", "expression", "lookat", "moveto", "speak",
               "gesture", "sequence", "face", "firetrigger", "flexanimation", "subscene",
               "loop", "interrupt", "stoppoint", "permitresponses", "generic", "camera",
               "script"]
GESTURE, SPEAK, LOOP = 6, 5, 12
CC_TYPES = ["cc_master", "cc_slave", "cc_disabled"]
INTERPOLATORS = ["default", "catmullrom_normalize_x", "easein", "easeout", "easeinout",
                 "bspline", "linear_interp", "kochanek", "kochanek_early", "kochanek_late",
                 "simple_cubic", "catmullrom", "catmullrom_normalize", "catmullrom_tangent",
                 "exponential_decay", "hold"]
EVENT_FLAGS = ["resumecondition", "lockbodyfacing", "fixedlength", "active",
               "forceshortmovement", "playoverscript"]
# Every key a scene's document can hold: each must be compared at least
# once over the inputs, or the run fails (a field no input exercises would
# pass unchecked).
ALL_KEYS = set(EVENT_FLAGS) | {
    "events", "actors", "scene_ramp", "ignorePhonemes", "name", "active", "channels",
    "type", "start", "end", "params", "ramp", "distancetotarget", "tags", "flextimingtags",
    "playback_time", "shifted_time", "sequenceduration", "relativetag", "relativewav",
    "flexanimations", "controller", "min", "max", "samples", "combo", "loopcount", "cctype",
    "cctoken", "cc_usingcombinedfile", "cc_combinedusesgender", "cc_noattenuate", "time",
    "value", "curve"}


def f32_bits(x):
    return struct.unpack('<I', struct.pack('<f', x))[0]


def f32_of_bits(b):
    return struct.unpack('<f', struct.pack('<I', b))[0]


def nearest_f32(exact):
    """The float32 nearest to an exact fraction (ties to even), as a C
    float division rounds: k * 1.0f / 255.0f is k / 255 rounded once."""
    if exact == 0:
        return 0.0
    guess = f32_bits(float(exact))  # values here are positive
    best = None
    for b in (guess - 1, guess, guess + 1):
        v = f32_of_bits(b)
        d = abs(Fraction(v) - exact)
        if best is None or d < best[0] or (d == best[0] and b % 2 == 0):
            best = (d, b, v)
    return best[2]


class Bvcd:
    """A cursor over one BVCD with its string pool."""

    def __init__(self, data, pool):
        self.d, self.pool, self.at = data, pool, 0

    def take(self, fmt):
        v = struct.unpack_from('<' + fmt, self.d, self.at)
        self.at += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string(self):
        i = self.take('h')
        if not 0 <= i < len(self.pool):
            raise ValueError('string index %d outside the pool of %d' % (i, len(self.pool)))
        return self.pool[i]

    def curve(self):
        return [{"time": self.take('f'), "value": nearest_f32(Fraction(self.take('B'), 255))}
                for _ in range(self.take('B'))]

    def tags(self, wide):
        out = []
        for _ in range(self.take('B')):
            name = self.string()
            value = Fraction(self.take('H'), 4096) if wide else Fraction(self.take('B'), 255)
            out.append({"name": name, "value": nearest_f32(value)})
        return out

    def samples(self, count):
        out = []
        for _ in range(count):
            t, v, curve = self.take('f'), self.take('B'), self.take('H')
            s = {"time": t, "value": nearest_f32(Fraction(v, 255))}
            if curve:
                s["curve"] = "curve_%s_to_curve_%s" % (INTERPOLATORS[curve >> 8],
                                                       INTERPOLATORS[curve & 0xFF])
            out.append(s)
        return out

    def event(self):
        e = {}
        kind = self.take('b')
        e["type"] = EVENT_TYPES[kind]
        e["name"] = self.string()
        e["start"], e["end"] = self.take('f'), self.take('f')
        e["params"] = [self.string(), self.string(), self.string()]
        ramp = self.curve()
        if ramp:
            e["ramp"] = ramp
        flags = self.take('B')
        for bit, name in enumerate(EVENT_FLAGS):
            e[name] = bool(flags >> bit & 1)
        distance = self.take('f')
        if distance != 0.0:
            e["distancetotarget"] = distance
        for key, wide in (("tags", False), ("flextimingtags", False),
                          ("playback_time", True), ("shifted_time", True)):
            tags = self.tags(wide)
            if tags:
                e[key] = tags
        if kind == GESTURE:
            duration = self.take('f')
            if duration not in (0.0, -1.0):  # -1 is unset; the engine reads 0 so too
                e["sequenceduration"] = duration
        if self.take('B'):
            e["relativetag"], e["relativewav"] = self.string(), self.string()
        tracks = []
        for _ in range(self.take('B')):
            t = {"controller": self.string()}
            flags = self.take('B')
            t["active"] = bool(flags & 1)
            t["min"], t["max"] = self.take('f'), self.take('f')
            t["samples"] = self.samples(self.take('h'))
            if flags & 2:
                t["combo"] = self.samples(self.take('H'))
            tracks.append(t)
        if tracks:
            e["flexanimations"] = tracks
        if kind == LOOP:
            e["loopcount"] = self.take('b')
        if kind == SPEAK:
            e["cctype"] = CC_TYPES[self.take('b')]
            e["cctoken"] = self.string()
            cc = self.take('B')
            e["cc_usingcombinedfile"] = bool(cc & 1)
            e["cc_combinedusesgender"] = bool(cc & 2)
            e["cc_noattenuate"] = bool(cc & 4)
        return e

    def scene(self):
        if self.d[:4] != b'bvcd' or self.d[4] != 4:
            raise ValueError('not a BVCD v4')
        self.at = 9  # magic, version, source CRC
        doc = {"events": [self.event() for _ in range(self.take('B'))], "actors": []}
        for _ in range(self.take('B')):
            actor = {"name": self.string(), "channels": []}
            for _ in range(self.take('B')):
                channel = {"name": self.string()}
                channel["events"] = [self.event() for _ in range(self.take('B'))]
                channel["active"] = self.take('B') == 1
                actor["channels"].append(channel)
            actor["active"] = self.take('B') == 1
            doc["actors"].append(actor)
        ramp = self.curve()
        if ramp:
            doc["scene_ramp"] = ramp
        doc["ignorePhonemes"] = self.take('B') != 0
        return doc


def image_scenes(path):
    """(name, pool, BVCD bytes) of every scene of a scenes.image."""
    d = open(path, 'rb').read()
    ident, version, scenes, strings, entries = struct.unpack_from('<4sIIII', d, 0)
    if ident != b'VSIF' or version not in (2, 3):
        raise ValueError('%s: not a VSIF v2/v3 image' % path)
    pool = []
    for i in range(strings):
        at = struct.unpack_from('<I', d, 20 + 4 * i)[0]
        pool.append(d[at:d.index(b'\0', at)].decode('utf-8'))
    for i in range(scenes):
        crc, off, length, _ = struct.unpack_from('<IIII', d, entries + 16 * i)
        blob = d[off:off + length]
        if blob[:4] == b'LZMA':
            actual, packed = struct.unpack_from('<II', blob, 4)
            props = blob[12]
            dict_size = struct.unpack_from('<I', blob, 13)[0]
            filters = [{"id": lzma.FILTER_LZMA1, "dict_size": dict_size, "lc": props % 9,
                        "lp": props // 9 % 5, "pb": props // 45}]
            dec = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters)
            blob = dec.decompress(blob[17:17 + packed], max_length=actual)
        yield '%s:%08x' % (os.path.basename(os.path.dirname(os.path.dirname(path))), crc), pool, blob


def standalone(data):
    """(pool, BVCD bytes) of a standalone BVCD: a JSON list, then the BVCD."""
    at = data.index(b'bvcd')
    return json.loads(data[:at].decode('utf-8')), data[at:]


def trowel_json(trowel, path):
    r = subprocess.run([trowel, 'convert', '--to', 'json-full', path, '-o', '-'],
                       capture_output=True)
    if r.returncode != 0:
        raise RuntimeError('trowel convert %s: %s' % (path, r.stderr.decode(errors='replace')))
    return json.loads(r.stdout)


def compare(path, want, got, diffs, seen):
    if isinstance(want, dict):
        if not isinstance(got, dict):
            diffs.append((path, want, got))
            return 1
        n = 0
        for k in sorted(set(want) | set(got)):
            if k not in got or k not in want:
                diffs.append(('%s.%s' % (path, k), want.get(k, '(absent)'), got.get(k, '(absent)')))
                continue
            seen[k] = seen.get(k, 0) + 1
            n += compare('%s.%s' % (path, k), want[k], got[k], diffs, seen)
        return n
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            diffs.append((path + '(length)', len(want), len(got) if isinstance(got, list) else got))
            return 1
        return sum(compare('%s[%d]' % (path, i), w, g, diffs, seen)
                   for i, (w, g) in enumerate(zip(want, got)))
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        if want != float(got):
            diffs.append((path, want, got))
    elif type(want) is not type(got) or want != got:
        diffs.append((path, want, got))
    return 1


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    trowel, work, inputs = argv[1], argv[2], argv[3:]
    os.makedirs(work, exist_ok=True)
    diffs, seen, scenes, fields = [], {}, 0, 0
    for path in inputs:
        if path.endswith('.image'):
            items = list(image_scenes(path))
        elif path.endswith('.vcd'):
            compiled = os.path.join(work, 'compiled-%d.bvcd' % scenes)
            r = subprocess.run([trowel, 'convert', '--force', '--to', 'bvcd', path, '-o', compiled],
                               capture_output=True)
            if r.returncode != 0:
                raise RuntimeError('trowel convert --to bvcd %s: %s' % (path, r.stderr.decode()))
            pool, data = standalone(open(compiled, 'rb').read())
            items = [(path, pool, data)]
        else:
            pool, data = standalone(open(path, 'rb').read())
            items = [(path, pool, data)]
        for name, pool, data in items:
            want = Bvcd(data, pool).scene()
            scene_file = os.path.join(work, 'scene-%d.bvcd' % scenes)
            with open(scene_file, 'wb') as f:
                f.write(json.dumps(pool).encode('utf-8') + data)
            got = trowel_json(trowel, scene_file)
            fields += compare(name, want, got, diffs, seen)
            scenes += 1
    print('%d scenes, %d fields compared, %d differences' % (scenes, fields, len(diffs)))
    print('fields seen: ' + ', '.join('%s=%d' % kv for kv in sorted(seen.items())))
    for path, want, got in diffs[:40]:
        print('DIFF %s: expected %r, trowel %r' % (path, want, got))
    unseen = sorted(ALL_KEYS - set(seen))
    if unseen:
        print('NOT COVERED (no input has these fields): ' + ', '.join(unseen))
    return 1 if diffs or unseen else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
