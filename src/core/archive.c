/*
 * The archive layer: detection, opening, the entry table, and the generic
 * parts of verify, manifest, create and convert that every format shares.
 * Format modules only parse and build; this file owns the bookkeeping.
 */
#include "archive_json_head.h"
#include "filter.h"
#include "input.h"
#include "json_pull.h"
#include "json_write.h"
#include "module.h"
#include "sink.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- lookup */

size_t trowel_format_count(void) { return trowel_formats_len; }
const trowel_format *trowel_format_at(size_t i) { return i < trowel_formats_len ? trowel_formats[i] : NULL; }
const char *trowel_format_id(const trowel_format *f) { return f->id; }
const char *trowel_format_family(const trowel_format *f) { return f->family; }
const char *trowel_format_description(const trowel_format *f) { return f->description; }
const char *trowel_format_extensions(const trowel_format *f) { return f->extensions; }
const char *trowel_format_create_options(const trowel_format *f)
{
    return f->create_options ? f->create_options : "";
}
const char *trowel_format_convert_targets(const trowel_format *f) { return f->convert_targets; }

unsigned trowel_format_caps(const trowel_format *f)
{
    unsigned caps = f->caps | TROWEL_CAP_INFO | TROWEL_CAP_CONVERT; /* json for all */
    if (f->create)
        caps |= TROWEL_CAP_CREATE;
    if (f->read_entry)
        caps |= TROWEL_CAP_VERIFY;
    if (f->set_names)
        caps |= TROWEL_CAP_NAMES;
    if (f->create_reads_manifest_text)
        caps |= TROWEL_CAP_STREAMED_MANIFEST;
    return caps;
}

const trowel_format *trowel_format_find(const char *id)
{
    for (size_t i = 0; i < trowel_formats_len; i++)
        if (strcmp(trowel_formats[i]->id, id) == 0)
            return trowel_formats[i];
    return NULL;
}

trowel_status trowel_detect(trowel_ctx *ctx, trowel_input *in, const trowel_format **out, int *bid)
{
    const trowel_format *best;
    int best_bid = trowel_best_format(ctx, in, NULL, &best);
    *out = best;
    if (bid)
        *bid = best_bid;
    if (!best)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "not a format trowel knows (see 'trowel formats')");
    return TROWEL_OK;
}

/* ---------------------------------------------------------------- entries */

static trowel_status grow_entries(trowel_archive *a)
{
    if (a->entry_count < a->entry_cap)
        return TROWEL_OK;
    size_t cap = a->entry_cap ? a->entry_cap * 2 : 16;
    trowel_status s = trowel_mem_resize_array(a->ctx, &a->entries, cap, sizeof *a->entries);
    if (s == TROWEL_OK)
        s = trowel_mem_resize_array(a->ctx, &a->entry_extra, cap, sizeof *a->entry_extra);
    if (s == TROWEL_OK)
        a->entry_cap = cap;
    return s;
}

/* Copies s into the archive's string store. */
static trowel_status keep_string(trowel_archive *a, const char *s, const char **kept)
{
    trowel_status st = trowel_props_add_str(a->strings, "s", s);
    *kept = st == TROWEL_OK ? trowel_props_at(a->strings, trowel_props_count(a->strings) - 1)->s
                            : NULL;
    return st;
}

/* Has the format settle entries [0, count) (see the settle hook). The
 * archive is const to the accessors that call it: settling changes
 * nothing a caller has seen, only finishes what it has not seen yet. */
static void settle(const trowel_archive *a, size_t count)
{
    if (a->fmt->settle && a->settled < count)
        a->fmt->settle(a->self, count);
}

static void settle_all(const trowel_archive *a) { settle(a, a->entry_count); }

trowel_status trowel_archive_add(trowel_archive *a, const trowel_entry *e, trowel_props **extra)
{
    const char *name = NULL, *method = NULL;
    *extra = NULL;
    trowel_status s = grow_entries(a);
    if (s == TROWEL_OK)
        s = keep_string(a, e->name ? e->name : "", &name);
    if (s == TROWEL_OK)
        s = keep_string(a, e->method ? e->method : "stored", &method);
    if (s == TROWEL_OK && !a->extras) /* made with the first entry */
        s = trowel_props_create(a->ctx, &a->extras);
    if (s == TROWEL_OK)
        s = trowel_props_create_within(a->extras, extra);
    if (s != TROWEL_OK)
        return s;
    size_t i = a->entry_count++;
    a->entries[i] = *e;
    a->entries[i].index = i;
    a->entries[i].name = name;
    a->entries[i].method = method;
    a->entries[i].extra = *extra;
    a->entry_extra[i] = *extra;
    return TROWEL_OK;
}

trowel_status trowel_archive_rename_entry(trowel_archive *a, size_t index, const char *name)
{
    if (index >= a->entry_count)
        return trowel_fail(a->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "no entry %zu", index);
    const char *kept;
    trowel_status s = keep_string(a, name, &kept);
    if (s != TROWEL_OK)
        return s;
    a->entries[index].name = kept;
    return TROWEL_OK;
}

