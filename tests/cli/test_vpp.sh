#!/usr/bin/env bash
# trowel info / list / extract / verify on Volition packfiles (v3): the Red
# Faction Guerrilla archives of the corpus extract to the listed SHA-256
# sums in directory order; hostile archives fail cleanly.
. "${BASH_SOURCE%/*}/lib.sh"

RFG="$TROWEL_CORPUS/volition/rfg"
# Without the corpus nothing here can run: exit 77 (a failure under
# TROWEL_REQUIRE_ALL=1), never a pass with no checks.
[ -f "$RFG/xray_effect.str2_pc" ] || skip_all "no Volition corpus at $RFG"

for f in cloth_sim.vpp_pc dlc01_l1.vpp_pc dlcp01_activities.vpp_pc xray_effect.str2_pc; do
    run "$TROWEL" extract -C "out.$f" "$RFG/$f"
    assert_rc "extract $f" 0
    # Names in directory order, and each entry's bytes.
    run "$TROWEL" list "$RFG/$f"
    assert_eq "list $f: names in order" "$(awk '{print $2}' "$RFG/$f.sha256")" "$OUT"
    while read -r hash name; do
        assert_file_sha256 "$f: $name" "out.$f/$name" "$hash"
    done <"$RFG/$f.sha256"
    run "$TROWEL" verify "$RFG/$f"
    assert_rc "verify $f" 0
done

run "$TROWEL" info "$RFG/xray_effect.str2_pc"
assert_contains "info: mode" "$OUT" "mode: compressed+condensed"
assert_contains "info: data start" "$OUT" "data_start: 6144"
run "$TROWEL" list --json "$RFG/xray_effect.str2_pc"
printf '%s\n' "$OUT" >x.json
assert_json_valid "list --json is JSON" x.json
assert_eq "list --json: first packed size" "200" "$(json_get x.json '.entries[0].packed_size')"
assert_eq "list --json: v3 hash" "3664807029" "$(json_get x.json '.entries[0].hash')"

# Version 17 headers without their data (Saints Row 2022): truncation, exit 1.
run "$TROWEL" list "$TROWEL_CORPUS/volition/sr2022/test_header.vpp_pc"
assert_rc "v17: exit 1" 1
assert_contains "v17: says why" "$ERR" "the packfile is cut short: its directory and names (149383 files) end at 13264416, the file at 144"

# Hostile: a name that climbs out of DIR, and a solid stream cut short.
python3 - "$RFG/xray_effect.str2_pc" evil.str2_pc cut.str2_pc <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
names = 0x1000
first = d.index(b"\0", names)
new = b"../" + bytes(d[names:first - 3])     # same length: ../ + the name less 3
d[names:first] = new
open(sys.argv[2], "wb").write(d)
open(sys.argv[3], "wb").write(open(sys.argv[1], "rb").read()[:6144 + 400])
PY
mkdir jail
run "$TROWEL" extract -C jail/dir evil.str2_pc
assert_rc "../ name: exit 1" 1
assert_eq "../ name: nothing outside DIR" "" "$(ls -A jail | grep -v '^dir$')"
assert_contains "../ name: named" "$ERR" "../xray_effect.mat"
run "$TROWEL" extract -C cutdir cut.str2_pc
assert_rc "cut stream: exit 1" 1
assert_contains "cut stream: says where" "$ERR" "xray_effect.gpeg_pc: the zlib stream stops at decoded byte"
assert_file_sha256 "cut stream: entries before the cut are extracted" cutdir/xray_effect.mat_pc \
    "$(awk 'NR==1 {print $1}' "$RFG/xray_effect.str2_pc.sha256")"
assert_no_file "cut stream: no partial entry" cutdir/xray_effect.gpeg_pc
run "$TROWEL" verify cut.str2_pc
assert_rc "cut stream: verify fails" 1

finish
