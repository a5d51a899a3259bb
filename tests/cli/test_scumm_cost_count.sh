#!/usr/bin/env bash
# COST animation count (issue 17): the seed's "size can be 0 ... if(size)
# num_anim++". Costumes written by tests/tools/make_cost.py from the seed,
# with a size field of 0 and the first animation's limb mask (0x0001,
# 0x0003) in the slot after the offset table, decode to exactly one
# animation with the right limbs and pictures, and come back byte for byte
# through convert --to png and create.
. "${BASH_SOURCE%/*}/lib.sh"

have_cmd python3 || skip_all "no python3: the costumes under test are not made"
TOOLS="${TROWEL_SOURCE:-${BASH_SOURCE%/*}/../..}/tests/tools"

for mask in 0001 0003; do
    python3 "$TOOLS/make_cost.py" "zero-$mask.cost" "$mask" 0
    run "$TROWEL" info "zero-$mask.cost"
    assert_rc "size 0, mask $mask: info" 0
    assert_contains "size 0, mask $mask: one animation" "$OUT" "animations: 1"
    assert_contains "size 0, mask $mask: it is defined" "$OUT" "animations_defined: 1"
    run "$TROWEL" convert "zero-$mask.cost" --to json -o "zero-$mask.json"
    assert_rc "size 0, mask $mask: json" 0
    assert_json_eq "size 0, mask $mask: animation count" "zero-$mask.json" \
        '.structure.animation_count' 1
    assert_json_eq "size 0, mask $mask: the size field is kept" "zero-$mask.json" \
        '.structure.size_field' 0
    assert_json_eq "size 0, mask $mask: animation 0's first limb" "zero-$mask.json" \
        '.structure.animations[0].limbs[0].limb' "$([ "$mask" = 0001 ] && echo 15 || echo 14)"
    assert_json_eq "size 0, mask $mask: no second animation" "zero-$mask.json" \
        '.structure.animations[1]' MISSING
    rm -rf "png-$mask"
    run "$TROWEL" convert "zero-$mask.cost" --to png -o "png-$mask"
    assert_rc "size 0, mask $mask: png" 0
    run "$TROWEL" create -t scumm-cost -o "again-$mask.cost" "png-$mask"
    assert_rc "size 0, mask $mask: create" 0
    assert_same_file "size 0, mask $mask: convert -> create gives the same bytes" \
        "zero-$mask.cost" "again-$mask.cost"
done
# make_cost.py paints limb L with colour (L + 1) & 15: limb 14 (the first
# picture of mask 0003) is 2x3 of colour 15.
PY=
for candidate in python3 /usr/bin/python3; do
    "$candidate" -c 'import PIL' >/dev/null 2>&1 && PY=$candidate && break
done
if [ -n "$PY" ]; then
    got=$("$PY" -c 'import sys
from PIL import Image
im = Image.open(sys.argv[1]); print(im.size, sorted(set(im.getdata())))' png-0003/pic_000.png)
    assert_eq "mask 0003: limb 14's picture: 2x3 of colour 15" "(2, 3) [15]" "$got"
else
    skip "no python3 with PIL: pixels not checked"
fi

# With a size field, the table has one more slot (the seed's num_anim++).
python3 "$TOOLS/make_cost.py" sized.cost 0003 100
run "$TROWEL" info sized.cost
assert_rc "size 100: info" 0
assert_contains "size 100: count byte 0 + 1 = one animation" "$OUT" "animations: 1"

finish
