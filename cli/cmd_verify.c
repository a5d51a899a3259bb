/*
 * trowel verify FILE... [-t FORMAT]: every checksum, size and offset each
 * format has; each problem on stderr, "FILE: ok" on stdout for good files.
 */
#include "cli.h"

typedef struct verify_run {
    cli_session *s;
    const char *path;
} verify_run;

static void on_problem(void *user, const trowel_error *problem)
{
    const verify_run *v = user;
    cli_progress_clear(&v->s->progress);
    cli_print_error(v->path, problem);
}

static int verify_one(cli_session *s, const char *path, const trowel_format *fmt)
{
    cli_opened o;
    int rc = cli_open_archive(s, path, fmt, &o);
    if (rc != CLI_EXIT_OK)
        return rc;
    verify_run v = {s, path};
    cli_progress_start(&s->progress, path);
    trowel_status st = trowel_archive_verify(o.a, on_problem, &v);
    cli_progress_clear(&s->progress);
    if (st == TROWEL_OK) {
        cli_put_safe(stdout, path);
        fputs(": ok\n", stdout);
    } else {
        rc = cli_report(s, path, NULL); /* the count, or why verify stopped */
    }
    cli_close_archive(&o);
    return rc;
}

static int run_verify(const cli_args *args, cli_session *s)
{
    const trowel_format *fmt;
    int rc = cli_need_operands(s, args, 1, 0, "FILE operand");
    if (rc == CLI_EXIT_OK)
        rc = cli_forced_format(s, args, &fmt);
    if (rc != CLI_EXIT_OK)
        return rc;
    cli_session_progress(s);
    for (size_t i = 0; i < args->operand_count; i++) {
        int r = verify_one(s, args->operands[i], fmt);
        rc = r > rc ? r : rc;
    }
    return rc;
}

static const cli_option verify_options[] = {
    {OPT_FORMAT, 't', "format", "FORMAT", "read as FORMAT instead of detecting it"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_verify = {
    .name = "verify",
    .synopsis = "verify FILE... [-t FORMAT]",
    .summary = "check every checksum, size and offset of files",
    .description =
        "Decode every entry of each FILE and check every checksum, size and\n"
        "offset its format has. Each problem is printed on standard error;\n"
        "a file without any gets 'FILE: ok' on standard output. The exit\n"
        "status is 1 if any file failed.",
    .options = verify_options,
    .run = run_verify,
};
