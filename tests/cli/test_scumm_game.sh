#!/usr/bin/env bash
# SCUMM whole games (scumm-res) against tests/tools/scumm_blocks.py, an
# independent reader: every block trowel extracts has the SHA-256 the
# reader computes from the corpus game (a wrong XOR key or offset shows);
# a game with broken costumes converts all the others, names each broken
# one and exits 1; the version comes from the blocks; palettes: the room
# used, -O room=N, -O palette=FILE in each form, the stand-in.
. "${BASH_SOURCE%/*}/lib.sh"

OQ="$TROWEL_CORPUS/scumm/openquest"
R7="$TROWEL_CORPUS/scumm/road7"
[ -f "$OQ/tentacle.000" ] && [ -f "$R7/scummc7.000" ] || skip_all "no SCUMM corpus in $TROWEL_CORPUS"
have_cmd python3 || skip_all "no python3: the independent reader cannot run"
TOOLS="${TROWEL_SOURCE:-${BASH_SOURCE%/*}/../..}/tests/tools"
BLOCKS="$TOOLS/scumm_blocks.py"

# --- a game with broken costumes: every other costume is converted
mkdir two six
cp "$OQ/tentacle.000" two/
cp "$OQ/tentacle.000" six/
python3 "$BLOCKS" break-costumes "$OQ/tentacle.001" two/tentacle.001 2
python3 "$BLOCKS" break-costumes "$OQ/tentacle.001" six/tentacle.001 6
run "$TROWEL" convert two/tentacle.000 --to png -o out-two
assert_rc "two broken costumes: exit 1" 1
assert_contains "two broken: the first is named with its reason" "$ERR" \
    "room06/cost005.cost: COST: format 0x42"
assert_contains "two broken: the second too" "$ERR" "room06/cost004.cost: COST: format 0x42"
assert_contains "two broken: a count at the end" "$ERR" \
    "2 of 6 costumes could not be converted (see above); the other 4 were written"
for c in room06/cost001 room06/cost002 room06/cost003 room08/cost006; do
    assert_file_exists "two broken: $c still converted" "out-two/$c/sheet.png"
done
assert_no_file "two broken: nothing for cost005" out-two/room06/cost005
for to in png gif; do
    run "$TROWEL" convert six/tentacle.000 --to "$to" -o "out-six-$to"
    assert_rc "six broken ($to): exit 1" 1
    assert_eq "six broken ($to): five named, then the count" 6 "$(printf '%s\n' "$ERR" | wc -l)"
    assert_contains "six broken ($to): the count says -v lists all" "$ERR" \
        "6 of 6 costumes could not be converted (the first 5 are above; -v lists all)"
done
run "$TROWEL" convert -v six/tentacle.000 --to png -o out-six-v
assert_rc "six broken, -v: exit 1" 1
assert_contains "six broken, -v: the sixth is named" "$ERR" "room08/cost006.cost: COST: format 0x42"

# --- the version comes from the blocks, not from the XOR
mkdir plain index-only7 index-only6
python3 "$BLOCKS" unxor "$OQ/tentacle.000" plain/tentacle.000
python3 "$BLOCKS" unxor "$OQ/tentacle.001" plain/tentacle.001
cp plain/tentacle.000 index-only6/
cp "$R7/scummc7.000" index-only7/
check_version() { # NAME FILE VERSION WHY
    run "$TROWEL" info "$2"
    assert_rc "$1: info" 0
    assert_contains "$1: version $3" "$OUT" "version: $3"
    assert_contains "$1: what told it" "$OUT" "version_from: $4"
}
check_version "tentacle (XORed v6)" "$OQ/tentacle.000" 6 "COST costumes, PALS palettes"
check_version "tentacle data file" "$OQ/tentacle.001" 6 "COST costumes, PALS palettes"
check_version "un-XORed tentacle" plain/tentacle.000 6 "COST costumes, PALS palettes"
check_version "un-XORed tentacle data file" plain/tentacle.001 6 "COST costumes, PALS palettes"
assert_contains "un-XORed tentacle: not XORed" "$OUT" "xor69: no"
check_version "scummc7 (v7)" "$R7/scummc7.000" 7 "AKOS costumes"
check_version "un-XORed tentacle index alone" index-only6/tentacle.000 6 "AARY in the index"
check_version "scummc7 index alone" index-only7/scummc7.000 7 "MAXS of 138 bytes"

# --- palettes: which room, -O room=N, -O palette=FILE in the forms users have
run "$TROWEL" convert "$OQ/tentacle.000" --to png -o game
assert_rc "tentacle converts" 0
run "$TROWEL" convert "$OQ/tentacle.000" --to png -O room=1 -O costume=2 -o room1
assert_rc "-O room=1" 0
assert_json_eq "-O room=1: said in costume.json" room1/room06/cost002/costume.json .palette_from \
    "room 1 (-O room=1)"
assert_eq "-O room=1: no fallback warning" "" "$ERR"
for p in game/room06/cost002/pic_*.png; do
    assert_same_file "-O room=1 = the fallback to room 1: $(basename "$p")" "$p" \
        "room1/room06/cost002/$(basename "$p")"
