#!/usr/bin/env bash
# trowel create: SZDD files from files, folders and options; output safety.
. "${BASH_SOURCE%/*}/lib.sh"

DEFAULT="$SZDD_DIR/DEFAULT.PA_"
"$TROWEL" extract -C src "$DEFAULT" || exit 1
want=$(expanded_sha256 DEFAULT.PA_)
size=$(wc -c <src/DEFAULT.PAL | tr -d ' ')

# ---- create -t szdd from a file (in the current folder)
cd src || exit 1
run "$TROWEL" create -t szdd -o ../X.PA_ DEFAULT.PAL
cd .. || exit 1
assert_rc "create -t szdd exit" 0
assert_eq "create: silent" "" "$OUT$ERR"
assert_eq "create: SZDD magic" "83 90 68 68 136 240 39 51" "$(bytes X.PA_ 0 8)"
assert_eq "create: method A" 65 "$(bytes X.PA_ 8 1)"
assert_eq "create: 'l' recorded at byte 9" 108 "$(bytes X.PA_ 9 1)"
assert_eq "create: length at bytes 10..13" "$size" "$(u32le X.PA_ 10)"
run "$TROWEL" extract X.PA_ -C x
assert_rc "created file extracts" 0
assert_file_sha256 "created file expands to the source" x/X.PAL "$want"
run "$TROWEL" verify X.PA_
assert_rc "created file verifies" 0

# ---- -C DIR, -o -, --force
run "$TROWEL" create -t szdd -C src -o Y.PA_ DEFAULT.PAL
assert_rc "create -C DIR" 0
assert_same_file "create -C DIR: same bytes as from inside DIR" X.PA_ Y.PA_
"$TROWEL" create -t szdd -C src -o - DEFAULT.PAL >stdout.PA_
assert_same_file "create -o - writes the file to stdout" X.PA_ stdout.PA_

printf 'precious\n' >kept.PA_
run "$TROWEL" create -t szdd -C src -o kept.PA_ DEFAULT.PAL
assert_rc "create onto an existing OUT: exit 1" 1
assert_contains "create onto an existing OUT: says so" "$ERR" "exists"
assert_eq "create onto an existing OUT: kept" precious "$(cat kept.PA_)"
run "$TROWEL" create -t szdd -C src -o kept.PA_ --force DEFAULT.PAL
assert_rc "create --force" 0
assert_same_file "create --force replaced OUT" X.PA_ kept.PA_

# ---- options
run "$TROWEL" create -t szdd -C src -o none.PA_ -O missing=none DEFAULT.PAL
assert_rc "create -O missing=none" 0
assert_eq "-O missing=none records 0" 0 "$(bytes none.PA_ 9 1)"
run "$TROWEL" create -t szdd -C src -o q.PA_ -O variant=qbasic DEFAULT.PAL
assert_rc "create -O variant=qbasic" 0
assert_eq "qbasic magic" "83 90 32 136 240 39 51 209" "$(bytes q.PA_ 0 8)"
assert_eq "qbasic length at bytes 8..11" "$size" "$(u32le q.PA_ 8)"
run "$TROWEL" extract q.PA_ -C q
assert_rc "qbasic file extracts" 0
# QBasic headers keep no last character: the name just loses its '_'.
assert_file_sha256 "qbasic file expands to the source" q/q.PA "$want"
run "$TROWEL" create -t szdd -C src -o bad.PA_ --option=oops DEFAULT.PAL
assert_usage_error "-O without '='"
assert_no_file "-O without '=': no OUT" bad.PA_

# ---- sources that are not there, or too many: no OUT, no temporary
mkdir outdir
run "$TROWEL" create -t szdd -o outdir/none.PA_ no-such-file
assert_rc "missing source: exit 1" 1
assert_contains "missing source: named" "$ERR" "no-such-file"
assert_dir_empty "missing source: nothing left" outdir
cp src/DEFAULT.PAL src/SECOND.PAL
run "$TROWEL" create -t szdd -o outdir/two.PA_ src/DEFAULT.PAL src/SECOND.PAL
assert_usage_error "two sources for SZDD"
assert_dir_empty "two sources: nothing left" outdir
rm src/SECOND.PAL
run "$TROWEL" create -t szdd -o no/such/folder/x.PA_ src/DEFAULT.PAL
assert_rc "OUT in a missing folder: exit 1" 1

# ---- folders: walked recursively, names relative to DIR, bytewise order
mkdir -p tree/d/sub tree/d/x
for n in b a A a-c x-z sub/c x/y .hidden; do
    printf '%s\n' "$n" >"tree/d/$n"
done
run "$TROWEL" create -v -t szdd -C tree -o outdir/tree.PA_ d
assert_usage_error "a folder of several files for SZDD"
assert_eq "folder walk: names in bytewise order" \
    "d/.hidden d/A d/a d/a-c d/b d/sub/c d/x-z d/x/y" "$(printf '%s\n' "$OUT" | tr '\n' ' ' | sed 's/ $//')"
assert_dir_empty "a folder of several files: nothing left" outdir

mkdir -p one/folder
cp src/DEFAULT.PAL one/folder/
run "$TROWEL" create -v -t szdd -C one -o one.PA_ folder
assert_rc "a folder of one file" 0
assert_eq "a folder of one file: its name" folder/DEFAULT.PAL "$OUT"
assert_eq "a folder of one file: 'l' recorded" 108 "$(bytes one.PA_ 9 1)"

# An absolute PATH is read from where it is and stored without the '/'.
run "$TROWEL" create -t szdd -o abs.PA_ "$PWD/src/DEFAULT.PAL"
assert_rc "absolute PATH" 0
assert_contains "absolute PATH: warning" "$ERR" "warning: stored as"
assert_same_file "absolute PATH: same file" X.PA_ abs.PA_
run "$TROWEL" create -q -t szdd -o abs2.PA_ "$PWD/src/DEFAULT.PAL"
assert_eq "absolute PATH with -q: no warning" "" "$ERR"

# OUT must not replace a source.
cp src/DEFAULT.PAL self.PAL
run "$TROWEL" create -t szdd -o self.PAL --force self.PAL
assert_rc "OUT is the source: exit 1" 1
assert_same_file "OUT is the source: source intact" src/DEFAULT.PAL self.PAL

# ---- manifests
"$TROWEL" extract "$DEFAULT" -C mfiles --manifest m.json || exit 1
run "$TROWEL" create --manifest m.json -C mfiles -o m.PA_
assert_rc "create --manifest without -t" 0
assert_eq "create --manifest: header as the original" "$(bytes "$DEFAULT" 0 14)" "$(bytes m.PA_ 0 14)"
run "$TROWEL" create -t szdd --manifest m.json -C mfiles -o m2.PA_
assert_rc "create --manifest with the same -t" 0
assert_same_file "create --manifest with -t: same bytes" m.PA_ m2.PA_
run "$TROWEL" create --manifest m.json -o m3.PA_ src/DEFAULT.PAL
assert_rc "create --manifest with a PATH" 0
assert_same_file "create --manifest with a PATH: same bytes" m.PA_ m3.PA_
run "$TROWEL" create --manifest no-such.json -o m4.PA_
assert_rc "missing manifest: exit 1" 1
assert_contains "missing manifest: named" "$ERR" "no-such.json"
printf 'this is not json' >bad.json
run "$TROWEL" create --manifest bad.json -C mfiles -o m5.PA_
assert_usage_error "manifest that is not JSON"
assert_no_file "manifest that is not JSON: no OUT" m5.PA_

finish
