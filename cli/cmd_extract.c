/*
 * trowel extract ARCHIVE... [-C DIR] [--force|--skip-existing] [--stdout]
 *                [--manifest M.json] [--names LIST] [PATTERN...]
 * Writes every entry (or those matching a PATTERN) of each ARCHIVE under DIR
 * through the library's safe output folder: checked names, temporary files
 * renamed when complete, nothing overwritten without --force, never the
 * archive itself. Existing files are counted and told about once. With
 * --stdout the entries go to standard output, one after the other.
 */
#include "create.h"
#include "nested.h"
#include "written_set.h"

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
    bool skip_existing;     /* existing files are skipped, not failures */
    cli_patterns *patterns; /* shared by the archives of the batch */
    trowel_sink *to_stdout; /* --stdout: every entry goes here */
    size_t existing;        /* entries not written because their file exists */
    bool recursive;         /* --recursive: nested archives' entries too */
    bool dry_run;           /* --dry-run: list what would be written, write nothing */
    cli_patterns *exclude;  /* --exclude: entries left out (shared by the batch) */
    struct clashes *clashes; /* several archives: names two of them hold, or NULL */
    trowel_error failed;    /* the last entry failure printed */
    size_t same_failures;   /* entries since that failed the same way, unprinted */
} extract_job;

/* Several archives into one DIR: the files each wrote, and the names a
 * later archive holds too (not written: the first archive's file stays). */
typedef struct clashes {
    cli_written_set written;
    size_t count;
    char *first, *second, *name; /* the first clash, for the message */
} clashes;

static void free_clashes(clashes *c)
{
    cli_written_free(&c->written);
    free(c->first);
    free(c->second);
    free(c->name);
}

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

/* An entry that fails for the same reason as the one before (a missing
 * page file behind thousands of pictures) is counted, not printed again;
 * -v prints every one. */
static int report_entry_failure(extract_job *j, const char *name)
{
    const trowel_error *e = trowel_ctx_last_error(j->s->ctx);
    if (!j->s->verbose && j->failed.status != TROWEL_OK && e->status == j->failed.status &&
        strcmp(e->message, j->failed.message) == 0) {
        j->same_failures++;
        return cli_status_exit(e->status);
    }
    j->failed = *e;
    return cli_report(j->s, j->path, name);
}

/* The count of failures not printed, in one line. */
static void report_same_failures(extract_job *j)
{
    if (j->same_failures == 0)
        return;
    cli_progress_clear(&j->s->progress);
    trowel_error e = j->failed;
    e.entry[0] = 0;
    e.offset = TROWEL_NO_OFFSET;
    snprintf(e.message, sizeof e.message, "%zu more entries failed the same way (-v shows them)",
             j->same_failures);
    cli_print_error(j->path, &e);
    j->same_failures = 0;
}

