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
#              (bench/vsif_lzma_peer.c, linked with the library's objects), and
#              trowel compress -c vsif-lzma against xz --format=raw --lzma1
#              on all BVCDs in one stream.
#   files      trowel extract (every scene to a text VCD, one file each)
#              against its floor, `cp -r` of the same files, and against
#              vsif2vcd.py (-a, the same job in Python) when VSIF2VCD names
#              a copy of it: into a fresh folder, then over an earlier
#              extraction (trowel --force, cp -r over the copy, vsif2vcd.py
#              -w, each over its own earlier output; trowel leaves a file
#              that holds the same bytes as it is), and over an earlier
#              output that differs in every file (a byte appended to each,
#              so every file is replaced). Medians of RUNS
#              rounds; each round runs the three in a rotating order, each
#              after removing (or restoring) its output and a `sync`,
#              untimed. Run it under the heavy-job lock.
# Usage: bench/bench_vsif.sh [BUILD_DIR] [N] [RUNS]
#   N defaults to 5099 (Team Fortress 2's scenes.image). BENCH_FILES_ONLY=1
#   runs only the `files` part. VSIF2VCD=/path/to/vsif2vcd.py adds that peer
#   (it is not part of trowel and not shipped with it). TROWEL_BEFORE=/path/
#   to/an/earlier/trowel adds that build to the `files` rounds (before/after
#   in one run).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
n=${2:-5099}
runs=${3:-5}
T="$build/trowel"
corpus=${TROWEL_CORPUS:-$here/../shared/corpus}/valve
[ -x "$T" ] || { echo "no trowel binary at $T" >&2; exit 1; }
[ -d "$corpus" ] || { echo "no corpus at $corpus" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed to generate the VCDs" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/bench/lib.sh" # TIMEFORMAT, median (of stdin)

python3 "$here/bench/gen_vsif_scenes.py" "$corpus" "$tmp/game" "$n"

# seconds CMD...: wall time of one run, in seconds (3 decimals).
seconds() {
    local s e
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s%N)
    awk -v d=$((e - s)) 'BEGIN { printf "%.3f\n", d / 1e9 }'
}
# median_of CMD...: the median wall time of RUNS runs.
median_of() {
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

# ---- files: trowel extract against cp -r and vsif2vcd.py, fresh and over.
# time_into FILE SETUP CMD: SETUP and a sync (untimed), then CMD timed;
# appends "wall cpu" to FILE.
time_into() {
    eval "$2" >/dev/null 2>&1
    sync
    local t
    t=$( { time eval "$3" >/dev/null 2>&1; } 2>&1 )
    awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%s %.3f\n", a[1], a[2] + a[3] }' >>"$1"
}
# rounds NAME: RUNS rounds over the tools in tool_names (setup_TOOL and
# cmd_TOOL each), the order rotating by one each round; then every tool's
# median wall and CPU time as wall_TOOL and cpu_TOOL.
rounds() {
    local k=${#tool_names[@]} i j tool setup cmd
    for tool in "${tool_names[@]}"; do rm -f "$1.$tool"; done
    for ((i = 0; i < runs; i++)); do
        for ((j = 0; j < k; j++)); do
            tool=${tool_names[$(((i + j) % k))]}
            setup="setup_$tool" cmd="cmd_$tool"
            time_into "$1.$tool" "${!setup}" "${!cmd}"
        done
    done
    for tool in "${tool_names[@]}"; do
        printf -v "wall_$tool" '%s' "$(cut -d' ' -f1 "$1.$tool" | median)"
        printf -v "cpu_$tool" '%s' "$(cut -d' ' -f2 "$1.$tool" | median)"
    done
}
vs() { if [ -n "$2" ]; then ratio "$1" "$2"; else echo "-"; fi; }
# setups_from DIR PY_DIR: each tool's output, before its timed run, is a
# fresh copy of DIR (vsif2vcd.py's: of PY_DIR).
setups_from() {
    local tool
    for tool in trowel cp old; do printf -v "setup_$tool" 'rm -rf o.%s && cp -r %s o.%s' "$tool" "$1" "$tool"; done
    setup_py="rm -rf o.py && cp -r $2 o.py"
}
files_part() {
    local py=${VSIF2VCD:-}
    "$T" extract -q -C ref.trowel big.image
    tool_names=(trowel cp)
    wall_py="" cpu_py="" wall_old="" cpu_old=""
    if [ -n "$py" ] && [ -f "$py" ]; then
        python3 "$py" -q -a -o ref.py big.image
        tool_names+=(py)
    fi
    local old=${TROWEL_BEFORE:-}
    [ -z "$old" ] || [ ! -x "$old" ] || tool_names+=(old)
    # Fresh folders.
    setup_trowel="rm -rf o.trowel" cmd_trowel="'$T' extract -q -C o.trowel big.image"
    setup_cp="rm -rf o.cp" cmd_cp="cp -r ref.trowel o.cp"
    setup_py="rm -rf o.py" cmd_py="python3 '$py' -q -a -o o.py big.image"
    setup_old="rm -rf o.old" cmd_old="'$old' extract -q -C o.old big.image"
    rounds fresh
    diff -r ref.trowel o.trowel >/dev/null || { echo "trowel extract is not repeatable" >&2; exit 1; }
    local fresh=("$wall_trowel" "$cpu_trowel" "$wall_cp" "$cpu_cp" "$wall_py" "$cpu_py")
    local fresh_old=("$wall_old" "$cpu_old")
    # Over an earlier extraction: each tool over its own earlier output.
    setups_from ref.trowel ref.py
    cmd_trowel="'$T' extract -q --force -C o.trowel big.image"
    cmd_cp="cp -r ref.trowel/. o.cp/"
    cmd_py="python3 '$py' -q -a -w -o o.py big.image"
    cmd_old="'$old' extract -q --force -C o.old big.image"
    rounds over
    diff -r ref.trowel o.trowel >/dev/null || { echo "trowel --force changed the files" >&2; exit 1; }
    local over=("$wall_trowel" "$cpu_trowel" "$wall_cp" "$cpu_cp" "$wall_py" "$cpu_py")
    local over_old=("$wall_old" "$cpu_old")
    # Over an earlier output that differs in every file (a byte appended to
    # each): nothing can be left as it is, every file is replaced.
    for d in ref.trowel ref.py; do
        [ -d "$d" ] || continue
        rm -rf "diff.${d#ref.}" && cp -r "$d" "diff.${d#ref.}"
        find "diff.${d#ref.}" -type f -print0 | xargs -0 -n 500 sh -c 'for f; do printf x >>"$f"; done' sh
    done
    setups_from diff.trowel diff.py
    rounds differ
    diff -r ref.trowel o.trowel >/dev/null || { echo "trowel --force left a changed file" >&2; exit 1; }
    echo "extract to files: $(find ref.trowel -type f | wc -l | tr -d ' ') text VCDs," \
        "$(du -sk ref.trowel | cut -f1) KiB ($runs rounds, medians)"
    printf '%-28s %8s %8s %8s   %s\n' "" trowel "cp -r" vsif2vcd "trowel/cp -r  trowel/vsif2vcd"
    printf '%-28s %8s %8s %8s   %-13s %s\n' "fresh folder, wall s" "${fresh[0]}" "${fresh[2]}" \
        "${fresh[4]:--}" "$(ratio "${fresh[0]}" "${fresh[2]}")" "$(vs "${fresh[0]}" "${fresh[4]}")"
    printf '%-28s %8s %8s %8s\n' "fresh folder, CPU s" "${fresh[1]}" "${fresh[3]}" "${fresh[5]:--}"
    printf '%-28s %8s %8s %8s   %-13s %s\n' "over (--force, -w), wall s" "${over[0]}" "${over[2]}" \
        "${over[4]:--}" "$(ratio "${over[0]}" "${over[2]}")" "$(vs "${over[0]}" "${over[4]}")"
    printf '%-28s %8s %8s %8s\n' "over (--force, -w), CPU s" "${over[1]}" "${over[3]}" "${over[5]:--}"
    printf '%-28s %8s %8s %8s   %-13s %s\n' "over, every file differs, wall" "$wall_trowel" \
        "$wall_cp" "${wall_py:--}" "$(ratio "$wall_trowel" "$wall_cp")" "$(vs "$wall_trowel" "$wall_py")"
    printf '%-28s %8s %8s %8s\n' "over, every file differs, CPU" "$cpu_trowel" "$cpu_cp" "${cpu_py:--}"
    if [ -n "$wall_old" ]; then
        echo "earlier build ($old), same rounds: fresh ${fresh_old[0]} s wall ${fresh_old[1]} s CPU" \
            "(trowel/cp -r $(ratio "${fresh_old[0]}" "${fresh[2]}")); over ${over_old[0]} s wall" \
            "${over_old[1]} s CPU (trowel/cp -r $(ratio "${over_old[0]}" "${over[2]}")); every file" \
            "differs $wall_old s wall (trowel/cp -r $(ratio "$wall_old" "$wall_cp"))"
    fi
    [ -n "$wall_py" ] || echo "vsif2vcd.py: absent (set VSIF2VCD=/path/to/vsif2vcd.py): against cp -r only"
    rm -rf o.trowel o.cp o.py o.old ref.trowel ref.py diff.trowel diff.py
}
files_part
[ -z "${BENCH_FILES_ONLY:-}" ] || exit 0

build_auto=$(median_of "$T" create -t vsif --force -o b.image -C game scenes)
build_lzma=$(median_of "$T" create -t vsif --force -O compress=lzma -o b.image -C game scenes)
build_none=$(median_of "$T" create -t vsif --force -O compress=none -o b.image -C game scenes)
decompile=$(median_of bash -c "rm -rf out && '$T' extract -C out big.image")
verify=$(median_of "$T" verify big.image)

# In one process: decompile through the library (no files), and trowel's
# LZMA against liblzma alone on the same BVCDs (bench/vsif_lzma_peer.c).
# It calls internal functions, so it links the library's objects: libtrowel.a
# exports only the public API.
peer=""
objs=$(find "$build/CMakeFiles/trowel_objects.dir" -name '*.o' 2>/dev/null | sort)
if [ -n "$objs" ] && cc -O2 -I"$here/include" -I"$here/src" -o vsif_lzma_peer \
    "$here/bench/vsif_lzma_peer.c" $objs -llzma -lz -ljson-c -lpng -lgif -llz4 -lpthread -lm; then
    ./vsif_lzma_peer --decompile big.image >decompile.txt
    ./vsif_lzma_peer $(cat raw.list) >peer.txt
    peer=yes
fi
get() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# One stream: trowel's codec against xz (liblzma) with the same settings.
dict=$(awk -v n="$bvcd_bytes" 'BEGIN { d = 65536; while (d < n && d < 8388608) d *= 2; print d }')
codec_trowel=$(median_of "$T" compress -c vsif-lzma --force -o one.lz all.bvcd)
"$T" compress -c vsif-lzma --force -o one.lz all.bvcd
codec_xz=$(median_of bash -c "xz -c --format=raw --lzma1=preset=6,dict=$dict all.bvcd >one.xz")
xz -c --format=raw --lzma1=preset=6,dict=$dict all.bvcd >one.xz
dec_trowel=$(median_of "$T" decompress -c vsif-lzma --force -o one.out one.lz)
dec_xz=$(median_of bash -c "xz -dc --format=raw --lzma1=preset=6,dict=$dict one.xz >one.xz.out")

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
