/*
 * trowel convert INPUT [-o OUT] [--to TARGET] [-O key=value]... [-t FORMAT]
 * Converts a file to a target: "json" (its structure) for every format,
 * images, meshes, sounds or scripts for those that have them.
 */
#include "cli.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The target OUT's extension names, if it is a known one; else NULL. */
static const char *target_from_name(const char *out, char *buf, size_t cap)
{
    if (!out || strcmp(out, "-") == 0)
        return NULL;
    const char *slash = strrchr(out, '/');
    const char *dot = strrchr(slash ? slash + 1 : out, '.');
    if (!dot || !dot[1] || strlen(dot + 1) >= cap)
        return NULL;
    size_t n = 0;
    for (const char *c = dot + 1; *c; c++)
        buf[n++] = (char)tolower((unsigned char)*c);
    buf[n] = '\0';
    return cli_known_target(buf) ? buf : NULL;
}

static int choose_target(const cli_session *s, const cli_args *args, char *buf, size_t cap,
                         const char **target)
{
    const char *to = cli_args_last(args, OPT_TO);
    if (!to) {
        const char *from_name = target_from_name(cli_args_last(args, OPT_OUTPUT), buf, cap);
        *target = from_name ? from_name : "json";
        return CLI_EXIT_OK;
    }
    *target = to;
    if (cli_known_target(to))
        return CLI_EXIT_OK;
    fprintf(stderr, CLI_PROGRAM ": %s: unknown target '", s->verb);
    cli_put_safe(stderr, to);
    fputs("' (known: ", stderr);
    cli_list_targets(stderr, ", ");
    fprintf(stderr, ")\nTry '" CLI_PROGRAM " %s --help'.\n", s->verb);
    return CLI_EXIT_USAGE;
}

/* A target whose result is a folder (a costume's pictures, sheet, atlas). */
static int convert_to_folder(cli_session *s, const cli_args *args, trowel_archive *a,
                             const char *target, const char **opts, size_t nopts)
{
    const char *out = cli_args_last(args, OPT_OUTPUT);
    if (!out || strcmp(out, "-") == 0) {
        fprintf(stderr, CLI_PROGRAM ": %s: --to %s writes a folder of files: name it with -o DIR\n",
                s->verb, target);
        return CLI_EXIT_USAGE;
    }
    trowel_outdir *dir;
    unsigned flags = cli_args_has(args, OPT_FORCE) ? TROWEL_SINK_OVERWRITE : 0;
    if (trowel_outdir_open(s->ctx, out, flags, &dir) != TROWEL_OK)
        return cli_report(s, out, NULL);
    int rc = CLI_EXIT_OK;
    if (trowel_convert_folder(s->ctx, a, target, opts, nopts, dir) != TROWEL_OK)
        rc = cli_report(s, s->file, NULL);
    trowel_outdir_close(dir);
    return rc;
}

/* The rule for a damaged INPUT (one the library could open only in part):
 * nothing is written under OUT, so that a script trusting OUT's existence
 * is not misled, unless --partial asks for what could be read; the exit
 * status is 1 either way. Said once, here, before any output is opened. */
static int refuse_damaged(cli_session *s)
{
    cli_progress_clear(&s->progress);
    fputs(CLI_PROGRAM ": ", stderr);
    cli_put_safe(stderr, cli_display_name(s->file));
    fputs(": damaged: nothing written (--partial writes what could be read)\n", stderr);
    return CLI_EXIT_FAILURE;
}

/* After the conversion: damage found while converting also withdraws the
 * output (a file under OUT is discarded; standard output has gone). */
static int converted_status(cli_session *s, const cli_args *args, trowel_archive *a, int rc)
{
    if (rc == CLI_EXIT_OK && trowel_archive_damaged(a) && !cli_args_has(args, OPT_PARTIAL))
        return refuse_damaged(s);
    return rc;
}

