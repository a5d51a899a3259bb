#!/usr/bin/env bash
# trowel create -t vpp -O base=: the base's entries that cannot be copied as
# stored (a solid zlib or LZ4 stream rebuilt in another mode, compressed
# entries rebuilt raw) are decoded into core's temporary storage and read
# back from it. Past 1 MiB (or a tenth of --mem-limit) that storage is an
# unnamed file in $TMPDIR: the rebuilt archive must hold the same bytes as
# the sources, whichever side of the threshold, and $TMPDIR must be empty
# afterwards, also when the rebuild fails half-way.
. "${BASH_SOURCE%/*}/lib.sh"

have_cmd python3 || skip_all "python3 is needed to make the test files"

mkdir src tmp
python3 - <<'PY'
import random
random.seed(21)
# Three files of 1.5 MiB (together past the 1 MiB threshold) and small ones.
for i, n in enumerate([1536 * 1024, 1536 * 1024, 1536 * 1024, 0, 1, 4097]):
    data = bytes((random.getrandbits(8) if j % 5 == 0 else 97 + j % 11) for j in range(n))
    open("src/f%d.bin" % i, "wb").write(data)
PY

# base= from a solid stream (v3 and v17) and from compressed-only entries,
# rebuilt raw: every entry is decoded into the spill.
for mode in "3 1 1" "17 1 1" "3 1 0" "10 1 0"; do
    set -- $mode
    tag="base v$1 compressed=$2 condensed=$3 rebuilt raw"
    rm -rf base.vpp_pc new.vpp_pc x
    (cd src && "$TROWEL" create -t vpp -O version="$1" -O compressed="$2" -O condensed="$3" \
        -o ../base.vpp_pc -- * 2>/dev/null)
    TMPDIR=$PWD/tmp run "$TROWEL" create -t vpp -O base=base.vpp_pc -O compressed=0 \
        -O condensed=0 -o new.vpp_pc
    assert_rc "$tag: exit 0" 0
    assert_dir_empty "$tag: nothing left in TMPDIR" tmp
    run "$TROWEL" info new.vpp_pc
    assert_contains "$tag: raw" "$OUT" "raw"
    mkdir x
    run "$TROWEL" extract new.vpp_pc -C x
    for f in src/*; do
        assert_same_file "$tag: ${f#src/}" "$f" "x/${f#src/}"
    done
done

# The same under a memory limit whose tenth is below the smallest file: the
# spill goes to disk from its first entry.
rm -rf base.vpp_pc new.vpp_pc x
(cd src && "$TROWEL" create -t vpp -O compressed=1 -O condensed=1 -o ../base.vpp_pc -- * 2>/dev/null)
TMPDIR=$PWD/tmp run "$TROWEL" create --mem-limit 8M -t vpp -O base=base.vpp_pc -O compressed=0 \
    -o new.vpp_pc
assert_rc "small memory limit: exit 0" 0
assert_dir_empty "small memory limit: nothing left in TMPDIR" tmp
mkdir x
run "$TROWEL" extract new.vpp_pc -C x
assert_same_file "small memory limit: f1.bin" src/f1.bin x/f1.bin

# A base cut short in its solid stream: it opens (damaged), the rebuild
# fails at the cut (exit 1) and leaves neither output nor spill behind.
python3 - <<'PY'
data = open("base.vpp_pc", "rb").read()
open("bad.vpp_pc", "wb").write(data[: len(data) // 2])
PY
rm -f new.vpp_pc
TMPDIR=$PWD/tmp run "$TROWEL" create -t vpp -O base=bad.vpp_pc -O compressed=0 -o new.vpp_pc
assert_rc "damaged base: exit 1" 1
assert_contains "damaged base: names the entry and the cut" "$ERR" "f1.bin: the zlib stream stops"
assert_no_file "damaged base: no output" new.vpp_pc
assert_dir_empty "damaged base: nothing left in TMPDIR" tmp

finish
