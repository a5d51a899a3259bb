#!/usr/bin/env python3
"""Writes N text VCDs under OUT/scenes/gen/dXX/ by varying the corpus VCDs:
each copy gets its own name and its own sound names (every quoted param of
a speak event and every cctoken gets a _<i> suffix), so the image's pool
grows as a real game's would. Usage: gen_vsif_scenes.py CORPUS_VALVE OUT N"""
import os
import re
import sys

corpus, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
sources = []
for root, _dirs, files in os.walk(corpus):
    for f in sorted(files):
        if f.lower().endswith(".vcd"):
            with open(os.path.join(root, f), "rb") as fh:
                sources.append(fh.read().decode("latin-1"))
sources.sort()
if not sources:
    sys.exit("no .vcd files under " + corpus)
speak = re.compile(r'(event speak "[^"]*"\s*\{[^}]*?\b(?:param|cctoken) ")([^"]*)(")')
for i in range(n):
    text = sources[i % len(sources)]
    # Several passes: an event may carry both param and cctoken.
    for _ in range(2):
        text = speak.sub(lambda m: m.group(1) + m.group(2) + "_%d" % i + m.group(3)
                         if not m.group(2).endswith("_%d" % i) else m.group(0), text)
    d = os.path.join(out, "scenes", "gen", "d%02d" % (i % 50))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "scene_%05d.vcd" % i), "wb") as fh:
        fh.write(text.encode("latin-1"))
