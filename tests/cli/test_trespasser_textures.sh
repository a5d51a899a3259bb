#!/usr/bin/env bash
# Trespasser textures (tres-pid) from the command line: a PID directory
# built here from the documented layout over an SPZ made by trowel, listed
# and extracted to one PNG per raster (mip chains in one folder per hash),
# pixels read back by PIL; without its page file the directory still lists
# (exit 0, one warning), index.json alone extracts with exit 0, and the
# pictures fail with exit 1, the reason said once and the rest counted; a
# damaged page file gives its real cause, not "no page file"; a FIFO named
# like the page file does not hang.
. "${BASH_SOURCE%/*}/lib.sh"

PY=
for candidate in python3 /usr/bin/python3; do
    if "$candidate" -c 'import PIL' >/dev/null 2>&1; then
        PY=$candidate
        break
    fi
done
have_cmd python3 || skip_all "python3 is needed to build the directory"

python3 "$TROWEL_SOURCE/tests/tools/make_pid.py" . || exit 1
"$TROWEL" create -t spz -o lvl-130.spz pages.bin || exit 1

run "$TROWEL" list lvl-130.pid
assert_rc "list: exit 0" 0
assert_eq "list: index, a mip chain in one folder, a bump map and its angles" \
    "index.json 12345678/3x3.png 12345678/1x1.png cafe0001/2x1.png cafe0001/2x1-angles.png" \
    "$(printf '%s' "$OUT" | tr '\n' ' ' | sed 's/ $//')"
run "$TROWEL" extract lvl-130.pid -C tex
assert_rc "extract: exit 0" 0
assert_json_valid "index.json is JSON" tex/index.json
assert_eq "index: raster 0 is transparent" true "$(json_get tex/index.json '.rasters[0].flags.transparent')"
assert_eq "index: the bump map has no palette (null)" None \
    "$(python3 -c "import json; print(json.load(open('tex/index.json'))['rasters'][2]['palette'])")"
assert_eq "index: palette hash" 0x0badf00d "$(json_get tex/index.json '.palettes[0].hash')"
if [ -n "$PY" ]; then
    got=$("$PY" - <<'PYEOF'
from PIL import Image
a = Image.open('tex/12345678/3x3.png').convert('RGBA')
b = Image.open('tex/cafe0001/2x1-angles.png').convert('RGBA')
print(list(a.getdata())[:3], list(b.getdata()))
PYEOF
)
    assert_eq "pixels: colour 0 transparent, palette colours; angles theta*4, phi*16" \
        "[(0, 0, 0, 0), (255, 0, 0, 255), (0, 0, 255, 255)] [(28, 80, 0, 255), (252, 240, 0, 255)]" "$got"
else
    skip "no python3 with PIL: pixels not compared"
fi

# ---- no page file beside it
mkdir -p lone && cp lvl-130.pid lone/
run "$TROWEL" extract lone/lvl-130.pid -C lonetex
assert_rc "no page file: exit 1" 1
assert_contains "no page file: says which" "$ERR" "no page file beside the PID"
assert_file_exists "no page file: index.json still extracted" lonetex/index.json
assert_no_file "no page file: no picture" lonetex/12345678/3x3.png
assert_eq "no page file: the reason once at open, once for the first picture" 2 \
    "$(printf '%s\n' "$ERR" | grep -c 'no page file beside the PID')"
assert_contains "no page file: the other pictures counted" "$ERR" \
    "3 more entries failed the same way"
run "$TROWEL" extract lone/lvl-130.pid -C lonetex2 index.json
assert_rc "no page file, only index.json asked for: exit 0" 0
assert_eq "no page file, index.json: one warning line" 1 "$(printf '%s\n' "$ERR" | grep -c .)"
assert_contains "no page file, index.json: says what cannot be made" "$ERR" \
    "none of the 4 pictures can be made"
assert_file_exists "no page file, index.json: written" lonetex2/index.json
run "$TROWEL" list lone/lvl-130.pid
assert_rc "no page file: list exits 0" 0
assert_eq "no page file: list warns once" 1 "$(printf '%s\n' "$ERR" | grep -c .)"

# ---- a damaged page file: its real cause, not "no page file"
mkdir -p damaged && cp lvl-130.pid damaged/ && head -c 12 lvl-130.spz >damaged/lvl-130.spz
run "$TROWEL" extract damaged/lvl-130.pid -C damtex
assert_rc "damaged page file: exit 1" 1
assert_not_contains "damaged page file: not called missing" "$ERR" "no page file beside"
assert_contains "damaged page file: the real cause" "$ERR" "damaged/lvl-130.spz: LZSS stream ends"
assert_eq "damaged page file: one picture's failure printed" 1 \
    "$(printf '%s\n' "$ERR" | grep -c '3x3.png: damaged/lvl-130.spz')"
assert_contains "damaged page file: the rest counted" "$ERR" "3 more entries failed the same way"
run "$TROWEL" extract damaged/lvl-130.pid -C damtex2 index.json
assert_rc "damaged page file, only index.json: exit 0" 0

# ---- a FIFO (any non-regular file) named like the page file must not hang
# trowel: the sibling is opened without blocking and refused (issue 22.2).
mkdir -p fifo && cp lvl-130.pid fifo/ && mkfifo fifo/lvl-130.spz
timeout 10 "$TROWEL" extract fifo/lvl-130.pid -C fifotex >fifo.out 2>fifo.err
RC=$?
ERR=$(cat fifo.err)
if [ "$RC" = 124 ]; then
    # TODO(issue 22.2): the non-blocking sibling open is another branch's
    # work (src/core/related.c); until it is merged trowel waits on the FIFO.
    skip "a .spz FIFO beside the PID still hangs: needs the non-blocking sibling open (issue 22.2)"
else
    assert_rc "a .spz FIFO beside the PID: exit 1, no hang" 1
    assert_contains "a .spz FIFO: names the sibling" "$ERR" "lvl-130.spz"
fi

finish
