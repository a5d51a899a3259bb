#!/usr/bin/env bash
# Every PNG `trowel convert` writes for the Cinematique assets, decoded with
# python3-pil and compared whole: size, every pixel (RGBA) against a picture
# described here by hand, and the PLTE and tRNS chunks against the palette
# expected. (test_cine_assets.sh checks exit codes and sizes; one wrong pixel
# or palette colour must fail here.)
. "${BASH_SOURCE%/*}/lib.sh"

# A python3 with PIL: the one on PATH may be a private build without it.
PY=
for candidate in python3 /usr/bin/python3; do
    if "$candidate" -c 'import PIL' >/dev/null 2>&1; then
        PY=$candidate
        break
    fi
done
[ -n "$PY" ] || skip_all "no python3 with PIL (python3-pil): PNG pixels not compared"

# pngcheck FILE W H FILL [X,Y=RRGGBBAA]... -- [RRGGBBAA]...
# Prints "ok", or what differs: the size, the first pixels that differ and
# their count, the palette. The colours after "--" are the palette in order
# (PLTE); tRNS must hold their alphas up to the last one below 255.
cat >pngcheck.py <<'EOF'
import sys
from PIL import Image

path, w, h, fill = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
args = sys.argv[5:]
cut = args.index("--") if "--" in args else len(args)
paint, palette = args[:cut], args[cut + 1:]
want = [[fill.lower()] * w for _ in range(h)]
for p in paint:
    xy, colour = p.split("=")
    x, y = map(int, xy.split(","))
    want[y][x] = colour.lower()
problems = []
im = Image.open(path)
if im.size != (w, h):
    problems.append("size %dx%d, want %dx%d" % (im.size + (w, h)))
else:
    rgba = im.convert("RGBA")
    wrong = [(x, y) for y in range(h) for x in range(w)
             if "%02x%02x%02x%02x" % rgba.getpixel((x, y)) != want[y][x]]
    for x, y in wrong[:5]:
        problems.append("pixel (%d,%d) is %02x%02x%02x%02x, want %s"
                        % ((x, y) + rgba.getpixel((x, y)) + (want[y][x],)))
    if wrong:
        problems.append("%d pixels differ" % len(wrong))
data = open(path, "rb").read()
chunks, at = {}, 8
while at + 12 <= len(data):
    n = int.from_bytes(data[at:at + 4], "big")
    chunks[data[at + 4:at + 8]] = data[at + 8:at + 8 + n]
    at += n + 12
plte = bytes.fromhex("".join(c[:6] for c in palette))
alphas = bytes.fromhex("".join(c[6:] for c in palette))
trns = alphas.rstrip(b"\xff")
if chunks.get(b"PLTE", b"") != plte:
    problems.append("PLTE is %s, want %s" % (chunks.get(b"PLTE", b"").hex(), plte.hex()))
if chunks.get(b"tRNS", b"") != trns:
    problems.append("tRNS is %s, want %s" % (chunks.get(b"tRNS", b"").hex(), trns.hex()))
print("\n".join(problems) if problems else "ok")
EOF

assert_png() { # NAME FILE W H FILL [X,Y=RRGGBBAA]... -- [PALETTE]...
    local name=$1
    shift
    run "$PY" pngcheck.py "$@"
    assert_eq "$name" ok "$OUT${ERR:+ ($ERR)}"
}

zeros() { head -c "$1" /dev/zero; }
CLEAR=00000000
# The 16 grey levels of an asset without a palette, colour 0 clear.
GREY16="$CLEAR 111111ff 222222ff 333333ff 444444ff 555555ff 666666ff 777777ff
        888888ff 999999ff aaaaaaff bbbbbbff ccccccff ddddddff eeeeeeff ffffffff"

