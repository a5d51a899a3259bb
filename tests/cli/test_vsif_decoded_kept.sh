#!/usr/bin/env bash
# A scenes.image keeps the BVCDs it decodes when it is opened (within a
# sixteenth of the memory limit) so that extracting them does not decode
# them again. With the default limit every compressed scene is kept; with
# --mem-limit 2M only the first 128 KiB of them are, and the rest are
# decoded again when read. Both give the same text, scene for scene, and the
# same verdict from verify.
. "${BASH_SOURCE%/*}/lib.sh"

V="$TROWEL_CORPUS/valve"
have_cmd python3 || skip_all "python3 is needed to generate the scenes"
[ -d "$V" ] || skip_all "the valve corpus is absent"

python3 "$TROWEL_SOURCE/bench/gen_vsif_scenes.py" "$V" game 600 >/dev/null ||
    fail "gen_vsif_scenes.py made 600 scenes"
run "$TROWEL" create -t vsif -o s.image -C game scenes
assert_rc "create the image" 0
packed=$("$TROWEL" list -l s.image | awk '$5 == "lzma" { n++; s += $1 } END { print n + 0, s + 0 }')
read -r lzma_scenes lzma_bytes <<<"$packed"
[ "$lzma_scenes" -gt 100 ] || fail "the image has compressed scenes ($lzma_scenes)"
[ "$lzma_bytes" -gt $((128 * 1024)) ] || fail "they decode to more than 128 KiB ($lzma_bytes)"

run "$TROWEL" extract -C all s.image
assert_rc "extract, every scene kept" 0
run "$TROWEL" extract --mem-limit 2M -C some s.image
assert_rc "extract with --mem-limit 2M, some scenes kept" 0
assert_eq "the same files" "$(cd all && find . -type f | sort | xargs sha256sum)" \
    "$(cd some && find . -type f | sort | xargs sha256sum)"
assert_eq "one text VCD a scene" 600 "$(find all -name '*.vcd' | wc -l | tr -d ' ')"
run "$TROWEL" verify --mem-limit 2M s.image
assert_rc "verify with some scenes kept" 0
run "$TROWEL" verify s.image
assert_rc "verify with every scene kept" 0

finish
