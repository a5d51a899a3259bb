#!/usr/bin/env bash
# bench/bench_szdd.sh [BUILD_DIR]
#
# Times trowel's SZDD LZSS codec against the other SZDD tools on this
# machine, on one deterministic input of 26,500,000 bytes:
#   decode: trowel decompress -c szdd   vs  libmspack (bench_mspack_szdd)  vs  msexpand
#   encode: trowel compress -c szdd     vs  mscompress
# and prints the medians, the ratios and the output sizes. It builds nothing:
# BUILD_DIR (default: build, under the current folder) must hold trowel and
# bench_mspack_szdd. hyperfine is used when present, else a bash loop.
#
# Runs: BENCH_RUNS (default 5) for each command, except msexpand, which
# writes one byte per system call and takes tens of seconds a run, so it gets
# BENCH_SLOW_RUNS (default 3).
#
# The input (the same bytes on any machine with the same files) is, in order:
#  9,000,000 bytes of text: /usr/share/common-licenses/* then
#            /usr/share/doc/*/copyright, in name order, repeated as needed
# 10,000,000 bytes of machine code: libc.so.6, libcrypto.so.3, libstdc++.so.6
#  2,000,000 zero bytes
#  3,000,000 pseudo-random bytes: AES-128-CTR of zeros, fixed key and IV
#  2,500,000 bytes of the licence texts again (repeats far behind)
set -euo pipefail

build=${1:-build}
runs=${BENCH_RUNS:-5}
slow_runs=${BENCH_SLOW_RUNS:-3}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
trowel=$build/trowel
mspack=$build/bench_mspack_szdd
for tool in "$trowel" "$mspack"; do
    [[ -x $tool ]] || { echo "bench_szdd: $tool is missing (build first)" >&2; exit 2; }
done
for tool in msexpand mscompress openssl; do
    command -v "$tool" >/dev/null || { echo "bench_szdd: $tool is not installed" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-szdd.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# ---- the input (bench/lib.sh)
. "$here/bench/lib.sh"
mixed_input input.bin || { echo "bench_szdd: could not make the 26,500,000-byte input" >&2; exit 1; }
size=$(stat -c %s input.bin)

# ---- timing: median wall seconds of RUNS runs of a shell command
median_of() { # RUNS PREPARE COMMAND -> prints the median in seconds
    local n=$1 prepare=$2 cmd=$3
    if command -v hyperfine >/dev/null; then
        hyperfine --style none --warmup 0 --runs "$n" --prepare "$prepare" \
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
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a / b }'; }
mbps() { awk -v s="$size" -v t="$1" 'BEGIN { printf "%.1f", s / t / 1e6 }'; }

# ---- compressed files: trowel's raw stream, the same as an SZDD file, and
# mscompress's file (a different parse, so a different stream)
"$trowel" compress -q -c szdd -f -o trowel.lzss input.bin
"$trowel" create -q -t szdd -f -o trowel.szdd input.bin
cp input.bin msin
mscompress msin
mv msin_ ms.szdd
cmp -s <(tail -c +15 trowel.szdd) trowel.lzss ||
    { echo "bench_szdd: trowel create and trowel compress differ" >&2; exit 1; }

# ---- decode: every tool expands trowel's stream
echo "decode (median of $runs runs; msexpand $slow_runs) ..." >&2
t_dec=$(median_of "$runs" "rm -f out.t" "'$trowel' decompress -q -c szdd --size $size -o out.t trowel.lzss")
cmp input.bin out.t
t_msp=$(median_of "$runs" "rm -f out.m" "'$mspack' trowel.szdd out.m")
cmp input.bin out.m
t_mse=$(median_of "$slow_runs" "rm -f out.e" "msexpand < trowel.szdd > out.e")
cmp input.bin out.e

# ---- encode
echo "encode (median of $runs runs each) ..." >&2
t_enc=$(median_of "$runs" "rm -f enc.t" "'$trowel' compress -q -c szdd -o enc.t input.bin")
cmp enc.t trowel.lzss
t_msc=$(median_of "$runs" "rm -f msin_" "mscompress msin")
cmp msin_ ms.szdd

tsize=$(stat -c %s trowel.szdd)
msize=$(stat -c %s ms.szdd)
cat <<EOF

input: $size bytes; $(nproc) CPUs; $(uname -sr)
output sizes (whole SZDD files, 14-byte header included):
  trowel      $tsize bytes
  mscompress  $msize bytes   (trowel/mscompress $(ratio "$tsize" "$msize"))

decode, median wall time ($runs runs; msexpand $slow_runs):
  trowel decompress -c szdd   $(secs "$t_dec") s   $(mbps "$t_dec") MB/s
  libmspack (bench)           $(secs "$t_msp") s   $(mbps "$t_msp") MB/s
  msexpand                    $(secs "$t_mse") s   $(mbps "$t_mse") MB/s
  trowel/libmspack            $(ratio "$t_dec" "$t_msp")
  trowel/msexpand             $(ratio "$t_dec" "$t_mse")

encode, median wall time ($runs runs):
  trowel compress -c szdd     $(secs "$t_enc") s   $(mbps "$t_enc") MB/s
  mscompress                  $(secs "$t_msc") s   $(mbps "$t_msc") MB/s
  mscompress/trowel (speed-up) $(ratio "$t_msc" "$t_enc")
EOF
