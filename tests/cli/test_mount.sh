#!/usr/bin/env bash
# trowel mount / umount: every archive as a read-only folder (FUSE). Each
# mounted tree is compared, file by file with cmp, against what
# `trowel extract` writes from the same archive; random slices are read
# with dd; find, ls -lR and grep -r walk it; without --views there is no
# .trowel/ (grep -r finds what it finds in the extracted tree), with it the
# views match `extract --raw`, `convert --to json` and `extract --manifest`; damaged
# archives give EIO for the broken entries only and still unmount cleanly.
# Where /dev/fuse cannot be opened (a container without it) everything is
# SKIPPED, never passed. No mount is ever left behind (trap: fusermount3 -u).
. "${BASH_SOURCE%/*}/lib.sh"
. "${BASH_SOURCE%/*}/mount_lib.sh"

# ---------------------------------------------------------------- usage
mkdir -p point
run "$TROWEL" mount
assert_usage_error "mount without operands"
run "$TROWEL" mount nothing.image point
assert_rc "mount a missing archive: exit 1" 1
assert_contains "mount a missing archive: says so" "$ERR" "nothing.image"
if mountpoint -q point; then fail "a failed mount mounts nothing"; else pass; fi
: >plain.file
run "$TROWEL" mount "$SZDD_DIR/DEFAULT.PA_" plain.file
assert_rc "mount on a file: exit 1 (a bad operand, not a usage error)" 1
assert_contains "mount on a file: says so" "$ERR" "plain.file: the mount point must be a folder"
run "$TROWEL" mount - point
assert_usage_error "mount standard input"
run "$TROWEL" umount point
assert_rc "umount of what is not mounted: exit 1" 1
assert_contains "umount of what is not mounted: says so" "$ERR" "cannot unmount"
run "$TROWEL" umount
assert_usage_error "umount without a MOUNTPOINT"

