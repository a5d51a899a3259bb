/*
 * The public writer (trowel_writer_*, trowel.h): a new file built from
 * entries handed over one at a time, and trowel_create on top of it.
 *
 * Formats build whole files (their `.create` gets every source at once),
 * so the writer keeps what it is given until finish: the bytes of all
 * entries, front to back, in one spill (spill.h: counted memory, then an
 * unnamed temporary file), each entry an offset and a size in it. Finish
 * then calls the format's create with one trowel_source per entry, whose
 * path is the entry's name, and serves those names from the spill through
 * an io hook layered over the caller's for the length of the build: the
 * formats read sources through trowel_source_open (and a costume's
 * pictures through trowel_open_related), so none of them changes to be fed
 * from memory. Names it does not hold go on to the caller's hooks.
 *
 * trowel_create hands its sources over by path (trowel_writer_add_path):
 * the build reads each where and when the format asks, as before the
 * writer existed, so a create of many large files neither copies them nor
 * holds them all open.
 */
#include "module.h"
#include "spill.h"
#include "writer.h"

#include <json-c/json.h>
#include <string.h>

/* Longest entry name kept (trowel_path_normalize's limit as archive.c
 * uses it). */
#define WRITER_NAME_MAX 4096

typedef struct writer_entry {
    char *name;   /* as the caller gave it */
    char *key;    /* normalised, for duplicates (byte entries only) */
    char *path;   /* path entries: where the build reads it; NULL: in the spill */
    uint64_t off; /* byte entries: where they start in the spill */
    uint64_t size;
    bool dropped; /* replaced by a later entry of that name (keep_last) */
    json_object *keys; /* its props, for its manifest entry; NULL: none */
} writer_entry;

enum writer_state { WRITER_READY, WRITER_IN_ENTRY };

struct trowel_writer {
    trowel_ctx *ctx;
    const trowel_format *fmt;
    trowel_sink *out;
    char **options;
    size_t option_count;
    const char *manifest_json; /* manifest_owned, or trowel_create's caller's text */
    char *manifest_owned;
    char *base_dir;
    trowel_input *companion_in;
    trowel_sink *companion_out;
    bool keep_last;
    writer_entry *entries;
    size_t count, cap;
    trowel_spill *spill; /* every byte entry's bytes, in order */
    trowel_input *spilled; /* the spill read back, during finish */
    enum writer_state state;
    uint64_t announced;  /* the open entry's size, or TROWEL_SIZE_UNKNOWN */
    trowel_status broken; /* a failed write: every later call fails with it */
    trowel_io_hooks caller_io; /* the caller's hooks, put back after the build */
    void *caller_user;
};

/* ---------------------------------------------------------------- opening */

static char *copy_string(trowel_ctx *ctx, const char *s)
{
    return s ? trowel_mem_strdup(ctx, s) : NULL;
}

trowel_status trowel_writer_open(trowel_ctx *ctx, const trowel_format *f,
                                 const char *const *options, size_t option_count,
                                 const char *manifest_json, trowel_sink *out, trowel_writer **w)
{
    *w = NULL;
    trowel_ctx_clear_error(ctx);
    trowel_set_entry(ctx, NULL);
    if (!f->create)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "trowel cannot create %s files yet", f->id);
    trowel_writer *nw = trowel_mem_calloc(ctx, 1, sizeof *nw);
    if (!nw)
        return ctx->last_error.status;
    nw->ctx = ctx;
    nw->fmt = f;
    nw->out = out;
    nw->options = trowel_mem_calloc(ctx, option_count ? option_count : 1, sizeof *nw->options);
    bool ok = nw->options != NULL;
    for (size_t i = 0; ok && i < option_count; i++) {
        ok = (nw->options[i] = copy_string(ctx, options[i])) != NULL;
        nw->option_count = i + 1;
        nw->keep_last = nw->keep_last || strcmp(options[i], TROWEL_CREATE_KEEP_LAST) == 0;
    }
    if (ok && manifest_json)
        ok = (nw->manifest_json = nw->manifest_owned = copy_string(ctx, manifest_json)) != NULL;
    if (!ok) {
        trowel_status s = ctx->last_error.status;
        trowel_writer_abort(nw);
        return s;
    }
    *w = nw;
    return TROWEL_OK;
}

