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
    skip_all "no C compiler or no /proc: how unnamed files are linked"
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
    int saved = errno;
    const char *log = getenv("LINKAT_LOG");
    int fd = log ? open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : -1;
    if (fd >= 0) {
        (void)write(fd, what, strlen(what));
        close(fd);
    }
    errno = saved;
}
int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags)
{
    linkat_fn real = (linkat_fn)dlsym(RTLD_NEXT, "linkat");
    const char *plant = getenv("PLANT_LINK"); /* a link appears under the name just now */
    if (plant)
        (void)symlinkat(plant, newdirfd, newpath);
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
    exit
fi
# Where the file system has no unnamed files, outputs are named temporaries
# and nothing here applies.
cat >"$T_ROOT/lib/has_tmpfile.c" <<'CEOF'
#define _GNU_SOURCE
#include <fcntl.h>
int main(int argc, char **argv)
{
    return argc > 1 && openat(AT_FDCWD, argv[1], O_TMPFILE | O_RDWR, 0600) >= 0 ? 0 : 1;
}
CEOF
if ! "$CC_BIN" -o "$T_ROOT/lib/has_tmpfile" "$T_ROOT/lib/has_tmpfile.c" 2>/dev/null; then
    fail "the O_TMPFILE probe did not build"
    finish
    exit
fi
if ! "$T_ROOT/lib/has_tmpfile" .; then
    skip_all "this file system has no unnamed files (O_TMPFILE): outputs use named temporaries"
fi
# with_shim LOG REFUSE CMD...: CMD with the shim preloaded, its calls logged
# to LOG; REFUSE=1 makes the shim refuse the direct link.
with_shim() {
    local log=$1 refuse=$2
    shift 2
    rm -f "$log"
    # (An ASan build checks that its runtime is loaded first: not here.)
    env ${refuse:+REFUSE_FLINK=1} LINKAT_LOG="$log" LD_PRELOAD="$T_ROOT/lib/log_linkat.so" \
        ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" "$@"
}
calls() { # LOG LINE: how many times LOG holds LINE (0 without a log)
    [ -f "$1" ] || { echo 0; return; }
    grep -c -x "$2" "$1" || true
}

mkdir src
for i in $(seq 1 40); do printf 'file %d\n' "$i" >"src/f$i.txt"; done
run "$TROWEL" create -t vpp -o t.vpp -C src $(cd src && ls)
assert_rc "create the packfile" 0

# ---- refused: one direct attempt, then /proc for every file
run with_shim refused.log 1 "$TROWEL" extract -C out.refused t.vpp
assert_rc "extract where the direct link is refused" 0
assert_eq "one direct attempt in the run, not one per file" 1 "$(calls refused.log 'direct refused')"
assert_eq "every file linked through /proc" 40 "$(calls refused.log 'proc ok')"
assert_eq "every file there, as packed" "" "$(diff -r src out.refused)"

# ---- replacing (--force over files that differ) goes the same way
for f in out.refused/*; do printf 'x' >>"$f"; done
run with_shim replaced.log 1 "$TROWEL" extract --force -C out.refused t.vpp
assert_rc "--force where the direct link is refused" 0
assert_eq "replacing: one direct attempt" 1 "$(calls replaced.log 'direct refused')"
assert_eq "replacing: every file named through /proc" 40 "$(calls replaced.log 'proc ok')"
assert_eq "replaced files hold the entries" "" "$(diff -r src out.refused)"
assert_eq "no temporary left" "" "$(find out.refused -name '.trowel-*' | head -1)"

# ---- a name that appears just before the link (here a symbolic link to a
# file outside) is refused either way, and what it leads to is untouched
mkdir one && printf 'entry\n' >one/a.txt
run "$TROWEL" create -t vpp -o one.vpp -C one a.txt
assert_rc "create a one-file packfile" 0
for refuse in 1 ""; do
    how=${refuse:+refused}
    how=${how:-allowed}
    rm -rf "planted.$how" && mkdir "planted.$how"
    printf 'keep me\n' >outside.txt
    run with_shim "planted.$how.log" "$refuse" env PLANT_LINK="$WORK/outside.txt" \
        "$TROWEL" extract -C "planted.$how" one.vpp
    assert_rc "a planted name ($how): refused" 1
    assert_contains "a planted name ($how): said to exist" "$ERR" "exists"
    assert_eq "a planted name ($how): the link is left as it was" "$WORK/outside.txt" \
        "$(readlink "planted.$how/a.txt")"
    assert_eq "a planted name ($how): what it leads to is untouched" "keep me" "$(cat outside.txt)"
    assert_eq "a planted name ($how): nothing else there" "a.txt" "$(ls -A "planted.$how")"
done

# ---- the kernel's own answer: where it allows the direct link, every file
# is named that way and /proc is never walked; where it refuses (before
# 6.10, without CAP_DAC_READ_SEARCH), once, then /proc.
run with_shim allowed.log "" "$TROWEL" extract -C out.allowed t.vpp
assert_rc "extract with the kernel's own answer" 0
assert_eq "the same files either way" "" "$(diff -r out.refused out.allowed)"
if [ "$(calls allowed.log 'direct ok')" -gt 0 ]; then
    assert_eq "the kernel allows it: every file named directly" 40 "$(calls allowed.log 'direct ok')"
    assert_eq "and /proc is never walked" 0 "$(calls allowed.log 'proc ok')"
elif [ "$(calls allowed.log 'direct failed')" -gt 0 ]; then
    assert_eq "the kernel refuses it: one direct attempt" 1 "$(calls allowed.log 'direct failed')"
    assert_eq "then every file through /proc" 40 "$(calls allowed.log 'proc ok')"
else
    fail "the direct link was never tried" "$(cat allowed.log 2>/dev/null)"
fi

finish
