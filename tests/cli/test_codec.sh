#!/usr/bin/env bash
# trowel compress / decompress: raw codec streams through files and pipes.
. "${BASH_SOURCE%/*}/lib.sh"

# The raw LZSS stream of a corpus file is everything after its 14-byte header.
for f in "$SZDD_DIR"/*_; do
    base=$(basename "$f")
    want=$(expanded_sha256 "$base")
    size=$(u32le "$f" 10)
    tail -c +15 "$f" >"$base.lz"
    run "$TROWEL" decompress -c szdd -o "$base.out" "$base.lz"
    assert_rc "decompress $base exit" 0
    assert_file_sha256 "decompress $base" "$base.out" "$want"
    run "$TROWEL" decompress -c szdd --size "$size" -o "$base.sized" "$base.lz"
    assert_rc "decompress --size $base exit" 0
    assert_file_sha256 "decompress --size $base" "$base.sized" "$want"

    # Through files ...
    run "$TROWEL" compress -c szdd -o "$base.re" "$base.out"
    assert_rc "compress $base exit" 0
    run "$TROWEL" decompress -c szdd -o "$base.back" "$base.re"
    assert_file_sha256 "compress/decompress $base through files" "$base.back" "$want"
    # ... and through pipes, implicit and explicit stdin/stdout.
    "$TROWEL" compress -c szdd <"$base.out" | "$TROWEL" decompress -c szdd >"$base.pipe"
    assert_file_sha256 "compress | decompress $base" "$base.pipe" "$want"
    "$TROWEL" compress -c szdd -o - - <"$base.out" | "$TROWEL" decompress -c szdd - -o - >"$base.dash"
    assert_file_sha256 "compress - | decompress - $base" "$base.dash" "$want"
done

DEF=DEFAULT.PA_
# A wrong --size is an error, and leaves no OUT behind.
mkdir wrong
run "$TROWEL" decompress -c szdd --size 100 -o wrong/out "$DEF.lz"
assert_rc "decompress with a wrong --size: exit 1" 1
assert_contains "decompress with a wrong --size: names the input" "$ERR" "trowel: $DEF.lz: "
assert_dir_empty "decompress with a wrong --size: nothing left" wrong
run "$TROWEL" decompress -c szdd --size 1M -o wrong/out "$DEF.lz"
assert_rc "decompress with too large a --size: exit 1" 1
assert_dir_empty "decompress with too large a --size: nothing left" wrong

# The spz codec round trips too.
run "$TROWEL" compress -c spz -o def.spz "$DEF.out"
assert_rc "compress -c spz" 0
run "$TROWEL" decompress -c spz -o def.spz.out def.spz
assert_same_file "spz round trip" "$DEF.out" def.spz.out
run "$TROWEL" decompress -c szdd -o def.cross def.spz
assert_ne "szdd does not decode spz the same" "$(sha256_of "$DEF.out")" "$(sha256_of def.cross 2>/dev/null)"

# Empty input.
: >empty
run "$TROWEL" compress -c szdd -o empty.lz empty
assert_rc "compress an empty file" 0
run "$TROWEL" decompress -c szdd -o empty.out empty.lz
assert_rc "decompress it" 0
assert_eq "empty round trip" 0 "$(wc -c <empty.out | tr -d ' ')"

# Existing OUT: refused without --force.
printf 'precious\n' >kept
run "$TROWEL" compress -c szdd -o kept "$DEF.out"
assert_rc "compress onto an existing OUT: exit 1" 1
assert_eq "compress onto an existing OUT: kept" precious "$(cat kept)"
run "$TROWEL" compress -c szdd -o kept --force "$DEF.out"
assert_rc "compress --force" 0
assert_same_file "compress --force wrote" "$DEF.re" kept

# OUT is never IN.
cp "$DEF.out" same
run "$TROWEL" compress -c szdd -o same --force same
assert_rc "compress onto its input: exit 1" 1
assert_same_file "compress onto its input: intact" "$DEF.out" same

# Standard input is read within the memory limit, and says so.
run bash -c 'head -c 5000 "$1" | "$2" compress -c szdd --mem-limit 1K' _ "$DEF.out" "$TROWEL"
assert_rc "stdin over --mem-limit: exit 1" 1
assert_contains "stdin over --mem-limit: says so" "$ERR" "(standard input): larger than the memory limit"
run bash -c 'head -c 1048576 /dev/zero | "$1" compress -c szdd --mem-limit 32M -o lim.lz' _ "$TROWEL"
assert_rc "stdin under --mem-limit: accepted" 0
run bash -c 'head -c 33554433 /dev/zero | "$1" compress -c szdd --mem-limit 32M -o lim2.lz' _ "$TROWEL"
assert_rc "stdin one byte over --mem-limit: exit 1" 1
assert_no_file "stdin over --mem-limit: no OUT" lim2.lz

# Missing input.
run "$TROWEL" compress -c szdd -o x.lz no-such-file
assert_rc "missing input: exit 1" 1
assert_contains "missing input: named" "$ERR" "trowel: no-such-file: cannot open"
assert_no_file "missing input: no OUT" x.lz

# The progress bar: on a terminal (util-linux script(1) makes one) it is
# drawn and then cleared; with -q, or off a terminal, nothing.
head -c 32000000 /dev/urandom >big.bin 2>/dev/null || head -c 32000000 /dev/zero >big.bin
run "$TROWEL" compress -c szdd -o big.lz big.bin
assert_eq "no progress bar off a terminal" "" "$ERR"
if script --version 2>/dev/null | grep -q util-linux; then
    script -qc "'$TROWEL' compress -c szdd -o big2.lz big.bin" /dev/null >tty.txt 2>&1
    assert_contains "progress bar on a terminal" "$(tr '\r' '\n' <tty.txt)" "big.bin ["
    assert_eq "progress bar cleared at the end" " " "$(tr '\r' '\n' <tty.txt | tail -n 1 | tr -s ' ' | tr -d '\n')"
    script -qc "'$TROWEL' compress -q -c szdd -o big3.lz big.bin" /dev/null >tty-q.txt 2>&1
    assert_eq "no progress bar with -q" "" "$(tr -d '\r\n' <tty-q.txt)"
    assert_same_file "progress does not change the output" big.lz big2.lz
else
    skip "no util-linux script(1): progress bar on a terminal"
fi

finish
