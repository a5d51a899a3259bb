# bash completion for trowel(1).
#
# Format, codec and convert target ids are asked from trowel itself through
# its hidden, stable id lists (trowel formats --ids / --codec-ids /
# --target-ids, one bare id per line), so nothing here needs updating when
# a format is added.

_trowel_ids() {
    # $1: the trowel binary being completed; $2: --ids, --codec-ids or --target-ids
    "$1" formats "$2" 2>/dev/null
}

_trowel_verb_options() {
    local common="-h --help -q --quiet --mem-limit -T --threads"
    case "$1" in
    formats) echo "--json $common" ;;
    info) echo "--json -t --format $common" ;;
    list) echo "-l --long --json -t --format $common" ;;
    extract) echo "-C --directory -f --force --manifest --names -t --format -v --verbose $common" ;;
    create) echo "-t --format -o --output -C --directory -O --option --manifest -f --force -v --verbose $common" ;;
    verify) echo "-t --format $common" ;;
    convert) echo "-o --output --to -O --option -t --format -f --force $common" ;;
    compress) echo "-c --codec -o --output -O --option -f --force $common" ;;
    decompress) echo "-c --codec -o --output --size -f --force $common" ;;
    esac
}

_trowel() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null 2>&1; then
        _init_completion -n = || return
    else
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi
    local bin=${words[0]}
    local verbs="formats info list extract create verify convert compress decompress help"

    if [ "$cword" -eq 1 ]; then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "--help -h --version" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$verbs" -- "$cur")
        fi
        return
    fi
    local verb=${words[1]}
    if [ "$verb" = help ]; then
        [ "$cword" -eq 2 ] && mapfile -t COMPREPLY < <(compgen -W "${verbs% help}" -- "$cur")
        return
    fi

    # --opt=value: complete the value.
    if [[ $cur == --*=* ]]; then
        prev=${cur%%=*}
        cur=${cur#*=}
    fi

    case "$prev" in
    -t | --format)
        mapfile -t COMPREPLY < <(compgen -W "$(_trowel_ids "$bin" --ids)" -- "$cur")
        return
        ;;
    -c | --codec)
        mapfile -t COMPREPLY < <(compgen -W "$(_trowel_ids "$bin" --codec-ids)" -- "$cur")
        return
        ;;
    --to)
        mapfile -t COMPREPLY < <(compgen -W "$(_trowel_ids "$bin" --target-ids)" -- "$cur")
        return
        ;;
    -C | --directory)
        mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        return
        ;;
    -o | --output | --manifest | --names)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
        ;;
    -O | --option | --mem-limit | --size | -T | --threads)
        return
        ;;
    esac

    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_trowel_verb_options "$verb")" -- "$cur")
        return
    fi
    [ "$verb" = formats ] && return
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    compopt -o filenames 2>/dev/null
}

complete -F _trowel trowel
