#!/usr/bin/env bash
# trowel on Trespasser GROFF files: the public SCNs of the corpus (save
# headers, list --json, verify, extract + create --manifest gives the same
# bytes), GRF worlds built here by tests/tools/make_grf.py + create --manifest
# (placements, OBJ checked by an independent parser with coordinates worked
# out by hand, GLB checked by Khronos' validator), version refusal, and
# hostile files (exit 1, a clear message, nothing left behind).
. "${BASH_SOURCE%/*}/lib.sh"

SCN_DIR="$TROWEL_CORPUS/trespasser/scn"
TOOLS="$TROWEL_SOURCE/tests/tools"

# ---- the public SCN files
if [ -f "$SCN_DIR/SlideTest.scn" ]; then
    for f in Error LastScene SlideTest; do
        run "$TROWEL" verify "$SCN_DIR/$f.scn"
        assert_rc "verify $f.scn" 0
        run "$TROWEL" extract "$SCN_DIR/$f.scn" -C "x-$f" --manifest "$f.json"
        assert_rc "extract $f.scn" 0
        run "$TROWEL" create --manifest "$f.json" -C "x-$f" -o "$f.again"
        assert_rc "create $f.scn again" 0
        assert_same_file "$f.scn rebuilt byte for byte" "$SCN_DIR/$f.scn" "$f.again"
    done
    run "$TROWEL" info --json "$SCN_DIR/SlideTest.scn"
    printf '%s\n' "$OUT" >slide.json
    assert_eq "SlideTest save version" 11 "$(json_get slide.json .save_header.version)"
    assert_eq "SlideTest first GROFF" 'M:\Island\TestScene\TestScene.GRF' "$(json_get slide.json '.save_header.groff[0]')"
    assert_eq "SlideTest animal version" 6 "$(json_get slide.json .save_header.animal_version)"
    assert_eq "SlideTest sections" 146 "$(json_get slide.json .section_count)"
    run "$TROWEL" convert "$SCN_DIR/LastScene.scn" --to json -o last.json
    assert_rc "convert LastScene --to json" 0
    assert_eq "LastScene save version (convert)" 21 "$(json_get last.json .save_header.version)"
    assert_eq "LastScene brief" true "$(json_get last.json .save_header.brief)"
    run "$TROWEL" list --json "$SCN_DIR/Error.scn"
    printf '%s\n' "$OUT" >error-list.json
    assert_eq "Error.scn first section" Header "$(json_get error-list.json '.entries[0].name')"
    assert_eq "Error.scn Header size" 1348 "$(json_get error-list.json '.entries[0].size')"
    assert_eq "Error.scn Header offset" 368 "$(json_get error-list.json '.entries[0].offset')"
    assert_eq "Error.scn Header flags (SPECIAL)" 2147483648 "$(json_get error-list.json '.entries[0].flags')"
else
    skip "corpus trespasser/scn is absent"
fi

# ---- create from plain files (no manifest)
printf 'first' >one
printf 'second!' >two
run "$TROWEL" create -t groff -o made.scn two one
assert_rc "create -t groff" 0
run "$TROWEL" verify made.scn
assert_rc "verify what create wrote" 0
run "$TROWEL" list made.scn
assert_eq "sections in the order given" "two one" "$(echo $OUT)"
# 48 + 2 * 32 = 112: 'second!' there, 'first' at 119, symbols at 124:
# "one" then "two" (strcmp order), 12 + 4 bytes each.
assert_eq "symbol table offset" 124 "$(u32le made.scn 20)"
assert_eq "file size" 156 "$(u32le made.scn 4)"
assert_eq "file size on disk" 156 "$(wc -c <made.scn | tr -d ' ')"

if ! have_cmd python3; then
    skip_all "python3 is missing: the GRF fixtures cannot be built"
fi

build_grf() { # KIND OUT
    python3 "$TOOLS/make_grf.py" "src-$1" "$1" &&
        "$TROWEL" create --manifest "src-$1/manifest.json" -C "src-$1" -o "$2" -f
}
build_grf plain world.grf
build_grf heap heap.grf
build_grf v10 old.grf