trowel_status trowel_archive_set_names(trowel_archive *a, const char *path)
{
    settle_all(a);
    trowel_ctx_clear_error(a->ctx);
    if (!a->fmt->set_names)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "%s files keep their names: --names does not apply", a->fmt->id);
    return a->fmt->set_names(a, path);
}

trowel_status trowel_archive_set_options(trowel_archive *a, const char *const *opts, size_t n)
{
    settle_all(a);
    trowel_ctx_clear_error(a->ctx);
    trowel_status s = trowel_options_check_format(a->ctx, a->fmt, NULL, opts, n);
    if (s != TROWEL_OK || !a->fmt->set_options)
        return s;
    return a->fmt->set_options(a, opts, n);
}

size_t trowel_archive_entry_count(const trowel_archive *a) { return a->entry_count; }

const trowel_entry *trowel_archive_entry(const trowel_archive *a, size_t i)
{
    if (i >= a->entry_count)
        return NULL;
    settle(a, i + 1);
    return &a->entries[i];
}
const trowel_format *trowel_archive_format(const trowel_archive *a) { return a->fmt; }

const trowel_props *trowel_archive_info(const trowel_archive *a)
{
    settle_all(a);
    return a->info;
}
bool trowel_archive_damaged(const trowel_archive *a) { return a->damaged; }
void trowel_archive_mark_damaged(trowel_archive *a) { a->damaged = true; }

/* ----------------------------------------------------------- open, close */

/* Opens peeled (what the chain's filters made of in, or in itself) as fmt;
 * the archive takes the chain's inputs over, on failure too. */
static trowel_status open_through(trowel_ctx *ctx, trowel_input *in, trowel_chain *chain,
                                  const trowel_format *fmt, bool in_order, trowel_archive **out)
{
    *out = NULL;
    trowel_archive *a = trowel_mem_calloc(ctx, 1, sizeof *a);
    if (!a) {
        if (chain)
            trowel_chain_close(chain);
        return ctx->last_error.status;
    }
    a->ctx = ctx;
    a->in = in;
    a->raw_in = in;
    a->fmt = fmt;
    a->in_order = in_order;
    a->self = a;
    for (size_t i = 0; chain && i < chain->count; i++) {
        a->filter_ids[i] = chain->filters[i]->id;
        a->filter_inputs[i] = chain->inputs[i];
        a->in = chain->inputs[i];
    }
    a->filter_count = chain ? chain->count : 0;
    a->info = trowel_props_new(ctx);
    a->strings = trowel_props_new(ctx);
    if (!a->info || !a->strings) {
        trowel_archive_close(a);
        return ctx->last_error.status;
    }
    trowel_reader r;
    trowel_reader_init(&r, ctx, a->in);
    const char *purpose = trowel_mem_purpose(ctx, "reading the archive's directory");
    unsigned refused = ctx->siblings_refused;
    trowel_status s = fmt->open(a, &r);
    trowel_mem_purpose(ctx, purpose);
    if (s != TROWEL_OK) {
        trowel_archive_close(a);
        return s;
    }
    /* A sibling was there but could not be read (a FIFO or a device under
     * its name): whatever the format made of its absence, the set of files
     * is not whole, so the run fails (the format's warning said why). */
    if (ctx->siblings_refused != refused)
        a->damaged = true;
    *out = a;
    return TROWEL_OK;
}

trowel_status trowel_archive_open_as(trowel_ctx *ctx, trowel_input *in, const trowel_format *fmt,
                                    trowel_archive **out)
{
    return open_through(ctx, in, NULL, fmt, false, out);
}

static trowel_status open_detecting(trowel_ctx *ctx, trowel_input *in, const trowel_format *fmt,
                                    bool in_order, trowel_archive **out)
{
    *out = NULL;
    trowel_ctx_clear_error(ctx);
    trowel_set_entry(ctx, NULL);
    trowel_chain chain;
    const char *purpose = trowel_mem_purpose(ctx, "peeling the input's wrappers");
    trowel_status s = trowel_detect_chain(ctx, in, fmt, &chain);
    trowel_mem_purpose(ctx, purpose);
    if (s != TROWEL_OK)
        return s;
    return open_through(ctx, in, &chain, chain.fmt, in_order, out);
}

trowel_status trowel_archive_open(trowel_ctx *ctx, trowel_input *in, const trowel_format *fmt,
                                  trowel_archive **out)
{
    return open_detecting(ctx, in, fmt, false, out);
}

trowel_status trowel_archive_open_in_order(trowel_ctx *ctx, trowel_input *in,
                                           const trowel_format *fmt, trowel_archive **out)
{
    return open_detecting(ctx, in, fmt, true, out);
}

size_t trowel_archive_filter_count(const trowel_archive *a) { return a->filter_count; }

const char *trowel_archive_filter_id(const trowel_archive *a, size_t i)
{
    return i < a->filter_count ? a->filter_ids[i] : NULL;
}

