#!/usr/bin/env bash
# Damaged files: a cut or partly corrupt archive is listed whole, every
# entry that can still be read is extracted, each one that cannot is
# reported, and the exit status is 1. A cut directory is refused clearly.
# Failed extractions leave no empty folder; names of 255 bytes work.
. "${BASH_SOURCE%/*}/lib.sh"

# ---- a part file of three entries: stored, packed, stored
mkdir src
printf 'AAAAAAAAAAA' >src/A11.BIN
seq 1 2000 >src/TEXT.TXT
for i in $(seq 0 255); do printf "\\$(printf %03o "$i")"; done >src/NOISE.BIN
run "$TROWEL" create -t cine-part -o P.PRT -C src A11.BIN TEXT.TXT NOISE.BIN
assert_rc "create the part file" 0
assert_eq "the part file's size (the offsets below depend on it)" 4813 "$(wc -c <P.PRT | tr -d ' ')"
NAMES=$'A11.BIN\nTEXT.TXT\nNOISE.BIN'

# Cut inside the last entry's data.
head -c 4700 P.PRT >CUT.PRT
W_NOISE="trowel: CUT.PRT: warning: entry 2 (NOISE.BIN): 256 bytes at offset 4557 run past the end of the 4700-byte file (offset 0x4e)"
run "$TROWEL" list CUT.PRT
assert_rc "list a cut part file: exit 1" 1
assert_eq "list a cut part file: every entry" "$NAMES" "$OUT"
assert_eq "list a cut part file: the damage, once, then one summary" \
    "$W_NOISE"$'\n'"trowel: CUT.PRT: damaged: not every entry can be read" "$ERR"
run "$TROWEL" extract CUT.PRT -C cut
assert_rc "extract a cut part file: exit 1" 1
assert_eq "extract a cut part file: the damaged entry is reported" \
    "$W_NOISE"$'\n'"trowel: CUT.PRT: NOISE.BIN: entry 2 (NOISE.BIN): 256 bytes at offset 4557 run past the end of the 4700-byte file (offset 0x4e)" "$ERR"
assert_same_file "extract a cut part file: stored entry before the cut" src/A11.BIN cut/A11.BIN
assert_same_file "extract a cut part file: packed entry before the cut" src/TEXT.TXT cut/TEXT.TXT
assert_eq "extract a cut part file: nothing else (no temporary)" $'A11.BIN\nTEXT.TXT' "$(ls -A cut)"
run "$TROWEL" verify CUT.PRT
assert_rc "verify a cut part file: exit 1" 1

# Cut inside the packed entry: only the first is left.
head -c 1000 P.PRT >CUT2.PRT
run "$TROWEL" list CUT2.PRT
assert_rc "list a part file cut early: exit 1" 1
assert_eq "list a part file cut early: every entry" "$NAMES" "$OUT"
assert_contains "list a part file cut early: names the packed entry" "$ERR" \
    "trowel: CUT2.PRT: warning: entry 1 (TEXT.TXT): 4452 bytes at offset 105 run past the end of the 1000-byte file (offset 0x30)"
run "$TROWEL" extract CUT2.PRT -C cut2
assert_rc "extract a part file cut early: exit 1" 1
assert_eq "extract a part file cut early: the first entry only" A11.BIN "$(ls -A cut2)"

# Corrupt packed data: found only when decoded; the other entries come out.
cp P.PRT COR.PRT
printf '\377\377\377\377' | dd of=COR.PRT bs=1 seek=2000 conv=notrunc status=none
run "$TROWEL" extract COR.PRT -C cor
assert_rc "extract a corrupt entry: exit 1" 1
assert_eq "extract a corrupt entry: reported with its name and offset" \
    "trowel: COR.PRT: TEXT.TXT: checksum mismatch: stored 0xde530e5f, the data words give 0x0a9eb088 (offset 0x11c5)" "$ERR"
assert_eq "extract a corrupt entry: the others are written" $'A11.BIN\nNOISE.BIN' "$(ls -A cor)"
assert_same_file "extract a corrupt entry: after it, intact" src/NOISE.BIN cor/NOISE.BIN

# A cut directory is refused whole, clearly, and leaves no folder.
head -c 50 P.PRT >DIR.PRT
run "$TROWEL" list -t cine-part DIR.PRT
assert_rc "list a cut directory: exit 1" 1
assert_eq "list a cut directory: says so" \
    "trowel: DIR.PRT: directory of 3 entries needs 94 bytes but the file has 50 (offset 0x0)" "$ERR"
assert_eq "list a cut directory: nothing listed" "" "$OUT"
run "$TROWEL" extract -t cine-part DIR.PRT -C dir/deep
assert_rc "extract a cut directory: exit 1" 1
assert_no_file "extract a cut directory: no folder made" dir

# ---- SZDD cut short: the header reads, the one entry does not
head -c 600 "$SZDD_DIR/INTRO.HL_" >cut600.HL_
W_SZDD="trowel: cut600.HL_: warning: header declares 19225 bytes but the 586-byte stream can hold at most 4951: the file is truncated or the length is corrupt (offset 0xe)"
run "$TROWEL" list cut600.HL_
assert_rc "list a cut SZDD: exit 1" 1
assert_eq "list a cut SZDD: the entry" cut600.HLp "$OUT"
assert_eq "list a cut SZDD: why, then one summary" \
    "$W_SZDD"$'\n'"trowel: cut600.HL_: damaged: not every entry can be read" "$ERR"
