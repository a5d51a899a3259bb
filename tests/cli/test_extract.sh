#!/usr/bin/env bash
# trowel extract: the corpus expands to the known SHA-256s, nothing is
# overwritten without --force, patterns select, the manifest rebuilds.
. "${BASH_SOURCE%/*}/lib.sh"

DEFAULT="$SZDD_DIR/DEFAULT.PA_"

# ---- every corpus file, checked against expanded.sha256
count=0
for f in "$SZDD_DIR"/*_; do
    base=$(basename "$f")
    name=$(restored_name "$f")
    want=$(expanded_sha256 "$base")
    assert_ne "$base has a hash in expanded.sha256" "" "$want"
    run "$TROWEL" extract "$f" -C all
    assert_rc "extract $base exit" 0
    assert_eq "extract $base: silent stdout" "" "$OUT"
    assert_eq "extract $base: silent stderr (no progress off a tty)" "" "$ERR"
    assert_file_sha256 "extract $base: $name expands right" "all/$name" "$want"
    count=$((count + 1))
done
assert_eq "seven corpus files" 7 "$count"
assert_eq "extract wrote only the entries" 7 "$(find all -mindepth 1 | wc -l | tr -d ' ')"

# ---- default folder and -v
mkdir here && cd here || exit 1
run "$TROWEL" extract -v "$DEFAULT"
assert_rc "extract into the current folder" 0
assert_eq "extract -v names the file" "DEFAULT.PAL" "$OUT"
assert_file_sha256 "extract into the current folder: content" DEFAULT.PAL "$(expanded_sha256 DEFAULT.PA_)"
cd .. || exit 1
run "$TROWEL" extract --verbose -C vdir "$DEFAULT"
assert_eq "extract -v -C names DIR/file" "vdir/DEFAULT.PAL" "$OUT"

# ---- no overwriting without --force
mkdir keep
printf 'precious\n' >keep/DEFAULT.PAL
run "$TROWEL" extract -C keep "$DEFAULT"
assert_rc "extract onto an existing file: exit 1" 1
assert_eq "extract onto an existing file: one line says so" \
    "trowel: keep: 1 file exists already, kept (use --force to overwrite or --skip-existing)" "$ERR"
assert_eq "extract onto an existing file: kept" precious "$(cat keep/DEFAULT.PAL)"
assert_eq "extract onto an existing file: no temporary left" "DEFAULT.PAL" "$(ls -A keep)"
run "$TROWEL" extract -C keep --force "$DEFAULT"
assert_rc "extract --force exit" 0
assert_file_sha256 "extract --force replaced it" keep/DEFAULT.PAL "$(expanded_sha256 DEFAULT.PA_)"
printf 'precious\n' >keep/DEFAULT.PAL
run "$TROWEL" extract -C keep -f "$DEFAULT"
assert_rc "extract -f exit" 0
assert_file_sha256 "extract -f replaced it" keep/DEFAULT.PAL "$(expanded_sha256 DEFAULT.PA_)"

# ---- patterns
run "$TROWEL" extract -C pat "$DEFAULT" 'DEFAULT.*'
assert_rc "pattern that matches" 0
assert_file_exists "pattern that matches: extracted" pat/DEFAULT.PAL
run "$TROWEL" extract -C pat2 "$DEFAULT" '*.XYZ'
assert_rc "pattern that matches nothing: exit 1" 1
assert_contains "pattern that matches nothing: says which" "$ERR" "no entry matches '*.XYZ'"
assert_dir_empty "pattern that matches nothing: nothing written" pat2
run "$TROWEL" extract -C pat3 "$DEFAULT" '*.XYZ' 'D*'
assert_rc "one pattern of two matches nothing: exit 1" 1
assert_file_exists "one pattern of two matches: still extracted" pat3/DEFAULT.PAL

# ---- the archive itself is never the target
mkdir self
cp "$SZDD_DIR/RAIN.AN_" self/RAINX # no '_': the entry is named RAINX too
chmod u+w self/RAINX
before=$(sha256_of self/RAINX)
run "$TROWEL" extract -C self --force self/RAINX
assert_rc "extract onto the archive itself: exit 1" 1
assert_contains "extract onto the archive itself: says so" "$ERR" "archive being read"
assert_eq "extract onto the archive itself: archive intact" "$before" "$(sha256_of self/RAINX)"
assert_eq "extract onto the archive itself: nothing else" RAINX "$(ls -A self)"
run "$TROWEL" extract -C out --force --manifest self/RAINX self/RAINX
assert_rc "manifest onto the archive itself: exit 1" 1
assert_eq "manifest onto the archive itself: intact" "$before" "$(sha256_of self/RAINX)"
# ... nor a second name of it (a hard link), nor the archive reached
# through a folder given by a symbolic link
mkdir linked && ln self/RAINX linked/RAINX
run "$TROWEL" extract -C linked --force self/RAINX
assert_rc "extract onto a hard link of the archive: exit 1" 1
assert_contains "extract onto a hard link of the archive: says so" "$ERR" "archive being read"
assert_eq "extract onto a hard link of the archive: intact" "$before" "$(sha256_of self/RAINX)"
rm linked/RAINX
ln -s self via-link
run "$TROWEL" extract -C via-link --force self/RAINX
assert_rc "extract onto the archive through a linked folder: exit 1" 1
assert_eq "extract onto the archive through a linked folder: intact" "$before" "$(sha256_of self/RAINX)"
# ... nor the archive seen through a bind mount (another path, the same
# inode; no symbolic link to resolve)
mkdir bound
if mount --bind self bound 2>/dev/null; then
    run "$TROWEL" extract -C bound --force self/RAINX
    umount bound
    assert_rc "extract onto the archive through a bind mount: exit 1" 1
    assert_eq "extract onto the archive through a bind mount: intact" "$before" "$(sha256_of self/RAINX)"
else
    skip "mount --bind is not allowed here: the bind-mount case"
fi

# ---- --manifest, then create --manifest: same header, same expansion
for f in "$SZDD_DIR"/*_; do
    base=$(basename "$f")
    name=$(restored_name "$f")
    rm -rf m && mkdir m
    run "$TROWEL" extract "$f" -C m/files --manifest m/manifest.json
    assert_rc "extract --manifest $base exit" 0
    assert_json_valid "manifest of $base is JSON" m/manifest.json
    assert_json_eq "manifest of $base: format" m/manifest.json .format szdd
    assert_json_eq "manifest of $base: entry" m/manifest.json ".entries[0].name" "$name"
    run "$TROWEL" create --manifest m/manifest.json -C m/files -o "m/$base"
    assert_rc "create --manifest $base exit" 0
    assert_eq "rebuilt $base: header bytes 0..13" "$(bytes "$f" 0 14)" "$(bytes "m/$base" 0 14)"
    run "$TROWEL" extract "m/$base" -C m/again
    assert_rc "rebuilt $base extracts" 0
    assert_file_sha256 "rebuilt $base expands the same" "m/again/$name" "$(expanded_sha256 "$base")"
done

# The manifest file is not overwritten without --force either.
printf '{}\n' >existing.json
run "$TROWEL" extract "$DEFAULT" -C mf --manifest existing.json
assert_rc "existing manifest: exit 1" 1
assert_eq "existing manifest: kept" "{}" "$(cat existing.json)"
assert_dir_empty "existing manifest: stopped before extracting" mf
run "$TROWEL" extract "$DEFAULT" -C mf --manifest existing.json --force
assert_rc "existing manifest with --force" 0
assert_json_eq "existing manifest with --force: replaced" existing.json .format szdd

# A DIR that cannot be used stops everything, manifest included.
: >notafolder
run "$TROWEL" extract "$DEFAULT" -C notafolder --manifest nf.json
assert_rc "-C onto a file: exit 1" 1
assert_contains "-C onto a file: says so" "$ERR" "notafolder"
assert_no_file "-C onto a file: no manifest" nf.json
assert_eq "-C onto a file: no temporary manifest" "" "$(find . -maxdepth 1 -name '.nf.json*')"

# ---- -t forces the format
run "$TROWEL" extract -t szdd "$DEFAULT" -C forced
assert_rc "extract -t szdd" 0
assert_file_exists "extract -t szdd wrote" forced/DEFAULT.PAL

finish