/* A file that exists already is counted for the summary (or skipped). */
static int count_existing(extract_job *j, const char *name)
{
    if (trowel_ctx_last_error(j->s->ctx)->status != TROWEL_ERR_EXISTS)
        return cli_report(j->s, j->path, name);
    trowel_ctx_clear_error(j->s->ctx);
    j->existing++;
    return j->skip_existing ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

/* --stdout: the entry's bytes after those before it. */
static int entry_to_stdout(extract_job *j, trowel_archive *a, size_t index, const char *name)
{
    cli_progress_start(&j->s->progress, name);
    if (trowel_archive_read_entry(a, index, j->to_stdout) != TROWEL_OK)
        return cli_report(j->s, j->path, name);
    cli_progress_clear(&j->s->progress);
    return CLI_EXIT_OK;
}

/* Refuses an entry whose name is unsafe, as the output folder does
 * (trowel_outdir_create's words), with the entry's offset. */
static int refuse_unsafe(extract_job *j, trowel_archive *a, size_t index, const char *name,
                         const char *unsafe)
{
    trowel_error e = {.status = TROWEL_ERR_UNSAFE_PATH,
                      .offset = trowel_archive_entry(a, index)->offset};
    snprintf(e.entry, sizeof e.entry, "%s", name);
    snprintf(e.message, sizeof e.message,
             "refusing unsafe entry name '%s' (absolute, drive, '..', or control characters)",
             unsafe);
    cli_progress_clear(&j->s->progress);
    cli_print_error(j->path, &e);
    return CLI_EXIT_FAILURE;
}

/* A nested archive's entry goes under its folder, OUTER.d/, but its own
 * name must be as safe as a top-level one: "/etc/x" or "../x" inside is
 * refused, not re-rooted under OUTER.d/. */
static bool unsafe_nested_name(trowel_archive *a, size_t index, const char *name)
{
    const char *bare = trowel_archive_entry(a, index)->name;
    char rel[4096];
    return name != bare && strcmp(name, bare) != 0 &&
           trowel_path_normalize(bare, rel, sizeof rel) != TROWEL_OK;
}

/* The output folder refused the entry's name: said with the entry's
 * offset in its archive, which the folder does not know. */
static int refuse_name(extract_job *j, trowel_archive *a, size_t index, const char *name)
{
    trowel_error e = *trowel_ctx_last_error(j->s->ctx);
    if (e.offset == TROWEL_NO_OFFSET)
        e.offset = trowel_archive_entry(a, index)->offset;
    if (!e.entry[0])
        snprintf(e.entry, sizeof e.entry, "%s", name);
    cli_progress_clear(&j->s->progress);
    cli_print_error(j->path, &e);
    return cli_status_exit(e.status);
}

/* --dry-run: what extract_entry would do, the entry read (so a damaged
 * one fails as it would) but nothing written; the file is listed. */
static int entry_dry_run(extract_job *j, trowel_archive *a, size_t index, const char *name)
{
    char rel[4096], full[8192];
    if (trowel_path_normalize(name, rel, sizeof rel) != TROWEL_OK)
        return refuse_unsafe(j, a, index, name, name);
    if (j->force && is_the_archive(j, name))
        return refuse_input(j, name);
    struct stat st;
    int n = snprintf(full, sizeof full, "%s/%s", j->dir_path, rel);
    if (!j->force && n > 0 && (size_t)n < sizeof full && lstat(full, &st) == 0) {
        j->existing++;
        return j->skip_existing ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
    }
    trowel_sink *sink;
    if (trowel_sink_open_null(j->s->ctx, &sink) != TROWEL_OK)
        return cli_report(j->s, j->path, name);
    cli_progress_start(&j->s->progress, name);
    trowel_status st_read = trowel_archive_read_entry(a, index, sink);
    trowel_sink_discard(sink);
    if (st_read != TROWEL_OK)
        return cli_report(j->s, j->path, name);
    cli_progress_clear(&j->s->progress);
    print_written(j, name);
    return CLI_EXIT_OK;
}

/* Several archives: true (and counted) when another archive of the batch
 * wrote name already. */
static bool clashes_with_earlier(extract_job *j, const char *name)
{
    char rel[4096];
    if (!j->clashes || trowel_path_normalize(name, rel, sizeof rel) != TROWEL_OK)
        return false;
    const char *by = cli_written_by(&j->clashes->written, rel);
    if (!by || strcmp(by, j->path) == 0)
        return false;
    clashes *c = j->clashes;
    if (c->count++ == 0) {
        c->first = strdup(by);
        c->second = strdup(j->path);
        c->name = strdup(rel);
    }
    return true;
}

static int remember_written(extract_job *j, const char *name)
{
    char rel[4096];
    if (!j->clashes || trowel_path_normalize(name, rel, sizeof rel) != TROWEL_OK ||
        cli_written_add(&j->clashes->written, rel, j->path))
        return CLI_EXIT_OK;
    cli_error("out of memory");
    return CLI_EXIT_FAILURE;
}

static int extract_entry_to(extract_job *j, trowel_archive *a, size_t index, const char *name);

/* Entry index of a (the archive, or one nested in it) written under DIR
 * as name. */
static int extract_entry(extract_job *j, trowel_archive *a, size_t index, const char *name)
{
    if (j->to_stdout)
        return entry_to_stdout(j, a, index, name);
    if (unsafe_nested_name(a, index, name))
        return refuse_unsafe(j, a, index, name, trowel_archive_entry(a, index)->name);
    if (clashes_with_earlier(j, name))
        return CLI_EXIT_FAILURE;
    int rc = j->dry_run ? entry_dry_run(j, a, index, name) : extract_entry_to(j, a, index, name);
    return rc == CLI_EXIT_OK ? remember_written(j, name) : rc;
}

static int extract_entry_to(extract_job *j, trowel_archive *a, size_t index, const char *name)
{
    trowel_sink *sink;
    /* Only --force could replace the archive: without it the sink refuses
     * any file that exists, the archive included. */
    if (j->force && is_the_archive(j, name))
        return refuse_input(j, name);
    if (trowel_outdir_create(j->dir, name, &sink) != TROWEL_OK) {
        if (trowel_ctx_last_error(j->s->ctx)->status == TROWEL_ERR_UNSAFE_PATH)
            return refuse_name(j, a, index, name);
        return count_existing(j, name);
    }
    cli_progress_start(&j->s->progress, name);
    if (trowel_archive_read_entry(a, index, sink) != TROWEL_OK) {
        int rc = report_entry_failure(j, name);
        trowel_sink_discard(sink);
        return rc;
    }
    if (j->force && is_the_archive(j, name)) { /* appeared while we were reading */
        trowel_sink_discard(sink);
        return refuse_input(j, name);
    }
    if (trowel_sink_finish(sink) != TROWEL_OK)
        return count_existing(j, name); /* appeared while we were reading */
    cli_progress_clear(&j->s->progress);
    if (j->s->verbose)
        print_written(j, name);
    return CLI_EXIT_OK;
}

/* prefix + name + suffix, or NULL when memory runs out. */
static char *joined(const char *prefix, const char *name, const char *suffix)
{
    size_t a = strlen(prefix), b = strlen(name), c = strlen(suffix);
    char *s = malloc(a + b + c + 1);
    if (s) {
        memcpy(s, prefix, a);
        memcpy(s + a, name, b);
        memcpy(s + a + b, suffix, c + 1);
    }
    return s;
}

static int extract_tree(extract_job *j, trowel_archive *a, const char *disk_prefix,
                        const char *list_prefix, bool all);

/* --exclude: a PATTERN matching the entry's path (either form) or its
 * last part. */
static bool is_excluded(const extract_job *j, const char *disk, const char *listed)
{
    if (!j->exclude->count)
        return false;
    const char *slash = strrchr(disk, '/');
    return cli_patterns_match(j->exclude, disk) || cli_patterns_match(j->exclude, listed) ||
           (slash && cli_patterns_match(j->exclude, slash + 1));
}

/* --recursive: the entries of entry index of a, when it is an archive,
 * under DISK.d/: all of them when the entry itself was chosen; else those
 * a PATTERN names, and then only their own failures count (a nested
 * archive nobody chose is opened quietly, its damage is not the run's). */
static int extract_inside(extract_job *j, trowel_archive *a, size_t index, const char *disk,
                          const char *listed, bool chosen)
{
    trowel_archive *inner;
    int rc = CLI_EXIT_OK;
    if (chosen)
        rc = cli_nested_open(j->s, j->path, a, index, &inner);
    else
        cli_nested_try_open(j->s, a, index, &inner);
    if (!inner)
        return rc;
    char *disk_prefix = joined(disk, CLI_NESTED_DIR_SUFFIX, "/");
    char *list_prefix = joined(listed, "/", "");
    if (disk_prefix && list_prefix)
        rc = cli_max_exit(rc, extract_tree(j, inner, disk_prefix, list_prefix, chosen));
    else
        rc = CLI_EXIT_FAILURE;
    if (chosen && trowel_archive_damaged(inner))
        rc = CLI_EXIT_FAILURE;
    free(disk_prefix);
    free(list_prefix);
    trowel_archive_close(inner);
    return rc;
}

/* The entries of a chosen by the PATTERNs (all when an enclosing archive
 * entry was chosen, or without PATTERNs). A nested entry is chosen by its
 * path as written (OUTER.str2_pc.d/INNER) or as `list -r` shows it
 * (OUTER.str2_pc/INNER); with --recursive each nested archive's entries
 * follow their archive entry. */
static int extract_tree(extract_job *j, trowel_archive *a, const char *disk_prefix,
                        const char *list_prefix, bool all)
{
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
        const char *name = trowel_archive_entry(a, i)->name;
        char *disk = joined(disk_prefix, name, ""), *listed = joined(list_prefix, name, "");
        if (!disk || !listed) {
            free(disk);
            free(listed);
            return CLI_EXIT_FAILURE;
        }
        /* Both forms are matched every time, so that each PATTERN naming
         * the entry counts as used (no false "no entry matches"). */
        bool by_disk = cli_patterns_match(j->patterns, disk);
        bool by_list = *list_prefix && cli_patterns_match(j->patterns, listed);
        bool chosen = all || by_disk || by_list;
        if (is_excluded(j, disk, listed)) { /* after matching: the PATTERN was used */
            free(disk);
            free(listed);
            continue; /* and, with -r, all that is nested in it */
        }
        if (chosen)
            rc = cli_max_exit(rc, extract_entry(j, a, i, disk));
        if (j->recursive)
            rc = cli_max_exit(rc, extract_inside(j, a, i, disk, listed, chosen));
        free(disk);
        free(listed);
    }
    return rc;
}

