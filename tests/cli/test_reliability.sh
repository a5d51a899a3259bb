#!/usr/bin/env bash
# Issue 22's reliability points, each as a class:
#  - a FIFO (or device) where a sibling or a named input should be never
#    hangs trowel: clear error, exit 1;
#  - JSON is valid UTF-8 even for CP1252 names, whose bytes come back
#    through "name_bytes" (extract --manifest + create --manifest);
#  - convert of a damaged input writes nothing unless --partial;
#  - a nested archive's unsafe names are refused as top-level ones are;
#  - duplicate names in an archive are said to be duplicates and never
#    replace one another, even with -f; a planted folder link is named;
#  - stale named temporaries of a process that is gone are swept.
. "${BASH_SOURCE%/*}/lib.sh"

# Runs with a time limit: a hang is a failure, not a stuck test.
limited() {
    timeout 10 "$@"
}

# ---- FIFOs never block
TENTACLE="$TROWEL_CORPUS/scumm/openquest/tentacle.000"
if [ -f "$TENTACLE" ]; then
    mkdir fifo && cp "$TENTACLE" fifo/ && mkfifo fifo/tentacle.001
    for verb in info list extract; do
        rm -rf out
        if [ "$verb" = extract ]; then
            run limited "$TROWEL" extract -C out fifo/tentacle.000
        else
            run limited "$TROWEL" "$verb" fifo/tentacle.000
        fi
        assert_rc "$verb beside a FIFO sibling: exit 1, not a hang" 1
        assert_contains "$verb beside a FIFO sibling: says what is in the way" "$ERR" \
            "trowel: fifo/tentacle.000: warning: no data file: sibling tentacle.001: is a named pipe (FIFO), not a regular file"
    done
else
    skip "no SCUMM corpus ($TENTACLE): FIFO sibling not checked"
fi
mkfifo named.fifo
run limited "$TROWEL" info named.fifo
assert_rc "a FIFO as the input: exit 1, not a hang" 1
assert_eq "a FIFO as the input: says so" \
    "trowel: named.fifo: is a named pipe (FIFO), not a regular file" "$ERR"
run limited "$TROWEL" create --manifest named.fifo -o never.vpp_pc
assert_rc "a FIFO as the manifest: exit 1, not a hang" 1
assert_contains "a FIFO as the manifest: says so" "$ERR" "not a regular file"
assert_no_file "a FIFO as the manifest: nothing written" never.vpp_pc
# Standard input is still read as a stream.
printf 'hello, world\n' >hello.txt
"$TROWEL" compress -c zlib -o hello.z hello.txt
run limited "$TROWEL" decompress -c zlib - <hello.z
assert_rc "standard input is still a stream: exit 0" 0
assert_eq "standard input is still a stream: the bytes" "hello, world" "$OUT"

# ---- JSON with a CP1252 name
mkdir src
printf 'cafe\n' >"src/$(printf 'caf\351.txt')"
printf 'plain\n' >src/plain.txt
run "$TROWEL" create -t vpp -C src -o cp.vpp_pc "$(printf 'caf\351.txt')" plain.txt
assert_rc "create with a CP1252 name: exit 0" 0
run "$TROWEL" list --json cp.vpp_pc
assert_rc "list --json: exit 0" 0
cp "$OUT_FILE" list.json
if have_cmd python3; then
    run python3 -c '
import json, sys
raw = open(sys.argv[1], "rb").read()
doc = json.loads(raw.decode("utf-8", "strict"))
e = [x for x in doc["entries"] if x["name"] != "plain.txt"][0]
print(e["name"], e["name_bytes"], "name_bytes" in doc["entries"][1])' list.json
    assert_rc "list --json: strict UTF-8 JSON for python3" 0
    assert_eq "list --json: the name as CP1252, its bytes in name_bytes" \
        "café.txt 636166e92e747874 False" "$OUT"
else
    skip "no python3: strict JSON not checked"
fi
if have_cmd jq; then
    assert_eq "list --json: jq reads the same name" "café.txt" \
        "$(jq -r '.entries[0].name' list.json)"
else
    skip "no jq: JSON not read with jq"
fi
run "$TROWEL" convert --to json -o cp.json cp.vpp_pc
assert_rc "convert --to json: exit 0" 0
if have_cmd python3; then
    run python3 -c 'import json,sys; json.loads(open(sys.argv[1],"rb").read().decode("utf-8","strict"))' cp.json
    assert_rc "convert --to json: strict UTF-8 JSON" 0
