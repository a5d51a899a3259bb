# Shared by the trowel mount tests (sourced after lib.sh): skips the whole
# script where FUSE cannot be used, never leaves a mount behind (trap:
# fusermount3 -u on exit), and the helpers that mount, unmount and
# compare a mounted tree with what extract writes.
if ! "$TROWEL" formats | grep -q '^Mount: trowel mount'; then
    skip_all "this trowel was built without libfuse3 (no mount)"
fi
have_cmd fusermount3 || skip_all "fusermount3 (Debian fuse3) is not installed"
if ! { exec 3<>/dev/fuse; } 2>/dev/null; then
    skip_all "/dev/fuse cannot be opened here: FUSE mounts are not possible"
fi
exec 3>&-

# Every mount point made, unmounted (lazily if need be) on exit.
MOUNTED=""
unmount_all() {
    for m in $MOUNTED; do
        if mountpoint -q "$m" 2>/dev/null; then
            fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
        fi
    done
    rm -rf "$T_ROOT"
}
trap unmount_all EXIT

# wait_mounted DIR [PID]: true once DIR is a mount point (10 s at most;
# gives up at once when PID, the foreground trowel, has exited).
wait_mounted() {
    for _ in $(seq 100); do
        mountpoint -q "$1" && return 0
        [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null && return 1
        sleep 0.1
    done
    return 1
}

# wait_unmounted DIR: true once DIR is no mount point (10 s at most).
wait_unmounted() {
    for _ in $(seq 100); do
        mountpoint -q "$1" || return 0
        sleep 0.1
    done
    return 1
}

# mount_fg NAME ARCHIVE DIR [OPTION...]: trowel mount -f in the background
# of this shell; sets FG_PID, its stderr in DIR.err.
mount_fg() {
    local name=$1 archive=$2 dir=$3
    shift 3
    mkdir -p "$dir"
    MOUNTED="$MOUNTED $PWD/$dir"
    "$TROWEL" mount -f "$archive" "$dir" "$@" 2>"$dir.err" &
    FG_PID=$!
    if wait_mounted "$dir" "$FG_PID"; then
        pass
    else
        fail "$name: mounted" "stderr: $(cat "$dir.err")"
    fi
}

# unmount_fg NAME DIR: fusermount3 -u, then trowel exits 0.
unmount_fg() {
    fusermount3 -u "$2"
    assert_eq "$1: fusermount3 -u" 0 $?
    wait "$FG_PID"
    local rc=$?
    [ "$rc" = 0 ] || echo "trowel mount -f said: $(cat "$2.err" 2>/dev/null | head -20)" >&2
    assert_eq "$1: trowel mount -f exits 0 once unmounted" 0 "$rc"
    if mountpoint -q "$2"; then fail "$1: nothing left mounted"; else pass; fi
}

# same_tree NAME MOUNTED EXTRACTED: the same files (names, sizes), each
# the same bytes; .trowel/ is not part of the tree.
same_tree() {
    local name=$1 m=$2 x=$3
    (cd "$m" && find . -path ./.trowel -prune -o -print | sort) >"$name.m.list"
    (cd "$x" && find . -print | sort) >"$name.x.list"
    if cmp -s "$name.m.list" "$name.x.list"; then
        pass
    else
        fail "$name: the same names as extract" "$(diff "$name.x.list" "$name.m.list" | head -5)"
    fi
    (cd "$m" && find . -path ./.trowel -prune -o -type f -printf '%P %s\n' | sort) >"$name.m.sizes"
    (cd "$x" && find . -type f -printf '%P %s\n' | sort) >"$name.x.sizes"
    assert_eq "$name: stat gives extract's sizes" "$(cat "$name.x.sizes")" "$(cat "$name.m.sizes")"
    local bad="" count=0
    while IFS= read -r f; do
        count=$((count + 1))
        cmp -s "$m/$f" "$x/$f" || bad="$bad $f"
    done < <(cd "$x" && find . -type f -printf '%P\n')
    assert_eq "$name: every file has extract's bytes ($count files)" "" "$bad"
}

# same_readable NAME MOUNTED EXTRACTED ARCHIVE: a damaged archive shows
# every entry its directory lists (those extract could not write too);
# those extract wrote have its bytes.
same_readable() {
    local name=$1 m=$2 x=$3 archive=$4 bad=""
    assert_eq "$name: every listed entry is shown" \
        "$("$TROWEL" list "$archive" 2>/dev/null | sort)" \
        "$(cd "$m" && find . -path ./.trowel -prune -o -type f -printf '%P\n' | sort)"
    while IFS= read -r f; do
        cmp -s "$m/$f" "$x/$f" || bad="$bad $f"
    done < <(cd "$x" && find . -type f -printf '%P\n')
    assert_eq "$name: what extract writes reads the same" "" "$bad"
}

# random_reads NAME MOUNTED EXTRACTED N: N reads at random offsets and
# sizes (some past the end, some from the last bytes) agree with extract.
random_reads() {
    local name=$1 m=$2 x=$3 n=$4 bad="" files size off len f
    mapfile -t files < <(cd "$x" && find . -type f -size +0 -printf '%P\n' | sort)
    [ ${#files[@]} -gt 0 ] || { fail "$name: files to read"; return; }
    RANDOM=12
    for _ in $(seq "$n"); do
        f=${files[RANDOM % ${#files[@]}]}
        size=$(stat -c %s "$x/$f")
        off=$(( (RANDOM * 32768 + RANDOM) % (size + 16) ))
        len=$(( 1 + (RANDOM * 32768 + RANDOM) % 70000 ))
        if ! cmp -s <(dd if="$m/$f" iflag=skip_bytes,count_bytes skip="$off" count="$len" bs=65536 2>/dev/null) \
                    <(dd if="$x/$f" iflag=skip_bytes,count_bytes skip="$off" count="$len" bs=65536 2>/dev/null); then
            bad="$bad $f@$off+$len"
        fi
    done
    assert_eq "$name: $n random slices read with dd" "" "$bad"
}

# cat_all DIR: cat every file under DIR (bytes dropped); sets RC and ERR.
cat_all() {
    find "$1" -type f -exec cat {} + >/dev/null 2>"$T_ROOT/lib/cat.err"
    RC=$?
    ERR=$(cat "$T_ROOT/lib/cat.err")
}

# walk NAME MOUNTED EXTRACTED PATTERN: find, ls -lR and grep -r work; a
# mount without --views has no .trowel/, so a plain grep -r finds what it
# finds in the extracted files (with --views, .trowel/ is left out).
walk() {
    local name=$1 m=$2 x=$3 pattern=$4 exclude=()
    [ -d "$m/.trowel" ] && exclude=(--exclude-dir=.trowel)
    run find "$m" -type f
    assert_rc "$name: find" 0
    run ls -lR "$m"
    assert_rc "$name: ls -lR" 0
    assert_eq "$name: grep -r ${exclude[*]} finds what it finds in the extracted files" \
        "$(cd "$x" && grep -rl -- "$pattern" . | sort)" \
        "$(cd "$m" && grep -rl "${exclude[@]}" -- "$pattern" . | sort)"
}

# same_conversions NAME CONVERTED EXTRACTED FILE TARGET...: each
# CONVERTED/FILE.TARGET (a mount's .trowel/convert/ folder) holds what
# `convert FILE --to TARGET` writes from EXTRACTED/FILE.
same_conversions() {
    local name=$1 conv=$2 x=$3 file=$4 bad="" t
    shift 4
    for t in "$@"; do
        (cd "$x" && "$TROWEL" convert "$file" --to "$t" -o "$T_ROOT/lib/conv.$t")
        cmp -s "$conv/$file.$t" "$T_ROOT/lib/conv.$t" || bad="$bad $t"
    done
    assert_eq "$name: convert/$file.* are what convert writes" "" "$bad"
}
