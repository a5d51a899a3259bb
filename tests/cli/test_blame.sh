#!/usr/bin/env bash
# Errors blame the right file and say what went wrong in words: a palette
# given with -O palette=FILE is named when it is missing or wrong; a memory
# limit refusal says what needed the memory, how much, how much was already
# in use, and the limit.
. "${BASH_SOURCE%/*}/lib.sh"

# assert_matches NAME TEXT REGEX (bash extended regular expression, whole text)
assert_matches() {
    if [[ "$2" =~ ^$3$ ]]; then pass; else fail "$1" "expected to match: $3" "actual: $2"; fi
}

# ---- -O palette=FILE
zeros() { head -c "$1" /dev/zero; }
{ printf '\x00\x08\x02\x70\x80'; zeros $((78 * 64 - 1)); } >TEXTE.DAT
run "$TROWEL" convert TEXTE.DAT --to png -O palette=missing.pal -o out.png
assert_rc "missing palette: exit 1" 1
assert_eq "missing palette: named, not the input's fault" \
    "trowel: TEXTE.DAT: palette=missing.pal: cannot open: No such file or directory" "$ERR"
assert_no_file "missing palette: no output" out.png
mkdir pal.d
run "$TROWEL" convert TEXTE.DAT --to png -O palette=pal.d -o out.png
assert_rc "a folder as palette: exit 1" 1
assert_eq "a folder as palette: named" "trowel: TEXTE.DAT: palette=pal.d: is a folder, not a file" "$ERR"
printf 'abc' >short.pal
run "$TROWEL" convert TEXTE.DAT --to png -O palette=short.pal -o out.png
assert_rc "not a palette: bad input, exit 1" 1
assert_eq "not a palette: named" \
    "trowel: TEXTE.DAT: palette=short.pal: not a palette (32 or 768 bytes) or a background holding one" "$ERR"
# A good palette still works (and the check above is not all there is).
{ printf '\x00\x00\x07\x00'; zeros 28; } >red.pal
run "$TROWEL" convert TEXTE.DAT --to png -O palette=red.pal -o out.png
assert_rc "a good palette: exit 0" 0
assert_file_exists "a good palette: output" out.png

# ---- --mem-limit: what, how much, in use, limit. What is already in use
# depends on small allocations made before; its shape is checked.
IN_USE='[0-9]+(\.[0-9])? (bytes|KiB)'
cp "$SZDD_DIR/DEFAULT.PA_" .
run "$TROWEL" extract --mem-limit 1K DEFAULT.PA_ -C lim
assert_rc "1 KiB limit: exit 1" 1
assert_matches "1 KiB limit: the input's buffer" "$ERR" \
    "trowel: DEFAULT\.PA_: over the memory limit: needs 256 KiB for the input file's read buffer, $IN_USE already in use, limit 1 KiB \(--mem-limit\)"
assert_no_file "1 KiB limit: nothing made" lim
run "$TROWEL" extract --mem-limit 300K DEFAULT.PA_ -C lim
assert_rc "300 KiB limit: exit 1" 1
assert_matches "300 KiB limit: the output's buffer, in the entry" "$ERR" \
    "trowel: DEFAULT\.PA_: DEFAULT\.PAL: over the memory limit: needs 256 KiB for the output file's buffer, 259\.[0-9] KiB already in use, limit 300 KiB \(--mem-limit\)"
assert_no_file "300 KiB limit: nothing made" lim
seq 1 100000 >big.txt
run "$TROWEL" compress -c bytekiller big.txt -o big.bk
assert_rc "compress big.txt" 0
run "$TROWEL" decompress -c bytekiller --mem-limit 600K big.bk -o big.out
assert_rc "decoder over the limit: exit 1" 1
assert_matches "decoder over the limit: what the codec needed" "$ERR" \
    "trowel: big\.bk: over the memory limit: needs 850 KiB for the packed stream and its output, 512\.[0-9] KiB already in use, limit 600 KiB \(--mem-limit\)"
assert_no_file "decoder over the limit: no output" big.out
run "$TROWEL" decompress -c bytekiller --mem-limit 2M big.bk -o big.out
assert_rc "decoder under the limit: exit 0" 0
assert_same_file "decoder under the limit: round trip" big.txt big.out

finish
