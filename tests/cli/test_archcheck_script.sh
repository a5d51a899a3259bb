#!/usr/bin/env bash
# scripts/check-architecture.sh itself: on a small made-up tree with one
# violation of each kind (and decoys in comments and strings) it reports
# exactly those; on the same tree with them fixed it exits 0; a baseline
# allows listed violations and reports stale ones. (The real tree is not
# checked here: issue 21 is still to be done; see docs/plan-architecture.md.)
. "$(dirname "$0")/lib.sh"

SCRIPT="$TROWEL_SOURCE/scripts/check-architecture.sh"
for tool in python3 nm ar cc ld objcopy; do
    have_cmd "$tool" || skip_all "$tool is not installed"
done

# make_tree DIR BAD: a tree and a build of it; BAD=1 puts in the violations.
make_tree() {
    local d=$1 bad=$2
    mkdir -p "$d/src/core" "$d/src/codec" "$d/src/format/fam" "$d/src/format/other" "$d/src/export" "$d/cli" \
        "$d/include/trowel" "$d/build/CMakeFiles/trowel_objects.dir/src/core" \
        "$d/build/CMakeFiles/trowel_objects.dir/src/format/fam" \
        "$d/build/CMakeFiles/trowel_objects.dir/src/format/other" \
        "$d/build/CMakeFiles/trowel.dir/cli"
    cat >"$d/include/trowel/trowel.h" <<'EOF'
#pragma GCC visibility push(default)
int trowel_version(void);
#pragma GCC visibility pop
EOF
    cat >"$d/src/core/core.h" <<'EOF'
#include "trowel/trowel.h"
int core_helper(int x);
EOF
    cat >"$d/src/core/core.c" <<'EOF'
#include "core.h"
__attribute__((visibility("default"))) int trowel_version(void) { return 1; }
__attribute__((visibility("hidden"))) int core_helper(int x) { return x + 1; }
EOF
    cat >"$d/src/format/fam/fmt.c" <<'EOF'
#include "core/core.h"
/* open("x") in a comment is no call */
static const char *decoy = "fopen(";
__attribute__((visibility("hidden"))) int fmt_value(void) { return core_helper(2) + (decoy != 0); }
EOF
    printf 'int cli_main(void);\nint cli_main(void) { return 0; }\n' >"$d/cli/main.c"
    if [ "$bad" = 1 ]; then
        # FORBIDDEN, RAW-READ, LAST-ERROR, LAYER by include and by nm,
        # CORE-FORMAT, MUTUAL, STATIC-EXPORT (a visible internal), CLI-INTERNAL,
        # INCLUDE-CYCLE, MODULE-CYCLE, LENGTH.
        cat >>"$d/src/format/fam/fmt.c" <<'EOF'
#include <stdio.h>
int core_back(void);
int trowel_input_copy(void *in, int off, void *dst, int n);
typedef struct { struct { int status; } last_error; } fake_ctx;
__attribute__((visibility("hidden"))) int fmt_open(void) { return fopen("a", "r") != 0; }
__attribute__((visibility("hidden"))) int fmt_raw(void *in) { return trowel_input_copy(in, 0, 0, 0); }
__attribute__((visibility("hidden"))) int fmt_err(fake_ctx *ctx) { return ctx->last_error.status; }
__attribute__((visibility("hidden"))) int fmt_calls_back(void) { return core_back(); }
EOF
        cat >>"$d/src/core/core.c" <<'EOF'
#include "format/fam/fmt.h"
int fmt_value(void);
__attribute__((visibility("hidden"))) int core_back(void) { return fmt_value(); }
__attribute__((visibility("default"))) int leaked_symbol(void) { return 3; }
EOF
        printf '#include "loop_b.h"\n' >"$d/src/format/fam/loop_a.h"
        printf '#include "loop_a.h"\n' >"$d/src/format/fam/loop_b.h"
        printf '#include "fmt.h"\n' >"$d/src/format/fam/pair.c"
        printf '#include "pair.h"\n' >>"$d/src/format/fam/fmt.c"
        touch "$d/src/format/fam/pair.h"
        touch "$d/src/format/fam/fmt.h"
        { for i in $(seq 1 1301); do echo "/* $i */"; done; } >"$d/src/export/long.c"
        printf '#include "core/core.h"\nint cli_uses(void) { return core_helper(1); }\n' >>"$d/cli/main.c"
        # FAMILY: one family including and calling another's
        printf '#include "format/fam/fmt.h"\nint fmt_value(void);\n__attribute__((visibility("hidden"))) int other_uses(void) { return fmt_value(); }\n' \
            >"$d/src/format/other/uses.c"
    else
        touch "$d/src/format/fam/fmt.h"
    fi
    local ob=$d/build/CMakeFiles/trowel_objects.dir
    local w=(-fvisibility=hidden -w "-I$d/include" "-I$d/src")
    cc "${w[@]}" -c "$d/src/core/core.c" -o "$ob/src/core/core.c.o" || return 1
    cc "${w[@]}" -c "$d/src/format/fam/fmt.c" -o "$ob/src/format/fam/fmt.c.o" || return 1
    cc -w -I"$d/include" -I"$d/src" -c "$d/cli/main.c" -o "$d/build/CMakeFiles/trowel.dir/cli/main.c.o" || return 1
    if [ -f "$d/src/format/other/uses.c" ]; then
        cc "${w[@]}" -c "$d/src/format/other/uses.c" -o "$ob/src/format/other/uses.c.o" || return 1
    fi
    # the static library made as docs/plan-architecture.md proposes: one
    # object, hidden (internal) symbols made local
    ld -r -o "$d/build/all.o" "$ob/src/core/core.c.o" "$ob/src/format/fam/fmt.c.o" || return 1
    objcopy --localize-hidden "$d/build/all.o" "$d/build/public.o" || return 1
    ar rcs "$d/build/libtrowel.a" "$d/build/public.o"
}