trowel_status trowel_writer_set_companion(trowel_writer *w, trowel_input *companion_in,
                                          trowel_sink *companion_out)
{
    if (!companion_in || !companion_out)
        return trowel_fail(w->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "a companion needs both its input and its output");
    if (w->count > 0 || w->state != WRITER_READY)
        return trowel_fail(w->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "the companion is set before the first entry");
    w->companion_in = companion_in;
    w->companion_out = companion_out;
    return TROWEL_OK;
}

trowel_status trowel_writer_set_base_dir(trowel_writer *w, const char *base_dir)
{
    trowel_mem_free(w->ctx, w->base_dir);
    w->base_dir = NULL;
    if (base_dir && !(w->base_dir = copy_string(w->ctx, base_dir)))
        return w->ctx->last_error.status;
    return TROWEL_OK;
}

/* ---------------------------------------------------------------- entries */

/* Room for one more entry. */
static trowel_status grow_entries(trowel_writer *w)
{
    if (w->count < w->cap)
        return TROWEL_OK;
    size_t cap = w->cap ? w->cap * 2 : 16;
    writer_entry *grown = trowel_mem_realloc(w->ctx, w->entries, cap * sizeof *grown);
    if (!grown)
        return w->ctx->last_error.status;
    w->entries = grown;
    w->cap = cap;
    return TROWEL_OK;
}

static void free_entry(trowel_ctx *ctx, writer_entry *e)
{
    trowel_mem_free(ctx, e->name);
    trowel_mem_free(ctx, e->key);
    trowel_mem_free(ctx, e->path);
    json_object_put(e->keys);
}

trowel_status trowel_writer_add_path(trowel_writer *w, const char *name, const char *path)
{
    if (w->broken != TROWEL_OK)
        return w->broken;
    if (w->state != WRITER_READY)
        return trowel_fail(w->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "an entry is still open");
    trowel_status s = grow_entries(w);
    if (s != TROWEL_OK)
        return s;
    writer_entry e = {.name = copy_string(w->ctx, name)};
    if (e.name)
        e.path = copy_string(w->ctx, path);
    if (!e.path) {
        free_entry(w->ctx, &e);
        return w->ctx->last_error.status;
    }
    w->entries[w->count++] = e;
    return TROWEL_OK;
}

/* The byte entry already stored under key (its index), or w->count. */
static size_t entry_with_key(const trowel_writer *w, const char *key)
{
    for (size_t i = 0; i < w->count; i++)
        if (w->entries[i].key && !w->entries[i].dropped && strcmp(w->entries[i].key, key) == 0)
            return i;
    return w->count;
}

/* Refuses a name create would refuse: unsafe, or one already given
 * unless keep_last; *replaced is the entry the new one replaces (keep_last),
 * or w->count. */
static trowel_status check_name(trowel_writer *w, const char *name, char *key, size_t cap,
                                size_t *replaced)
{
    *replaced = w->count;
    if (trowel_path_normalize(name, key, cap) != TROWEL_OK || !key[0])
        return trowel_fail(w->ctx, TROWEL_ERR_UNSAFE_PATH, TROWEL_NO_OFFSET,
                           "'%s' is not a safe entry name (a relative path without '..')",
                           name);
    size_t earlier = entry_with_key(w, key);
    if (earlier < w->count && !w->keep_last)
        return trowel_fail(w->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "'%s' and '%s' would both be stored as '%s': rename one, or keep "
                           "only the last (%s)",
                           w->entries[earlier].name, name, key, TROWEL_CREATE_KEEP_LAST);
    *replaced = earlier;
    return TROWEL_OK;
}

/* An entry's props as the members of its manifest entry (*keys NULL when
 * it has none). */
static trowel_status entry_keys(trowel_writer *w, const trowel_props *props, json_object **keys)
{
    *keys = NULL;
    if (trowel_props_count(props) == 0)
        return TROWEL_OK;
    if (w->fmt->create_reads_manifest_text)
        return trowel_fail(w->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "%s takes no entry props: its manifest describes the whole file",
                           w->fmt->id);
    if (!(*keys = json_object_new_object()))
        return trowel_fail(w->ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "out of memory");
    trowel_json_add_props(*keys, props);
    return TROWEL_OK;
}