static int extract_all(extract_job *j)
{
    return extract_tree(j, j->a, "", "", false);
}

/* ------------------------------------------------------ names, manifest */

/* --dry-run --manifest: listed, and an existing file fails as it would. */
static int manifest_dry_run(const extract_job *j, const char *mpath, bool force)
{
    struct stat st;
    if (!force && strcmp(mpath, "-") != 0 && lstat(mpath, &st) == 0) {
        cli_error("%s: exists already (use --force to overwrite)", mpath);
        return CLI_EXIT_FAILURE;
    }
    (void)j;
    cli_put_safe(stdout, mpath);
    putchar('\n');
    return CLI_EXIT_OK;
}

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
    int rc = cli_archive_manifest(j->s, j->path, j->a, j->recursive, json);
    if (rc != CLI_EXIT_OK || j->dry_run)
        return rc == CLI_EXIT_OK ? manifest_dry_run(j, mpath, force) : rc;
    rc = cli_open_output(j->s, mpath, force, out);
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

typedef struct batch {
    cli_session *s;
    const cli_args *args;
    const trowel_format *fmt;
    const char *dir_path;
    trowel_outdir *dir;     /* opened with the first archive that opens */
    cli_patterns patterns;
    cli_patterns exclude;   /* --exclude */
    const char **exclude_list;
    clashes clashes;        /* several archives: names two of them hold */
    trowel_sink *to_stdout;
    size_t existing;
    bool unnamed;           /* an archive keeps hashes for names */
    bool several;           /* more than one archive */
    bool per_archive;       /* --per-archive: each archive in DIR/NAME/ */
    size_t opened;
} batch;

