/*
 * create -r: the inverse of 'extract -r'. extract -r writes an archive
 * entry X and the entries of X under X.d/; create -r rebuilds X from X.d/
 * and stores the result under X, deepest archives first. The order and the
 * layout of each rebuilt archive come from its manifest: the record that
 * 'extract -r --manifest' keeps under "nested" in the outer manifest, else
 * the manifest of the file X that extract -r wrote beside the folder.
 * Files added to X.d/ go after the ones the manifest lists, in name order.
 *
 * A rebuilt packfile (.str2_pc) is described by a container of the ASM
 * stored beside it (RF Guerrilla): that ASM is updated as 'create -O
 * asm=FILE' does, and the outer archive stores the updated copy. The
 * rebuilt files live in a temporary folder until the outer archive is
 * written; what changed in each ASM is told at the end.
 */
#include "create.h"
#include "nested.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

struct cli_rebuilds {
    char *tmp;          /* the temporary folder, made on first use */
    unsigned serial;    /* one sub-folder per rebuilt file: tmp/N/NAME */
    source_list asms;   /* each ASM updated: name = the file on disk, path = its latest copy */
    source_list made;   /* what to remove at the end (files, then folders) */
};

/* ------------------------------------------------------------ temporary */

static cli_rebuilds *rebuilds_of(create_job *j)
{
    if (!j->rebuilds)
        j->rebuilds = calloc(1, sizeof *j->rebuilds);
    return j->rebuilds;
}

/* A new path tmp/N/base for a rebuilt file (the base name matters: the ASM
 * container is found by the file's name). */
static char *temp_path(create_job *j, const char *base)
{
    cli_rebuilds *r = rebuilds_of(j);
    if (!r)
        return NULL;
    if (!r->tmp) {
        const char *dir = getenv("TMPDIR");
        size_t len = strlen(dir && *dir ? dir : "/tmp") + 32;
        r->tmp = malloc(len);
        if (!r->tmp)
            return NULL;
        snprintf(r->tmp, len, "%s/trowel-create.XXXXXX", dir && *dir ? dir : "/tmp");
        if (!mkdtemp(r->tmp)) {
            cli_error("%s: cannot make a temporary folder: %s", r->tmp, strerror(errno));
            free(r->tmp);
            r->tmp = NULL;
            return NULL;
        }
    }
    size_t len = strlen(r->tmp) + strlen(base) + 24;
    char *folder = malloc(len), *path = malloc(len);
    if (folder && path) {
        snprintf(folder, len, "%s/%u", r->tmp, r->serial++);
        snprintf(path, len, "%s/%s", folder, base);
    }
    if (!folder || !path || mkdir(folder, 0700) != 0 ||
        cli_source_add(&r->made, strdup(path), folder) != CLI_EXIT_OK) {
        cli_error("%s: cannot make a temporary folder", r->tmp);
        free(path);
        return NULL;
    }
    return path;
}

void cli_rebuilds_free(cli_rebuilds *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->made.count; i++) {
        unlink(r->made.items[i].name);
        rmdir(r->made.items[i].path);
    }
    if (r->tmp)
        rmdir(r->tmp);
    free(r->tmp);
    cli_sources_free(&r->asms);
    cli_sources_free(&r->made);
    free(r);
}

/* ------------------------------------------------------------- helpers */

static const char *base_name(const char *name)
{
    const char *slash = strrchr(name, '/');
    return slash ? slash + 1 : name;
}

static size_t dir_len(const char *name)
{
    const char *slash = strrchr(name, '/');
    return slash ? (size_t)(slash - name) : 0;
}

static long find_source(const source_list *l, const char *name)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* The manifest of the archive file at path, or NULL (error left in ctx). */
static char *manifest_of_file(cli_session *s, const char *path)
{
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    char *text = NULL;
    if (trowel_input_open_file(s->ctx, path, &in) == TROWEL_OK &&
        trowel_archive_open(s->ctx, in, NULL, &a) == TROWEL_OK)
        trowel_archive_manifest(a, &text);
    trowel_archive_close(a);
    trowel_input_close(in);
    char *copy = text ? strdup(text) : NULL;
    trowel_free(text);
    return copy;
}

