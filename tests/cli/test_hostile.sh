#!/usr/bin/env bash
# trowel on bad input: truncated, lying, garbage and empty files give a clear
# error naming the file, exit 1, quickly, and leave no file behind.
. "${BASH_SOURCE%/*}/lib.sh"

# Runs with a time limit where timeout(1) exists.
limited() {
    if command -v timeout >/dev/null 2>&1; then
        timeout 20 "$@"
    else
        "$@"
    fi
}

INTRO="$SZDD_DIR/INTRO.HL_"
DEFAULT="$SZDD_DIR/DEFAULT.PA_"

# ---- truncated copies of a real file
for n in 0 5 13 14 15 100 600 13169; do
    head -c "$n" "$INTRO" >"cut$n.HL_"
    rm -rf out && mkdir out
    run limited "$TROWEL" extract "cut$n.HL_" -C out
    assert_rc "truncated to $n bytes: exit 1" 1
    assert_contains "truncated to $n bytes: names the file" "$ERR" "trowel: cut$n.HL_: "
    assert_dir_empty "truncated to $n bytes: nothing left in the folder (dotfiles too)" out
    assert_eq "truncated to $n bytes: nothing on stdout" "" "$OUT"
done
run "$TROWEL" extract cut600.HL_ -C out
assert_contains "truncated: names the entry" "$ERR" "cut600.HL_: cut600.HLp: "
assert_contains "truncated: gives the offset" "$ERR" "(offset 0x"
run "$TROWEL" verify cut600.HL_
assert_rc "verify truncated: exit 1" 1
assert_contains "verify truncated: error" "$ERR" "trowel: cut600.HL_: cut600.HLp: "
assert_not_contains "verify truncated: no ok" "$OUT" "ok"
run "$TROWEL" info cut600.HL_
assert_rc "info on a truncated file: exit 1 (damaged)" 1
assert_contains "info on a truncated file still reads the header" "$OUT" "szdd"

# ---- a header declaring a huge length
{
    printf 'SZDD\210\360\047\063Al\377\377\377\177'
    head -c 200 "$INTRO" | tail -c 186
} >huge.PA_
rm -rf out && mkdir out
start=$(date +%s)
run limited "$TROWEL" extract huge.PA_ -C out
end=$(date +%s)
assert_rc "huge declared length: exit 1" 1
assert_contains "huge declared length: names the file" "$ERR" "trowel: huge.PA_: "
assert_dir_empty "huge declared length: nothing left" out
if [ $((end - start)) -le 5 ]; then pass; else fail "huge declared length: quick" "took $((end - start)) s"; fi
run limited "$TROWEL" decompress -c szdd --size 4G -o out/x huge.PA_
assert_rc "decompress --size 4G of a small stream: exit 1" 1
assert_dir_empty "decompress --size 4G: nothing left" out

# A length one byte longer than the stream gives: the decoder notices.
{
    head -c 10 "$DEFAULT"
    printf '\141\013\000\000' # 2913, one more than the real 2912
    tail -c +15 "$DEFAULT"
} >lie.PA_
rm -rf out && mkdir out
run "$TROWEL" extract lie.PA_ -C out
assert_rc "length off by one: exit 1" 1
assert_dir_empty "length off by one: nothing left" out
run "$TROWEL" verify lie.PA_
assert_rc "verify length off by one: exit 1" 1

# ---- garbage, empty, not a file
head -c 4096 "$SZDD_DIR/expanded.sha256" >garbage.bin
printf '\001\002\003\004\005\006\007\010' >>garbage.bin
: >empty.bin
for f in garbage.bin empty.bin; do
    run "$TROWEL" info "$f"
    assert_rc "info $f: exit 1" 1
    assert_contains "info $f: not a format trowel knows" "$ERR" "trowel: $f: not a format trowel knows"
    run "$TROWEL" list "$f"
    assert_rc "list $f: exit 1" 1
    run "$TROWEL" extract "$f" -C out
    assert_rc "extract $f: exit 1" 1
    run "$TROWEL" verify "$f"
    assert_rc "verify $f: exit 1" 1
    run "$TROWEL" convert "$f"
    assert_rc "convert $f: exit 1" 1
done
assert_dir_empty "garbage: nothing extracted" out
mkdir afolder
run "$TROWEL" list afolder
assert_rc "list on a folder: exit 1" 1
assert_contains "list on a folder: says so" "$ERR" "trowel: afolder: "
run "$TROWEL" info afolder
assert_rc "info on an empty folder: scanned, nothing in it, exit 0" 0
assert_eq "info on an empty folder: no line" "" "$OUT$ERR"
run "$TROWEL" info no-such-file
assert_rc "info on a missing file: exit 1" 1
assert_contains "info on a missing file: says so" "$ERR" "trowel: no-such-file: cannot open"

# ---- the memory limit is honoured and reported
rm -rf out && mkdir out
run "$TROWEL" extract --mem-limit 1K "$DEFAULT" -C out
assert_rc "extract under a 1 KiB limit: exit 1" 1
assert_contains "extract under a 1 KiB limit: says why" "$ERR" "memory limit"
assert_dir_empty "extract under a 1 KiB limit: nothing left" out

# ---- garbage fed to the raw decoders never crashes
for codec in szdd spz; do
    run limited "$TROWEL" decompress -c "$codec" -o out/g garbage.bin
    case "$RC" in
    0 | 1) pass ;;
    *) fail "decompress -c $codec garbage: exit 0 or 1" "got $RC: $ERR" ;;
    esac
    rm -f out/g
done

finish
