/*
 * GNU-style argument parsing for the trowel verbs: options and operands in
 * any order, "--" ends options, "--opt=value" and "--opt value", short
 * options that may be bundled ("-lq") or carry their value ("-Cdir").
 * The parser only sorts the words; each command gives meaning to them.
 */
#ifndef TROWEL_CLI_ARGS_H
#define TROWEL_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every option any verb knows; a verb's table says which it accepts. */
typedef enum cli_opt_id {
    OPT_NONE = 0,
    OPT_HELP,
    OPT_QUIET,
    OPT_MEM_LIMIT,
    OPT_THREADS,
    OPT_VERBOSE,
    OPT_JSON,
    OPT_LONG,
    OPT_FORMAT,
    OPT_DIRECTORY,
    OPT_FORCE,
    OPT_MANIFEST,
    OPT_NAMES,
    OPT_OUTPUT,
    OPT_OPTION,
    OPT_TO,
    OPT_CODEC,
    OPT_SIZE,
    OPT_IDS,
    OPT_CODEC_IDS,
    OPT_TARGET_IDS,
    OPT_RAW,
    OPT_SKIP_EXISTING,
    OPT_STDOUT,
    OPT_FOREGROUND,
    OPT_DEBUG,
    OPT_CACHE,
    OPT_RECURSIVE,
    OPT_EXCLUDE,
    OPT_FILES_FROM,
    OPT_DRY_RUN,
    OPT_KEEP_LAST,
    OPT_PARTIAL,
    OPT_VIEWS,
    OPT_PORT,
    OPT_NO_BROWSER,
    OPT_PER_ARCHIVE
} cli_opt_id;

typedef struct cli_option {
    cli_opt_id id;
    char short_name;      /* 0: none */
    const char *long_name;/* without the dashes; NULL: none */
    const char *arg_name; /* NULL: a flag; else the value's name in help */
    const char *help;     /* NULL: hidden from --help */
} cli_option;

/* One option as met on the command line, in order. */
typedef struct cli_opt_value {
    cli_opt_id id;
    const char *value; /* NULL for flags */
} cli_opt_value;

typedef struct cli_args {
    cli_opt_value *opts;
    size_t opt_count;
    const char **operands;
    size_t operand_count;
} cli_args;

/* The options every verb accepts besides its own (a verb's own entry for
 * the same option, such as extract's -v, is the one its help shows). */
extern const cli_option cli_common_options[];

/* The entry of table for id, or NULL. */
const cli_option *cli_option_find(const cli_option *table, cli_opt_id id);

/* Sorts argv[0..argc) (the words after the verb) into options and operands.
 * options ends with an entry whose id is OPT_NONE. On a bad word prints a
 * usage error naming the verb and returns 2; else 0. Free with
 * cli_args_free. */
int cli_parse_args(const char *verb, const cli_option *options, int argc, char **argv,
                   cli_args *out);
void cli_args_free(cli_args *args);

/* True when the option was given at least once. */
bool cli_args_has(const cli_args *args, cli_opt_id id);
/* The value of the last occurrence, or NULL. */
const char *cli_args_last(const cli_args *args, cli_opt_id id);

/* The values of every occurrence of id, in order, in a new array the
 * caller frees (NULL when memory is exhausted). */
const char **cli_args_values(const cli_args *args, cli_opt_id id, size_t *count);

/* Parses a byte count: digits with an optional K, M, G or T suffix (powers
 * of 1024, either case). Returns false on anything else or on overflow. */
bool cli_parse_size(const char *text, uint64_t *out);

/* Parses a plain decimal count from 0 to max. Returns false on anything else. */
bool cli_parse_count(const char *text, unsigned long max, unsigned long *out);

#endif
