#!/usr/bin/env bash
# --names DIR on a scenes.image: what a folder gives, as the file-system
# lister in core reads it for the format (through the io hooks). A folder
# holding "scenes" (in any case, a link to one counts) is scanned from it;
# any other folder is taken by its real path ("." and links resolved), so
# its last "scenes" component starts the names; inside the scan a link is
# never followed (no loops, no way out of the tree) but a link named .vcd is
# offered by its name; a path that is not there is refused, naming it.
. "${BASH_SOURCE%/*}/lib.sh"

EZ2="$TROWEL_CORPUS/valve/ez2"
IMG="$EZ2/scenes/scenes.image"
if [ ! -f "$IMG" ]; then
    skip_all "$IMG is absent: vsif --names DIR tests"
fi

recovered() { # the count line list --names prints on stderr
    printf 'trowel: %s: %s of 51 names recovered' "$IMG" "$1"
}

mkdir -p game && cp -r "$EZ2/scenes" game/
run "$TROWEL" list --names game "$IMG"
assert_rc "a game folder: exit 0" 0
assert_eq "a game folder: every scene named" "$(recovered 51)" "$ERR"

run "$TROWEL" list --names game/scenes/_old "$IMG"
assert_eq "a folder inside scenes/: its scenes named" "$(recovered 39)" "$ERR"
assert_contains "a folder inside scenes/: names start at scenes/" "$OUT" "scenes/_old/op.vcd"

# "." inside scenes/_old: only its real path says where it sits.
cd game/scenes/_old
run "$TROWEL" list --names . "$IMG"
cd "$WORK"
assert_eq "--names . inside scenes/_old: resolved" "$(recovered 39)" "$ERR"
ln -s "$PWD/game/scenes/_old" old-link
run "$TROWEL" list --names old-link "$IMG"
assert_eq "a link to scenes/_old given as the folder: resolved" "$(recovered 39)" "$ERR"

# A "scenes" child that is a link: scanned, named with its own spelling.
mkdir via && ln -s "$PWD/game/scenes" via/Scenes
run "$TROWEL" list --names via "$IMG"
assert_eq "a linked Scenes child: scanned" "$(recovered 51)" "$ERR"
assert_contains "a linked Scenes child: its own spelling" "$OUT" "Scenes/_old/op.vcd"

# Inside the scan: a link to a folder is not followed (it would give 39
# names), a loop ends nowhere, a link named .vcd (even dangling) is offered.
mkdir -p linky/scenes/sub
ln -s "$PWD/game/scenes/_old" linky/scenes/_old
ln -s .. linky/scenes/sub/loop
ln -s /nonexistent/office_wake.vcd linky/scenes/office_wake.vcd
run "$TROWEL" list --names linky "$IMG"
assert_rc "links inside the scan: exit 0" 0
assert_eq "links inside the scan: only the .vcd link counts" "$(recovered 1)" "$ERR"
assert_contains "links inside the scan: the link's name" "$OUT" "scenes/office_wake.vcd"
assert_not_contains "links inside the scan: the folder link is not followed" "$OUT" "scenes/_old/"

# Not there, a file, a FIFO.
run "$TROWEL" list --names missing "$IMG"
assert_rc "a missing path: exit 1" 1
assert_eq "a missing path: named" "trowel: $IMG: missing: No such file or directory" "$ERR"
run "$TROWEL" list --names linky/scenes/office_wake.vcd "$IMG"
assert_rc "a dangling link as the path: exit 1" 1
printf 'scenes/f02_lobby1.vcd\n' >names.txt
run "$TROWEL" list --names names.txt "$IMG"
assert_eq "a file: a list of names" "$(recovered 1)" "$ERR"
if have_cmd mkfifo; then
    mkfifo fifo
    run timeout 10 "$TROWEL" list --names fifo "$IMG"
    assert_rc "a FIFO: refused, not waited on" 1
    assert_contains "a FIFO: said" "$ERR" "named pipe (FIFO)"
else
    skip "mkfifo is absent: the FIFO case"
fi

finish
