#!/usr/bin/env bash
# trowel formats: text, --json, and the bare id lists shell completion uses.
. "${BASH_SOURCE%/*}/lib.sh"

run "$TROWEL" formats
assert_rc "formats exit" 0
assert_contains "formats: heading" "$OUT" "Formats:"
assert_contains "formats: szdd row" "$OUT" "szdd "
assert_contains "formats: szdd capabilities" "$OUT" \
    "capabilities:    info list extract create verify convert manifest"
assert_contains "formats: convert targets" "$OUT" "convert to:      json"
assert_contains "formats: create options" "$OUT" "variant=normal|qbasic"
assert_contains "formats: codecs heading" "$OUT" "Codecs:"
assert_contains "formats: codec spz" "$OUT" "spz "
assert_eq "formats: stderr quiet" "" "$ERR"

run "$TROWEL" formats --json
assert_rc "formats --json exit" 0
cp "$OUT_FILE" formats.json
assert_json_valid "formats --json is JSON" formats.json
assert_json_eq "formats --json: first format id" formats.json ".formats[0].id" szdd
assert_json_eq "formats --json: family" formats.json ".formats[0].family" trespasser
assert_json_eq "formats --json: capabilities" formats.json ".formats[0].capabilities" \
    '["info","list","extract","create","verify","convert","manifest"]'
assert_json_eq "formats --json: json is a target" formats.json ".formats[0].convert_targets[0]" json
assert_json_eq "formats --json: extensions" formats.json ".formats[0].extensions[0]" "*_"
assert_json_eq "formats --json: codec szdd" formats.json ".codecs[0].id" szdd
assert_json_eq "formats --json: codec spz" formats.json ".codecs[1].id" spz
desc=$(json_get formats.json ".codecs[0].description")
assert_ne "formats --json: codec description" "" "$desc"

# Hidden lists for completion: bare ids, one a line.
run "$TROWEL" formats --ids
assert_rc "formats --ids exit" 0
assert_eq "formats --ids has szdd" yes "$(printf '%s\n' "$OUT" | grep -qx szdd && echo yes)"
assert_not_contains "formats --ids is bare" "$OUT" " "

run "$TROWEL" formats --codec-ids
# Every codec the text listing names, and nothing else, one per line.
assert_eq "formats --codec-ids has szdd" yes "$(printf '%s\n' "$OUT" | grep -qx szdd && echo yes)"
assert_eq "formats --codec-ids has spz" yes "$(printf '%s\n' "$OUT" | grep -qx spz && echo yes)"
assert_eq "formats --codec-ids: bare ids" "" "$(printf '%s\n' "$OUT" | grep -v '^[a-z0-9-]*$')"
n=0
while [ "$(json_get formats.json ".codecs[$n].id")" != MISSING ] && [ $n -lt 100 ]; do
    n=$((n + 1))
done
if [ "$(json_get formats.json ".codecs[0].id")" != SKIP ]; then
    assert_eq "formats --codec-ids: as many as --json lists" "$n" "$(printf '%s\n' "$OUT" | wc -l)"
else
    skip "no JSON tool: --codec-ids not compared with --json"
fi

run "$TROWEL" formats --target-ids
assert_rc "formats --target-ids exit" 0
assert_eq "formats --target-ids starts with json" json "$(printf '%s\n' "$OUT" | head -n 1)"

# Every id in the text output is in --ids and the other way round.
ids=$("$TROWEL" formats --ids | sort)
json_ids=$(json_get formats.json ".formats")
[ "$json_ids" = SKIP ] && skip "no JSON tool: --ids not compared with --json"
for id in $ids; do
    [ "$json_ids" = SKIP ] && break
    assert_contains "formats --json lists $id" "$json_ids" "\"id\":\"$id\""
done

# Reading and convert options (-O), from each format's one table.
run "$TROWEL" formats
assert_contains "formats: vsif reading option" "$OUT" \
    "    reading options: raw=0|1: 1: extract scenes as stored (BVCD, named .bvcd), not as text VCD (as --raw)"
assert_contains "formats: cine-sample convert option" "$OUT" \
    "    convert options: rate=N: samples per second written in the WAV header (default 8287) (wav)"
assert_json_eq "formats --json: read_options" formats.json \
    '.formats[] | select(.id == "vsif") | .read_options' \
    '[{"help":"1: extract scenes as stored (BVCD, named .bvcd), not as text VCD (as --raw)","key":"raw","value":"0|1"}]'
assert_json_eq "formats --json: convert_options with targets" formats.json \
    '[.formats[] | select(.id == "cine-font") | .convert_options[] | "\(.key):\(.targets | join(","))"]' \
    '["frame:png","palette:png","transparent:png","columns:png","columns:glyphmap"]'
assert_json_eq "formats --json: none for szdd" formats.json \
    '.formats[0] | [.read_options, .convert_options]' '[[],[]]'

finish