/* --per-archive: the folder under DIR an archive's entries go to, its file
 * name without the last extension ("PART01" keeps its name and gains .d,
 * so it never names the archive itself beside it). malloc'ed. */
static char *archive_folder(const char *dir, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    bool bare = !dot || dot == base;
    size_t len = strlen(dir) + stem + 4;
    char *out = malloc(len);
    if (out)
        snprintf(out, len, "%s/%.*s%s", dir, (int)stem, base, bare ? ".d" : "");
    return out;
}

/* --per-archive: two archives whose folders would be one (a.vpp_pc and
 * a.str2_pc) are refused before anything is written. */
static int check_per_archive(const cli_session *s, const char *dir, const char *const *paths,
                             size_t files)
{
    for (size_t i = 0; i < files; i++)
        for (size_t k = i + 1; k < files; k++) {
            char *a = archive_folder(dir, paths[i]), *b = archive_folder(dir, paths[k]);
            bool same = a && b && strcmp(a, b) == 0;
            int rc = same ? cli_usage_error(s->verb,
                                            "--per-archive: %s and %s would both go to %s; "
                                            "extract them with -C apart",
                                            paths[i], paths[k], a)
                          : CLI_EXIT_OK;
            free(a);
            free(b);
            if (rc != CLI_EXIT_OK)
                return rc;
        }
    return CLI_EXIT_OK;
}

