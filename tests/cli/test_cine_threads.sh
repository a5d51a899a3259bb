#!/usr/bin/env bash
# A large Delphine-packed entry read on several threads (the stream loaded
# from its end by one thread while another decodes it, its output written
# by a third as it is finished, from a window of 8 MiB that moves down the
# output three times here) must give exactly what one thread gives (-T 1):
# the same bytes, the same error and exit status, nothing left behind, on
# the sound entry and on damaged copies: bits flipped where decoding starts
# or anywhere (so after the window has moved), with the checksum made to
# match (the decoder meets the damage) or not (the checksum says so first).
. "${BASH_SOURCE%/*}/lib.sh"
have_cmd python3 || skip_all "python3 is needed to damage the part file"

mkdir part
seq 1 3600000 >part/BIG.DAT # 27.7 MB: threads start at 8 MiB, the window is 8 MiB
run "$TROWEL" create -t cine-part -o BIG.PRT -C part BIG.DAT
assert_rc "create a part file with a large packed entry" 0
line=$("$TROWEL" list -l BIG.PRT | awk '$5 == "BIG.DAT"')
packed=$(echo "$line" | awk '{ print $2 }')
offset=$(($(echo "$line" | awk '{ print $3 }')))
assert_contains "the entry is packed" "$line" bytekiller

# damage SEED FIX_CHECKSUM [SPAN]: BIG.PRT with bits flipped in the SPAN
# bytes (default 40,000) below the checksum, where decoding starts, into dmg.prt
damage() {
    python3 - "$1" "$2" "$offset" "$packed" "${3:-40000}" <<'PY'
import random, struct, sys
seed, fix, off, n = int(sys.argv[1]), sys.argv[2] == "1", int(sys.argv[3]), int(sys.argv[4])
span = min(int(sys.argv[5]), n - 8)
d = bytearray(open("BIG.PRT", "rb").read())
random.seed(seed)
for _ in range(random.randrange(1, 4)):
    d[off + n - 9 - random.randrange(0, span)] ^= 1 << random.randrange(8)
if fix:
    words = struct.unpack_from(">%dI" % (n // 4 - 2), d, off)
    x = 0
    for w in words:
        x ^= w
    struct.pack_into(">I", d, off + n - 8, x)
open("dmg.prt", "wb").write(d)
PY
}

# outcome THREADS FILE: what extract shows, to stdout and into a folder
outcome() {
    local t=$1 f=$2
    rm -rf "out$t"
    "$TROWEL" extract -T "$t" --stdout "$f" BIG.DAT 2>"err$t" | sha256sum
    echo "rc ${PIPESTATUS[0]}"
    sed "s|out$t|OUT|g" "err$t"
    "$TROWEL" extract -T "$t" -C "out$t" "$f" 2>"err$t"
    echo "rc $?"
    sed "s|out$t|OUT|g" "err$t"
    [ -f "out$t/BIG.DAT" ] && sha256sum <"out$t/BIG.DAT"
    ls -A "out$t" 2>/dev/null
}

outcome 1 BIG.PRT >one.txt
outcome 2 BIG.PRT >two.txt
assert_same_file "the sound entry: one thread and several agree" one.txt two.txt
assert_contains "the sound entry is extracted" "$(cat two.txt)" "rc 0"
decode_errors=0 checksum_errors=0
for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
    span=40000
    ((seed > 8)) && span=$packed # anywhere: after the window has moved, mostly
    damage "$seed" $((seed % 4 != 0)) "$span"
    outcome 1 dmg.prt >one.txt
    outcome 2 dmg.prt >two.txt
    assert_same_file "damaged copy $seed: one thread and several agree" one.txt two.txt
    grep -q "checksum mismatch" two.txt && checksum_errors=$((checksum_errors + 1))
    grep -q "runs past\|ran out\|offset 0 would\|reaches past\|never read" two.txt &&
        decode_errors=$((decode_errors + 1))
done
assert_ne "some damage is found by the decoder" 0 "$decode_errors"
assert_ne "some by the checksum" 0 "$checksum_errors"

finish