void trowel_archive_close(trowel_archive *a)
{
    if (!a)
        return;
    if (a->fmt->close)
        a->fmt->close(a);
    trowel_props_free(a->extras); /* and every entry's extra with it */
    trowel_mem_free(a->ctx, a->entry_extra);
    trowel_mem_free(a->ctx, a->entries);
    trowel_props_free(a->info);
    trowel_props_free(a->strings);
    trowel_mem_free(a->ctx, a->size_before);
    for (size_t i = a->filter_count; i-- > 0;) /* innermost first */
        trowel_input_close(a->filter_inputs[i]);
    trowel_input_close(a->own_in);
    trowel_mem_free(a->ctx, a);
}

/* -------------------------------------------------------- nested archives */

/* The entry's bytes as an input: a window of the parent's input when the
 * entry is stored as is there (stored_entries_in_input), else its decoded
 * bytes in counted memory, which the input owns. */
static trowel_status entry_input(trowel_archive *a, size_t index, const char *name,
                                 trowel_input **in)
{
    const trowel_entry *e = &a->entries[index];
    if (a->fmt->stored_entries_in_input && strcmp(e->method, "stored") == 0 &&
        e->packed_size == e->size && !trowel_archive_damaged(a))
        return trowel_input_open_window(a->ctx, a->in, e->offset, e->size, name, in);
    *in = NULL;
    uint8_t *data;
    size_t size;
    trowel_status s = trowel_archive_entry_bytes(a, index, false, &data, &size);
    if (s != TROWEL_OK)
        return s;
    return trowel_input_adopt_memory(a->ctx, data, size, name, in);
}

trowel_status trowel_archive_open_entry(trowel_archive *a, size_t index, const trowel_format *fmt,
                                        trowel_archive **out)
{
    *out = NULL;
    trowel_ctx *ctx = a->ctx;
    if (index >= a->entry_count)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "no entry %zu", index);
    settle(a, index + 1);
    const char *entry = a->entries[index].name;
    if (a->depth + 1 > TROWEL_NEST_MAX)
        return trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                           "'%s' is nested deeper than %d archives", entry, TROWEL_NEST_MAX);
    const char *outer = trowel_input_name(a->in);
    size_t len = strlen(outer) + strlen(entry) + 2;
    char *name = trowel_mem_alloc(ctx, len);
    if (!name)
        return ctx->last_error.status;
    snprintf(name, len, "%s/%s", outer, entry);
    trowel_input *in = NULL;
    trowel_status s = entry_input(a, index, name, &in);
    trowel_mem_free(ctx, name);
    trowel_archive *n = NULL;
    if (s == TROWEL_OK)
        s = trowel_archive_open(ctx, in, fmt, &n);
    if (s != TROWEL_OK) {
        trowel_input_close(in);
        return s;
    }
    n->own_in = in;
    n->depth = a->depth + 1;
    *out = n;
    return TROWEL_OK;
}

/* size_before[i]: decoded bytes of the entries before i (saturating), made
 * once, so progress over many entries costs nothing per entry. */
static trowel_status progress_prefix(trowel_archive *a)
{
    if (a->size_before_len == a->entry_count + 1)
        return TROWEL_OK;
    trowel_mem_free(a->ctx, a->size_before);
    a->size_before_len = 0;
    a->size_before = trowel_mem_calloc(a->ctx, a->entry_count + 1, sizeof(uint64_t));
    if (!a->size_before)
        return a->ctx->last_error.status;
    for (size_t i = 0; i < a->entry_count; i++) {
        uint64_t sum;
        a->size_before[i + 1] = trowel_add_overflows(a->size_before[i], a->entries[i].size, &sum)
                                    ? UINT64_MAX
                                    : sum;
    }
    a->size_before_len = a->entry_count + 1;
    return TROWEL_OK;
}

/* Work on entry index starts: errors name it, and progress inside it counts
 * toward all the archive's bytes, unless this archive is itself read for an
 * entry of another (a VOL.CNF volume): then its progress is that entry's.
 * Returns whether it was nested, for entry_ends. */
static bool entry_begins(trowel_archive *a, size_t index)
{
    trowel_set_entry(a->ctx, a->entries[index].name);
    bool nested = a->ctx->progress_total != 0;
    if (!nested && a->ctx->progress_fn && progress_prefix(a) == TROWEL_OK)
        trowel_progress_scope(a->ctx, a->size_before[index], a->entries[index].size,
                              a->size_before[a->entry_count]);
    return nested;
}

static void entry_ends(trowel_archive *a, size_t index, bool nested)
{
    trowel_progress(a->ctx, a->entries[index].size, a->entries[index].size);
    if (!nested)
        trowel_progress_scope(a->ctx, 0, 0, 0);
}

trowel_status trowel_archive_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    if (!out)
        return trowel_fail(a->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "no sink to read entry %zu into", index);
    if (index >= a->entry_count || !a->fmt->read_entry)
        return trowel_fail(a->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "no entry %zu", index);
    settle(a, index + 1);
    bool nested = entry_begins(a, index);
    const char *purpose = trowel_mem_purpose(a->ctx, "decoding the entry");
    trowel_status s = a->fmt->read_entry(a, index, out);
    trowel_mem_purpose(a->ctx, purpose);
    entry_ends(a, index, nested);
    if (s == TROWEL_OK)
        trowel_set_entry(a->ctx, NULL);
    return s;
}

