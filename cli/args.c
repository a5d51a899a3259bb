/*
 * Command-line words to options and operands (see args.h).
 */
#include "args.h"

#include "closest.h"
#include "output.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

const cli_option cli_common_options[] = {
    {OPT_QUIET, 'q', "quiet", NULL,
     "no warnings, problems or progress bar: only a count of them"},
    {OPT_VERBOSE, 'v', "verbose", NULL,
     "print every warning and problem (by default: the first few, then a count)"},
    {OPT_MEM_LIMIT, 0, "mem-limit", "BYTES",
     "cap memory sized by input data (K, M, G suffixes)"},
    {OPT_THREADS, 'T', "threads", "N",
     "use up to N threads where work splits (0, the default: one per CPU)"},
    {OPT_HELP, 'h', "help", NULL, "show this help and exit"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

/* ---------------------------------------------------------------- lookup */

const cli_option *cli_option_find(const cli_option *table, cli_opt_id id)
{
    for (const cli_option *o = table; o->id != OPT_NONE; o++)
        if (o->id == id)
            return o;
    return NULL;
}

static const cli_option *find_long_in(const cli_option *table, const char *name, size_t len)
{
    for (const cli_option *o = table; o->id != OPT_NONE; o++)
        if (o->long_name && strlen(o->long_name) == len && strncmp(o->long_name, name, len) == 0)
            return o;
    return NULL;
}

static const cli_option *find_long(const cli_option *verb, const char *name, size_t len)
{
    const cli_option *o = find_long_in(verb, name, len);
    return o ? o : find_long_in(cli_common_options, name, len);
}

static const cli_option *find_short_in(const cli_option *table, char c)
{
    for (const cli_option *o = table; o->id != OPT_NONE; o++)
        if (o->short_name == c)
            return o;
    return NULL;
}

static const cli_option *find_short(const cli_option *verb, char c)
{
    const cli_option *o = find_short_in(verb, c);
    return o ? o : find_short_in(cli_common_options, c);
}

/* --------------------------------------------------------------- parsing */

typedef struct parser {
    const char *verb;
    const cli_option *options;
    int argc;
    char **argv;
    int next; /* index of the next word to read */
    cli_args *out;
} parser;

static void add_opt(parser *p, cli_opt_id id, const char *value)
{
    p->out->opts[p->out->opt_count].id = id;
    p->out->opts[p->out->opt_count].value = value;
    p->out->opt_count++;
}

/* An unknown --option, with the closest the command has when it looks
 * like a typo (--jsno: --json). */
static int unknown_long(const parser *p, const char *name, size_t len)
{
    const char *names[64];
    size_t n = 0;
    const cli_option *tables[2] = {p->options, cli_common_options};
    for (int t = 0; t < 2; t++)
        for (const cli_option *o = tables[t]; o->id != OPT_NONE && n < 64; o++)
            if (o->long_name)
                names[n++] = o->long_name;
    char word[64];
    snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), name);
    const char *best = cli_closest(word, names, n);
    fprintf(stderr, CLI_PROGRAM ": %s: unknown option '--", p->verb);
    cli_put_safe(stderr, word);
    fputs("'\n", stderr);
    if (best)
        fprintf(stderr, "Did you mean '--%s'?\n", best);
    fprintf(stderr, "Try '" CLI_PROGRAM " %s --help'.\n", p->verb);
    return CLI_EXIT_USAGE;
}

/* "--name", "--name=value" or "--name value". */
static int parse_long(parser *p, const char *word)
{
    const char *name = word + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const cli_option *o = find_long(p->options, name, len);
    if (!o)
        return unknown_long(p, name, len);
    if (!o->arg_name) {
        if (eq)
            return cli_usage_error(p->verb, "option '--%s' takes no value", o->long_name);
        add_opt(p, o->id, NULL);
        return 0;
    }
    if (eq) {
        add_opt(p, o->id, eq + 1);
        return 0;
    }
    if (p->next >= p->argc)
        return cli_usage_error(p->verb, "option '--%s' needs a value (%s)", o->long_name,
                               o->arg_name);
    add_opt(p, o->id, p->argv[p->next++]);
    return 0;
}