# ---- GRF: info and placements
run "$TROWEL" info --json world.grf
printf '%s\n' "$OUT" >world-info.json
assert_eq "GRF version" 15 "$(json_get world-info.json .grf.version)"
assert_eq "GRF kind" grf "$(json_get world-info.json .kind)"
run "$TROWEL" convert world.grf --to placements -o placements.json
assert_rc "convert --to placements" 0
assert_eq "placement 0 name" Box "$(json_get placements.json '.objects[0].name')"
assert_eq "placement 0 position" "[10,20,30]" "$(json_get placements.json '.objects[0].position' | sed 's/\.0//g')"
assert_eq "placement 0 scale" 2 "$(json_get placements.json '.objects[0].scale' | sed 's/\.0$//')"
assert_eq "placement 1 name" Marker "$(json_get placements.json '.objects[1].name')"
assert_eq "placement 0 class (value table)" CInstance "$(json_get placements.json '.objects[0].class')"
assert_eq "placement 1 has no class" MISSING "$(json_get placements.json '.objects[1].class')"
run "$TROWEL" convert world.grf --to values -o values.json
assert_rc "convert --to values" 0
assert_eq "value table name" World "$(json_get values.json .name)"
assert_eq "value 2 symbol" Mass "$(json_get values.json '.values[2].symbol')"
assert_eq "value 2 float" 2.5 "$(json_get values.json '.values[2].value')"
assert_eq "value 0 members" "[101,102]" "$(json_get values.json '.values[0].members')"
# The value table cut inside its last value: values refuses, placements
# keep going without classes (and say so).
head -c -6 src-plain/Attributes >cut && mv cut src-plain/Attributes
"$TROWEL" create --manifest src-plain/manifest.json -C src-plain -o cutvalues.grf -f
run "$TROWEL" convert cutvalues.grf --to values -o cut-values.json
assert_rc "a cut value table" 1
assert_contains "cut value table message" "$ERR" "the value table's value key runs past the section's end"
assert_no_file "nothing left for a cut value table" cut-values.json
run "$TROWEL" convert cutvalues.grf --to placements -o cut-placements.json
assert_rc "placements without a readable value table" 0
assert_contains "placements warn about the value table" "$ERR" "no classes: "

# ---- section names past 240 bytes: entry names are cut, which is said
# once; two names equal in their first 240 bytes are refused (they would
# extract onto each other)
mkdir -p long-src && printf 'aaaa' >long-src/a && printf 'bbbb' >long-src/b
python3 - <<'PYEOF' || exit 1
import json
long1, long2 = 'L' * 250 + '-one', 'L' * 250 + '-two'
def manifest(symbols):
    names = sorted(set(symbols), key=lambda s: s.encode())
    return {'trowel_manifest': 1, 'format': 'groff',
            'entries': [{'name': f, 'symbol': s, 'symbol_handle': 0x400000 + 0x20 * names.index(s),
                         'section_handle': 0x80000000 + i, 'user_flags': 0}
                        for i, (f, s) in enumerate(zip(('a', 'b'), symbols))],
            'symbols': [{'name': n, 'handle': 0x400000 + 0x20 * i, 'refcount': 1}
                        for i, n in enumerate(names)]}
json.dump(manifest([long1, 'short']), open('long-one.json', 'w'))
json.dump(manifest([long1, long2]), open('long-two.json', 'w'))
PYEOF
"$TROWEL" create --manifest long-one.json -C long-src -o long-one.grf || exit 1
"$TROWEL" create --manifest long-two.json -C long-src -o long-two.grf || exit 1
run "$TROWEL" list long-one.grf
assert_rc "a 254-byte section name: listed, exit 0" 0
assert_eq "the long name is cut to 240 bytes" 240 "$(printf '%s\n' "$OUT" | head -1 | tr -d '\n' | wc -c)"
assert_eq "the cut is said once" 1 "$(printf '%s\n' "$ERR" | grep -c 'cut in entry names')"
run "$TROWEL" extract long-two.grf -C long-out
assert_rc "two names equal in their first 240 bytes: refused, exit 1" 1
assert_contains "the collision is named" "$ERR" "sections 0 and 1 have names that are the same in their first 240 bytes"
assert_no_file "nothing extracted from the colliding file" long-out

