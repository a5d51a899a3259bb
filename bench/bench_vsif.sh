#!/usr/bin/env bash
# Benchmark: scenes.image at game size. Generates N (default 5000) text VCDs
# by varying the corpus VCDs (names and sound names differ per copy), then
# measures, as medians of RUNS runs:
#   build      trowel create -t vsif (compress=auto)          target < 2 s
#   decompile  every scene to text VCD: in the library (null sink)  target < 1 s
#              and with trowel extract (adds one file per scene)
#   verify     trowel verify (decode, decompile, summaries)
#   LZMA       trowel's encoder and decoder against liblzma alone on the same
#              BVCDs, scene by scene, same settings, in one process
#              (bench/vsif_lzma_peer.c, linked with BUILD/libtrowel.a), and
#              trowel compress -c vsif-lzma against xz --format=raw --lzma1
#              on all BVCDs in one stream.
# Usage: bench/bench_vsif.sh [BUILD_DIR] [N] [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
n=${2:-5000}
runs=${3:-5}
T="$build/trowel"
corpus=${TROWEL_CORPUS:-$here/../shared/corpus}/valve
[ -x "$T" ] || { echo "no trowel binary at $T" >&2; exit 1; }
[ -d "$corpus" ] || { echo "no corpus at $corpus" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed to generate the VCDs" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 "$here/bench/gen_vsif_scenes.py" "$corpus" "$tmp/game" "$n"

# seconds CMD...: wall time of one run, in seconds (3 decimals).
seconds() {
    local s e
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s%N)
    awk -v d=$((e - s)) 'BEGIN { printf "%.3f\n", d / 1e9 }'
}
# median CMD...: the median wall time of RUNS runs.
median() {
    local i
    for ((i = 0; i < runs; i++)); do seconds "$@"; done | sort -n |
        awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

cd "$tmp"
"$T" create -t vsif -o big.image -C game scenes
"$T" extract --raw -C raw big.image
find raw -type f | sort >raw.list
cat $(cat raw.list) >all.bvcd
scenes=$(wc -l <raw.list | tr -d ' ')
bvcd_bytes=$(wc -c <all.bvcd | tr -d ' ')
image_bytes=$(wc -c <big.image | tr -d ' ')

build_auto=$(median "$T" create -t vsif --force -o b.image -C game scenes)
build_lzma=$(median "$T" create -t vsif --force -O compress=lzma -o b.image -C game scenes)
build_none=$(median "$T" create -t vsif --force -O compress=none -o b.image -C game scenes)
decompile=$(median bash -c "rm -rf out && '$T' extract -C out big.image")
verify=$(median "$T" verify big.image)

# In one process: decompile through the library (no files), and trowel's
# LZMA against liblzma alone on the same BVCDs (bench/vsif_lzma_peer.c).
peer=""
lib="$build/libtrowel.a"
if [ -f "$lib" ] && cc -O2 -I"$here/include" -I"$here/src" -o vsif_lzma_peer \
    "$here/bench/vsif_lzma_peer.c" "$lib" -llzma -lz -ljson-c -lpng 2>/dev/null; then
    ./vsif_lzma_peer --decompile big.image >decompile.txt
    ./vsif_lzma_peer $(cat raw.list) >peer.txt
    peer=yes
fi
get() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# One stream: trowel's codec against xz (liblzma) with the same settings.
dict=$(awk -v n="$bvcd_bytes" 'BEGIN { d = 65536; while (d < n && d < 8388608) d *= 2; print d }')
codec_trowel=$(median "$T" compress -c vsif-lzma --force -o one.lz all.bvcd)
"$T" compress -c vsif-lzma --force -o one.lz all.bvcd
codec_xz=$(median bash -c "xz -c --format=raw --lzma1=preset=6,dict=$dict all.bvcd >one.xz")
xz -c --format=raw --lzma1=preset=6,dict=$dict all.bvcd >one.xz
dec_trowel=$(median "$T" decompress -c vsif-lzma --force -o one.out one.lz)
dec_xz=$(median bash -c "xz -dc --format=raw --lzma1=preset=6,dict=$dict one.xz >one.xz.out")

echo "scenes.image benchmark: $scenes scenes, $bvcd_bytes bytes of BVCD, image $image_bytes bytes ($runs runs, medians)"
printf '%-44s %8s s  (target < 2 s)\n' "build (create -t vsif, compress=auto)" "$build_auto"
printf '%-44s %8s s\n' "build, compress=lzma" "$build_lzma"
printf '%-44s %8s s\n' "build, compress=none" "$build_none"
printf '%-44s %8s s  (target < 1 s is for the library figure below)\n' "extract all scenes as text files" "$decompile"
printf '%-44s %8s s\n' "verify (decode, decompile, summaries)" "$verify"
if [ -n "$peer" ]; then
    printf '%-44s %8s s  (library, null sink)\n' "decompile all scenes, in process" \
        "$(get decompile.txt decompile)"
    read -r _ _ ours_bytes peer_bytes <peer.txt
    te=$(get peer.txt trowel_encode) pe=$(get peer.txt liblzma_encode)
    td=$(get peer.txt trowel_decode) pd=$(get peer.txt liblzma_decode)
    printf '%-44s %8s s  vs liblzma alone %s s, ratio %s\n' "LZMA encode, every scene" "$te" "$pe" \
        "$(ratio "$te" "$pe")"
    printf '%-44s %8s s  vs liblzma alone %s s, ratio %s\n' "LZMA decode, every scene" "$td" "$pd" \
        "$(ratio "$td" "$pd")"
    printf '%-44s %8s bytes vs liblzma alone %s (with 17-byte headers)\n' "LZMA output" \
        "$ours_bytes" "$peer_bytes"
else
    echo "no C compiler or $lib: in-process figures skipped"
fi
printf '%-44s %8s s  vs xz %s s, ratio %s; size %s vs %s bytes\n' \
    "one stream: compress -c vsif-lzma" "$codec_trowel" "$codec_xz" \
    "$(ratio "$codec_trowel" "$codec_xz")" "$(($(wc -c <one.lz) - 17))" "$(wc -c <one.xz | tr -d ' ')"
printf '%-44s %8s s  vs xz %s s, ratio %s\n' "one stream: decompress -c vsif-lzma" "$dec_trowel" \
    "$dec_xz" "$(ratio "$dec_trowel" "$dec_xz")"