static int convert(cli_session *s, const cli_args *args, trowel_archive *a, const char *target)
{
    const char *out = cli_args_last(args, OPT_OUTPUT);
    size_t nopts;
    const char **opts = cli_args_values(args, OPT_OPTION, &nopts);
    if (!opts) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    if (trowel_convert_makes_folder(a, target)) {
        int folder_rc = convert_to_folder(s, args, a, target, opts, nopts);
        free(opts);
        return folder_rc;
    }
    if (cli_same_file(out, s->file)) {
        free(opts);
        return cli_refuse_overwrite_input(s, out, s->file);
    }
    trowel_sink *sink;
    int rc = cli_open_output(s, out, cli_args_has(args, OPT_FORCE), &sink);
    if (rc == CLI_EXIT_OK) {
        if (trowel_convert(s->ctx, a, target, opts, nopts, sink) != TROWEL_OK)
            rc = cli_report(s, s->file, NULL);
        rc = cli_close_output(s, sink, converted_status(s, args, a, rc), out);
    }
    free(opts);
    return rc;
}

static int run_convert(const cli_args *args, cli_session *s)
{
    const trowel_format *fmt;
    char buf[32];
    const char *target;
    int rc = cli_need_operands(s, args, 1, 1, "one INPUT operand");
    if (rc == CLI_EXIT_OK)
        rc = cli_forced_format(s, args, &fmt);
    if (rc == CLI_EXIT_OK)
        rc = choose_target(s, args, buf, sizeof buf, &target);
    if (rc != CLI_EXIT_OK)
        return rc;
    cli_opened o;
    if ((rc = cli_open_archive(s, args->operands[0], fmt, &o)) != CLI_EXIT_OK)
        return rc;
    if (trowel_archive_damaged(o.a) && !cli_args_has(args, OPT_PARTIAL))
        rc = refuse_damaged(s);
    else
        rc = convert(s, args, o.a, target);
    /* With --partial what could be read was converted (the warnings at
     * open said what could not); a damaged file still fails, as with info
     * and list. */
    if (rc == CLI_EXIT_OK && trowel_archive_damaged(o.a))
        rc = CLI_EXIT_FAILURE;
    cli_close_archive(&o);
    return rc;
}

static void convert_help(FILE *f)
{
    fputs("\nTargets: ", f);
    cli_list_targets(f, ", ");
    fputs(" (what each format converts to: 'trowel formats').\n"
          "\nConvert options (-O KEY=VALUE), by format and the targets they apply to:\n", f);
    cli_print_all_options(f, CLI_CONVERT_OPTIONS);
}

static const cli_option convert_options[] = {
    {OPT_OUTPUT, 'o', "output", "OUT", "write to OUT (default, or '-': standard output)"},
    {OPT_TO, 0, "to", "TARGET", "what to convert to (default: OUT's extension, else json)"},
    {OPT_OPTION, 'O', "option", "KEY=VALUE", "a conversion option (repeatable)"},
    {OPT_FORMAT, 't', "format", "FORMAT", "read as FORMAT instead of detecting it"},
    {OPT_FORCE, 'f', "force", NULL, "overwrite OUT; write binary data to a terminal"},
    {OPT_VERBOSE, 'v', "verbose", NULL, "print notes too (every problem, not only the first)"},
    {OPT_PARTIAL, 0, "partial", NULL, "from a damaged INPUT, write what could be read (exit 1)"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_convert = {
    .name = "convert",
    .synopsis = "convert INPUT [-o OUT] [--to TARGET] [-O KEY=VALUE]... [-t FORMAT] [--partial]",
    .summary = "convert a file to JSON or to a common format (png, wav, vcd...)",
    .description =
        "Convert INPUT ('-': standard input) to TARGET: json (its structure, for\n"
        "every format) or what its format lists in 'trowel formats'. Without\n"
        "--to, the target is OUT's extension when that names a target, else\n"
        "json. Binary output is not written to a terminal unless --force.\n"
        "A damaged INPUT (one that can be read only in part) is not converted:\n"
        "nothing is written and the exit status is 1. --partial writes what\n"
        "could be read, and still exits 1. (extract writes every whole entry\n"
        "it can, as always.)",
    .options = convert_options,
    .more_help = convert_help,
    .run = run_convert,
};
