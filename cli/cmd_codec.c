/*
 * trowel compress   -c CODEC [-o OUT] [-O level=N] [IN|-]
 * trowel decompress -c CODEC [-o OUT] [--size N] [IN|-]
 * Raw codec streams, no container: from IN or standard input (read whole,
 * within the memory limit) to OUT or standard output.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STDIN_NAME "(standard input)"

typedef struct codec_input {
    trowel_input *in;
    const char *name;
    bool from_stdin;
} codec_input;

static int open_input(cli_session *s, const char *operand, codec_input *ci)
{
    memset(ci, 0, sizeof *ci);
    bool from_stdin = !operand || strcmp(operand, "-") == 0;
    ci->name = from_stdin ? STDIN_NAME : operand;
    ci->from_stdin = from_stdin;
    s->file = ci->name;
    trowel_status st;
    if (from_stdin) {
        /* Read whole by the library, so that the memory limit counts it. */
        st = trowel_input_open_stream(s->ctx, STDIN_FILENO, STDIN_NAME, &ci->in);
    } else {
        st = trowel_input_open_file(s->ctx, operand, &ci->in);
    }
    return st == TROWEL_OK ? CLI_EXIT_OK : cli_report(s, ci->name, NULL);
}

static void close_input(codec_input *ci)
{
    trowel_input_close(ci->in);
    memset(ci, 0, sizeof *ci);
}

static int find_codec(const cli_session *s, const cli_args *args, const trowel_codec **out)
{
    const char *id = cli_args_last(args, OPT_CODEC);
    if (!id)
        return cli_usage_error(s->verb, "missing -c CODEC (see 'trowel formats')");
    *out = trowel_codec_find(id);
    if (*out)
        return CLI_EXIT_OK;
    fprintf(stderr, CLI_PROGRAM ": %s: unknown codec '", s->verb);
    cli_put_safe(stderr, id);
    fputs("' (known: ", stderr);
    for (size_t i = 0; i < trowel_codec_count(); i++)
        fprintf(stderr, "%s%s", i ? ", " : "", trowel_codec_id(trowel_codec_at(i)));
    fprintf(stderr, ")\nTry '" CLI_PROGRAM " %s --help'.\n", s->verb);
    return CLI_EXIT_USAGE;
}

static int expected_size(const cli_session *s, const cli_args *args, uint64_t *size)
{
    *size = TROWEL_SIZE_UNKNOWN;
    const char *text = cli_args_last(args, OPT_SIZE);
    if (text && (!cli_parse_size(text, size) || *size == TROWEL_SIZE_UNKNOWN))
        return cli_usage_error(s->verb, "--size takes a byte count, not '%s'", text);
    return CLI_EXIT_OK;
}

/* Runs the codec from ci into OUT. */
static int transcode(cli_session *s, const cli_args *args, const trowel_codec *c,
                     codec_input *ci, bool compress, uint64_t size)
{
    const char *out = cli_args_last(args, OPT_OUTPUT);
    if (!ci->from_stdin && cli_same_file(out, ci->name))
        return cli_refuse_overwrite_input(s, out, ci->name);
    trowel_sink *sink;
    int rc = cli_open_output(s, out, cli_args_has(args, OPT_FORCE), &sink);
    if (rc != CLI_EXIT_OK)
        return rc;
    size_t nopts = 0;
    const char **opts = compress ? cli_args_values(args, OPT_OPTION, &nopts) : NULL;
    if (compress && !opts) {
        cli_close_output(s, sink, CLI_EXIT_FAILURE, out);
        return cli_report(s, ci->name, NULL);
    }
    cli_progress_start(&s->progress, ci->name);
    trowel_status st = compress ? trowel_codec_compress_with(s->ctx, c, ci->in, opts, nopts, sink)
                                : trowel_codec_decompress(s->ctx, c, ci->in, size, sink);
    free(opts);
    if (st == TROWEL_ERR_USAGE) {
        cli_close_output(s, sink, CLI_EXIT_USAGE, out);
        return cli_usage_error(s->verb, "%s", trowel_ctx_last_error(s->ctx)->message);
    }
    if (st != TROWEL_OK)
        rc = cli_report(s, ci->name, NULL);
    return cli_close_output(s, sink, rc, out);
}

static int run_codec(const cli_args *args, cli_session *s, bool compress)
{
    const trowel_codec *c = NULL;
    uint64_t size = TROWEL_SIZE_UNKNOWN;
    int rc = cli_need_operands(s, args, 0, 1, "at most one input (IN or '-')");
    if (rc == CLI_EXIT_OK)
        rc = find_codec(s, args, &c);
    if (rc == CLI_EXIT_OK)
        rc = expected_size(s, args, &size);
    if (rc != CLI_EXIT_OK)
        return rc;
    cli_session_progress(s);
    codec_input ci;
    rc = open_input(s, args->operand_count ? args->operands[0] : NULL, &ci);
    if (rc == CLI_EXIT_OK)
        rc = transcode(s, args, c, &ci, compress, size);
    close_input(&ci);
    return rc;
}

static int run_compress(const cli_args *args, cli_session *s)
{
    return run_codec(args, s, true);
}

static int run_decompress(const cli_args *args, cli_session *s)
{
    return run_codec(args, s, false);
}

static const cli_option compress_options[] = {
    {OPT_CODEC, 'c', "codec", "CODEC", "the codec (see 'trowel formats')"},
    {OPT_OPTION, 'O', "option", "KEY=VALUE", "level=N for codecs with levels (zlib 0-9, lz4 1-12)"},
    {OPT_OUTPUT, 'o', "output", "OUT", "write to OUT (default, or '-': standard output)"},
    {OPT_FORCE, 'f', "force", NULL, "overwrite OUT; write binary data to a terminal"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

static const cli_option decompress_options[] = {
    {OPT_CODEC, 'c', "codec", "CODEC", "the codec (see 'trowel formats')"},
    {OPT_OUTPUT, 'o', "output", "OUT", "write to OUT (default, or '-': standard output)"},
    {OPT_SIZE, 0, "size", "N", "the decoded size, when known: exactly N bytes must come out"},
    {OPT_FORCE, 'f', "force", NULL, "overwrite OUT; write binary data to a terminal"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_compress = {
    .name = "compress",
    .synopsis = "compress -c CODEC [-o OUT] [-O level=N] [IN|-]",
    .summary = "compress a file into a raw codec stream",
    .description =
        "Compress IN (default, or '-': standard input) with CODEC into a raw\n"
        "stream without any container header, written to OUT (default, or '-':\n"
        "standard output). Standard input is read whole into memory, within\n"
        "--mem-limit. '-c zlib' writes a zlib stream with its header and\n"
        "Adler-32, '-c lz4' an LZ4 frame; -O level=N picks their level.",
    .options = compress_options,
    .run = run_compress,
};

const cli_command cli_cmd_decompress = {
    .name = "decompress",
    .synopsis = "decompress -c CODEC [-o OUT] [--size N] [IN|-]",
    .summary = "decompress a raw codec stream",
    .description =
        "Decompress the raw CODEC stream IN (default, or '-': standard input)\n"
        "to OUT (default, or '-': standard output). With --size N the decoder\n"
        "insists on exactly N bytes of output.",
    .options = decompress_options,
    .run = run_decompress,
};
