#!/usr/bin/env bash
# bench/bench_mount.sh [BUILD_DIR]
#
# Reading every entry of an archive through `trowel mount` against
# `trowel extract` of the same archive, side by side in one run, on:
#   part   a Delphine part file of 12 entries, 24 MiB: 6 packed (Delphine
#          packer) text and machine code entries, 6 stored pseudo-random ones
#   image  a scenes.image of 5,000 generated scenes (text VCDs, LZMA),
#          made from the corpus's ez2 VCDs by bench/gen_vsif_scenes.py
#   tsp    the corpus's tsp scenes.image (301 scenes)
# mount: trowel mount (detached) + `find -type f -exec cat {} +` of the
# main tree (to /dev/null) + trowel umount; extract: trowel extract -q -C
# into an emptied folder. Both from a warm page cache. Medians of
# BENCH_RUNS (default 5) runs with hyperfine (a bash loop without it).
# Then the peak RSS of `trowel mount -f --mem-limit LIMIT` while every file
# is read (GNU time), against the limit.
#
# Needs /dev/fuse (run as a user who may mount, or root), fusermount3 and
# python3. The target (issue 12): mount at most 1.5x extract's time.
set -euo pipefail

build=${1:-build}
runs=${BENCH_RUNS:-5}
build=$(cd "$build" && pwd)
trowel=$build/trowel
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=${TROWEL_CORPUS:-$here/../shared/corpus}
[[ -x $trowel ]] || { echo "bench_mount: $trowel is missing (build first)" >&2; exit 2; }
for tool in fusermount3 python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "bench_mount: $tool is not installed" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-mount.XXXXXX")
cleanup() {
    mountpoint -q "$work/m" 2>/dev/null && fusermount3 -u "$work/m"
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
mkdir m

# ---- the archives
take() { # N FILE...: the files over and over until N bytes
    local n=$1
    shift
    { while cat -- "$@"; do :; done; } 2>/dev/null | head -c "$n"
}
mkdir src
libdir=/usr/lib/x86_64-linux-gnu
for i in 1 2 3; do
    take 2097152 $(ls /usr/share/common-licenses/* | sort) >src/text$i.txt
    take 2097152 "$libdir/libc.so.6" "$libdir/libcrypto.so.3" >src/code$i.bin
done
for i in 1 2 3 4 5 6; do
    head -c 2097152 /dev/zero | openssl enc -aes-128-ctr -nosalt -K 000102030405060708090a0b0c0d0e0$i \
        -iv 00000000000000000000000000000000 2>/dev/null >src/noise$i.bin
done
"$trowel" create -q -t cine-part -o part.prt -C src $(cd src && ls)
python3 "$here/bench/gen_vsif_scenes.py" "$corpus/valve/ez2" game 5000
"$trowel" create -q -t vsif -o image.image -C game $(cd game && find scenes -name '*.vcd' | sort)
cp "$corpus/valve/tsp/scenes/scenes.image" tsp.image

# ---- timing
median_of() { # COMMAND -> the median wall time in seconds
    if command -v hyperfine >/dev/null; then
        hyperfine --style none --warmup 1 --runs "$runs" --export-json t.json -- "$1" >/dev/null 2>&1
        jq -r '.results[0].median' t.json
    else
        local times=() i t0 t1
        for ((i = 0; i < runs; i++)); do
            t0=$(date +%s%N)
            bash -c "$1" >/dev/null 2>&1
            t1=$(date +%s%N)
            times+=("$(( t1 - t0 ))")
        done
        printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p" |
            awk '{ printf "%.4f\n", $1 / 1e9 }'
    fi
}

read_mount='find m -path m/.trowel -prune -o -type f -exec cat {} + >/dev/null'
printf '%-6s %10s %10s %12s %12s %7s\n' archive entries MiB extract mount ratio
for a in part image tsp; do
    file=$(ls $a.*)
    entries=$("$trowel" list "$file" | wc -l)
    rm -rf out
    "$trowel" extract -q -C out "$file"
    mib=$(du -sm --apparent-size out | cut -f1)
    # the mount shows exactly what extract wrote
    "$trowel" mount "$file" m
    diff -r -x .trowel m out >/dev/null || { echo "bench_mount: $file: mount differs" >&2; exit 1; }
    "$trowel" umount m
    t_extract=$(median_of "rm -rf out && $trowel extract -q -C out $file")
    t_mount=$(median_of "$trowel mount $file m && $read_mount && $trowel umount m")
    printf '%-6s %10s %10s %11.4fs %11.4fs %7.2f\n' "$a" "$entries" "$mib" "$t_extract" "$t_mount" \
        "$(echo "$t_mount / $t_extract" | bc -l)"
done

# ---- peak memory while reading everything under --mem-limit
echo
printf '%-6s %10s %12s %12s\n' archive limit "mount RSS" "extract RSS"
for spec in part:64M part:16M image:64M; do
    a=${spec%%:*}
    limit=${spec#*:}
    file=$(ls $a.*)
    /usr/bin/time -f %M -o rss.txt "$trowel" mount -f --mem-limit "$limit" "$file" m 2>/dev/null &
    pid=$!
    for _ in $(seq 100); do mountpoint -q m && break; sleep 0.1; done
    bash -c "$read_mount" || echo "bench_mount: $file: a read failed under --mem-limit $limit" >&2
    fusermount3 -u m
    wait "$pid"
    rss_mount=$(cat rss.txt)
    rm -rf out
    /usr/bin/time -f %M -o rss.txt "$trowel" extract -q --mem-limit "$limit" -C out "$file"
    printf '%-6s %10s %9s KiB %9s KiB\n' "$a" "$limit" "$rss_mount" "$(cat rss.txt)"
done
