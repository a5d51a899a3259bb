#!/usr/bin/env bash
# bench/bench_cine.sh [BUILD_DIR]
#
# Delphine packer and part files: trowel against scummvm-tools' extract_cine
# on one part file holding ONE packed entry of at least 25,000,000 bytes.
#   extract: trowel extract BIG.PRT   vs  scummvm-tools-cli --tool extract_cine
#            (wall time and peak memory, medians of BENCH_RUNS runs, side by side)
#            and vs the floor, `cp` of the unpacked file; beside them trowel
#            extract --stdout to /dev/null (the decoder with no file to write)
#   encode:  trowel compress -c bytekiller (speed in MB/s of input, median of
#            BENCH_ENCODE_RUNS, default 3), on one thread (-T 1) and on one
#            per CPU (the default); the two outputs must be the same bytes
# It builds nothing: BUILD_DIR (default: build) must hold trowel.
#
# The input (the same bytes on any machine with the same files), in order:
# 30,000,000 bytes of text: /usr/share/common-licenses/* then
#            /usr/share/doc/*/copyright, in name order, repeated as needed
# 30,000,000 bytes of machine code: libc.so.6, libcrypto.so.3, libstdc++.so.6
#  6,000,000 pseudo-random bytes: AES-128-CTR of zeros, fixed key and IV
#  2,000,000 zero bytes
# Peak memory comes from /usr/bin/time -v (maximum resident set size).
set -euo pipefail