# ---- an SZDD-wrapped GRF (as the game ships them) is read through the szdd
# input filter, with no extra step: same sections, same placements
"$TROWEL" create -t szdd -o world.gr_ world.grf
run "$TROWEL" info world.gr_
assert_rc "info on an SZDD-wrapped GRF" 0
assert_eq "info shows the filter chain" "world.gr_: szdd → groff" "$(printf '%s\n' "$OUT" | head -1)"
run "$TROWEL" list world.gr_
assert_eq "the wrapped GRF lists the same sections" "$("$TROWEL" list world.grf)" "$OUT"
run "$TROWEL" convert world.gr_ --to placements -o wrapped-placements.json
assert_rc "placements of the wrapped GRF" 0
assert_eq "the wrapped GRF places the same objects" "$(cat placements.json)" \
    "$(cat wrapped-placements.json)"
run "$TROWEL" extract world.gr_ -C wrapped
assert_rc "extract the wrapped GRF" 0
run "$TROWEL" extract world.grf -C unwrapped
assert_eq "the wrapped GRF extracts the same sections" "" "$(diff -r wrapped unwrapped)"

# The filter decodes to look inside only when a name promises a format: the
# file's own (.grf), the one its header restores (.gr_ + 'f'), or none
# (standard input). The same bytes under a plain-data name stay szdd.
cp world.gr_ wrapped.grf
cp world.gr_ world.dat
run "$TROWEL" info wrapped.grf
assert_eq "an SZDD named .grf is peeled" "wrapped.grf: szdd → groff" "$(printf '%s\n' "$OUT" | head -1)"
run "$TROWEL" info world.dat
assert_eq "an SZDD named .dat is not" "world.dat: szdd" "$(printf '%s\n' "$OUT" | head -1)"
run "$TROWEL" list - <world.gr_
assert_eq "from standard input it is peeled" "$("$TROWEL" list world.grf)" "$OUT"
run "$TROWEL" list -t groff world.dat
assert_eq "-t groff peels it whatever its name" "$("$TROWEL" list world.grf)" "$OUT"
# Without a missing character (QBasic header, or none recorded) a .gr_
# name still promises a .gr? format.
"$TROWEL" create -t szdd -O variant=qbasic -o qbasic.gr_ world.grf
"$TROWEL" create -t szdd -O missing=none -o nochar.gr_ world.grf
for f in qbasic.gr_ nochar.gr_; do
    run "$TROWEL" info "$f"
    assert_eq "$f is peeled" "$f: szdd → groff" "$(printf '%s\n' "$OUT" | head -1)"
done

# ---- GRF: OBJ + MTL. Box's triangle (0,0,0) (1,0,0) (0,1,0), scale 2, at
# (10,20,30): (10,20,30) (12,20,30) (10,22,30) in the game's Z-up frame,
# (x, z, -y) in the Y-up output: (10,30,-20) (12,30,-20) (10,30,-22).
run "$TROWEL" convert world.grf --to obj -o world.obj
assert_rc "convert --to obj" 0
run "$TROWEL" convert world.grf --to mtl -o world.mtl
assert_rc "convert --to mtl" 0
assert_eq "OBJ vertices placed" "v 10 30 -20|v 12 30 -20|v 10 30 -22" \
    "$(grep '^v ' world.obj | paste -sd '|')"
assert_contains "OBJ names its MTL" "$(cat world.obj)" "mtllib world.mtl"
assert_contains "MTL texture" "$(cat world.mtl)" "map_Kd Maps/rock.bmp"
assert_contains "MTL v15 colour 255,128,0" "$(cat world.mtl)" "Kd 1 0.501961 0"
run "$TROWEL" convert world.grf --to obj -O object=Box -o box.obj
assert_eq "one object in its own coordinates" "v 0 0 0|v 1 0 0|v 0 0 -1" \
    "$(grep '^v ' box.obj | paste -sd '|')"

