#!/usr/bin/env bash
# Volition files cut short: a packfile of every version and mode (v1, v3,
# v4, v6, v10, v17; raw, compressed, condensed, compressed+condensed, LZ4,
# LZ4 solid; big-endian v3) cut inside its second entry is listed whole by
# info, list and convert, each entry it cuts is named with its bytes and
# the directory record's offset, extract writes the entries before the cut
# and nothing else, and every command exits 1. An ASM (v5, v11, v12) cut
# short lists the containers before the cut and exits 1, naming the
# container at fault; bytes after the last container do the same.
. "${BASH_SOURCE%/*}/lib.sh"

have_cmd jq || skip_all "jq is not installed"
: "${TROWEL_SOURCE:?set TROWEL_SOURCE to the repository}"
SEEDS="$TROWEL_SOURCE/fuzz/corpus"

mkdir src
for i in $(seq 1 300); do printf 'hello world %d\n' "$i"; done >src/a.txt
python3 -c 'import random, sys; r = random.Random(8); sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(5000)))' >src/b.bin
printf 'tail' >src/c.txt

# entry_record VERSION INDEX: the offset of an entry's directory record.
entry_record() {
    case $1 in
    1) echo $((0x800 + 64 * $2)) ;;
    3 | 4) echo $((0x800 + 28 * $2)) ;;
    6) echo $((0x800 + 24 * $2)) ;;
    10) echo $((0x28 + 24 * $2)) ;;
    17) echo $((0x78 + 48 * $2)) ;;
    esac
}

