#!/usr/bin/env bash
# bench/bench_vpp.sh [BUILD_DIR]
#
# Volition packfiles, side by side with the tools that do the same work
# without an archive format in the way (run it under the heavy-job lock:
# flock /tmp/trowel-heavy.lock bash bench/bench_vpp.sh build):
#   1. extract a raw v3 archive of 1 GiB (40 files of 25.6 MiB and one to
#      two bytes, so that most entries start off a page boundary)  vs  cp -r
#      of the 40 source files (the same files made the same way) and cp of
#      the archive (peak RSS from /usr/bin/time); BENCH_RAW_ONLY=1 stops
#      after this part;
#   2. list a v3 archive of 100,000 entries (condensed, one byte each;
#      target < 0.5 s);
#   3. extract a compressed+condensed v3 archive (one zlib stream, level 1,
#      the RFG .vpp_pc layout; 106 MB decoded)  vs  zlib's own inflate of the
#      same stream (bench/zlib_inflate_peer.c);
#   4. extract a v17 archive holding one LZ4 frame written by trowel (the
#      same 106 MB)  vs  lz4 -d of that frame.
# Everything is made under $TMPDIR (default /tmp) and removed at the end.
# trowel extract makes its -C folder itself (no mkdir in the timed command).
# Before every timed command the previous output is removed and `sync`
# writes back what is dirty (untimed), so that neither side pays for the
# other's writeback. Medians of BENCH_RUNS (default 9) alternating runs
# after one warm-up, wall and CPU time; ratios are trowel/peer time.
set -euo pipefail

build=${1:-build}
runs=${BENCH_RUNS:-9}
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
trowel=$build/trowel
[[ -x $trowel ]] || { echo "bench_vpp: $trowel is missing (build first)" >&2; exit 2; }
for tool in cc lz4 openssl python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "bench_vpp: $tool is not installed" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-vpp.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
cc -O2 -o zpeer "$here/bench/zlib_inflate_peer.c" -lz

. "$here/bench/lib.sh"

# ---- 1. raw extract vs cp
echo "making a 1 GiB raw archive ..." >&2
mkdir src
head -c $(((1 << 30) / 40)) /dev/urandom >src/block
for i in $(seq -w 1 40); do cp src/block "src/f$i.bin"; printf '%s' "$i" >>"src/f$i.bin"; done
rm src/block
(cd src && "$trowel" create -q -t vpp -O version=3 -o ../raw.vpp_pc -- *)
rawsize=$(stat -c %s raw.vpp_pc)
echo "raw extract vs cp -r of the sources ..." >&2
PAIR_CHECK="diff -r src o.run >/dev/null || { echo 'bench_vpp: extract differs' >&2; exit 1; }"
pair rawr "'$trowel' extract -q raw.vpp_pc -C o.run" "cp -r src o.run"
PAIR_CHECK=""
rawr=("$A_WALL" "$A_CPU" "$B_WALL" "$B_CPU")
echo "raw extract vs cp of the archive ..." >&2
pair raw "'$trowel' extract -q raw.vpp_pc -C o.run" "cp raw.vpp_pc o.run"
raw=("$A_WALL" "$A_CPU" "$B_WALL" "$B_CPU")
raw_rss=$(peak_kib "'$trowel' extract -q raw.vpp_pc -C o.run")
cp_rss=$(peak_kib "cp raw.vpp_pc o.run")
rm -rf o.run raw.vpp_pc src
raw_report() {
    echo "$(nproc) CPUs; $(uname -sr); load $(cut -d' ' -f1-3 /proc/loadavg); medians of $runs alternating runs"
    echo "1. raw v3 extract, $rawsize bytes (40 files)"
    echo "  trowel extract   ${rawr[0]} s wall  ${rawr[1]} s cpu   vs  cp -r of the sources ${rawr[2]} s wall  ${rawr[3]} s cpu"
    echo "  trowel / cp -r: $(ratio "${rawr[0]}" "${rawr[2]}") (wall time)"
    echo "  trowel extract   ${raw[0]} s wall ($(mbps "$rawsize" "${raw[0]}") MB/s)  ${raw[1]} s cpu  peak RSS $raw_rss KiB"
    echo "  cp of archive    ${raw[2]} s wall ($(mbps "$rawsize" "${raw[2]}") MB/s)  ${raw[3]} s cpu  peak RSS $cp_rss KiB"
    echo "  trowel throughput / cp's: $(ratio "${raw[2]}" "${raw[0]}")"
}
if [[ -n ${BENCH_RAW_ONLY:-} ]]; then
    raw_report
    exit 0
fi

