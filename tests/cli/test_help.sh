#!/usr/bin/env bash
# Help that matches the tool: every option of every command (from the
# tool's own tables, 'trowel completion options') is in the man page and in
# the bash, zsh and fish completions; every -O key of every format is in
# 'trowel formats', convert/extract --help and the man page; help and man
# name no target, codec or format that does not exist.
. "${BASH_SOURCE%/*}/lib.sh"

MAN="$TROWEL_SOURCE/man/trowel.1"
have_cmd python3 || skip_all "python3 is needed to read the man page"

run "$TROWEL" completion options
assert_rc "completion options exit" 0
cp "$OUT_FILE" options.txt
assert_eq "completion options: every command has -h" 14 "$(grep -c ' -h$' options.txt)"
assert_contains "completion options: hidden ones too" "$OUT" "formats --target-ids"
assert_contains "completion options: new extract options" "$OUT" "extract --skip-existing"

# ---- the completions the build made are what the tool makes now
for shell in bash zsh fish; do
    run "$TROWEL" completion "$shell"
    assert_rc "completion $shell exit" 0
    cp "$OUT_FILE" "completion.$shell"
done
built="$(dirname "$TROWEL")/completion"
assert_same_file "build made the bash completion" completion.bash "$built/trowel.bash"
assert_same_file "build made the zsh completion" completion.zsh "$built/_trowel"
assert_same_file "build made the fish completion" completion.fish "$built/trowel.fish"
run "$TROWEL" completion tcsh
assert_usage_error "completion for an unknown shell"
assert_contains "completion tcsh: says which exist" "$ERR" "known: bash, zsh, fish"
run "$TROWEL" completion zsh -o made.zsh
assert_rc "completion -o exit" 0
assert_same_file "completion -o writes the script" completion.zsh made.zsh
assert_not_contains "the hidden command stays out of --help" "$("$TROWEL" --help)" completion

# ---- bash: ask the completion function itself
run bash -n completion.bash
assert_rc "bash completion parses" 0
# complete_bash WORD...: COMPREPLY for the last word, one per line.
complete_bash() {
    bash -c '. ./completion.bash
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _trowel 2>/dev/null
        printf "%s\n" "${COMPREPLY[@]}"' bash "$@"
}
missing=""
for verb in $(cut -d' ' -f1 options.txt | uniq); do
    offered=$(complete_bash trowel "$verb" -)
    for opt in $(awk -v v="$verb" '$1 == v { print $2 }' options.txt); do
        printf '%s\n' "$offered" | grep -qx -- "$opt" || missing="$missing $verb:$opt"
    done
done
assert_eq "bash completes every option of every command" "" "$missing"
assert_eq "bash: extract -O offers the reading keys" "raw=" "$(complete_bash trowel extract -O '')"
assert_contains "bash: convert -O offers png keys" "$(complete_bash trowel convert -O '')" "palette="
assert_contains "bash: convert -O offers wav keys" "$(complete_bash trowel convert --option '')" "rate="
assert_contains "bash: create -O offers create keys" "$(complete_bash trowel create -O '')" "variant="
assert_eq "bash: -t offers format ids" "$("$TROWEL" formats --ids | grep '^cine-s' | sort)" \
    "$(complete_bash trowel info -t cine-s | sort)"
assert_eq "bash: --to offers targets" "$("$TROWEL" formats --target-ids | sort)" \
    "$(complete_bash trowel convert --to '' | sort)"
assert_eq "bash: -c offers codecs" "$("$TROWEL" formats --codec-ids | sort)" \
    "$(complete_bash trowel decompress -c '' | sort)"
assert_eq "bash: --to= form" "wav" "$(complete_bash trowel convert --to=w)"
assert_eq "bash: list --n completes --names" "--names" "$(complete_bash trowel list --n)"
assert_eq "bash: extract --ra completes --raw" "--raw" "$(complete_bash trowel extract --ra)"
assert_eq "bash: first word: commands" "convert" "$(complete_bash trowel conv)"
assert_eq "bash: help COMMAND" "verify" "$(complete_bash trowel help ver)"

# ---- zsh and fish: every option in its command's part of the script
python3 - completion.zsh completion.fish options.txt >check.txt <<'EOF'
import re, sys
zsh, fish, options = (open(p).read() for p in sys.argv[1:4])
for line in options.splitlines():
    verb, opt = line.split()
    block = re.search(r"\n    %s\)\n(.*?)\n        ;;" % re.escape(verb), zsh, re.S)
    if not block or not re.search(r"(^|[\s{,'])%s([+=]?[,}\[']|\[)" % re.escape(opt), block.group(1), re.M):
        print("zsh misses %s %s" % (verb, opt))
    flag = "-s %s" % opt[1:] if len(opt) == 2 else "-l %s" % opt[2:]
    pat = r"__fish_seen_subcommand_from %s'[^\n]* %s( |$)" % (re.escape(verb), re.escape(flag))
    if not re.search(pat, fish, re.M):
        print("fish misses %s %s" % (verb, opt))
EOF
assert_eq "zsh and fish complete every option of every command" "" "$(cat check.txt)"
assert_contains "zsh: convert -O keys" "$(cat completion.zsh)" "palette="
assert_contains "fish: --to targets" "$(cat completion.fish)" "glyphmap"