/* From this many entries in the first archive on, a folder that does not
 * exist yet is staged (TROWEL_OUTDIR_STAGED): it appears whole at the end,
 * and each small file costs fewer system calls. Fewer entries cost little
 * either way, and keep the stronger promise (kill -9 leaves no private
 * folder beside the output: the next run would clear it, but it is there). */
enum { STAGE_FROM_ENTRIES = 64 };

static int open_dir(batch *b, const char *path, const trowel_archive *a)
{
    if (b->dir || b->to_stdout || cli_args_has(b->args, OPT_DRY_RUN))
        return CLI_EXIT_OK;
    unsigned flags = cli_args_has(b->args, OPT_FORCE) ? TROWEL_SINK_OVERWRITE : 0;
    if (trowel_archive_entry_count(a) >= STAGE_FROM_ENTRIES)
        flags |= TROWEL_OUTDIR_STAGED;
    if (trowel_outdir_open(b->s->ctx, path, flags, &b->dir) != TROWEL_OK)
        return cli_report(b->s, NULL, NULL);
    return CLI_EXIT_OK;
}

/* Puts the output folder in place (a staged one appears now) and closes it. */
static int finish_dir(batch *b)
{
    int rc = CLI_EXIT_OK;
    if (b->dir && trowel_outdir_finish(b->dir) != TROWEL_OK)
        rc = cli_report(b->s, NULL, NULL);
    trowel_outdir_close(b->dir);
    b->dir = NULL;
    return rc;
}

static int extract_archive(batch *b, extract_job *j)
{
    const cli_args *args = b->args;
    int rc = cli_apply_names(j->s, j->path, j->a, cli_args_last(args, OPT_NAMES));
    if (rc == CLI_EXIT_OK)
        rc = cli_apply_read_options(j->s, j->path, j->a, args);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *mpath = cli_args_last(args, OPT_MANIFEST);
    trowel_sink *manifest;
    char *json;
    rc = open_manifest(j, mpath, j->force, &manifest, &json);
    if (rc == CLI_EXIT_OK)
        rc = open_dir(b, j->dir_path, j->a);
    j->dir = b->dir;
    if (j->dir)
        trowel_outdir_begin_archive(j->dir); /* a name clash with the last one is not "in the archive" */
    if (rc == CLI_EXIT_OK)
        rc = extract_all(j);
    report_same_failures(j);
    /* A damaged file gives what can be read, and still fails. */
    if (rc == CLI_EXIT_OK && trowel_archive_damaged(j->a))
        rc = CLI_EXIT_FAILURE;
    if (manifest) {
        /* Written if extraction got going, even past failed entries: it
         * describes the archive, not what was extracted. */
        int r = cli_close_output(j->s, manifest, b->dir || j->dry_run ? CLI_EXIT_OK : rc, mpath);
        rc = r > rc ? r : rc;
    }
    free(json);
    return rc;
}

static int extract_one(batch *b, const char *path)
{
    extract_job j = {.s = b->s, .path = cli_display_name(path), .dir_path = b->dir_path,
                     .force = cli_args_has(b->args, OPT_FORCE),
                     .skip_existing = cli_args_has(b->args, OPT_SKIP_EXISTING),
                     .patterns = &b->patterns, .to_stdout = b->to_stdout,
                     .recursive = cli_args_has(b->args, OPT_RECURSIVE),
                     .dry_run = cli_args_has(b->args, OPT_DRY_RUN), .exclude = &b->exclude,
                     .clashes = b->several ? &b->clashes : NULL};
    if (cli_is_stdin(path) || stat(path, &j.archive_st) != 0)
        memset(&j.archive_st, 0, sizeof j.archive_st);
    cli_opened o;
    int rc = cli_open_archive_in_order(b->s, path, b->fmt, &o); /* entry after entry */
    if (rc != CLI_EXIT_OK)
        return rc;
    b->opened++;
    b->unnamed = b->unnamed || (cli_has_unnamed_entries(o.a) && !cli_args_has(b->args, OPT_NAMES));
    j.a = o.a;
    char *own = NULL;
    if (b->per_archive) { /* a folder of its own, opened and closed with it */
        own = archive_folder(b->dir_path, path);
        if (!own) {
            cli_close_archive(&o);
            cli_error("out of memory");
            return CLI_EXIT_FAILURE;
        }
        j.dir_path = own;
        j.clashes = NULL;
    }
    rc = extract_archive(b, &j);
    b->existing += j.existing;
    if (b->per_archive)
        rc = cli_max_exit(rc, finish_dir(b));
    free(own);
    cli_close_archive(&o);
    return rc;
}

