#!/usr/bin/env bash
# scenes.image summaries in either precision (issue 17). Valve's builder
# computes msecs as `stop * 1000.0f + 0.5f`: most images were built with that
# evaluated in double, an L4D2-branch image in single precision. A scene
# ending at 2.9875 s (the float 2.98749995...) gives 2987 ms by the double
# rule and 2988 ms by the float rule. The expected values come from python3
# (exact double arithmetic, float rounding through struct), not from trowel.
# Checked: create -O summary=float|double writes each rule, info says which
# rule an image follows, verify accepts both and still catches a wrong value,
# a merge keeps the base's rule, the manifest carries it to a rebuild.
. "${BASH_SOURCE%/*}/lib.sh"

have_cmd python3 || skip_all "python3 is needed for the independent summary values"

# msecs by each rule for a time in seconds: "DOUBLE FLOAT".
rules() {
    python3 - "$1" <<'EOF'
import struct, sys
f32 = lambda x: struct.unpack('<f', struct.pack('<f', x))[0]
t = f32(float(sys.argv[1]))              # the event time as BVCD stores it
by_double = int(t * 1000 + 0.5)          # exact in double, then truncated
by_float = int(f32(f32(t * 1000) + 0.5)) # product, then sum, rounded to float
print(by_double, by_float)
EOF
}
read -r A_DOUBLE A_FLOAT <<<"$(rules 2.9875)"
read -r B_DOUBLE B_FLOAT <<<"$(rules 1.0875)"
assert_ne "the two rules differ at 2.9875 s (else this test proves nothing)" "$A_DOUBLE" "$A_FLOAT"
assert_ne "the two rules differ at 1.0875 s" "$B_DOUBLE" "$B_FLOAT"

scene() { # FILE END: one speech ending at END
    cat >"$1" <<EOF
// Choreo version 1
actor "Alyx"
{
  channel "audio"
  {
    event speak "line"
    {
      time 0.5 $2
      param "alyx.line"
    }
  }
}
EOF
}
mkdir -p game/scenes new/scenes
scene game/scenes/a.vcd 2.9875
scene new/scenes/b.vcd 1.0875

# msecs and (v3) lastspeech_msecs of the summary of entry SLOT.
summary_of() { # IMAGE SLOT
    local eo so
    eo=$(u32le "$1" 16)
    so=$(u32le "$1" $((eo + 16 * $2 + 12)))
    echo "$(u32le "$1" "$so") $(u32le "$1" $((so + 4)))"
}
# The slot of a scene by name (entries are sorted by CRC).
slot_of() { # IMAGE CRC
    local n eo i
    n=$(u32le "$1" 8)
    eo=$(u32le "$1" 16)
    for ((i = 0; i < n; i++)); do
        [ "$(printf '%08x' "$(u32le "$1" $((eo + 16 * i)))")" = "$2" ] && echo "$i" && return
    done
}
A_CRC=$(python3 -c 'import zlib; print("%08x" % zlib.crc32(b"scenes\\a.vcd"))')
B_CRC=$(python3 -c 'import zlib; print("%08x" % zlib.crc32(b"scenes\\b.vcd"))')

# ---- a fresh image: double unless asked for float
run "$TROWEL" create -t vsif -O version=3 -o double.image -C game scenes
assert_rc "create (default rule) exit" 0
assert_eq "default rule: msecs and lastspeech by the double rule" "$A_DOUBLE $A_DOUBLE" \
    "$(summary_of double.image 0)"
run "$TROWEL" create -t vsif -O version=3 -O summary=float -o float.image -C game scenes
assert_rc "create -O summary=float exit" 0
assert_eq "summary=float: msecs and lastspeech by the float rule" "$A_FLOAT $A_FLOAT" \
    "$(summary_of float.image 0)"
run "$TROWEL" create -t vsif -O summary=single -o bad.image -C game scenes
assert_usage_error "summary=single is a usage error"
assert_no_file "summary=single: no image left behind" bad.image

# ---- info says which rule an image follows, in text and JSON
run "$TROWEL" info float.image
assert_contains "info: float image" "$OUT" "summary_precision: float"
run "$TROWEL" info --json double.image
printf '%s' "$OUT" >double.json
assert_json_eq "info --json: double image" double.json .summary_precision double
run "$TROWEL" info --json "$TROWEL_CORPUS/valve/ez2/scenes/scenes.image"
printf '%s' "$OUT" >ez2.json
assert_json_eq "info --json: ez2 has no scene that tells the rules apart" ez2.json \
    .summary_precision either

# ---- verify accepts either rule, and still catches a wrong value
run "$TROWEL" verify float.image
assert_rc "verify: a float-rule image is clean" 0
assert_not_contains "verify: no false 'summary says' problem" "$ERR" "summary says"
run "$TROWEL" verify double.image
assert_rc "verify: a double-rule image is clean" 0
cp float.image wrong.image
so=$(u32le wrong.image $(($(u32le wrong.image 16) + 12)))
printf '%08x' $((A_FLOAT + 1)) | sed 's/\(..\)\(..\)\(..\)\(..\)/\\x\4\\x\3\\x\2\\x\1/' |
    xargs -0 printf | dd of=wrong.image bs=1 seek="$so" conv=notrunc 2>/dev/null
run "$TROWEL" verify wrong.image
assert_rc "verify: a value neither rule gives exits 1" 1
assert_contains "verify: names both values" "$ERR" \
    "summary says $((A_FLOAT + 1)) ms, the scene lasts $A_DOUBLE ms"

# ---- a merge keeps the base's rule (unless told otherwise)
run "$TROWEL" create -t vsif -O base=float.image -o merged.image -C new scenes
assert_rc "merge into the float image exit" 0
assert_eq "merge: the new scene is summarised by the base's float rule" "$B_FLOAT $B_FLOAT" \
    "$(summary_of merged.image "$(slot_of merged.image "$B_CRC")")"
assert_eq "merge: the kept scene is as it was" "$A_FLOAT $A_FLOAT" \
    "$(summary_of merged.image "$(slot_of merged.image "$A_CRC")")"
run "$TROWEL" info merged.image
assert_contains "merge: the result is still a float image" "$OUT" "summary_precision: float"
run "$TROWEL" create -t vsif -O base=double.image -o merged2.image -C new scenes
assert_eq "merge into a double image: double" "$B_DOUBLE $B_DOUBLE" \
    "$(summary_of merged2.image "$(slot_of merged2.image "$B_CRC")")"
run "$TROWEL" create -t vsif -O base=float.image -O summary=double -o merged3.image -C new scenes
assert_eq "merge with -O summary=double: the option wins" "$B_DOUBLE $B_DOUBLE" \
    "$(summary_of merged3.image "$(slot_of merged3.image "$B_CRC")")"
run "$TROWEL" info merged3.image
assert_contains "merge of both rules: info says mixed" "$OUT" "summary_precision: mixed"

# ---- the manifest carries the rule: extract + create --manifest, same bytes
run "$TROWEL" extract --manifest float.json -C out float.image
assert_rc "extract of the float image exit" 0
assert_json_eq "manifest: summary rule" float.json .summary float
run "$TROWEL" create --manifest float.json -C out -o float2.image
assert_rc "create --manifest exit" 0
assert_same_file "float image rebuilt from its manifest: same bytes" float.image float2.image
run "$TROWEL" extract --manifest double.json -C out2 double.image
assert_eq "manifest of a double image: no summary key (as before)" "" \
    "$(grep -c '"summary"' double.json | sed 's/^0$//')"

finish