# ---------------------------------------------- SZDD files (one entry each)
szdd_bad=""
szdd_count=0
for f in "$SZDD_DIR"/*_; do
    [ -f "$f" ] || continue
    szdd_count=$((szdd_count + 1))
    base=$(basename "$f")
    rm -rf "x-$base"
    "$TROWEL" extract -q -C "x-$base" "$f" || szdd_bad="$szdd_bad extract:$base"
    mkdir -p "m-$base"
    MOUNTED="$MOUNTED $PWD/m-$base"
    "$TROWEL" mount "$f" "m-$base" 2>"m-$base.err" || szdd_bad="$szdd_bad mount:$base"
    if ! diff -r -x .trowel "m-$base" "x-$base" >/dev/null; then
        szdd_bad="$szdd_bad differs:$base"
    fi
    "$TROWEL" umount "m-$base" || szdd_bad="$szdd_bad umount:$base"
    mountpoint -q "m-$base" && szdd_bad="$szdd_bad still-mounted:$base"
done
if [ "$szdd_count" -gt 0 ]; then
    assert_eq "SZDD: $szdd_count files mount (detached), match extract, unmount" "" "$szdd_bad"
else
    skip "no SZDD files in $SZDD_DIR"
fi

# ---------------------------------- ez2 scenes.image (detached, umount)
EZ2="$TROWEL_CORPUS/valve/ez2/scenes/scenes.image"
if [ -f "$EZ2" ]; then
    "$TROWEL" extract -q -C x-ez2 "$EZ2"
    "$TROWEL" extract -q -C x-ez2-raw --raw "$EZ2"
    "$TROWEL" extract -q -C x-ez2-man --manifest ez2.manifest.json "$EZ2" >/dev/null
    "$TROWEL" convert "$EZ2" --to json -o ez2.json
    mkdir -p m-ez2
    MOUNTED="$MOUNTED $PWD/m-ez2"
    run "$TROWEL" mount --views "$EZ2" m-ez2
    assert_rc "ez2: mount (detached) exits 0" 0
    if mountpoint -q m-ez2; then pass; else fail "ez2: mounted after trowel returned"; fi
    same_tree ez2 m-ez2 x-ez2
    random_reads ez2 m-ez2 x-ez2 60
    walk ez2 m-ez2 x-ez2 "flashback"
    assert_eq "ez2: .trowel holds the views" "archive.json convert manifest.json raw" \
        "$(cd m-ez2/.trowel && echo *)"
    same_tree ez2-raw m-ez2/.trowel/raw x-ez2-raw
    if cmp -s m-ez2/.trowel/archive.json ez2.json; then pass; else
        fail "ez2: .trowel/archive.json is convert --to json"; fi
    if cmp -s m-ez2/.trowel/manifest.json ez2.manifest.json; then pass; else
        fail "ez2: .trowel/manifest.json is extract --manifest"; fi
    # convert/: every scene as each target of a text VCD, what convert writes
    first=$(cd x-ez2 && find . -type f -printf '%P\n' | sort | head -1)
    assert_eq "ez2: convert/ offers the text VCD's targets" \
        "$first.bvcd $first.json $first.json-full $first.vcd" \
        "$(cd m-ez2/.trowel/convert && echo "$first".*)"
    same_conversions ez2 m-ez2/.trowel/convert x-ez2 "$first" json bvcd json-full
    assert_eq "ez2: convert/ has 4 files for each of 51 scenes" 204 \
        "$(find m-ez2/.trowel/convert -type f | wc -l)"
    # read-only
    if (: >m-ez2/new.vcd) 2>/dev/null; then fail "ez2: no file can be made"; else pass; fi
    if (printf x >>"m-ez2/$first") 2>/dev/null; then fail "ez2: no file can be written"; else pass; fi
    run "$TROWEL" umount m-ez2
    assert_rc "ez2: trowel umount" 0
    if wait_unmounted m-ez2; then pass; else fail "ez2: unmounted"; fi

    # A fuzzed image: a scene's LZMA stream with bytes flipped gives EIO;
    # the other 50 read as extract writes them.
    cp "$EZ2" fuzzed.image
    off=$("$TROWEL" list --json "$EZ2" | jq '.entries[0].offset')
    broken=$("$TROWEL" list --json "$EZ2" | jq -r '.entries[0].name')
    printf '\377\377\377\377\377\377\377\377' | dd of=fuzzed.image bs=1 seek=$((off + 40)) conv=notrunc 2>/dev/null
    "$TROWEL" extract -q -C x-fuzzed-image fuzzed.image 2>/dev/null
    mount_fg "fuzzed scenes.image" fuzzed.image m-fuzzed-image
    cat_all m-fuzzed-image
    assert_ne "fuzzed image: cat of every file fails" 0 "$RC"
    assert_contains "fuzzed image: the broken scene gives EIO" "$ERR" "$broken: Input/output error"
    assert_contains "fuzzed image: trowel names it on stderr" "$(cat m-fuzzed-image.err)" \
        "fuzzed.image: $broken: "
    same_readable fuzzed-image m-fuzzed-image x-fuzzed-image fuzzed.image
    unmount_fg "fuzzed scenes.image" m-fuzzed-image
else
    skip "the ez2 scenes.image is not in the corpus ($EZ2)"
fi

# ------------------------------ tsp scenes.image (foreground, Ctrl-C)
TSP="$TROWEL_CORPUS/valve/tsp/scenes/scenes.image"
if [ -f "$TSP" ]; then
    "$TROWEL" extract -q -C x-tsp "$TSP"
    mount_fg tsp "$TSP" m-tsp
    same_tree tsp m-tsp x-tsp
    random_reads tsp m-tsp x-tsp 60
    walk tsp m-tsp x-tsp "narrator"
    assert_eq "tsp: without --views, no .trowel/" "" "$(ls -A m-tsp | grep -x .trowel)"
    kill -INT "$FG_PID"
    wait "$FG_PID"
    assert_eq "tsp: Ctrl-C ends trowel mount -f with status 0" 0 $?
    if mountpoint -q m-tsp; then fail "tsp: Ctrl-C unmounts"; else pass; fi
    assert_eq "tsp: nothing on stderr" "" "$(cat m-tsp.err)"
else
    skip "the tsp scenes.image is not in the corpus ($TSP)"
fi

# ------------------------------- part files and VOL.CNF (trowel create)
mkdir -p src
cp "$TROWEL_SOURCE/docs/ARCHITECTURE.md" src/ARCH.TXT
head -c 200000 "$TROWEL" >src/BIN.DAT
head -c 3000 /dev/urandom >src/NOISE.BIN
printf 'AAAAAAAAAAA' >src/A11.BIN
: >src/EMPTY
"$TROWEL" create -t cine-part -o TEST.PRT -C src ARCH.TXT BIN.DAT NOISE.BIN A11.BIN EMPTY
"$TROWEL" extract -q -C x-part TEST.PRT
mount_fg "part file" TEST.PRT m-part --views
same_tree part m-part x-part
random_reads part m-part x-part 80
walk part m-part x-part "bounded reader"
assert_eq "part file: no raw/ (nothing is converted)" "archive.json convert manifest.json" \
    "$(cd m-part/.trowel && echo *)"
unmount_fg "part file" m-part

# A cache smaller than the files (--cache 1M for two 2 MiB entries, one
# packed, and a small one): files are dropped and decoded again, and every
# read still agrees; a --mem-limit that decoding fits in gives no error.
head -c 2097152 /dev/urandom >src/BIG1.BIN
for _ in $(seq 200); do cat src/ARCH.TXT; done | head -c 2097152 >src/BIG2.TXT
"$TROWEL" create -t cine-part -o BIG.PRT -C src BIG1.BIN BIG2.TXT ARCH.TXT
"$TROWEL" extract -q -C x-big BIG.PRT
mount_fg "--cache 1M" BIG.PRT m-big --cache 1M --mem-limit 16M
same_tree big m-big x-big
random_reads big m-big x-big 40
assert_eq "--cache 1M: nothing on stderr" "" "$(cat m-big.err)"
unmount_fg "--cache 1M" m-big
run "$TROWEL" mount --cache lots BIG.PRT m-big
assert_usage_error "--cache with a word"

# A tiny cache over many small files (ez2: 51 scenes, --cache 4K).
if [ -f "$TROWEL_CORPUS/valve/ez2/scenes/scenes.image" ]; then
    mount_fg "--cache 4K" "$TROWEL_CORPUS/valve/ez2/scenes/scenes.image" m-ez2-small --cache 4K
    same_tree ez2-small m-ez2-small x-ez2
    random_reads ez2-small m-ez2-small x-ez2 40
    unmount_fg "--cache 4K" m-ez2-small
else
    skip "the ez2 scenes.image is not in the corpus: --cache 4K not checked"
fi

mkdir -p vol
"$TROWEL" create -t cine-part -o vol/PROCS00 -C src ARCH.TXT A11.BIN
"$TROWEL" create -t cine-part -o vol/RSC04 -C src BIN.DAT NOISE.BIN EMPTY
"$TROWEL" create -t cine-volcnf -O compress=1 -o vol/VOL.CNF -C vol PROCS00 RSC04
"$TROWEL" extract -q -C x-vol vol/VOL.CNF
mount_fg "VOL.CNF" vol/VOL.CNF m-vol
same_tree vol m-vol x-vol
random_reads vol m-vol x-vol 40
unmount_fg "VOL.CNF" m-vol

# ------------------------------------------- damaged archives: EIO, not a crash
# A part file whose packed ARCH.TXT has bytes flipped: that entry fails its
# checksum (EIO, a message naming it); the others read as extract writes them.
cp TEST.PRT fuzzed.PRT
off=$("$TROWEL" list --json TEST.PRT | jq '.entries[0].offset')
printf '\377\377\377\377\377\377\377\377' | dd of=fuzzed.PRT bs=1 seek=$((off + 40)) conv=notrunc 2>/dev/null
"$TROWEL" extract -q -C x-fuzzed fuzzed.PRT 2>/dev/null
mount_fg "fuzzed part file" fuzzed.PRT m-fuzzed
cat_all m-fuzzed
assert_ne "fuzzed: cat of every file fails" 0 "$RC"
assert_contains "fuzzed: the broken entry gives EIO" "$ERR" "ARCH.TXT: Input/output error"
assert_eq "fuzzed: only the broken entry fails" 1 "$(printf '%s\n' "$ERR" | grep -c 'Input/output error')"
assert_contains "fuzzed: trowel names the entry on stderr" "$(cat m-fuzzed.err)" "fuzzed.PRT: ARCH.TXT: "
same_readable fuzzed m-fuzzed x-fuzzed fuzzed.PRT
run cat m-fuzzed/ARCH.TXT
assert_contains "fuzzed: a second read gives EIO again" "$ERR" "Input/output error"
if kill -0 "$FG_PID" 2>/dev/null; then pass; else fail "fuzzed: the file system is still running"; fi
unmount_fg "fuzzed part file" m-fuzzed

# A part file cut inside its last entry's data.
size=$(stat -c %s TEST.PRT)
head -c $((size - 1000)) TEST.PRT >cut.PRT
"$TROWEL" extract -q -C x-cut cut.PRT 2>/dev/null
mount_fg "cut part file" cut.PRT m-cut
cat_all m-cut
assert_ne "cut: cat of every file fails" 0 "$RC"
assert_contains "cut: the cut entry gives EIO" "$ERR" "Input/output error"
same_readable cut m-cut x-cut cut.PRT
unmount_fg "cut part file" m-cut

if [ -f "$TSP" ]; then
    # the tsp image cut in its data: the scenes past the cut give EIO
    size=$(stat -c %s "$TSP")
    head -c $((size * 3 / 4)) "$TSP" >cut.image
    "$TROWEL" extract -q -C x-cut-image cut.image 2>/dev/null
    mount_fg "cut scenes.image" cut.image m-cut-image
    # scenes.image keeps only the scenes before the cut: those are shown
    cat_all m-cut-image
    assert_rc "cut image: every scene shown reads" 0
    same_tree cut-image m-cut-image x-cut-image
    assert_contains "cut image: the damage is told" "$(cat m-cut-image.err)" 'damaged image'
    unmount_fg "cut scenes.image" m-cut-image
else
    skip "the tsp scenes.image is not in the corpus (cut image)"
fi

# ------------------------------------------------------ nothing left behind
left=$(grep -c " $T_ROOT" /proc/self/mounts)
assert_eq "no mount left behind" 0 "$left"

finish