/* Several archives holding one name: one line for all of them. */
static int report_clashes(const batch *b)
{
    const clashes *c = &b->clashes;
    if (!c->count)
        return CLI_EXIT_OK;
    cli_progress_clear(&b->s->progress);
    fputs(CLI_PROGRAM ": ", stderr);
    cli_put_safe(stderr, c->first ? c->first : "?");
    fputs(" and ", stderr);
    cli_put_safe(stderr, c->second ? c->second : "?");
    fputs(" both hold ", stderr);
    cli_put_safe(stderr, c->name ? c->name : "?");
    if (c->count > 1)
        fprintf(stderr, " (and %zu more name%s held by two archives)", c->count - 1,
                c->count == 2 ? "" : "s");
    fputs(": the first archive's file is kept; extract them into separate folders (-C)\n",
          stderr);
    return CLI_EXIT_FAILURE;
}

/* One line for every file that was not replaced, instead of one each. */
static int report_existing(const batch *b)
{
    if (!b->existing)
        return CLI_EXIT_OK;
    bool skip = cli_args_has(b->args, OPT_SKIP_EXISTING);
    if (skip && !b->s->verbose)
        return CLI_EXIT_OK;
    cli_progress_clear(&b->s->progress);
    fputs(CLI_PROGRAM ": ", stderr);
    cli_put_safe(stderr, b->dir_path);
    bool one = b->existing == 1;
    if (skip) {
        fprintf(stderr, ": %zu existing file%s skipped\n", b->existing, one ? "" : "s");
        return CLI_EXIT_OK;
    }
    fprintf(stderr,
            ": %zu file%s exist%s already, kept (use --force to overwrite or --skip-existing)\n",
            b->existing, one ? "" : "s", one ? "s" : "");
    return CLI_EXIT_FAILURE;
}

static int check_combinations(const cli_session *s, const cli_args *args, size_t files)
{
    bool to_stdout = cli_args_has(args, OPT_STDOUT);
    if (cli_args_has(args, OPT_FORCE) && cli_args_has(args, OPT_SKIP_EXISTING))
        return cli_usage_error(s->verb, "--force and --skip-existing exclude each other");
    if (to_stdout && cli_args_has(args, OPT_DIRECTORY))
        return cli_usage_error(s->verb, "--stdout writes no files: -C does not apply");
    if (to_stdout && cli_args_has(args, OPT_MANIFEST))
        return cli_usage_error(s->verb, "--stdout writes no files: --manifest does not apply");
    if (to_stdout && cli_args_has(args, OPT_SKIP_EXISTING))
        return cli_usage_error(s->verb, "--stdout writes no files: --skip-existing does not apply");
    if (to_stdout && cli_args_has(args, OPT_DRY_RUN))
        return cli_usage_error(s->verb, "--stdout writes no files: --dry-run does not apply");
    if (files > 1 && cli_args_has(args, OPT_MANIFEST))
        return cli_usage_error(s->verb, "--manifest describes one ARCHIVE, not %zu", files);
    if (to_stdout && cli_args_has(args, OPT_PER_ARCHIVE))
        return cli_usage_error(s->verb, "--stdout writes no files: --per-archive does not apply");
    return cli_batch_check_stdin(s, args->operands, files);
}