trowel_status trowel_writer_begin_entry(trowel_writer *w, const trowel_writer_entry *e)
{
    trowel_ctx *ctx = w->ctx;
    if (w->broken != TROWEL_OK)
        return w->broken;
    trowel_set_entry(ctx, e->name);
    if (w->state != WRITER_READY)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "an entry begins while '%s' is still open (end it first)",
                           w->entries[w->count - 1].name);
    if (!e->name)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "an entry needs a name");
    char key[WRITER_NAME_MAX];
    json_object *keys = NULL;
    size_t replaced;
    trowel_status s = check_name(w, e->name, key, sizeof key, &replaced);
    if (s == TROWEL_OK && !w->spill)
        s = trowel_spill_open(ctx, "the entries written", &w->spill);
    if (s == TROWEL_OK)
        s = grow_entries(w);
    if (s == TROWEL_OK)
        s = entry_keys(w, e->props, &keys);
    if (s != TROWEL_OK)
        return s;
    writer_entry ne = {.name = copy_string(ctx, e->name), .off = trowel_spill_size(w->spill),
                       .keys = keys};
    if (ne.name)
        ne.key = copy_string(ctx, key);
    if (!ne.key) {
        free_entry(ctx, &ne);
        return ctx->last_error.status;
    }
    if (replaced < w->count) { /* keep_last: only now that the new one is in */
        w->entries[replaced].dropped = true;
        trowel_warn(ctx, TROWEL_NO_OFFSET, "'%s' is stored as '%s' in place of '%s'", e->name,
                    key, w->entries[replaced].name);
    }
    w->entries[w->count++] = ne;
    w->state = WRITER_IN_ENTRY;
    w->announced = e->size;
    return TROWEL_OK;
}

/* The entry being written; fails (usage) when none is. */
static trowel_status open_entry(trowel_writer *w, writer_entry **e)
{
    if (w->broken != TROWEL_OK)
        return w->broken;
    if (w->state != WRITER_IN_ENTRY)
        return trowel_fail(w->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "bytes written outside an entry (begin one first)");
    *e = &w->entries[w->count - 1];
    return TROWEL_OK;
}

static trowel_status append(trowel_writer *w, writer_entry *e, const void *data, size_t size)
{
    if (w->announced != TROWEL_SIZE_UNKNOWN && size > w->announced - e->size)
        return trowel_fail(w->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "more bytes written than the %llu announced",
                           (unsigned long long)w->announced);
    trowel_status s = trowel_spill_write(w->spill, data, size);
    if (s != TROWEL_OK) {
        w->broken = s;
        return s;
    }
    e->size += size;
    return TROWEL_OK;
}

trowel_status trowel_writer_write(trowel_writer *w, const void *data, size_t size)
{
    writer_entry *e = NULL;
    trowel_status s = open_entry(w, &e);
    if (s != TROWEL_OK || size == 0)
        return s;
    return append(w, e, data, size);
}

trowel_status trowel_writer_write_input(trowel_writer *w, trowel_input *in)
{
    writer_entry *e = NULL;
    trowel_status s = open_entry(w, &e);
    if (s != TROWEL_OK)
        return s;
    trowel_reader r;
    trowel_reader_init(&r, w->ctx, in);
    for (;;) {
        const uint8_t *span;
        size_t got;
        if ((s = trowel_reader_borrow(&r, 1u << 16, &span, &got)) != TROWEL_OK || got == 0)
            return s;
        if ((s = append(w, e, span, got)) != TROWEL_OK)
            return s;
    }
}

trowel_status trowel_writer_end_entry(trowel_writer *w)
{
    writer_entry *e = NULL;
    trowel_status s = open_entry(w, &e);
    if (s != TROWEL_OK)
        return s;
    if (w->announced != TROWEL_SIZE_UNKNOWN && e->size != w->announced)
        return trowel_fail(w->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "%llu bytes written of the %llu announced",
                           (unsigned long long)e->size, (unsigned long long)w->announced);
    w->state = WRITER_READY;
    trowel_set_entry(w->ctx, NULL);
    return TROWEL_OK;
}

/* ------------------------------------------------------------ the build */