bool trowel_archive_entry_size_exact(const trowel_archive *a, size_t index)
{
    if (index >= a->entry_count)
        return false;
    settle(a, index + 1);
    return !a->fmt->entry_size_exact || a->fmt->entry_size_exact(a, index);
}

/* Gives the memory sink's buffer back at its used length, so a kept entry
 * costs what it holds and not the slack of the doublings. */
static trowel_status take_fitted(trowel_archive *a, trowel_sink *sink, uint8_t **data,
                                 size_t *size)
{
    trowel_status s = trowel_sink_take(sink, data, size);
    if (s != TROWEL_OK || !*data || !*size) {
        trowel_mem_free(a->ctx, *data);
        *data = NULL;
        return s;
    }
    return trowel_mem_resize(a->ctx, data, *size); /* shrinking: cannot fail */
}

trowel_status trowel_archive_entry_bytes(trowel_archive *a, size_t index, bool reserve,
                                        uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    trowel_sink *sink;
    trowel_status s = trowel_sink_open_memory(a->ctx, &sink);
    if (s != TROWEL_OK)
        return s;
    if (reserve && trowel_archive_entry_size_exact(a, index) &&
        a->entries[index].size <= SIZE_MAX) {
        trowel_set_entry(a->ctx, a->entries[index].name);
        s = trowel_sink_reserve(sink, (size_t)a->entries[index].size);
    }
    if (s == TROWEL_OK)
        s = trowel_archive_read_entry(a, index, sink);
    if (s == TROWEL_OK)
        s = take_fitted(a, sink, data, size);
    trowel_sink_discard(sink);
    return s;
}

trowel_status trowel_archive_read_entry_data(trowel_archive *a, size_t index, uint8_t **data,
                                             size_t *size)
{
    return trowel_archive_entry_bytes(a, index, true, data, size);
}

void trowel_archive_free_data(trowel_archive *a, uint8_t *data)
{
    trowel_mem_free(a->ctx, data);
}

/* ---------------------------------------------------------------- verify */

void trowel_archive_report(trowel_archive *a)
{
    a->problems++;
    if (a->report_fn)
        a->report_fn(a->report_user, &a->ctx->last_error);
}

void trowel_archive_reportf(trowel_archive *a, uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    trowel_vfail(a->ctx, TROWEL_ERR_VERIFY, offset, fmt, ap);
    va_end(ap);
    trowel_archive_report(a);
}

/* One entry: the format's own one-pass check, or a read into a null sink.
 * Problems are reported; an error is returned only when verify cannot go on. */
trowel_status trowel_archive_verify_by_reading(trowel_archive *a, size_t index)
{
    trowel_sink *null;
    trowel_status s = trowel_sink_open_null(a->ctx, &null);
    if (s != TROWEL_OK)
        return s;
    s = trowel_archive_read_entry(a, index, null);
    trowel_sink_discard(null);
    if (s != TROWEL_OK)
        trowel_archive_report(a);
    return TROWEL_OK;
}

static trowel_status verify_entry(trowel_archive *a, size_t index)
{
    if (!a->fmt->verify_entry)
        return trowel_archive_verify_by_reading(a, index);
    bool nested = entry_begins(a, index);
    const char *purpose = trowel_mem_purpose(a->ctx, "checking the entry");
    trowel_status s = a->fmt->verify_entry(a, index);
    trowel_mem_purpose(a->ctx, purpose);
    entry_ends(a, index, nested);
    return s;
}

trowel_status trowel_archive_verify(trowel_archive *a, trowel_verify_fn fn, void *user)
{
    settle_all(a);
    a->report_fn = fn;
    a->report_user = user;
    a->problems = 0;
    /* Decoding every entry checks its stream, lengths and checksums. */
    for (size_t i = 0; (a->fmt->verify_entry || a->fmt->read_entry) && i < a->entry_count; i++) {
        trowel_status s = verify_entry(a, i);
        if (s != TROWEL_OK)
            return s;
    }
    trowel_set_entry(a->ctx, NULL);
    if (a->fmt->verify) {
        trowel_status s = a->fmt->verify(a);
        if (s != TROWEL_OK && s != TROWEL_ERR_VERIFY)
            return s;
    }
    /* Damage that opening found (and warned about) fails verify even when
     * every check that follows passes. */
    if (a->damaged && !a->problems)
        trowel_archive_reportf(a, TROWEL_NO_OFFSET,
                               "damaged: opening it found what cannot be read (the warnings say "
                               "what)");
    if (a->problems)
        return trowel_fail(a->ctx, TROWEL_ERR_VERIFY, TROWEL_NO_OFFSET, "%zu problem%s found",
                           a->problems, a->problems == 1 ? "" : "s");
    return TROWEL_OK;
}

/* ------------------------------------------------------------------ JSON */

