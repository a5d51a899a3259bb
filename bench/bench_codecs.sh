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
# with the input. Prints medians, throughput and trowel/peer time ratios.
# hyperfine when present, else a bash loop; BENCH_RUNS (default 5) runs each.
set -euo pipefail

build=${1:-build}
runs=${BENCH_RUNS:-5}
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

# ---- the input (as bench_szdd.sh makes it)
take() { # N FILE...: the files over and over until N bytes
    local n=$1
    shift
    { while cat -- "$@"; do :; done; } 2>/dev/null | head -c "$n"
}
libdir=/usr/lib/x86_64-linux-gnu
{
    take 9000000 $(ls /usr/share/common-licenses/* | sort) \
        $(ls /usr/share/doc/*/copyright 2>/dev/null | sort)
    take 10000000 $(ls "$libdir/libc.so.6" "$libdir/libcrypto.so.3" "$libdir/libstdc++.so.6" \
        2>/dev/null)
    head -c 2000000 /dev/zero
    head -c 3000000 /dev/zero | openssl enc -aes-128-ctr -nosalt \
        -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 2>/dev/null
    take 2500000 $(ls /usr/share/common-licenses/* | sort)
} > input.bin
size=$(stat -c %s input.bin)
if (( size != 26500000 )); then
    echo "bench_codecs: could only make $size bytes of input (need 26500000)" >&2
    exit 1
fi

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

# ---- timing: median wall seconds of RUNS runs of a shell command
median_of() { # RUNS PREPARE COMMAND -> prints the median in seconds
    local n=$1 prepare=$2 cmd=$3
    if command -v hyperfine >/dev/null; then
        hyperfine --style none --warmup 1 --runs "$n" --prepare "$prepare" \
            --export-json t.json -- "$cmd" >/dev/null 2>&1
        if command -v jq >/dev/null; then
            jq -r '.results[0].median' t.json
        else
            grep -o '"median": *[0-9.e-]*' t.json | head -1 | sed 's/.*: *//'
        fi
    else
        local times=() i t0 t1
        for ((i = 0; i < n; i++)); do
            bash -c "$prepare"
            t0=$(date +%s%N)
            bash -c "$cmd"
            t1=$(date +%s%N)
            times+=($((t1 - t0)))
        done
        printf '%s\n' "${times[@]}" | sort -n |
            awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                      printf "%.6f\n", m / 1e9 }'
    fi
}
secs() { awk -v t="$1" 'BEGIN { printf "%.4f", t }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
mbps() { awk -v s="$size" -v t="$1" 'BEGIN { printf "%.1f", s / t / 1e6 }'; }

echo "zlib, finished stream ..." >&2
t_zt=$(median_of "$runs" "rm -f o.zt" "'$trowel' decompress -q -c zlib --size $size -o o.zt fin.z")
cmp input.bin o.zt
t_zp=$(median_of "$runs" "rm -f o.zp" "./zpeer fin.z o.zp")
cmp input.bin o.zp
t_zy=$(median_of "$runs" "rm -f o.zy" "python3 -c 'import sys, zlib; open(sys.argv[2], \"wb\").write(zlib.decompress(open(sys.argv[1], \"rb\").read()))' fin.z o.zy")
cmp input.bin o.zy

echo "zlib, sync-flushed unfinished stream ..." >&2
t_st=$(median_of "$runs" "rm -f o.st" "'$trowel' decompress -q -c zlib --size $size -o o.st sync.z")
cmp input.bin o.st
t_sp=$(median_of "$runs" "rm -f o.sp" "./zpeer sync.z o.sp")
cmp input.bin o.sp

echo "LZ4 frame from the lz4 command ..." >&2
t_lt=$(median_of "$runs" "rm -f o.lt" "'$trowel' decompress -q -c lz4 --size $size -o o.lt peer.lz4")
cmp input.bin o.lt
t_lp=$(median_of "$runs" "rm -f o.lp" "lz4 -q -d -f peer.lz4 o.lp")
cmp input.bin o.lp

cat <<OUT

input: $size bytes decoded; $(nproc) CPUs; $(uname -sr); zlib $(python3 -c 'import zlib; print(zlib.ZLIB_RUNTIME_VERSION)'); $(lz4 --version 2>&1 | head -1)
streams: fin.z $(stat -c %s fin.z) bytes, sync.z $(stat -c %s sync.z) bytes, peer.lz4 $(stat -c %s peer.lz4) bytes

median wall time ($runs runs), throughput of decoded bytes, trowel/peer time:
zlib, finished (level 6)
  trowel decompress -c zlib    $(secs "$t_zt") s   $(mbps "$t_zt") MB/s
  zlib_inflate_peer            $(secs "$t_zp") s   $(mbps "$t_zp") MB/s
  python3 zlib.decompress      $(secs "$t_zy") s   $(mbps "$t_zy") MB/s
  trowel/zlib peer             $(ratio "$t_zt" "$t_zp")
zlib, sync-flushed every 64 KiB, never finished (level 1)
  trowel decompress -c zlib    $(secs "$t_st") s   $(mbps "$t_st") MB/s
  zlib_inflate_peer            $(secs "$t_sp") s   $(mbps "$t_sp") MB/s
  trowel/zlib peer             $(ratio "$t_st" "$t_sp")
LZ4 frame (lz4 command, defaults)
  trowel decompress -c lz4     $(secs "$t_lt") s   $(mbps "$t_lt") MB/s
  lz4 -d                       $(secs "$t_lp") s   $(mbps "$t_lp") MB/s
  trowel/lz4                   $(ratio "$t_lt" "$t_lp")
OUT
