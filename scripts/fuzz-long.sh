#!/usr/bin/env bash
# The nightly-style campaign: every fuzz target in BUILD for SECONDS each
# (default 600), JOBS targets at a time (default 1: each target gets a core
# to itself). Unlike fuzz-smoke.sh the inputs each target finds are kept
# between runs in BUILD/long-corpus/<name>/, so every campaign starts where
# the last one stopped. An input that fails (crash, leak, timeout, a broken
# promise) is kept twice: in fuzz/artifacts/ (ignored by git) to reproduce
# it, and in fuzz/corpus/<name>/ as a seed, so that the short runs
# (`make fuzz`) fail on it until it is fixed and then keep checking it;
# commit it with the fix. Exits 1 if any target failed.
set -euo pipefail
build=${1:-build-fuzz}
seconds=${2:-600}
jobs=${JOBS:-1}
here=$(cd "$(dirname "$0")/.." && pwd)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

fuzz_one() { # BIN: writes LOGS/NAME.log and LOGS/NAME.rc
  local bin=$1 name seeds kept rc=0
  name=$(basename "$bin")
  seeds="$here/fuzz/corpus/${name#fuzz_}"
  kept="$build/long-corpus/$name"
  mkdir -p "$kept"
  local corpora=("$kept")
  [ -d "$seeds" ] && corpora+=("$seeds")
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$logs/$name-" "${corpora[@]}" >"$logs/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$logs/$name.rc"
}

bins=()
for bin in "$build"/fuzz_*; do
  [ -x "$bin" ] && [ -f "$bin" ] && bins+=("$bin")
done
[ ${#bins[@]} -gt 0 ] || { echo "no fuzz targets in $build" >&2; exit 1; }
for bin in "${bins[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$bin" &
done
wait

status=0
for bin in "${bins[@]}"; do
  name=$(basename "$bin")
  echo "== $name (${seconds}s, $(find "$build/long-corpus/$name" -type f | wc -l) inputs kept)"
  if [ "$(cat "$logs/$name.rc")" != 0 ]; then
    echo "FAILED: $name"; tail -40 "$logs/$name.log"; status=1
    for f in "$logs/$name"-*; do
      [ -e "$f" ] || continue
      mkdir -p "$here/fuzz/artifacts" "$here/fuzz/corpus/${name#fuzz_}"
      cp "$f" "$here/fuzz/artifacts/"
      cp "$f" "$here/fuzz/corpus/${name#fuzz_}/"
      echo "kept: fuzz/artifacts/$(basename "$f") and fuzz/corpus/${name#fuzz_}/$(basename "$f")"
    done
  else
    grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "$logs/$name.log" | tail -1
  fi
done
exit $status
