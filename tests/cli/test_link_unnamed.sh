#!/usr/bin/env bash
# An output written as an unnamed file (O_TMPFILE) gets its name from
# linkat(AT_EMPTY_PATH) where the kernel allows it, and through
# /proc/self/fd where it refuses (kernels before 6.10 without
# CAP_DAC_READ_SEARCH): once refused, a run goes through /proc for the rest
# of its files instead of failing a call per file. A preloaded linkat logs
# each call (and, with REFUSE_FLINK, refuses the direct kind with ENOENT as
# such kernels do); the outputs are the same either way.
. "${BASH_SOURCE%/*}/lib.sh"

CC_BIN=$(command -v cc || command -v gcc || true)
if [ -z "$CC_BIN" ] || [ ! -d /proc/self/fd ]; then
    skip "no C compiler or no /proc: how unnamed files are linked"
    finish
fi
cat >"$T_ROOT/lib/log_linkat.c" <<'CEOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
typedef int (*linkat_fn)(int, const char *, int, const char *, int);
static void note(const char *what)
{
    const char *log = getenv("LINKAT_LOG");
    int fd = log ? open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (fd >= 0) {
        (void)write(fd, what, strlen(what));
        close(fd);
    }
}
int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags)
{
    linkat_fn real = (linkat_fn)dlsym(RTLD_NEXT, "linkat");
    if (flags & AT_EMPTY_PATH) {
        if (getenv("REFUSE_FLINK")) {
            note("direct refused\n");
            errno = ENOENT;
            return -1;
        }
        int r = real(olddirfd, oldpath, newdirfd, newpath, flags);
        note(r == 0 ? "direct ok\n" : "direct failed\n");
        return r;
    }
    int r = real(olddirfd, oldpath, newdirfd, newpath, flags);
    if (strncmp(oldpath, "/proc/self/fd/", 14) == 0)
        note(r == 0 ? "proc ok\n" : "proc failed\n");
    return r;
}
CEOF
if ! "$CC_BIN" -shared -fPIC -o "$T_ROOT/lib/log_linkat.so" "$T_ROOT/lib/log_linkat.c" -ldl 2>/dev/null; then
    fail "the linkat shim did not build"
    finish
fi
# with_shim LOG CMD...: CMD with the shim preloaded, its calls logged to LOG.
with_shim() {
    local log=$1
    shift
    rm -f "$log"
    # (An ASan build checks that its runtime is loaded first: not here.)
    ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" LINKAT_LOG="$log" \
        LD_PRELOAD="$T_ROOT/lib/log_linkat.so" "$@"
}
calls() { grep -c -x "$2" "$1" 2>/dev/null || true; } # LOG LINE: how many

mkdir src
for i in $(seq 1 40); do printf 'file %d\n' "$i" >"src/f$i.txt"; done
run "$TROWEL" create -t vpp -o t.vpp -C src $(cd src && ls)
assert_rc "create the packfile" 0

# ---- refused: one direct attempt, then /proc for every file
RUN_OUT=$(REFUSE_FLINK=1 with_shim refused.log "$TROWEL" extract -C out.refused t.vpp 2>&1)
RC=$?
assert_rc "extract where the direct link is refused" 0
assert_eq "one direct attempt in the run, not one per file" 1 "$(calls refused.log 'direct refused')"
assert_eq "every file linked through /proc" 40 "$(calls refused.log 'proc ok')"
assert_eq "every file there, as packed" "" "$(diff -r src out.refused)"

# ---- replacing (--force over files that differ) goes the same way
for f in out.refused/*; do printf 'x' >>"$f"; done
RUN_OUT=$(REFUSE_FLINK=1 with_shim replaced.log "$TROWEL" extract --force -C out.refused t.vpp 2>&1)
RC=$?
assert_rc "--force where the direct link is refused" 0
assert_eq "replacing: one direct attempt" 1 "$(calls replaced.log 'direct refused')"
assert_eq "replacing: every file named through /proc" 40 "$(calls replaced.log 'proc ok')"
assert_eq "replaced files hold the entries" "" "$(diff -r src out.refused)"
assert_eq "no temporary left" "" "$(find out.refused -name '.trowel-*' | head -1)"

# ---- allowed: every file named directly, /proc never walked
RUN_OUT=$(with_shim allowed.log "$TROWEL" extract -C out.allowed t.vpp 2>&1)
RC=$?
assert_rc "extract with the kernel's own answer" 0
assert_eq "the same files either way" "" "$(diff -r out.refused out.allowed)"
if [ "$(calls allowed.log 'direct ok')" -gt 0 ]; then
    assert_eq "this kernel allows it: every file named directly" 40 "$(calls allowed.log 'direct ok')"
    assert_eq "and /proc is never walked" 0 "$(calls allowed.log 'proc ok')"
else
    skip "this kernel refuses linkat(AT_EMPTY_PATH) here: the direct path is not exercised"
fi

finish
