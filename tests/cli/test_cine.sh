#!/usr/bin/env bash
# Delphine Cinematique containers through the CLI: the bytekiller codec,
# part files (create, list, extract, verify, manifest round trip), hostile
# part files, and cross-checks with scummvm-tools' extract_cine, which must
# read everything trowel writes ("ok" per entry; "CRC ERROR" is a failure
# even though it exits 0).
. "${BASH_SOURCE%/*}/lib.sh"

EXTRACT_CINE=$(command -v scummvm-tools-cli || true)
[ -z "$EXTRACT_CINE" ] && [ -x /usr/games/scummvm-tools-cli ] && EXTRACT_CINE=/usr/games/scummvm-tools-cli

mkdir -p src
cp "$TROWEL_SOURCE/docs/ARCHITECTURE.md" src/ARCH.TXT
head -c 70000 "$TROWEL" >src/BIN.DAT
head -c 3000 /dev/urandom >src/NOISE.BIN
printf 'AAAAAAAAAAA' >src/A11.BIN
: >src/EMPTY
NAMES="ARCH.TXT BIN.DAT NOISE.BIN A11.BIN EMPTY"

# --- codec: raw streams
run "$TROWEL" compress -c bytekiller -o arch.bk src/ARCH.TXT
assert_rc "compress -c bytekiller" 0
run "$TROWEL" decompress -c bytekiller -o arch.out arch.bk
assert_rc "decompress -c bytekiller" 0
assert_same_file "bytekiller round trip" src/ARCH.TXT arch.out
# Several segments (the executable is over 32 KiB a segment): the same
# bytes on one thread or several, and extract_cine-compatible either way.
run "$TROWEL" compress -c bytekiller -T 1 -o bin1.bk "$TROWEL"
assert_rc "compress -T 1" 0
run "$TROWEL" compress -c bytekiller --threads 3 -o bin3.bk "$TROWEL"
assert_rc "compress --threads 3" 0
assert_same_file "the output does not depend on --threads" bin1.bk bin3.bk
run "$TROWEL" decompress -c bytekiller -o bin.out bin3.bk
assert_same_file "a multi-segment stream round-trips" "$TROWEL" bin.out
run "$TROWEL" compress -c bytekiller --threads many -o bad.bk src/ARCH.TXT
assert_rc "--threads with a word: usage error" 2
assert_contains "--threads with a word: says so" "$ERR" "--threads takes a number"
assert_no_file "--threads with a word: no output" bad.bk
printf 'x' >>arch.bk
run "$TROWEL" decompress -c bytekiller -o arch.bad arch.bk
assert_rc "a ragged stream is refused" 1
assert_no_file "no output from a ragged stream" arch.bad

# --- part files
# shellcheck disable=SC2086 # NAMES is a word list
run "$TROWEL" create -t cine-part -o TEST.PRT -C src $NAMES
assert_rc "create cine-part" 0
run "$TROWEL" info TEST.PRT
assert_contains "detected as cine-part" "$OUT" "cine-part"
run "$TROWEL" list -l TEST.PRT
assert_contains "list shows a packed entry" "$OUT" "bytekiller  ARCH.TXT"
assert_contains "list shows a stored entry" "$OUT" "stored      A11.BIN"
run "$TROWEL" list --json TEST.PRT
printf '%s' "$OUT" >list.json
assert_json_eq "list --json method" list.json '.entries[2].method' stored
assert_json_eq "list --json name" list.json '.entries[0].name' ARCH.TXT
run "$TROWEL" verify TEST.PRT
assert_rc "verify" 0
run "$TROWEL" extract TEST.PRT -C out --manifest m.json
assert_rc "extract" 0
for n in $NAMES; do
    assert_same_file "extract $n" "src/$n" "out/$n"
done
run "$TROWEL" create --manifest m.json -C out -o AGAIN.PRT
assert_rc "create --manifest" 0
assert_same_file "manifest round trip gives the same bytes" TEST.PRT AGAIN.PRT

if [ -n "$EXTRACT_CINE" ]; then
    mkdir ec
    "$EXTRACT_CINE" --tool extract_cine -o ec TEST.PRT >ec.log 2>&1
    oks=$(grep -c '^ok' ec.log)
    assert_eq "extract_cine says ok for every entry" 5 "$oks"
    assert_not_contains "extract_cine finds no CRC error" "$(cat ec.log)" "CRC ERROR"
    for n in $NAMES; do
        assert_same_file "extract_cine reads trowel's $n" "src/$n" "ec/$n"
    done
else
    skip "scummvm-tools-cli not installed: extract_cine cross-checks"
fi

