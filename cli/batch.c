/*
 * Several files in one command (see batch.h).
 */
#include "batch.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool names_a_file(const char *operand)
{
    struct stat st;
    if (strcmp(operand, "-") == 0)
        return true;
    return stat(operand, &st) == 0 && !S_ISDIR(st.st_mode);
}

size_t cli_batch_archive_count(const cli_args *args)
{
    size_t n = args->operand_count ? 1 : 0;
    while (n < args->operand_count && names_a_file(args->operands[n]))
        n++;
    return n;
}

int cli_batch_check_stdin(const cli_session *s, const char *const *files, size_t n)
{
    bool seen = false;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(files[i], "-") != 0)
            continue;
        if (seen)
            return cli_usage_error(s->verb, "standard input ('-') can be read only once");
        seen = true;
    }
    return CLI_EXIT_OK;
}

int cli_batch_files(const cli_session *s, const cli_args *args, const trowel_format **fmt)
{
    int rc = cli_need_operands(s, args, 1, 0, "FILE operand");
    if (rc == CLI_EXIT_OK)
        rc = cli_forced_format(s, args, fmt);
    if (rc == CLI_EXIT_OK)
        rc = cli_batch_check_stdin(s, args->operands, args->operand_count);
    return rc;
}

void cli_batch_header(const char *path, size_t index, size_t count)
{
    if (count < 2)
        return;
    fputs(index ? "\n==> " : "==> ", stdout);
    cli_put_safe(stdout, cli_display_name(path));
    fputs(" <==\n", stdout);
}

/* -------------------------------------------------------------- patterns */

int cli_patterns_init(cli_patterns *p, const char *const *list, size_t count)
{
    p->list = list;
    p->count = count;
    p->used = calloc(count ? count : 1, sizeof *p->used);
    if (p->used)
        return CLI_EXIT_OK;
    cli_error("out of memory");
    return CLI_EXIT_FAILURE;
}

void cli_patterns_free(cli_patterns *p)
{
    free(p->used);
    p->used = NULL;
}

bool cli_patterns_match(cli_patterns *p, const char *name)
{
    bool any = p->count == 0;
    for (size_t i = 0; i < p->count; i++)
        if (fnmatch(p->list[i], name, 0) == 0)
            any = p->used[i] = true;
    return any;
}

int cli_patterns_report_unused(const cli_patterns *p, const char *file, bool unnamed_hint)
{
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < p->count; i++) {
        if (p->used[i])
            continue;
        fputs(CLI_PROGRAM ": ", stderr);
        if (file) {
            cli_put_safe(stderr, cli_display_name(file));
            fputs(": ", stderr);
        }
        fputs("no entry matches '", stderr);
        cli_put_safe(stderr, p->list[i]);
        fputs(unnamed_hint ? "' (entries are unnamed hashes: --names LIST recovers names)\n"
                           : "'\n",
              stderr);
        rc = CLI_EXIT_FAILURE;
    }
    return rc;
}

/* ----------------------------------------------------------------- names */

bool cli_has_unnamed_entries(const trowel_archive *a)
{
    return (trowel_format_caps(trowel_archive_format(a)) & TROWEL_CAP_NAMES) != 0;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

/* A copy of every entry name, to see which ones --names changed. */
static char **copy_names(const trowel_archive *a, size_t n)
{
    char **names = calloc(n ? n : 1, sizeof *names);
    for (size_t i = 0; names && i < n; i++) {
        names[i] = strdup(trowel_archive_entry(a, i)->name);
        if (!names[i]) {
            free_names(names, i);
            return NULL;
        }
    }
    return names;
}

int cli_recover_names(cli_session *s, const char *path, trowel_archive *a, const char *list)
{
    if (!list)
        return CLI_EXIT_OK;
    size_t n = trowel_archive_entry_count(a);
    char **before = copy_names(a, n);
    if (!before) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    int rc = cli_apply_names(s, path, a, list);
    if (rc == CLI_EXIT_OK && !s->quiet) {
        size_t named = 0;
        for (size_t i = 0; i < n; i++)
            named += strcmp(before[i], trowel_archive_entry(a, i)->name) != 0;
        fputs(CLI_PROGRAM ": ", stderr);
        cli_put_safe(stderr, cli_display_name(path));
        fprintf(stderr, ": %zu of %zu names recovered\n", named, n);
    }
    free_names(before, n);
    return rc;
}

/* ------------------------------------------------------------------ JSON */

int cli_max_exit(int a, int b)
{
    return a > b ? a : b;
}

void cli_print_json_object(json_object *o)
{
    trowel_json_make_utf8(o); /* names the CLI added (paths, list -r) are bytes too */
    cli_print_json_text(json_object_to_json_string_ext(
        o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
}

void cli_print_json_and_put(json_object *o)
{
    if (!o)
        return;
    cli_print_json_object(o);
    json_object_put(o);
}

json_object *cli_json_with_file(json_object *o, const char *path)
{
    json_object *out = json_object_new_object();
    json_object_object_add(out, "file", json_object_new_string(cli_display_name(path)));
    json_object_object_foreach(o, key, value)
    {
        if (strcmp(key, "file") != 0)
            json_object_object_add(out, key, json_object_get(value));
    }
    json_object_put(o);
    return out;
}

/* A stable word for each status, for programs reading the JSON. */
static const char *status_id(trowel_status st)
{
    switch (st) {
    case TROWEL_OK: return "ok";
    case TROWEL_ERR_IO: return "io";
    case TROWEL_ERR_TRUNCATED: return "truncated";
    case TROWEL_ERR_CORRUPT: return "corrupt";
    case TROWEL_ERR_UNSUPPORTED: return "unsupported";
    case TROWEL_ERR_LIMIT: return "limit";
    case TROWEL_ERR_NOMEM: return "nomem";
    case TROWEL_ERR_UNSAFE_PATH: return "unsafe_path";
    case TROWEL_ERR_EXISTS: return "exists";
    case TROWEL_ERR_USAGE: return "usage";
    case TROWEL_ERR_VERIFY: return "verify";
    }
    return "io";
}

json_object *cli_json_error(const trowel_error *e)
{
    trowel_status st = e->status == TROWEL_OK ? TROWEL_ERR_IO : e->status;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "status", json_object_new_string(status_id(st)));
    json_object_object_add(
        o, "message", json_object_new_string(e->message[0] ? e->message : trowel_status_string(st)));
    if (e->entry[0])
        json_object_object_add(o, "entry", json_object_new_string(e->entry));
    if (e->offset != TROWEL_NO_OFFSET)
        json_object_object_add(o, "offset", json_object_new_uint64(e->offset));
    return o;
}

static void keep_warning(void *user, const trowel_error *w)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "message", json_object_new_string(w->message));
    if (w->entry[0])
        json_object_object_add(o, "entry", json_object_new_string(w->entry));
    if (w->offset != TROWEL_NO_OFFSET)
        json_object_object_add(o, "offset", json_object_new_uint64(w->offset));
    json_object_array_add(user, o);
}

void cli_keep_warnings(cli_session *s, json_object *warnings)
{
    s->keep_warning = warnings ? keep_warning : NULL;
    s->keep_warning_user = warnings;
}

void cli_json_add_warnings(json_object *o, json_object *warnings)
{
    if (o && warnings && json_object_array_length(warnings) > 0)
        json_object_object_add(o, "warnings", json_object_get(warnings));
}

json_object *cli_json_failure(const cli_session *s, const char *path)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "file", json_object_new_string(cli_display_name(path)));
    json_object_object_add(o, "error", cli_json_error(trowel_ctx_last_error(s->ctx)));
    return o;
}
