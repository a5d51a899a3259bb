#!/usr/bin/env bash
# Runs every unit test binary in BUILD under valgrind's memcheck: any
# invalid read or write, use of uninitialised memory, or definite leak fails
# the run. (The CLI is covered by the ASan/UBSan build of the whole suite.)
set -uo pipefail
build=${1:-build}
status=0
for t in "$build"/test_*; do
  [ -x "$t" ] || continue
  log=$(mktemp)
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    "$t" >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] || [ $rc -eq 77 ]; then   # 77: clean, some case skipped (see test.h)
    echo "valgrind clean: $(basename "$t") ($(tail -1 "$log"))"
  else
    echo "valgrind FAILED: $(basename "$t")"; tail -60 "$log"; status=1
  fi
  rm -f "$log"
done
exit $status