static json_object *prop_to_json(const trowel_prop *p)
{
    switch (p->type) {
    case TROWEL_VALUE_INT: return json_object_new_int64(p->i);
    case TROWEL_VALUE_UINT: return json_object_new_uint64(p->u);
    case TROWEL_VALUE_BOOL: return json_object_new_boolean((json_bool)p->i);
    case TROWEL_VALUE_STRING: return json_object_new_string(p->s);
    case TROWEL_VALUE_STRING_LIST: {
        json_object *arr = json_object_new_array();
        for (size_t i = 0; i < p->list_len; i++)
            json_object_array_add(arr, json_object_new_string(p->list[i]));
        return arr;
    }
    case TROWEL_VALUE_DOUBLE: return json_object_new_double(p->d);
    }
    return NULL;
}

/* A key "group.name" goes into the object "group" as "name". */
static void add_props(json_object *obj, const trowel_props *props, size_t skip)
{
    for (size_t i = skip; i < trowel_props_count(props); i++) {
        const trowel_prop *p = trowel_props_at(props, i);
        const char *dot = strchr(p->key, '.');
        if (!dot || dot == p->key || !dot[1]) {
            json_object_object_add(obj, p->key, prop_to_json(p));
            continue;
        }
        char group[64];
        size_t n = (size_t)(dot - p->key) < sizeof group - 1 ? (size_t)(dot - p->key) : sizeof group - 1;
        memcpy(group, p->key, n);
        group[n] = 0;
        json_object *g = NULL;
        if (!json_object_object_get_ex(obj, group, &g) || !json_object_is_type(g, json_type_object)) {
            g = json_object_new_object();
            json_object_object_add(obj, group, g);
        }
        json_object_object_add(g, dot + 1, prop_to_json(p));
    }
}

void trowel_json_add_props(json_object *obj, const trowel_props *props)
{
    add_props(obj, props, 0);
}

static json_object *entry_to_json(const trowel_entry *e)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(e->name));
    json_object_object_add(o, "size", json_object_new_uint64(e->size));
    json_object_object_add(o, "packed_size", json_object_new_uint64(e->packed_size));
    json_object_object_add(o, "offset", json_object_new_uint64(e->offset));
    json_object_object_add(o, "method", json_object_new_string(e->method));
    add_props(o, e->extra, 0);
    return o;
}

static json_object *archive_to_json(const trowel_archive *a, unsigned what)
{
    settle_all(a);
    json_object *o = json_object_new_object();
    if (what & TROWEL_JSON_INFO)
        json_object_object_add(o, "file", json_object_new_string(trowel_input_name(a->in)));
    /* "format" and "version" come first from the format's own info list. */
    add_props(o, a->info, 0);
    if (what & TROWEL_JSON_INFO) {
        json_object_object_add(o, "file_size", json_object_new_uint64(trowel_input_size(a->raw_in)));
        /* Only when a wrapper was peeled, so plain files keep their JSON. */
        json_object *filters = a->filter_count ? json_object_new_array() : NULL;
        for (size_t i = 0; i < a->filter_count; i++)
            json_object_array_add(filters, json_object_new_string(a->filter_ids[i]));
        if (filters)
            json_object_object_add(o, "filters", filters);
        json_object_object_add(o, "entry_count", json_object_new_uint64(a->entry_count));
    }
    if (what & TROWEL_JSON_ENTRIES) {
        json_object *arr = json_object_new_array();
        for (size_t i = 0; i < a->entry_count; i++)
            json_object_array_add(arr, entry_to_json(&a->entries[i]));
        json_object_object_add(o, "entries", arr);
    }
    return o;
}

static trowel_status json_text(trowel_ctx *ctx, json_object *o, unsigned what, char **out)
{
    int flags = (what & TROWEL_JSON_PRETTY) ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
                                            : JSON_C_TO_STRING_PLAIN;
    const char *s = trowel_json_text_utf8(o, flags | JSON_C_TO_STRING_NOSLASHESCAPE);
    *out = s ? strdup(s) : NULL;
    json_object_put(o);
    if (!*out)
        return trowel_fail(ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "out of memory");
    return TROWEL_OK;
}

trowel_status trowel_archive_to_json(trowel_archive *a, unsigned what, char **out)
{
    return json_text(a->ctx, archive_to_json(a, what), what, out);
}

/* -------------------------------------------------------------- manifest */

trowel_status trowel_archive_manifest(trowel_archive *a, char **out)
{
    *out = NULL;
    settle_all(a);
    if (!a->fmt->manifest)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "format %s has no manifest support", a->fmt->id);
    json_object *m = json_object_new_object();
    json_object_object_add(m, "trowel_manifest", json_object_new_int(1));
    json_object_object_add(m, "format", json_object_new_string(a->fmt->id));
    json_object *entries = json_object_new_array();
    for (size_t i = 0; i < a->entry_count; i++) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "name", json_object_new_string(a->entries[i].name));
        json_object_array_add(entries, e);
    }
    json_object_object_add(m, "entries", entries);
    trowel_status s = a->fmt->manifest(a, m);
    if (s != TROWEL_OK) {
        json_object_put(m);
        return s;
    }
    return json_text(a->ctx, m, TROWEL_JSON_PRETTY, out);
}

