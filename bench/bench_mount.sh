#!/usr/bin/env bash
# bench/bench_mount.sh [BUILD_DIR]
#
# Reading every entry of an archive through `trowel mount` against
# `trowel extract` of the same archive, side by side in one run, on:
#   part   a Delphine part file of 12 entries of 2 MiB (24 MiB): 6 packed
#          (Delphine packer) text and machine code entries, 6 stored
#          pseudo-random ones
#   part4  the same mix four times over: 48 entries, 96 MiB, so that the
#          fixed costs (starting the mount, mounting) weigh less
#   image  a scenes.image of 5,000 generated scenes (text VCDs, LZMA),
#          made from the corpus's ez2 VCDs by bench/gen_vsif_scenes.py
#   tsp    the corpus's tsp scenes.image (301 scenes)
#   vpp    a zlib-compressed VPP (level 1) of part4's 48 files (96 MiB), whose
#          entries the mount streams (a decoder kept where the last read
#          ended) instead of decoding them whole
#
# What is timed (wall clock, from a warm page cache):
#   extract  `trowel extract -q -C out ARCHIVE` into a folder that does not
#            exist yet (the previous run's output is removed before the
#            clock starts)
#   mount    from starting `trowel mount ARCHIVE m` (detached) to the last
#            byte of every file of the main tree read: `find m -path
#            m/.trowel -prune -o -type f -exec cat {} + >/dev/null`. The
#            unmount (`trowel umount m`) comes after the clock stops.
#   fixed    `trowel mount` + `trowel umount` with nothing read (what
#            starting and ending a mount costs alone)
# The two sides alternate, run after run (one warm-up each, then
# BENCH_RUNS runs, default 11), so a change in the machine's load hits
# both; the medians are printed, and their ratio.
# Then the peak RSS of `trowel mount -f --mem-limit LIMIT` while every file
# is read (GNU time), against the limit and against extract's; vpp under
# 16M streams 2 MiB entries, and a VPP of one 64 MiB zlib entry (big) must
# read under 16M too (before streaming it could not: EIO).
#
# Needs /dev/fuse (run as a user who may mount, or root), fusermount3,
# python3 and GNU time. Run it under the shared lock on a shared machine
# (flock /tmp/trowel-heavy.lock). The target (issue 12): mount at most
# 1.5x extract's time; peak RSS under --mem-limit.
set -euo pipefail

