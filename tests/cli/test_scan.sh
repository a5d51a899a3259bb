#!/usr/bin/env bash
# trowel scan DIR (and info DIR): every file of a tree identified, one line
# each, in name order: format, version, entries, damage; unknown files
# listed as unknown; unreadable ones (a cut file of a known format, a FIFO,
# a dangling link, a file without read permission) listed with why and
# never opened when not regular. None fails the scan; a missing DIR does.
. "${BASH_SOURCE%/*}/lib.sh"

C="$TROWEL_CORPUS"
[ -f "$C/volition/rfg/cloth_sim.vpp_pc" ] && [ -f "$C/scumm/openquest/tentacle.000" ] ||
    skip_all "corpus absent"

mkdir -p tree/game tree/sub/deeper
cp "$C/volition/rfg/cloth_sim.vpp_pc" tree/
head -c 240000 "$C/volition/rfg/cloth_sim.vpp_pc" >tree/cut.vpp_pc
head -c 4000 "$C/volition/rfg/xray_effect.str2_pc" >tree/sub/cut.str2_pc
cp "$C/scumm/openquest/tentacle.000" "$C/scumm/openquest/tentacle.001" tree/game/
cp "$SZDD_DIR/DEFAULT.PA_" tree/sub/deeper/
printf 'just some text\n' >tree/notes.txt
mkfifo tree/sub/pipe
ln -s /nonexistent tree/dangling
ln -s .. tree/sub/loop
printf 'x' >tree/sub/locked.bin
chmod 000 tree/sub/locked.bin

run timeout 20 "$TROWEL" scan tree
assert_rc "scan: exit 0 whatever the files" 0
expected="tree/cloth_sim.vpp_pc: vpp v3, 58 entries
tree/cut.vpp_pc: vpp v3, 58 entries, damaged
tree/dangling: unreadable: a link to nothing
tree/game/tentacle.000: xor69 → scumm-res v6, 231 entries
tree/game/tentacle.001: xor69 → scumm-res v6, 231 entries
tree/notes.txt: unknown
tree/sub/cut.str2_pc: vpp, unreadable: the packfile is cut short: its directory and names (3 files) end at 4155, the file at 4000
tree/sub/deeper/DEFAULT.PA_: szdd v0, 1 entry"
# root reads any file: the locked one is then identified (as unknown)
if [ "$(id -u)" = 0 ]; then locked="tree/sub/locked.bin: unknown"
else locked="tree/sub/locked.bin: unreadable: "; fi
assert_eq "scan: the known, damaged, unknown and unreadable files, in name order" \
    "$expected" "$(printf '%s\n' "$OUT" | grep -v 'sub/locked\|sub/loop\|sub/pipe')"
assert_contains "scan: a file without read permission" "$OUT" "$locked"
assert_contains "scan: a FIFO is listed, never opened" "$OUT" \
    "tree/sub/pipe: unreadable: not a regular file (not opened)"
assert_contains "scan: a link to a folder is not followed" "$OUT" \
    "tree/sub/loop: unreadable: a link to a folder (not followed)"
assert_eq "scan: nothing on stderr" "" "$ERR"

# info DIR is the same scan
run timeout 20 "$TROWEL" info tree
assert_rc "info DIR: exit 0" 0
info_out=$OUT
run timeout 20 "$TROWEL" scan tree
assert_eq "info DIR: the scan's lines" "$OUT" "$info_out"

# --json: one element a file, the same verdicts
run timeout 20 "$TROWEL" scan --json tree
assert_rc "scan --json: exit 0" 0
printf '%s' "$OUT" >scan.json
if have_cmd jq; then
    assert_eq "scan --json: every file" "$(printf '%s\n' "$info_out" | wc -l | tr -d ' ')" \
        "$(jq length scan.json)"
    assert_eq "scan --json: a known file" '"vpp" 3 58 false' \
        "$(jq -r '.[] | select(.file == "tree/cloth_sim.vpp_pc") | "\"\(.format)\" \(.version) \(.entries) \(.damaged)"' scan.json)"
    assert_eq "scan --json: damaged" true \
        "$(jq '.[] | select(.file == "tree/cut.vpp_pc") | .damaged' scan.json)"
    assert_eq "scan --json: unknown is format null" null \
        "$(jq '.[] | select(.file == "tree/notes.txt") | .format' scan.json)"
    assert_eq "scan --json: the wrapper chain" '["xor69"]' \
        "$(jq -c '.[] | select(.file == "tree/game/tentacle.000") | .filters' scan.json)"
    assert_contains "scan --json: an unreadable file's error" \
        "$(jq -r '.[] | select(.file == "tree/sub/cut.str2_pc") | .error.message' scan.json)" \
        "the packfile is cut short"
else
    skip "jq absent: scan --json checks"
fi

# a file operand is taken alone; a missing one fails, the others still done
run "$TROWEL" scan tree/notes.txt missing-dir tree/sub/deeper
assert_rc "scan: a missing operand exits 1" 1
assert_eq "scan: the others are still done" \
    $'tree/notes.txt: unknown\ntree/sub/deeper/DEFAULT.PA_: szdd v0, 1 entry' "$OUT"
assert_contains "scan: the missing one is named" "$ERR" "missing-dir"
run "$TROWEL" scan
assert_usage_error "scan without a DIR"
chmod 600 tree/sub/locked.bin

# ---- did you mean
run "$TROWEL" scna tree
assert_usage_error "a mistyped command"
assert_contains "a mistyped command: the suggestion" "$ERR" "Did you mean 'scan'?"
run "$TROWEL" list -t vpk tree/cloth_sim.vpp_pc
assert_contains "a mistyped format id: the suggestion" "$ERR" "Did you mean 'vpp'?"
run "$TROWEL" convert --to pgn tree/cloth_sim.vpp_pc
assert_contains "a mistyped target: the suggestion" "$ERR" "Did you mean 'png'?"
run "$TROWEL" extract -O rwa=1 -C x "$C/valve/ez2/scenes/scenes.image"
assert_usage_error "a mistyped -O key"
assert_contains "a mistyped -O key: the suggestion" "$ERR" "Did you mean '-O raw=1'?"
run "$TROWEL" list --jsno tree/cloth_sim.vpp_pc
assert_usage_error "a mistyped option"
assert_contains "a mistyped option: the suggestion" "$ERR" "Did you mean '--json'?"
run "$TROWEL" help extrat
assert_contains "help of a mistyped command: the suggestion" "$ERR" "Did you mean 'extract'?"
run "$TROWEL" convert "$C/scumm/openquest/cube.cost" -o c.png -O colums=2
assert_contains "a mistyped convert key: the suggestion keeps the value" "$ERR" \
    "Did you mean '-O columns=2'?"
run "$TROWEL" frobnicate
assert_not_contains "no suggestion when nothing is close" "$ERR" "Did you mean"

finish
