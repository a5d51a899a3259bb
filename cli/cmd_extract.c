/*
 * trowel extract ARCHIVE [-C DIR] [--force] [--manifest M.json]
 *                [--names LIST] [PATTERN...]
 * Writes every entry (or those matching a PATTERN) under DIR through the
 * library's safe output folder: checked names, temporary files renamed when
 * complete, nothing overwritten without --force, never the archive itself.
 */
#include "cli.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct extract_job {
    cli_session *s;
    const char *path; /* the archive */
    trowel_archive *a;
    const char *dir_path;
    trowel_outdir *dir;
    struct stat archive_st; /* so that no entry is ever written onto it */
    bool force;             /* without it the sink refuses any existing file */
    const char *const *patterns;
    size_t pattern_count;
    bool *pattern_used;
} extract_job;

/* ------------------------------------------------------------- checking */

/* True when the entry's target is the archive being read (same device and
 * inode), which extraction must never replace. */
static bool is_the_archive(const extract_job *j, const char *name)
{
    char rel[4096], full[8192];
    if (trowel_path_normalize(name, rel, sizeof rel) != TROWEL_OK)
        return false; /* trowel_outdir_create refuses it anyway */
    int n = snprintf(full, sizeof full, "%s/%s", j->dir_path, rel);
    if (n < 0 || (size_t)n >= sizeof full)
        return false;
    struct stat st;
    return stat(full, &st) == 0 && st.st_dev == j->archive_st.st_dev &&
           st.st_ino == j->archive_st.st_ino;
}

static int refuse_input(const extract_job *j, const char *name)
{
    cli_progress_clear(&j->s->progress);
    trowel_error e = {.status = TROWEL_ERR_EXISTS, .offset = TROWEL_NO_OFFSET};
    snprintf(e.entry, sizeof e.entry, "%s", name);
    snprintf(e.message, sizeof e.message, "refusing to write over the archive being read");
    cli_print_error(j->path, &e);
    return CLI_EXIT_FAILURE;
}

/* True when the entry is wanted: no patterns, or one matches (marked used). */
static bool wanted(extract_job *j, const char *name)
{
    bool any = j->pattern_count == 0;
    for (size_t i = 0; i < j->pattern_count; i++)
        if (fnmatch(j->patterns[i], name, 0) == 0)
            any = j->pattern_used[i] = true;
    return any;
}

/* ------------------------------------------------------------ extracting */

static void print_written(const extract_job *j, const char *name)
{
    char rel[4096];
    if (trowel_path_normalize(name, rel, sizeof rel) != TROWEL_OK)
        return;
    if (strcmp(j->dir_path, ".") != 0) {
        cli_put_safe(stdout, j->dir_path);
        putchar('/');
    }
    cli_put_safe(stdout, rel);
    putchar('\n');
}

static int extract_entry(extract_job *j, const trowel_entry *e)
{
    /* Only --force could replace the archive: without it the sink refuses
     * any file that exists, the archive included. */
    if (j->force && is_the_archive(j, e->name))
        return refuse_input(j, e->name);
    trowel_sink *sink;
    if (trowel_outdir_create(j->dir, e->name, &sink) != TROWEL_OK)
        return cli_report(j->s, j->path, e->name);
    cli_progress_start(&j->s->progress, e->name);
    if (trowel_archive_read_entry(j->a, e->index, sink) != TROWEL_OK) {
        int rc = cli_report(j->s, j->path, e->name);
        trowel_sink_discard(sink);
        return rc;
    }
    if (j->force && is_the_archive(j, e->name)) { /* appeared while we were reading */
        trowel_sink_discard(sink);
        return refuse_input(j, e->name);
    }
    if (trowel_sink_finish(sink) != TROWEL_OK)
        return cli_report(j->s, j->path, e->name);
    cli_progress_clear(&j->s->progress);
    if (j->s->verbose)
        print_written(j, e->name);
    return CLI_EXIT_OK;
}

static int extract_all(extract_job *j)
{
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < trowel_archive_entry_count(j->a); i++) {
        const trowel_entry *e = trowel_archive_entry(j->a, i);
        if (!wanted(j, e->name))
            continue;
        int r = extract_entry(j, e);
        rc = r > rc ? r : rc;
    }
    for (size_t i = 0; i < j->pattern_count; i++) {
        if (j->pattern_used[i])
            continue;
        fprintf(stderr, CLI_PROGRAM ": ");
        cli_put_safe(stderr, j->path);
        fprintf(stderr, ": no entry matches '");
        cli_put_safe(stderr, j->patterns[i]);
        fprintf(stderr, "'\n");
        rc = rc > CLI_EXIT_FAILURE ? rc : CLI_EXIT_FAILURE;
    }
    return rc;
}

/* ------------------------------------------------------ names, manifest */

/* Opens the manifest's output first, so an existing M.json stops the work
 * before anything is written; it is finished after the entries. */
