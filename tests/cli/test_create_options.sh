#!/usr/bin/env bash
# The batch options of extract and create (--exclude, --files-from,
# --dry-run), two sources under one stored name (refused, or --keep-last),
# a missing -O base= file named as such, and what -O asm= changed in the
# ASM told in one line (more with -v).
. "${BASH_SOURCE%/*}/lib.sh"

mkdir -p src/a src/b src/c
printf 'one\n' >src/a/x.txt
printf 'two\n' >src/b/x.txt
printf 'three\n' >src/c/y.txt
printf 'skip me\n' >src/c/z.bak

# ---- Two sources, one stored name (packfile names are flat).
run "$TROWEL" create -t vpp -C src -o clash.vpp_pc a b
assert_rc "clash: exit 2" 2
assert_contains "clash: names both" "$ERR" \
    "'a/x.txt' and 'b/x.txt' would both be stored as 'x.txt'"
assert_contains "clash: says what to do" "$ERR" "--keep-last"
assert_no_file "clash: no output" clash.vpp_pc
run "$TROWEL" create -t vpp -C src -o last.vpp_pc --keep-last a b
assert_rc "--keep-last: exit 0" 0
assert_contains "--keep-last: warns" "$ERR" "'b/x.txt' is stored as 'x.txt' in place of 'a/x.txt'"
run "$TROWEL" list last.vpp_pc
assert_eq "--keep-last: one entry" "x.txt" "$OUT"
run "$TROWEL" extract -C last last.vpp_pc
assert_same_file "--keep-last: the last one's bytes" src/b/x.txt last/x.txt
# With -O base=, the entry the clash replaces in place is the last one's too.
printf 'zero\n' >x.txt
run "$TROWEL" create -t vpp -o base.vpp_pc x.txt
run "$TROWEL" create -t vpp -O base=base.vpp_pc -C src -o onbase.vpp_pc --keep-last a b
assert_rc "--keep-last over a base: exit 0" 0
run "$TROWEL" extract --stdout onbase.vpp_pc
assert_eq "--keep-last over a base: the last one's bytes" "two" "$OUT"
# A version 17 packfile keeps paths: no clash.
run "$TROWEL" create -t vpp -O version=17 -C src -o paths.vpp_pc a b
assert_rc "v17 paths: exit 0" 0

# VOL.CNF names each volume after its part file's last part: the same.
mkdir -p pa pb
printf 'first\n' >f.txt
run "$TROWEL" create -t cine-part -o pa/PART01 f.txt
printf 'second\n' >f.txt
run "$TROWEL" create -t cine-part -o pb/PART01 f.txt
run "$TROWEL" create -t cine-volcnf -o VOL.CNF pa/PART01 pb/PART01
assert_rc "VOL.CNF clash: exit 2" 2
assert_contains "VOL.CNF clash: names both" "$ERR" \
    "'pa/PART01' and 'pb/PART01' would both be stored as 'PART01'"
assert_no_file "VOL.CNF clash: no output" VOL.CNF
run "$TROWEL" create -t cine-volcnf -o VOL.CNF pa/PART01 pb/PART01 --keep-last
assert_rc "VOL.CNF --keep-last: exit 0" 0
cp VOL.CNF pb/
run "$TROWEL" extract --stdout pb/VOL.CNF
assert_eq "VOL.CNF --keep-last: one volume, the last one's" "second" "$OUT"

# ---- -O base= that does not exist: named as the base, not OUT.
run "$TROWEL" create -t vpp -O base=missing.vpp_pc -C src -o new.vpp_pc c
assert_rc "missing base: exit 1" 1
assert_contains "missing base: names it" "$ERR" "missing.vpp_pc: cannot open the -O base file"
assert_not_contains "missing base: not OUT" "$ERR" "new.vpp_pc"
assert_no_file "missing base: no output" new.vpp_pc