trowel_status trowel_manifest_format(trowel_ctx *ctx, const char *json, const trowel_format **out)
{
    *out = NULL;
    /* Read up to "format" only: a manifest may be large (an ASM's). */
    char id[64];
    const trowel_format *fmt = trowel_json_top_string(ctx, json, strlen(json), "format", id, sizeof id)
                                   ? trowel_format_find(id)
                                   : NULL;
    if (!fmt)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "the manifest is not valid JSON or names no known format");
    *out = fmt;
    return TROWEL_OK;
}

/* ---------------------------------------------------------------- create */

static void free_sources(trowel_ctx *ctx, trowel_source *src, size_t n)
{
    for (size_t i = 0; src && i < n; i++) {
        trowel_mem_free(ctx, (char *)(uintptr_t)src[i].name);
        trowel_mem_free(ctx, (char *)(uintptr_t)src[i].path);
    }
    trowel_mem_free(ctx, src);
}

/* The manifest's "entries", in order, read from base_dir/name. */
static trowel_status sources_from_manifest(trowel_ctx *ctx, json_object *manifest,
                                           const char *base_dir, trowel_source **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    json_object *entries;
    if (!json_object_object_get_ex(manifest, "entries", &entries) ||
        !json_object_is_type(entries, json_type_array))
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "the manifest lists no entries and no paths were given");
    size_t n = json_object_array_length(entries);
    trowel_source *src = trowel_mem_calloc(ctx, n ? n : 1, sizeof *src);
    if (!src)
        return ctx->last_error.status;
    const char *dir = base_dir ? base_dir : ".";
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(entries, i), *name;
        const char *nm = e && json_object_object_get_ex(e, "name", &name) ? json_object_get_string(name) : NULL;
        char rel[4096];
        if (!nm || trowel_path_normalize(nm, rel, sizeof rel) != TROWEL_OK) {
            free_sources(ctx, src, i);
            return trowel_fail(ctx, TROWEL_ERR_UNSAFE_PATH, TROWEL_NO_OFFSET,
                               "manifest entry %zu has no safe name", i);
        }
        size_t plen = strlen(dir) + strlen(rel) + 2;
        char *path = trowel_mem_alloc(ctx, plen);
        char *copy = path ? trowel_mem_strdup(ctx, nm) : NULL;
        if (!copy) {
            trowel_mem_free(ctx, path);
            free_sources(ctx, src, i);
            return ctx->last_error.status;
        }
        snprintf(path, plen, "%s/%s", dir, rel);
        src[i].name = copy;
        src[i].path = path;
    }
    *out = src;
    *count = n;
    return TROWEL_OK;
}

typedef struct stored_index {
    const char *name;
    size_t index;
} stored_index;

static int by_stored_name(const void *x, const void *y)
{
    const stored_index *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

trowel_status trowel_create_unique_names(trowel_ctx *ctx, const trowel_create_params *p,
                                         const char *const *stored, bool *keep)
{
    size_t n = p->source_count;
    for (size_t i = 0; i < n; i++)
        keep[i] = true;
    stored_index *order = trowel_mem_calloc(ctx, n ? n : 1, sizeof *order);
    if (!order)
        return ctx->last_error.status;
    for (size_t i = 0; i < n; i++)
        order[i] = (stored_index){stored[i], i};
    qsort(order, n, sizeof *order, by_stored_name);
    trowel_status s = TROWEL_OK;
    for (size_t i = 1; i < n && s == TROWEL_OK; i++) {
        if (strcmp(order[i - 1].name, order[i].name) != 0)
            continue;
        const char *first = p->sources[order[i - 1].index].name;
        const char *last = p->sources[order[i].index].name;
        if (!((const trowel_create_job *)(const void *)p)->keep_last) {
            s = trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                            "'%s' and '%s' would both be stored as '%s': rename one, or keep "
                            "only the last (create --keep-last)",
                            first, last, order[i].name);
        } else {
            keep[order[i - 1].index] = false;
            trowel_warn(ctx, TROWEL_NO_OFFSET, "'%s' is stored as '%s' in place of '%s'", last,
                        order[i].name, first);
        }
    }
    trowel_mem_free(ctx, order);
    return s;
}

/* TROWEL_CREATE_KEEP_LAST is for every format: it is taken out of the
 * options (into *kept, a copy without it) before the format checks them. */
static trowel_status take_keep_last(trowel_ctx *ctx, trowel_create_job *job, const char ***kept)
{
    trowel_create_params *p = &job->params;
    *kept = NULL;
    size_t n = 0;
    for (size_t i = 0; i < p->option_count; i++)
        job->keep_last = job->keep_last || strcmp(p->options[i], TROWEL_CREATE_KEEP_LAST) == 0;
    if (!job->keep_last)
        return TROWEL_OK;
    *kept = trowel_mem_calloc(ctx, p->option_count, sizeof **kept);
    if (!*kept)
        return ctx->last_error.status;
    for (size_t i = 0; i < p->option_count; i++)
        if (strcmp(p->options[i], TROWEL_CREATE_KEEP_LAST) != 0)
            (*kept)[n++] = p->options[i];
    p->options = *kept;
    p->option_count = n;
    return TROWEL_OK;
}

