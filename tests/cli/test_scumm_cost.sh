#!/usr/bin/env bash
# SCUMM costumes (scumm-cost, scumm-akos) against real ScummC output and
# python3-pil as the independent reader: every picture of zif, carol, cube,
# bluecup and santa decodes to exactly the pixels of its source BMP, at
# the position its .scost gives; PNG palettes follow -O palette=FILE through
# the costume palette; GIFs open with the expected frames, size, delays and
# colours; convert -> create -> convert is identical; hostile costumes fail
# cleanly or warn within bounds.
. "${BASH_SOURCE%/*}/lib.sh"

PY=
for candidate in python3 /usr/bin/python3; do
    if "$candidate" -c 'import PIL' >/dev/null 2>&1; then
        PY=$candidate
        break
    fi
done
OQ="$TROWEL_CORPUS/scumm/openquest"
R7="$TROWEL_CORPUS/scumm/road7"
[ -f "$OQ/zif.cost" ] && [ -f "$R7/santa.akos" ] || skip_all "no SCUMM corpus in $TROWEL_CORPUS"

cat >proof.py <<'EOF'
# proof.py OUTDIR RELX RELY EXCEPT BMP...: every pic_*.png equals one BMP
# (size and indices), every BMP but EXCEPT equals one picture, and every
# picture in costume.json sits at (RELX, RELY).
import sys, glob, json, os
from PIL import Image
out, skip, bmps = sys.argv[1], sys.argv[4], sys.argv[5:]
rx, ry = (0, 0) if sys.argv[2] == "any" else (int(sys.argv[2]), int(sys.argv[3]))
def px(f):
    im = Image.open(f)
    assert im.mode == "P", f + " is not indexed"
    return (im.size, bytes(im.getdata()))
pics = {f: px(f) for f in sorted(glob.glob(out + "/pic_*.png"))}
bm = {f: px(f) for f in bmps}
problems = []
for f, v in pics.items():
    if v not in bm.values():
        problems.append("picture %s matches no BMP" % os.path.basename(f))
for f, v in bm.items():
    if os.path.basename(f) != skip and v not in pics.values():
        problems.append("BMP %s matches no picture" % os.path.basename(f))
atlas = json.load(open(out + "/costume.json"))
for i, p in enumerate(atlas["pictures"]):
    if sys.argv[2] != "any" and (p["rel_x"], p["rel_y"]) != (rx, ry):
        problems.append("picture %d at %d,%d" % (i, p["rel_x"], p["rel_y"]))
print("; ".join(problems) if problems else "ok %d" % len(pics))
EOF

cat >gifcheck.py <<'EOF'
# gifcheck.py GIF: "W H FRAMES DURATIONS LOOP" and the RGB of frame 0's
# first opaque pixel (transparent index from the file).
import sys
from PIL import Image
im = Image.open(sys.argv[1])
durations = []
n = 0
while True:
    durations.append(im.info.get("duration"))
    n += 1
    try:
        im.seek(n)
    except EOFError:
        break
im.seek(0)
rgba = im.convert("RGBA")
first = next((p for p in rgba.getdata() if p[3] == 255), None)
print(im.size[0], im.size[1], n, ",".join(str(d) for d in sorted(set(durations))),
      im.info.get("loop", "none"), "%02x%02x%02x" % first[:3] if first else "none")
EOF

proof() { # NAME COST-OR-AKOS RELX RELY EXCEPT BMP...
    local name=$1 file=$2 rx=$3 ry=$4 except=$5
    shift 5
    run "$TROWEL" convert "$file" --to png -o "out_$name"
    assert_rc "$name converts to a png folder" 0
    if [ -z "$PY" ]; then
        skip "no python3 with PIL: $name pictures not compared"
        return
    fi
    assert_eq "$name pictures equal their BMPs" "ok $EXPECT_PICS" \
        "$("$PY" proof.py "out_$name" "$rx" "$ry" "$except" "$@")"
}