# ---- create --exclude, --files-from, --dry-run.
run "$TROWEL" create -t vpp -C src -o ex.vpp_pc --exclude '*.bak' --exclude b a c
assert_rc "create --exclude" 0
run "$TROWEL" list ex.vpp_pc
assert_eq "create --exclude: what is left" "x.txt
y.txt" "$OUT"
printf 'a/x.txt\n\nc/y.txt\r\n' >list.txt
run "$TROWEL" create -t vpp -C src -o ff.vpp_pc --files-from list.txt
assert_rc "create --files-from" 0
run "$TROWEL" list ff.vpp_pc
assert_eq "create --files-from: the listed files" "x.txt
y.txt" "$OUT"
run "$TROWEL" create -t vpp -C src -o ff2.vpp_pc --files-from - <list.txt
assert_rc "create --files-from -" 0
assert_same_file "create --files-from -: same archive" ff.vpp_pc ff2.vpp_pc
printf '\n' >empty.txt
run "$TROWEL" create -t vpp -C src -o none.vpp_pc --files-from empty.txt
assert_rc "create --files-from of nothing: exit 2" 2
run "$TROWEL" create -n -t vpp -C src -o dry.vpp_pc a c
assert_rc "create -n: exit 0" 0
assert_eq "create -n: lists the names" "a/x.txt
c/y.txt
c/z.bak" "$OUT"
assert_no_file "create -n: writes nothing" dry.vpp_pc
assert_eq "create -n: no temporary left" "" "$(ls -A | grep '^\.trowel' || true)"
run "$TROWEL" create -n -t vpp -C src -o ex.vpp_pc c
assert_rc "create -n over an existing OUT: exit 1, as the real run" 1
run "$TROWEL" create -n -t vpp -C src -o dry.vpp_pc a b
assert_rc "create -n of a clash: exit 2, as the real run" 2

# ---- extract --exclude, --files-from, --dry-run.
run "$TROWEL" create -t vpp -O version=17 -C src -o all.vpp_pc .
assert_rc "all: create" 0
run "$TROWEL" extract -C ex all.vpp_pc --exclude '*.bak' --exclude 'b/*'
assert_rc "extract --exclude" 0
assert_eq "extract --exclude: what is written" "ex/a/x.txt
ex/c/y.txt" "$(find ex -type f | LC_ALL=C sort)"
run "$TROWEL" extract -C ex2 all.vpp_pc 'c/*' --exclude '*.bak'
assert_rc "extract PATTERN --exclude: exit 0" 0
assert_eq "extract PATTERN --exclude: the PATTERN's files less the excluded" "ex2/c/y.txt" \
    "$(find ex2 -type f | LC_ALL=C sort)"
printf 'c/*\n' >pat.txt
run "$TROWEL" extract -C ff all.vpp_pc --files-from pat.txt 'a/*'
assert_rc "extract --files-from" 0
assert_eq "extract --files-from: PATTERNs of both" "ff/a/x.txt
ff/c/y.txt
ff/c/z.bak" "$(find ff -type f | LC_ALL=C sort)"
printf 'nothing/*\n' >pat2.txt
run "$TROWEL" extract -C ff2 all.vpp_pc --files-from pat2.txt
assert_rc "extract --files-from matching nothing: exit 1" 1
assert_contains "extract --files-from matching nothing: says so" "$ERR" "no entry matches 'nothing/*'"
run "$TROWEL" extract -n -C dry all.vpp_pc
assert_rc "extract -n: exit 0" 0
assert_eq "extract -n: lists the files" "dry/a/x.txt
dry/b/x.txt
dry/c/y.txt
dry/c/z.bak" "$(printf '%s\n' "$OUT" | LC_ALL=C sort)"
assert_no_file "extract -n: writes nothing" dry
run "$TROWEL" extract -n --manifest dry.json -C dry all.vpp_pc
assert_contains "extract -n --manifest: lists the manifest" "$OUT" "dry.json"
assert_no_file "extract -n --manifest: not written" dry.json
run "$TROWEL" extract -n -C ex all.vpp_pc
assert_rc "extract -n over existing files: exit 1, as the real run" 1
assert_contains "extract -n over existing files: counted" "$ERR" "2 files exist already"
run "$TROWEL" extract -n --stdout all.vpp_pc
assert_rc "extract -n --stdout: usage error" 2

# ---- Several archives holding one name: told as a clash, not "exists".
mkdir -p s1 s2
printf 'first\n' >s1/x.txt
printf 'second\n' >s2/x.txt
printf 'only b\n' >s2/y.txt
run "$TROWEL" create -t vpp -C s1 -o one.vpp_pc .
run "$TROWEL" create -t vpp -C s2 -o two.vpp_pc .
run "$TROWEL" extract -C both one.vpp_pc two.vpp_pc
assert_rc "clash between archives: exit 1" 1
assert_eq "clash between archives: one line naming both" \
    "trowel: one.vpp_pc and two.vpp_pc both hold x.txt: the first archive's file is kept; extract them into separate folders (-C)" "$ERR"
assert_same_file "clash between archives: the first one's file" s1/x.txt both/x.txt
assert_file_exists "clash between archives: the rest is written" both/y.txt
run "$TROWEL" extract -n -C both2 one.vpp_pc two.vpp_pc
assert_rc "clash between archives, -n: exit 1 as well" 1
assert_contains "clash between archives, -n: told" "$ERR" "both hold x.txt"
run "$TROWEL" extract -C both one.vpp_pc two.vpp_pc
assert_contains "clash over existing files: still 'exist'" "$ERR" "3 files exist already"

