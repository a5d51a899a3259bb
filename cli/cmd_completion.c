/*
 * trowel completion bash|zsh|fish [-o OUT]: the shell completion scripts,
 * made from the same tables --help prints (every command and option) and
 * the library's lists (format, codec and target ids, -O keys). The build
 * runs it and installs the result, so completions cannot drift from the
 * tool. Hidden from 'trowel --help'.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "cli.h"

#include <stdlib.h>
#include <ctype.h>
#include <string.h>

/* What an option's value is, for completing it. */
typedef enum value_kind {
    VALUE_NONE,   /* a flag */
    VALUE_FORMAT, /* a format id */
    VALUE_CODEC,  /* a codec id */
    VALUE_TARGET, /* a convert target */
    VALUE_DIR,    /* a folder */
    VALUE_KEY,    /* -O key=value: the command's keys */
    VALUE_FILE,   /* a file name */
    VALUE_TEXT    /* anything (numbers, sizes): nothing to offer */
} value_kind;

static value_kind value_of(const cli_option *o)
{
    if (!o->arg_name)
        return VALUE_NONE;
    switch (o->id) {
    case OPT_FORMAT: return VALUE_FORMAT;
    case OPT_CODEC: return VALUE_CODEC;
    case OPT_TO: return VALUE_TARGET;
    case OPT_DIRECTORY: return VALUE_DIR;
    case OPT_OPTION: return VALUE_KEY;
    case OPT_OUTPUT:
    case OPT_MANIFEST:
    case OPT_NAMES:
    case OPT_FILES_FROM: return VALUE_FILE;
    default: return VALUE_TEXT;
    }
}

/* ------------------------------------------------------------ word lists */

/* Distinct words, in the order first met. */
typedef struct words {
    char **w;
    size_t n, cap;
    bool failed;
} words;

static void words_add(words *ws, const char *w, size_t len)
{
    for (size_t i = 0; i < ws->n; i++)
        if (strlen(ws->w[i]) == len && memcmp(ws->w[i], w, len) == 0)
            return;
    if (ws->n == ws->cap) {
        size_t cap = ws->cap ? ws->cap * 2 : 16;
        char **p = realloc(ws->w, cap * sizeof *p);
        if (!p) {
            ws->failed = true;
            return;
        }
        ws->w = p;
        ws->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        ws->failed = true;
        return;
    }
    memcpy(copy, w, len);
    copy[len] = '\0';
    ws->w[ws->n++] = copy;
}

static void words_free(words *ws)
{
    for (size_t i = 0; i < ws->n; i++)
        free(ws->w[i]);
    free(ws->w);
    memset(ws, 0, sizeof *ws);
}

static void add_list(words *ws, const char *list)
{
    const char *w;
    size_t n;
    while (cli_next_word(&list, &w, &n))
        words_add(ws, w, n);
}

static void format_ids(words *ws)
{
    for (size_t i = 0; i < trowel_format_count(); i++)
        add_list(ws, trowel_format_id(trowel_format_at(i)));
}

static void codec_ids(words *ws)
{
    for (size_t i = 0; i < trowel_codec_count(); i++)
        add_list(ws, trowel_codec_id(trowel_codec_at(i)));
}

static void target_ids(words *ws)
{
    words_add(ws, "json", 4);
    for (size_t i = 0; i < trowel_format_count(); i++)
        add_list(ws, trowel_format_convert_targets(trowel_format_at(i)));
}

/* Which -O keys a command takes: create's from the formats' create option
 * rows, compress's the codecs' (level=), extract's and mount's the
 * reading options, convert's the convert options. */
typedef enum key_kind { KEYS_CREATE, KEYS_CODEC, KEYS_READ, KEYS_CONVERT } key_kind;

static key_kind keys_of(const char *verb)
{
    if (strcmp(verb, "create") == 0)
        return KEYS_CREATE;
    if (strcmp(verb, "compress") == 0 || strcmp(verb, "decompress") == 0)
        return KEYS_CODEC;
    if (strcmp(verb, "extract") == 0 || strcmp(verb, "mount") == 0)
        return KEYS_READ;
    return KEYS_CONVERT;
}

