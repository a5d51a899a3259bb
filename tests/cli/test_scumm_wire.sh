#!/usr/bin/env bash
# Costumes converted from inside a SCUMM game (scumm-res --to png/gif):
# every costume of the v6 (COST) and v7 (AKOS) ScummC games converts with
# its room palette into a folder named like its extract name; the palette
# is checked against one read straight from the ROOM block here (python3
# and PIL as the independent reader); the pictures equal, index for index,
# the ones converted from the standalone zif.cost; -O costume/entry pick one
# and -O palette=FILE overrides the room's.
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
[ -f "$OQ/tentacle.001" ] && [ -f "$R7/scummc7.001" ] && [ -f "$OQ/zif.cost" ] ||
    skip_all "no SCUMM games in $TROWEL_CORPUS"

cat >roompal.py <<'EOF'
# roompal.py DATAFILE ROOM XORKEY: room ROOM's palette 0 (768 bytes, hex),
# read from the blocks: LOFF -> ROOM -> CLUT (v5) or PALS > WRAP > OFFS's
# first offset (from OFFS's data) -> the palette.
import sys, struct
raw = open(sys.argv[1], "rb").read()
key = int(sys.argv[3])
data = bytes(b ^ key for b in raw) if key else raw
def child(start, size, want):
    at = start + 8
    while at + 8 <= start + size:
        n = struct.unpack(">I", data[at + 4:at + 8])[0]
        if data[at:at + 4] == want:
            return at, n
        at += n
    return None
assert data[:4] == b"LECF"
loff, _ = child(0, len(data), b"LOFF")
rooms = {data[loff + 9 + 5 * i]: struct.unpack("<I", data[loff + 10 + 5 * i:loff + 14 + 5 * i])[0]
         for i in range(data[loff + 8])}
room = rooms[int(sys.argv[2])]
room_size = struct.unpack(">I", data[room + 4:room + 8])[0]
clut = child(room, room_size, b"CLUT")
if clut:
    pal = data[clut[0] + 8:clut[0] + 8 + 768]
else:
    wrap = child(*child(room, room_size, b"PALS"), b"WRAP")
    offs = child(*wrap, b"OFFS")[0]
    first = struct.unpack("<I", data[offs + 8:offs + 12])[0]
    pal = data[offs + 8 + first:offs + 8 + first + 768]
print(pal.hex())
EOF