static int run_batch(batch *b, size_t files)
{
    int rc = CLI_EXIT_OK;
    b->several = files > 1;
    if (cli_args_has(b->args, OPT_STDOUT) &&
        (rc = cli_open_output(b->s, NULL, cli_args_has(b->args, OPT_FORCE), &b->to_stdout)) !=
            CLI_EXIT_OK)
        return rc;
    for (size_t i = 0; i < files; i++)
        rc = cli_max_exit(rc, extract_one(b, b->args->operands[i]));
    rc = cli_max_exit(rc, finish_dir(b));
    if (b->to_stdout)
        rc = cli_max_exit(rc, cli_close_output(b->s, b->to_stdout, CLI_EXIT_OK, NULL));
    rc = cli_max_exit(rc, report_clashes(b));
    rc = cli_max_exit(rc, report_existing(b));
    if (b->opened) /* else nothing could match */
        rc = cli_max_exit(rc, cli_patterns_report_unused(
                                  &b->patterns, files == 1 ? b->args->operands[0] : NULL,
                                  b->unnamed));
    return rc;
}

/* The PATTERNs: the operands after the archives, then the lines of
 * --files-from FILE; and the --exclude PATTERNs. */
static int init_patterns(batch *b, size_t files, char **text, const char ***list)
{
    const cli_args *args = b->args;
    size_t from_file = 0, nexclude = 0;
    const char *list_path = cli_args_last(args, OPT_FILES_FROM);
    int rc = list_path ? cli_read_lines(b->s, list_path, text, list, &from_file) : CLI_EXIT_OK;
    if (rc == CLI_EXIT_OK && list_path && from_file == 0)
        return cli_usage_error(b->s->verb, "--files-from %s names no entry", list_path);
    size_t given = args->operand_count - files;
    const char **all = rc == CLI_EXIT_OK ? realloc(*list, (from_file + given + 1) * sizeof *all)
                                         : NULL;
    if (rc == CLI_EXIT_OK && !all) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    if (rc != CLI_EXIT_OK)
        return rc;
    *list = all;
    memmove(all + given, all, from_file * sizeof *all);
    for (size_t i = 0; i < given; i++)
        all[i] = args->operands[files + i];
    rc = cli_patterns_init(&b->patterns, all, given + from_file);
    const char **exclude = cli_args_values(args, OPT_EXCLUDE, &nexclude);
    /* The PATTERNs of --exclude live in args; the array is kept after
     * the list so both go when the batch ends. */
    if (rc == CLI_EXIT_OK && exclude)
        rc = cli_patterns_init(&b->exclude, exclude, nexclude);
    b->exclude_list = exclude;
    return exclude ? rc : CLI_EXIT_FAILURE;
}

static int run_extract(const cli_args *args, cli_session *s)
{
    batch b = {.s = s, .args = args};
    int rc = cli_need_operands(s, args, 1, 0, "ARCHIVE operand");
    if (rc == CLI_EXIT_OK)
        rc = cli_forced_format(s, args, &b.fmt);
    size_t files = cli_batch_archive_count(args);
    if (rc == CLI_EXIT_OK)
        rc = check_combinations(s, args, files);
    char *list_text = NULL;
    const char **list = NULL;
    if (rc == CLI_EXIT_OK)
        rc = init_patterns(&b, files, &list_text, &list);
    if (rc != CLI_EXIT_OK) {
        free(list);
        free(list_text);
        return rc;
    }
    const char *dir = cli_args_last(args, OPT_DIRECTORY);
    b.dir_path = dir ? dir : ".";
    b.per_archive = cli_args_has(args, OPT_PER_ARCHIVE);
    if (b.per_archive && (rc = check_per_archive(s, b.dir_path, args->operands, files)) != 0) {
        cli_patterns_free(&b.patterns);
        cli_patterns_free(&b.exclude);
        free(b.exclude_list);
        free(list);
        free(list_text);
        return rc;
    }
    cli_session_progress(s);
    rc = run_batch(&b, files);
    trowel_outdir_close(b.dir);
    cli_patterns_free(&b.patterns);
    cli_patterns_free(&b.exclude);
    free(b.exclude_list);
    free_clashes(&b.clashes);
    free(list);
    free(list_text);
    return rc;
}

static void extract_help(FILE *f)
{
    fputs("\nReading options (-O KEY=VALUE), by format:\n", f);
    cli_print_all_options(f, CLI_READ_OPTIONS);
}

