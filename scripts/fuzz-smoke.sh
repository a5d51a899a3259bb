#!/usr/bin/env bash
# Runs every fuzz target in BUILD for SECONDS each, starting from its seed
# corpus in fuzz/corpus/<name minus fuzz_>/. New inputs go to a scratch
# folder, so the committed seeds stay as they are. Fails if any target finds
# a crash, leak or timeout.
set -euo pipefail
build=${1:-build-fuzz}
seconds=${2:-20}
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for bin in "$build"/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  seeds="$here/fuzz/corpus/${name#fuzz_}"
  mkdir -p "$scratch/$name"
  echo "== $name (${seconds}s)"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$scratch/$name-")
  corpora=("$scratch/$name")
  [ -d "$seeds" ] && corpora+=("$seeds")
  if ! "$bin" "${args[@]}" "${corpora[@]}" > "$scratch/$name.log" 2>&1; then
    echo "FAILED: $name"; tail -40 "$scratch/$name.log"; status=1
    ls "$scratch" | grep -- "$name-" | while read -r f; do
      mkdir -p "$here/fuzz/artifacts"; cp "$scratch/$f" "$here/fuzz/artifacts/"; done
  else
    grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "$scratch/$name.log" | tail -1
  fi
done
exit $status
