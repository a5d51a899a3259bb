#!/usr/bin/env bash
# bench/bench_codecs.sh [BUILD_DIR]
#
# Times trowel's zlib and LZ4 decoders side by side with their peers on the
# same streams, 26,500,000 bytes decoded (the input of bench_szdd.sh):
#   zlib, finished stream (level 6):      trowel decompress -c zlib  vs  zlib_inflate_peer
#   zlib, sync-flushed every 64 KiB and never finished (level 1, the layout
#   of a compressed+condensed VPP):      trowel decompress -c zlib --size N  vs  zlib_inflate_peer
#   LZ4 frame written by the lz4 command: trowel decompress -c lz4   vs  lz4 -d
# zlib_inflate_peer is bench/zlib_inflate_peer.c (zlib's inflate with
# 256 KiB buffers), compiled here with cc -O2. python3's zlib.decompress of
# the finished stream is timed too, for reference. Every output is compared
# with the input. Prints medians of wall and CPU time, throughput and
# trowel/peer ratios; BENCH_RUNS (default 9) runs each, alternating.
set -euo pipefail

build=${1:-build}
runs=${BENCH_RUNS:-9}
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
trowel=$build/trowel
[[ -x $trowel ]] || { echo "bench_codecs: $trowel is missing (build first)" >&2; exit 2; }
for tool in cc lz4 python3 openssl; do
    command -v "$tool" >/dev/null || { echo "bench_codecs: $tool is not installed" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-codecs.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
cc -O2 -o zpeer "$here/bench/zlib_inflate_peer.c" -lz

# ---- the input (bench/lib.sh, as bench_szdd.sh makes it)
. "$here/bench/lib.sh"
mixed_input input.bin || { echo "bench_codecs: could not make the 26,500,000-byte input" >&2; exit 1; }
size=$(stat -c %s input.bin)

# ---- the streams
"$trowel" compress -q -c zlib -O level=6 -o fin.z input.bin
python3 - input.bin sync.z <<'PY'
import sys, zlib
data = open(sys.argv[1], "rb").read()
c = zlib.compressobj(1)
with open(sys.argv[2], "wb") as f:
    for i in range(0, len(data), 65536):
        f.write(c.compress(data[i:i + 65536]) + c.flush(zlib.Z_SYNC_FLUSH))
PY
lz4 -q -f input.bin peer.lz4

# ---- timing. The machine may be shared, so the two sides of a pair run
# alternately (A B, B A, A B, ...) rather than all of one then all of the
# other, and both wall time and CPU time (user + system) are kept: CPU time
# moves much less with the load. Each run's output is removed and `sync`
# writes back what is dirty first (untimed; bench/lib.sh).
PAIR_CHECK='cmp input.bin o.run' # each warm-up's output is the input again
secs() { awk -v t="$1" 'BEGIN { printf "%.4f", t }'; }
line() { # LABEL WALL CPU
    printf '  %-28s %s s wall  %6s MB/s   %s s cpu\n' "$1" "$(secs "$2")" "$(mbps "$size" "$2")" "$(secs "$3")"
}

echo "zlib, finished stream ..." >&2
pair fin "'$trowel' decompress -q -c zlib --size $size -o o.run fin.z" "./zpeer fin.z o.run"
fin=("$A_WALL" "$A_CPU" "$B_WALL" "$B_CPU")
pair py "'$trowel' decompress -q -c zlib --size $size -o o.run fin.z" \
    "python3 -c 'import sys, zlib; open(sys.argv[2], \"wb\").write(zlib.decompress(open(sys.argv[1], \"rb\").read()))' fin.z o.run"
py=("$B_WALL" "$B_CPU")

echo "zlib, sync-flushed unfinished stream ..." >&2
pair sync "'$trowel' decompress -q -c zlib --size $size -o o.run sync.z" "./zpeer sync.z o.run"
sync=("$A_WALL" "$A_CPU" "$B_WALL" "$B_CPU")

echo "LZ4 frame from the lz4 command ..." >&2
pair lz4 "'$trowel' decompress -q -c lz4 --size $size -o o.run peer.lz4" "lz4 -q -d -f peer.lz4 o.run"
lz=("$A_WALL" "$A_CPU" "$B_WALL" "$B_CPU")

cat <<OUT

input: $size bytes decoded; $(nproc) CPUs; $(uname -sr); load $(cut -d' ' -f1-3 /proc/loadavg); zlib $(python3 -c 'import zlib; print(zlib.ZLIB_RUNTIME_VERSION)'); $(lz4 --version 2>&1 | head -1 | sed 's/^\** *//; s/ *\**$//')
streams: fin.z $(stat -c %s fin.z) bytes, sync.z $(stat -c %s sync.z) bytes, peer.lz4 $(stat -c %s peer.lz4) bytes
medians of $runs alternating runs; MB/s of decoded bytes; ratios are trowel/peer time

zlib, finished (level 6)
$(line "trowel decompress -c zlib" "${fin[0]}" "${fin[1]}")
$(line "zlib_inflate_peer" "${fin[2]}" "${fin[3]}")
$(line "python3 zlib.decompress" "${py[0]}" "${py[1]}")
  trowel/zlib peer: wall $(ratio "${fin[0]}" "${fin[2]}"), cpu $(ratio "${fin[1]}" "${fin[3]}")
zlib, sync-flushed every 64 KiB, never finished (level 1)
$(line "trowel decompress -c zlib" "${sync[0]}" "${sync[1]}")
$(line "zlib_inflate_peer" "${sync[2]}" "${sync[3]}")
  trowel/zlib peer: wall $(ratio "${sync[0]}" "${sync[2]}"), cpu $(ratio "${sync[1]}" "${sync[3]}")
LZ4 frame (lz4 command, defaults)
$(line "trowel decompress -c lz4" "${lz[0]}" "${lz[1]}")
$(line "lz4 -d" "${lz[2]}" "${lz[3]}")
  trowel/lz4: wall $(ratio "${lz[0]}" "${lz[2]}"), cpu $(ratio "${lz[1]}" "${lz[3]}")
OUT
