#!/usr/bin/env bash
# Issue 21's shape checks (scripts/check-architecture.sh) on the tree and its
# build: no new violation of any check, and none of the listed ones left
# unfixed-but-listed (the baseline, tests/data/architecture-baseline.txt,
# can only shrink). The script reads the objects with nm and the sources
# with python3.
. "$(dirname "$0")/lib.sh"
have_cmd nm || skip_all "nm (binutils) is missing"
have_cmd python3 || skip_all "python3 is missing"
run "$TROWEL_SOURCE/scripts/check-architecture.sh" \
    --baseline "$TROWEL_SOURCE/tests/data/architecture-baseline.txt" \
    "$TROWEL_SOURCE" "$(dirname "$TROWEL")"
assert_rc "no violation outside the baseline, none of it stale ($(printf '%s' "$OUT" | grep -v '^  ' | tail -5))" 0
finish
