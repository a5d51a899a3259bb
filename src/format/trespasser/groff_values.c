/*
 * GRF value tables: the attribute section the .region record points to,
 * written by the attribute compiler from the level designers' text
 * properties ("Class", "Mass", ...). Read into memory, checked as it is
 * read, and shown as JSON (convert --to values) or used to give each placed
 * object its class.
 *
 * Layout (little-endian; strings are NUL-terminated, without a length):
 *   string   table name
 *   object handle record {string class, u32 base, u32 next, u32 count, u8 in use}
 *   string   symbol-table name, u32 n, n x {string name, CHandle}
 *   object handle record (of the values)
 *   u32 n, n x value
 * A CHandle is {u32 id, u32 reference count}; handles compare by id. A value
 * is u8 type (1 bool, 2 char, 3 int, 4 float, 5 string, 6 object, 7 scene
 * node), u8 scope, u8 reference status, CHandles value, symbol and target,
 * the payload (bool and char 1 byte, int and float 4, a string, or u32 n and
 * n CHandles for an object), then the CHandle it is filed under. The game
 * stops reading at a type it has no class for (0 and 7); so does trowel,
 * with an error.
 */
#include "groff_values.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct cursor {
    trowel_ctx *ctx;
    const uint8_t *p;
    size_t len, at;
    uint64_t base; /* the section's offset in the file, for messages */
    trowel_status status;
} cursor;

static bool need(cursor *c, size_t n, const char *what)
{
    if (c->status != TROWEL_OK)
        return false;
    if (n > c->len - c->at) {
        c->status = trowel_fail(c->ctx, TROWEL_ERR_CORRUPT, c->base + c->at,
                                "the value table's %s runs past the section's end", what);
        return false;
    }
    return true;
}

