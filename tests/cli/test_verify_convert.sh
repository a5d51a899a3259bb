#!/usr/bin/env bash
# trowel verify and trowel convert.
. "${BASH_SOURCE%/*}/lib.sh"

DEFAULT="$SZDD_DIR/DEFAULT.PA_"

# ---- verify
run "$TROWEL" verify "$SZDD_DIR"/*_
assert_rc "verify the corpus: exit 0" 0
assert_eq "verify the corpus: one ok per file" 7 "$(printf '%s\n' "$OUT" | grep -c ': ok$')"
assert_contains "verify: FILE: ok" "$OUT" "$DEFAULT: ok"
assert_eq "verify the corpus: stderr quiet" "" "$ERR"

head -c 300 "$DEFAULT" >CUT.PA_
run "$TROWEL" verify "$DEFAULT" CUT.PA_ "$SZDD_DIR/RAIN.AN_"
assert_rc "verify with a bad file: exit 1" 1
assert_contains "verify with a bad file: good ones ok" "$OUT" "RAIN.AN_: ok"
assert_not_contains "verify with a bad file: bad one not ok" "$OUT" "CUT.PA_: ok"
assert_contains "verify with a bad file: problem reported" "$ERR" "trowel: CUT.PA_: CUT.PAL: "
assert_contains "verify with a bad file: count" "$ERR" "trowel: CUT.PA_: 1 problem found"
run "$TROWEL" verify -t szdd "$DEFAULT"
assert_rc "verify -t szdd" 0

# ---- convert
run "$TROWEL" convert "$DEFAULT"
assert_rc "convert to stdout: exit 0" 0
cp "$OUT_FILE" default.json
assert_json_valid "convert: JSON" default.json
assert_json_eq "convert: format" default.json .format szdd
assert_json_eq "convert: entries" default.json ".entries[0].name" DEFAULT.PAL

run "$TROWEL" convert "$DEFAULT" -o out.json
assert_rc "convert -o out.json" 0
assert_same_file "convert -o = stdout" default.json out.json
run "$TROWEL" convert "$DEFAULT" --to json -o -
assert_rc "convert --to json -o -" 0
assert_same_file "convert -o - = stdout" "$OUT_FILE" default.json
run "$TROWEL" convert "$DEFAULT" -o out.json
assert_rc "convert onto an existing OUT: exit 1" 1
assert_contains "convert onto an existing OUT: says so" "$ERR" "exists"
run "$TROWEL" convert "$DEFAULT" -o out.json --force
assert_rc "convert --force" 0
run "$TROWEL" convert "$DEFAULT" -o out.whatever
assert_rc "convert to an extension naming no target: a usage error" 2
assert_no_file "convert to an extension naming no target: nothing written" out.whatever
run "$TROWEL" convert "$DEFAULT" -o out.whatever --to json
assert_rc "convert --to json whatever OUT's extension" 0
assert_same_file "convert --to json whatever OUT's extension: json" default.json out.whatever
run "$TROWEL" convert "$DEFAULT" -O no=such -o opt.json
assert_usage_error "convert with an unknown -O"
assert_no_file "convert with an unknown -O: no OUT" opt.json

# A target some format has but this one lacks is unsupported (exit 1),
# one no format has is a usage error (exit 2).
other=$("$TROWEL" formats --target-ids | grep -vx json | head -n 1)
if [ -n "$other" ]; then
    run "$TROWEL" convert "$DEFAULT" --to "$other" -o x.out
    assert_rc "convert szdd to $other: exit 1" 1
else
    fail "formats --target-ids lists no target besides json (cine assets have png, wav)"
fi
run "$TROWEL" convert "$DEFAULT" --to nonsense
assert_usage_error "convert --to an unknown target"

finish
