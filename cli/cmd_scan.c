/*
 * trowel scan DIR... [--json]: identify every file in a tree, as file -r
 * does: one line a file with its format, version, entry count and whether
 * it is damaged. Files no format recognises are listed as unknown; a file
 * that cannot be read is listed with why. Neither fails the scan: only an
 * operand that does not exist does. trowel info DIR does the same.
 */
#include "batch.h"
#include "scan.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct scan_job {
    cli_session *s;
    json_object *array; /* --json: one element a file; else NULL */
    size_t files, known, unknown, damaged, unreadable;
} scan_job;

/* ------------------------------------------------------------ one file */

static void print_line_start(const char *path)
{
    cli_put_safe(stdout, path);
    fputs(": ", stdout);
}

/* fmt: the format that bid for the file but could not open it, or NULL. */
static void report_unreadable(scan_job *j, const char *path, const trowel_format *fmt,
                              const char *why)
{
    j->unreadable++;
    if (j->array) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "file", json_object_new_string(path));
        if (fmt)
            json_object_object_add(o, "format", json_object_new_string(trowel_format_id(fmt)));
        json_object *e = json_object_new_object();
        json_object_object_add(e, "message", json_object_new_string(why));
        json_object_object_add(o, "error", e);
        json_object_array_add(j->array, o);
        return;
    }
    print_line_start(path);
    if (fmt)
        printf("%s, ", trowel_format_id(fmt));
    fputs("unreadable: ", stdout);
    cli_put_safe(stdout, why);
    putchar('\n');
}

static void report_unknown(scan_job *j, const char *path)
{
    j->unknown++;
    if (j->array) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "file", json_object_new_string(path));
        json_object_object_add(o, "format", NULL);
        json_object_array_add(j->array, o);
        return;
    }
    print_line_start(path);
    fputs("unknown\n", stdout);
}

/* The archive's version property, or -1 when it has none. */
static long long version_of(const trowel_archive *a)
{
    const trowel_prop *p = trowel_props_find(trowel_archive_info(a), "version");
    if (!p)
        return -1;
    if (p->type == TROWEL_VALUE_INT)
        return p->i;
    if (p->type == TROWEL_VALUE_UINT)
        return (long long)p->u;
    return -1;
}

static void report_known(scan_job *j, const char *path, const trowel_archive *a)
{
    j->known++;
    bool damaged = trowel_archive_damaged(a);
    j->damaged += damaged;
    const char *id = trowel_format_id(trowel_archive_format(a));
    long long version = version_of(a);
    size_t entries = trowel_archive_entry_count(a);
    if (j->array) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "file", json_object_new_string(path));
        json_object *chain = json_object_new_array();
        for (size_t i = 0; i < trowel_archive_filter_count(a); i++)
            json_object_array_add(chain, json_object_new_string(trowel_archive_filter_id(a, i)));
        json_object_object_add(o, "format", json_object_new_string(id));
        json_object_object_add(o, "filters", chain);
        json_object_object_add(o, "version", version < 0 ? NULL : json_object_new_int64(version));
        json_object_object_add(o, "entries", json_object_new_uint64(entries));
        json_object_object_add(o, "damaged", json_object_new_boolean(damaged));
        json_object_array_add(j->array, o);
        return;
    }
    print_line_start(path);
    for (size_t i = 0; i < trowel_archive_filter_count(a); i++)
        printf("%s \u2192 ", trowel_archive_filter_id(a, i));
    fputs(id, stdout);
    if (version >= 0)
        printf(" v%lld", version);
    printf(", %zu entr%s", entries, entries == 1 ? "y" : "ies");
    if (damaged)
        fputs(", damaged", stdout);
    putchar('\n');
}

/* The format that bids for the input, or NULL: a file that failed to open
 * as one is unreadable ("GRF version 10 is outside ..."), not unknown. */
static const trowel_format *recognised(cli_session *s, trowel_input *in)
{
    const trowel_format *f = NULL;
    if (!in || trowel_detect(s->ctx, in, &f, NULL) != TROWEL_OK)
        f = NULL;
    trowel_ctx_clear_error(s->ctx);
    return f;
}

