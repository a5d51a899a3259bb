#!/usr/bin/env bash
# bench/bench_trespasser.sh [BUILD_DIR]
#
# Trespasser's codecs and terrain, timed with peak memory (/usr/bin/time -v):
#   SPZ decode vs SZDD decode: the same 16,000,000 bytes compressed both ways
#     by trowel (create -t spz / -t szdd), expanded with extract --stdout;
#     the two differ only in the LZSS window set-up, so they should match.
#   WTD encode and decode of an 8192 x 8192-extent terrain (67,108,864
#     samples, 8 bits, made here): create -t tres-wtd from raw, then
#     convert --to png (16-bit heights).
# Prints the median wall time and the median peak RSS of BENCH_RUNS runs
# (default 5; the terrain: BENCH_TERRAIN_RUNS, default 3). Builds nothing.
#
# Inputs (the same bytes on any machine with the same files):
#   pages: /usr/share/common-licenses/* in name order, repeated to 8,000,000
#          bytes, then libc.so.6 repeated to 6,000,000, then 2,000,000 zeros.
#   terrain: row y is a sine-and-ridge row of 8192 samples rotated by 3y,
#          raised by a slow swell of y (python3, standard library).
set -euo pipefail

build=${1:-build}
runs=${BENCH_RUNS:-5}
terrain_runs=${BENCH_TERRAIN_RUNS:-3}
build=$(cd "$build" && pwd)
trowel=$build/trowel
[[ -x $trowel ]] || { echo "bench_trespasser: $trowel is missing (build first)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench_trespasser: /usr/bin/time is not installed" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-tres.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

take() { # N FILE...: the files over and over until N bytes
    local n=$1
    shift
    { while cat -- "$@"; do :; done; } 2>/dev/null | head -c "$n"
}
{
    take 8000000 $(ls /usr/share/common-licenses/* | sort)
    take 6000000 /usr/lib/x86_64-linux-gnu/libc.so.6
    head -c 2000000 /dev/zero
} > pages.swp
cp pages.swp pages.bin
"$trowel" create -t spz -o pages.spz pages.swp
"$trowel" create -t szdd -o pages.bi_ pages.bin

# measure NAME RUNS CMD...: median seconds and median peak RSS (MiB).
measure() {
    local name=$1 n=$2
    shift 2
    local times=() rss=()
    for ((i = 0; i < n; i++)); do
        /usr/bin/time -v -o t.txt "$@" > /dev/null
        times+=("$(awk -F': ' '/Elapsed \(wall clock\)/ { split($2, a, ":");
            s = 0; for (k = 1; k in a; k++) s = s * 60 + a[k]; print s }' t.txt)")
        rss+=("$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' t.txt)")
    done
    local mt mr
    mt=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    mr=$(printf '%s\n' "${rss[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    printf '%-34s %8s s %9s MiB  (%d runs)\n' "$name" "$mt" "$mr" "$n"
}

echo "pages: $(stat -c %s pages.swp) bytes; spz $(stat -c %s pages.spz), szdd $(stat -c %s pages.bi_)"
measure "SPZ decode (extract --stdout)" "$runs" "$trowel" extract --stdout pages.spz
measure "SZDD decode (extract --stdout)" "$runs" "$trowel" extract --stdout pages.bi_

python3 - <<'PYEOF'
import math
n = 8192
base = bytes(int(100 + 60 * math.sin(x * 0.0123) + 30 * math.sin(x * 0.071) * math.cos(x * 0.0021))
             for x in range(n))
with open('terrain.raw', 'wb') as f:
    for y in range(n):
        k = (3 * y) % n
        swell = int(20 * math.sin(y * 0.004))
        table = bytes(max(0, min(255, v + swell)) for v in range(256))
        f.write((base[k:] + base[:k]).translate(table))
PYEOF
measure "WTD encode 8192x8192 (create)" "$terrain_runs" \
    "$trowel" create -t tres-wtd -O width=8192 -O height=8192 -o terrain.wtd --force terrain.raw
echo "terrain: $(stat -c %s terrain.raw) samples -> $(stat -c %s terrain.wtd) bytes"
measure "WTD decode 8192x8192 (to png)" "$terrain_runs" \
    "$trowel" convert terrain.wtd --to png -o terrain.png --force
measure "WTD verify 8192x8192" "$terrain_runs" "$trowel" verify terrain.wtd