/* "-abc" (flags), "-Cdir" or "-C dir". */
static int parse_short(parser *p, const char *word)
{
    for (const char *c = word + 1; *c; c++) {
        const cli_option *o = find_short(p->options, *c);
        if (!o) {
            if (isprint((unsigned char)*c))
                return cli_usage_error(p->verb, "unknown option '-%c'", *c);
            return cli_usage_error(p->verb, "unknown option in '%s'", word);
        }
        if (!o->arg_name) {
            add_opt(p, o->id, NULL);
            continue;
        }
        if (c[1]) {
            add_opt(p, o->id, c + 1);
            return 0;
        }
        if (p->next >= p->argc)
            return cli_usage_error(p->verb, "option '-%c' needs a value (%s)", *c, o->arg_name);
        add_opt(p, o->id, p->argv[p->next++]);
        return 0;
    }
    return 0;
}

static int parse_words(parser *p)
{
    bool only_operands = false;
    while (p->next < p->argc) {
        const char *word = p->argv[p->next++];
        int rc = 0;
        if (only_operands || word[0] != '-' || word[1] == '\0')
            p->out->operands[p->out->operand_count++] = word;
        else if (strcmp(word, "--") == 0)
            only_operands = true;
        else if (word[1] == '-')
            rc = parse_long(p, word);
        else
            rc = parse_short(p, word);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int cli_parse_args(const char *verb, const cli_option *options, int argc, char **argv,
                   cli_args *out)
{
    memset(out, 0, sizeof *out);
    size_t n = argc > 0 ? (size_t)argc : 1;
    out->opts = calloc(n, sizeof *out->opts);
    out->operands = calloc(n, sizeof *out->operands);
    if (!out->opts || !out->operands) {
        cli_args_free(out);
        cli_error("out of memory");
        return 1;
    }
    parser p = {verb, options, argc, argv, 0, out};
    int rc = parse_words(&p);
    if (rc != 0)
        cli_args_free(out);
    return rc;
}

void cli_args_free(cli_args *args)
{
    free(args->opts);
    free(args->operands);
    memset(args, 0, sizeof *args);
}

bool cli_args_has(const cli_args *args, cli_opt_id id)
{
    for (size_t i = 0; i < args->opt_count; i++)
        if (args->opts[i].id == id)
            return true;
    return false;
}

const char *cli_args_last(const cli_args *args, cli_opt_id id)
{
    const char *v = NULL;
    for (size_t i = 0; i < args->opt_count; i++)
        if (args->opts[i].id == id)
            v = args->opts[i].value;
    return v;
}

const char **cli_args_values(const cli_args *args, cli_opt_id id, size_t *count)
{
    const char **values = calloc(args->opt_count ? args->opt_count : 1, sizeof *values);
    *count = 0;
    for (size_t i = 0; values && i < args->opt_count; i++)
        if (args->opts[i].id == id)
            values[(*count)++] = args->opts[i].value;
    return values;
}

/* ----------------------------------------------------------------- sizes */

static unsigned suffix_shift(const char *s)
{
    if (s[0] == '\0')
        return 0;
    if (s[1] != '\0')
        return 64; /* invalid */
    switch (toupper((unsigned char)s[0])) {
    case 'K': return 10;
    case 'M': return 20;
    case 'G': return 30;
    case 'T': return 40;
    default: return 64;
    }
}

bool cli_parse_count(const char *text, unsigned long max, unsigned long *out)
{
    if (!isdigit((unsigned char)text[0]))
        return false;
    errno = 0;
    char *end;
    unsigned long v = strtoul(text, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return false;
    *out = v;
    return true;
}

bool cli_parse_size(const char *text, uint64_t *out)
{
    if (!isdigit((unsigned char)text[0]))
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0)
        return false;
    unsigned shift = suffix_shift(end);
    if (shift >= 64 || (shift && v > (UINT64_MAX >> shift)))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}
