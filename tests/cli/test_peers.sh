#!/usr/bin/env bash
# Cross-checks with Debian's mscompress package (msexpand, mscompress), when
# installed: what trowel writes they read, and the other way round.
. "${BASH_SOURCE%/*}/lib.sh"

if ! command -v msexpand >/dev/null 2>&1 && ! command -v mscompress >/dev/null 2>&1; then
    skip_all "msexpand and mscompress not installed: peer cross-checks"
fi
have_cmd msexpand || skip "msexpand not installed: its cross-checks"
have_cmd mscompress || skip "mscompress not installed: its cross-checks"

for f in "$SZDD_DIR"/*_; do
    base=$(basename "$f")
    name=$(restored_name "$f")
    want=$(expanded_sha256 "$base")
    rm -rf p && mkdir -p p/orig
    "$TROWEL" extract "$f" -C p/orig || fail "extract $base"

    if command -v msexpand >/dev/null 2>&1; then
        # trowel create -> msexpand gives back the original bytes.
        run "$TROWEL" create -t szdd -C p/orig -o "p/$base" "$name"
        assert_rc "create $base" 0
        msexpand <"p/$base" >p/expanded 2>/dev/null
        assert_file_sha256 "msexpand reads trowel's $base" p/expanded "$want"
        # ... also the raw codec stream, behind a header we make ourselves.
        "$TROWEL" compress -c szdd -o p/raw "p/orig/$name"
        { head -c 14 "$f"; cat p/raw; } >p/wrapped
        msexpand <p/wrapped >p/expanded2 2>/dev/null
        assert_file_sha256 "msexpand reads trowel's raw szdd stream of $base" p/expanded2 "$want"
    fi

    if command -v mscompress >/dev/null 2>&1; then
        # mscompress FILE writes FILE_ (and records no last character).
        mkdir p/ms
        cp "p/orig/$name" "p/ms/$name"
        (cd p/ms && mscompress "$name") >/dev/null 2>&1
        assert_file_exists "mscompress made ${name}_" "p/ms/${name}_"
        run "$TROWEL" extract "p/ms/${name}_" -C p/back
        assert_rc "trowel extracts mscompress's ${name}_" 0
        assert_file_sha256 "trowel expands mscompress's ${name}_" "p/back/$name" "$want"
        run "$TROWEL" verify "p/ms/${name}_"
        assert_rc "trowel verifies mscompress's ${name}_" 0
    fi
done

# Generated inputs, both directions: text, machine code, pseudo-random bytes,
# zeros, and (trowel -> msexpand only) the empty and one-byte files, which
# Debian's mscompress is known to write wrongly (a peer defect, not ours).
rm -rf g && mkdir -p g/ms g/back
if [ -r /usr/share/common-licenses/GPL-3 ]; then cp /usr/share/common-licenses/GPL-3 g/text
else cat "$TROWEL_SOURCE"/docs/*.md >g/text; fi
cp "$TROWEL" g/binary
LC_ALL=C awk 'BEGIN { srand(11); for (i = 0; i < 200000; i++) printf "%c", int(rand() * 256) }' >g/random
head -c 100000 /dev/zero >g/zeros
: >g/empty
printf 'x' >g/onebyte
for name in text binary random zeros empty onebyte; do
    "$TROWEL" create -t szdd -o "g/$name.sz" -C g "$name" || fail "create $name"
    if command -v msexpand >/dev/null 2>&1; then
        msexpand <"g/$name.sz" >"g/$name.msexpand" 2>/dev/null
        assert_same_file "msexpand reads trowel's $name" "g/$name.msexpand" "g/$name"
    fi
    case $name in empty|onebyte) continue ;; esac
    if command -v mscompress >/dev/null 2>&1; then
        cp "g/$name" "g/ms/$name"
        (cd g/ms && mscompress "$name") >/dev/null 2>&1
        run "$TROWEL" extract -f "g/ms/${name}_" -C g/back
        assert_rc "trowel extracts mscompress's $name" 0
        assert_same_file "trowel expands mscompress's $name" "g/back/$name" "g/$name"
        # Optimal parsing never does worse than mscompress's greedy one.
        ours=$(stat -c %s "g/$name.sz") theirs=$(stat -c %s "g/ms/${name}_")
        [ "$ours" -le "$theirs" ] && pass "trowel's $name ($ours) <= mscompress's ($theirs)" \
            || fail "trowel's $name is $ours bytes, mscompress's $theirs"
    fi
done
if command -v mscompress >/dev/null 2>&1; then
    # mscompress's empty file declares 0 bytes but carries a literal: refused, clearly.
    (cd g/ms && : >empty && mscompress empty) >/dev/null 2>&1
    run "$TROWEL" extract -f g/ms/empty_ -C g/back
    assert_rc "mscompress's defective empty file is refused" 1
    assert_contains "the refusal says why" "$ERR" "after all 0 declared bytes"
fi

finish