build=${1:-build}
runs=${BENCH_RUNS:-11}
build=$(cd "$build" && pwd)
trowel=$build/trowel
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=${TROWEL_CORPUS:-$here/../shared/corpus}
[[ -x $trowel ]] || { echo "bench_mount: $trowel is missing (build first)" >&2; exit 2; }
for tool in fusermount3 python3 /usr/bin/time openssl; do
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
mkdir src src4
libdir=/usr/lib/x86_64-linux-gnu
for i in 1 2 3; do
    take 2097152 $(ls /usr/share/common-licenses/* | sort) >src/text$i.txt
    take 2097152 "$libdir/libc.so.6" "$libdir/libcrypto.so.3" >src/code$i.bin
done
for i in 1 2 3 4 5 6; do
    head -c 2097152 /dev/zero | openssl enc -aes-128-ctr -nosalt -K 000102030405060708090a0b0c0d0e0$i \
        -iv 00000000000000000000000000000000 2>/dev/null >src/noise$i.bin
done
for k in 1 2 3 4; do
    for f in src/*; do cp "$f" "src4/$k-${f#src/}"; done
done
"$trowel" create -q -t cine-part -o part.prt -C src $(cd src && ls)
"$trowel" create -q -t cine-part -o part4.prt -C src4 $(cd src4 && ls)
python3 "$here/bench/gen_vsif_scenes.py" "$corpus/valve/ez2" game 5000
"$trowel" create -q -t vsif -o image.image -C game $(cd game && find scenes -name '*.vcd' | sort)
cp "$corpus/valve/tsp/scenes/scenes.image" tsp.image
"$trowel" create -q -t vpp -O compressed=1 -O level=1 -o vpp.vpp_pc -C src4 $(cd src4 && ls)
mkdir src-big
take 67108864 src4/* >src-big/big.bin
"$trowel" create -q -t vpp -O compressed=1 -O level=1 -o big.vpp_pc -C src-big big.bin

# ---- timing
now() { date +%s%N; }
read_all() { find m -path m/.trowel -prune -o -type f -exec cat {} + >/dev/null; }
time_extract() { # FILE -> nanoseconds
    rm -rf out
    local t0
    t0=$(now)
    "$trowel" extract -q -C out "$1"
    echo $(($(now) - t0))
}
time_mount() { # FILE -> nanoseconds from mount to every byte read
    local t0 t1
    t0=$(now)
    "$trowel" mount "$1" m
    read_all
    t1=$(now)
    "$trowel" umount m
    for _ in $(seq 100); do mountpoint -q m || break; sleep 0.01; done
    echo $((t1 - t0))
}
time_fixed() { # FILE -> nanoseconds of mount + umount alone
    local t0 t1
    t0=$(now)
    "$trowel" mount "$1" m
    "$trowel" umount m
    t1=$(now)
    for _ in $(seq 100); do mountpoint -q m || break; sleep 0.01; done
    echo $((t1 - t0))
}
median() { # nanoseconds on stdin -> seconds
    sort -n | awk '{ v[NR] = $1 } END { printf "%.4f", v[int((NR + 1) / 2)] / 1e9 }'
}

echo "medians of $runs runs, extract and mount alternating (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-6s %8s %6s %10s %10s %7s %10s\n' archive entries MiB extract mount ratio "fixed"
for a in part part4 image tsp vpp; do
    file=$(ls $a.*)
    entries=$("$trowel" list "$file" | wc -l)
    rm -rf out
    "$trowel" extract -q -C out "$file"
    mib=$(du -sm --apparent-size out | cut -f1)
    # the mount shows exactly what extract wrote
    "$trowel" mount "$file" m
    diff -r -x .trowel m out >/dev/null || { echo "bench_mount: $file: mount differs" >&2; exit 1; }
    "$trowel" umount m
    for _ in $(seq 100); do mountpoint -q m || break; sleep 0.01; done
    time_extract "$file" >/dev/null # warm-up
    time_mount "$file" >/dev/null
    : >ext.ns
    : >mnt.ns
    : >fix.ns
    for ((i = 0; i < runs; i++)); do
        time_extract "$file" >>ext.ns
        time_mount "$file" >>mnt.ns
        time_fixed "$file" >>fix.ns
    done
    t_extract=$(median <ext.ns)
    t_mount=$(median <mnt.ns)
    printf '%-6s %8s %6s %9ss %9ss %7.2f %9ss\n' "$a" "$entries" "$mib" "$t_extract" "$t_mount" \
        "$(echo "$t_mount / $t_extract" | bc -l)" "$(median <fix.ns)"
done
echo "(load average after: $(cut -d' ' -f1-3 /proc/loadavg))"

# ---- peak memory while reading everything under --mem-limit
echo
printf '%-6s %8s %14s %14s %s\n' archive limit "mount RSS" "extract RSS" "mount under limit"
for spec in part:64M part:16M part4:32M image:64M vpp:16M big:16M; do
    a=${spec%%:*}
    limit=${spec#*:}
    file=$(ls $a.*)
    /usr/bin/time -f %M -o rss.txt "$trowel" mount -f --mem-limit "$limit" "$file" m 2>/dev/null &
    pid=$!
    for _ in $(seq 100); do mountpoint -q m && break; sleep 0.1; done
    read_all || echo "bench_mount: $file: a read failed under --mem-limit $limit" >&2
    fusermount3 -u m
    wait "$pid"
    rss_mount=$(cat rss.txt)
    rm -rf out
    /usr/bin/time -f %M -o rss.txt "$trowel" extract -q --mem-limit "$limit" -C out "$file"
    limit_kib=$(numfmt --from=iec "$limit" | awk '{ print $1 / 1024 }')
    under=no
    [ "$rss_mount" -lt "$limit_kib" ] && under=yes
    printf '%-6s %8s %10s KiB %10s KiB %s\n' "$a" "$limit" "$rss_mount" "$(cat rss.txt)" "$under"
done