/* The build at the end of every create (trowel_writer_finish, writer.c):
 * the manifest checked, the sources taken from it when there are none. */
trowel_status trowel_create_build(trowel_ctx *ctx, const trowel_format *f,
                                  const trowel_create_params *p, trowel_input *companion_in,
                                  trowel_sink *companion_out, trowel_sink *out)
{
    trowel_ctx_clear_error(ctx);
    trowel_set_entry(ctx, NULL);
    if (!f->create)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "trowel cannot create %s files yet", f->id);
    json_object *manifest = NULL;
    char id[64];
    if (p->manifest_json && f->create_reads_manifest_text) {
        /* The format reads the text itself; only its "format" is looked at. */
        if (!trowel_json_top_string(ctx, p->manifest_json, strlen(p->manifest_json), "format", id,
                                    sizeof id) ||
            strcmp(id, f->id) != 0)
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "the manifest is not a %s manifest", f->id);
    } else if (p->manifest_json) {
        manifest = json_tokener_parse(p->manifest_json);
        trowel_json_restore_bytes(manifest); /* names' exact bytes, from "name_bytes" */
        json_object *fid = NULL;
        if (!manifest || !json_object_is_type(manifest, json_type_object) ||
            !json_object_object_get_ex(manifest, "format", &fid) ||
            strcmp(json_object_get_string(fid), f->id) != 0) {
            json_object_put(manifest);
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "the manifest is not a %s manifest", f->id);
        }
    }
    trowel_create_job job = {*p, companion_in, companion_out, false};
    trowel_create_params *with_sources = &job.params;
    trowel_source *sources = NULL;
    const char **options = NULL;
    trowel_status s = take_keep_last(ctx, &job, &options);
    if (s == TROWEL_OK) /* the format's "create" rows: it reads only checked values */
        s = trowel_options_check_format(ctx, f, "create", with_sources->options,
                                        with_sources->option_count);
    if (s == TROWEL_OK && manifest && p->source_count == 0)
        s = sources_from_manifest(ctx, manifest, p->base_dir, &sources, &with_sources->source_count);
    if (sources)
        with_sources->sources = sources;
    if (s == TROWEL_OK) {
        const char *purpose = trowel_mem_purpose(ctx, "building the new file");
        s = f->create(ctx, with_sources, manifest, out);
        trowel_mem_purpose(ctx, purpose);
    }
    free_sources(ctx, sources, with_sources->source_count);
    trowel_mem_free(ctx, options);
    json_object_put(manifest);
    return s;
}

/* --------------------------------------------------------------- convert */

/* The document json-c printed (text: an object with members, so it ends
 * "\n}"), then what the format streams into it, then its closing brace. */
static trowel_status json_stream_rest(trowel_archive *a, const char *text, trowel_sink *out)
{
    size_t n = strlen(text);
    if (n < 2 || strcmp(text + n - 2, "\n}") != 0)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "the JSON document does not end as an object");
    trowel_status s = trowel_sink_write(out, text, n - 2);
    if (s != TROWEL_OK)
        return s;
    trowel_json_writer *w = trowel_mem_alloc(a->ctx, sizeof *w);
    if (!w)
        return a->ctx->last_error.status;
    trowel_jw_init_in_object(w, out, true);
    s = a->fmt->convert_json_stream(a, w);
    trowel_jw_end_object(w);
    trowel_status done = trowel_jw_finish(w, a->ctx);
    trowel_mem_free(a->ctx, w);
    return s != TROWEL_OK ? s : done;
}

/* The whole document through the streaming writer, head included
 * (archive_json_head.c): for a format that streams its part and adds
 * nothing to the tree, when the head prints as json-c prints it. */
static trowel_status json_stream_all(trowel_archive *a, trowel_sink *out)
{
    trowel_json_writer *w;
    trowel_status s = trowel_mem_new(a->ctx, sizeof *w, &w);
    if (s != TROWEL_OK)
        return s;
    trowel_jw_init(w, out);
    trowel_jw_begin_object(w);
    trowel_archive_json_head(a, w);
    s = w->s == TROWEL_OK ? a->fmt->convert_json_stream(a, w) : TROWEL_OK;
    trowel_jw_end_object(w);
    trowel_status done = trowel_jw_finish(w, a->ctx);
    trowel_mem_free(a->ctx, w);
    if (s == TROWEL_OK && done == TROWEL_OK)
        done = trowel_sink_write(out, "\n", 1);
    return s != TROWEL_OK ? s : done;
}

