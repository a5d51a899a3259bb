#!/usr/bin/env bash
# bench/bench_view.sh [BUILD_DIR]
#
# trowel view's two speed targets (issue 19), measured, not asserted:
#   first paint  a packfile of 10,000 entries opened in the page (headless
#                chromium, playwright-core): milliseconds from navigation to
#                the tree's first rows drawn, and to the first preview ready
#                (the file's own preview, which lists its entries);
#                target < 1000 ms.
#   previews     the server side of each kind of preview (curl, timed by
#                curl itself: time to the last byte), for entries under
#                10 MB: a costume's animations, a background picture, a GRF
#                world and a terrain in glTF, a sample as WAV, a scene as
#                JSON; target < 200 ms each.
# Medians of BENCH_RUNS runs (default 7). Peers: none does this; the floor
# is the browser's own load of the page.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
runs=${BENCH_RUNS:-7}
trowel=$build/trowel
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
pid=
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# 10,000 small files into one packfile.
mkdir -p "$work/src"
python3 - "$work/src" <<'PY'
import os, sys
for i in range(10000):
    d = os.path.join(sys.argv[1], "dir%02d" % (i % 50))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "file%05d.txt" % i), "w") as f:
        f.write(("entry %d\n" % i) * (1 + i % 40))
PY
(cd "$work/src" && find . -type f | sed 's|^\./||' | sort >"$work/list")
"$trowel" create -q -t vpp -o "$work/big.vpp_pc" -C "$work/src" $(cat "$work/list") >/dev/null
echo "packfile: $("$trowel" info "$work/big.vpp_pc" | grep -m1 -i files) ($(stat -c %s "$work/big.vpp_pc") bytes)"

start_view() {
    "$trowel" view --no-browser "$@" >"$work/url" 2>/dev/null &
    pid=$!
    for _ in $(seq 100); do [ -s "$work/url" ] && break; sleep 0.1; done
    url=$(head -n 1 "$work/url")
}

start_view "$work/big.vpp_pc"
node "$here/bench/view_paint.js" "$url" "$runs" >"$work/paint"
kill $pid; wait $pid 2>/dev/null || true
echo "first paint, 10,000 entries ($runs runs, median ms): tree $(cut -d' ' -f1 "$work/paint" | median)," \
     "first preview $(cut -d' ' -f2 "$work/paint" | median) (target < 1000)"

# Previews of each kind, server side.
export TROWEL_SAMPLES=$work/samples
"$here/scripts/run-samples.sh" "$build" >/dev/null 2>&1
S=$TROWEL_SAMPLES
C=$here/../shared/corpus
files=("$S/cine/assets/ROOM.PI1" "$S/cine/assets/BOOM.AMI" "$S/tres/world.grf" "$S/tres/hills.wtd" "$S/valve/intro.bvcd")
[ -f "$C/scumm/openquest/zif.cost" ] && files+=("$C/scumm/openquest/zif.cost")
start_view "${files[@]}"
token=${url#*token=}
base=${url%%/\?*}
timed() { # NAME QUERY
    local i t=()
    for ((i = 0; i < runs; i++)); do
        t+=("$(curl -s -o /dev/null -w '%{time_total}' --cookie "trowel_token=$token" "$base/api/$2")")
    done
    printf '  %-34s %6.1f ms\n' "$1" "$(printf '%s\n' "${t[@]}" | median | awk '{ print $1 * 1000 }')"
}
echo "previews, server side ($runs runs, median; target < 200 ms):"
timed "background (cine-bg) to png" "convert?n=0&to=png"
timed "sample (cine-sample) to wav" "convert?n=1&to=wav"
timed "GRF world to glb" "convert?n=2&to=glb"
timed "terrain (128x128) to glb" "convert?n=3&to=glb"
timed "scene (bvcd) to json-full" "convert?n=4&to=json-full"
if [ ${#files[@]} -gt 5 ]; then
    # The first request converts every animation (a folder), later ones are
    # served from that conversion: both are shown.
    t=$(curl -s -o /dev/null -w '%{time_total}' --cookie "trowel_token=$token" "$base/api/preview?n=0")
    first=$(curl -s -o /dev/null -w '%{time_total}' --cookie "trowel_token=$token" "$base/api/convert?n=5&to=gif")
    printf '  %-34s %6.1f ms (first, all 52 GIFs)\n' "costume (zif.cost) to gif" "$(awk -v t="$first" 'BEGIN { print t * 1000 }')"
    timed "  then one GIF of it" "convert?n=5&to=gif&file=anim004_W.gif"
fi
