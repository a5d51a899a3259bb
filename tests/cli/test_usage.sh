#!/usr/bin/env bash
# trowel's command line: usage errors exit 2 with a message, --help on every
# verb and 'help VERB', --version.
. "${BASH_SOURCE%/*}/lib.sh"

VERBS="formats info list extract create verify convert compress decompress"
DEFAULT="$SZDD_DIR/DEFAULT.PA_"

# ---- --version, --help
run "$TROWEL" --version
assert_rc "--version exit" 0
assert_eq "--version text" "trowel 0.1.0" "$OUT"

run "$TROWEL" --help
assert_rc "--help exit" 0
for verb in $VERBS; do
    assert_contains "--help lists $verb" "$OUT" "  $verb "
done

run "$TROWEL" help
assert_rc "help exit" 0
assert_contains "help is the main help" "$OUT" "Commands:"

for verb in $VERBS; do
    run "$TROWEL" "$verb" --help
    assert_rc "$verb --help exit" 0
    assert_contains "$verb --help usage" "$OUT" "Usage: trowel $verb"
    assert_contains "$verb --help common options" "$OUT" "--mem-limit"
    assert_eq "$verb --help quiet stderr" "" "$ERR"
    help_text=$OUT
    run "$TROWEL" "$verb" -h
    assert_eq "$verb -h = --help" "$help_text" "$OUT"
    run "$TROWEL" help "$verb"
    assert_rc "help $verb exit" 0
    assert_eq "help $verb = $verb --help" "$help_text" "$OUT"
done

# --help wins over missing operands, wherever it is.
run "$TROWEL" extract --help
assert_rc "extract --help without operands" 0
run "$TROWEL" create -o x --help
assert_rc "create --help after options" 0

# ---- usage errors: exit 2 and a message
run "$TROWEL"
assert_usage_error "no command"

run "$TROWEL" frobnicate
assert_usage_error "unknown verb"
assert_contains "unknown verb named" "$ERR" "frobnicate"

run "$TROWEL" help frobnicate
assert_usage_error "help for an unknown verb"

run "$TROWEL" --frob
assert_usage_error "unknown option before the verb"

run "$TROWEL" list --frob "$DEFAULT"
assert_usage_error "unknown long option"
assert_contains "unknown long option named" "$ERR" "--frob"

run "$TROWEL" list -z "$DEFAULT"
assert_usage_error "unknown short option"
assert_contains "unknown short option named" "$ERR" "-z"

run "$TROWEL" list --json=yes "$DEFAULT"
assert_usage_error "value given to a flag"

run "$TROWEL" extract "$DEFAULT" -C
assert_usage_error "option value missing"
assert_contains "option value missing named" "$ERR" "-C"

run "$TROWEL" info
assert_usage_error "info without FILE"
run "$TROWEL" list
assert_usage_error "list without ARCHIVE"
run "$TROWEL" list - - </dev/null
assert_usage_error "list reading standard input twice"
assert_contains "list - -: says why" "$ERR" "trowel: list: standard input ('-') can be read only once"
run "$TROWEL" extract
assert_usage_error "extract without ARCHIVE"
run "$TROWEL" verify
assert_usage_error "verify without FILE"
run "$TROWEL" convert
assert_usage_error "convert without INPUT"
run "$TROWEL" formats extra
assert_usage_error "formats with an operand"

run "$TROWEL" info -t nosuchformat "$DEFAULT"
assert_usage_error "unknown format"
assert_contains "unknown format lists known ones" "$ERR" "szdd"

run "$TROWEL" create -t nosuchformat -o x.out "$DEFAULT"
assert_usage_error "create: unknown format"
assert_no_file "create: unknown format writes nothing" x.out

run "$TROWEL" create -o x.out "$DEFAULT"
assert_usage_error "create without -t or manifest"

run "$TROWEL" create -t szdd "$DEFAULT"
assert_usage_error "create without -o"

cp "$DEFAULT" in.PA_
run "$TROWEL" create -t szdd -o x.out -O nosuchkey=1 in.PA_
assert_usage_error "create: bad -O key"
assert_contains "bad -O key named" "$ERR" "nosuchkey"
assert_no_file "bad -O key writes nothing" x.out

run "$TROWEL" create -t szdd -o x.out -O variant=fancy in.PA_
assert_usage_error "create: bad -O value"

run "$TROWEL" compress -o x.out in.PA_
assert_usage_error "compress without -c"
run "$TROWEL" compress -c nosuchcodec in.PA_
assert_usage_error "unknown codec"
assert_contains "unknown codec lists codec ids" "$ERR" "szdd"
run "$TROWEL" decompress -c nosuchcodec in.PA_
assert_usage_error "decompress: unknown codec"
run "$TROWEL" decompress -c szdd --size lots in.PA_
assert_usage_error "decompress: bad --size"
run "$TROWEL" compress -c szdd --size 10 in.PA_
assert_usage_error "compress takes no --size"
run "$TROWEL" compress -c szdd a b
assert_usage_error "compress with two inputs"

run "$TROWEL" convert --to nosuchtarget "$DEFAULT"
assert_usage_error "convert: unknown target"

run "$TROWEL" info --mem-limit lots "$DEFAULT"
assert_usage_error "bad --mem-limit"
run "$TROWEL" info --mem-limit 12Q "$DEFAULT"
assert_usage_error "bad --mem-limit suffix"

run "$TROWEL" extract --names list.txt "$DEFAULT"
assert_usage_error "extract --names on a format without names"
assert_contains "--names message" "$ERR" "szdd does not take --names"

# ---- GNU-style parsing: any order, --opt=value, bundles, "--"
run "$TROWEL" list "$DEFAULT" -l
assert_rc "operand before option" 0
long_out=$OUT
run "$TROWEL" list -lq "$DEFAULT"
assert_eq "bundled short flags" "$long_out" "$OUT"
run "$TROWEL" list --format=szdd --long "$DEFAULT"
assert_eq "--opt=value" "$long_out" "$OUT"
run "$TROWEL" list -tszdd -l "$DEFAULT"
assert_eq "short option with attached value" "$long_out" "$OUT"
run "$TROWEL" info --mem-limit 64M "$DEFAULT"
assert_rc "--mem-limit with a suffix" 0

cp "$DEFAULT" ./-DASH.PA_
run "$TROWEL" list -- -DASH.PA_
assert_rc "-- ends options" 0
assert_eq "-- operand read" "-DASH.PAL" "$OUT"
run "$TROWEL" list -DASH.PA_
assert_usage_error "a dash operand without --"

finish
