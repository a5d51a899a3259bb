/*
 * trowel verify FILE... [-t FORMAT] [--json]: every checksum, size and
 * offset each format has; each problem on stderr, "FILE: ok" on stdout for
 * good files; or, with --json, one document with every problem.
 */
#include "batch.h"

typedef struct verify_run {
    cli_session *s;
    const char *path;
    json_object *problems; /* --json: the problems, else NULL */
} verify_run;

static void on_problem(void *user, const trowel_error *problem)
{
    const verify_run *v = user;
    if (v->problems) { /* JSON lists every problem */
        json_object_array_add(v->problems, cli_json_error(problem));
        return;
    }
    if (!cli_admit_message(v->s))
        return;
    cli_progress_clear(&v->s->progress);
    cli_print_error(v->path, problem);
}

/* {"file", "format", "ok", "problems": [...]}, plus "error" when verify
 * stopped for another reason than the problems it found. */
static json_object *result_json(const verify_run *v, const trowel_archive *a, trowel_status st)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "file", json_object_new_string(v->path));
    json_object_object_add(o, "format",
                           json_object_new_string(trowel_format_id(trowel_archive_format(a))));
    json_object_object_add(o, "ok", json_object_new_boolean(st == TROWEL_OK));
    json_object_object_add(o, "problems", json_object_get(v->problems));
    if (st != TROWEL_OK && st != TROWEL_ERR_VERIFY)
        json_object_object_add(o, "error", cli_json_error(trowel_ctx_last_error(v->s->ctx)));
    return o;
}

static int verify_one(cli_session *s, const char *path, const trowel_format *fmt, bool json,
                      json_object **result)
{
    cli_opened o;
    *result = NULL;
    int rc = cli_open_archive(s, path, fmt, &o);
    if (rc != CLI_EXIT_OK) {
        if (json)
            *result = cli_json_failure(s, path);
        return rc;
    }
    verify_run v = {s, cli_display_name(path), json ? json_object_new_array() : NULL};
    /* The problems verify finds get a budget of their own: the warnings
     * reading the file gave are counted apart. */
    cli_summarise_messages(s);
    cli_progress_start(&s->progress, v.path);
    trowel_status st = trowel_archive_verify(o.a, on_problem, &v);
    cli_progress_clear(&s->progress);
    if (json)
        *result = result_json(&v, o.a, st);
    if (st == TROWEL_OK && !json) {
        cli_put_safe(stdout, v.path);
        fputs(": ok\n", stdout);
    } else if (st != TROWEL_OK) {
        rc = cli_report(s, v.path, NULL); /* the count, or why verify stopped */
    }
    json_object_put(v.problems);
    cli_close_archive(&o);
    return rc;
}

static int run_verify(const cli_args *args, cli_session *s)
{
    const trowel_format *fmt;
    int rc = cli_batch_files(s, args, &fmt);
    if (rc != CLI_EXIT_OK)
        return rc;
    bool json = cli_args_has(args, OPT_JSON);
    json_object *array = json && args->operand_count > 1 ? json_object_new_array() : NULL;
    cli_session_progress(s);
    for (size_t i = 0; i < args->operand_count; i++) {
        json_object *result;
        rc = cli_max_exit(rc, verify_one(s, args->operands[i], fmt, json, &result));
        if (result && array)
            json_object_array_add(array, result);
        else
            cli_print_json_and_put(result);
    }
    cli_print_json_and_put(array);
    return rc;
}

static const cli_option verify_options[] = {
    {OPT_FORMAT, 't', "format", "FORMAT", "read as FORMAT instead of detecting it"},
    {OPT_JSON, 0, "json", NULL, "print one JSON document (an array for several files)"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_verify = {
    .name = "verify",
    .synopsis = "verify FILE... [-t FORMAT] [--json]",
    .summary = "check every checksum, size and offset of files",
    .description =
        "Decode every entry of each FILE ('-': standard input) and check every\n"
        "checksum, size and offset its format has. Each problem is printed on\n"
        "standard error; a file without any gets 'FILE: ok' on standard output.\n"
        "With --json, standard output has {\"file\", \"format\", \"ok\",\n"
        "\"problems\": [{\"status\", \"message\", \"entry\", \"offset\"}]} instead (an\n"
        "array of them for several files; a file that cannot be read is\n"
        "{\"file\", \"error\": {...}}). The exit status is 1 if any file failed.",
    .options = verify_options,
    .run = run_verify,
};