fi
run "$TROWEL" extract --manifest cp.manifest.json -C cpout cp.vpp_pc
assert_rc "extract --manifest: exit 0" 0
assert_file_exists "extract: the file has the name's exact bytes" "cpout/$(printf 'caf\351.txt')"
if have_cmd python3; then
    run python3 -c 'import json,sys; json.loads(open(sys.argv[1],"rb").read().decode("utf-8","strict"))' cp.manifest.json
    assert_rc "the manifest: strict UTF-8 JSON" 0
fi
run "$TROWEL" create --manifest cp.manifest.json -C cpout -o cp2.vpp_pc
assert_rc "create --manifest: exit 0" 0
assert_same_file "extract --manifest + create --manifest: the same bytes" cp.vpp_pc cp2.vpp_pc
# A name edited by hand wins over the stale name_bytes left beside it.
sed 's/"café.txt"/"renamed.txt"/' cp.manifest.json >edited.json
mv "cpout/$(printf 'caf\351.txt')" cpout/renamed.txt
run "$TROWEL" create --manifest edited.json -C cpout -o cp3.vpp_pc
assert_rc "create --manifest with an edited name: exit 0" 0
run "$TROWEL" list cp3.vpp_pc
assert_eq "an edited name is taken as written" "renamed.txt"$'\n'"plain.txt" "$OUT"

# ---- hand-made packfiles: duplicates, a nested archive with unsafe names,
# a damaged one (VPP v10 as test_vpp_hostile.sh writes them).
if have_cmd python3; then
    python3 - <<'PY'
import struct

def v10(names, entries, data):
    n = len(entries)
    body = b"".join(entries) + names
    h = struct.pack("<IIIIIII", 12 + 28 + len(body) + len(data), 0, n, 24 * n,
                    len(names), len(data), 0xFFFFFFFF)
    return struct.pack("<II", 0x51890ACE, 10) + b"\0\0\0\0" + h + body + data

def pack(files):
    names = b"".join(n + b"\0" for n, _ in files)
    entries, data, name_off = [], b"", 0
    for n, d in files:
        entries.append(struct.pack("<QIIIHH", name_off, len(data), len(d), 0xFFFFFFFF, 0, 1))
        name_off += len(n) + 1
        data += d
    return v10(names, entries, data)

open("dup.vpp_pc", "wb").write(pack([(b"a.txt", b"first\n"), (b"b.txt", b"b\n"),
                                     (b"a.txt", b"second\n")]))
open("sub.vpp_pc", "wb").write(pack([(b"sub/x.txt", b"x\n")]))
inner = pack([(b"/abs.txt", b"abs\n"), (b"../up.txt", b"up\n"), (b"ok.txt", b"ok\n")])
open("nest.vpp_pc", "wb").write(pack([(b"inner.vpp_pc", inner)]))
whole = pack([(b"one.txt", b"1" * 100), (b"two.txt", b"2" * 100)])
open("cut.vpp_pc", "wb").write(whole[:-50])
PY
else
    skip_all "no python3: the hand-made packfiles cannot be written"
fi

# Duplicates: said, never replacing, with or without -f.
for force in "" -f; do
    rm -rf dupout
    run "$TROWEL" extract $force -C dupout dup.vpp_pc
    assert_rc "duplicate names ${force:-without -f}: exit 1" 1
    assert_contains "duplicate names ${force:-without -f}: says so" "$ERR" \
        "trowel: dup.vpp_pc: a.txt: duplicate name in the archive: an earlier entry has it (dupout/a.txt); this one is not written"
    assert_not_contains "duplicate names ${force:-without -f}: not an existing file" "$ERR" "exists already"
    assert_eq "duplicate names ${force:-without -f}: the first stays" "first" "$(cat dupout/a.txt)"
    assert_eq "duplicate names ${force:-without -f}: the others are written" "b" "$(cat dupout/b.txt)"
done
# The same archive twice into one folder with -f: a clash between archives.
rm -rf dupout
run "$TROWEL" extract -f -C dupout sub.vpp_pc sub.vpp_pc
assert_rc "one name from two archives with -f: exit 1" 1
assert_contains "one name from two archives: says so" "$ERR" \
    "an entry of an earlier archive of this run has this name (dupout/sub/x.txt); this one does not replace it"