trowel_status trowel_convert(trowel_ctx *ctx, trowel_archive *a, const char *target,
                             const char *const *opts, size_t nopts, trowel_sink *out)
{
    settle_all(a);
    trowel_ctx_clear_error(ctx);
    trowel_status checked = trowel_options_check_format(ctx, a->fmt, target, opts, nopts);
    if (checked != TROWEL_OK)
        return checked;
    if (strcmp(target, "json") == 0 && a->fmt->convert_json_stream && !a->fmt->convert_json &&
        trowel_archive_json_head_streams(a))
        return json_stream_all(a, out);
    if (strcmp(target, "json") == 0) {
        unsigned what = TROWEL_JSON_INFO | TROWEL_JSON_ENTRIES | TROWEL_JSON_PRETTY;
        json_object *doc = archive_to_json(a, what);
        trowel_status s = !doc ? trowel_fail(ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET,
                                             "out of memory for the JSON document")
                          : a->fmt->convert_json ? a->fmt->convert_json(a, doc)
                                                 : TROWEL_OK;
        char *text = NULL;
        if (s == TROWEL_OK)
            s = json_text(a->ctx, doc, what, &text);
        else
            json_object_put(doc);
        if (s == TROWEL_OK && a->fmt->convert_json_stream)
            s = json_stream_rest(a, text, out);
        else if (s == TROWEL_OK)
            s = trowel_sink_write(out, text, strlen(text));
        if (s == TROWEL_OK)
            s = trowel_sink_write(out, "\n", 1);
        free(text);
        return s;
    }
    if (trowel_convert_makes_folder(a, target))
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "%s converts to %s as a folder of files: name an output folder",
                           a->fmt->id, target);
    if (!a->fmt->convert)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "%s files convert only to json", a->fmt->id);
    const char *purpose = trowel_mem_purpose(ctx, "the conversion");
    trowel_status s = a->fmt->convert(a, target, opts, nopts, out);
    trowel_mem_purpose(ctx, purpose);
    return s;
}

/* True when list (space separated) holds word. */
static bool list_has(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *w = list; w && *w;) {
        size_t len = strcspn(w, " ");
        if (len == n && strncmp(w, word, n) == 0)
            return true;
        w += len + (w[len] == ' ');
    }
    return false;
}

bool trowel_convert_makes_folder(const trowel_archive *a, const char *target)
{
    return a && target && a->fmt->convert_folder && list_has(a->fmt->folder_targets, target);
}

trowel_status trowel_convert_folder(trowel_ctx *ctx, trowel_archive *a, const char *target,
                                    const char *const *opts, size_t nopts, trowel_outdir *dir)
{
    settle_all(a);
    trowel_ctx_clear_error(ctx);
    trowel_status checked = trowel_options_check_format(ctx, a->fmt, target, opts, nopts);
    if (checked != TROWEL_OK)
        return checked;
    if (!trowel_convert_makes_folder(a, target))
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "%s does not convert to %s as a folder", a->fmt->id, target);
    const char *purpose = trowel_mem_purpose(ctx, "the conversion");
    trowel_status s = a->fmt->convert_folder(a, target, opts, nopts, dir);
    trowel_mem_purpose(ctx, purpose);
    return s;
}

/* ---------------------------------------------------------------- codecs */

size_t trowel_codec_count(void) { return trowel_codecs_len; }
const trowel_codec *trowel_codec_at(size_t i) { return i < trowel_codecs_len ? trowel_codecs[i] : NULL; }
const char *trowel_codec_id(const trowel_codec *c) { return c->id; }
const char *trowel_codec_description(const trowel_codec *c) { return c->description; }

const trowel_codec *trowel_codec_find(const char *id)
{
    for (size_t i = 0; i < trowel_codecs_len; i++)
        if (strcmp(trowel_codecs[i]->id, id) == 0)
            return trowel_codecs[i];
    return NULL;
}

trowel_status trowel_codec_compress(trowel_ctx *ctx, const trowel_codec *c, trowel_input *in,
                                    trowel_sink *out)
{
    trowel_ctx_clear_error(ctx);
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    const char *purpose = trowel_mem_purpose(ctx, "compressing");
    trowel_status s = c->compress(ctx, &r, out);
    trowel_mem_purpose(ctx, purpose);
    return s;
}

trowel_status trowel_codec_compress_whole(trowel_ctx *ctx, trowel_reader *in, trowel_sink *out,
                                          trowel_buffer_encoder encode)
{
    uint8_t *data = NULL, *packed = NULL;
    size_t size = 0, packed_len = 0;
    trowel_status s = trowel_reader_load(in, &data, &size);
    if (s == TROWEL_OK)
        s = encode(ctx, data, size, &packed, &packed_len);
    trowel_mem_free(ctx, data);
    if (s == TROWEL_OK)
        s = trowel_sink_write(out, packed, packed_len);
    trowel_mem_free(ctx, packed);
    return s;
}

trowel_status trowel_codec_decompress(trowel_ctx *ctx, const trowel_codec *c, trowel_input *in,
                                      uint64_t expected_size, trowel_sink *out)
{
    trowel_ctx_clear_error(ctx);
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    const char *purpose = trowel_mem_purpose(ctx, "decompressing");
    trowel_status s = c->decompress(ctx, &r, expected_size, out);
    trowel_mem_purpose(ctx, purpose);
    return s;
}