# ---- fixtures (as in test_cine_assets.sh)
# TEXTE.DAT: 78 glyphs; glyph 0's top left pixel colour 1
{ printf '\x00\x08\x02\x70\x80'; zeros $((78 * 64 - 1)); } >TEXTE.DAT
# an animation: 16 x 2 pixels, 2 frames; frame 0's top left pixel colour 1
{ printf 'ANIM\x00\x08\x00\x02\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00'; printf '\x80'; zeros 31; } >WALK.ANI
# a mask: 8 x 2 pixels: 10100000 / 00000001
{ printf 'MASK\x00\x01\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00'; printf '\xa0\x01'; } >DOOR.MSK
# a set with one four-plane frame of 16 x 1 pixels, the first colour 1
{ printf 'SET\x00\x00\x01'; printf '\x00\x00\x00\x00\x00\x08\x00\x01\x00\x04\x00\x00\x00\x00\x00\x00'; printf '\x80'; zeros 7; } >ROBOT.SET
# a PI1 background: colour 1 red, the rest black; (0,0) colour 1
{ printf '\x00\x00\x00\x00\x07\x00'; zeros 28; printf '\x80'; zeros 31999; } >ROOM.PI1
# a palette file: colour 1 red, the rest black
{ printf '\x00\x00\x07\x00'; zeros 28; } >red.pal
RED16="$CLEAR ff0000ff $(for _ in $(seq 14); do printf '000000ff '; done)"

# ---- the font: a sheet of 16 x 5 cells (a 17th colour, clear, for the gaps)
"$TROWEL" convert TEXTE.DAT -o font.png
# shellcheck disable=SC2086 # the palettes are word lists
assert_png "font sheet: every pixel and the palette" font.png 256 40 $CLEAR 0,0=111111ff -- $GREY16 $CLEAR
"$TROWEL" convert TEXTE.DAT --to png -O frame=3 -o glyph3.png
# shellcheck disable=SC2086
assert_png "an empty glyph: clear, 16 greys" glyph3.png 16 8 $CLEAR -- $GREY16
"$TROWEL" convert TEXTE.DAT --to png -O frame=0 -O palette=red.pal -o glyph0.png
# shellcheck disable=SC2086
assert_png "glyph 0 with a palette file" glyph0.png 16 8 $CLEAR 0,0=ff0000ff -- $RED16

# ---- animation, mask, sprite set
"$TROWEL" convert WALK.ANI -O palette=red.pal -O frame=0 -o walk0.png
# shellcheck disable=SC2086
assert_png "ani frame 0 with a palette" walk0.png 16 2 $CLEAR 0,0=ff0000ff -- $RED16
"$TROWEL" convert WALK.ANI -O palette=red.pal -O frame=0 -O transparent=none -o walk0-opaque.png
# shellcheck disable=SC2086
assert_png "ani frame 0, no colour transparent" walk0-opaque.png 16 2 000000ff 0,0=ff0000ff -- \
    000000ff ${RED16#"$CLEAR"}
"$TROWEL" convert WALK.ANI -o walk.png
# shellcheck disable=SC2086
assert_png "ani sheet: two frames side by side" walk.png 32 2 $CLEAR 0,0=111111ff -- $GREY16 $CLEAR
"$TROWEL" convert DOOR.MSK -o door.png
assert_png "mask: set bits white, the rest clear" door.png 8 2 $CLEAR \
    0,0=ffffffff 2,0=ffffffff 7,1=ffffffff -- $CLEAR ffffffff
"$TROWEL" convert ROBOT.SET -o robot.png
# shellcheck disable=SC2086
assert_png "set: one frame" robot.png 16 1 $CLEAR 0,0=111111ff -- $GREY16

# ---- background: its own palette, nothing transparent
"$TROWEL" convert ROOM.PI1 -o room.png
# shellcheck disable=SC2086
assert_png "pi1: every pixel and the palette" room.png 320 200 000000ff 0,0=ff0000ff -- \
    000000ff ${RED16#"$CLEAR"}

# ---- the checker itself fails on one wrong pixel or palette colour
# shellcheck disable=SC2086
assert_eq "pngcheck sees a wrong pixel" "pixel (1,0) is 00000000, want 111111ff
1 pixels differ" "$("$PY" pngcheck.py robot.png 16 1 $CLEAR 0,0=111111ff 1,0=111111ff -- $GREY16)"
# shellcheck disable=SC2086
assert_contains "pngcheck sees a wrong palette colour" \
    "$("$PY" pngcheck.py robot.png 16 1 $CLEAR 0,0=111111ff -- ${GREY16/222222ff/222223ff})" "PLTE is"

finish