done
run "$TROWEL" convert "$OQ/tentacle.000" --to png -O room=9 -O costume=2 -o room9
assert_rc "-O room=9" 0
assert_ne "-O room=9: other colours than room 1's (rooms 2-6 are black; 7 and 8 agree with 1 in the colours zif uses)" "$(sha256sum <game/room06/cost002/sheet.png)" \
    "$(sha256sum <room9/room06/cost002/sheet.png)"
run "$TROWEL" convert "$OQ/tentacle.000" --to png -O room=99 -o room99
assert_rc "-O room=99 (no such room): the input lacks it, exit 1" 1
run "$TROWEL" convert "$OQ/tentacle.000" --to png -O room=1 -O palette=x.pal -o both
assert_usage_error "-O room with -O palette"

# zif.cost alone with room 1's palette, in each form, draws exactly what the
# game's zif (which falls back to room 1) draws.
run "$TROWEL" extract "$OQ/tentacle.001" -C ex 'room01/room/03-pals.pals'
assert_rc "extract room 1's PALS" 0
PALS=ex/room01/room/03-pals.pals
python3 "$BLOCKS" palette "$PALS" room1.raw
python3 -c 'import sys, struct; d = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(b"APAL" + struct.pack(">I", 8 + len(d)) + d)' room1.raw room1.apal
forms="$PALS room1.apal room1.raw"
PY=
for candidate in python3 /usr/bin/python3; do
    "$candidate" -c 'import PIL' >/dev/null 2>&1 && PY=$candidate && break
done
if [ -n "$PY" ]; then
    "$PY" -c 'import sys
from PIL import Image
pal = open(sys.argv[1], "rb").read()
for out in sys.argv[2:]:
    im = Image.new("P", (16, 16)); im.putdata(list(range(256))); im.putpalette(pal)
    im.save(out, optimize=False)' room1.raw room1.png room1.gif
    forms="$forms room1.png room1.gif"
else
    skip "no python3 with PIL: palettes from PNG and GIF not checked"
fi
for f in $forms; do
    rm -rf alone
    run "$TROWEL" convert "$OQ/zif.cost" --to png -O "palette=$f" -o alone
    assert_rc "zif.cost -O palette=$f" 0
    assert_eq "zif.cost -O palette=$f: no warning" "" "$ERR"
    same=yes
    for p in game/room06/cost002/pic_*.png; do
        cmp -s "$p" "alone/$(basename "$p")" || same="no: $(basename "$p")"
    done
    assert_eq "zif.cost -O palette=$f: the game's pictures" yes "$same"
done
assert_json_eq "palette=FILE: said in costume.json" alone/costume.json .palette_from \
    "palette=room1.$([ -n "$PY" ] && echo "gif (a GIF's colour table)" || echo "raw (768 bytes of RGB)")"
printf 'PALS\0\0\0\x10WRAP\0\0\0\x08' >empty.pals
run "$TROWEL" convert "$OQ/zif.cost" --to png -O palette=empty.pals -o bad-pals
assert_rc "a PALS block without a palette: bad input, exit 1" 1
assert_contains "a PALS block without a palette: said" "$ERR" "a PALS block without a WRAP"

# No room palette at all: a stand-in, said once.
run "$TROWEL" convert "$OQ/zif.cost" --to png -o standin
assert_rc "zif.cost alone" 0
assert_contains "zif.cost alone: the stand-in is said" "$ERR" "no room palette: colours are a stand-in"
assert_eq "zif.cost alone: said once" 1 "$(printf '%s\n' "$ERR" | grep -c .)"
assert_json_eq "zif.cost alone: costume.json says so" standin/costume.json .palette_from \
    "stand-in: costume colour k drawn as EGA colour k (no room palette)"

# --- extraction: every block as the independent reader hashes it
for game in "$OQ/tentacle" "$R7/scummc7"; do
    g=$(basename "$game")
    python3 "$BLOCKS" hashes "$game.000" "$game.001" >"$g.want"
    run "$TROWEL" extract -C "x-$g" "$game.001"
    assert_rc "$g: extract" 0
    "$TROWEL" list --json "$game.001" >"$g.json"
    got=$(python3 - "$g.json" "x-$g" "$g.want" <<'PYEOF'
import hashlib, json, sys
entries = json.load(open(sys.argv[1]))["entries"]
want = {}
for line in open(sys.argv[3]):
    f, off, tag, h = line.split()
    want[(f, int(off))] = (tag, h)
bad = []
for e in entries:
    key = (e["file"], e["offset"])
    if key not in want:
        bad.append("%s: no block at %s %d" % (e["name"], *key))
        continue
    h = hashlib.sha256(open(sys.argv[2] + "/" + e["name"], "rb").read()).hexdigest()
    if want[key] != (e["tag"], h):
        bad.append("%s: %s %s, the reader says %s %s" % (e["name"], e["tag"], h[:12],
                                                         want[key][0], want[key][1][:12]))
print("; ".join(bad[:5]) if bad else "ok %d of %d" % (len(entries), len(want)))
PYEOF
)
    n=$(grep -c . "$g.want")
    assert_eq "$g: every block extracted with the reader's SHA-256" "ok $n of $n" "$got"
done

finish