# ---- 2. list 100,000 entries
echo "list of 100,000 entries ..." >&2
python3 - many.vpp_pc <<'PY'
import struct, sys
n = 100000
names = [("entry_%06d.rfgzone_pc" % i).encode() for i in range(n)]
table = b"".join(x + b"\0" for x in names)
def up(v, a): return (v + a - 1) // a * a
def vhash(s):
    h = 0
    for c in s.lower():
        h = ((h << 6) | (h >> 26)) & 0xFFFFFFFF
        h ^= c
    return h
dirs = bytearray()
off = 0
for i, x in enumerate(names):
    dirs += struct.pack("<7I", off, 0, i, vhash(x), 1, 0xFFFFFFFF, 0)
    off += len(x) + 1
data_start = 2048 + up(len(dirs), 2048) + up(len(table), 2048)
data = bytearray(n)  # condensed, alignment 1: one byte each
h = bytearray(2048)
struct.pack_into("<II", h, 0, 0x51890ACE, 3)
struct.pack_into("<8I", h, 0x14C, 2, 0, n, data_start + len(data), len(dirs), len(table), len(data), 0xFFFFFFFF)
with open(sys.argv[1], "wb") as f:
    f.write(h); f.write(dirs.ljust(up(len(dirs), 2048), b"\0")); f.write(table.ljust(up(len(table), 2048), b"\0")); f.write(data)
PY
for ((i = 0; i < runs; i++)); do time_one list.t "'$trowel' list many.vpp_pc"; done
list_wall=$(cut -d' ' -f1 list.t | median); list_cpu=$(cut -d' ' -f2 list.t | median)
[[ $("$trowel" list many.vpp_pc | wc -l) == 100000 ]] || { echo "bench_vpp: list lost entries" >&2; exit 1; }
rm -f many.vpp_pc

# ---- the decoded input of 3 and 4: bench_codecs.sh's 26.5 MB, four times
# (106 MB: long enough that a run's fixed costs, a few milliseconds to
# start a process and open the archive, do not decide the ratio)
mkdir in
mixed_input in/quarter.bin || { echo "bench_vpp: could not make the input" >&2; exit 1; }
cat in/quarter.bin in/quarter.bin in/quarter.bin in/quarter.bin >in/input.bin
rm in/quarter.bin
size=$(stat -c %s in/input.bin)

# ---- 3. compressed+condensed vs zlib inflate of the same stream
echo "compressed+condensed extract vs inflate ..." >&2
(cd in && "$trowel" create -q -t vpp -O compressed=1 -O condensed=1 -O level=1 -o ../cc.vpp_pc input.bin)
tail -c +6145 cc.vpp_pc >cc.z # the stream starts at 6144 (one entry)
pair cc "'$trowel' extract -q cc.vpp_pc -C o.run" "./zpeer cc.z o.run"
cc=("$A_WALL" "$A_CPU" "$B_WALL" "$B_CPU")
rm -rf o.run && mkdir o.run && "$trowel" extract -q cc.vpp_pc -C o.run && cmp in/input.bin o.run/input.bin
rm -rf o.run

# ---- 4. LZ4 (v17) vs lz4 -d
echo "v17 LZ4 extract vs lz4 -d ..." >&2
(cd in && "$trowel" create -q -t vpp -O version=17 -O compressed=1 -o ../l.vpp_pc input.bin 2>/dev/null)
"$trowel" list --json l.vpp_pc >l.json
python3 - <<'PY'
import json
e = json.load(open("l.json"))["entries"][0]
d = open("l.vpp_pc", "rb").read()
open("frame.lz4", "wb").write(d[e["offset"]:e["offset"] + e["packed_size"]])
PY
pair lz "'$trowel' extract -q l.vpp_pc -C o.run" "lz4 -q -d -f frame.lz4 o.run"
lz=("$A_WALL" "$A_CPU" "$B_WALL" "$B_CPU")
rm -rf o.run && mkdir o.run && "$trowel" extract -q l.vpp_pc -C o.run && cmp in/input.bin o.run/input.bin
rm -rf o.run

cat <<OUT

$(raw_report)
2. list, 100,000 entries: $list_wall s wall, $list_cpu s cpu
3. compressed+condensed extract, $size bytes decoded from $(stat -c %s cc.z)
  trowel extract   ${cc[0]} s wall  ${cc[1]} s cpu
  zlib inflate     ${cc[2]} s wall  ${cc[3]} s cpu
  trowel throughput / zlib's: wall $(ratio "${cc[2]}" "${cc[0]}"), cpu $(ratio "${cc[3]}" "${cc[1]}")
4. v17 LZ4 extract, $size bytes decoded from $(stat -c %s frame.lz4)
  trowel extract   ${lz[0]} s wall  ${lz[1]} s cpu
  lz4 -d           ${lz[2]} s wall  ${lz[3]} s cpu
  trowel throughput / lz4's: wall $(ratio "${lz[2]}" "${lz[0]}"), cpu $(ratio "${lz[3]}" "${lz[1]}")
OUT
