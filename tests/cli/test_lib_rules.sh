#!/usr/bin/env bash
# lib.sh's own rules, so that a CLI test cannot pass without doing its job:
# each case is a small script sourcing lib.sh, run with and without
# TROWEL_REQUIRE_ALL=1, and its exit status is the one the rules give.
. "${BASH_SOURCE%/*}/lib.sh"

LIB="${BASH_SOURCE%/*}/lib.sh"
case "$LIB" in /*) ;; *) LIB="$OLDPWD/$LIB" ;; esac

# status BODY [REQUIRE_ALL]: the exit status of a script made of lib.sh
# and BODY.
status() {
    printf '. "%s"\n%s\n' "$LIB" "$1" >case.sh
    TROWEL_REQUIRE_ALL=${2:-0} bash case.sh >case.out 2>&1
    echo $?
}

assert_eq "a check that passes: 0" 0 "$(status 'assert_eq x 1 1; finish')"
assert_eq "a check that fails: 1" 1 "$(status 'assert_eq x 1 2; finish')"
assert_eq "a skip: 77" 77 "$(status 'skip why; finish')"
assert_eq "a skip under TROWEL_REQUIRE_ALL=1: 1" 1 "$(status 'skip why; finish' 1)"
assert_eq "no check at all: a skip (77)" 77 "$(status 'finish')"
assert_eq "no check at all under TROWEL_REQUIRE_ALL=1: 1" 1 "$(status 'finish' 1)"
assert_eq "exit 77 without finish: a skip (77)" 77 "$(status 'exit 77')"
assert_eq "exit 77 without finish under TROWEL_REQUIRE_ALL=1: 1" 1 "$(status 'exit 77' 1)"
assert_eq "exit 0 without finish: 1" 1 "$(status 'assert_eq x 1 1; exit 0')"
assert_eq "ending without finish: 1" 1 "$(status 'assert_eq x 1 1')"
assert_eq "a note that says it skipped: a skip" 77 \
    "$(status 'assert_eq x 1 1; note "no lz4: checks skipped"; finish')"
assert_eq "a note that says it skipped, TROWEL_REQUIRE_ALL=1: 1" 1 \
    "$(status 'assert_eq x 1 1; note "no lz4: checks skipped"; finish' 1)"
assert_eq "a plain note: no skip" 0 "$(status 'assert_eq x 1 1; note "fyi"; finish')"
assert_eq "assert_rc after run: 0" 0 "$(status 'run true; assert_rc t 0; finish')"
assert_eq "assert_rc of a failing run: 1" 1 "$(status 'run false; assert_rc t 0; finish')"
assert_eq "assert_rc with no run since the last: 1" 1 \
    "$(status 'run true; assert_rc t 0; false; assert_rc stale 0; finish')"
assert_contains "assert_rc with no run since the last: says so" "$(cat case.out)" \
    "assert_rc with no command run since the last one"
assert_eq "assert_usage_error after run: 0" 0 \
    "$(status 'run sh -c "echo trowel: x >&2; exit 2"; assert_usage_error u; finish')"

finish
