/*
 * Property lists: ordered key/value pairs for `info` fields and the
 * format-specific keys of entries. The CLI renders them as text or JSON, so
 * formats never format output themselves.
 */
#include "core.h"
#include "module.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct trowel_props {
    trowel_ctx *ctx;
    trowel_prop *items;
    size_t len, cap;
    /* strings owned by the list, freed with it */
    char **owned;
    size_t owned_len, owned_cap;
};

static const trowel_props empty_props;

const trowel_props *trowel_props_empty(void)
{
    return &empty_props;
}

trowel_status trowel_props_create(trowel_ctx *ctx, trowel_props **out)
{
    trowel_status s = trowel_mem_new_zeroed(ctx, 1, sizeof **out, out);
    if (s == TROWEL_OK)
        (*out)->ctx = ctx;
    return s;
}

trowel_props *trowel_props_new(trowel_ctx *ctx)
{
    trowel_props *p;
    return trowel_props_create(ctx, &p) == TROWEL_OK ? p : NULL;
}

void trowel_props_free(trowel_props *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->owned_len; i++)
        trowel_mem_free(p->ctx, p->owned[i]);
    trowel_mem_free(p->ctx, p->owned);
    trowel_mem_free(p->ctx, p->items);
    trowel_mem_free(p->ctx, p);
}

size_t trowel_props_count(const trowel_props *p)
{
    return p ? p->len : 0;
}

const trowel_prop *trowel_props_at(const trowel_props *p, size_t index)
{
    return p && index < p->len ? &p->items[index] : NULL;
}

const trowel_prop *trowel_props_find(const trowel_props *p, const char *key)
{
    for (size_t i = 0; p && i < p->len; i++)
        if (strcmp(p->items[i].key, key) == 0)
            return &p->items[i];
    return NULL;
}

static bool grow(trowel_ctx *ctx, void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap * 2 : 2; /* entries have one or two extra keys */
    while (n < need)
        n *= 2;
    void *a = trowel_mem_realloc(ctx, *arr, n * elem);
    if (!a)
        return false;
    *arr = a;
    *cap = n;
    return true;
}

/* A zeroed block of size bytes that lives as long as the list. */
static void *own_block(trowel_props *p, size_t size)
{
    if (!grow(p->ctx, (void **)&p->owned, &p->owned_cap, p->owned_len + 1, sizeof(char *)))
        return NULL;
    char *d = trowel_mem_calloc(p->ctx, 1, size);
    if (d)
        p->owned[p->owned_len++] = d;
    return d;
}

/* A copy of the n bytes at s, NUL-terminated, owned by the list. */
static const char *own(trowel_props *p, const char *s, size_t n)
{
    char *d = n < SIZE_MAX ? own_block(p, n + 1) : NULL;
    if (d)
        memcpy(d, s, n);
    return d;
}

static trowel_prop *append(trowel_props *p, const char *key, trowel_value_type type)
{
    if (!grow(p->ctx, (void **)&p->items, &p->cap, p->len + 1, sizeof(trowel_prop)))
        return NULL;
    const char *k = own(p, key, strlen(key));
    if (!k)
        return NULL;
    trowel_prop *it = &p->items[p->len++];
    memset(it, 0, sizeof *it);
    it->key = k;
    it->type = type;
    return it;
}

trowel_status trowel_props_add_int(trowel_props *p, const char *key, int64_t v)
{
    trowel_prop *it = append(p, key, TROWEL_VALUE_INT);
    if (!it)
        return p->ctx->last_error.status;
    it->i = v;
    return TROWEL_OK;
}

trowel_status trowel_props_add_double(trowel_props *p, const char *key, double v)
{
    trowel_prop *it = append(p, key, TROWEL_VALUE_DOUBLE);
    if (!it)
        return p->ctx->last_error.status;
    it->d = isfinite(v) ? v : 0.0; /* JSON has no NaN or infinity */
    return TROWEL_OK;
}

trowel_status trowel_props_add_uint(trowel_props *p, const char *key, uint64_t v)
{
    trowel_prop *it = append(p, key, TROWEL_VALUE_UINT);
    if (!it)
        return p->ctx->last_error.status;
    it->u = v;
    return TROWEL_OK;
}

trowel_status trowel_props_add_hex(trowel_props *p, const char *key, uint64_t v)
{
    trowel_prop *it = append(p, key, TROWEL_VALUE_UINT);
    if (!it)
        return p->ctx->last_error.status;
    it->u = v;
    it->hex = 1;
    return TROWEL_OK;
}

trowel_status trowel_props_add_bool(trowel_props *p, const char *key, bool v)
{
    trowel_prop *it = append(p, key, TROWEL_VALUE_BOOL);
    if (!it)
        return p->ctx->last_error.status;
    it->i = v;
    return TROWEL_OK;
}

trowel_status trowel_props_add_str(trowel_props *p, const char *key, const char *v)
{
    const char *s = own(p, v, strlen(v));
    trowel_prop *it = s ? append(p, key, TROWEL_VALUE_STRING) : NULL;
    if (!it)
        return p->ctx->last_error.status;
    it->s = s;
    return TROWEL_OK;
}

trowel_status trowel_props_add_list(trowel_props *p, const char *key, const char *const *v, size_t n)
{
    /* The array of pointers is itself an owned block. */
    if (n > SIZE_MAX / sizeof(char *))
        return trowel_fail(p->ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET, "list too long");
    const char **arr = own_block(p, n ? n * sizeof(char *) : 1);
    if (!arr)
        return p->ctx->last_error.status;
    for (size_t i = 0; i < n; i++) {
        arr[i] = own(p, v[i], strlen(v[i]));
        if (!arr[i])
            return p->ctx->last_error.status;
    }
    trowel_prop *it = append(p, key, TROWEL_VALUE_STRING_LIST);
    if (!it)
        return p->ctx->last_error.status;
    it->list = arr;
    it->list_len = n;
    return TROWEL_OK;
}