RFG="$TROWEL_CORPUS/volition/rfg"
if [ -f "$RFG/dlcp01_activities.vpp_pc" ] && have_cmd jq; then
    # A damaged packfile: -n fails as extracting it would.
    cp "$RFG/dlcp01_activities.vpp_pc" damaged.vpp_pc
    chmod u+w damaged.vpp_pc
    printf '\377\377\377\177' | dd of=damaged.vpp_pc bs=1 seek=$((0x1800 + 0x154)) conv=notrunc 2>/dev/null
    run "$TROWEL" extract -r -C dd damaged.vpp_pc
    real=$RC
    run "$TROWEL" extract -n -r -C dn damaged.vpp_pc
    assert_eq "extract -n on damage: the real run's status" "$real" "$RC"
    assert_no_file "extract -n on damage: nothing written" dn

    # ---- -O asm=: what changed, in one line (more with -v).
    run "$TROWEL" extract -C d "$RFG/dlcp01_activities.vpp_pc"
    cp d/dlc_activity_containers.asm_pc a.asm_pc
    chmod u+w a.asm_pc
    b=DLC_HA_08_08.str2_pc
    run "$TROWEL" extract -C "x.$b" --manifest "$b.json" "d/$b"
    run "$TROWEL" create --manifest "$b.json" -C "x.$b" -o "$b" -O asm=a.asm_pc
    assert_rc "asm unchanged: exit 0" 0
    assert_eq "asm unchanged: says so" \
        "trowel: a.asm_pc: ASM unchanged (its containers already matched)" "$ERR"
    head -c 5000 /dev/zero >>"x.$b/dlc01_08_08_129.layer_pc"
    run "$TROWEL" create --manifest "$b.json" -C "x.$b" -o "$b" -O asm=a.asm_pc --force
    assert_rc "asm grown: exit 0" 0
    assert_contains "asm grown: one line naming the container and sizes" "$ERR" \
        "trowel: a.asm_pc: ASM updated, 1 container: DLC_HA_08_08 (1 primitive resized, size 9060 -> 14060, read size 2813 -> "
    assert_eq "asm grown: one line" 1 "$(printf '%s\n' "$ERR" | wc -l)"
    cp d/dlc_activity_containers.asm_pc a.asm_pc
    run "$TROWEL" create -v --manifest "$b.json" -C "x.$b" -o "$b" -O asm=a.asm_pc --force
    assert_contains "asm -v: the primitive" "$ERR" \
        "primitive dlc01_08_08_129.layer_pc: cpu size 9060 -> 14060, gpu size 0 -> 0"
    assert_contains "asm -v: the container" "$ERR" \
        "container DLC_HA_08_08: base offset 6144 -> 6144, read size 2813 -> "
    cp d/dlc_activity_containers.asm_pc a.asm_pc
    run "$TROWEL" create -q --manifest "$b.json" -C "x.$b" -o "$b" -O asm=a.asm_pc --force
    assert_eq "asm -q: silent" "" "$ERR"
else
    skip "no Volition corpus or no jq: damaged -n and -O asm= reports not checked"
fi

# ---- --per-archive: each archive in a folder of its own, no clash
run "$TROWEL" extract --per-archive -C per one.vpp_pc two.vpp_pc
assert_rc "--per-archive: exit 0" 0
assert_same_file "--per-archive: one's x.txt in per/one" s1/x.txt per/one/x.txt
assert_same_file "--per-archive: two's x.txt in per/two" s2/x.txt per/two/x.txt
assert_same_file "--per-archive: two's y.txt in per/two" s2/y.txt per/two/y.txt
assert_eq "--per-archive: no clash told" "" "$ERR"
run "$TROWEL" extract --per-archive -C per one.vpp_pc two.vpp_pc
assert_rc "--per-archive again: the files exist, exit 1" 1
assert_contains "--per-archive again: counted as existing" "$ERR" "3 files exist already"
run "$TROWEL" extract --per-archive -n -C per2 one.vpp_pc two.vpp_pc
assert_rc "--per-archive -n: exit 0" 0
assert_contains "--per-archive -n: lists per2/two/y.txt" "$OUT" "per2/two/y.txt"
assert_no_file "--per-archive -n: nothing written" per2
cp one.vpp_pc one.str2_pc
run "$TROWEL" extract --per-archive -C per3 one.vpp_pc one.str2_pc
assert_rc "--per-archive: two archives for one folder: usage error" 2
assert_contains "--per-archive: the shared folder is named" "$ERR" "would both go to per3/one"
assert_no_file "--per-archive: nothing written when refused" per3
run "$TROWEL" extract --per-archive --stdout one.vpp_pc
assert_rc "--per-archive --stdout: usage error" 2

finish
