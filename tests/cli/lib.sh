# shellcheck shell=bash
# Helpers for the trowel command-line tests (sourced by tests/cli/test_*.sh).
#
# Environment: TROWEL (the binary), TROWEL_CORPUS (the shared corpus),
# TROWEL_SOURCE (the repository). Each script gets its own scratch folder,
# $WORK, removed on exit. Call `finish` last: it prints
# "N passed, N failed, N skipped" and sets the exit status.
#
# Skips: when an input a check needs is absent (the corpus, a peer tool,
# python3/jq), call `skip "why"` instead of the check (or `skip_all "why"`
# when nothing in the script can run; it exits at once). Never turn a check
# into a note. finish then exits 1 if anything failed, else 77 if anything
# was skipped (CTest's SKIP_RETURN_CODE: ctest reports the test "Skipped",
# not "Passed"), else 0. With TROWEL_REQUIRE_ALL=1 (CI) a skip exits 1.
#
# So that a test cannot pass without doing its job, these hold whatever a
# script does:
#  - a script that checked nothing (no pass, no failure) was skipped;
#  - a script that ends without finish (`exit 77`, `exit 0`, the last
#    command's status) does not pass: `exit 77` is a skip like any other
#    (1 under TROWEL_REQUIRE_ALL=1), any other way out is a failure;
#  - a note that says something was skipped or not checked is a skip;
#  - assert_rc checks the status of a command `run` (or a helper setting
#    RC) ran since the last assert_rc: asserting again with no new command
#    (`bash -n F; assert_rc ...`) is a failure, not a stale pass.

set -u

