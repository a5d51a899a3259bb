#!/usr/bin/env bash
# trowel mount --views: every file under .trowel/convert/ holds what
# `trowel convert` writes (run beside the extracted file, so the JSON's
# "file" is the same name), and stat gives its true size, for the corpus
# SCUMM games (rooms, costumes, AKOS) and a costume file of its own. A
# target that convert writes as a folder of files (a costume's frames as
# png or gif) is not listed: it used to show as an empty file. Without
# --views there is no .trowel/ at all, so grep -r over the mount finds
# what it finds in the extracted tree, once. Skipped where /dev/fuse
# cannot be opened; no mount is left behind.
. "${BASH_SOURCE%/*}/lib.sh"
. "${BASH_SOURCE%/*}/mount_lib.sh"

OQ="$TROWEL_CORPUS/scumm/openquest"
[ -f "$OQ/tentacle.001" ] || skip_all "no openquest game at $OQ"

# same_converted NAME MOUNT EXTRACTED: every file of MOUNT/.trowel/convert
# is `convert` of its source in EXTRACTED, and as long as stat says.
same_converted() {
    local name=$1 m=$2 x=$3 bad="" sizes="" count=0 f src dir
    while IFS= read -r f; do
        count=$((count + 1))
        src=${f%.*}
        dir=$(dirname "$src")
        (cd "$x/$dir" && "$TROWEL" convert -q "$(basename "$src")" --to "${f##*.}" \
            -o "$T_ROOT/conv.out" -f) || bad="$bad convert:$f"
        cmp -s "$m/.trowel/convert/$f" "$T_ROOT/conv.out" || bad="$bad $f"
        [ "$(stat -c %s "$m/.trowel/convert/$f")" = "$(wc -c <"$m/.trowel/convert/$f")" ] ||
            sizes="$sizes $f"
    done < <(cd "$m/.trowel/convert" && find . -type f -printf '%P\n' | sort)
    if [ "$count" -gt 0 ]; then pass; else fail "$name: convert/ lists files"; fi
    assert_eq "$name: all $count files of convert/ are what convert writes" "" "$bad"
    assert_eq "$name: stat gives each one's true size" "" "$sizes"
    assert_eq "$name: no file of convert/ is empty" "" \
        "$(cd "$m/.trowel/convert" && find . -type f -size 0)"
}

for game in "$OQ/tentacle.001" "$TROWEL_CORPUS/scumm/road7/scummc7.001"; do
    [ -f "$game" ] || { skip "no $game"; continue; }
    name=$(basename "$game")
    "$TROWEL" extract -q -C "x-$name" "$game"
    mount_fg "$name" "$game" "m-$name" --views
    same_converted "$name" "m-$name" "x-$name"
    "$TROWEL" convert "$game" --to json -o "$name.json"
    assert_same_file "$name: archive.json is convert --to json" "m-$name/.trowel/archive.json" \
        "$name.json"
    assert_eq "$name: nothing on stderr" "" "$(cat "m-$name.err")"
    unmount_fg "$name" "m-$name"
done

# The openquest costumes: each as JSON; png and gif (folders) not listed.
mount_fg costumes "$OQ/tentacle.001" m-cost --views
costumes=$(cd "x-tentacle.001" && find . -name '*.cost' | wc -l)
assert_eq "every costume of the game converts to JSON" "$costumes" \
    "$(find m-cost/.trowel/convert -name '*.cost.json' | wc -l)"
run "$TROWEL" convert "x-tentacle.001/room06/cost001.cost" --to png -o cost-png
assert_rc "convert --to png of a costume" 0
if [ -d cost-png ] && [ -n "$(ls cost-png)" ]; then pass; else
    fail "convert --to png of a costume writes a folder of frames"; fi
assert_eq "... so no .png or .gif is listed for a costume" "" \
    "$(find m-cost/.trowel/convert -name '*.cost.png' -o -name '*.cost.gif')"
unmount_fg costumes m-cost

# A costume file mounted: its pictures, and archive.json is its JSON.
mount_fg bluecup "$OQ/bluecup.cost" m-bluecup --views
"$TROWEL" convert "$OQ/bluecup.cost" --to json -o bluecup.json
assert_same_file "bluecup.cost: archive.json is convert --to json" \
    m-bluecup/.trowel/archive.json bluecup.json
"$TROWEL" extract -q -C x-bluecup "$OQ/bluecup.cost"
same_tree bluecup m-bluecup x-bluecup
unmount_fg bluecup m-bluecup

# Without --views: no .trowel/, and grep -r counts each hit once.
mount_fg plain "$OQ/tentacle.001" m-plain
assert_eq "without --views: no .trowel/" "" "$(ls -A m-plain | grep -x .trowel)"
assert_eq "without --views: grep -r finds what it finds in the extracted tree" \
    "$(cd x-tentacle.001 && grep -rc -a cost . | sort)" "$(cd m-plain && grep -rc -a cost . | sort)"
unmount_fg plain m-plain
assert_contains "bash completion offers mount --views" \
    "$("$TROWEL" completion bash | grep -- '-f --foreground')" "--views"
assert_contains "mount --help lists --views" "$("$TROWEL" mount --help)" "--views"

finish
