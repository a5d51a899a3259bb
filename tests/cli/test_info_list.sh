#!/usr/bin/env bash
# trowel info and list on the real SZDD files of the corpus. Expected numbers
# come from the files' own header bytes (read with od), not from trowel.
. "${BASH_SOURCE%/*}/lib.sh"

DEFAULT="$SZDD_DIR/DEFAULT.PA_"
default_size=$(u32le "$DEFAULT" 10)
assert_eq "DEFAULT.PA_ header length (od)" 2912 "$default_size"

# ---- info
run "$TROWEL" info "$DEFAULT"
assert_rc "info exit" 0
assert_contains "info: first line" "$OUT" "$DEFAULT: szdd"
assert_contains "info: version" "$OUT" "  version: 0"
assert_contains "info: size from header" "$OUT" "  uncompressed_size: $default_size"
assert_contains "info: restored name" "$OUT" "  original_name: DEFAULT.PAL"
assert_contains "info: entry count" "$OUT" "  entries: 1"
assert_eq "info: stderr quiet" "" "$ERR"

run "$TROWEL" info --json "$DEFAULT"
assert_rc "info --json exit" 0
cp "$OUT_FILE" info.json
assert_json_valid "info --json is JSON" info.json
assert_json_eq "info --json: format" info.json .format szdd
assert_json_eq "info --json: version" info.json .version 0
assert_json_eq "info --json: file" info.json .file "$DEFAULT"
assert_json_eq "info --json: entry_count" info.json .entry_count 1
assert_json_eq "info --json: uncompressed_size" info.json .uncompressed_size "$default_size"

# Several files: one block each; --json gives one array.
run "$TROWEL" info "$SZDD_DIR"/*_
assert_rc "info on all exit" 0
assert_eq "info on all: one block per file" 7 "$(printf '%s\n' "$OUT" | grep -c ': szdd$')"
run "$TROWEL" info --json "$SZDD_DIR"/*_
cp "$OUT_FILE" infos.json
assert_json_valid "info --json on several is JSON" infos.json
assert_json_eq "info --json on several: an array" infos.json ".[6].format" szdd

# A bad file among good ones: reported, the others still shown, exit 1.
printf 'not an archive at all\n' >junk.bin
run "$TROWEL" info "$DEFAULT" junk.bin "$SZDD_DIR/RAIN.AN_"
assert_rc "info with a bad file: exit 1" 1
assert_contains "info with a bad file: good ones shown" "$OUT" "RAIN.AN_: szdd"
assert_contains "info with a bad file: error names it" "$ERR" "trowel: junk.bin: not a format trowel knows"
run "$TROWEL" info --json junk.bin "$DEFAULT"
assert_rc "info --json with a bad file: exit 1" 1
cp "$OUT_FILE" partial.json
assert_json_valid "info --json with a bad file: still JSON" partial.json

# Forcing the format.
run "$TROWEL" info -t szdd "$DEFAULT"
assert_rc "info -t szdd" 0
run "$TROWEL" info -t szdd junk.bin
assert_rc "info -t szdd on junk: exit 1" 1
assert_contains "info -t szdd on junk: error" "$ERR" "trowel: junk.bin: "

# ---- list, every corpus file
for f in "$SZDD_DIR"/*_; do
    name=$(restored_name "$f")
    size=$(u32le "$f" 10)
    packed=$(($(wc -c <"$f") - 14))
    base=$(basename "$f")

    run "$TROWEL" list "$f"
    assert_rc "list $base exit" 0
    assert_eq "list $base: name" "$name" "$OUT"

    run "$TROWEL" list -l "$f"
    assert_rc "list -l $base exit" 0
    read -r c_size c_packed c_offset c_method c_name <<<"$(printf '%s\n' "$OUT" | tail -n 1)"
    assert_eq "list -l $base: size" "$size" "$c_size"
    assert_eq "list -l $base: packed size" "$packed" "$c_packed"
    assert_eq "list -l $base: offset" 0xe "$c_offset"
    assert_eq "list -l $base: method" lzss "$c_method"
    assert_eq "list -l $base: name" "$name" "$c_name"

    run "$TROWEL" list --json "$f"
    cp "$OUT_FILE" list.json
    assert_json_valid "list --json $base is JSON" list.json
    assert_json_eq "list --json $base: format" list.json .format szdd
    assert_json_eq "list --json $base: version" list.json .version 0
    assert_json_eq "list --json $base: name" list.json ".entries[0].name" "$name"
    assert_json_eq "list --json $base: size" list.json ".entries[0].size" "$size"
    assert_json_eq "list --json $base: packed_size" list.json ".entries[0].packed_size" "$packed"
    assert_json_eq "list --json $base: offset" list.json ".entries[0].offset" 14
    assert_json_eq "list --json $base: one entry" list.json ".entries[1]" MISSING
done

# The column heading of -l and its alignment.
run "$TROWEL" list -l "$DEFAULT"
header=$(printf '%s\n' "$OUT" | head -n 1)
assert_eq "list -l heading" "SIZE PACKED OFFSET METHOD NAME" "$(printf '%s\n' "$header" | tr -s ' ')"
row=$(printf '%s\n' "$OUT" | tail -n 1)
name_col_header=${#header}
name_col_header=$((name_col_header - 4))
row_prefix=${row%DEFAULT.PAL}
assert_eq "list -l: name starts under NAME" "$name_col_header" "${#row_prefix}"

run "$TROWEL" list junk.bin
assert_rc "list junk: exit 1" 1
assert_contains "list junk: error" "$ERR" "trowel: junk.bin: not a format trowel knows"
assert_eq "list junk: nothing on stdout" "" "$OUT"

finish
