#!/usr/bin/env bash
# Runs every fuzz target in BUILD for SECONDS each, starting from its seed
# corpus in fuzz/corpus/<name minus fuzz_>/, JOBS targets at a time (default:
# one per CPU; results print in name order). New inputs go to a scratch
# folder, so the committed seeds stay as they are. Fails if any target finds
# a crash, leak or timeout; its inputs are kept in fuzz/artifacts/.
set -euo pipefail
build=${1:-build-fuzz}
seconds=${2:-20}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

fuzz_one() { # BIN: writes SCRATCH/NAME.log and SCRATCH/NAME.rc
  local bin=$1 name seeds rc=0
  name=$(basename "$bin")
  seeds="$here/fuzz/corpus/${name#fuzz_}"
  mkdir -p "$scratch/$name"
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$scratch/$name-")
  local corpora=("$scratch/$name")
  [ -d "$seeds" ] && corpora+=("$seeds")
  "$bin" "${args[@]}" "${corpora[@]}" >"$scratch/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$scratch/$name.rc"
}

bins=()
for bin in "$build"/fuzz_*; do
  [ -x "$bin" ] && bins+=("$bin")
done
for bin in "${bins[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$bin" &
done
wait

status=0
for bin in "${bins[@]}"; do
  name=$(basename "$bin")
  echo "== $name (${seconds}s)"
  if [ "$(cat "$scratch/$name.rc")" != 0 ]; then
    echo "FAILED: $name"; tail -40 "$scratch/$name.log"; status=1
    for f in "$scratch/$name"-*; do
      [ -e "$f" ] || continue
      mkdir -p "$here/fuzz/artifacts"; cp "$f" "$here/fuzz/artifacts/"
    done
  else
    grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "$scratch/$name.log" | tail -1
  fi
done
exit $status
