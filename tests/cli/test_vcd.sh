#!/usr/bin/env bash
# trowel with choreography scenes: vcd (text) and bvcd (compiled, standalone).
. "${BASH_SOURCE%/*}/lib.sh"

V="$TROWEL_CORPUS/valve"
if [ ! -f "$V/srctools/sample.vcd" ]; then
    skip_all "no Valve corpus at $V"
fi

# ---- info on text
run "$TROWEL" info "$V/srctools/sample.vcd"
assert_rc "vcd info: exit 0" 0
assert_contains "vcd info: format" "$OUT" ": vcd"
assert_contains "vcd info: actors" "$OUT" "actors: 1"
assert_contains "vcd info: events" "$OUT" "events: 9"
assert_contains "vcd info: msecs" "$OUT" "msecs: 4407"
assert_contains "vcd info: sounds" "$OUT" "sounds: npc_gman.welcome, barn.ditchcar"

# ---- vcd -> bvcd: srctools' layout; the only differences from srctools'
# file are the source CRC (srctools wrote 0) and the gesture's missing
# sequence duration (Valve writes -1.0, srctools 0.0)
run "$TROWEL" convert --to bvcd "$V/srctools/sample.vcd" -o sample.bvcd
assert_rc "vcd -> bvcd: exit 0" 0
assert_eq "vcd -> bvcd: size of srctools' file" "$(wc -c <"$V/srctools/test_save_binary.bvcd")" "$(wc -c <sample.bvcd)"
diffs=$(cmp -l sample.bvcd "$V/srctools/test_save_binary.bvcd" | awk '{print $1}' | tr '\n' ' ')
assert_eq "vcd -> bvcd: differs from srctools only in CRC and sequence duration" "249 250 251 252 469 470 " "$diffs"

run "$TROWEL" info sample.bvcd
assert_rc "bvcd info: exit 0" 0
assert_contains "bvcd info: format" "$OUT" ": bvcd"
assert_contains "bvcd info: strings" "$OUT" "strings: 22"
assert_contains "bvcd info: msecs" "$OUT" "msecs: 4407"

# ---- bvcd -> vcd -> bvcd gives the same bytes
run "$TROWEL" convert --to vcd sample.bvcd -o back.vcd
assert_rc "bvcd -> vcd: exit 0" 0
assert_contains "bvcd -> vcd: keeps the CRC" "$(head -2 back.vcd)" "// bvcd source crc"
run "$TROWEL" convert --to bvcd back.vcd -o again.bvcd
assert_rc "vcd -> bvcd again: exit 0" 0
assert_same_file "bvcd -> vcd -> bvcd: same bytes" sample.bvcd again.bvcd

# ---- every corpus VCD: text -> binary -> text -> binary is stable
n=0
bad=0
while IFS= read -r -d '' f; do
    n=$((n + 1))
    rm -f a.bvcd b.vcd c.bvcd
    if ! "$TROWEL" convert --to bvcd "$f" -o a.bvcd 2>/dev/null ||
        ! "$TROWEL" convert --to vcd a.bvcd -o b.vcd 2>/dev/null ||
        ! "$TROWEL" convert --to bvcd b.vcd -o c.bvcd 2>/dev/null ||
        ! cmp -s a.bvcd c.bvcd; then
        bad=$((bad + 1))
        printf '    round trip differs: %s\n' "$f"
    fi
done < <(find "$V" -name '*.vcd' -print0)
assert_eq "corpus round trips: all exact" 0 "$bad"
assert_ne "corpus round trips: files seen" 0 "$n"

# ---- the whole scene as JSON
run "$TROWEL" convert --to json-full "$V/srctools/sample.vcd" -o sample.json
assert_rc "vcd -> json-full: exit 0" 0
assert_json_valid "vcd -> json-full: JSON" sample.json

# ---- hostile input: clear errors, exit 1
printf 'event speak "open\n{\n}\n' >bad.vcd
run "$TROWEL" convert --to bvcd bad.vcd -o bad.bvcd
assert_rc "unterminated quote: exit 1" 1
assert_contains "unterminated quote: says so" "$ERR" "unterminated"
assert_no_file "unterminated quote: no output" bad.bvcd
head -c 200 sample.bvcd >cut.bvcd
run "$TROWEL" info -t bvcd cut.bvcd
assert_rc "truncated bvcd: exit 1" 1
tail -c +$(($(grep -abo ']bvcd' sample.bvcd | cut -d: -f1) + 2)) sample.bvcd >bare.bvcd
run "$TROWEL" info bare.bvcd
assert_rc "bare bvcd: exit 1" 1
assert_contains "bare bvcd: says why" "$ERR" "scenes.image"

finish
