#!/usr/bin/env bash
# The README's library example, exactly as printed: the C block under
# "## Using the library" is cut out, compiled against the shared library and
# run twice on a real SZDD file (the second run replaces the first's output),
# then on bad input. Each run is checked for leaks and memory errors: under
# valgrind, or with ASan/UBSan when the library itself is built with them
# (make sanitize; valgrind cannot run ASan code).
. "${BASH_SOURCE%/*}/lib.sh"

: "${TROWEL_SHARED_LIB:?set TROWEL_SHARED_LIB to libtrowel.so}"
CC=${TROWEL_CC:-cc}

awk '/^## Using the library/ { section = 1; next }
     /^## / { section = 0 }
     section && /^```c$/ { inside = 1; next }
     inside && /^```$/ { exit }
     inside { print }' "$TROWEL_SOURCE/README.md" >unpack.c
assert_contains "the README has a C example with a main" "$(cat unpack.c)" "int main("

sanitize_flags=()
[ "${TROWEL_SANITIZE:-OFF}" = ON ] && sanitize_flags=("-fsanitize=address,undefined" -fno-sanitize-recover=all)
run "$CC" -std=c17 -Wall -Wextra -Wpedantic -Werror -g "${sanitize_flags[@]}" \
    -I"$TROWEL_SOURCE/include" unpack.c -o unpack \
    "$TROWEL_SHARED_LIB" -Wl,-rpath,"$(dirname "$TROWEL_SHARED_LIB")"
assert_rc "the README example compiles with -Wall -Wextra -Werror" 0
[ -x unpack ] || skip_all "the example did not build: $ERR"

# checked CMD...: runs the example with a memory checker: valgrind (every
# leak, every error), or ASan's leak checker in a sanitized build.
checker=()
if [ "${TROWEL_SANITIZE:-OFF}" = ON ]; then
    # Stacks and registers are not roots: an object main forgot to free
    # would otherwise still count as reachable through main's locals.
    export ASAN_OPTIONS=detect_leaks=1:exitcode=99
    export LSAN_OPTIONS=use_stacks=0:use_registers=0
elif have_cmd valgrind; then
    checker=(valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=all
        --errors-for-leak-kinds=all)
else
    skip "valgrind not installed: the README example runs without a leak check"
fi
checked() {
    run "${checker[@]}" "$@"
}

cp "$SZDD_DIR/DEFAULT.PA_" .
want=$(expanded_sha256 DEFAULT.PA_)
for pass in first second; do
    checked ./unpack DEFAULT.PA_ out
    assert_rc "$pass run: exit 0, no leak, no memory error" 0
    assert_eq "$pass run: quiet" "" "$ERR"
    assert_file_sha256 "$pass run: DEFAULT.PAL has the published bytes" out/DEFAULT.PAL "$want"
    assert_eq "$pass run: nothing else in out/" DEFAULT.PAL "$(ls -A out)"
done

# The failure paths free everything too.
head -c 100 /dev/zero >ZEROS.BIN
checked ./unpack ZEROS.BIN bad
assert_rc "not an archive: exit 1, no leak" 1
assert_contains "not an archive: says so" "$ERR" "unpack: ZEROS.BIN: "
head -c 200 DEFAULT.PA_ >CUT.PA_
checked ./unpack CUT.PA_ cut
assert_rc "a truncated archive: exit 1, no leak" 1
assert_dir_empty "a truncated archive: nothing left behind" cut
checked ./unpack MISSING.PA_ missing
assert_rc "a missing file: exit 1, no leak" 1
checked ./unpack
assert_rc "no arguments: exit 2" 2

finish
