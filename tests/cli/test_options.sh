#!/usr/bin/env bash
# -O options are checked once, by the library, against each format's table
# of options: a bad value is a usage error (exit 2) that names the option,
# the format and what the option takes, and nothing is written; an unknown
# key lists the valid ones; the last of a key given twice counts. The help
# (formats --json) lists create options from the same rows.
. "${BASH_SOURCE%/*}/lib.sh"

printf 'hello, hello' >in.txt

# bad_value NAME EXPECTED-MESSAGE OUTPUT COMMAND...: exit 2, the whole
# message, no output file.
bad_value() {
    local name=$1 message=$2 output=$3
    shift 3
    run "$@"
    assert_rc "$name: exit 2" 2
    assert_eq "$name: message" "trowel: $message" "$ERR"
    assert_no_file "$name: nothing written" "$output"
}

bad_value "szdd variant= not a choice" \
    "x.out: option 'variant=fancy' for creating szdd: variant= takes one of normal|qbasic" \
    x.out "$TROWEL" create -t szdd -o x.out -O variant=fancy in.txt
bad_value "cine-volcnf disk= out of range" \
    "VOL.CNF: option 'disk=40000' for creating cine-volcnf: disk= takes a number from 0 to 32767" \
    VOL.CNF "$TROWEL" create -t cine-volcnf -o VOL.CNF -O disk=40000 in.txt
bad_value "cine-volcnf disk= not a number" \
    "VOL.CNF: option 'disk=1x' for creating cine-volcnf: disk= takes a number from 0 to 32767" \
    VOL.CNF "$TROWEL" create -t cine-volcnf -o VOL.CNF -O disk=1x in.txt
bad_value "vpp compressed= not 0 or 1" \
    "a.vpp_pc: option 'compressed=2' for creating vpp: compressed= takes 0 or 1" \
    a.vpp_pc "$TROWEL" create -t vpp -o a.vpp_pc -O compressed=2 in.txt
bad_value "vpp level= out of range" \
    "a.vpp_pc: option 'level=10' for creating vpp: level= takes a number from 0 to 9" \
    a.vpp_pc "$TROWEL" create -t vpp -o a.vpp_pc -O level=10 in.txt
bad_value "szdd: an unknown key lists the valid ones" \
    "x.out: unknown option 'level' for creating szdd; valid: variant, missing" \
    x.out "$TROWEL" create -t szdd -o x.out -O level=1 in.txt
bad_value "groff takes no create options" \
    "g.grf: unknown option 'level' for groff: it takes no create options" \
    g.grf "$TROWEL" create -t groff -o g.grf -O level=1 in.txt

# a convert option, checked the same way
head -c 64 /dev/zero >s.raw
bad_value "cine-sample rate= out of range" \
    "s.raw: option 'rate=0' for cine-sample to wav: rate= takes a number from 1 to 1000000" \
    s.wav "$TROWEL" convert -t cine-sample s.raw -o s.wav -O rate=0
run "$TROWEL" convert -t cine-sample s.raw -o s.wav -O rate=11025
assert_rc "rate=11025: converts" 0
# the WAV header's sample rate (bytes 24..27, little-endian)
assert_eq "rate=11025: in the header" "11025" "$(od -An -tu4 -j24 -N4 s.wav | tr -d ' ')"
run "$TROWEL" convert -t cine-sample s.raw -o d.wav
assert_eq "no rate=: the row's default 8287" "8287" "$(od -An -tu4 -j24 -N4 d.wav | tr -d ' ')"

# a key given twice: both checked, the last counts
run "$TROWEL" create -t szdd -o q.out -O variant=normal -O variant=qbasic in.txt
assert_rc "variant twice: ok" 0
assert_eq "variant twice: the last (qbasic) counts" "535a2088f02733d1" "$(head -c 8 q.out | od -An -tx1 | tr -d ' \n')"
run "$TROWEL" create -t szdd -o r.out -O variant=qbasic -O variant=odd in.txt
assert_usage_error "variant twice, the last bad"
assert_no_file "variant twice, the last bad: nothing written" r.out

# the help is made from the same rows
if have_cmd jq; then
    "$TROWEL" formats --json >formats.json || exit 1
    assert_eq "formats --json: cine-volcnf's create options from its rows" \
        "names=11|13 compress=0|1 disk=N" \
        "$(jq -r '.formats[] | select(.id == "cine-volcnf") | .create_options[] | split(":")[0]' formats.json | tr '\n' ' ' | sed 's/ $//')"
else
    skip "jq is needed to read formats --json"
fi

# REAL rows (a decimal number in a range), and a number that may be a word
head -c $((37 * 21 * 2)) /dev/zero >flat.raw
bad_value "tres-wtd scale= not a decimal number" \
    "t.wtd: option 'scale=1,5' for creating tres-wtd: scale= takes a decimal number from 0 to 1000000" \
    t.wtd "$TROWEL" create -t tres-wtd -o t.wtd -O width=37 -O height=21 -O scale=1,5 flat.raw
bad_value "tres-wtd spacing=0 (the mapping divides by it)" \
    "t.wtd: spacing= takes a positive number of metres, not '0'" \
    t.wtd "$TROWEL" create -t tres-wtd -o t.wtd -O width=37 -O height=21 -O spacing=0 flat.raw
run "$TROWEL" create -t tres-wtd -o t.wtd -O width=37 -O height=21 -O scale=2.5e-1 flat.raw
assert_rc "tres-wtd scale=2.5e-1 is a number" 0
run "$TROWEL" info --json t.wtd
assert_contains "scale=2.5e-1 reaches the mapping" "$OUT" "0.25"
{ printf 'SET\x00\x00\x01'; printf '\x00\x00\x00\x00\x00\x08\x00\x01\x00\x04\x00\x00\x00\x00\x00\x00'
  printf '\x80'; head -c 7 /dev/zero; } >ROBOT.SET
run "$TROWEL" convert ROBOT.SET -o none.png -O transparent=none
assert_rc "cine-set transparent=none is allowed beside the numbers" 0
bad_value "cine-set transparent= neither a number nor none" \
    "ROBOT.SET: option 'transparent=nothing' for cine-set to png: transparent= takes a number from 0 up, or none" \
    bad.png "$TROWEL" convert ROBOT.SET -o bad.png -O transparent=nothing

finish
