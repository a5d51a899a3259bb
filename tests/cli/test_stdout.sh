#!/usr/bin/env bash
# Pipes: extract --stdout (one entry, or all concatenated, as tar -O), '-'
# as the input of info, list, extract, verify and convert, and binary data
# refused on a terminal unless --force (extract --stdout, convert,
# compress, decompress).
. "${BASH_SOURCE%/*}/lib.sh"

DEFAULT="$SZDD_DIR/DEFAULT.PA_"
RAIN="$SZDD_DIR/RAIN.AN_"
TBAV="$SZDD_DIR/TBAV.FA_" # expands to text

# ---- extract --stdout
run "$TROWEL" extract --stdout "$DEFAULT"
assert_rc "extract --stdout: exit 0" 0
assert_eq "extract --stdout: the entry's bytes" "$(expanded_sha256 DEFAULT.PA_)" "$(sha256_of "$OUT_FILE")"
assert_eq "extract --stdout: nothing on stderr" "" "$ERR"
assert_dir_empty "extract --stdout: no file written" .
"$TROWEL" extract -C both "$DEFAULT" "$RAIN"
cat both/DEFAULT.PAL both/RAIN.ANI >both.bin
run "$TROWEL" extract --stdout "$DEFAULT" "$RAIN"
assert_rc "extract --stdout of two archives: exit 0" 0
assert_same_file "extract --stdout of two archives: concatenated in order" both.bin "$OUT_FILE"
run "$TROWEL" extract --stdout "$DEFAULT" "$RAIN" 'R*'
assert_same_file "extract --stdout with a pattern: only the match" both/RAIN.ANI "$OUT_FILE"
run "$TROWEL" extract --stdout -C dir "$DEFAULT"
assert_usage_error "extract --stdout -C"
run "$TROWEL" extract --stdout --manifest m.json "$DEFAULT"
assert_usage_error "extract --stdout --manifest"
assert_no_file "extract --stdout --manifest: no manifest" m.json
run "$TROWEL" extract --stdout --skip-existing "$DEFAULT"
assert_usage_error "extract --stdout --skip-existing"
# A failing entry is reported; what came before it stays.
head -c 600 "$RAIN" >cut.AN_
run "$TROWEL" extract --stdout "$DEFAULT" cut.AN_
assert_rc "extract --stdout with a truncated archive: exit 1" 1
assert_contains "extract --stdout with a truncated archive: says so" "$ERR" "trowel: cut.AN_: cut.ANi: "
assert_eq "extract --stdout: the good entry first" "$(expanded_sha256 DEFAULT.PA_)" \
    "$(head -c 2912 "$OUT_FILE" | sha256sum | cut -d' ' -f1)"

# ---- '-': standard input
run_stdin() { # FILE CMD...: run with FILE on standard input
    local in=$1
    shift
    "$@" <"$in" >"$OUT_FILE" 2>"$ERR_FILE"
    RC=$?
    OUT=$(cat "$OUT_FILE")
    ERR=$(cat "$ERR_FILE")
}
run_stdin "$DEFAULT" "$TROWEL" info -
assert_rc "info -: exit 0" 0
assert_contains "info -: names standard input" "$OUT" "(standard input): szdd"
run_stdin "$DEFAULT" "$TROWEL" list -l -
assert_rc "list -: exit 0" 0
# SZDD names its entry after the file; standard input has no file name.
assert_eq "list -: the entry, named stdin" "SIZE  PACKED  OFFSET  METHOD  NAME
2912    1153     0xe  lzss    stdin" "$OUT"
run_stdin "$DEFAULT" "$TROWEL" verify -
assert_eq "verify -: ok" "(standard input): ok" "$OUT"
run_stdin "$DEFAULT" "$TROWEL" extract --stdout -
assert_eq "extract --stdout -: the bytes" "$(expanded_sha256 DEFAULT.PA_)" "$(sha256_of "$OUT_FILE")"
run_stdin "$DEFAULT" "$TROWEL" extract - -C fromstdin
assert_rc "extract - -C: exit 0" 0
assert_eq "extract - -C: one file, named stdin" "fromstdin/stdin" "$(find fromstdin -type f)"
run_stdin "$DEFAULT" "$TROWEL" convert - -o info.json
assert_rc "convert -: exit 0" 0
assert_json_eq "convert -: the structure" info.json .format szdd
run_stdin "$DEFAULT" "$TROWEL" list "$RAIN" -
assert_rc "list FILE -: exit 0" 0
assert_contains "list FILE -: header for standard input" "$OUT" "==> (standard input) <=="
printf 'garbage' >garbage
run_stdin garbage "$TROWEL" info -
assert_rc "info - of garbage: exit 1" 1
assert_eq "info - of garbage: names standard input" \
    "trowel: (standard input): not a format trowel knows (see 'trowel formats')" "$ERR"
run_stdin "$DEFAULT" "$TROWEL" info - -
assert_usage_error "info - -"
run_stdin "$DEFAULT" "$TROWEL" verify - -
assert_usage_error "verify - -"
run_stdin "$DEFAULT" "$TROWEL" info --mem-limit 1000 -
assert_rc "standard input over the memory limit: exit 1" 1
assert_contains "standard input over the memory limit: says so" "$ERR" "trowel: (standard input): "

# ---- a terminal: binary refused unless --force, text shown
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
    on_tty() { # CMD...: runs it with a terminal as standard output and error
        script -qec "$(printf '%q ' "$@")" /dev/null >tty.out 2>&1 </dev/null
        RC=$?
        OUT=$(tr -d '\r' <tty.out)
    }
    refusal="trowel: (standard output): refusing to write binary data to a terminal (redirect it, or use --force)"
    on_tty "$TROWEL" extract --stdout "$DEFAULT"
    assert_rc "extract --stdout to a terminal: exit 1" 1
    assert_eq "extract --stdout to a terminal: refused" "$refusal" "$OUT"
    on_tty "$TROWEL" extract --stdout --force "$DEFAULT"
    assert_rc "extract --stdout --force to a terminal: exit 0" 0
    # The terminal turns each line feed into CR LF: compare without CRs.
    assert_eq "extract --stdout --force to a terminal: written" \
        "$("$TROWEL" extract --stdout "$DEFAULT" | tr -d '\r' | sha256sum)" "$(tr -d '\r' <tty.out | sha256sum)"
    on_tty "$TROWEL" extract --stdout "$TBAV"
    assert_rc "a text entry to a terminal: exit 0" 0
    assert_eq "a text entry to a terminal: shown" \
        "$("$TROWEL" extract --stdout "$TBAV" | tr -d '\r')" "$OUT"
    "$TROWEL" compress -c szdd -o raw.lzss both/DEFAULT.PAL
    on_tty "$TROWEL" decompress -c szdd raw.lzss
    assert_rc "decompress to a terminal: exit 1" 1
    assert_eq "decompress to a terminal: refused" "$refusal" "$OUT"
    on_tty "$TROWEL" compress -c szdd both/DEFAULT.PAL
    assert_rc "compress to a terminal: exit 1" 1
    assert_eq "compress to a terminal: refused" "$refusal" "$OUT"
    on_tty "$TROWEL" compress -c szdd -f both/DEFAULT.PAL
    assert_rc "compress -f to a terminal: exit 0" 0
    on_tty "$TROWEL" convert "$DEFAULT"
    assert_rc "convert to json on a terminal: exit 0" 0
    assert_contains "convert to json on a terminal: shown" "$OUT" '"format": "szdd"'
else
    skip "script(1) cannot make a terminal here: terminal refusal"
fi

finish