static uint32_t get_u32(cursor *c, const char *what)
{
    if (!need(c, 4, what))
        return 0;
    const uint8_t *p = c->p + c->at;
    c->at += 4;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint8_t get_u8(cursor *c, const char *what)
{
    if (!need(c, 1, what))
        return 0;
    return c->p[c->at++];
}

/* A NUL-terminated string inside the buffer (the buffer outlives it). */
static const char *get_string(cursor *c, const char *what)
{
    if (c->status != TROWEL_OK)
        return "";
    const uint8_t *nul = memchr(c->p + c->at, 0, c->len - c->at);
    if (!nul) {
        c->status = trowel_fail(c->ctx, TROWEL_ERR_CORRUPT, c->base + c->at,
                                "the value table's %s has no end (no NUL before the section's end)",
                                what);
        return "";
    }
    const char *s = (const char *)(c->p + c->at);
    c->at = (size_t)(nul - c->p) + 1;
    return s;
}

static void skip_object_handle_record(cursor *c)
{
    get_string(c, "handle record");
    for (int i = 0; i < 3; i++)
        get_u32(c, "handle record");
    get_u8(c, "handle record");
}

static void *alloc_array(cursor *c, uint64_t n, size_t size, size_t min_bytes_each,
                         const char *what)
{
    if (c->status != TROWEL_OK)
        return NULL;
    /* Every item takes at least min_bytes_each bytes of what is left. */
    if (n > (c->len - c->at) / min_bytes_each) {
        c->status = trowel_fail(c->ctx, TROWEL_ERR_CORRUPT, c->base + c->at,
                                "the value table's %llu %s cannot fit in the %zu bytes left",
                                (unsigned long long)n, what, c->len - c->at);
        return NULL;
    }
    void *p;
    c->status = trowel_mem_new_zeroed(c->ctx, n ? n : 1, size, &p);
    return p;
}

static int compare_keys(const void *a, const void *b)
{
    uint32_t x = ((const grf_value *)a)->key, y = ((const grf_value *)b)->key;
    return x < y ? -1 : x > y;
}

static void read_value(cursor *c, grf_values *t, grf_value *v, size_t i)
{
    size_t start = c->at;
    v->type = get_u8(c, "value type");
    v->scope = get_u8(c, "value scope");
    v->ref = get_u8(c, "value reference status");
    v->id = get_u32(c, "value handle");
    get_u32(c, "value handle");
    v->symbol = get_u32(c, "value symbol");
    get_u32(c, "value symbol");
    v->target = get_u32(c, "value target");
    get_u32(c, "value target");
    switch (v->type) {
    case GRF_VALUE_BOOL:
    case GRF_VALUE_CHAR: v->i = get_u8(c, "value"); break;
    case GRF_VALUE_INT: v->i = (int32_t)get_u32(c, "value"); break;
    case GRF_VALUE_FLOAT: {
        uint32_t u = get_u32(c, "value");
        float f;
        memcpy(&f, &u, 4);
        v->f = f;
        break;
    }
    case GRF_VALUE_STRING: v->s = get_string(c, "string value"); break;
    case GRF_VALUE_OBJECT: {
        v->member_count = get_u32(c, "object member count");
        v->members = alloc_array(c, v->member_count, sizeof *v->members, 8, "object members");
        for (uint32_t k = 0; v->members && k < v->member_count; k++) {
            v->members[k] = get_u32(c, "object member");
            get_u32(c, "object member");
        }
        break;
    }
    default:
        if (c->status == TROWEL_OK)
            c->status = trowel_fail(c->ctx, TROWEL_ERR_UNSUPPORTED, c->base + start,
                                    "value %zu of the value table has type %u, which the game "
                                    "does not read",
                                    i, v->type);
        return;
    }
    v->key = get_u32(c, "value key");
    get_u32(c, "value key");
    (void)t;
}

trowel_status grf_values_read(trowel_ctx *ctx, const uint8_t *data, size_t size, uint64_t base,
                              grf_values *t)
{
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    cursor c = {ctx, data, size, 0, base, TROWEL_OK};
    t->name = get_string(&c, "name");
    skip_object_handle_record(&c);
    t->symtab_name = get_string(&c, "symbol-table name");
    t->symbol_count = get_u32(&c, "symbol count");
    t->symbols = alloc_array(&c, t->symbol_count, sizeof *t->symbols, 9, "symbols");
    for (uint32_t i = 0; t->symbols && i < t->symbol_count && c.status == TROWEL_OK; i++) {
        t->symbols[i].name = get_string(&c, "symbol name");
        t->symbols[i].id = get_u32(&c, "symbol handle");
        get_u32(&c, "symbol handle");
    }
    skip_object_handle_record(&c);
    t->value_count = get_u32(&c, "value count");
    /* The smallest value: 3 bytes, 3 handles, 1 byte, a key. */
    t->values = alloc_array(&c, t->value_count, sizeof *t->values, 36, "values");
    for (uint32_t i = 0; t->values && i < t->value_count && c.status == TROWEL_OK; i++)
        read_value(&c, t, &t->values[i], i);
    if (c.status == TROWEL_OK && c.at != c.len)
        c.status = trowel_fail(ctx, TROWEL_ERR_CORRUPT, base + c.at,
                               "%zu bytes follow the value table's last value", c.len - c.at);
    if (c.status != TROWEL_OK) {
        grf_values_free(t);
        return c.status;
    }
    /* Keep the written order for JSON; a sorted copy for lookups. */
    trowel_status s =
        trowel_mem_new(ctx, (t->value_count ? t->value_count : 1) * sizeof *t->by_key, &t->by_key);
    if (s != TROWEL_OK) {
        grf_values_free(t);
        return s;
    }
    memcpy(t->by_key, t->values, t->value_count * sizeof *t->by_key);
    qsort(t->by_key, t->value_count, sizeof *t->by_key, compare_keys);
    return TROWEL_OK;
}

void grf_values_free(grf_values *t)
{
    if (!t || !t->ctx)
        return;
    for (uint32_t i = 0; t->values && i < t->value_count; i++)
        trowel_mem_free(t->ctx, t->values[i].members);
    trowel_mem_free(t->ctx, t->values);
    trowel_mem_free(t->ctx, t->by_key);
    trowel_mem_free(t->ctx, t->symbols);
    memset(t, 0, sizeof *t);
}

const grf_value *grf_values_find(const grf_values *t, uint32_t key)
{
    size_t lo = 0, hi = t->value_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t k = t->by_key[mid].key;
        if (k == key)
            return &t->by_key[mid];
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const char *grf_values_symbol(const grf_values *t, uint32_t id)
{
    for (uint32_t i = 0; i < t->symbol_count; i++)
        if (t->symbols[i].id == id)
            return t->symbols[i].name;
    return NULL;
}

const char *grf_values_class(const grf_values *t, uint32_t object)
{
    const grf_value *o = grf_values_find(t, object);
    if (!o || o->type != GRF_VALUE_OBJECT)
        return NULL;
    for (uint32_t k = 0; k < o->member_count; k++) {
        const grf_value *m = grf_values_find(t, o->members[k]);
        const char *name = m ? grf_values_symbol(t, m->symbol) : NULL;
        if (m && m->type == GRF_VALUE_STRING && name && strcmp(name, "Class") == 0)
            return m->s;
    }
    return NULL;
}

static const char *const type_names[] = {"null", "bool",   "char", "int",
                                         "float", "string", "object", "node"};

static json_object *value_json(const grf_values *t, const grf_value *v)
{
    json_object *o = json_object_new_object();
    const char *sym = grf_values_symbol(t, v->symbol);
    json_object_object_add(o, "key", json_object_new_int64(v->key));
    json_object_object_add(o, "symbol", sym ? json_object_new_string(sym) : NULL);
    json_object_object_add(o, "type", json_object_new_string(type_names[v->type & 7]));
    json_object_object_add(o, "scope", json_object_new_int(v->scope));
    switch (v->type) {
    case GRF_VALUE_BOOL:
        json_object_object_add(o, "value", json_object_new_boolean(v->i != 0));
        break;
    case GRF_VALUE_CHAR:
    case GRF_VALUE_INT: json_object_object_add(o, "value", json_object_new_int64(v->i)); break;
    case GRF_VALUE_FLOAT:
        json_object_object_add(o, "value", json_object_new_double(isfinite(v->f) ? v->f : 0.0));
        break;
    case GRF_VALUE_STRING: json_object_object_add(o, "value", json_object_new_string(v->s)); break;
    case GRF_VALUE_OBJECT: {
        json_object *m = json_object_new_array();
        for (uint32_t k = 0; k < v->member_count; k++)
            json_object_array_add(m, json_object_new_int64(v->members[k]));
        json_object_object_add(o, "members", m);
        break;
    }
    default: break;
    }
    return o;
}

struct json_object *grf_values_json(const grf_values *t)
{
    json_object *root = json_object_new_object();
    json_object_object_add(root, "name", json_object_new_string(t->name));
    json_object_object_add(root, "symbol_table", json_object_new_string(t->symtab_name));
    json_object *syms = json_object_new_array();
    for (uint32_t i = 0; i < t->symbol_count; i++) {
        json_object *s = json_object_new_object();
        json_object_object_add(s, "name", json_object_new_string(t->symbols[i].name));
        json_object_object_add(s, "handle", json_object_new_int64(t->symbols[i].id));
        json_object_array_add(syms, s);
    }
    json_object_object_add(root, "symbols", syms);
    json_object *vals = json_object_new_array();
    for (uint32_t i = 0; i < t->value_count; i++)
        json_object_array_add(vals, value_json(t, &t->values[i]));
    json_object_object_add(root, "values", vals);
    return root;
}
