#!/usr/bin/env bash
# Several files in one command: which operands are archives and which are
# PATTERNs, a report per file, failures as JSON objects, exit 1 when any
# failed; existing files told about in one line, --skip-existing; list
# PATTERNs and --names counts.
. "${BASH_SOURCE%/*}/lib.sh"

cp "$SZDD_DIR"/*_ .
chmod u+w ./*_
ALL=(DEFAULT.PA_ GLOBE3.AN_ INTRO.HL_ MUENGNR.CN_ RAIN.AN_ TBAV.FA_ UNINSTAL.LN_)
printf 'not an archive\n' >junk.bin

# ---- extract *._ -C out: the msexpand habit
run "$TROWEL" extract ./*_ -C out
assert_rc "extract of seven archives: exit 0" 0
assert_eq "extract of seven archives: quiet" "" "$OUT$ERR"
for f in "${ALL[@]}"; do
    name=$(restored_name "$f")
    assert_file_sha256 "extract *_: $name" "out/$name" "$(expanded_sha256 "$f")"
done

# ---- the rule: leading existing files are archives, the rest PATTERNs
run "$TROWEL" extract DEFAULT.PA_ RAIN.AN_ -C pat 'R*'
assert_rc "two archives and a pattern: exit 0" 0
assert_eq "two archives and a pattern: only the match" "RAIN.ANI" "$(ls pat)"
run "$TROWEL" extract DEFAULT.PA_ RAIN.AN_ -C pat2 'X*'
assert_rc "a pattern that matches in no archive: exit 1" 1
assert_eq "a pattern that matches in no archive: one line, no file named" \
    "trowel: no entry matches 'X*'" "$ERR"
assert_dir_empty "a pattern that matches nothing: nothing written" pat2
# A missing archive ends the archives: it and what follows are PATTERNs.
run "$TROWEL" extract DEFAULT.PA_ missing.PA_ RAIN.AN_ -C pat3
assert_rc "a missing archive in the list: exit 1" 1
assert_eq "a missing archive in the list: said as patterns" \
    "trowel: DEFAULT.PA_: no entry matches 'missing.PA_'
trowel: DEFAULT.PA_: no entry matches 'RAIN.AN_'" "$ERR"
assert_eq "a missing archive in the list: nothing else extracted" "" "$(ls pat3)"
# A PATTERN that is also a file name: written with a bracket.
cp out/DEFAULT.PAL .
run "$TROWEL" extract DEFAULT.PA_ DEFAULT.PAL -C pat4
assert_rc "a pattern that names a file is an archive: exit 1" 1
assert_contains "a pattern that names a file is an archive: not detected" "$ERR" \
    "trowel: DEFAULT.PAL: not a format trowel knows"
assert_file_exists "the real archive is still extracted" pat4/DEFAULT.PAL
run "$TROWEL" extract DEFAULT.PA_ '[D]EFAULT.PAL' -C pat5
assert_rc "bracket pattern: exit 0" 0
assert_file_exists "bracket pattern: extracted" pat5/DEFAULT.PAL
# A folder is never an archive: it starts the patterns.
mkdir -p adir
run "$TROWEL" extract DEFAULT.PA_ adir -C pat6
assert_eq "a folder operand is a pattern" "trowel: DEFAULT.PA_: no entry matches 'adir'" "$ERR"

# ---- one archive fails: the others are still done, exit 1
run "$TROWEL" extract DEFAULT.PA_ junk.bin RAIN.AN_ -C mixed
assert_rc "a bad archive among good ones: exit 1" 1
assert_eq "a bad archive among good ones: reported" \
    "trowel: junk.bin: not a format trowel knows (see 'trowel formats')" "$ERR"
assert_eq "a bad archive among good ones: the others extracted" "DEFAULT.PAL
RAIN.ANI" "$(ls mixed)"

# ---- existing files: one line, also with -q; --skip-existing
run "$TROWEL" extract ./*_ -C out
assert_rc "seven existing files: exit 1" 1
assert_eq "seven existing files: one line" \
    "trowel: out: 7 files exist already, kept (use --force to overwrite or --skip-existing)" "$ERR"
run "$TROWEL" extract -q DEFAULT.PA_ -C out
assert_eq "one existing file, -q: still one line" \
    "trowel: out: 1 file exists already, kept (use --force to overwrite or --skip-existing)" "$ERR"
printf 'mine\n' >out/RAIN.ANI
rm out/GLOBE3.ANI
run "$TROWEL" extract --skip-existing ./*_ -C out
assert_rc "--skip-existing: exit 0" 0
assert_eq "--skip-existing: silent" "" "$OUT$ERR"
assert_eq "--skip-existing: kept what was there" mine "$(cat out/RAIN.ANI)"
assert_file_sha256 "--skip-existing: wrote what was missing" out/GLOBE3.ANI \
    "$(expanded_sha256 GLOBE3.AN_)"
rm out/GLOBE3.ANI
run "$TROWEL" extract -k -v ./*_ -C out
assert_rc "-k -v: exit 0" 0
assert_eq "-k -v: the files written" "out/GLOBE3.ANI" "$OUT"
assert_eq "-k -v: the count skipped" "trowel: out: 6 existing files skipped" "$ERR"
run "$TROWEL" extract --force --skip-existing DEFAULT.PA_ -C out
assert_usage_error "--force with --skip-existing"
assert_eq "--manifest with several archives: usage error" 2 \
    "$("$TROWEL" extract DEFAULT.PA_ RAIN.AN_ --manifest m.json -C m 2>/dev/null; echo $?)"
assert_no_file "--manifest with several archives: nothing written" m.json

# ---- list: headers, patterns, JSON
run "$TROWEL" list DEFAULT.PA_ RAIN.AN_
assert_rc "list of two: exit 0" 0
assert_eq "list of two: a header each" "==> DEFAULT.PA_ <==
DEFAULT.PAL

==> RAIN.AN_ <==
RAIN.ANI" "$OUT"
run "$TROWEL" list DEFAULT.PA_
assert_eq "list of one: no header" "DEFAULT.PAL" "$OUT"
run "$TROWEL" list DEFAULT.PA_ RAIN.AN_ 'R*'
assert_eq "list with a pattern" "==> DEFAULT.PA_ <==

==> RAIN.AN_ <==
RAIN.ANI" "$OUT"
run "$TROWEL" list -l DEFAULT.PA_ '*.XYZ'
assert_rc "list pattern matching nothing: exit 1" 1
assert_eq "list pattern matching nothing: says so" "trowel: DEFAULT.PA_: no entry matches '*.XYZ'" "$ERR"
assert_eq "list pattern matching nothing: the heading only" \
    "SIZE  PACKED  OFFSET  METHOD  NAME" "$OUT"
run "$TROWEL" list --json DEFAULT.PA_ junk.bin
assert_rc "list --json with a bad file: exit 1" 1
cp "$OUT_FILE" list.json
assert_json_eq "list --json: first file" list.json '.[0].file' DEFAULT.PA_
assert_json_eq "list --json: its entries" list.json '.[0].entries[0].name' DEFAULT.PAL
assert_json_eq "list --json: the failure is an object" list.json '.[1]' \
    '{"error":{"message":"not a format trowel knows (see '"'"'trowel formats'"'"')","status":"unsupported"},"file":"junk.bin"}'
run "$TROWEL" list --json DEFAULT.PA_ 'X*'
cp "$OUT_FILE" list1.json
assert_json_eq "list --json with a pattern: no entries" list1.json '.entries' '[]'

# ---- info and verify: several files, JSON failures
run "$TROWEL" info --json DEFAULT.PA_ junk.bin RAIN.AN_
assert_rc "info --json with a bad file: exit 1" 1
cp "$OUT_FILE" info.json
assert_json_eq "info --json: three elements" info.json 'length' 3
assert_json_eq "info --json: failure kept in place" info.json '.[1].error.status' unsupported
assert_json_eq "info --json: failure names the file" info.json '.[1].file' junk.bin
assert_json_eq "info --json: the next file still there" info.json '.[2].format' szdd
assert_eq "info --json: stderr still says why" \
    "trowel: junk.bin: not a format trowel knows (see 'trowel formats')" "$ERR"

head -c 600 RAIN.AN_ >cut.AN_
run "$TROWEL" verify DEFAULT.PA_ cut.AN_ RAIN.AN_
assert_rc "verify with a truncated file: exit 1" 1
assert_eq "verify: ok lines for the good ones" "DEFAULT.PA_: ok
RAIN.AN_: ok" "$OUT"
run "$TROWEL" verify --json cut.AN_
assert_rc "verify --json of a bad file: exit 1" 1
cp "$OUT_FILE" v1.json
assert_json_eq "verify --json: file" v1.json .file cut.AN_
assert_json_eq "verify --json: format" v1.json .format szdd
assert_json_eq "verify --json: not ok" v1.json ".ok|tostring" false
assert_json_eq "verify --json: the problem" v1.json '.problems[0].status' truncated
assert_json_eq "verify --json: its entry" v1.json '.problems[0].entry' cut.ANi
assert_json_eq "verify --json: its offset" v1.json '.problems[0].offset' 600
assert_eq "verify --json: stderr has the count" "trowel: cut.AN_: 1 problem found" "$ERR"
run "$TROWEL" verify --json DEFAULT.PA_ junk.bin
cp "$OUT_FILE" v2.json
assert_json_eq "verify --json of two: ok one" v2.json '.[0]' \
    '{"file":"DEFAULT.PA_","format":"szdd","ok":true,"problems":[]}'
assert_json_eq "verify --json of two: failure object" v2.json '.[1].error.status' unsupported

# ---- list --names: a count, and a hint when patterns find nothing
IMG="$TROWEL_CORPUS/valve/ez2/scenes/scenes.image"
if [ -f "$IMG" ]; then
    run "$TROWEL" list --names "$TROWEL_CORPUS/valve/ez2" "$IMG" 'scenes/f02*'
    assert_rc "list --names with a pattern: exit 0" 0
    assert_eq "list --names: the count on stderr" "trowel: $IMG: 51 of 51 names recovered" "$ERR"
    assert_contains "list --names with a pattern: the match" "$OUT" "scenes/f02_lobby1.vcd"
    run "$TROWEL" list -q --names "$TROWEL_CORPUS/valve/ez2" "$IMG"
    assert_eq "list --names -q: no count" "" "$ERR"
    printf 'scenes/f02_lobby1.vcd\nscenes/nothing.vcd\n' >names.txt
    run "$TROWEL" list --names names.txt "$IMG" 'scenes/*'
    assert_eq "list --names LIST: 1 of 51" "trowel: $IMG: 1 of 51 names recovered" "$ERR"
    run "$TROWEL" list "$IMG" 'scenes/f02*'
    assert_rc "pattern on unnamed entries: exit 1" 1
    assert_eq "pattern on unnamed entries: suggests --names" \
        "trowel: $IMG: no entry matches 'scenes/f02*' (entries are unnamed hashes: --names LIST recovers names)" "$ERR"
    run "$TROWEL" extract "$IMG" 'scenes/f02*' -C none
    assert_contains "extract pattern on unnamed entries: suggests --names" "$ERR" "--names LIST recovers names"
else
    skip "$IMG is absent: --names counts"
fi

finish