# ---- the man page: every option, in a paragraph that names its command
python3 - "$MAN" options.txt >check.txt <<'EOF'
import re, sys
man = open(sys.argv[1]).read()
paragraphs = re.split(r"\n\.(?:TP|SS|SH|PP)\b", man)
common = {"-q", "--quiet", "-v", "--verbose", "--mem-limit", "-T", "--threads", "-h", "--help"}
for line in open(sys.argv[2]).read().splitlines():
    verb, opt = line.split()
    roff = opt.replace("-", r"\-")
    found = False
    for p in paragraphs:
        if not re.search(re.escape(roff) + r"(?![a-z\\])", p):
            continue
        if opt in common or re.search(r"(\.BR? |trowel )%s\b" % re.escape(verb), p):
            found = True
            break
    if not found:
        print("man misses %s %s" % (verb, opt))
EOF
assert_eq "the man page has every option of every command" "" "$(cat check.txt)"

# ---- -O keys: formats, formats --json, convert --help, extract --help, man
run "$TROWEL" formats --json
cp "$OUT_FILE" formats.json
keys=$(jq -r '.formats[] | .id as $f | (.read_options[], .convert_options[]) |
    "\($f) \(.key) \(.targets // ["read"] | join(","))"' formats.json)
assert_contains "formats --json: vsif reads raw" "$keys" "vsif raw read"
assert_contains "formats --json: cine-set png palette" "$keys" "cine-set palette png"
assert_contains "formats --json: cine-font glyphmap columns" "$keys" "cine-font columns glyphmap"
assert_contains "formats --json: cine-sample wav rate" "$keys" "cine-sample rate wav"
text=$("$TROWEL" formats)
convert_help=$("$TROWEL" convert --help)
extract_help=$("$TROWEL" extract --help)
missing=""
while read -r fmt key targets; do
    # the format's paragraph of 'trowel formats' has the key
    printf '%s\n' "$text" | awk -v f="$fmt" '$1 == f { on = 1; next } /^[a-z]/ { on = 0 } on' |
        grep -q "options: *$key=\|^ *$key=" || missing="$missing formats:$fmt:$key"
    if [ "$targets" = read ]; then
        printf '%s\n' "$extract_help" | grep -q "^    $key=" || missing="$missing extract-help:$key"
    else
        printf '%s\n' "$convert_help" | grep -q "^    $key=.*($targets)" ||
            missing="$missing convert-help:$key"
    fi
    python3 - "$MAN" "$fmt" "$key" <<'EOF' || missing="$missing man:$fmt:$key"
import re, sys
man, fmt, key = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
section = man.split(".SH FORMAT OPTIONS", 1)[1].split("\n.SH", 1)[0]
ok = any(fmt.replace("-", r"\-") in p and (".B %s=" % key) in p for p in section.split("\n.TP"))
sys.exit(0 if ok else 1)
EOF
done <<<"$keys"
assert_eq "every -O key is in formats, --help and the man page" "" "$missing"

# ---- an unknown key lists the valid ones
{ printf 'SET\x00\x00\x01'; printf '\x00\x00\x00\x00\x00\x08\x00\x01\x00\x04\x00\x00\x00\x00\x00\x00'
  printf '\x80'; head -c 7 /dev/zero; } >ROBOT.SET
run "$TROWEL" convert ROBOT.SET -o robot.png -O x=1
assert_rc "unknown convert key: exit 2" 2
assert_eq "unknown convert key: lists the valid ones" \
    "trowel: ROBOT.SET: unknown option 'x' for cine-set to png; valid: frame, palette, transparent, columns" "$ERR"
assert_no_file "unknown convert key: no output" robot.png
run "$TROWEL" convert ROBOT.SET -O frame=0
assert_eq "a png key for json: none valid" \
    "trowel: ROBOT.SET: unknown option 'frame' for cine-set: it takes no convert options to json" "$ERR"
run "$TROWEL" extract --raw -C raw "$SZDD_DIR/DEFAULT.PA_"
assert_rc "--raw where nothing is raw: exit 2" 2
assert_eq "--raw where nothing is raw: says so" \
    "trowel: $SZDD_DIR/DEFAULT.PA_: unknown option 'raw' for szdd: it takes no reading options" "$ERR"
run "$TROWEL" convert ROBOT.SET -o robot.png -O frame
assert_contains "not key=value" "$ERR" "option 'frame' is not of the form key=value"

# ---- no target, codec or format that does not exist
ids() { "$TROWEL" formats "$1" | sort | tr '\n' ' '; }
man_list() { # the bold words after "LABEL:" up to the paragraph's end
    python3 - "$MAN" "$1" <<'EOF'
import re, sys
man, label = open(sys.argv[1]).read(), sys.argv[2]
body = man.split(label + "\n", 1)[1].split("\n.PP", 1)[0].split("\n.SH", 1)[0]
words = re.findall(r"^\.BR? ([^ \n]+)", body, re.M)
print(" ".join(sorted(w.replace("\\-", "-") for w in words)) + " ")
EOF
}
assert_eq "man: format ids are the real ones" "$(ids --ids)" "$(man_list 'Format ids:')"
assert_eq "man: codec ids are the real ones" "$(ids --codec-ids)" "$(man_list 'Codec ids:')"
assert_eq "man: convert targets are the real ones" "$(ids --target-ids)" "$(man_list 'Convert targets:')"
help_targets=$(printf '%s\n' "$convert_help" | sed -n 's/^Targets: \(.*\) (what.*/\1/p' | tr -d ',' |
    tr ' ' '\n' | sort | tr '\n' ' ')
assert_eq "convert --help: targets are the real ones" "$(ids --target-ids)" "$help_targets"
summary=$("$TROWEL" --help | sed -n 's/^  convert .*(\(.*\)\.\.\.)$/\1/p' | tr -d ',')
bad=""
for t in $summary; do
    "$TROWEL" formats --target-ids | grep -qx "$t" || bad="$bad $t"
done
assert_ne "trowel --help: convert names some targets" "" "$summary"
assert_eq "trowel --help: convert names only real targets" "" "$bad"

finish
