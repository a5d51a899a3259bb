#!/usr/bin/env bash
# The ASM JSON form streams both ways (src/format/volition/asm_json.c):
# a generated ASM of 10,000 primitives goes to JSON and back byte for
# byte, with "version" moved to the end of its object too; the reader's
# memory is under --mem-limit (a limit that holds the text but not what
# reading it needs fails with the limit's message and writes nothing; a
# fitting one builds the file); broken JSON is refused naming the offset,
# a bad or doubled field naming the field.
. "${BASH_SOURCE%/*}/lib.sh"

have_cmd python3 || skip_all "python3 is needed"
have_cmd jq || skip_all "jq is needed"

# ---- 100 containers x 100 primitives (v12), to JSON and back.
python3 "$TROWEL_SOURCE/bench/gen_asm.py" gen.json 100 100
run "$TROWEL" create -t asm --manifest gen.json -o gen.asm_pc
assert_rc "create from the generated JSON" 0
run "$TROWEL" convert --to json gen.asm_pc -o a.json
assert_rc "convert to JSON" 0
assert_json_eq "JSON: primitives" a.json '[.asm.containers[].primitives | length] | add' 10000
assert_json_eq "JSON: sizes" a.json '.asm.containers[99].sizes | length' 200
run "$TROWEL" create --manifest a.json -o b.asm_pc
assert_rc "create from its JSON" 0
assert_same_file "JSON -> ASM: same bytes" gen.asm_pc b.asm_pc

# "version" after the fields that depend on it: read ahead for it.
jq '.asm = (.asm | del(.version)) + {version: .asm.version}' a.json >late.json
assert_eq "late.json: version last" "version" "$(jq -r '.asm | keys_unsorted | last' late.json)"
run "$TROWEL" create --manifest late.json -o late.asm_pc
assert_rc "version last: create" 0
assert_same_file "version last: same bytes" gen.asm_pc late.asm_pc

# ---- the memory limit
run "$TROWEL" create --manifest a.json -o small.asm_pc --mem-limit 1M
assert_rc "a JSON larger than the limit: exit 1" 1
assert_contains "a JSON larger than the limit: says so" "$ERR" "larger than the memory limit"
assert_no_file "a JSON larger than the limit: nothing written" small.asm_pc

# One container with 1.5 MiB of aux data: 3 MiB of hex digits, which the
# reader holds while it decodes them (and the bytes they give).
python3 - <<'PY'
import json
aux = bytes((i * 7) & 255 for i in range(3 << 19)).hex()
doc = {"format": "asm", "asm": {"version": 12, "allocators": [], "primitive_types": [],
       "container_types": [], "containers": [{"name": "big", "type": 6, "flags": 0,
       "base_offset": 0, "compression": 0, "stub_parent": "", "aux_data": aux,
       "read_size": 0, "sizes": [], "primitives": []}]}}
open("aux.json", "w").write(json.dumps(doc))
PY
run "$TROWEL" create --manifest aux.json -o aux.asm_pc --mem-limit 4M
assert_rc "a JSON whose reading exceeds the limit: exit 1" 1
assert_contains "over the limit: the limit's message" "$ERR" "over the memory limit"
assert_contains "over the limit: names the option" "$ERR" "(--mem-limit)"
assert_no_file "over the limit: nothing written" aux.asm_pc
run "$TROWEL" create --manifest aux.json -o aux.asm_pc --mem-limit 24M
assert_rc "a fitting limit: create" 0
assert_eq "a fitting limit: 8 + 12 + 1.5 MiB + 25 bytes" $((20 + (3 << 19) + 25)) "$(stat -c %s aux.asm_pc)"
run "$TROWEL" convert --to json aux.asm_pc -o aux2.json --mem-limit 24M
assert_rc "a fitting limit: back to JSON" 0
assert_eq "a fitting limit: the same aux data" "$(jq -r '.asm.containers[0].aux_data' aux.json | sha256sum)" \
    "$(jq -r '.asm.containers[0].aux_data' aux2.json | sha256sum)"

# ---- broken JSON: the offset; bad fields: the field
head -n 1000 a.json >cut.json
run "$TROWEL" create -t asm --manifest cut.json -o bad.asm_pc
assert_rc "JSON cut short: bad input, exit 1" 1
assert_contains "JSON cut short: the offset" "$ERR" \
    "asm JSON: not valid JSON at offset $(stat -c %s cut.json): the rest of the document (it ends early)"
assert_no_file "JSON cut short: nothing written" bad.asm_pc
sed '0,/"type": 6,/s//"type": 6,,/' a.json >comma.json
run "$TROWEL" create --manifest comma.json -o bad.asm_pc
assert_rc "a doubled comma: bad input, exit 1" 1
assert_contains "a doubled comma: names it" "$ERR" "asm JSON: not valid JSON at offset"
assert_contains "a doubled comma: what was expected" "$ERR" ": a key"
jq 'del(.asm.containers[3].primitives[7].gpu_size)' a.json >missing.json
run "$TROWEL" create --manifest missing.json -o bad.asm_pc
assert_rc "a missing field: bad input, exit 1" 1
assert_contains "a missing field: names it" "$ERR" \
    "asm JSON: containers[3].primitives[7].gpu_size is missing or not a whole number"
jq '.asm.containers[2].type = "6"' a.json >string.json
run "$TROWEL" create --manifest string.json -o bad.asm_pc
assert_contains "a string for a number: names it" "$ERR" \
    "asm JSON: containers[2].type is missing or not a whole number"
sed '0,/"read_size": \([0-9]*\),/s//"read_size": \1, "read_size": \1,/' a.json >twice.json
run "$TROWEL" create --manifest twice.json -o bad.asm_pc
assert_rc "a field given twice: bad input, exit 1" 1
assert_contains "a field given twice: names it" "$ERR" "asm JSON: containers[0].read_size is given twice"
jq '.asm.version = 7' a.json >version.json
run "$TROWEL" create --manifest version.json -o bad.asm_pc
assert_contains "an unknown version" "$ERR" "asm JSON: version must be 5, 11 or 12"
jq 'del(.asm)' a.json >noasm.json
run "$TROWEL" create --manifest noasm.json -o bad.asm_pc
assert_rc "no asm object: bad input, exit 1" 1
assert_contains "no asm object: says what to give" "$ERR" "an ASM is built from its JSON"
assert_no_file "bad JSON: nothing written" bad.asm_pc

finish
