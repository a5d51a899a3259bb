#!/usr/bin/env bash
# Red Faction (version 1) packfiles written by trowel: the three corpus
# packfiles (made by Volition's packer) rebuild byte for byte from their
# manifests and from their folders (create -t vpp -O version=1); packfiles
# laid out by an independent packer written here from the format notes
# (header padded to 2048, 64-byte entries padded to 2048, every file padded
# to 2048) come out of trowel byte for byte, and so does one whose padding
# after the files holds 39,377 non-zero bytes (old buffer contents, as in
# one real packfile of 27). Non-zero padding kept in the manifest is written
# back by every version's writer. Refusals: compression, long names.
. "${BASH_SOURCE%/*}/lib.sh"

have_cmd python3 || skip_all "python3 is needed to make the test files"

# An independent v1 packer (the format notes, not trowel's code).
cat >pack_v1.py <<'PY'
import random, struct, sys

def pack(files, junk=None):
    """files: [(name, bytes)]; junk: {index: bytes} written into the padding after that file."""
    body = b""
    for i, (name, data) in enumerate(files):
        pad = -len(data) % 2048
        fill = ((junk or {}).get(i, b"") + b"\0" * pad)[:pad]
        body += data + fill
    directory = b"".join(n.encode().ljust(60, b"\0") + struct.pack("<I", len(d)) for n, d in files)
    directory += b"\0" * (-len(directory) % 2048)
    total = 2048 + len(directory) + len(body)
    return struct.pack("<4I", 0x51890ACE, 1, len(files), total).ljust(2048, b"\0") + directory + body

random.seed(11)
files = []
for i in range(40):
    n = random.choice([0, 1, 60, 2047, 2048, 2049, 9000])
    files.append(("file%02d.%s" % (i, random.choice(["tbl", "v3c", "tga", "rfl"])),
                  bytes(random.getrandbits(8) for _ in range(n))))
files.append(("n" * 55 + ".tbl", b"the longest name a v1 entry holds: 59 bytes"))
open("plain.vpp", "wb").write(pack(files))
# Old buffer contents after the files: 39,377 non-zero bytes in all, in
# runs that start and end inside each padding.
junk, left = {}, 39377
for i, (name, data) in enumerate(files):
    room = -len(data) % 2048
    if room < 3 or left == 0:
        continue
    k = min(left, room - 2)
    junk[i] = b"\0" + bytes(random.randrange(1, 256) for _ in range(k))
    left -= k
assert left == 0, left
open("junk.vpp", "wb").write(pack(files, junk))
import os
os.makedirs("src", exist_ok=True)
for name, data in files:
    open("src/" + name, "wb").write(data)
PY
python3 pack_v1.py
assert_eq "the independent packer made its files" "yes" "$([ -f junk.vpp ] && [ -f plain.vpp ] && echo yes)"

# create -O version=1 from the files gives what Volition's packer lays out.
run "$TROWEL" create -t vpp -O version=1 -o made.vpp src
assert_rc "create -O version=1 from a folder" 0
assert_same_file "create -O version=1: the packer's layout byte for byte" plain.vpp made.vpp
run "$TROWEL" verify made.vpp
assert_rc "create -O version=1: verify" 0

rebuild() { # NAME ARCHIVE: extract --manifest, create --manifest, same bytes
    rm -rf "x.$1" "$1.json" "$1.re"
    run "$TROWEL" extract "$2" -C "x.$1" --manifest "$1.json"
    assert_rc "$1: extract --manifest" 0
    (cd "x.$1" && "$TROWEL" create --manifest "../$1.json" -o "../$1.re")
    assert_same_file "$1: rebuilt byte for byte" "$2" "$1.re"
}
rebuild plain plain.vpp
assert_json_eq "no padding recorded when it is all zero" plain.json .padding MISSING
rebuild junk junk.vpp
assert_eq "non-zero padding: the manifest keeps 39,377 bytes" 39377 \
    "$(python3 -c 'import json; print(sum(len(bytes.fromhex(p["hex"])) for p in json.load(open("junk.json"))["padding"]))')"
run "$TROWEL" verify junk.vpp
assert_rc "non-zero padding is no damage: verify" 0
# base= keeps it too, except after an entry it replaces.
run "$TROWEL" create -t vpp -O base=junk.vpp -o same.vpp
assert_same_file "base= with nothing changed keeps the padding" junk.vpp same.vpp
mkdir edit
replaced=$(ls x.junk | sed -n 4p)
cp "x.junk/$replaced" edit/
run "$TROWEL" create -t vpp -O base=junk.vpp -o edited.vpp "edit/$replaced"
assert_rc "base= replacing an entry" 0
assert_not_contains "base= replacing an entry: no warning" "$ERR" "padding bytes kept"
run "$TROWEL" verify edited.vpp
assert_rc "base= replacing an entry: verify" 0
assert_ne "base= replacing an entry: the padding after it is not kept" \
    "$(sha256_of junk.vpp)" "$(sha256_of edited.vpp)"