/* Opens quietly: a damaged file is one line here, not its warnings. */
static void scan_file(scan_job *j, const char *path)
{
    cli_session *s = j->s;
    j->files++;
    bool silent = s->silent;
    s->silent = true;
    s->file = path;
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    trowel_status st = trowel_input_open_file(s->ctx, path, &in);
    if (st == TROWEL_OK)
        st = trowel_archive_open(s->ctx, in, NULL, &a);
    s->silent = silent;
    trowel_error why = *trowel_ctx_last_error(s->ctx);
    const trowel_format *bidder = st == TROWEL_OK ? NULL : recognised(s, in);
    if (st == TROWEL_OK)
        report_known(j, path, a);
    else if (st == TROWEL_ERR_UNSUPPORTED && in && !bidder)
        report_unknown(j, path);
    else
        report_unreadable(j, path, bidder,
                          why.message[0] ? why.message : trowel_status_string(st));
    trowel_ctx_clear_error(s->ctx);
    trowel_archive_close(a);
    trowel_input_close(in);
    s->file = NULL;
}

/* ------------------------------------------------------------ the tree */

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static void scan_tree(scan_job *j, const char *path);

/* The folder's entries in name order (so that runs compare), each
 * scanned. */
static void scan_dir(scan_job *j, const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        report_unreadable(j, path, NULL, strerror(errno));
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n == cap) {
            char **more = realloc(names, (cap = cap * 2 + 16) * sizeof *names);
            if (!more)
                break;
            names = more;
        }
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        if ((names[n] = malloc(len)) == NULL)
            break;
        bool slash = path[strlen(path) - 1] == '/';
        snprintf(names[n++], len, "%s%s%s", path, slash ? "" : "/", e->d_name);
    }
    closedir(d);
    if (n) /* qsort wants an array, even for none */
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        scan_tree(j, names[i]);
        free(names[i]);
    }
    free(names);
}

/* Folders are walked (a link to one is not followed, so no loop); regular
 * files, links to them included, are identified; anything else (a FIFO, a
 * device) is listed as not a file, never opened. */
static void scan_tree(scan_job *j, const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        report_unreadable(j, path, NULL, strerror(errno));
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        scan_dir(j, path);
        return;
    }
    bool link = S_ISLNK(st.st_mode);
    if (link && stat(path, &st) != 0) {
        report_unreadable(j, path, NULL, "a link to nothing");
        return;
    }
    if (link && S_ISDIR(st.st_mode)) {
        report_unreadable(j, path, NULL, "a link to a folder (not followed)");
        return;
    }
    if (!S_ISREG(st.st_mode)) {
        report_unreadable(j, path, NULL, "not a regular file (not opened)");
        return;
    }
    scan_file(j, path);
}

/* ------------------------------------------------------------- command */

int cli_scan_operand(cli_session *s, const char *path, json_object *array, size_t *files)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        cli_error("%s: %s", path, strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    scan_job j = {.s = s, .array = array};
    if (S_ISDIR(st.st_mode)) /* named by the user: followed even as a link */
        scan_dir(&j, path);
    else
        scan_tree(&j, path);
    if (files)
        *files += j.files;
    return CLI_EXIT_OK;
}

static int run_scan(const cli_args *args, cli_session *s)
{
    int rc = cli_need_operands(s, args, 1, 0, "a DIR operand");
    if (rc != CLI_EXIT_OK)
        return rc;
    bool json = cli_args_has(args, OPT_JSON);
    json_object *array = json ? json_object_new_array() : NULL;
    for (size_t i = 0; i < args->operand_count; i++)
        rc = cli_max_exit(rc, cli_scan_operand(s, args->operands[i], array, NULL));
    cli_print_json_and_put(array);
    return rc;
}

static const cli_option scan_options[] = {
    {OPT_JSON, 0, "json", NULL, "print one JSON array, one element a file"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_scan = {
    .name = "scan",
    .synopsis = "scan DIR... [--json]",
    .summary = "identify every file in folders (format, version, entries, damage)",
    .description =
        "Walk each DIR (a FILE is taken alone) and identify every file in it, in\n"
        "name order, as 'file -r' does: 'PATH: FORMAT vVERSION, N entries', with\n"
        "', damaged' when not every entry can be read and the wrappers peeled\n"
        "first ('szdd \u2192 groff'). A file no format recognises is 'PATH: unknown';\n"
        "one that cannot be read, or is not a regular file (a FIFO, a device,\n"
        "never opened), is 'PATH: unreadable: why'. Links to folders are not\n"
        "followed. None of these fails the scan: the exit status is 1 only when\n"
        "a DIR does not exist. With --json: an array of {\"file\", \"format\",\n"
        "\"filters\", \"version\", \"entries\", \"damaged\"} (\"format\": null when\n"
        "unknown; {\"file\", \"error\": {\"message\"}} when unreadable).\n"
        "'trowel info DIR' scans DIR the same way.",
    .options = scan_options,
    .run = run_scan,
};