/* The byte entry a format opens by name (the last one kept under it). */
static const writer_entry *served_entry(const trowel_writer *w, const char *name)
{
    for (size_t i = w->count; i-- > 0;) {
        const writer_entry *e = &w->entries[i];
        if (!e->path && !e->dropped && strcmp(e->name, name) == 0)
            return e;
    }
    return NULL;
}

/* The io hook during the build: an entry's name (no base: a source, or a
 * file named beside one) is its bytes in the spill; the rest is the
 * caller's. */
static trowel_status writer_open(void *user, trowel_ctx *ctx, const char *base, const char *name,
                                 trowel_input **out)
{
    const trowel_writer *w = user;
    const writer_entry *e = base ? NULL : served_entry(w, name);
    if (e)
        return trowel_input_open_window(ctx, w->spilled, e->off, e->size, e->name, out);
    if (w->caller_io.open)
        return w->caller_io.open(w->caller_user, ctx, base, name, out);
    return trowel_open_beside(ctx, base, name, out);
}

static trowel_status writer_list(void *user, trowel_ctx *ctx, const char *base, const char *dir,
                                 trowel_list_each_fn each, void *each_user)
{
    const trowel_writer *w = user;
    if (w->caller_io.list)
        return w->caller_io.list(w->caller_user, ctx, base, dir, each, each_user);
    return trowel_list_beside(ctx, base, dir, each, each_user);
}

/* The sources the format gets: one per entry kept, in the order given. */
static trowel_status make_sources(trowel_writer *w, trowel_source **out, size_t *n)
{
    *n = 0;
    *out = trowel_mem_calloc(w->ctx, w->count ? w->count : 1, sizeof **out);
    if (!*out)
        return w->ctx->last_error.status;
    for (size_t i = 0; i < w->count; i++) {
        const writer_entry *e = &w->entries[i];
        if (!e->dropped)
            (*out)[(*n)++] = (trowel_source){e->name, e->path ? e->path : e->name};
    }
    return TROWEL_OK;
}

/* The entries' props put into the manifest's entries, position for
 * position (records added, {"name": ...}, up to the last entry with props;
 * a manifest made when none was given): the one place formats read an
 * entry's keys. */
static trowel_status manifest_with_keys(trowel_writer *w)
{
    size_t last = 0, kept = 0;
    bool any = false;
    for (size_t i = 0; i < w->count; i++) {
        if (w->entries[i].dropped)
            continue;
        if (w->entries[i].keys)
            any = true, last = kept;
        kept++;
    }
    if (!any)
        return TROWEL_OK;
    json_object *m =
        w->manifest_json ? json_tokener_parse(w->manifest_json) : json_object_new_object();
    if (!json_object_is_type(m, json_type_object)) {
        json_object_put(m);
        return trowel_fail(w->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "the manifest is not a %s manifest", w->fmt->id);
    }
    if (!w->manifest_json) {
        json_object_object_add(m, "trowel_manifest", json_object_new_int(1));
        json_object_object_add(m, "format", json_object_new_string(w->fmt->id));
    }
    json_object *list;
    if (!json_object_object_get_ex(m, "entries", &list) ||
        !json_object_is_type(list, json_type_array)) {
        list = json_object_new_array();
        json_object_object_add(m, "entries", list);
    }
    for (size_t i = 0, k = 0; i < w->count && k <= last; i++) {
        const writer_entry *e = &w->entries[i];
        if (e->dropped)
            continue;
        if (json_object_array_length(list) <= k) {
            json_object *rec = json_object_new_object();
            json_object_object_add(rec, "name", json_object_new_string(e->name));
            json_object_array_add(list, rec);
        }
        json_object *rec = json_object_array_get_idx(list, k++);
        if (!e->keys || !json_object_is_type(rec, json_type_object))
            continue;
        json_object_object_foreach(e->keys, key, value)
            json_object_object_add(rec, key, json_object_get(value));
    }
    char *text = copy_string(w->ctx, json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN));
    json_object_put(m);
    if (!text)
        return w->ctx->last_error.status;
    trowel_mem_free(w->ctx, w->manifest_owned);
    w->manifest_json = w->manifest_owned = text;
    return TROWEL_OK;
}