# --- hostile part files: exit 1, a message, and nothing extracted.
run "$TROWEL" create -t cine-part -o ONE.PRT -C src ARCH.TXT
assert_rc "create a one-entry part" 0
patch() { # FILE OFFSET BYTES(printf escapes)
    printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
hostile() { # NAME OFFSET BYTES EXPECTED-MESSAGE
    cp ONE.PRT "h-$1.PRT"
    patch "h-$1.PRT" "$2" "$3"
    run "$TROWEL" extract "h-$1.PRT" -C "hout-$1"
    assert_rc "hostile $1: exit 1" 1
    assert_contains "hostile $1: message" "$ERR" "$4"
    assert_dir_empty "hostile $1: nothing extracted" "hout-$1"
    run "$TROWEL" verify "h-$1.PRT"
    assert_rc "hostile $1: verify fails" 1
}
hostile packed-larger 26 '\000\000\000\004' "larger than the unpacked size"
# An offset past the end: the second entry of a two-entry file is damaged,
# the first is still extracted (a broken first offset leaves nothing to tell
# the file from random bytes, so it is "not a format trowel knows", exit 1
# all the same).
run "$TROWEL" create -t cine-part -o ONE.PRT --force -C src A11.BIN ARCH.TXT
cp ONE.PRT h-offset-past-eof.PRT
patch h-offset-past-eof.PRT 48 '\177\377\377\000'
run "$TROWEL" extract h-offset-past-eof.PRT -C hout-offset-past-eof
assert_rc "hostile offset-past-eof: exit 1" 1
assert_contains "hostile offset-past-eof: message" "$ERR" "past the end"
assert_same_file "hostile offset-past-eof: the sound entry is extracted" src/A11.BIN hout-offset-past-eof/A11.BIN
assert_no_file "hostile offset-past-eof: not the damaged one" hout-offset-past-eof/ARCH.TXT
run "$TROWEL" verify h-offset-past-eof.PRT
assert_rc "hostile offset-past-eof: verify fails" 1
run "$TROWEL" create -t cine-part -o ONE.PRT --force -C src ARCH.TXT
hostile first-offset-broken 18 '\177\377\377\000' "not a format trowel knows"
hostile dotdot-name 4 '../X\000' "not a valid part-file name"
hostile bad-checksum 40 '\125\252' "checksum"
hostile wrong-length 26 '\001' "length field says"
assert_no_file "no file written outside the folder" X

# --- VOL.CNF, plain and packed, over two part files.
mkdir vol
# Twenty more small files make the table long enough to pack in place.
MORE=""
for i in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20; do
    printf 'file %s\n' "$i" >"src/FILE$i.DAT"
    MORE="$MORE FILE$i.DAT"
done
# shellcheck disable=SC2086 # MORE is a word list
run "$TROWEL" create -t cine-part -o vol/PROCS00 -C src ARCH.TXT A11.BIN $MORE
assert_rc "create volume PROCS00" 0
run "$TROWEL" create -t cine-part -o vol/TINY -C src A11.BIN
run "$TROWEL" create -t cine-volcnf -O compress=1 -o vol/TINY.CNF -C vol TINY
assert_rc "a table too small to pack in place is refused" 1
assert_contains "... with a message saying so" "$ERR" "unpacks in place"
assert_no_file "... and no file" vol/TINY.CNF
run "$TROWEL" create -t cine-part -o vol/RSC04 -C src BIN.DAT NOISE.BIN EMPTY
assert_rc "create volume RSC04" 0
for variant in plain packed; do
    opts="-O names=13"
    [ "$variant" = packed ] && opts="-O compress=1 -O names=11"
    rm -rf "v-$variant" && mkdir "v-$variant" && cp vol/PROCS00 vol/RSC04 "v-$variant/"
    # shellcheck disable=SC2086 # opts is a word list
    run "$TROWEL" create -t cine-volcnf $opts -o "v-$variant/VOL.CNF" -C vol PROCS00 RSC04
    assert_rc "create $variant VOL.CNF" 0
    run "$TROWEL" list -l "v-$variant/VOL.CNF"
    assert_rc "list $variant VOL.CNF" 0
    assert_contains "list $variant VOL.CNF names volume and file" "$OUT" "RSC04/NOISE.BIN"
    run "$TROWEL" info "v-$variant/VOL.CNF"
    assert_contains "info $variant VOL.CNF" "$OUT" "cine-volcnf"
    run "$TROWEL" extract "v-$variant/VOL.CNF" -C "vout-$variant"
    assert_rc "extract $variant VOL.CNF" 0
    assert_same_file "$variant VOL.CNF: PROCS00/ARCH.TXT" src/ARCH.TXT "vout-$variant/PROCS00/ARCH.TXT"
    assert_same_file "$variant VOL.CNF: RSC04/BIN.DAT" src/BIN.DAT "vout-$variant/RSC04/BIN.DAT"
    run "$TROWEL" verify "v-$variant/VOL.CNF"
    assert_rc "verify $variant VOL.CNF" 0
    if [ -n "$EXTRACT_CINE" ]; then
        # extract_cine takes VOL.CNF by that name and opens the volumes
        # from the current folder.
        (cd "v-$variant" && mkdir ec && "$EXTRACT_CINE" --tool extract_cine -o ec VOL.CNF >ec.log 2>&1)
        oks=$(grep -c '^ok' "v-$variant/ec.log")
        assert_eq "extract_cine reads trowel's $variant VOL.CNF" 25 "$oks"
        assert_not_contains "extract_cine: no error on $variant VOL.CNF" "$(cat "v-$variant/ec.log")" "rror"
        assert_same_file "extract_cine: $variant VOL.CNF ARCH.TXT" src/ARCH.TXT "v-$variant/ec/ARCH.TXT"
    fi
done
rm v-plain/RSC04
run "$TROWEL" extract v-plain/VOL.CNF -C vout-missing
assert_rc "a volume missing beside VOL.CNF: exit 1" 1
assert_contains "a volume missing beside VOL.CNF: message" "$ERR" "not beside VOL.CNF"
assert_file_exists "the volume that is there is still extracted" vout-missing/PROCS00/ARCH.TXT
assert_no_file "nothing from the missing volume" vout-missing/RSC04/BIN.DAT

finish
