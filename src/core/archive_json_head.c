/*
 * The head of `convert --to json`'s document ("file", the info fields,
 * "file_size", "filters", "entry_count" and "entries") written through the
 * streaming writer (json_write.h) instead of built as a json-c tree and
 * printed: for an ASM of 1,000 containers listing 100,000 primitive names,
 * the tree cost a third of the whole conversion.
 *
 * The bytes must be those json-c printed (archive.c's archive_to_json and
 * trowel_json_text_utf8), so this path is taken only when they are known
 * to be: no "group.key" keys (json-c nests them), no key given twice in an
 * object (json-c keeps the first place and the last value), no double
 * (json-c's own number format), and every key and string valid UTF-8 (else
 * json-c's document is rewritten as json_utf8.c says). Anything else goes
 * the json-c way, as before.
 */
#include "archive_json_head.h"
#include "module.h"

#include <string.h>

/* Keys the head writes itself around the info fields. */
static const char *const head_keys[] = {"file", "file_size", "filters", "entry_count",
                                        "entries"};
/* Keys every entry object starts with. */
static const char *const entry_keys[] = {"name", "size", "packed_size", "offset", "method"};

static bool utf8_text(const char *s)
{
    return trowel_utf8_valid((const uint8_t *)s, strlen(s));
}

static bool in_keys(const char *key, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, keys[i]) == 0)
            return true;
    return false;
}

/* True when props print here as json-c prints them beside the n fixed
 * keys of their object. */
static bool props_stream(const trowel_props *props, const char *const *fixed, size_t n)
{
    size_t count = trowel_props_count(props);
    for (size_t i = 0; i < count; i++) {
        const trowel_prop *p = trowel_props_at(props, i);
        if (p->type == TROWEL_VALUE_DOUBLE || strchr(p->key, '.') || !utf8_text(p->key) ||
            in_keys(p->key, fixed, n))
            return false;
        for (size_t k = 0; k < i; k++)
            if (strcmp(trowel_props_at(props, k)->key, p->key) == 0)
                return false;
        if (p->type == TROWEL_VALUE_STRING && !utf8_text(p->s))
            return false;
        for (size_t k = 0; p->type == TROWEL_VALUE_STRING_LIST && k < p->list_len; k++)
            if (!utf8_text(p->list[k]))
                return false;
    }
    return true;
}

bool trowel_archive_json_head_streams(const trowel_archive *a)
{
    if (!utf8_text(trowel_input_name(a->in)) ||
        !props_stream(a->info, head_keys, sizeof head_keys / sizeof *head_keys))
        return false;
    for (size_t i = 0; i < a->filter_count; i++)
        if (!utf8_text(a->filter_ids[i]))
            return false;
    for (size_t i = 0; i < a->entry_count; i++) {
        const trowel_entry *e = &a->entries[i];
        if (!utf8_text(e->name) || !utf8_text(e->method) ||
            !props_stream(e->extra, entry_keys, sizeof entry_keys / sizeof *entry_keys))
            return false;
    }
    return true;
}

static void prop_value(trowel_json_writer *w, const trowel_prop *p)
{
    switch (p->type) {
    case TROWEL_VALUE_INT: trowel_jw_int(w, p->i); break;
    case TROWEL_VALUE_UINT: trowel_jw_uint(w, p->u); break;
    case TROWEL_VALUE_BOOL: trowel_jw_bool(w, p->i != 0); break;
    case TROWEL_VALUE_STRING: trowel_jw_string(w, p->s); break;
    case TROWEL_VALUE_STRING_LIST:
        trowel_jw_begin_array(w);
        for (size_t i = 0; i < p->list_len; i++)
            trowel_jw_string(w, p->list[i]);
        trowel_jw_end_array(w);
        break;
    default: trowel_jw_null(w); break; /* doubles never come here */
    }
}

static void props_members(trowel_json_writer *w, const trowel_props *props)
{
    for (size_t i = 0; i < trowel_props_count(props); i++) {
        const trowel_prop *p = trowel_props_at(props, i);
        trowel_jw_key(w, p->key);
        prop_value(w, p);
    }
}

static void entry_object(trowel_json_writer *w, const trowel_entry *e)
{
    trowel_jw_begin_object(w);
    TROWEL_JW_KEY(w, "name");
    trowel_jw_string(w, e->name);
    TROWEL_JW_KEY(w, "size");
    trowel_jw_uint(w, e->size);
    TROWEL_JW_KEY(w, "packed_size");
    trowel_jw_uint(w, e->packed_size);
    TROWEL_JW_KEY(w, "offset");
    trowel_jw_uint(w, e->offset);
    TROWEL_JW_KEY(w, "method");
    trowel_jw_string(w, e->method);
    props_members(w, e->extra);
    trowel_jw_end_object(w);
}

void trowel_archive_json_head(const trowel_archive *a, trowel_json_writer *w)
{
    TROWEL_JW_KEY(w, "file");
    trowel_jw_string(w, trowel_input_name(a->in));
    props_members(w, a->info);
    TROWEL_JW_KEY(w, "file_size");
    trowel_jw_uint(w, trowel_input_size(a->raw_in));
    if (a->filter_count) { /* only when a wrapper was peeled */
        TROWEL_JW_KEY(w, "filters");
        trowel_jw_begin_array(w);
        for (size_t i = 0; i < a->filter_count; i++)
            trowel_jw_string(w, a->filter_ids[i]);
        trowel_jw_end_array(w);
    }
    TROWEL_JW_KEY(w, "entry_count");
    trowel_jw_uint(w, a->entry_count);
    TROWEL_JW_KEY(w, "entries");
    trowel_jw_begin_array(w);
    for (size_t i = 0; i < a->entry_count && w->s == TROWEL_OK; i++)
        entry_object(w, &a->entries[i]);
    trowel_jw_end_array(w);
}