# zif's beam pictures sit at -13,-49 and -13,-57 in zif.scost: not compared
EXPECT_PICS=64 proof zif "$OQ/zif.cost" any any talktophone_N_02.bmp "$OQ"/graphics/zif/frames/*.bmp
EXPECT_PICS=9 proof carol "$OQ/carol.cost" -40 -56 - "$OQ"/graphics/carol/*.bmp
EXPECT_PICS=7 proof cube "$OQ/cube.cost" -17 -17 - "$OQ"/graphics/cube/*.bmp
EXPECT_PICS=8 proof bluecup "$OQ/bluecup.cost" -12 -10 - "$OQ"/graphics/bluecup/*.bmp
EXPECT_PICS=1 proof santa "$R7/santa.akos" -25 -35 - "$R7/santa.bmp"
# talkToPhone_N is declared in zif.scost but no animation uses it: ScummC
# leaves it out, so its BMP has no picture (the one exception above).
assert_eq "zif.scost uses talkToPhone_N nowhere" 1 "$(grep -c talkToPhone_N "$OQ/costumes/zif.scost")"

# The palette: local colour i -> room colour palette[i] -> RGB of the file.
"$PY" -c 'import sys; sys.stdout.buffer.write(bytes((i * 7) % 256 for i in range(768)))' >room.pal 2>/dev/null ||
    printf '%s' "" >room.pal
run "$TROWEL" convert "$OQ/cube.cost" --to png -O palette=room.pal -o pal_cube
assert_rc "palette=FILE converts" 0
if [ -n "$PY" ]; then
    got=$("$PY" -c '
import sys
from PIL import Image
im = Image.open(sys.argv[1])
p = im.getpalette()
t = im.info.get("transparency")
print(len(p) // 3, p[3 * 5:3 * 5 + 3], t[0] if isinstance(t, bytes) else t)' pal_cube/pic_000.png)
    # cube's palette maps local 5 to room 229; room.pal byte k is 7k mod 256
    assert_eq "PNG palette entry 5 is room colour 229 of the file" \
        "32 [$(((229 * 3 * 7) % 256)), $(((229 * 3 * 7 + 7) % 256)), $(((229 * 3 * 7 + 14) % 256))] 0" "$got"
else
    skip "no python3 with PIL: palette not read back"
fi
printf 'short' >bad.pal
run "$TROWEL" convert "$OQ/cube.cost" --to png -O palette=bad.pal -o pal_bad
assert_rc "a 5-byte palette is refused (bad input, exit 1)" 1
assert_contains "it says why" "$ERR" "not a palette (known: a CLUT, APAL or PALS block"
assert_no_file "nothing is left behind" pal_bad/pic_000.png

# GIFs: cube's dissolve (animation 24 facing south = 98) has 7 frames and
# does not loop; zif's walk west (8) loops 4 frames; delay=5 gives 50 ms.
run "$TROWEL" convert "$OQ/cube.cost" --to gif -O delay=5 -o gif_cube
assert_rc "cube converts to gifs" 0
assert_eq "one GIF per animation defined" "anim006_S.gif anim014_S.gif anim098_S.gif" \
    "$(cd gif_cube && echo *)"
run "$TROWEL" convert "$OQ/zif.cost" --to gif -o gif_zif
assert_rc "zif converts to gifs" 0
run "$TROWEL" convert "$R7/santa.akos" --to gif -o gif_santa
assert_rc "santa converts to gifs" 0
if [ -n "$PY" ]; then
    assert_eq "cube dissolve: 34x35, 7 frames of 50 ms, no loop" "34 35 7 50 none" \
        "$("$PY" gifcheck.py gif_cube/anim098_S.gif | cut -d' ' -f1-5)"
    assert_eq "zif walk west: 4 frames of 100 ms, looping forever" "4 100 0" \
        "$("$PY" gifcheck.py gif_zif/anim008_W.gif | cut -d' ' -f3-5)"
    # No room palette: the stand-in draws costume colour k as EGA colour k
    # (issue 17: not near-white greys), and the GIF's palette is that.
    ega="0000aa 00aa00 00aaaa aa0000 aa00aa aa5500 aaaaaa 555555 5555ff 55ff55 55ffff ff5555 ff55ff ffff55 ffffff"
    got=$("$PY" -c 'import sys
from PIL import Image
p = Image.open(sys.argv[1]).getpalette()
print(" ".join("%02x%02x%02x" % tuple(p[3 * k:3 * k + 3]) for k in range(1, 16)))' gif_santa/anim014_S.gif)
    assert_eq "santa without a room palette: colours 1-15 are EGA's" "$ega" "$got"
    # The GIF's frames are the PNG pictures, composited: santa has one.
    assert_eq "santa stands 48x48 in one frame" "48 48 1" \
        "$("$PY" gifcheck.py gif_santa/anim014_S.gif | cut -d' ' -f1-3)"
else
    skip "no python3 with PIL: GIFs not decoded"
fi

# convert -> create -> convert is identical, for all four COST costumes.
for n in zif carol cube bluecup; do
    run "$TROWEL" create -t scumm-cost -o "$n.cost" -C "out_$n" .
    assert_rc "$n: create from the png folder" 0
    run "$TROWEL" convert "$n.cost" --to png -o "again_$n"
    assert_rc "$n: the rebuilt costume converts" 0
    assert_eq "$n: convert -> create -> convert is identical" "" "$(diff -r "out_$n" "again_$n")"
done

# --to json: the structure, with the AKSQ disassembly for AKOS.
run "$TROWEL" convert "$R7/santa.akos" --to json
assert_rc "santa converts to json" 0
assert_contains "the AKSQ disassembly names its cel" "$OUT" '"name": "cel"'
assert_contains "AKHD's flag 0x01: never mirror" "$OUT" '"never_mirror": true'
run "$TROWEL" convert "$OQ/zif.cost" --to json
assert_contains "COST commands are listed" "$OUT" '"commands": ['
assert_contains "loop flags are listed" "$OUT" '"loop": false'
run "$TROWEL" convert "$OQ/zif.cost" --to png
assert_rc "a folder target without -o DIR is a usage error" 2
assert_contains "it says to name a folder" "$ERR" "writes a folder of files: name it with -o DIR"

# Hostile costumes.
cp "$OQ/cube.cost" cut.cost && chmod u+w cut.cost && truncate -s 600 cut.cost
run "$TROWEL" convert cut.cost --to png -o out_cut
assert_rc "a cut costume fails" 1
assert_contains "it says the block is cut" "$ERR" "block size 1546 but 600 bytes"
assert_no_file "no folder is left" out_cut
# limb 0's table (at 0x1ec in cube) pointed past the block
cp "$OQ/cube.cost" far.cost && chmod u+w far.cost
printf '\xf0\xff' | dd of=far.cost bs=1 seek=$((8 + 0x1ec)) conv=notrunc status=none
run "$TROWEL" convert far.cost --to png -o out_far
assert_rc "a picture offset past the block fails" 1
assert_contains "it names the fault" "$ERR" "a picture offset points past the costume"
# the first picture (34x35) claims 60000x60000 pixels: a run cannot reach
# (the first entry's offset is where its header sits in the file)
cp "$OQ/cube.cost" big.cost && chmod u+w big.cost
first=$("$TROWEL" convert "$OQ/cube.cost" --to json | grep -m1 '"offset"' | tr -dc 0-9)
printf '\x60\xea\x60\xea' | dd of=big.cost bs=1 seek="$first" conv=notrunc status=none
run timeout 10 "$TROWEL" convert big.cost --to png -o out_big
assert_rc "pixels past what the data can draw fail fast" 1
assert_contains "it names the fault" "$ERR" "a picture is larger than its data could draw"
# redirects (format 0x61) between two pictures that point at each other:
# the engine follows one step only, so this ends; its pixels are whatever
# the bytes after the other header say.
if [ -n "$PY" ]; then
    cp -r out_cube loop_dir && chmod -R u+w loop_dir
    "$PY" - loop_dir/costume.json <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m["format_byte"] = 0xE1
m["pictures"][0]["redirect"] = [0, 1]
m["pictures"][1]["redirect"] = [0, 0]
json.dump(m, open(sys.argv[1], "w"))
EOF
    run "$TROWEL" create -t scumm-cost -o loop.cost -C loop_dir .
    assert_rc "a costume whose pictures redirect to each other builds" 0
    run timeout 10 "$TROWEL" convert loop.cost --to png -o out_loop
    assert_eq "and converts or fails cleanly, without hanging" yes \
        "$( { [ "$RC" = 0 ] || [ "$RC" = 1 ]; } && echo yes)"
    [ "$RC" = 1 ] && assert_contains "a failure names COST" "$ERR" "COST: "
else
    skip "no python3: redirect loop not built"
fi
# AKOS: a jump to itself (deep loop) and one outside AKSQ warn and stop.
mk_akos() { # AKSQ-HEX OUT: santa with its one-byte AKSQ replaced (same size: 4 bytes)
    "$PY" - "$R7/santa.akos" "$1" "$2" <<'EOF'
import sys, struct
d = bytearray(open(sys.argv[1], "rb").read())
at = d.index(b"AKSQ")
old = struct.unpack(">I", d[at + 4:at + 8])[0]
new = bytes.fromhex(sys.argv[2])
d[at + 4:at + 8] = struct.pack(">I", 8 + len(new))
d[at + 8:at + old] = new
struct.pack_into(">I", d, 4, len(d))
open(sys.argv[3], "wb").write(d)
EOF
}
if [ -n "$PY" ]; then
    mk_akos c0300000 self.akos
    run timeout 10 "$TROWEL" convert self.akos --to gif -o out_self
    assert_rc "an AKSQ jump to itself ends (no hang)" 0
    assert_contains "with a bounded warning" "$ERR" "runs 1024 opcodes without a frame"
    mk_akos c030f000 far.akos
    run timeout 10 "$TROWEL" convert far.akos --to gif -o out_farjump
    assert_rc "an AKSQ jump outside AKSQ is a warning" 0
    assert_contains "that restarts the animation" "$ERR" "goes to 240, outside AKSQ (4 bytes); the animation restarts"
else
    skip "no python3: AKOS hostile files not built"
fi
run "$TROWEL" create -t scumm-cost -o none.cost gif_cube
assert_rc "create without costume.json fails (a usage error)" 2
assert_contains "and says what it needs" "$ERR" "create needs the folder convert --to png wrote"
assert_no_file "leaving nothing" none.cost

finish