make_tree "$WORK/good" 0 || skip_all "the C compiler could not build the made-up tree"
run bash "$SCRIPT" "$WORK/good" "$WORK/good/build"
assert_rc "a clean tree passes" 0
assert_contains "a clean tree: total 0" "$OUT" "total          0"

make_tree "$WORK/bad" 1 || skip_all "the C compiler could not build the made-up tree"
run bash "$SCRIPT" "$WORK/bad" "$WORK/bad/build"
assert_rc "violations fail" 1
for want in \
    "FORBIDDEN: src/format/fam/fmt.c:" \
    "RAW-READ: src/format/fam/fmt.c:" \
    "LAST-ERROR: src/format/fam/fmt.c:" \
    "MUTUAL: src/core/core.c: uses src/format/fam/fmt.c" \
    "LAYER: src/core/core.c: includes src/format/fam/fmt.h (core -> format)" \
    "LAYER: src/core/core.c: uses src/format/fam/fmt.c (core -> format)" \
    "LENGTH: src/export/long.c: 1301 lines" \
    "INCLUDE-CYCLE: src/format/fam/loop_a.h: src/format/fam/loop_a.h -> src/format/fam/loop_b.h -> src/format/fam/loop_a.h" \
    "MODULE-CYCLE: src/core/core: src/core/core -> src/format/fam/fmt -> src/core/core (a knot of 3 modules: src/core/core, src/format/fam/fmt, src/format/fam/pair)" \
    "CORE-FORMAT: src/core/core.c: includes src/format/fam/fmt.h" \
    "STATIC-EXPORT: src/core/core.c: leaked_symbol: no trowel_ prefix" \
    "LAYER: cli/main.c: includes src/core/core.h (cli -> library internals)" \
    "CLI-INTERNAL: cli/main.c: uses core_helper" \
    "FAMILY: src/format/other/uses.c: includes src/format/fam/fmt.h (other -> fam)" \
    "FAMILY: src/format/other/uses.c: uses src/format/fam/fmt.c (other -> fam): fmt_value"; do
    assert_contains "reported: $want" "$OUT" "$want"
done
assert_not_contains "a call in a comment is no call" "$OUT" "src/format/fam/fmt.c:2: calls open()"
assert_not_contains "a call in a string is no call" "$OUT" "src/format/fam/fmt.c:3: calls fopen()"
assert_not_contains "a prototype is no call" "$OUT" "src/format/fam/fmt.c:7:"
assert_not_contains "hidden internals are not exports" "$OUT" "STATIC-EXPORT: src/core/core.c: core_helper"

# A baseline of exactly these violations passes; a fixed one is STALE.
grep -v '^$\|^summary\|^  ' "$OUT_FILE" >"$WORK/baseline.txt"
run bash "$SCRIPT" --baseline "$WORK/baseline.txt" "$WORK/bad" "$WORK/bad/build"
assert_rc "baseline of every violation passes" 0
echo "LENGTH: src/export/gone.c: 2000 lines (limit 1300)" >>"$WORK/baseline.txt"
run bash "$SCRIPT" --baseline "$WORK/baseline.txt" "$WORK/bad" "$WORK/bad/build"
assert_rc "a stale baseline line fails" 1
assert_contains "the stale line is named" "$OUT" "STALE: LENGTH: src/export/gone.c: N lines"
grep -v '^FORBIDDEN' "$WORK/baseline.txt" | grep -v gone.c >"$WORK/baseline2.txt"
run bash "$SCRIPT" --baseline "$WORK/baseline2.txt" "$WORK/bad" "$WORK/bad/build"
assert_rc "a violation missing from the baseline fails" 1
assert_contains "and is printed" "$OUT" "FORBIDDEN: src/format/fam/fmt.c:"

finish