static void option_keys(words *ws, const char *verb)
{
    key_kind kind = keys_of(verb);
    if (kind == KEYS_CODEC) {
        int lo, hi, def;
        for (size_t i = 0; i < trowel_codec_count(); i++)
            if (trowel_codec_levels(trowel_codec_at(i), &lo, &hi, &def)) {
                words_add(ws, "level=", 6);
                break;
            }
        return;
    }
    char key[64];
    for (size_t i = 0; i < trowel_format_count(); i++) {
        const trowel_format *f = trowel_format_at(i);
        cli_option_kind rows = kind == KEYS_CREATE ? CLI_CREATE_OPTIONS
                               : kind == KEYS_READ ? CLI_READ_OPTIONS
                                                   : CLI_CONVERT_OPTIONS;
        const trowel_option_info *o;
        for (size_t k = 0; (o = trowel_format_option_at(f, k)) != NULL; k++) {
            if (!cli_option_is(o, rows))
                continue;
            int n = snprintf(key, sizeof key, "%s=", o->key);
            if (n > 0 && (size_t)n < sizeof key)
                words_add(ws, key, (size_t)n);
        }
    }
}

static void value_words(words *ws, value_kind kind, const char *verb)
{
    switch (kind) {
    case VALUE_FORMAT: format_ids(ws); break;
    case VALUE_CODEC: codec_ids(ws); break;
    case VALUE_TARGET: target_ids(ws); break;
    case VALUE_KEY: option_keys(ws, verb); break;
    default: break;
    }
}

static void print_words(FILE *f, const words *ws, const char *sep)
{
    for (size_t i = 0; i < ws->n; i++)
        fprintf(f, "%s%s", i ? sep : "", ws->w[i]);
}

/* What a command's operands are. */
typedef enum operand_kind { OPERANDS_NONE, OPERANDS_FILES, OPERANDS_COMMANDS, OPERANDS_SHELLS } operand_kind;

static operand_kind operands_of(const char *verb)
{
    if (strcmp(verb, "formats") == 0)
        return OPERANDS_NONE;
    if (strcmp(verb, "completion") == 0)
        return OPERANDS_SHELLS;
    return OPERANDS_FILES;
}

#define SHELLS "bash zsh fish"

/* The two tables of a command: its own options, then the common ones. */
static const cli_option *table_of(const cli_command *cmd, int t)
{
    return t == 0 ? cmd->options : cli_common_options;
}

/* A common option the command's own table also has (extract's -v): offered
 * once, as the command's. */
static bool shadowed(const cli_command *cmd, int t, const cli_option *o)
{
    return t == 1 && cli_option_find(cmd->options, o->id) != NULL;
}

/* ------------------------------------------------------------------ bash */

static void bash_value_case(FILE *f, const cli_command *cmd)
{
    fputs("        case $prev in\n", f);
    for (int t = 0; t < 2; t++) {
        for (const cli_option *o = table_of(cmd, t); o->id != OPT_NONE; o++) {
            value_kind kind = value_of(o);
            if (kind == VALUE_NONE || shadowed(cmd, t, o))
                continue;
            fputs("        ", f);
            if (o->short_name)
                fprintf(f, "-%c%s", o->short_name, o->long_name ? " | " : "");
            if (o->long_name)
                fprintf(f, "--%s", o->long_name);
            fputs(") ", f);
            words ws = {0};
            value_words(&ws, kind, cmd->name);
            if (kind == VALUE_DIR)
                fputs("_trowel_dirs", f);
            else if (kind == VALUE_FILE)
                fputs("_trowel_files", f);
            else if (kind == VALUE_KEY) {
                fputs("_trowel_words \"", f);
                print_words(f, &ws, " ");
                fputs("\" && compopt -o nospace 2>/dev/null", f);
            } else if (ws.n) {
                fputs("_trowel_words \"", f);
                print_words(f, &ws, " ");
                fputc('"', f);
            } else {
                fputs(":", f);
            }
            fputs("; return ;;\n", f);
            words_free(&ws);
        }
    }
    fputs("        esac\n", f);
}

static void bash_options_word_list(FILE *f, const cli_command *cmd)
{
    bool first = true;
    for (int t = 0; t < 2; t++)
        for (const cli_option *o = table_of(cmd, t); o->id != OPT_NONE; o++) {
            if (shadowed(cmd, t, o))
                continue;
            if (o->short_name) {
                fprintf(f, "%s-%c", first ? "" : " ", o->short_name);
                first = false;
            }
            if (o->long_name) {
                fprintf(f, "%s--%s", first ? "" : " ", o->long_name);
                first = false;
            }
        }
}

static void bash_verb_names(FILE *f)
{
    for (size_t i = 0; i < cli_command_count; i++)
        if (cli_commands[i]->summary)
            fprintf(f, "%s ", cli_commands[i]->name);
}

