#!/usr/bin/env bash
# trowel mount -r: the .trowel/ views cover the entries of nested archives
# too, named as the main tree names them. A zlib .vpp_pc (made here with
# trowel create -t vpp) holds the corpus's tsp scenes.image and a .str2_pc
# of two SZDD files and a text file:
#   .trowel/raw/scenes.image.d/      is `extract --raw` of the scenes.image
#                                   (BVCD as stored, not text VCD)
#   .trowel/raw/inner.str2_pc.d/     the str2's entries as stored (VPP has
#                                   no raw option: extract's bytes)
#   .trowel/convert/X.d/NAME.TARGET  is `convert NAME --to TARGET` of each
#                                   nested file a format recognises
# Without -r there are no nested folders in the views either.
# Skipped where /dev/fuse cannot be opened; no mount is left behind.
. "${BASH_SOURCE%/*}/lib.sh"
. "${BASH_SOURCE%/*}/mount_lib.sh"

TSP="$TROWEL_CORPUS/valve/tsp/scenes/scenes.image"
[ -f "$TSP" ] || skip_all "no tsp scenes.image at $TSP"
[ -f "$SZDD_DIR/DEFAULT.PA_" ] || skip_all "no SZDD files at $SZDD_DIR"

mkdir in
cp "$SZDD_DIR/DEFAULT.PA_" "$SZDD_DIR/RAIN.AN_" in/
echo note >in/note.txt
(cd in && "$TROWEL" create -q -t vpp -o ../inner.str2_pc -- DEFAULT.PA_ RAIN.AN_ note.txt)
cp "$TSP" scenes.image
"$TROWEL" create -q -t vpp -O compressed=1 -o outer.vpp_pc inner.str2_pc scenes.image
assert_eq "create the outer vpp" 0 $?
"$TROWEL" extract -q --raw -C x-raw scenes.image
"$TROWEL" extract -q -C x-inner inner.str2_pc
"$TROWEL" extract -q -C x-scenes scenes.image

mount_fg views outer.vpp_pc m -r --views
assert_eq ".trowel holds the views" "archive.json convert manifest.json raw" \
    "$(cd m/.trowel && echo *)"
assert_eq "raw/ holds a folder for each nested archive" "inner.str2_pc.d scenes.image.d" \
    "$(cd m/.trowel/raw && echo *)"
same_tree raw-scenes m/.trowel/raw/scenes.image.d x-raw
same_tree raw-inner m/.trowel/raw/inner.str2_pc.d x-inner
if cmp -s m/.trowel/raw/scenes.image.d/"$(cd x-raw && ls | head -1)" \
    x-scenes/"$(cd x-raw && ls | head -1)"; then
    fail "raw/scenes.image.d/ holds BVCD, not the text VCD of scenes.image.d/"
else
    pass
fi

# convert/: the nested SZDD files and scenes, under the main tree's names.
assert_eq "convert/ has a folder for each nested archive and the archives' own JSON" \
    "inner.str2_pc.d inner.str2_pc.json scenes.image.d scenes.image.json" \
    "$(cd m/.trowel/convert && echo *)"
assert_eq "convert/inner.str2_pc.d/: the SZDD files' targets (the text file has none)" \
    "DEFAULT.PA_.json RAIN.AN_.json" "$(cd m/.trowel/convert/inner.str2_pc.d && echo *)"
(cd in && "$TROWEL" convert DEFAULT.PA_ --to json -o ../default.json)
assert_same_file "convert/inner.str2_pc.d/DEFAULT.PA_.json is what convert writes" \
    m/.trowel/convert/inner.str2_pc.d/DEFAULT.PA_.json default.json
first=$(cd x-scenes && ls | head -1)
same_conversions scenes m/.trowel/convert/scenes.image.d x-scenes "$first" json bvcd json-full
assert_eq "convert/scenes.image.d/: 4 files for each of the 301 scenes" 1204 \
    "$(find m/.trowel/convert/scenes.image.d -type f | wc -l)"
cat_all m
assert_eq "every file of the mount reads" "0 " "$RC $ERR"
assert_eq "nothing on stderr" "" "$(cat m.err)"
unmount_fg views m

# Without -r: no nested folders anywhere, and no raw/ (VPP has no raw option).
mount_fg flat outer.vpp_pc flat --views
assert_eq "flat: .trowel has no raw/" "archive.json convert manifest.json" \
    "$(cd flat/.trowel && echo *)"
assert_eq "flat: convert/ has the archives' own JSON only" "inner.str2_pc.json scenes.image.json" \
    "$(cd flat/.trowel/convert && echo *)"
unmount_fg flat flat

finish