/* ---------------------------------------------------------------- order */

typedef struct ranked {
    owned_source src;
    size_t rank; /* position in the manifest; SIZE_MAX: not listed */
} ranked;

static int by_rank(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return strcmp(a->src.name, b->src.name);
}

/* The manifest's entries first, in its order; files it does not list
 * after them, in name order. */
static int order_by_manifest(source_list *l, json_object *manifest)
{
    json_object *entries = NULL;
    json_object_object_get_ex(manifest, "entries", &entries);
    size_t n = json_object_is_type(entries, json_type_array) ? json_object_array_length(entries)
                                                             : 0;
    ranked *r = calloc(l->count ? l->count : 1, sizeof *r);
    if (!r) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    for (size_t i = 0; i < l->count; i++) {
        r[i] = (ranked){l->items[i], SIZE_MAX};
        for (size_t k = 0; k < n && r[i].rank == SIZE_MAX; k++) {
            json_object *name;
            json_object *e = json_object_array_get_idx(entries, k);
            if (json_object_object_get_ex(e, "name", &name) &&
                strcmp(json_object_get_string(name), l->items[i].name) == 0)
                r[i].rank = k;
        }
    }
    qsort(r, l->count, sizeof *r, by_rank);
    for (size_t i = 0; i < l->count; i++)
        l->items[i] = r[i].src;
    free(r);
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ ASM */

/* True when creating f takes -O asm= (a packfile whose ASM it updates). */
static bool takes_asm(const trowel_format *f)
{
    const trowel_option_info *o;
    for (size_t i = 0; f && (o = trowel_format_option_at(f, i)) != NULL; i++)
        if (cli_option_is(o, CLI_CREATE_OPTIONS) && strcmp(o->key, "asm") == 0)
            return true;
    return false;
}

/* The source beside name (same folder) that is an ASM with a container
 * named after name's stem: its index, or -1. */
static long sibling_asm(create_job *j, const char *name)
{
    const trowel_format *asm_fmt = trowel_format_find("asm");
    if (!asm_fmt)
        return -1;
    const char *base = base_name(name), *dot = strrchr(base, '.');
    size_t stem = dot ? (size_t)(dot - base) : strlen(base);
    for (size_t i = 0; i < j->sources.count; i++) {
        const owned_source *c = &j->sources.items[i];
        const char *cdot = strrchr(c->name, '.'), *list = trowel_format_extensions(asm_fmt), *w;
        size_t len;
        bool is_asm = false;
        while (cdot && !is_asm && cli_next_word(&list, &w, &len))
            is_asm = strlen(cdot) == len && strncasecmp(cdot, w, len) == 0;
        if (!is_asm || dir_len(c->name) != dir_len(name) ||
            strncmp(c->name, name, dir_len(name)) != 0)
            continue;
        trowel_input *in = NULL;
        trowel_archive *a = NULL;
        bool found = false;
        if (trowel_input_open_file(j->s->ctx, c->path, &in) == TROWEL_OK &&
            trowel_archive_open(j->s->ctx, in, asm_fmt, &a) == TROWEL_OK)
            for (size_t k = 0; !found && k < trowel_archive_entry_count(a); k++) {
                const char *cname = trowel_archive_entry(a, k)->name;
                found = strlen(cname) == stem && strncasecmp(cname, base, stem) == 0;
            }
        trowel_ctx_clear_error(j->s->ctx);
        trowel_archive_close(a);
        trowel_input_close(in);
        if (found)
            return (long)i;
    }
    return -1;
}

/* The ASM source asm_index now reads from new_path; the file on disk it
 * started from is remembered for the report. */
static int asm_updated(create_job *j, size_t asm_index, char *new_path)
{
    cli_rebuilds *r = j->rebuilds;
    owned_source *a = &j->sources.items[asm_index];
    for (size_t i = 0; i < r->asms.count; i++)
        if (strcmp(r->asms.items[i].path, a->path) == 0) {
            free(r->asms.items[i].path);
            r->asms.items[i].path = strdup(new_path);
            free(a->path);
            a->path = new_path;
            return r->asms.items[i].path ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
        }
    int rc = cli_source_add(&r->asms, strdup(a->path), strdup(new_path));
    free(a->path);
    a->path = new_path;
    return rc;
}

/* ---------------------------------------------------------------- build */

typedef struct nested_build {
    const owned_source *folder; /* X (as stored) and X.d/ on disk */
    const trowel_format *fmt;
    const char *manifest;
    create_job *sub;            /* X's own files */
    long asm_index;             /* the sibling ASM to update, or -1 */
} nested_build;

static int finish_build(create_job *j, const nested_build *b, trowel_status st,
                        trowel_sink *out, trowel_sink *asm_out)
{
    cli_session *s = j->s;
    if (st == TROWEL_OK) {
        trowel_sink *both[2] = {out, asm_out};
        st = trowel_sinks_finish_all(both, asm_out ? 2 : 1);
    } else {
        trowel_sink_discard(out);
        trowel_sink_discard(asm_out);
    }
    return st == TROWEL_OK ? CLI_EXIT_OK : cli_report(s, b->folder->path, NULL);
}

/* X rebuilt into the temporary file out_path (with its ASM into a new
 * temporary copy when there is one). */
static int build_nested(create_job *j, const nested_build *b, const char *out_path)
{
    cli_session *s = j->s;
    size_t n = b->sub->sources.count;
    trowel_source *src = calloc(n ? n : 1, sizeof *src);
    if (!src) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    for (size_t i = 0; i < n; i++) {
        src[i] = (trowel_source){b->sub->sources.items[i].name, b->sub->sources.items[i].path};
        if (s->verbose) {
            cli_put_safe(stdout, b->sub->shown);
            cli_put_safe(stdout, src[i].name);
            putchar('\n');
        }
    }
    char *asm_new = b->asm_index >= 0
                        ? temp_path(j, base_name(j->sources.items[b->asm_index].name))
                        : NULL;
    char option[4200] = "";
    const char *opts[1] = {option};
    if (asm_new)
        snprintf(option, sizeof option, "asm=%s", j->sources.items[b->asm_index].path);
    trowel_create_params p = {.sources = src, .source_count = n, .options = opts,
                              .option_count = asm_new ? 1 : 0, .manifest_json = b->manifest,
                              .base_dir = b->folder->path};
    trowel_sink *out = NULL, *asm_out = NULL;
    trowel_input *asm_in = NULL;
    trowel_status st = trowel_sink_open_file(s->ctx, out_path, TROWEL_SINK_OVERWRITE, &out);
    if (st == TROWEL_OK && asm_new &&
        (st = trowel_input_open_file(s->ctx, j->sources.items[b->asm_index].path, &asm_in)) ==
            TROWEL_OK)
        st = trowel_sink_open_file(s->ctx, asm_new, TROWEL_SINK_OVERWRITE, &asm_out);
    const char *shown = s->file;
    s->file = b->folder->name;
    if (st == TROWEL_OK && asm_out)
        st = trowel_create_with_companion(s->ctx, b->fmt, &p, asm_in, asm_out, out);
    else if (st == TROWEL_OK)
        st = trowel_create(s->ctx, b->fmt, &p, out);
    s->file = shown;
    int rc = finish_build(j, b, st, out, asm_out);
    trowel_input_close(asm_in);
    free(src);
    if (rc == CLI_EXIT_OK && asm_new)
        return asm_updated(j, (size_t)b->asm_index, asm_new);
    free(asm_new);
    return rc;
}

/* X's manifest: the record under "nested" in the manifest of the level
 * above, else the manifest of the file X extract -r wrote. */
static char *nested_manifest(create_job *j, const owned_source *folder, json_object *level)
{
    json_object *nested, *record;
    if (level && json_object_object_get_ex(level, "nested", &nested) &&
        json_object_object_get_ex(nested, folder->name, &record)) {
        const char *t = json_object_to_json_string_ext(record, JSON_C_TO_STRING_PLAIN |
                                                                   JSON_C_TO_STRING_NOSLASHESCAPE);
        return t ? strdup(t) : NULL;
    }
    long k = find_source(&j->sources, folder->name);
    char *m = k >= 0 ? manifest_of_file(j->s, j->sources.items[k].path) : NULL;
    if (!m) {
        trowel_error e = {.status = TROWEL_ERR_USAGE, .offset = TROWEL_NO_OFFSET};
        snprintf(e.message, sizeof e.message,
                 "cannot tell how to rebuild '%s': %s, and no manifest from "
                 "'extract -r --manifest' describes it",
                 folder->name, k >= 0 ? "it does not open as an archive with a manifest"
                                      : "it is not beside its folder");
        cli_print_error(folder->path, &e);
    }
    return m;
}

static int rebuild_one(create_job *j, const owned_source *folder, json_object *level)
{
    char *manifest = nested_manifest(j, folder, level);
    if (!manifest)
        return CLI_EXIT_USAGE;
    json_object *mobj = json_tokener_parse(manifest);
    const char *above = j->shown ? j->shown : "";
    size_t len = strlen(above) + strlen(folder->name) + 2;
    char *shown = malloc(len);
    if (shown)
        snprintf(shown, len, "%s%s/", above, folder->name);
    create_job sub = {.s = j->s, .dir = folder->path, .recursive = true,
                      .exclude = j->exclude, .rebuilds = rebuilds_of(j), .shown = shown};
    nested_build b = {.folder = folder, .manifest = manifest, .sub = &sub};
    int rc = sub.rebuilds && shown ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
    if (rc == CLI_EXIT_OK && trowel_manifest_format(j->s->ctx, manifest, &b.fmt) != TROWEL_OK)
        rc = cli_report(j->s, folder->path, NULL);
    if (rc == CLI_EXIT_OK)
        rc = cli_create_walk(&sub, folder->path, "");
    if (rc == CLI_EXIT_OK) /* first: an X missing beside X.d/ is added */
        rc = cli_create_rebuild_nested(&sub, mobj);
    if (rc == CLI_EXIT_OK)
        rc = order_by_manifest(&sub.sources, mobj);
    b.asm_index = rc == CLI_EXIT_OK && takes_asm(b.fmt) ? sibling_asm(j, folder->name) : -1;
    char *out = rc == CLI_EXIT_OK ? temp_path(j, base_name(folder->name)) : NULL;
    if (rc == CLI_EXIT_OK && !out)
        rc = CLI_EXIT_FAILURE;
    if (rc == CLI_EXIT_OK)
        rc = build_nested(j, &b, out);
    long k = find_source(&j->sources, folder->name);
    if (rc == CLI_EXIT_OK && k >= 0) {
        free(j->sources.items[k].path);
        j->sources.items[k].path = out;
        out = NULL;
    } else if (rc == CLI_EXIT_OK) {
        rc = cli_source_add(&j->sources, strdup(folder->name), out);
        out = NULL;
    }
    free(out);
    cli_sources_free(&sub.sources);
    cli_sources_free(&sub.nested);
    json_object_put(mobj);
    free(manifest);
    free(shown);
    return rc;
}

int cli_create_rebuild_nested(create_job *j, json_object *level_manifest)
{
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; rc == CLI_EXIT_OK && i < j->nested.count; i++)
        rc = rebuild_one(j, &j->nested.items[i], level_manifest);
    return rc;
}

/* --------------------------------------------------------------- report */

void cli_rebuilds_report(cli_session *s, const cli_rebuilds *r, const char *out)
{
    for (size_t i = 0; r && i < r->asms.count; i++) {
        json_object *before = cli_asm_snapshot(s, r->asms.items[i].name);
        json_object *after = cli_asm_snapshot(s, r->asms.items[i].path);
        cli_asm_report_change(s, r->asms.items[i].name, out, before, after, true);
        json_object_put(before);
        json_object_put(after);
    }
}
