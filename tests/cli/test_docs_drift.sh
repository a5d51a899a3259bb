#!/usr/bin/env bash
# Docs in step with the code, derived from the code: the command table
# ('trowel completion options', each command's Usage line) and the library's
# registry ('trowel formats --json'). Each check below caught a real drift:
# -O completion offering another command's keys (compress, mount), a create
# key missing ("width=W, height=H" lines), the man SYNOPSIS without an
# option the command's usage has (list -r), an example glob matching no
# SZDD name, 'formats' denying list to a format that lists (asm), and the
# README not saying how to read the man page before installing.
. "${BASH_SOURCE%/*}/lib.sh"

MAN="$TROWEL_SOURCE/man/trowel.1"
README="$TROWEL_SOURCE/README.md"
have_cmd python3 || skip_all "python3 is needed to read the man page"
have_cmd jq || skip_all "jq is needed to read formats --json"

"$TROWEL" formats --json >formats.json || exit 1
"$TROWEL" completion options >options.txt || exit 1
"$TROWEL" completion bash >completion.bash || exit 1
verbs=$(cut -d' ' -f1 options.txt | uniq)

# complete_bash WORD...: what bash offers for the last word, sorted.
complete_bash() {
    bash -c '. ./completion.bash
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _trowel 2>/dev/null
        printf "%s\n" "${COMPREPLY[@]}"' bash "$@" | sort -u
}

# ---- -O completion: exactly the keys of the command's kind
read_keys=$(jq -r '.formats[].read_options[].key + "="' formats.json | sort -u)
convert_keys=$(jq -r '.formats[].convert_options[].key + "="' formats.json | sort -u)
create_keys=$(jq -r '.formats[].create_options[] | split(":")[0] | split(", ")[] |
    select(test("^[a-z_]+=")) | sub("=.*"; "=")' formats.json | sort -u)
assert_ne "formats --json has create keys" "" "$create_keys"
assert_contains "a create line with two keys gives both" "$create_keys" "height="
for verb in $verbs; do
    grep -qx "$verb -O" options.txt || continue
    case $verb in
    extract | mount) want=$read_keys ;;
    convert) want=$convert_keys ;;
    create) want=$create_keys ;;
    compress) want="level=" ;;
    *) fail "$verb takes -O: say here which keys it takes"; continue ;;
    esac
    assert_eq "bash: $verb -O offers its own keys" "$want" "$(complete_bash trowel "$verb" -O '')"
done

# ---- man SYNOPSIS: every option of each command's usage line
python3 - "$MAN" >synopsis.txt <<'PY'
import re, sys
man = open(sys.argv[1]).read()
syn = man.split(".SH SYNOPSIS", 1)[1].split("\n.SH", 1)[0]
for block in syn.split("\n.br"):
    text = re.sub(r"\\f[BIRP]", "", block).replace("\\-", "-").replace("\\&", "")
    text = re.sub(r"^\.\w+ ?", "", text, flags=re.M)
    words = text.split()
    if len(words) >= 2 and words[0] == "trowel":
        print(words[1], " ".join(w for w in re.findall(r"-{1,2}[a-zA-Z][a-z-]*", text)))
PY
missing=""
for verb in $verbs; do
    usage=$("$TROWEL" "$verb" --help | sed -n 's/^Usage: trowel //p')
    [ -n "$usage" ] || { missing="$missing $verb:no-usage"; continue; }
    line=$(awk -v v="$verb" '$1 == v' synopsis.txt)
    # the hidden completion command has no synopsis of its own
    if [ -z "$line" ]; then
        [ "$verb" = completion ] || missing="$missing $verb:not-in-synopsis"
        continue
    fi
    for opt in $(printf '%s\n' "$usage" | grep -o -- '-\{1,2\}[a-zA-Z][a-z-]*' | sort -u); do
        printf ' %s \n' "$line" | grep -q -- " $opt " || missing="$missing $verb:$opt"
    done
done
assert_eq "man SYNOPSIS: every option each usage line has" "" "$missing"

# ---- man COMMANDS: a paragraph for every command --help lists
for verb in $("$TROWEL" --help | sed -n 's/^  \([a-z]*\)  .*/\1/p'); do
    if grep -q "^\.B $verb\$\|^\.BR $verb \|^\.BR [a-z]* \", \" $verb\$" "$MAN"; then pass
    else fail "man COMMANDS has no paragraph for $verb"; fi
done

# ---- example globs for SZDD names match real SZDD names
globs=$(grep -ho 'trowel [a-z]* \*\.[^ ]*_' "$MAN" "$README" | awk '{ print $3 }' | sort -u)
assert_ne "the docs have SZDD glob examples" "" "$globs"
for g in $globs; do
    (cd "$SZDD_DIR" && compgen -G "$g" >/dev/null) && pass ||
        fail "example glob $g matches no SZDD file of the corpus"
done

# ---- formats: a format whose files list entries says list
check_lists() { # FILE
    [ -f "$1" ] || { skip "$1 absent"; return; }
    fmt=$("$TROWEL" info --json "$1" | jq -r .format)
    n=$("$TROWEL" list "$1" | wc -l | tr -d ' ')
    if [ "$n" -gt 0 ]; then
        assert_eq "formats: $fmt lists ($n entries in $(basename "$1"))" true \
            "$(jq --arg f "$fmt" '.formats[] | select(.id == $f) | .capabilities | index("list") != null' formats.json)"
    fi
}
check_lists "$TROWEL_CORPUS/volition/rfg/cloth_containers.asm_pc"
check_lists "$TROWEL_CORPUS/volition/rfg/cloth_sim.vpp_pc"
check_lists "$TROWEL_CORPUS/valve/ez2/scenes/scenes.image"
check_lists "$SZDD_DIR/DEFAULT.PA_"

# ---- README: reading the man page before installing
assert_contains "README: man -l before make install" "$(cat "$README")" "man -l man/trowel.1"

finish