run "$TROWEL" extract cut600.HL_ -C szdd-out
assert_rc "extract a cut SZDD: exit 1" 1
assert_eq "extract a cut SZDD: the entry is reported" \
    "$W_SZDD"$'\n'"trowel: cut600.HL_: cut600.HLp: header declares 19225 bytes but the 586-byte stream can hold at most 4951: the file is truncated or the length is corrupt (offset 0xe)" "$ERR"
assert_no_file "extract a cut SZDD: the folder it made is gone" szdd-out
mkdir mine
run "$TROWEL" extract cut600.HL_ -C mine
assert_rc "extract a cut SZDD into a folder that exists: exit 1" 1
if [ -d mine ]; then pass; else fail "... the folder is the user's: kept"; fi
assert_dir_empty "... and left empty" mine
run "$TROWEL" list "$SZDD_DIR/INTRO.HL_"
assert_rc "list an intact SZDD: exit 0 (not damaged)" 0
assert_eq "list an intact SZDD: no message" "" "$ERR"

# ---- VOL.CNF whose volumes are missing
mkdir vol
run "$TROWEL" create -t cine-part -o vol/PROCS00 -C src A11.BIN TEXT.TXT
run "$TROWEL" create -t cine-part -o vol/RSC04 -C src NOISE.BIN
run "$TROWEL" create -t cine-volcnf -o vol/VOL.CNF -C vol PROCS00 RSC04
assert_rc "create VOL.CNF" 0
run "$TROWEL" list vol/VOL.CNF
assert_rc "list VOL.CNF, volumes there: exit 0" 0
assert_eq "list VOL.CNF, volumes there: no message" "" "$ERR"
rm vol/RSC04
W_RSC="trowel: vol/VOL.CNF: warning: volume RSC04 is not beside VOL.CNF: its files cannot be read"
run "$TROWEL" list vol/VOL.CNF
assert_rc "list VOL.CNF, a volume missing: exit 1" 1
assert_eq "list VOL.CNF, a volume missing: every entry" \
    $'PROCS00/A11.BIN\nPROCS00/TEXT.TXT\nRSC04/NOISE.BIN' "$OUT"
assert_eq "list VOL.CNF, a volume missing: says which" \
    "$W_RSC"$'\n'"trowel: vol/VOL.CNF: damaged: not every entry can be read" "$ERR"
run "$TROWEL" extract vol/VOL.CNF -C vout
assert_rc "extract VOL.CNF, a volume missing: exit 1" 1
assert_eq "extract VOL.CNF, a volume missing: reports its entry" \
    "$W_RSC"$'\n'"trowel: vol/VOL.CNF: RSC04/NOISE.BIN: volume RSC04 is not beside VOL.CNF" "$ERR"
assert_same_file "extract VOL.CNF, a volume missing: the other volume's files" src/TEXT.TXT vout/PROCS00/TEXT.TXT
assert_eq "extract VOL.CNF, a volume missing: no empty folder for it" PROCS00 "$(ls -A vout)"
rm vol/PROCS00
run "$TROWEL" extract vol/VOL.CNF -C vout2
assert_rc "extract VOL.CNF, every volume missing: exit 1" 1
assert_no_file "extract VOL.CNF, every volume missing: no folder at all" vout2

# ---- a part file with a damaged volume inside VOL.CNF names the volume
cp CUT.PRT vol/PROCS00
cp P.PRT vol/RSC04
run "$TROWEL" create -t cine-volcnf -o vol/VOL2.CNF -C vol PROCS00 RSC04
run "$TROWEL" list vol/VOL2.CNF
assert_rc "list VOL.CNF over a cut volume: exit 1" 1
assert_contains "list VOL.CNF over a cut volume: the warning names the volume" "$ERR" \
    "trowel: vol/VOL2.CNF: warning: volume PROCS00: entry 2 (NOISE.BIN): 256 bytes at offset 4557 run past the end of the 4700-byte file (offset 0x4e)"

# ---- names of 255 bytes (the most most file systems take)
LONG=$(printf 'n%.0s' $(seq 1 251))
cp "$SZDD_DIR/DEFAULT.PA_" "$LONG.PA_"
# Mixed case in the name: the recorded 'l' is restored as it is.
run "$TROWEL" extract "$LONG.PA_" -C long
assert_rc "extract to a 255-byte name" 0
assert_eq "extract to a 255-byte name: no message" "" "$ERR"
assert_file_sha256 "extract to a 255-byte name: content" "long/$LONG.PAl" "$(expanded_sha256 DEFAULT.PA_)"
run "$TROWEL" extract --force "$LONG.PA_" -C long
assert_rc "extract --force over a 255-byte name" 0
assert_eq "extract --force over a 255-byte name: one file, no temporary" 1 "$(ls -A long | wc -l | tr -d ' ')"
run "$TROWEL" create -t szdd -o "long/$LONG.PA_" "long/$LONG.PAl"
assert_rc "create -o a 255-byte name" 0
run "$TROWEL" extract "long/$LONG.PA_" -C long2
assert_rc "create -o a 255-byte name: it reads back" 0
assert_same_file "create -o a 255-byte name: round trip" "long/$LONG.PAl" "long2/$LONG.PAl"
run "$TROWEL" create -t szdd -o "long/$LONG.PA_" "long/$LONG.PAl"
assert_rc "create -o an existing 255-byte name: exit 1" 1
assert_contains "create -o an existing 255-byte name: says it exists" "$ERR" "exists (use --force to overwrite)"

finish
