#!/usr/bin/env bash
# Extracting many entries into a folder that does not exist yet stages it:
# the folder is made at once, empty (its parents as ever), and the files
# are made plainly in a private ".trowel-PID-stageN" folder beside it,
# which replaces it whole at the end. The result is the same bytes as an
# extraction into an existing folder; while it runs the folder is empty;
# SIGINT/SIGTERM/SIGPIPE remove both; kill -9 leaves them, and the next run
# beside them, or into that folder, removes the private one; and an archive
# of few entries is written in place.
. "${BASH_SOURCE%/*}/lib.sh"

# 200 small files in three folders, packed as a packfile.
mkdir -p src/a/deep src/b
for i in $(seq 1 200); do
    case $((i % 3)) in
    0) d=src ;;
    1) d=src/a/deep ;;
    *) d=src/b ;;
    esac
    printf 'file %d\n%0*d\n' "$i" "$i" 0 >"$d/f$i-a-long-name-so-that-extract-v-fills-its-buffer.txt"
done
run "$TROWEL" create -t vpp -C src -o many.vpp_pc .
assert_rc "create the packfile" 0

# ---- the same bytes as into an existing folder, nothing else beside it
mkdir -p there out
run "$TROWEL" extract -q -C there many.vpp_pc
assert_rc "into an existing folder" 0
run "$TROWEL" extract -q -C out/new/fresh many.vpp_pc
assert_rc "into a fresh folder (parents made too)" 0
if diff -r there out/new/fresh >/dev/null; then pass "fresh: the same files and bytes"; else fail "fresh: files differ"; fi
assert_eq "fresh: nothing beside it" "fresh" "$(ls -A out/new)"
assert_eq "fresh: the folder's mode is mkdir's" "$(stat -c %a there)" "$(stat -c %a out/new/fresh)"

# ---- several archives into one fresh folder: staged once, all of them in it
rm -rf two_src && mkdir two_src && printf 'other\n' >two_src/other.txt
run "$TROWEL" create -t vpp -C two_src -o two.vpp_pc .
run "$TROWEL" extract -q -C out/both many.vpp_pc two.vpp_pc
assert_rc "two archives into a fresh folder" 0
assert_same_file "the second archive's file is there" two_src/other.txt out/both/other.txt
assert_eq "and every file of the first" 201 "$(find out/both -type f | wc -l)"
# --per-archive: a fresh folder for each, under one that exists
run "$TROWEL" extract -q --per-archive -C out/each many.vpp_pc two.vpp_pc
assert_rc "--per-archive into fresh folders" 0
if diff -r there out/each/many >/dev/null; then pass "--per-archive: the staged one's files"; else fail "--per-archive: files differ"; fi
assert_eq "--per-archive: the two folders, nothing else" "many two" "$(ls -A out/each | tr '\n' ' ' | sed 's/ $//')"
rm -rf out/both out/each

# ---- every entry failing: no folder at all, as before
run "$TROWEL" extract -q -C out/none many.vpp_pc 'no-such-*'
assert_ne "a PATTERN matching nothing fails" 0 "$RC"
assert_no_file "nothing matched: no folder" out/none
assert_eq "nothing matched: nothing beside it" "new" "$(ls -A out)"

# ---- signals and kill -9, with every file's creation slowed by a shim
[ -d /proc/self/fd ] && { command -v cc || command -v gcc; } >/dev/null 2>&1 ||
    { skip "no C compiler or no /proc: signals"; finish; exit; }
build_openat_shim slow_create 'if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) usleep(20000);' ||
    { fail "the slowing shim did not build"; finish; exit; }
set -m # background jobs get default signal dispositions, as from a terminal

# start_slow FOLDER: extracts into FOLDER slowly in the background; PID is
# its pid once its private folder holds a file (returns 1 if it never does).
start_slow() {
    ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
        LD_PRELOAD="$T_ROOT/lib/slow_create.so" "$TROWEL" extract -q -C "$1" many.vpp_pc &
    PID=$!
    local tries=0
    while [ $tries -lt 2000 ] && kill -0 "$PID" 2>/dev/null; do
        [ -n "$(find . -path "*/.trowel-$PID-stage0/*" -type f 2>/dev/null | head -1)" ] && return 0
        sleep 0.01
        tries=$((tries + 1))
    done
    return 1
}

for sig in INT TERM; do
    rm -rf sig && mkdir sig
    if start_slow sig/a/b/out; then
        assert_eq "$sig mid-way: the folder is held, empty" "" "$(ls -A sig/a/b/out)"
        kill -s "$sig" "$PID"
        wait "$PID"
        RC=$?
        ERR=""
        assert_rc "$sig: died of the signal" $((128 + $(kill -l "$sig")))
        assert_eq "$sig: no file or private folder left (the parents made stay, as ever)" \
            "sig/a sig/a/b" "$(find sig -mindepth 1 | sort | tr '\n' ' ' | sed 's/ $//')"
    else
        wait "$PID"
        fail "$sig: the private folder never held a file" "status $?"
    fi
done

# A reader that stops early: SIGPIPE cleans up as the others do.
rm -rf pp && mkdir pp
ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    LD_PRELOAD="$T_ROOT/lib/slow_create.so" "$TROWEL" extract -v -C pp/out many.vpp_pc | head -1 >/dev/null
assert_eq "a closed pipe: died of SIGPIPE" 141 "${PIPESTATUS[0]}"
assert_dir_empty "a closed pipe: nothing left behind" pp

rm -rf k && mkdir k
if start_slow k/out; then
    kill -s KILL "$PID"
    wait "$PID"
    killed=$PID
    assert_eq "kill -9 leaves the private folder and the empty one" \
        ".trowel-$killed-stage0 out" "$(ls -A k | tr '\n' ' ' | sed 's/ $//')"
    run "$TROWEL" extract -q -C k/next many.vpp_pc
    assert_rc "the next run beside it" 0
    assert_eq "the next run removed the private folder" "next out" "$(ls -A k | tr '\n' ' ' | sed 's/ $//')"
    # Again, and this time the run goes into the folder kill -9 left.
    if start_slow k/again; then
        kill -s KILL "$PID"
        wait "$PID"
        run "$TROWEL" extract -q -C k/again many.vpp_pc
        assert_rc "a run into the folder kill -9 left" 0
        assert_eq "it removed the private folder beside it" "again next out" \
            "$(ls -A k | tr '\n' ' ' | sed 's/ $//')"
        if diff -r there k/again >/dev/null; then pass "its files"; else fail "its files differ"; fi
    else
        wait "$PID"
        fail "kill -9 again: the private folder never held a file"
    fi
    if diff -r there k/next >/dev/null; then pass "the next run's files"; else fail "the next run's files differ"; fi
else
    wait "$PID"
    fail "kill -9: the private folder never held a file"
fi

# ---- few entries: written in place, the same as ever
rm -rf few_src && mkdir few_src && printf 'one\n' >few_src/one.txt && printf 'two\n' >few_src/two.txt
run "$TROWEL" create -t vpp -C few_src -o few.vpp_pc .
run "$TROWEL" extract -q -C f/out few.vpp_pc
assert_rc "few entries: extracted" 0
assert_eq "few entries: nothing but the folder" "out" "$(ls -A f)"
assert_eq "few entries: both files" "one.txt two.txt" "$(ls f/out | tr '\n' ' ' | sed 's/ $//')"

finish
