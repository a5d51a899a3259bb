/*
 * Property lists: ordered key/value pairs for `info` fields and the
 * format-specific keys of entries. The CLI renders them as text or JSON, so
 * formats never format output themselves.
 */
#include "core.h"
#include "module.h"

#include <math.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Owned strings (keys, values, list items and the lists' arrays) are cut
 * from chunks, not allocated one by one: an entry with a list of 100 names
 * took 106 allocations and as many frees (a third of opening a large ASM).
 * A list's first chunk is small (most entries hold two or three short
 * keys) and each next one twice its size, up to CHUNK_MAX; a block bigger
 * than a quarter of that gets a chunk of its own.
 *
 * Lists made within another (trowel_props_create_within: an archive's
 * entries) go further: the list itself, its items and its blocks are cut
 * from the other's chunks, and freeing it frees nothing. Opening TF2's
 * scenes.image made 5,099 lists of 3 to 6 allocations each, and freeing
 * them took as long as making them. */
#define CHUNK_FIRST ((size_t)64)
#define CHUNK_MAX ((size_t)64 << 10)
#define CHUNK_HOLDING ((size_t)4 << 10) /* each chunk of a list holding others */

struct trowel_props {
    trowel_ctx *ctx;
    trowel_prop *items;
    size_t len, cap;
    /* the chunks owned by the list, freed with it */
    char **owned;
    size_t owned_len, owned_cap;
    char *room;        /* the unused end of the last chunk */
    size_t room_left;
    size_t chunk_size; /* of the last chunk cut into (not of one of its own) */
    trowel_props *within; /* NULL, or the list whose chunks hold all of this one */
    bool holds;           /* lists are within this one: its chunks are CHUNK_HOLDING */
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
    if (!p || p->within) /* its memory is the other list's */
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

/* A new chunk of size bytes, kept for freeing with the list. */
static char *new_chunk(trowel_props *p, size_t size)
{
    if (!grow(p->ctx, (void **)&p->owned, &p->owned_cap, p->owned_len + 1, sizeof(char *)))
        return NULL;
    char *d = trowel_mem_alloc(p->ctx, size);
    if (d)
        p->owned[p->owned_len++] = d;
    return d;
}

/* A block of size bytes (not zeroed) that lives as long as the list (or
 * the list it is within), aligned for anything when aligned is set (a
 * list's array, a list or its items). */
static void *own_block(trowel_props *p, size_t size, bool aligned)
{
    if (p->within)
        p = p->within;
    size_t skip = 0, align = alignof(max_align_t);
    if (aligned && p->room_left)
        skip = (align - (uintptr_t)p->room % align) % align;
    if (p->room_left >= skip && p->room_left - skip >= size) {
        char *d = p->room + skip;
        p->room = d + size;
        p->room_left -= skip + size;
        return d;
    }
    if (size > CHUNK_MAX / 4) /* a chunk of its own; the room left stays */
        return new_chunk(p, size);
    /* A list holding others doubles only up to 4 KiB, so that what it
     * holds ahead of need stays small under a tight limit. */
    size_t most = p->holds ? CHUNK_HOLDING : CHUNK_MAX;
    size_t next = p->chunk_size ? p->chunk_size * 2 : CHUNK_FIRST;
    if (next > most)
        next = most;
    while (next < size)
        next *= 2;
    if (next > CHUNK_MAX)
        next = CHUNK_MAX;
    char *d = new_chunk(p, next); /* malloc's blocks are aligned for anything */
    if (!d)
        return NULL;
    p->chunk_size = next;
    p->room = d + size;
    p->room_left = next - size;
    return d;
}

/* Room for need items: within another list, a new array cut from its
 * chunks (the old one stays there: lists within grow to a few items). */
static bool grow_items(trowel_props *p, size_t need)
{
    if (!p->within || need <= p->cap)
        return grow(p->ctx, (void **)&p->items, &p->cap, need, sizeof(trowel_prop));
    size_t n = p->cap ? p->cap * 2 : 4; /* entries have up to four extra keys */
    while (n < need)
        n *= 2;
    trowel_prop *items = n <= SIZE_MAX / sizeof *items ? own_block(p, n * sizeof *items, true) : NULL;
    if (!items)
        return false;
    if (p->len)
        memcpy(items, p->items, p->len * sizeof *items);
    p->items = items;
    p->cap = n;
    return true;
}

trowel_status trowel_props_create_within(trowel_props *within, trowel_props **out)
{
    within->holds = true;
    trowel_props *p = own_block(within, sizeof *p, true);
    *out = p;
    if (!p)
        return within->ctx->last_error.status;
    memset(p, 0, sizeof *p);
    p->ctx = within->ctx;
    p->within = within;
    return TROWEL_OK;
}

/* A copy of the n bytes at s, NUL-terminated, owned by the list. */
static const char *own(trowel_props *p, const char *s, size_t n)
{
    char *d = n < SIZE_MAX ? own_block(p, n + 1, false) : NULL;
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static trowel_prop *append(trowel_props *p, const char *key, trowel_value_type type)
{
    if (!grow_items(p, p->len + 1))
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
    const char **arr = own_block(p, n ? n * sizeof(char *) : 1, true);
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

trowel_status trowel_props_add_list_kept(trowel_props *p, const char *key,
                                         const char *const *v, size_t n)
{
    trowel_prop *it = append(p, key, TROWEL_VALUE_STRING_LIST);
    if (!it)
        return p->ctx->last_error.status;
    it->list = v;
    it->list_len = n;
    return TROWEL_OK;
}
