# shellcheck shell=bash
# Timing helpers for the bench/ scripts (sourced by bench_asm.sh,
# bench_vpp.sh and bench_codecs.sh). The caller sets `runs`
# and works in a scratch folder; o.run is the output every timed command
# writes, removed (and `sync`ed, untimed) before each run so that neither
# side pays for the other's writeback.
#   pair NAME CMD_A CMD_B   one warm-up each (followed by $PAIR_CHECK, a
#                           command that checks o.run, when set), then
#                           `runs` alternating runs; sets A_WALL A_CPU
#                           B_WALL B_CPU (medians, seconds)
#   ratio A B               A / B to three places
#   mbps BYTES SECONDS      MB/s
#   peak_kib CMD            peak RSS of CMD in KiB (/usr/bin/time)

TIMEFORMAT='%3R %3U %3S'
median() { sort -n | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                                printf "%.4f\n", m }'; }
time_one() { # OUT_FILE COMMAND: appends "wall cpu"
    rm -rf o.run
    sync
    local t
    t=$( { time eval "$2" >/dev/null 2>&1; } 2>&1 )
    awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%s %.3f\n", a[1], a[2] + a[3] }' >>"$1"
}
pair() {
    rm -f "$1.a" "$1.b"
    local cmd
    for cmd in "$2" "$3"; do
        rm -rf o.run
        eval "$cmd" >/dev/null 2>&1
        [[ -z ${PAIR_CHECK:-} ]] || eval "$PAIR_CHECK"
    done
    local i
    for ((i = 0; i < runs; i++)); do
        if ((i % 2)); then time_one "$1.b" "$3"; time_one "$1.a" "$2"
        else time_one "$1.a" "$2"; time_one "$1.b" "$3"; fi
    done
    A_WALL=$(cut -d' ' -f1 "$1.a" | median); A_CPU=$(cut -d' ' -f2 "$1.a" | median)
    B_WALL=$(cut -d' ' -f1 "$1.b" | median); B_CPU=$(cut -d' ' -f2 "$1.b" | median)
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
mbps() { awk -v s="$1" -v t="$2" 'BEGIN { printf "%.1f", s / t / 1e6 }'; }
peak_kib() {
    rm -rf o.run
    /usr/bin/time -f '%M' -o rss.txt bash -c "$1" >/dev/null 2>&1
    cat rss.txt
}
