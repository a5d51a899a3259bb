#!/usr/bin/env bash
# Runs every unit test binary in BUILD under valgrind's memcheck: any
# invalid read or write, use of uninitialised memory, or definite leak fails
# the run. (The CLI is covered by the ASan/UBSan build of the whole suite.)
# Tests run JOBS at a time (default: one per CPU); results print in name order.
set -uo pipefail
build=${1:-build}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

check() { # TEST: writes LOGS/NAME.log and LOGS/NAME.rc
  local name
  name=$(basename "$1")
  valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    "$1" >"$logs/$name.log" 2>&1
  echo $? >"$logs/$name.rc"
}

tests=()
for t in "$build"/test_*; do
  [ -x "$t" ] && tests+=("$t")
done
for t in "${tests[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  check "$t" &
done
wait

status=0
for t in "${tests[@]}"; do
  name=$(basename "$t")
  rc=$(cat "$logs/$name.rc")
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then   # 77: clean, some case skipped (see test.h)
    echo "valgrind clean: $name ($(tail -1 "$logs/$name.log"))"
  else
    echo "valgrind FAILED: $name"; tail -60 "$logs/$name.log"; status=1
  fi
done
exit $status
