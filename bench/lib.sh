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
#   take N FILE...          the files over and over until N bytes
#   mixed_input FILE        the codec benchmarks' 26,500,000-byte input
#                           (needs openssl); status 1 if it came out short

TIMEFORMAT='%3R %3U %3S'
median() { sort -n | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                                                printf "%.4f\n", m }'; }
# BENCH_REPEAT=R (default 1): each timed run is R back-to-back runs of the
# command (o.run removed before each, on both sides alike), and the times
# are divided by R: for commands of a few milliseconds, whose single times
# the shell's millisecond clock cannot tell apart.
time_one() { # OUT_FILE COMMAND: appends "wall cpu"
    rm -rf o.run
    sync
    local t reps=${BENCH_REPEAT:-1}
    t=$( { time eval "for ((rep = 0; rep < $reps; rep++)); do rm -rf o.run; $2; done" \
        >/dev/null 2>&1; } 2>&1 )
    awk -v t="$t" -v r="$reps" 'BEGIN { split(t, a, " "); printf "%.5f %.5f\n", a[1] / r, (a[2] + a[3]) / r }' >>"$1"
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

take() {
    local n=$1
    shift
    { while cat -- "$@"; do :; done; } 2>/dev/null | head -c "$n"
}
# The same bytes on any machine with the same files: 9,000,000 of licence
# texts, 10,000,000 of machine code, 2,000,000 zeros, 3,000,000 that do not
# compress (AES-128-CTR of zeros under a fixed key), 2,500,000 of text.
mixed_input() {
    local libdir=/usr/lib/x86_64-linux-gnu
    {
        take 9000000 $(ls /usr/share/common-licenses/* | sort) \
            $(ls /usr/share/doc/*/copyright 2>/dev/null | sort)
        take 10000000 $(ls "$libdir/libc.so.6" "$libdir/libcrypto.so.3" "$libdir/libstdc++.so.6" \
            2>/dev/null)
        head -c 2000000 /dev/zero
        head -c 3000000 /dev/zero | openssl enc -aes-128-ctr -nosalt \
            -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 2>/dev/null
        take 2500000 $(ls /usr/share/common-licenses/* | sort)
    } >"$1"
    (($(stat -c %s "$1") == 26500000))
}
