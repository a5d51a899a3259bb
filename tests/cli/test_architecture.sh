#!/usr/bin/env bash
# Issue 21's shape checks (scripts/check-architecture.sh) on the tree and its
# build: layers, families, the I/O seam, errors that travel with the call,
# file lengths, include cycles and the exported symbols. Every check must
# find nothing (the baseline of allowed violations that the issue was worked
# through with is gone: it reached zero). The script reads the objects with
# nm and the sources with python3.
. "$(dirname "$0")/lib.sh"
have_cmd nm || skip_all "nm (binutils) is missing"
have_cmd python3 || skip_all "python3 is missing"
run "$TROWEL_SOURCE/scripts/check-architecture.sh" "$TROWEL_SOURCE" "$(dirname "$TROWEL")"
assert_rc "no violation of any check ($(printf '%s' "$OUT" | grep -v '^  ' | head -5))" 0
assert_contains "every check ran" "$OUT" "total          0"
assert_not_contains "no check skipped (objects and library found)" "$OUT" "not run"
finish