# The padding can only go back where it fits: a grown file gets zeros and
# one warning.
cp junk.json grown.json
rm -rf x.grown && cp -r x.junk x.grown
for f in x.grown/*; do printf 'xxxx' >>"$f"; done
(cd x.grown && "$TROWEL" create --manifest ../grown.json -o ../grown.vpp 2>../grown.err)
assert_eq "a padding that no longer fits: one warning" 1 "$(grep -c 'padding bytes kept' grown.err)"
run "$TROWEL" verify grown.vpp
assert_rc "a padding that no longer fits: the archive verifies" 0

# The corpus: three packfiles made by Volition's packer.
RF1="$TROWEL_CORPUS/volition/rf1"
if [ -f "$RF1/rfr_tbl-8c84f299.vpp" ]; then
    for f in dashfaction-a646dcf0.vpp rfr_mes-e62c0424.vpp rfr_tbl-8c84f299.vpp; do
        rebuild "$f" "$RF1/$f"
        assert_json_eq "$f: the manifest says version 1" "$f.json" .version 1
        while read -r hash name; do
            assert_file_sha256 "$f: $name" "x.$f/$name" "$hash"
        done <"$RF1/$f.sha256"
        rm -f folder.vpp
        run "$TROWEL" create -t vpp -O version=1 -C "x.$f" -o folder.vpp .
        assert_same_file "$f: create -O version=1 from its folder" "$RF1/$f" folder.vpp
    done
else
    skip "no Red Faction packfiles at $RF1"
fi

# Every version keeps the non-zero padding its manifest records: bytes
# written into each padding span (after the header's fields, the
# directory, the names, and between files) come back.
python3 - <<'PY'
import os, random
random.seed(5)
os.makedirs("pads", exist_ok=True)
for i in range(5):
    open("pads/f%d.bin" % i, "wb").write(bytes(random.getrandbits(8) for _ in range(random.choice([10, 3000, 5000]))))
PY
for spec in "1 0 0" "3 0 0" "3 0 1" "4 0 0" "6 1 0" "6 0 0" "10 0 1" "17 0 1"; do
    set -- $spec
    rm -rf o.vpp g.vpp
    (cd pads && "$TROWEL" create -t vpp -O version=$1 -O compressed=$2 -O condensed=$3 -o ../o.vpp -- * 2>/dev/null)
    run "$TROWEL" list --json o.vpp
    printf '%s\n' "$OUT" >o.list.json
    run "$TROWEL" info --json o.vpp
    printf '%s\n' "$OUT" >o.info.json
    python3 - <<'PY'
import json
d = bytearray(open("o.vpp", "rb").read())
ents = json.load(open("o.list.json"))["entries"]
info = json.load(open("o.info.json"))
v, n = info["version"], info["files"]
spans = [(a["offset"] + a["packed_size"], b["offset"]) for a, b in zip(ents, ents[1:])]
if v == 1:
    spans += [(16, 2048), (2048 + 64 * n, 4096), (ents[-1]["offset"] + ents[-1]["size"], len(d))]
if v in (3, 4, 6):
    spans += [(0x184 if v == 4 else 0x180, 2048), (2048 + n * (24 if v == 6 else 28), 4096)]
for s, e in spans:
    for k in range(s, e, 3):
        d[k] = 0xA5
open("g.vpp", "wb").write(d)
PY
    assert_ne "v$1 $2$3: padding was written into" "$(sha256_of o.vpp)" "$(sha256_of g.vpp)"
    rebuild "v$1-$2$3" g.vpp
done

# Refusals: no compression in version 1, names of 59 bytes at most.
printf 'x' >a.tbl
run "$TROWEL" create -t vpp -O version=1 -O compressed=1 -o c.vpp a.tbl
assert_usage_error "v1 compressed"
assert_contains "v1 compressed: says why" "$ERR" "version 1 (Red Faction) packfiles are neither compressed nor condensed"
assert_no_file "v1 compressed: no output" c.vpp
long=$(printf 'L%.0s' $(seq 1 56)).tbl
printf 'x' >"$long"
run "$TROWEL" create -t vpp -O version=1 -o l.vpp "$long"
assert_usage_error "v1 name of 60 bytes"
assert_contains "v1 name of 60 bytes: says why" "$ERR" "version 1 names are 1 to 59 bytes"
assert_no_file "v1 name of 60 bytes: no output" l.vpp

finish