# check_cut LABEL VERSION WHOLE SOLID: cuts WHOLE inside its second entry
# and checks every command on it; SOLID=1 when the entries share one stream.
check_cut() {
    local label=$1 version=$2 whole=$3 solid=$4
    run "$TROWEL" list --json "$whole"
    local json=$OUT
    local count
    count=$(jq '.entries | length' <<<"$json")
    local off1 packed1
    off1=$(jq '.entries[1].offset' <<<"$json")
    packed1=$(jq '.entries[1].packed_size' <<<"$json")
    local len=$((off1 + packed1 / 2))
    local ext=${whole##*.}
    local cut="cut.$ext"
    head -c "$len" "$whole" >"$cut"
    # The warnings: every entry whose stored bytes pass the new end.
    local warnings="" errors="" i
    for ((i = 0; i < count; i++)); do
        local name off packed
        name=$(jq -r ".entries[$i].name" <<<"$json")
        off=$(jq ".entries[$i].offset" <<<"$json")
        packed=$(jq ".entries[$i].packed_size" <<<"$json")
        ((off + packed <= len)) && continue
        local msg
        msg="entry $i ($name): $packed bytes at offset $off run past the end of the $len-byte file (offset $(printf '0x%x' "$(entry_record "$version" "$i")"))"
        warnings+="trowel: $cut: warning: $msg"$'\n'
        errors+="trowel: $cut: $name: $msg"$'\n'
    done
    warnings=${warnings%$'\n'}
    errors=${errors%$'\n'}
    assert_ne "$label: the cut reaches an entry" "" "$warnings"

    run "$TROWEL" info "$cut"
    assert_rc "$label: info exits 1" 1
    assert_eq "$label: info warns for each entry cut" "$warnings" "$ERR"
    assert_contains "$label: info shows the header" "$OUT" "files: $count"

    run "$TROWEL" list "$cut"
    assert_rc "$label: list exits 1" 1
    assert_eq "$label: list shows every entry" "$(jq -r '.entries[].name' <<<"$json")" "$OUT"
    assert_eq "$label: list warns, then one summary" \
        "$warnings"$'\n'"trowel: $cut: damaged: not every entry can be read" "$ERR"

    run "$TROWEL" convert --to json "$cut"
    assert_rc "$label: convert exits 1" 1
    assert_eq "$label: convert writes nothing without --partial" "" "$OUT"
    run "$TROWEL" convert --partial --to json "$cut"
    assert_rc "$label: convert --partial exits 1" 1
    assert_eq "$label: convert warns" "$warnings" "$ERR"
    assert_eq "$label: convert keeps every entry" "$count" "$(jq '.entries | length' <<<"$OUT")"

    rm -rf out
    run "$TROWEL" extract "$cut" -C out
    assert_rc "$label: extract exits 1" 1
    if [ "$solid" = 1 ]; then
        assert_contains "$label: extract names the entry where the stream stops" "$ERR" \
            "trowel: $cut: $(jq -r '.entries[1].name' <<<"$json"): the "
        assert_contains "$label: ... and what was wanted" "$ERR" " stream stops at decoded byte "
    else
        assert_eq "$label: extract warns, then fails each entry cut" "$warnings"$'\n'"$errors" "$ERR"
    fi
    local first
    first=$(jq -r '.entries[0].name' <<<"$json")
    assert_eq "$label: only the entry before the cut is written" "$first" "$(cd out && find . -type f | sed 's|^\./||')"
    assert_same_file "$label: ... with its bytes" "src/$first" "out/$first"

    run "$TROWEL" verify "$cut"
    assert_rc "$label: verify exits 1" 1
}

for spec in "3 0 0" "3 1 0" "3 0 1" "3 1 1" "4 0 0" "4 1 0" "6 0 0" "6 1 0" "6 0 1" "6 1 1" \
    "10 0 0" "10 1 0" "10 0 1" "10 1 1" "17 0 0" "17 1 0" "17 1 1"; do
    read -r v c d <<<"$spec"
    rm -f whole.vpp_pc
    (cd src && "$TROWEL" create -t vpp -O version="$v" -O compressed="$c" -O condensed="$d" \
        -o ../whole.vpp_pc a.txt b.bin c.txt 2>/dev/null)
    solid=0
    [ "$c$d" = 11 ] && solid=1
    check_cut "v$v compressed=$c condensed=$d" "$v" whole.vpp_pc "$solid"
done

# Red Faction's v1 and a big-endian (console) v3, from the seed archives.
rm -rf src && mkdir src
"$TROWEL" extract "$SEEDS/vpp/synthetic_v1.vpp" -C src 2>/dev/null
check_cut "v1" 1 "$SEEDS/vpp/synthetic_v1.vpp" 0
rm -rf src && mkdir src
"$TROWEL" extract "$SEEDS/vpp/synthetic_v3_be.vpp_xbox2" -C src 2>/dev/null
check_cut "big-endian v3" 3 "$SEEDS/vpp/synthetic_v3_be.vpp_xbox2" 0

# A cut that spares every entry still shows in the header's file size.
cp "$SEEDS/vpp/synthetic_raw.vpp_pc" short.vpp_pc
chmod u+w short.vpp_pc
size=$(wc -c <short.vpp_pc)
python3 - "$size" <<'PY'
import struct, sys
with open("short.vpp_pc", "r+b") as f:
    f.seek(0x158)
    f.write(struct.pack("<I", int(sys.argv[1]) + 100))
PY
run "$TROWEL" list short.vpp_pc
assert_rc "cut in the last padding: exit 1" 1
assert_eq "cut in the last padding: says so" \
    "trowel: short.vpp_pc: warning: the packfile is cut short: the header gives $((size + 100)) bytes, the file has $size (offset 0x158)"$'\n'"trowel: short.vpp_pc: damaged: not every entry can be read" "$ERR"
rm -rf out
run "$TROWEL" extract short.vpp_pc -C out
assert_rc "cut in the last padding: extract exits 1" 1
assert_eq "cut in the last padding: every entry is written" \
    "$("$TROWEL" list "$SEEDS/vpp/synthetic_raw.vpp_pc" | sort)" "$(cd out && find . -type f | sed 's|^\./||' | sort)"

# ---- ASM
# v5, v11, v12 cut by one byte: the last container is the one at fault.
asm_cut() { # LABEL SEED EXPECTED-LIST EXPECTED-WARNING
    local sz
    sz=$(wc -c <"$SEEDS/asm/$2")
    head -c $((sz - 1)) "$SEEDS/asm/$2" >cut.asm_pc
    run "$TROWEL" list cut.asm_pc
    assert_rc "$1: list exits 1" 1
    assert_eq "$1: the containers before the cut" "$3" "$OUT"
    assert_eq "$1: names the container at fault" \
        "trowel: cut.asm_pc: warning: $4"$'\n'"trowel: cut.asm_pc: damaged: not every entry can be read" "$ERR"
    run "$TROWEL" info cut.asm_pc
    assert_rc "$1: info exits 1" 1
    assert_eq "$1: info warns" "trowel: cut.asm_pc: warning: $4" "$ERR"
    run "$TROWEL" convert --partial --to json cut.asm_pc
    assert_rc "$1: convert exits 1" 1
    assert_eq "$1: convert keeps the containers before the cut" "$3" \
        "$(jq -r '.asm.containers[].name' <<<"$OUT")"
    run "$TROWEL" verify cut.asm_pc
    assert_rc "$1: verify exits 1" 1
    assert_contains "$1: verify reports it" "$ERR" "trowel: cut.asm_pc: ${4%% (offset*}"
}
asm_cut "ASM v5" v5_dlc_activity.asm_pc \
    "$("$TROWEL" list "$SEEDS/asm/v5_dlc_activity.asm_pc" | head -n 7)" \
    "container 7 (dlc01_dm_06): needs 4 bytes at offset 0x252 but the data ends at 0x255; it is not listed (offset 0x252)"
asm_cut "ASM v11" v11_synthetic.asm_pc "" \
    "container 0 (mission_x): needs 1 bytes at offset 0xb4 but the data ends at 0xb4; it is not listed (offset 0xb4)"
asm_cut "ASM v12" v12_synthetic.asm_pc "" \
    "container 0 (mission_x): needs 1 bytes at offset 0xb5 but the data ends at 0xb5; it is not listed (offset 0xb5)"

# Cut in a container's name, several containers from the end (the corpus file).
RFG="$TROWEL_CORPUS/volition/rfg"
if [ -f "$RFG/cloth_containers.asm_pc" ]; then
    head -c 3000 "$RFG/cloth_containers.asm_pc" >cloth.asm_pc
    run "$TROWEL" list cloth.asm_pc
    assert_rc "cut corpus ASM: exit 1" 1
    assert_eq "cut corpus ASM: 40 of 57 containers listed" \
        "$("$TROWEL" list "$RFG/cloth_containers.asm_pc" | head -n 40)" "$OUT"
    assert_eq "cut corpus ASM: says what is lost" \
        "trowel: cloth.asm_pc: warning: container 40: a 23-byte name runs past the end of the file; it and the 16 after it are not listed (offset 0xbb6)"$'\n'"trowel: cloth.asm_pc: damaged: not every entry can be read" "$ERR"
else
    skip "no corpus ASM at $RFG"
fi

# Bytes after the last container.
{ cat "$SEEDS/asm/v12_synthetic.asm_pc"; printf 'abc'; } >long.asm_pc
run "$TROWEL" list long.asm_pc
assert_rc "ASM with bytes after it: exit 1" 1
assert_eq "ASM with bytes after it: every container" "mission_x" "$OUT"
assert_eq "ASM with bytes after it: says so" \
    "trowel: long.asm_pc: warning: 3 bytes follow the last container (offset 0xb6)"$'\n'"trowel: long.asm_pc: damaged: not every entry can be read" "$ERR"

# The header or remap tables cut: refused whole.
head -c 60 "$SEEDS/asm/v12_synthetic.asm_pc" >head.asm_pc
run "$TROWEL" list -t asm head.asm_pc
assert_rc "ASM cut in its remap tables: exit 1" 1
assert_eq "ASM cut in its remap tables: nothing listed" "" "$OUT"
assert_ne "ASM cut in its remap tables: a message" "" "$ERR"

finish