static void print_bash(FILE *f)
{
    fputs("# bash completion for trowel(1), made by 'trowel completion bash' from the\n"
          "# tables of the trowel it came with (every command, option, id and -O key).\n"
          "# Do not edit: the build makes it again.\n\n"
          "_trowel_words() { mapfile -t COMPREPLY < <(compgen -W \"$1\" -- \"$cur\"); }\n"
          "_trowel_files() {\n"
          "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
          "    compopt -o filenames 2>/dev/null\n"
          "}\n"
          "_trowel_dirs() {\n"
          "    mapfile -t COMPREPLY < <(compgen -d -- \"$cur\")\n"
          "    compopt -o filenames 2>/dev/null\n"
          "}\n\n"
          "_trowel() {\n"
          "    local cur prev words cword\n"
          "    if declare -F _init_completion >/dev/null 2>&1; then\n"
          "        _init_completion -n = || return\n"
          "    else\n"
          "        cur=${COMP_WORDS[COMP_CWORD]}\n"
          "        prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
          "        words=(\"${COMP_WORDS[@]}\")\n"
          "        cword=$COMP_CWORD\n"
          "    fi\n"
          "    local verbs=\"",
          f);
    bash_verb_names(f);
    fputs("help\"\n"
          "    if [ \"$cword\" -eq 1 ]; then\n"
          "        if [[ $cur == -* ]]; then _trowel_words \"-h --help --version\"\n"
          "        else _trowel_words \"$verbs\"; fi\n"
          "        return\n"
          "    fi\n"
          "    local verb=${words[1]}\n"
          "    if [[ $cur == --*=* ]]; then\n"
          "        prev=${cur%%=*}\n"
          "        cur=${cur#*=}\n"
          "    fi\n"
          "    local options operands\n"
          "    case $verb in\n"
          "    help) [ \"$cword\" -eq 2 ] && _trowel_words \"${verbs% help}\"; return ;;\n",
          f);
    for (size_t i = 0; i < cli_command_count; i++) {
        const cli_command *cmd = cli_commands[i];
        fprintf(f, "    %s)\n", cmd->name);
        bash_value_case(f, cmd);
        fputs("        options=\"", f);
        bash_options_word_list(f, cmd);
        fputs("\"\n", f);
        operand_kind ok = operands_of(cmd->name);
        fprintf(f, "        operands=%s\n        ;;\n",
                ok == OPERANDS_NONE ? "none" : ok == OPERANDS_SHELLS ? "shells" : "files");
    }
    fputs("    *) return ;;\n"
          "    esac\n"
          "    if [[ $cur == -* ]]; then\n"
          "        _trowel_words \"$options\"\n"
          "        return\n"
          "    fi\n"
          "    case $operands in\n"
          "    files) _trowel_files ;;\n"
          "    shells) _trowel_words \"" SHELLS "\" ;;\n"
          "    esac\n"
          "}\n\n"
          "complete -F _trowel trowel\n",
          f);
}

/* ------------------------------------------------------------------- zsh */

/* Text inside single quotes: quotes closed and reopened; with special, the
 * characters in it backslashed too (brackets in an option's explanation,
 * colons in a value's message). */
static void zsh_quoted(FILE *f, const char *s, const char *special)
{
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else if (*s == '\\' || strchr(special, *s))
            fprintf(f, "\\%c", *s);
        else
            fputc(*s, f);
    }
}

static void zsh_text(FILE *f, const char *s)
{
    zsh_quoted(f, s, "[]:");
}

static void zsh_action(FILE *f, const cli_option *o, const char *verb)
{
    value_kind kind = value_of(o);
    fputc(':', f);
    zsh_text(f, o->arg_name);
    fputc(':', f);
    if (kind == VALUE_DIR) {
        fputs("_files -/", f);
        return;
    }
    if (kind == VALUE_FILE) {
        fputs("_files", f);
        return;
    }
    words ws = {0};
    value_words(&ws, kind, verb);
    if (ws.n) {
        fputc('(', f);
        for (size_t i = 0; i < ws.n; i++) {
            fputs(i ? " " : "", f);
            zsh_text(f, ws.w[i]);
        }
        fputc(')', f);
    } else {
        fputs(" ", f);
    }
    words_free(&ws);
}

