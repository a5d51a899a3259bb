#!/usr/bin/env bash
# Runs every fuzz target in BUILD for SECONDS each, starting from its seed
# corpus in fuzz/corpus/<name minus fuzz_>/, JOBS targets at a time (default:
# one per CPU; results print in name order). New inputs go to a scratch
# folder, so the committed seeds stay as they are. Fails if any target finds
# a crash, leak or timeout; its inputs are kept in fuzz/artifacts/.
#
# FUZZ_KEEP=1 (scripts/fuzz-long.sh, `make fuzz-long`): the inputs each
# target finds are kept between runs in BUILD/long-corpus/<name>/ instead of
# a scratch folder, and a failing input is also copied into the target's
# seeds, fuzz/corpus/<name>/, so that the short runs keep checking it.
set -euo pipefail
build=${1:-build-fuzz}
seconds=${2:-20}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
here=$(cd "$(dirname "$0")/.." && pwd)
keep=${FUZZ_KEEP:-0}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Where a target's new inputs go: kept across runs, or thrown away.
found_dir() { # NAME
  if [ "$keep" = 1 ]; then echo "$build/long-corpus/$1"; else echo "$scratch/$1"; fi
}

fuzz_one() { # BIN: writes SCRATCH/NAME.log and SCRATCH/NAME.rc
  local bin=$1 name seeds rc=0
  name=$(basename "$bin")
  seeds="$here/fuzz/corpus/${name#fuzz_}"
  mkdir -p "$(found_dir "$name")"
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$scratch/$name-")
  local corpora=("$(found_dir "$name")")
  [ -d "$seeds" ] && corpora+=("$seeds")
  "$bin" "${args[@]}" "${corpora[@]}" >"$scratch/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$scratch/$name.rc"
}

bins=()
for bin in "$build"/fuzz_*; do
  [ -x "$bin" ] && [ -f "$bin" ] && bins+=("$bin")
done
[ "$keep" != 1 ] || [ ${#bins[@]} -gt 0 ] || { echo "no fuzz targets in $build" >&2; exit 1; }
for bin in "${bins[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$bin" &
done
wait

status=0
for bin in "${bins[@]}"; do
  name=$(basename "$bin")
  if [ "$keep" = 1 ]; then
    echo "== $name (${seconds}s, $(find "$(found_dir "$name")" -type f | wc -l) inputs kept)"
  else
    echo "== $name (${seconds}s)"
  fi
  if [ "$(cat "$scratch/$name.rc")" != 0 ]; then
    echo "FAILED: $name"; tail -40 "$scratch/$name.log"; status=1
    for f in "$scratch/$name"-*; do
      [ -e "$f" ] || continue
      mkdir -p "$here/fuzz/artifacts"; cp "$f" "$here/fuzz/artifacts/"
      if [ "$keep" = 1 ]; then
        mkdir -p "$here/fuzz/corpus/${name#fuzz_}"; cp "$f" "$here/fuzz/corpus/${name#fuzz_}/"
        echo "kept: fuzz/artifacts/$(basename "$f") and fuzz/corpus/${name#fuzz_}/$(basename "$f")"
      fi
    done
  else
    grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "$scratch/$name.log" | tail -1
  fi
done
exit $status
