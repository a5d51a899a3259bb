#!/usr/bin/env bash
# Interrupted runs leave nothing behind: SIGINT, SIGTERM and even SIGKILL in
# the middle of writing an output leave its folder empty (the output is an
# unnamed file until it is complete), and the exit status shows the signal.
. "${BASH_SOURCE%/*}/lib.sh"

# Background jobs of a non-interactive shell ignore SIGINT; job control
# gives them the default dispositions, as a terminal would.
set -m

# 24 MB of noise keeps the Delphine packer busy for about a second.
head -c 24000000 /dev/urandom >noise.bin

# wait_for_output PID: waits (up to 20 s) until PID holds an output open in
# out/ (an unnamed file shows as "out/#NNN (deleted)" in /proc); returns 1
# if it never does.
wait_for_output() {
    local pid=$1 tries=0 fd target
    while [ $tries -lt 2000 ]; do
        for fd in /proc/"$pid"/fd/*; do
            target=$(readlink "$fd" 2>/dev/null) || continue
            case "$target" in
            "$WORK/out/"*) return 0 ;;
            esac
        done
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.01
        tries=$((tries + 1))
    done
    return 1
}

interrupt_with() { # SIGNAL EXPECTED-STATUS
    rm -rf out && mkdir out
    "$TROWEL" compress -c bytekiller -o out/noise.bk noise.bin 2>"$T_ROOT/lib/err-$1" &
    local pid=$!
    if ! wait_for_output "$pid"; then
        wait "$pid"
        fail "$1: trowel never opened its output" "status $?" "$(cat "$T_ROOT/lib/err-$1")"
        return
    fi
    assert_dir_empty "$1 mid-way: nothing visible under any name" out
    kill -s "$1" "$pid"
    wait "$pid"
    RC=$?
    ERR=$(cat "$T_ROOT/lib/err-$1")
    assert_rc "$1: died of the signal" "$2"
    assert_dir_empty "$1: nothing left behind, no hidden temporary either" out
}

if [ -d /proc/self/fd ]; then
    interrupt_with INT 130
    interrupt_with TERM 143
    interrupt_with KILL 137
    interrupt_with HUP 129
else
    skip "no /proc: interrupts"
fi

# ---- the named fallback: where the file system has no unnamed files (here
# a preloaded openat refuses O_TMPFILE as such file systems do), the output
# has a short hidden name while it is written, and SIGINT/SIGTERM/SIGHUP
# remove it before trowel dies.
if [ -d /proc/self/fd ] && { command -v cc || command -v gcc; } >/dev/null 2>&1; then
    if build_openat_shim no_tmpfile 'if ((flags & O_TMPFILE) == O_TMPFILE) { errno = EOPNOTSUPP; return -1; }'; then
        named_interrupt_with() { # SIGNAL EXPECTED-STATUS
            rm -rf out && mkdir out
            # (An ASan build checks that its runtime is loaded first: not here.)
            ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
                LD_PRELOAD="$T_ROOT/lib/no_tmpfile.so" "$TROWEL" compress -c bytekiller -o out/noise.bk noise.bin &
            local pid=$! tries=0
            while [ -z "$(ls -A out)" ] && [ $tries -lt 2000 ] && kill -0 "$pid" 2>/dev/null; do
                sleep 0.01
                tries=$((tries + 1))
            done
            assert_eq "named $1 mid-way: a short hidden temporary" ".trowel-$pid-0" "$(ls -A out)"
            kill -s "$1" "$pid"
            wait "$pid"
            RC=$?
            ERR=""
            assert_rc "named $1: died of the signal" "$2"
            assert_dir_empty "named $1: the temporary was removed" out
        }
        named_interrupt_with INT 130
        named_interrupt_with TERM 143
        named_interrupt_with HUP 129
    else
        fail "the O_TMPFILE-refusing shim did not build"
    fi
else
    skip "no C compiler or no /proc: the named fallback under signals"
fi

# ---- uninterrupted, the same run completes and round-trips
run "$TROWEL" compress -c bytekiller -o out/noise.bk noise.bin
assert_rc "uninterrupted compress" 0
run "$TROWEL" decompress -c bytekiller -o out/noise.back out/noise.bk
assert_rc "uninterrupted decompress" 0
assert_same_file "round trip" noise.bin out/noise.back
assert_eq "only the two outputs" "noise.back noise.bk" "$(ls -A out | tr '\n' ' ' | sed 's/ $//')"

finish