static void zsh_option(FILE *f, const cli_option *o, const char *verb)
{
    bool repeat = o->id == OPT_OPTION;
    bool both = o->short_name && o->long_name;
    const char *help = o->help ? o->help : "(for completion scripts)";
    fputs("        ", f);
    if (both && !repeat)
        fprintf(f, "'(-%c --%s)'", o->short_name, o->long_name);
    if (repeat)
        fputs("'*'", f);
    if (both)
        fputc('{', f);
    if (o->short_name)
        fprintf(f, "-%c%s", o->short_name, o->arg_name ? "+" : "");
    if (both)
        fputc(',', f);
    if (o->long_name)
        fprintf(f, "--%s%s", o->long_name, o->arg_name ? "=" : "");
    if (both)
        fputc('}', f);
    fputs("'[", f);
    zsh_quoted(f, help, "[]");
    fputc(']', f);
    if (o->arg_name)
        zsh_action(f, o, verb);
    fputs("' \\\n", f);
}

static void print_zsh(FILE *f)
{
    fputs("#compdef trowel\n"
          "# zsh completion for trowel(1), made by 'trowel completion zsh' from the\n"
          "# tables of the trowel it came with. Do not edit: the build makes it again.\n\n"
          "_trowel() {\n"
          "    local -a verbs\n"
          "    verbs=(\n",
          f);
    for (size_t i = 0; i < cli_command_count; i++)
        if (cli_commands[i]->summary) {
            fprintf(f, "        '%s:", cli_commands[i]->name);
            zsh_quoted(f, cli_commands[i]->summary, "");
            fputs("'\n", f);
        }
    fputs("        'help:show the help of a command'\n"
          "    )\n"
          "    if (( CURRENT == 2 )); then\n"
          "        _describe -t commands 'trowel command' verbs\n"
          "        _arguments '(- *)'{-h,--help}'[show the help]' '(- *)--version[show the "
          "version]'\n"
          "        return\n"
          "    fi\n"
          "    local verb=$words[2]\n"
          "    shift words\n"
          "    (( CURRENT-- ))\n"
          "    case $verb in\n"
          "    help) (( CURRENT == 2 )) && _describe -t commands 'trowel command' verbs ;;\n",
          f);
    for (size_t i = 0; i < cli_command_count; i++) {
        const cli_command *cmd = cli_commands[i];
        fprintf(f, "    %s)\n        _arguments -s -S \\\n", cmd->name);
        for (int t = 0; t < 2; t++)
            for (const cli_option *o = table_of(cmd, t); o->id != OPT_NONE; o++)
                if (!shadowed(cmd, t, o))
                    zsh_option(f, o, cmd->name);
        operand_kind ok = operands_of(cmd->name);
        if (ok == OPERANDS_FILES)
            fputs("        '*:file:_files'\n", f);
        else if (ok == OPERANDS_SHELLS)
            fputs("        '1:shell:(" SHELLS ")'\n", f);
        else
            fputs("        '*: :'\n", f); /* none */
        fputs("        ;;\n", f);
    }
    fputs("    esac\n"
          "}\n\n"
          "_trowel \"$@\"\n",
          f);
}

/* ------------------------------------------------------------------ fish */

/* Text inside single quotes for fish: backslash and quote escaped. */
static void fish_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\'' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
}

static void fish_option(FILE *f, const cli_command *cmd, const cli_option *o)
{
    fprintf(f, "complete -c trowel -n '__fish_seen_subcommand_from %s'", cmd->name);
    if (o->short_name)
        fprintf(f, " -s %c", o->short_name);
    if (o->long_name)
        fprintf(f, " -l %s", o->long_name);
    value_kind kind = value_of(o);
    if (kind == VALUE_FILE)
        fputs(" -r -F", f);
    else if (kind == VALUE_DIR)
        fputs(" -x -a '(__fish_complete_directories)'", f);
    else if (kind != VALUE_NONE) {
        words ws = {0};
        value_words(&ws, kind, cmd->name);
        fputs(" -x", f);
        if (ws.n) {
            fputs(" -a '", f);
            for (size_t i = 0; i < ws.n; i++) {
                fputs(i ? " " : "", f);
                fish_text(f, ws.w[i]);
            }
            fputc('\'', f);
        }
        words_free(&ws);
    }
    fputs(" -d '", f);
    fish_text(f, o->help ? o->help : "(for completion scripts)");
    fputs("'\n", f);
}