static const cli_option extract_options[] = {
    {OPT_DIRECTORY, 'C', "directory", "DIR", "write under DIR (default: the current folder)"},
    {OPT_FORCE, 'f', "force", NULL,
     "overwrite existing files (with --stdout: write binary data to a terminal)"},
    {OPT_SKIP_EXISTING, 'k', "skip-existing", NULL, "keep existing files and go on"},
    {OPT_STDOUT, 0, "stdout", NULL, "write the entries to standard output, one after another"},
    {OPT_MANIFEST, 0, "manifest", "M.json", "also write what 'create --manifest' needs"},
    {OPT_NAMES, 0, "names", "LIST", "recover entry names from LIST (formats that store hashes)"},
    {OPT_RAW, 0, "raw", NULL, "write entries as stored, not converted (same as -O raw=1)"},
    {OPT_OPTION, 'O', "option", "KEY=VALUE", "a reading option of the format (repeatable)"},
    {OPT_FORMAT, 't', "format", "FORMAT", "read as FORMAT instead of detecting it"},
    {OPT_RECURSIVE, 'r', "recursive", NULL, "also extract the entries of entries that are archives"},
    {OPT_EXCLUDE, 0, "exclude", "PATTERN", "leave out entries matching PATTERN (repeatable)"},
    {OPT_FILES_FROM, 0, "files-from", "FILE", "read PATTERNs from FILE, one a line ('-': stdin)"},
    {OPT_DRY_RUN, 'n', "dry-run", NULL, "list the files that would be written, write nothing"},
    {OPT_PER_ARCHIVE, 0, "per-archive", NULL,
     "each ARCHIVE into its own folder DIR/NAME (its name without the extension)"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_extract = {
    .name = "extract",
    .synopsis = "extract ARCHIVE... [-C DIR] [--force|--skip-existing] [--stdout] "
                "[--manifest M.json] [--names LIST] [--raw] [-r] [-O KEY=VALUE]... "
                "[--exclude PATTERN]... [--files-from FILE] [-n] [--per-archive] [PATTERN...]",
    .summary = "write the entries of archives to files (or standard output)",
    .description =
        "Write every entry of each ARCHIVE ('-': standard input), or those whose\n"
        "name matches a shell PATTERN ('*', '?', '[...]'), under DIR with its\n"
        "archive name. Unsafe names (absolute, '..', drive letters) are refused,\n"
        "and an entry that fails leaves no file behind. Existing files are kept:\n"
        "one line says how many, and the exit status is 1, unless --force\n"
        "replaces them or --skip-existing skips them (-v counts those). With\n"
        "--stdout, the entries are written to standard output one after another\n"
        "(binary data is refused on a terminal unless --force). Failing entries\n"
        "are reported and the others still extracted. With -r, an entry that is\n"
        "an archive itself (a .str2_pc in a .vpp_pc) is written and its entries\n"
        "go under ENTRY.d/ beside it (DLC.str2_pc.d/x.layer_pc), and so on down;\n"
        "PATTERNs match a nested entry's path as written (DLC.str2_pc.d/x.layer_pc)\n"
        "or as list -r shows it (DLC.str2_pc/x.layer_pc), and an archive entry\n"
        "they choose brings all of its own. With --manifest, -r also records\n"
        "each nested archive's manifest (under \"nested\") for 'create -r'.\n"
        "--exclude PATTERN leaves out entries whose path (either form) or last\n"
        "part matches, and with -r what is nested in them; --files-from FILE\n"
        "adds PATTERNs; -n lists the files that would be written (each entry is\n"
        "still read, so the exit status is the real run's) and writes nothing.\n"
        "An entry a format cannot convert but keeps whole (a scenes.image scene\n"
        "whose strings lie outside the pool: written as stored, .bvcd) is one\n"
        "warning, not a failure. Several ARCHIVEs share DIR, and a name two of\n"
        "them hold is told as a clash; --per-archive puts each into a folder of\n"
        "its own, DIR/NAME (its file name without the extension; PART01.d for a\n"
        "name without one).\n"
        "\n" CLI_BATCH_RULE_HELP,
    .options = extract_options,
    .more_help = extract_help,
    .run = run_extract,
};
