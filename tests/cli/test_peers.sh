#!/usr/bin/env bash
# Cross-checks with Debian's mscompress package (msexpand, mscompress), when
# installed: what trowel writes they read, and the other way round.
. "${BASH_SOURCE%/*}/lib.sh"

if ! command -v msexpand >/dev/null 2>&1 && ! command -v mscompress >/dev/null 2>&1; then
    note "msexpand and mscompress not installed: peer cross-checks skipped"
    finish
    exit
fi

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

finish