# An independent reader: parse the OBJ, check every face index and count.
check_obj() { # FILE VERTICES FACES
    python3 - "$@" <<'EOF'
import sys
path, nv, nf = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
v = vt = vn = 0
faces = []
for line in open(path):
    w = line.split()
    if not w or w[0].startswith('#'):
        continue
    if w[0] == 'v':
        v += 1
        [float(x) for x in w[1:4]]
    elif w[0] == 'vt':
        vt += 1
    elif w[0] == 'vn':
        vn += 1
    elif w[0] == 'f':
        faces.append([tuple(int(i) for i in c.split('/') if i) for c in w[1:]])
    elif w[0] not in ('o', 'usemtl', 'mtllib', 'g', 's'):
        sys.exit('unknown statement ' + w[0])
for f in faces:
    for c in f:
        if not (1 <= c[0] <= v and (len(c) < 2 or 1 <= c[1] <= vt) and (len(c) < 3 or 1 <= c[2] <= vn)):
            sys.exit('bad index in %r' % (f,))
sys.exit(0 if (v, len(faces)) == (nv, nf) else 'counts %d %d' % (v, len(faces)))
EOF
}
if check_obj world.obj 3 1; then pass; else fail "world.obj reads back"; fi
run "$TROWEL" convert heap.grf --to obj -o heap.obj
assert_rc "convert a mesh heap --to obj" 0
if check_obj heap.obj 4 2; then pass; else fail "heap.obj reads back (a quad as two triangles)"; fi
# Slab's point (1,0,0) turned by pi/2 about Z is (0,1,0): (0,0,-1) Y-up.
if python3 - heap.obj <<'EOF'; then pass; else fail "mesh heap rotation"; fi
import sys
v = [list(map(float, l.split()[1:])) for l in open(sys.argv[1]) if l.startswith('v ')]
sys.exit(0 if all(abs(a - b) < 1e-6 for a, b in zip(v[1], (0, 0, -1))) else 1)
EOF

# ---- GRF: binary glTF through Khronos' validator
run "$TROWEL" convert world.grf --to glb -o world.glb
assert_rc "convert --to glb" 0
run "$TROWEL" convert heap.grf --to glb -o heap.glb
assert_rc "convert a mesh heap --to glb" 0
if have_cmd node; then
    for g in world.glb heap.glb; do
        run node "$TOOLS/gltf_validate.js" "$g"
        if [ "$RC" = 2 ]; then
            skip "gltf-validator is not installed (scripts/deps.sh test)"
        else
            assert_rc "$g passes gltf-validator" 0
            assert_contains "$g: no errors" "$OUT" "errors 0 "
        fi
    done
else
    skip "node is missing: the GLB files are not validated"
fi

# ---- refusals: exit 1, a message, no output left
run "$TROWEL" convert old.grf --to obj -o old.obj
assert_rc "GRF version 10 refused" 1
assert_contains "version message" "$ERR" "GRF version 10 is outside the versions the game loads (11..15)"
assert_no_file "nothing left for a refused GRF" old.obj
run "$TROWEL" convert world.grf --to obj -O object=Nobody -o nobody.obj
assert_contains "unknown object named" "$ERR" "no object named 'Nobody' in .region"
assert_rc "unknown object: bad input, exit 1 (not a usage error)" 1
assert_no_file "nothing left for an unknown object" nobody.obj

head -c 40 world.grf >cut.grf
run "$TROWEL" info cut.grf -t groff
assert_rc "cut header" 1
assert_contains "cut header message" "$ERR" "the GROFF header needs 48 bytes; the file has 40"
# A section offset past the end: extract fails for it, verify too.
cp made.scn far.scn
printf '\xff\xff\x00\x00' | dd of=far.scn bs=1 seek=$((48 + 32 + 8)) conv=notrunc 2>/dev/null
run "$TROWEL" extract far.scn -C far-out
assert_rc "extract a section past the end" 1
assert_contains "past-the-end message" "$ERR" "section 1 at offset 65535, 5 bytes, runs past the end of the file (156 bytes)"
assert_no_file "no file for the damaged section" far-out/one
run "$TROWEL" verify far.scn
assert_rc "verify a section past the end" 1
# A symbol name longer than the table.
cp made.scn sym.scn
printf '\x00\x01\x00\x00' | dd of=sym.scn bs=1 seek=$((124 + 4)) conv=notrunc 2>/dev/null
run "$TROWEL" list sym.scn
assert_rc "symbol past the table" 1
assert_contains "symbol message" "$ERR" "symbol 0's name of 256 bytes runs past the symbol table (20 bytes left)"

finish
