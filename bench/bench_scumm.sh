#!/usr/bin/env bash
# bench/bench_scumm.sh [BUILD_DIR] [CORPUS_DIR]
#
# SCUMM costumes: every costume of the corpus (scumm/openquest/*.cost,
# scumm/road7/*.akos; ScummC output, 89 pictures in all), each step run over
# all of them BENCH_REPEAT times (default 50) per measurement, medians of
# BENCH_RUNS measurements (default 5):
#   decode: trowel info (opening decodes every picture of the costume)
#   png:    trowel convert --to png -o DIR (pictures, sheet, atlas)
#   gif:    trowel convert --to gif -o DIR (every animation and direction)
# Reports pictures per second (pictures decoded, counting every run) and
# the wall time of one pass over all costumes. Each run is a process, so
# the figures include start-up: these costumes are small.
#
# Then every game of the corpus (scumm/*/*.001): the wall time of
#   game png: trowel convert GAME.001 --to png -o DIR (every costume, room palettes)
#   game gif: trowel convert GAME.001 --to gif -o DIR
# median of BENCH_RUNS measurements of BENCH_REPEAT conversions each.
set -euo pipefail

build=${1:-build}
corpus=${2:-$(cd "$(dirname "$0")/../.." && pwd)/shared/corpus}
runs=${BENCH_RUNS:-5}
repeat=${BENCH_REPEAT:-50}
build=$(cd "$build" && pwd)
trowel=$build/trowel
[[ -x $trowel ]] || { echo "bench_scumm: $trowel is missing (build first)" >&2; exit 2; }
mapfile -t costumes < <(ls "$corpus"/scumm/*/*.cost "$corpus"/scumm/*/*.akos 2>/dev/null)
[[ ${#costumes[@]} -gt 0 ]] || { echo "bench_scumm: no costumes under $corpus/scumm" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-scumm.XXXXXX")
trap 'rm -rf "$work"' EXIT

pictures=0
for c in "${costumes[@]}"; do
    n=$("$trowel" info "$c" | awk '$1 == "pictures:" { print $2 }')
    pictures=$((pictures + n))
done

now() { date +%s.%N; }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

measure() { # STEP: seconds for BENCH_REPEAT passes over every costume
    local step=$1 start end
    start=$(now)
    for ((r = 0; r < repeat; r++)); do
        for c in "${costumes[@]}"; do
            case $step in
            decode) "$trowel" info "$c" >/dev/null ;;
            png) rm -rf "$work/out" && "$trowel" convert "$c" --to png -o "$work/out" ;;
            gif) rm -rf "$work/out" && "$trowel" convert "$c" --to gif -o "$work/out" ;;
            esac
        done
    done
    end=$(now)
    echo "$end - $start" | bc -l
}

printf 'costumes: %d, pictures: %d, repeat %d, runs %d\n' "${#costumes[@]}" "$pictures" \
    "$repeat" "$runs"
printf '%-8s %14s %16s\n' step "pictures/s" "ms per pass"
for step in decode png gif; do
    secs=$(for ((i = 0; i < runs; i++)); do measure "$step"; done | median)
    pps=$(echo "$pictures * $repeat / $secs" | bc -l)
    ms=$(echo "$secs * 1000 / $repeat" | bc -l)
    printf '%-8s %14.0f %16.1f\n' "$step" "$pps" "$ms"
done

mapfile -t games < <(ls "$corpus"/scumm/*/*.001 2>/dev/null)
measure_game() { # GAME TARGET: seconds for BENCH_REPEAT conversions
    local game=$1 target=$2 start end
    start=$(now)
    for ((r = 0; r < repeat; r++)); do
        rm -rf "$work/game" && "$trowel" convert "$game" --to "$target" -o "$work/game"
    done
    end=$(now)
    echo "$end - $start" | bc -l
}
echo
printf '%-16s %9s %9s %12s %12s\n' game costumes pictures "ms png" "ms gif"
for game in "${games[@]}"; do
    n=$("$trowel" list "$game" | grep -c '\.\(cost\|akos\)$' || true)
    rm -rf "$work/game" && "$trowel" convert "$game" --to png -o "$work/game"
    pics=$(find "$work/game" -name 'pic_*.png' | wc -l)
    png=$(for ((i = 0; i < runs; i++)); do measure_game "$game" png; done | median)
    gif=$(for ((i = 0; i < runs; i++)); do measure_game "$game" gif; done | median)
    printf '%-16s %9d %9d %12.1f %12.1f\n' "$(basename "$game")" "$n" "$pics" \
        "$(echo "$png * 1000 / $repeat" | bc -l)" "$(echo "$gif * 1000 / $repeat" | bc -l)"
done