# A planted folder link.
rm -rf linkout elsewhere && mkdir linkout elsewhere && ln -s ../elsewhere linkout/sub
run "$TROWEL" extract -C linkout sub.vpp_pc
assert_rc "a planted folder link: exit 1" 1
assert_contains "a planted folder link: says a link is in the way" "$ERR" \
    "cannot make folder for linkout/sub/x.txt: a symbolic link is in the way (sub)"
assert_not_contains "a planted folder link: not 'Not a directory'" "$ERR" "Not a directory"
assert_dir_empty "a planted folder link: nothing written through it" elsewhere

# A nested archive's unsafe names are refused, not re-rooted under .d/.
rm -rf nestout
run "$TROWEL" extract -r -C nestout nest.vpp_pc
assert_rc "extract -r, unsafe nested names: exit 1" 1
assert_contains "extract -r: the absolute name is refused" "$ERR" \
    "refusing unsafe entry name '/abs.txt'"
assert_contains "extract -r: the climbing name is refused" "$ERR" \
    "refusing unsafe entry name '../up.txt'"
assert_contains "extract -r: the refusal gives the offset" "$ERR" "(offset 0x"
assert_no_file "extract -r: /abs.txt not re-rooted" nestout/inner.vpp_pc.d/abs.txt
assert_no_file "extract -r: ../up.txt not re-rooted" nestout/inner.vpp_pc.d/up.txt
assert_no_file "extract -r: nothing climbs out" nestout/up.txt
assert_eq "extract -r: the safe nested entry is written" "ok" "$(cat nestout/inner.vpp_pc.d/ok.txt)"

# ---- convert of a damaged input: nothing unless --partial.
run "$TROWEL" info cut.vpp_pc
assert_rc "the cut packfile is damaged (info: exit 1)" 1
run "$TROWEL" convert --to json -o cut.json cut.vpp_pc
assert_rc "convert damaged: exit 1" 1
assert_contains "convert damaged: says nothing was written" "$ERR" \
    "trowel: cut.vpp_pc: damaged: nothing written (--partial writes what could be read)"
assert_no_file "convert damaged: no output file" cut.json
run "$TROWEL" convert --to json cut.vpp_pc
assert_rc "convert damaged to standard output: exit 1" 1
assert_eq "convert damaged to standard output: nothing written" "" "$OUT"
run "$TROWEL" convert --partial --to json -o cut.json cut.vpp_pc
assert_rc "convert --partial damaged: still exit 1" 1
assert_file_exists "convert --partial: what could be read is written" cut.json
assert_json_eq "convert --partial: the whole entry is there" cut.json '.entries[0].name' one.txt
run "$TROWEL" convert --help
assert_contains "convert --help documents --partial" "$OUT" "--partial"
# extract keeps writing every whole entry, as before.
rm -rf cutout
run "$TROWEL" extract -C cutout cut.vpp_pc
assert_rc "extract damaged: exit 1" 1
assert_eq "extract damaged: the whole entry is written" "$(printf '1%.0s' $(seq 100))" "$(cat cutout/one.txt)"
assert_no_file "extract damaged: the cut entry is not" cutout/two.txt

# ---- stale named temporaries: a dead process's are swept, a live one's kept
rm -rf stale && mkdir stale
dead=$(sh -c 'echo $$')
while kill -0 "$dead" 2>/dev/null; do dead=$(sh -c 'echo $$'); done
printf 'left by kill -9' >"stale/.trowel-$dead-0"
printf 'left by kill -9' >"stale/.trowel-$dead-g3"
printf 'live' >"stale/.trowel-$$-0"
run "$TROWEL" extract -C stale cp.vpp_pc
assert_rc "extract beside stale temporaries: exit 0" 0
assert_no_file "a dead process's temporary is swept" "stale/.trowel-$dead-0"
assert_no_file "a dead process's commit temporary is swept" "stale/.trowel-$dead-g3"
assert_file_exists "a live process's temporary is kept" "stale/.trowel-$$-0"
assert_eq "the entry is written" "plain" "$(cat stale/plain.txt)"
if have_cmd flock; then
    # A file its writer holds locked is kept even when its pid looks dead
    # (a writer in another pid namespace).
    printf 'held' >"stale/.trowel-$dead-1"
    flock "stale/.trowel-$dead-1" sleep 5 &
    holder=$!
    sleep 0.5
    run "$TROWEL" extract -f -C stale dup.vpp_pc
    assert_file_exists "a locked temporary is kept" "stale/.trowel-$dead-1"
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null
else
    skip "no flock(1): a locked temporary not checked"
fi

finish