/* Runs the format's create with the writer's entries served by name. */
static trowel_status build(trowel_writer *w)
{
    trowel_ctx *ctx = w->ctx;
    trowel_source *sources = NULL;
    size_t n = 0;
    trowel_status s = manifest_with_keys(w);
    if (s == TROWEL_OK)
        s = make_sources(w, &sources, &n);
    if (s == TROWEL_OK && w->spill)
        s = trowel_spill_input(w->spill, &w->spilled);
    if (s != TROWEL_OK) {
        trowel_mem_free(ctx, sources);
        return s;
    }
    trowel_create_params p = {
        .sources = sources,
        .source_count = n,
        .options = (const char *const *)w->options,
        .option_count = w->option_count,
        .manifest_json = w->manifest_json,
        .base_dir = w->base_dir,
    };
    if (w->spilled) { /* served for the length of the build only */
        w->caller_io = ctx->io;
        w->caller_user = ctx->io_user;
        trowel_ctx_set_io_hooks(ctx, &(trowel_io_hooks){writer_open, writer_list}, w);
    }
    s = trowel_create_build(ctx, w->fmt, &p, w->companion_in, w->companion_out, w->out);
    if (w->spilled) {
        ctx->io = w->caller_io;
        ctx->io_user = w->caller_user;
    }
    trowel_mem_free(ctx, sources);
    return s;
}

trowel_status trowel_writer_finish(trowel_writer *w)
{
    trowel_status s = w->broken;
    if (s == TROWEL_OK && w->state == WRITER_IN_ENTRY)
        s = trowel_fail(w->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                        "the writer finishes while '%s' is still open (end it first)",
                        w->entries[w->count - 1].name);
    if (s == TROWEL_OK)
        s = build(w);
    trowel_writer_abort(w);
    return s;
}

void trowel_writer_abort(trowel_writer *w)
{
    if (!w)
        return;
    trowel_ctx *ctx = w->ctx;
    for (size_t i = 0; i < w->count; i++)
        free_entry(ctx, &w->entries[i]);
    trowel_mem_free(ctx, w->entries);
    for (size_t i = 0; i < w->option_count; i++)
        trowel_mem_free(ctx, w->options[i]);
    trowel_mem_free(ctx, w->options);
    trowel_mem_free(ctx, w->manifest_owned);
    trowel_mem_free(ctx, w->base_dir);
    trowel_spill_close(w->spill);
    trowel_mem_free(ctx, w);
}

/* ----------------------------------------------------------- create on it */

/* trowel_create's sources handed to a writer by path (read at the build,
 * where and when the format reads them). */
static trowel_status create_through_writer(trowel_ctx *ctx, const trowel_format *f,
                                           const trowel_create_params *p,
                                           trowel_input *companion_in,
                                           trowel_sink *companion_out, trowel_sink *out)
{
    trowel_writer *w;
    trowel_status s = trowel_writer_open(ctx, f, p->options, p->option_count, NULL, out, &w);
    if (s != TROWEL_OK)
        return s;
    /* p's strings live through this call: the manifest (tens of MB for a
     * large ASM) is read where it is, not copied as a caller's must be */
    w->manifest_json = p->manifest_json;
    if (companion_in || companion_out)
        s = trowel_writer_set_companion(w, companion_in, companion_out);
    if (s == TROWEL_OK)
        s = trowel_writer_set_base_dir(w, p->base_dir);
    for (size_t i = 0; s == TROWEL_OK && i < p->source_count; i++)
        s = trowel_writer_add_path(w, p->sources[i].name, p->sources[i].path);
    if (s != TROWEL_OK) {
        trowel_writer_abort(w);
        return s;
    }
    return trowel_writer_finish(w);
}

trowel_status trowel_create(trowel_ctx *ctx, const trowel_format *f,
                            const trowel_create_params *p, trowel_sink *out)
{
    return create_through_writer(ctx, f, p, NULL, NULL, out);
}

trowel_status trowel_create_with_companion(trowel_ctx *ctx, const trowel_format *f,
                                           const trowel_create_params *p,
                                           trowel_input *companion_in,
                                           trowel_sink *companion_out, trowel_sink *out)
{
    if (!companion_in || !companion_out)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "a companion needs both its input and its output");
    return create_through_writer(ctx, f, p, companion_in, companion_out, out);
}
