#!/usr/bin/env bash
# create -t scumm-cost takes a frame an image editor saved as RGBA (issue
# 18): every opaque colour must be one of the costume's colours (costume.json's
# palette_rgb, which convert writes) and every alpha 0 or 255; it then gives
# the same costume, byte for byte. Otherwise it refuses, naming the first
# offending pixel. python3-pil makes the RGBA frames.
. "${BASH_SOURCE%/*}/lib.sh"

OQ="$TROWEL_CORPUS/scumm/openquest"
[ -f "$OQ/zif.cost" ] || skip_all "no SCUMM corpus in $TROWEL_CORPUS"
PY=
for candidate in python3 /usr/bin/python3; do
    "$candidate" -c 'import PIL' >/dev/null 2>&1 && PY=$candidate && break
done
[ -n "$PY" ] || skip_all "no python3 with PIL: RGBA frames cannot be made"

# zif with a 768-byte palette of distinct colours and the
# stand-in one (no palette): RGBA frames give the costume the indexed ones do.
"$PY" -c 'import sys; sys.stdout.buffer.write(bytes((i * 37 + 11) % 256 for i in range(768)))' >room.pal
for how in "room -O palette=room.pal" "standin"; do
    set -- $how
    name=$1
    shift
    run "$TROWEL" convert "$OQ/zif.cost" --to png "$@" -o "$name"
    assert_rc "$name: convert" 0
    assert_ne "$name: costume.json has the RGB of colour 31" MISSING \
        "$(json_get "$name/costume.json" '.palette_rgb[31]')"
    assert_json_eq "$name: and of no colour 32" "$name/costume.json" '.palette_rgb[32]' MISSING
    run "$TROWEL" create -t scumm-cost -o "$name-indexed.cost" "$name"
    assert_rc "$name: create from the indexed frames" 0
    # Every picture saved again as RGBA, as an editor would.
    "$PY" -c 'import sys, glob
from PIL import Image
for f in glob.glob(sys.argv[1] + "/pic_*.png"):
    Image.open(f).convert("RGBA").save(f)' "$name"
    mode=$("$PY" -c 'import sys; from PIL import Image; print(Image.open(sys.argv[1]).mode)' \
        "$name/pic_005.png")
    assert_eq "$name: the frames are RGBA now" RGBA "$mode"
    run "$TROWEL" create -t scumm-cost -o "$name.cost" "$name"
    assert_rc "$name: create from RGBA frames" 0
    assert_same_file "$name: the same costume as from the indexed frames" "$name-indexed.cost" \
        "$name.cost"
done

# A half-transparent pixel, and a colour the palette lacks: refused, named.
cp -r standin semi
"$PY" -c 'import sys
from PIL import Image
im = Image.open(sys.argv[1]); im.putpixel((2, 3), (0, 0, 170, 128)); im.save(sys.argv[1])' \
    semi/pic_005.png
run "$TROWEL" create -t scumm-cost -o semi.cost semi
assert_rc "alpha 128: bad input, exit 1" 1
assert_contains "alpha 128: the pixel is named" "$ERR" \
    "pic_005.png: pixel (2, 3) has alpha 128; a costume pixel is transparent (0) or opaque (255)"
assert_no_file "alpha 128: nothing written" semi.cost
cp -r standin foreign
"$PY" -c 'import sys
from PIL import Image
im = Image.open(sys.argv[1]); im.putpixel((1, 4), (1, 2, 3, 255)); im.save(sys.argv[1])' \
    foreign/pic_005.png
run "$TROWEL" create -t scumm-cost -o foreign.cost foreign
assert_rc "a colour outside the palette: bad input, exit 1" 1
assert_contains "outside the palette: the pixel is named" "$ERR" \
    "pic_005.png: pixel (1, 4) is #010203, which is not in the costume's palette"
assert_no_file "outside the palette: nothing written" foreign.cost
# Without palette_rgb an RGBA frame cannot be matched: said so.
cp -r standin nopal
"$PY" -c 'import sys, json
d = json.load(open(sys.argv[1])); del d["palette_rgb"]; json.dump(d, open(sys.argv[1], "w"))' \
    nopal/costume.json
run "$TROWEL" create -t scumm-cost -o nopal.cost nopal
assert_rc "RGBA without palette_rgb: bad input, exit 1" 1
assert_contains "RGBA without palette_rgb: said" "$ERR" "costume.json has no palette_rgb"

finish