: "${TROWEL:?set TROWEL to the trowel binary}"
: "${TROWEL_CORPUS:?set TROWEL_CORPUS to the corpus folder}"
# The scripts change folder: make relative paths absolute first.
case "$TROWEL" in
/*) ;;
*/*) TROWEL="$PWD/$TROWEL" ;;
esac
case "$TROWEL_CORPUS" in
/*) ;;
*) TROWEL_CORPUS="$PWD/$TROWEL_CORPUS" ;;
esac
SZDD_DIR="$TROWEL_CORPUS/szdd"
# The SZDD part of the corpus ships in the repository: use that copy when the
# corpus given has none (so these checks run everywhere).
if [ ! -f "$SZDD_DIR/expanded.sha256" ] && [ -n "${TROWEL_SOURCE:-}" ]; then
    SZDD_DIR="$TROWEL_SOURCE/tests/data/corpus/szdd"
fi

T_PASSED=0
T_FAILED=0
T_SKIPPED=0
T_FINISHED=
T_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/trowel-cli.XXXXXX") || exit 1
# On the way out: the scratch folder goes, and a script that did not end
# through finish gets the status the rules above give it.
t_on_exit() {
    local rc=$?
    rm -rf "$T_ROOT"
    [ -n "$T_FINISHED" ] && exit "$rc"
    if [ "$rc" = 77 ]; then
        printf 'SKIP: the script exited 77 without finish\n'
        if [ "${TROWEL_REQUIRE_ALL:-}" = 1 ]; then
            printf 'TROWEL_REQUIRE_ALL=1: a skipped check is a failure\n'
            exit 1
        fi
        exit 77
    fi
    if [ "$rc" = 0 ]; then
        printf 'FAIL: the script ended without finish (%d passed, %d failed, %d skipped uncounted)\n' \
            "$T_PASSED" "$T_FAILED" "$T_SKIPPED"
        exit 1
    fi
    exit "$rc"
}
trap t_on_exit EXIT
WORK="$T_ROOT/work"
mkdir "$WORK" "$T_ROOT/lib"
cd "$WORK" || exit 1

# run CMD [ARG...]: runs a command; sets RC, OUT (stdout) and ERR (stderr).
# The raw stdout stays in $OUT_FILE (binary-safe).
OUT_FILE="$T_ROOT/lib/stdout"
ERR_FILE="$T_ROOT/lib/stderr"
# shellcheck disable=SC2034 # RC, OUT and ERR are read by the test scripts
run() {
    "$@" >"$OUT_FILE" 2>"$ERR_FILE"
    RC=$?
    OUT=$(cat "$OUT_FILE")
    ERR=$(cat "$ERR_FILE")
}

pass() {
    T_PASSED=$((T_PASSED + 1))
}

fail() {
    T_FAILED=$((T_FAILED + 1))
    printf 'FAIL: %s\n' "$1"
    shift
    for line in "$@"; do
        printf '    %s\n' "$line"
    done
}

# note MESSAGE: information only (never for a check that did not run: a
# note saying so counts as a skip).
note() {
    case "$*" in
    *[Ss]kip* | *"not checked"* | *"not run"*)
        skip "$@"
        return
        ;;
    esac
    printf 'NOTE: %s\n' "$*"
}

# skip MESSAGE: a check (or a group of them) that could not run because an
# input it needs is absent. Counted; the script then exits 77 (or 1 in CI).
skip() {
    T_SKIPPED=$((T_SKIPPED + 1))
    printf 'SKIP: %s\n' "$*"
}

# skip_all MESSAGE: nothing in this script can run; report and exit.
skip_all() {
    skip "$@"
    finish
    exit
}

# build_openat_shim NAME C-STATEMENTS: builds $T_ROOT/lib/NAME.so which,
# preloaded (LD_PRELOAD), runs C-STATEMENTS (dirfd, path, flags and mode in
# scope; <errno.h>, <fcntl.h> and <unistd.h> included) before each openat
# goes on to the real one. Returns 1 without a C compiler or when it fails.
build_openat_shim() {
    local cc
    cc=$(command -v cc || command -v gcc) || return 1
    cat >"$T_ROOT/lib/$1.c" <<CEOF
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>
typedef int (*openat_fn)(int, const char *, int, ...);
static int shimmed(const char *real_name, int dirfd, const char *path, int flags, int mode)
{
    $2
    openat_fn real = (openat_fn)dlsym(RTLD_NEXT, real_name);
    return real(dirfd, path, flags, mode);
}
#define SHIM(NAME) \
    int NAME(int dirfd, const char *path, int flags, ...) \
    { \
        va_list ap; \
        va_start(ap, flags); \
        int mode = va_arg(ap, int); \
        va_end(ap); \
        return shimmed(#NAME, dirfd, path, flags, mode); \
    }
SHIM(openat)
SHIM(openat64)
CEOF
    "$cc" -shared -fPIC -o "$T_ROOT/lib/$1.so" "$T_ROOT/lib/$1.c" -ldl 2>/dev/null
}

# have_cmd NAME: true when the command is on PATH (then run the checks that
# need it; else `skip` them, saying which tool is missing).
have_cmd() {
    command -v "$1" >/dev/null 2>&1
}

assert_eq() { # NAME EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then pass; else fail "$1" "expected: $2" "actual:   $3"; fi
}

assert_ne() { # NAME UNEXPECTED ACTUAL
    if [ "$2" != "$3" ]; then pass; else fail "$1" "did not expect: $2"; fi
}

assert_contains() { # NAME HAYSTACK NEEDLE
    case "$2" in
    *"$3"*) pass ;;
    *) fail "$1" "expected to contain: $3" "actual: $2" ;;
    esac
}

assert_not_contains() { # NAME HAYSTACK NEEDLE
    case "$2" in
    *"$3"*) fail "$1" "expected not to contain: $3" "actual: $2" ;;
    *) pass ;;
    esac
}

# After it, RC holds no status until a command runs again: a second
# assert_rc with nothing run between checks a status that is not there.
T_RC_TAKEN="(already asserted: no command ran since)"
assert_rc() { # NAME EXPECTED (checks $RC from the last run)
    if [ "${RC-}" = "$T_RC_TAKEN" ]; then
        fail "$1" "assert_rc with no command run since the last one: use run CMD"
    elif [ "${RC-}" = "$2" ]; then
        pass
    else
        fail "$1" "expected exit status $2, got ${RC-}" "stderr: ${ERR-}"
    fi
    RC=$T_RC_TAKEN
}

# A usage error: exit 2 and a message on stderr naming trowel.
assert_usage_error() { # NAME
    assert_rc "$1: exit 2" 2
    assert_contains "$1: message" "$ERR" "trowel: "
}

assert_file_exists() { # NAME FILE
    if [ -f "$2" ]; then pass; else fail "$1" "missing file: $2"; fi
}

assert_no_file() { # NAME FILE
    if [ ! -e "$2" ]; then pass; else fail "$1" "unexpected file: $2"; fi
}

sha256_of() { # FILE
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum <"$1" | cut -d' ' -f1
    else
        shasum -a 256 <"$1" | cut -d' ' -f1
    fi
}

assert_file_sha256() { # NAME FILE HASH
    if [ ! -f "$2" ]; then
        fail "$1" "missing file: $2"
        return
    fi
    assert_eq "$1" "$3" "$(sha256_of "$2")"
}

assert_same_file() { # NAME FILE1 FILE2 (same bytes)
    if cmp -s "$2" "$3"; then pass; else fail "$1" "$2 and $3 differ"; fi
}

# Empty, dotfiles (temporaries) included.
assert_dir_empty() { # NAME DIR
    if [ ! -d "$2" ]; then
        pass
        return
    fi
    local left
    left=$(ls -A "$2")
    if [ -z "$left" ]; then pass; else fail "$1" "left behind in $2: $left"; fi
}

# The expected SHA-256 of a corpus file's expansion (expanded.sha256).
expanded_sha256() { # COMPRESSED-NAME
    awk -v n="$1" '$2 == n { print $1 }' "$SZDD_DIR/expanded.sha256"
}

# The name COMPRESS.EXE replaced: the file name with the character kept in
# SZDD header byte 9 (upper case, as the corpus names are) for the '_'.
restored_name() { # FILE
    local base c
    base=$(basename "$1")
    c=$(od -An -c -j 9 -N 1 "$1" | tr -d ' ' | tr '[:lower:]' '[:upper:]')
    printf '%s%s\n' "${base%_}" "$c"
}

# Bytes of a file as unsigned decimal numbers, e.g. `bytes F 10 4`.
bytes() { # FILE OFFSET COUNT
    od -An -tu1 -j "$2" -N "$3" "$1" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'
}

# A 32-bit little-endian number from a file.
u32le() { # FILE OFFSET
    local b0 b1 b2 b3
    read -r b0 b1 b2 b3 <<<"$(bytes "$1" "$2" 4)"
    echo $((b0 + b1 * 256 + b2 * 65536 + b3 * 16777216))
}

# JSON checks: python3, else jq; without either the check is skipped.
json_tool() {
    if command -v python3 >/dev/null 2>&1; then
        echo python3
    elif command -v jq >/dev/null 2>&1; then
        echo jq
    fi
}

assert_json_valid() { # NAME FILE
    case "$(json_tool)" in
    python3) if python3 -m json.tool <"$2" >/dev/null 2>&1; then pass; else fail "$1" "invalid JSON in $2"; fi ;;
    jq) if jq empty <"$2" >/dev/null 2>&1; then pass; else fail "$1" "invalid JSON in $2"; fi ;;
    *) skip "$1: neither python3 nor jq: JSON not checked" ;;
    esac
}

# json_get FILE PATH: the value at a jq-style path (.a.b[0].c) as text:
# strings bare, numbers as digits, arrays and objects as compact JSON with
# sorted keys; MISSING when absent; SKIP without jq or python3 (jq first:
# it starts faster).
json_get() {
    if command -v jq >/dev/null 2>&1; then
        jq -c -S -r "$2 // \"MISSING\"" <"$1"
    elif command -v python3 >/dev/null 2>&1; then
        python3 - "$1" "$2" <<'EOF'
import json, re, sys
v = json.load(open(sys.argv[1]))
try:
    for key, idx in re.findall(r'\.([A-Za-z_][A-Za-z_0-9]*)|\[(\d+)\]', sys.argv[2]):
        v = v[key] if key else v[int(idx)]
except (KeyError, IndexError, TypeError):
    v = None
if v is None:
    print("MISSING")
elif isinstance(v, bool):
    print("true" if v else "false")
elif isinstance(v, (dict, list)):
    print(json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
else:
    print(v)
EOF
    else
        echo SKIP
    fi
}

assert_json_eq() { # NAME FILE PATH EXPECTED
    local got
    got=$(json_get "$2" "$3")
    if [ "$got" = SKIP ]; then
        skip "$1: no JSON tool: not checked"
        return
    fi
    assert_eq "$1" "$4" "$got"
}

finish() {
    T_FINISHED=1
    if [ "$T_PASSED" -eq 0 ] && [ "$T_FAILED" -eq 0 ] && [ "$T_SKIPPED" -eq 0 ]; then
        skip "no check ran"
    fi
    printf '%d passed, %d failed, %d skipped\n' "$T_PASSED" "$T_FAILED" "$T_SKIPPED"
    if [ "$T_FAILED" -ne 0 ]; then
        return 1
    elif [ "$T_SKIPPED" -ne 0 ]; then
        if [ "${TROWEL_REQUIRE_ALL:-}" = 1 ]; then
            printf 'TROWEL_REQUIRE_ALL=1: a skipped check is a failure\n'
            return 1
        fi
        return 77
    fi
    return 0
}
