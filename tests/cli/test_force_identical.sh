#!/usr/bin/env bash
# --force over files that already hold the output's bytes leaves them as they
# are (same inode, times and mode, as `install -C` does); any difference (a
# byte, a longer or a shorter file, a link, a folder) is replaced as before,
# and no temporary is ever left beside the targets.
. "${BASH_SOURCE%/*}/lib.sh"

inode() { stat -c %i "$1"; }
mtime() { stat -c %Y "$1"; }
no_temps() { # NAME DIR
    assert_eq "$1: no temporary left" "" "$(find "$2" -name '.trowel-*' | head -1)"
}

mkdir src
printf 'alpha\n' >src/a.txt
seq 1 5000 >src/b.txt
: >src/empty.txt
head -c 70000 /dev/urandom >src/big.bin
run "$TROWEL" create -t vpp -o t.vpp -C src a.txt b.txt empty.txt big.bin
assert_rc "create the packfile" 0
run "$TROWEL" extract -C out t.vpp
assert_rc "first extraction" 0

# ---- identical: left alone
touch -d '2001-02-03 04:05:06' out/*
chmod 444 out/a.txt
declare -A ino
for f in a.txt b.txt empty.txt big.bin; do ino[$f]=$(inode out/$f); done
run "$TROWEL" extract --force -C out t.vpp
assert_rc "--force over the same bytes" 0
for f in a.txt b.txt empty.txt big.bin; do
    assert_same_file "$f still holds the entry" src/$f out/$f
    assert_eq "$f: the same file (inode)" "${ino[$f]}" "$(inode out/$f)"
    assert_eq "$f: its time is kept" "$(date -d '2001-02-03 04:05:06' +%s)" "$(mtime out/$f)"
done
assert_eq "a.txt: its mode is kept" 444 "$(stat -c %a out/a.txt)"
no_temps "identical" out

# ---- every kind of difference: replaced
printf 'alphA\n' >out/a.txt.new && mv out/a.txt.new out/a.txt     # one byte, same size
printf 'x' >>out/b.txt                                            # longer
truncate -s 30000 out/big.bin                                     # shorter
printf 'not empty' >out/empty.txt                                 # an empty entry
before_a=$(inode out/a.txt) before_b=$(inode out/b.txt)
run "$TROWEL" extract --force -C out t.vpp
assert_rc "--force over different bytes" 0
for f in a.txt b.txt empty.txt big.bin; do
    assert_same_file "$f replaced by the entry" src/$f out/$f
done
assert_ne "a.txt is a new file" "$before_a" "$(inode out/a.txt)"
assert_ne "b.txt is a new file" "$before_b" "$(inode out/b.txt)"
no_temps "different" out

# ---- a link to a file holding the same bytes is replaced, not followed
cp src/a.txt elsewhere.txt
rm out/a.txt && ln -s ../elsewhere.txt out/a.txt
touch -d '2001-02-03 04:05:06' elsewhere.txt
run "$TROWEL" extract --force -C out t.vpp
assert_rc "--force over a symbolic link" 0
assert_eq "the link is replaced by a file" "regular file" "$(stat -c %F out/a.txt)"
assert_eq "the linked file is untouched" "$(date -d '2001-02-03 04:05:06' +%s)" "$(mtime elsewhere.txt)"

# ---- a folder under the entry's name is still refused
rm out/a.txt && mkdir out/a.txt
run "$TROWEL" extract --force -C out t.vpp
assert_rc "--force over a folder" 1
assert_eq "the folder is still there" "directory" "$(stat -c %F out/a.txt)"
no_temps "folder" out
rmdir out/a.txt

# ---- one output of a decoder that writes from the end (Delphine packer,
# over 8 MiB: a second thread writes it as it is decoded)
mkdir part
seq 1 1700000 >part/BIG.DAT
run "$TROWEL" create -t cine-part -o BIG.PRT -C part BIG.DAT
assert_rc "create a part file with a large packed entry" 0
assert_contains "the entry is packed" "$("$TROWEL" list -l BIG.PRT)" bytekiller
run "$TROWEL" extract -C pout BIG.PRT
assert_rc "extract the large entry" 0
run "$TROWEL" extract --force -C pout BIG.PRT
assert_rc "--force over the same large entry" 0
assert_same_file "the large entry is right" part/BIG.DAT pout/BIG.DAT
printf '0' | dd of=pout/BIG.DAT bs=1 seek=5000000 conv=notrunc status=none
run "$TROWEL" extract --force -C pout BIG.PRT
assert_rc "--force over a large entry with one byte changed" 0
assert_same_file "the large entry is put right" part/BIG.DAT pout/BIG.DAT
no_temps "large entry" pout

finish