build=${1:-build}
runs=${BENCH_RUNS:-5}
encode_runs=${BENCH_ENCODE_RUNS:-3}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/lib.sh" # take, ratio
trowel=$build/trowel
[[ -x $trowel ]] || { echo "bench_cine: $trowel is missing (build first)" >&2; exit 2; }
peer=$(command -v scummvm-tools-cli || true)
[[ -z $peer && -x /usr/games/scummvm-tools-cli ]] && peer=/usr/games/scummvm-tools-cli
[[ -n $peer ]] || { echo "bench_cine: scummvm-tools-cli is not installed" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench_cine: /usr/bin/time (GNU time) is needed" >&2; exit 2; }
command -v openssl >/dev/null || { echo "bench_cine: openssl is not installed" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-cine.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

libdir=/usr/lib/x86_64-linux-gnu
mkdir src
{
    take 30000000 $(ls /usr/share/common-licenses/* | sort) \
        $(ls /usr/share/doc/*/copyright 2>/dev/null | sort)
    take 30000000 $(ls "$libdir/libc.so.6" "$libdir/libcrypto.so.3" "$libdir/libstdc++.so.6")
    head -c 6000000 /dev/zero | openssl enc -aes-128-ctr -nosalt \
        -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 2>/dev/null
    head -c 2000000 /dev/zero
} >src/BIG.BIN
size=$(stat -c %s src/BIG.BIN)
echo "input: $size bytes"

median() { sort -n | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; print m }'; }

# ---- encode (the codec alone, raw stream), alternating one thread and all
enc_times=()
enc1_times=()
for ((i = 0; i < encode_runs; i++)); do
    rm -f big.bk big1.bk
    /usr/bin/time -f '%e %M' -o t.txt "$trowel" compress -c bytekiller -T 1 -o big1.bk src/BIG.BIN
    enc1_times+=("$(cut -d' ' -f1 t.txt)")
    /usr/bin/time -f '%e %M' -o t.txt "$trowel" compress -c bytekiller -o big.bk src/BIG.BIN
    enc_times+=("$(cut -d' ' -f1 t.txt)")
    cmp -s big.bk big1.bk || { echo "bench_cine: -T 1 and the default differ" >&2; exit 1; }
done
enc_med=$(printf '%s\n' "${enc_times[@]}" | median)
enc1_med=$(printf '%s\n' "${enc1_times[@]}" | median)
packed=$(stat -c %s big.bk)

# ---- the part file (one packed entry)
"$trowel" create -t cine-part -o BIG.PRT -C src BIG.BIN
entry_packed=$("$trowel" list -l BIG.PRT | awk '$5 == "BIG.BIN" { print $2 }')
method=$("$trowel" list -l BIG.PRT | awk '$5 == "BIG.BIN" { print $4 }')
if [[ $method != bytekiller ]] || ((entry_packed < 25000000)); then
    echo "bench_cine: the entry is $method, $entry_packed bytes: not a >= 25 MB packed entry" >&2
    exit 1
fi

# ---- extract, side by side
# timed CMD...: runs CMD under /usr/bin/time and sets wall (seconds, from
# a nanosecond clock: time's own is 10 ms, a fifth of cp's whole run) and
# rss (KiB); the same wrapper around every command, so its cost is alike.
timed() {
    local s e
    s=$(date +%s%N)
    /usr/bin/time -f '%M' -o t.txt "$@"
    e=$(date +%s%N)
    wall=$(awk -v d=$((e - s)) 'BEGIN { printf "%.4f", d / 1e9 }')
    rss=$(cat t.txt)
}
declare -a tw tm pw pm cw nw
for ((i = 0; i < runs; i++)); do
    rm -rf outT outE outC && mkdir outE outC
    timed "$trowel" extract -q BIG.PRT -C outT
    tw+=("$wall") tm+=("$rss")
    timed "$peer" --tool extract_cine -o outE BIG.PRT >peer.log
    pw+=("$wall") pm+=("$rss")
    timed cp src/BIG.BIN outC/BIG.BIN
    cw+=("$wall")
    timed sh -c '"$1" extract -q --stdout BIG.PRT >/dev/null' sh "$trowel"
    nw+=("$wall")
    cmp -s src/BIG.BIN outT/BIG.BIN || { echo "bench_cine: trowel's output differs" >&2; exit 1; }
    cmp -s src/BIG.BIN outE/BIG.BIN || { echo "bench_cine: extract_cine's output differs" >&2; exit 1; }
    grep -q '^ok' peer.log || { echo "bench_cine: extract_cine did not say ok" >&2; exit 1; }
done
t_wall=$(printf '%s\n' "${tw[@]}" | median)
t_mem=$(printf '%s\n' "${tm[@]}" | median)
p_wall=$(printf '%s\n' "${pw[@]}" | median)
p_mem=$(printf '%s\n' "${pm[@]}" | median)
c_wall=$(printf '%s\n' "${cw[@]}" | median)
n_wall=$(printf '%s\n' "${nw[@]}" | median)

printf '\nentry: %s bytes unpacked, %s packed (ratio %.3f)\n' "$size" "$entry_packed" \
    "$(echo "$entry_packed / $size" | bc -l)"
printf '%-34s %10s %14s\n' "extract (median of $runs)" "wall s" "peak RSS KiB"
printf '%-34s %10s %14s\n' "trowel extract" "$t_wall" "$t_mem"
printf '%-34s %10s %14s\n' "extract_cine (scummvm-tools)" "$p_wall" "$p_mem"
printf '%-34s %10s\n' "cp of the unpacked file" "$c_wall"
printf '%-34s %10s\n' "trowel extract --stdout >/dev/null" "$n_wall"
printf 'trowel / extract_cine wall time: %.3f (target <= 0.5)\n' "$(echo "$t_wall / $p_wall" | bc -l)"
printf 'trowel / cp wall time: %.2f (target <= 3); decoding alone / cp: %.2f\n' \
    "$(echo "$t_wall / $c_wall" | bc -l)" "$(echo "$n_wall / $c_wall" | bc -l)"
printf '\nencode (median of %s), trowel compress -c bytekiller, %s -> %s bytes:\n' \
    "$encode_runs" "$size" "$packed"
printf '  one thread (-T 1):        %s s, %.2f MB/s\n' "$enc1_med" \
    "$(echo "$size / $enc1_med / 1000000" | bc -l)"
printf '  one per CPU (%s CPUs):     %s s, %.2f MB/s\n' "$(nproc)" "$enc_med" \
    "$(echo "$size / $enc_med / 1000000" | bc -l)"
printf 'all runs: trowel extract %s | extract_cine %s | cp %s | to /dev/null %s | encode -T 1 %s | encode %s\n' \
    "${tw[*]}" "${pw[*]}" "${cw[*]}" "${nw[*]}" "${enc1_times[*]}" "${enc_times[*]}"
