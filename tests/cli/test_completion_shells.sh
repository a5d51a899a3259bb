#!/usr/bin/env bash
# The zsh and fish completions trowel generates really complete in those
# shells: fish offers every long option of every command (asked through
# `complete -C`, as the shell itself does on TAB), and zsh, driven through a
# pseudo-terminal, turns a typed prefix into the whole option. test_help.sh
# checks the scripts' text; this runs them.
. "${BASH_SOURCE%/*}/lib.sh"

run "$TROWEL" completion fish -o trowel.fish
assert_rc "completion fish: exit 0" 0
run "$TROWEL" completion zsh -o _trowel
assert_rc "completion zsh: exit 0" 0

# ---- fish: every long option of every command is offered after '--'
if have_cmd fish; then
    run fish -n trowel.fish
    assert_rc "fish: the script parses" 0
    missing=""
    while read -r cmd opt; do
        case "$opt" in --*) ;; *) continue ;; esac
        got=$(fish -c "source trowel.fish; complete -C 'trowel $cmd $opt'" 2>&1 | cut -f1)
        printf '%s\n' "$got" | grep -qx -- "$opt" || missing="$missing $cmd:$opt"
    done < <("$TROWEL" completion options)
    assert_eq "fish: every command's long options are completed" "" "$missing"
    got=$(fish -c "source trowel.fish; complete -C 'trowel '" | cut -f1 | sort | tr '\n' ' ')
    assert_contains "fish: commands are completed" "$got" "convert create decompress extract"
else
    skip "fish is not installed: fish completion"
fi

# ---- zsh: a prefix and TAB, in an interactive shell on a pseudo-terminal
zsh_complete() { # LINE EXPECTED: prints what the terminal showed once EXPECTED
    # appeared after LINE and a TAB (zpty -r blocks until it matches; the
    # timeout ends a completion that never comes)
    cat >drive.zsh <<ZSH
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z 'PS1=">"; fpath=($PWD \$fpath); autoload -U compinit; compinit -u -D; setopt nobeep'
zpty -w z \$'$1\t'
zpty -r -m z out '*$2*'
print -r -- "\$out"
zpty -d z
ZSH
    timeout 20 zsh -f drive.zsh 2>/dev/null | tr -d '\r' | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g'
}
if have_cmd zsh; then
    run zsh -n _trowel
    assert_rc "zsh: the script parses" 0
    assert_contains "zsh: extract --sk completes to --skip-existing" \
        "$(zsh_complete 'trowel extract --sk' 'extract --skip-existing')" "trowel extract --skip-existing"
    assert_contains "zsh: list --na completes to --names" \
        "$(zsh_complete 'trowel list --na' 'list --names')" "trowel list --names"
    assert_contains "zsh: decomp completes to decompress" \
        "$(zsh_complete 'trowel decomp' 'trowel decompress')" "trowel decompress"
else
    skip "zsh is not installed: zsh completion"
fi

finish