static int open_manifest(extract_job *j, const char *mpath, bool force, trowel_sink **out,
                         char **json)
{
    *out = NULL;
    *json = NULL;
    if (!mpath)
        return CLI_EXIT_OK;
    if (cli_same_file(mpath, j->path))
        return cli_refuse_overwrite_input(j->s, mpath, j->path);
    if (trowel_archive_manifest(j->a, json) != TROWEL_OK)
        return cli_report(j->s, j->path, NULL);
    int rc = cli_open_output(j->s, mpath, force, out);
    if (rc == CLI_EXIT_OK && trowel_sink_write(*out, *json, strlen(*json)) == TROWEL_OK &&
        trowel_sink_write(*out, "\n", 1) == TROWEL_OK)
        return CLI_EXIT_OK;
    if (rc == CLI_EXIT_OK) {
        rc = cli_report(j->s, mpath, NULL);
        trowel_sink_discard(*out);
        *out = NULL;
    }
    return rc;
}

/* ---------------------------------------------------------------- command */

static int extract_open(extract_job *j, const cli_args *args)
{
    bool force = j->force = cli_args_has(args, OPT_FORCE);
    if (stat(j->path, &j->archive_st) != 0)
        memset(&j->archive_st, 0, sizeof j->archive_st);
    if (trowel_outdir_open(j->s->ctx, j->dir_path, force ? TROWEL_SINK_OVERWRITE : 0, &j->dir) !=
        TROWEL_OK)
        return cli_report(j->s, NULL, NULL);
    j->pattern_used = calloc(j->pattern_count ? j->pattern_count : 1, sizeof *j->pattern_used);
    if (!j->pattern_used) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

static int extract_archive(extract_job *j, const cli_args *args)
{
    int rc = cli_apply_names(j->s, j->path, j->a, cli_args_last(args, OPT_NAMES));
    if (rc == CLI_EXIT_OK)
        rc = cli_apply_read_options(j->s, j->path, j->a, args);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *mpath = cli_args_last(args, OPT_MANIFEST);
    trowel_sink *manifest;
    char *json;
    rc = open_manifest(j, mpath, cli_args_has(args, OPT_FORCE), &manifest, &json);
    if (rc == CLI_EXIT_OK)
        rc = extract_open(j, args);
    if (rc == CLI_EXIT_OK)
        rc = extract_all(j);
    /* A damaged file gives what can be read, and still fails. */
    if (rc == CLI_EXIT_OK && trowel_archive_damaged(j->a))
        rc = CLI_EXIT_FAILURE;
    if (manifest) {
        /* Written if extraction got going, even past failed entries: it
         * describes the archive, not what was extracted. */
        int r = cli_close_output(j->s, manifest, j->dir ? CLI_EXIT_OK : rc, mpath);
        rc = r > rc ? r : rc;
    }
    trowel_free(json);
    trowel_outdir_close(j->dir);
    free(j->pattern_used);
    return rc;
}

static int run_extract(const cli_args *args, cli_session *s)
{
    const trowel_format *fmt;
    int rc = cli_need_operands(s, args, 1, 0, "ARCHIVE operand");
    if (rc == CLI_EXIT_OK)
        rc = cli_forced_format(s, args, &fmt);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *dir = cli_args_last(args, OPT_DIRECTORY);
    extract_job j = {.s = s, .path = args->operands[0], .dir_path = dir ? dir : ".",
                     .patterns = args->operands + 1, .pattern_count = args->operand_count - 1};
    cli_session_progress(s);
    cli_opened o;
    if ((rc = cli_open_archive(s, j.path, fmt, &o)) != CLI_EXIT_OK)
        return rc;
    j.a = o.a;
    rc = extract_archive(&j, args);
    cli_close_archive(&o);
    return rc;
}

static const cli_option extract_options[] = {
    {OPT_DIRECTORY, 'C', "directory", "DIR", "write under DIR (default: the current folder)"},
    {OPT_FORCE, 'f', "force", NULL, "overwrite existing files"},
    {OPT_MANIFEST, 0, "manifest", "M.json", "also write what 'create --manifest' needs"},
    {OPT_NAMES, 0, "names", "LIST", "recover entry names from LIST (formats that store hashes)"},
    {OPT_RAW, 0, "raw", NULL, "write entries as stored, not converted (same as -O raw=1)"},
    {OPT_OPTION, 'O', "option", "KEY=VALUE", "a reading option of the format (repeatable)"},
    {OPT_FORMAT, 't', "format", "FORMAT", "read as FORMAT instead of detecting it"},
    {OPT_VERBOSE, 'v', "verbose", NULL, "print each file written"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_extract = {
    .name = "extract",
    .synopsis = "extract ARCHIVE [-C DIR] [--force] [--manifest M.json] [--names LIST] "
                "[--raw] [-O KEY=VALUE]... [PATTERN...]",
    .summary = "write the entries of an archive to files",
    .description =
        "Write every entry of ARCHIVE, or those whose name matches a shell\n"
        "PATTERN ('*', '?', '[...]'), under DIR with its archive name. Unsafe\n"
        "names (absolute, '..', drive letters) are refused, existing files are\n"
        "kept unless --force, and an entry that fails leaves no file behind.\n"
        "Failing entries are reported and the others still extracted; a\n"
        "PATTERN that matches nothing is an error.",
    .options = extract_options,
    .run = run_extract,
};