static void print_fish(FILE *f)
{
    fputs("# fish completion for trowel(1), made by 'trowel completion fish' from the\n"
          "# tables of the trowel it came with. Do not edit: the build makes it again.\n\n"
          "complete -c trowel -f\n"
          "complete -c trowel -n __fish_use_subcommand -s h -l help -d 'show the help'\n"
          "complete -c trowel -n __fish_use_subcommand -l version -d 'show the version'\n"
          "complete -c trowel -n __fish_use_subcommand -a help -d 'show the help of a "
          "command'\n",
          f);
    for (size_t i = 0; i < cli_command_count; i++)
        if (cli_commands[i]->summary) {
            fprintf(f, "complete -c trowel -n __fish_use_subcommand -a %s -d '",
                    cli_commands[i]->name);
            fish_text(f, cli_commands[i]->summary);
            fputs("'\n", f);
        }
    fputs("complete -c trowel -n '__fish_seen_subcommand_from help' -a '", f);
    for (size_t i = 0; i < cli_command_count; i++)
        if (cli_commands[i]->summary)
            fprintf(f, "%s%s", i ? " " : "", cli_commands[i]->name);
    fputs("'\n", f);
    for (size_t i = 0; i < cli_command_count; i++) {
        const cli_command *cmd = cli_commands[i];
        fputc('\n', f);
        for (int t = 0; t < 2; t++)
            for (const cli_option *o = table_of(cmd, t); o->id != OPT_NONE; o++)
                if (!shadowed(cmd, t, o))
                    fish_option(f, cmd, o);
        operand_kind ok = operands_of(cmd->name);
        if (ok == OPERANDS_FILES)
            fprintf(f, "complete -c trowel -n '__fish_seen_subcommand_from %s' -F\n", cmd->name);
        else if (ok == OPERANDS_SHELLS)
            fprintf(f, "complete -c trowel -n '__fish_seen_subcommand_from %s' -a '" SHELLS "'\n",
                    cmd->name);
    }
}

/* --------------------------------------------------------------- options */

/* "VERB -x" and "VERB --long" for every option of every command, hidden
 * ones included: what tests hold the completions and the man page to. */
static void print_options(FILE *f)
{
    for (size_t i = 0; i < cli_command_count; i++) {
        const cli_command *cmd = cli_commands[i];
        for (int t = 0; t < 2; t++)
            for (const cli_option *o = table_of(cmd, t); o->id != OPT_NONE; o++) {
                if (shadowed(cmd, t, o))
                    continue;
                if (o->short_name)
                    fprintf(f, "%s -%c\n", cmd->name, o->short_name);
                if (o->long_name)
                    fprintf(f, "%s --%s\n", cmd->name, o->long_name);
            }
    }
}

/* --------------------------------------------------------------- command */

static int run_completion(const cli_args *args, cli_session *s)
{
    int rc = cli_need_operands(s, args, 1, 1, "one SHELL operand (" SHELLS ")");
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *shell = args->operands[0];
    void (*print)(FILE *) = strcmp(shell, "bash") == 0  ? print_bash
                            : strcmp(shell, "zsh") == 0 ? print_zsh
                            : strcmp(shell, "fish") == 0 ? print_fish
                            : strcmp(shell, "options") == 0 ? print_options
                                                            : NULL;
    if (!print)
        return cli_usage_error(s->verb, "no completion for '%s' (known: bash, zsh, fish)", shell);
    /* Made in memory, then written through a sink: OUT appears (or is
     * replaced, as the build remakes it) only when complete. */
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    print(f);
    if (fclose(f) != 0) {
        free(text);
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    const char *out = cli_args_last(args, OPT_OUTPUT);
    trowel_sink *sink;
    rc = cli_open_output(s, out, true, &sink);
    if (rc == CLI_EXIT_OK) {
        if (trowel_sink_write(sink, text, size) != TROWEL_OK)
            rc = cli_report(s, out ? out : CLI_STDOUT_NAME, NULL);
        rc = cli_close_output(s, sink, rc, out);
    }
    free(text);
    return rc;
}

static const cli_option completion_options[] = {
    {OPT_OUTPUT, 'o', "output", "OUT", "write to OUT (replaced) instead of standard output"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_completion = {
    .name = "completion",
    .synopsis = "completion bash|zsh|fish [-o OUT]",
    .summary = NULL, /* hidden: the build runs it */
    .description =
        "Print the completion script for a shell, made from trowel's own tables\n"
        "of commands, options, ids and -O keys. The build installs all three.\n"
        "'completion options' prints every option of every command, one\n"
        "'COMMAND OPTION' a line (what tests check completions and man against).",
    .options = completion_options,
    .run = run_completion,
};
