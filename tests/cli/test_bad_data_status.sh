#!/usr/bin/env bash
# Bad data exits 1, never 2: 2 is for a command line that is wrong whatever
# the files hold. Each case here was a usage error (2) once: an option value
# that is well formed but names something the input lacks, or a source or
# manifest whose contents break the format's rules. The usage errors next to
# them stay 2.
. "${BASH_SOURCE%/*}/lib.sh"

C="$TROWEL_CORPUS"
OQ="$C/scumm/openquest"
EZ2="$C/valve/ez2/scenes"
[ -f "$OQ/tentacle.000" ] && [ -f "$EZ2/scenes.image" ] || skip_all "corpus absent"

# ---- an option naming what the input does not hold
run "$TROWEL" convert "$OQ/tentacle.000" --to png -O costume=99 -o none.png
assert_rc "costume=99 on a game with fewer costumes: exit 1" 1
assert_eq "costume=99: says so" \
    "trowel: $OQ/tentacle.000: no costume number 99 in this game (see trowel list)" "$ERR"
assert_no_file "costume=99: nothing written" none.png
run "$TROWEL" convert "$OQ/tentacle.000" --to png -O costume=abc -o none.png
assert_rc "costume=abc (not a number whatever the game): still a usage error" 2

# ---- a frame or colour past what the picture holds
{ printf 'SET\x00\x00\x01'; printf '\x00\x00\x00\x00\x00\x08\x00\x01\x00\x04\x00\x00\x00\x00\x00\x00'
  printf '\x80'; head -c 7 /dev/zero; } >ROBOT.SET
run "$TROWEL" convert ROBOT.SET -o r.png -O frame=99
assert_rc "frame=99 of a one-frame picture: exit 1" 1
assert_eq "frame=99: says how many there are" "trowel: ROBOT.SET: frame=99: this file has 1 frame (0 to 0)" "$ERR"
run "$TROWEL" convert ROBOT.SET -o r.png -O transparent=300
assert_rc "transparent=300 of 16 colours: exit 1" 1
run "$TROWEL" convert ROBOT.SET -o r.png -O frame=x
assert_rc "frame=x (no number whatever the file): still a usage error" 2
assert_no_file "no picture left by any of them" r.png

# ---- an option naming a file whose contents are wrong
printf 'abcde' >bad.pal
run "$TROWEL" convert "$OQ/cube.cost" --to png -O palette=bad.pal -o none.png
assert_rc "a 5-byte palette file: exit 1" 1
assert_contains "a 5-byte palette file: says why" "$ERR" "palette=bad.pal: not a palette"
assert_no_file "a 5-byte palette file: nothing written" none.png

# ---- sources whose contents the format cannot hold
mkdir s
cp "$EZ2/office_wake.vcd" s/office_wake.vcd
cp "$EZ2/office_wake.vcd" s/OFFICE_WAKE.vcd
run "$TROWEL" create -t vsif -o dup.image -C s office_wake.vcd OFFICE_WAKE.vcd
assert_rc "two scenes with one name hash: exit 1" 1
assert_contains "two scenes with one name hash: says so" "$ERR" "another source has the same scene name"
assert_no_file "two scenes with one name hash: nothing written" dup.image

# ---- a manifest whose contents are wrong
run "$TROWEL" extract -q --manifest m.json -C x "$EZ2/scenes.image"
assert_rc "extract with a manifest" 0
if have_cmd jq; then
    jq '.version = 4' m.json >m4.json
    run "$TROWEL" create --manifest m4.json -C x -o v4.image
    assert_rc "a manifest with version 4: exit 1" 1
    assert_eq "a manifest with version 4: says so" \
        "trowel: v4.image: the manifest's version 4 is not 2 or 3" "$ERR"
    assert_no_file "a manifest with version 4: nothing written" v4.image
else
    skip "jq absent: manifest version check"
fi

# ---- usage errors stay 2
run "$TROWEL" convert "$OQ/tentacle.000" --to png -O nosuchkey=1 -o none.png
assert_rc "an unknown -O key: 2" 2
run "$TROWEL" create -t vsif -o x.image -O compress=maybe -C s office_wake.vcd
assert_rc "a value outside the option's choices: 2" 2

finish
