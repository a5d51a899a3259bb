#!/usr/bin/env bash
# bench/bench_asm.sh [BUILD_DIR]
#
# Volition ASM files (.asm_pc), side by side with the physical floor, cp of
# the same bytes (run it under the heavy-job lock:
# flock /tmp/trowel-heavy.lock bash bench/bench_asm.sh build). The input is
# a large ASM v12 made here from JSON (bench/gen_asm.py; BENCH_ASM_CONTAINERS
# containers, default 1,000, of BENCH_ASM_PRIMITIVES primitives, default 100 (issue 20):
# 100,000 primitives, ~5 MB of ASM, ~35 MB of JSON):
#   1. parse: `trowel info` of the ASM              vs  cp of the ASM;
#   2. ASM -> JSON: `trowel convert --to json`      vs  cp of that JSON;
#   3. JSON -> ASM: `trowel create -t asm --manifest` vs  cp of that JSON
#      (its output is checked byte for byte against the ASM it came from).
# Peak RSS of 2 and 3 from /usr/bin/time. Everything is made under $TMPDIR
# (default /tmp) and removed at the end. Timing as bench_vpp.sh
# (bench/lib.sh): medians of BENCH_RUNS (default 9) alternating runs after
# one warm-up, wall and CPU time, `sync` before each; ratios are trowel/cp
# time, wall and CPU (on a shared machine the CPU ratio is the steadier).
set -euo pipefail

build=${1:-build}
runs=${BENCH_RUNS:-9}
# Each timed run is BENCH_REPEAT (default 10) commands back to back, its
# times divided by that: cp of the 5 MB ASM takes about 2 ms, the shell's
# clock counts milliseconds.
BENCH_REPEAT=${BENCH_REPEAT:-10}
containers=${BENCH_ASM_CONTAINERS:-1000}
prims=${BENCH_ASM_PRIMITIVES:-100}
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
trowel=$build/trowel
[[ -x $trowel ]] || { echo "bench_asm: $trowel is missing (build first)" >&2; exit 2; }
for tool in python3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "bench_asm: $tool is not installed" >&2; exit 2; }
done
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"

# CPU times are counted in milliseconds: cp of a small file may show none.
cpu_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else printf "n/a (cp under 1 ms)" }'; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-asm.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "making an ASM of $containers containers x $prims primitives ..." >&2
python3 "$here/bench/gen_asm.py" gen.json "$containers" "$prims"
"$trowel" create -q -t asm --manifest gen.json -o big.asm_pc
rm gen.json
"$trowel" convert -q --to json big.asm_pc -o big.json
asm_size=$(stat -c %s big.asm_pc)
json_size=$(stat -c %s big.json)

echo "parse (info) vs cp ..." >&2
pair parse "'$trowel' info big.asm_pc" "cp big.asm_pc o.run"
parse=("$A_WALL" "$A_CPU" "$B_WALL" "$B_CPU")

echo "ASM -> JSON vs cp ..." >&2
pair tojson "'$trowel' convert -q --to json big.asm_pc -o o.run" "cp big.json o.run"
tojson=("$A_WALL" "$A_CPU" "$B_WALL" "$B_CPU")
tojson_rss=$(peak_kib "'$trowel' convert -q --to json big.asm_pc -o o.run")

echo "JSON -> ASM vs cp ..." >&2
pair fromjson "'$trowel' create -q -t asm --manifest big.json -o o.run" "cp big.json o.run"
fromjson=("$A_WALL" "$A_CPU" "$B_WALL" "$B_CPU")
fromjson_rss=$(peak_kib "'$trowel' create -q -t asm --manifest big.json -o o.run")
rm -rf o.run
"$trowel" create -q -t asm --manifest big.json -o o.run
cmp big.asm_pc o.run || { echo "bench_asm: the rebuilt ASM differs" >&2; exit 1; }

cat <<OUT

$(nproc) CPUs; $(uname -sr); load $(cut -d' ' -f1-3 /proc/loadavg); medians of $runs alternating runs, each of $BENCH_REPEAT commands back to back
ASM v12: $containers containers, $((containers * prims)) primitives; $asm_size bytes of ASM, $json_size bytes of JSON
1. parse (trowel info)
  trowel info      ${parse[0]} s wall ($(mbps "$asm_size" "${parse[0]}") MB/s of ASM)  ${parse[1]} s cpu
  cp of the ASM    ${parse[2]} s wall  ${parse[3]} s cpu
  trowel time / cp's: $(ratio "${parse[0]}" "${parse[2]}")
  trowel CPU / cp's: $(cpu_ratio "${parse[1]}" "${parse[3]}")
2. ASM -> JSON (convert --to json)
  trowel convert   ${tojson[0]} s wall ($(mbps "$json_size" "${tojson[0]}") MB/s of JSON)  ${tojson[1]} s cpu  peak RSS $tojson_rss KiB
  cp of the JSON   ${tojson[2]} s wall  ${tojson[3]} s cpu
  trowel time / cp's: $(ratio "${tojson[0]}" "${tojson[2]}")
  trowel CPU / cp's: $(cpu_ratio "${tojson[1]}" "${tojson[3]}")
3. JSON -> ASM (create -t asm --manifest), byte-identical
  trowel create    ${fromjson[0]} s wall ($(mbps "$json_size" "${fromjson[0]}") MB/s of JSON)  ${fromjson[1]} s cpu  peak RSS $fromjson_rss KiB
  cp of the JSON   ${fromjson[2]} s wall  ${fromjson[3]} s cpu
  trowel time / cp's: $(ratio "${fromjson[0]}" "${fromjson[2]}")
  trowel CPU / cp's: $(cpu_ratio "${fromjson[1]}" "${fromjson[3]}")
OUT
