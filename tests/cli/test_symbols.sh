#!/usr/bin/env bash
# The static library shows the public API and nothing else: every global
# symbol `nm` finds in libtrowel.a starts with trowel_ and is a function
# trowel.h declares, and the list is the shared library's. A program
# linked against libtrowel.a alone runs (the README's example, on a real
# SZDD file), and one reaching for an internal function does not link.
. "${BASH_SOURCE%/*}/lib.sh"

: "${TROWEL_STATIC_LIB:?set TROWEL_STATIC_LIB to libtrowel.a}"
: "${TROWEL_SHARED_LIB:?set TROWEL_SHARED_LIB to libtrowel.so}"
CC=${TROWEL_CC:-cc}
have_cmd nm || skip_all "nm (binutils) not installed"
have_cmd pkg-config || skip_all "pkg-config not installed"

HEADER="$TROWEL_SOURCE/include/trowel/trowel.h"
# Names trowel.h declares as functions: `trowel_NAME(` anywhere in it.
grep -oE '\btrowel_[A-Za-z0-9_]+[[:space:]]*\(' "$HEADER" | tr -d '( \t' | sort -u >declared.txt
nm -P -g --defined-only "$TROWEL_STATIC_LIB" | awk 'NF >= 2 && $1 !~ /:$/ { print $1 }' | sort -u >static.txt
nm -P -D --defined-only "$TROWEL_SHARED_LIB" | awk '$1 ~ /^trowel_/ { print $1 }' | sort -u >shared.txt

assert_eq "libtrowel.a has global symbols" 1 "$([ -s static.txt ] && echo 1 || echo 0)"
assert_eq "every global symbol of libtrowel.a starts with trowel_" "" "$(grep -v '^trowel_' static.txt)"
assert_eq "every global symbol of libtrowel.a is declared in trowel.h" "" "$(comm -23 static.txt declared.txt)"
assert_eq "libtrowel.a and libtrowel.so export the same names" "" "$(diff static.txt shared.txt)"

# The libraries libtrowel.a needs, as an installed program would name them.
read -r -a deps <<<"$(pkg-config --libs zlib json-c liblzma libpng liblz4 2>/dev/null) -lgif -lpthread -lm"
sanitize_flags=()
[ "${TROWEL_SANITIZE:-OFF}" = ON ] && sanitize_flags=("-fsanitize=address,undefined" -fno-sanitize-recover=all)

awk '/^## Using the library/ { section = 1; next }
     /^## / { section = 0 }
     section && /^```c$/ { inside = 1; next }
     inside && /^```$/ { exit }
     inside { print }' "$TROWEL_SOURCE/README.md" >unpack.c
run "$CC" -std=c17 -Wall -Wextra -Werror "${sanitize_flags[@]}" -I"$TROWEL_SOURCE/include" \
    unpack.c -o unpack "$TROWEL_STATIC_LIB" "${deps[@]}"
assert_rc "the README example links against libtrowel.a alone" 0
if [ -x unpack ]; then
    cp "$SZDD_DIR/DEFAULT.PA_" .
    run ./unpack DEFAULT.PA_ out
    assert_rc "the statically linked example runs" 0
    assert_file_sha256 "it expands DEFAULT.PAL to the published bytes" out/DEFAULT.PAL \
        "$(expanded_sha256 DEFAULT.PA_)"
fi

# An internal function (the bounded reader's) is not there to link to.
internal=trowel_reader_init
assert_eq "$internal is internal (not in trowel.h)" "" "$(grep -x "$internal" declared.txt)"
cat >internal.c <<EOF
#include <trowel/trowel.h>
void $internal(void);
int main(void) { $internal(); return trowel_version() == 0; }
EOF
run "$CC" -std=c17 "${sanitize_flags[@]}" -I"$TROWEL_SOURCE/include" internal.c -o internal \
    "$TROWEL_STATIC_LIB" "${deps[@]}"
assert_rc "a program calling $internal does not link" 1
assert_contains "the linker names the missing symbol" "$ERR" "$internal"

finish