cat >palcheck.py <<'EOF'
# palcheck.py FOLDER PALETTE-HEX: every picture's PNG colour i (but the
# transparent 0) is the room colour the costume palette maps it to.
import sys, glob, json
from PIL import Image
folder, room = sys.argv[1], bytes.fromhex(sys.argv[2])
atlas = json.load(open(folder + "/costume.json"))
cmap = atlas.get("palette") or list(range(256))
bad, checked = [], 0
for f in sorted(glob.glob(folder + "/pic_*.png")):
    im = Image.open(f)
    pal = im.getpalette()
    for i in range(1, min(len(pal) // 3, len(cmap))):
        want = list(room[3 * cmap[i]:3 * cmap[i] + 3])
        checked += 1
        if pal[3 * i:3 * i + 3] != want:
            bad.append("%s colour %d" % (f.split("/")[-1], i))
print("bad " + ", ".join(bad[:3]) if bad else "ok" if checked else "nothing checked")
EOF

cat >samepix.py <<'EOF'
# samepix.py A B: the pic_*.png of folders A and B hold the same indices.
import sys, glob, os
from PIL import Image
a = sorted(os.path.basename(f) for f in glob.glob(sys.argv[1] + "/pic_*.png"))
b = sorted(os.path.basename(f) for f in glob.glob(sys.argv[2] + "/pic_*.png"))
def px(f):
    im = Image.open(f)
    return im.size, bytes(im.getdata())
diff = [n for n in a if px(sys.argv[1] + "/" + n) != px(sys.argv[2] + "/" + n)]
print("ok %d" % len(a) if a == b and a and not diff else "differ %s %d/%d" % (diff[:3], len(a), len(b)))
EOF

costumes() { # FILE EXT: the game's costume entries, without the extension
    "$TROWEL" list "$1" | sed -n "s/\\.$2\$//p" | sort
}
folders() { # DIR FILE: the folders under DIR holding FILE, relative, sorted
    (cd "$1" && find . -name "$2" -printf '%h\n' | sed 's|^\./||' | sort -u)
}

# --- every costume of both games, PNG and GIF ---------------------------
for game in "$OQ/tentacle.001 cost" "$R7/scummc7.001 akos"; do
    set -- $game
    file=$1 ext=$2
    want=$(costumes "$file" "$ext")
    n=$(printf '%s\n' "$want" | grep -c .)
    assert_ne "$ext: the game has costumes" 0 "$n"
    run "$TROWEL" convert "$file" --to png -o "png_$ext"
    assert_rc "$ext: convert --to png" 0
    # Both games keep costumes in a room whose palette is all black: said
    # once, with the room used instead.
    assert_eq "$ext: one warning, naming the palette used" \
        "$([ "$ext" = cost ] && echo "room 6's palette draws them in one colour; its costumes use room 1's" ||
            echo "room 1's palette draws them in one colour; its costumes use room 2's")" \
        "$(printf '%s\n' "$ERR" | sed -n 's/.*warning: [^:]*: \(.*\) (-O room=N.*/\1/p')"
    assert_eq "$ext: one png folder per costume" "$want" "$(folders "png_$ext" costume.json)"
    run "$TROWEL" convert "$file" --to gif -o "gif_$ext"
    assert_rc "$ext: convert --to gif" 0
    assert_eq "$ext: one gif folder per costume" "$want" "$(folders "gif_$ext" 'anim*.gif')"
done
assert_file_exists "zif's folder" png_cost/room06/cost002/sheet.png

# --- room palettes, from the ROOM blocks --------------------------------
if [ -n "$PY" ]; then
    # room06/cost002 and room01/akos001 sit in black rooms: they take the
    # first room with a palette that shows them (room 1, room 2).
    for c in "cost room06/cost002 $OQ/tentacle.001 1 105" "cost room08/cost006 $OQ/tentacle.001 8 105" \
        "akos room01/akos001 $R7/scummc7.001 2 0" "akos room02/akos002 $R7/scummc7.001 2 0"; do
        set -- $c
        pal=$("$PY" roompal.py "$3" "$4" "$5")
        assert_eq "$2: room palette read" 1536 "${#pal}"
        assert_eq "$2: pictures in the room's colours" ok "$("$PY" palcheck.py "png_$1/$2" "$pal")"
    done
    # room 6 (zif's) is black in this game: room 8 and the v7 room 2 are
    # not, so the checks above tell the room palette from the default.
    assert_eq "room 6's palette is all black" "$(printf '0%.0s' $(seq 1536))" \
        "$("$PY" roompal.py "$OQ/tentacle.001" 6 105)"
    assert_json_eq "zif's atlas says where its colours came from" \
        png_cost/room06/cost002/costume.json .palette_from \
        "room 1 (room 6's palette draws it in one colour)"
    assert_json_eq "cost006's atlas: its own room" png_cost/room08/cost006/costume.json \
        .palette_from "room 8 (the costume's own)"
    assert_ne "room 8's palette has colours" "$(printf '0%.0s' $(seq 1536))" \
        "$("$PY" roompal.py "$OQ/tentacle.001" 8 105)"
    run "$TROWEL" convert "$OQ/zif.cost" --to png -o zif_alone
    assert_rc "standalone zif converts" 0
    assert_eq "zif from the game = zif.cost, index for index" ok \
        "$("$PY" samepix.py png_cost/room06/cost002 zif_alone | cut -d' ' -f1)"
    assert_contains "zif has pictures" "$("$PY" samepix.py png_cost/room06/cost002 zif_alone)" "ok "
    # -O palette=FILE wins over the room's
    "$PY" -c 'import sys; sys.stdout.buffer.write(bytes((i * 7 + 3) % 256 for i in range(768)))' >mine.pal
    run "$TROWEL" convert "$OQ/tentacle.001" --to png -O costume=6 -O palette=mine.pal -o own
    assert_rc "palette=FILE" 0
    assert_eq "palette=FILE colours" ok "$("$PY" palcheck.py own/room08/cost006 "$(od -An -tx1 -v mine.pal | tr -d ' \n')")"
else
    skip "python3 with PIL is needed to read the pictures"
fi

# --- one costume ----------------------------------------------------------
run "$TROWEL" convert "$OQ/tentacle.001" --to png -O costume=2 -o one
assert_rc "costume=2" 0
assert_eq "costume=2: only zif" room06/cost002 "$(folders one costume.json)"
assert_same_file "costume=2: same atlas as the whole game's" one/room06/cost002/costume.json \
    png_cost/room06/cost002/costume.json
run "$TROWEL" convert "$R7/scummc7.001" --to gif -O entry=room02/akos002.akos -o named
assert_rc "entry=NAME" 0
assert_eq "entry=NAME: only that costume" room02/akos002 "$(folders named 'anim*.gif')"
run "$TROWEL" convert "$OQ/tentacle.001" --to png -O costume=99 -o none
assert_rc "costume=99 on a game with fewer: bad input, exit 1" 1
assert_contains "costume=99: message" "$ERR" "no costume number 99 in this game"
assert_no_file "costume=99: nothing left" none
run "$TROWEL" convert "$OQ/tentacle.001" --to png -O costume=x -o none
assert_usage_error "costume=x"
assert_contains "costume=x: message" "$ERR" "costume= takes a number from 0 to 65535"
assert_no_file "costume=x: nothing left" none
run "$TROWEL" convert "$OQ/tentacle.001" --to png -O costume=006 -o six
assert_rc "costume=006" 0
assert_eq "costume=006: costume 6" room08/cost006 "$(folders six costume.json)"
run "$TROWEL" convert "$OQ/tentacle.001" --to png -O entry=room06/room.room -o none
assert_rc "entry that is no costume: bad input, exit 1" 1
assert_no_file "entry that is no costume: nothing left" none

finish
