/*
 * Limit-aware allocation. Each block carries a small header with its size so
 * the context can keep a live total and refuse what would pass its limit,
 * the way liblzma's memlimit refuses a stream instead of exhausting memory.
 */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keeps the payload aligned for any type. */
typedef union block_header {
    size_t size;
    max_align_t align;
} block_header;

/* A byte count as people say it: "900 bytes", "256 KiB", "1.5 GiB" (one
 * decimal, only when it is not a whole number of units). */
static void size_in_words(uint64_t n, char *out, size_t cap)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (n < 1024) {
        snprintf(out, cap, "%llu byte%s", (unsigned long long)n, n == 1 ? "" : "s");
        return;
    }
    size_t u = 0;
    uint64_t unit = 1024;
    while (u + 1 < sizeof units / sizeof units[0] && n / unit >= 1024) {
        unit *= 1024;
        u++;
    }
    uint64_t whole = n / unit;
    uint64_t tenths = (n % unit) * 10 / unit;
    if (tenths)
        snprintf(out, cap, "%llu.%llu %s", (unsigned long long)whole, (unsigned long long)tenths,
                 units[u]);
    else
        snprintf(out, cap, "%llu %s", (unsigned long long)whole, units[u]);
}

static bool fits(const trowel_ctx *ctx, uint64_t size)
{
    uint64_t total;
    return !trowel_add_overflows(ctx->mem_in_use, size, &total) && total <= ctx->mem_limit;
}

void trowel_mem_set_reclaim(trowel_ctx *ctx, void (*fn)(void *user), void *user)
{
    ctx->reclaim_fn = fn;
    ctx->reclaim_user = user;
}

/* what: what the memory is for; NULL takes the context's purpose. */
static trowel_status admit(trowel_ctx *ctx, uint64_t size, const char *what)
{
    if (fits(ctx, size))
        return TROWEL_OK;
    if (ctx->reclaim_fn && !ctx->reclaiming) { /* work done ahead gives way */
        ctx->reclaiming = true;
        ctx->reclaim_fn(ctx->reclaim_user);
        ctx->reclaiming = false;
        if (fits(ctx, size))
            return TROWEL_OK;
    }
    char need[32], used[32], limit[32];
    size_in_words(size, need, sizeof need);
    size_in_words(ctx->mem_in_use, used, sizeof used);
    size_in_words(ctx->mem_limit, limit, sizeof limit);
    if (!what)
        what = ctx->mem_purpose ? ctx->mem_purpose : "working memory";
    return trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                       "over the memory limit: needs %s for %s, %s already in use, limit %s "
                       "(--mem-limit)",
                       need, what, used, limit);
}

const char *trowel_mem_purpose(trowel_ctx *ctx, const char *what)
{
    const char *previous = ctx->mem_purpose;
    ctx->mem_purpose = what;
    return previous;
}

trowel_status trowel_mem_check(trowel_ctx *ctx, uint64_t size, const char *what)
{
    return admit(ctx, size, what);
}

static bool injected_failure(trowel_ctx *ctx)
{
    if (ctx->fail_alloc_after == 0)
        return false;
    return --ctx->fail_alloc_after == 0;
}

/* The one place a block is made or resized: block is NULL for a new one.
 * Every refusal sets the context's error and returns its status, so the
 * status-returning forms below hand on exactly what happened. */
static trowel_status resize_block(trowel_ctx *ctx, void *block, size_t size, void **out)
{
    *out = NULL;
    block_header *h = block ? (block_header *)block - 1 : NULL;
    size_t old = h ? h->size : 0;
    if (h && size <= old) { /* shrinking cannot fail: the old block is big enough */
        block_header *n = realloc(h, sizeof *h + size);
        if (!n) {
            *out = block;
            return TROWEL_OK;
        }
        n->size = size;
        ctx->mem_in_use -= old - size;
        *out = n + 1;
        return TROWEL_OK;
    }
    trowel_status s = admit(ctx, size - old, NULL); /* growing, or a new block */
    if (s != TROWEL_OK)
        return s;
    if (size > SIZE_MAX - sizeof(block_header))
        return trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                           "%zu bytes is more than one block can hold", size);
    block_header *n = injected_failure(ctx) ? NULL : realloc(h, sizeof *h + size);
    if (!n)
        return trowel_fail(ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "out of memory (%zu bytes)",
                           size);
    n->size = size;
    ctx->mem_in_use = ctx->mem_in_use - old + size;
    *out = n + 1;
    return TROWEL_OK;
}

static trowel_status array_bytes(trowel_ctx *ctx, size_t count, size_t size, size_t *total)
{
    uint64_t t;
    if (trowel_mul_overflows(count, size, &t) || t > SIZE_MAX)
        return trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET, "%zu items of %zu bytes overflow",
                           count, size);
    *total = (size_t)t;
    return TROWEL_OK;
}

/* A T ** passed as void *: the pointer is stored through it with memcpy,
 * which is how C lets one function fill pointers of any object type. */
static trowel_status store_pointer(void *out_ptr, void *p, trowel_status s)
{
    memcpy(out_ptr, &p, sizeof p);
    return s;
}

trowel_status trowel_mem_new(trowel_ctx *ctx, size_t size, void *out_ptr)
{
    void *p;
    trowel_status s = resize_block(ctx, NULL, size, &p);
    return store_pointer(out_ptr, p, s);
}

trowel_status trowel_mem_new_zeroed(trowel_ctx *ctx, size_t count, size_t size, void *out_ptr)
{
    size_t total = 0;
    void *p = NULL;
    trowel_status s = array_bytes(ctx, count, size, &total);
    if (s == TROWEL_OK)
        s = resize_block(ctx, NULL, total, &p);
    if (p)
        memset(p, 0, total);
    return store_pointer(out_ptr, p, s);
}

trowel_status trowel_mem_resize(trowel_ctx *ctx, void *inout_ptr, size_t size)
{
    void *old, *p;
    memcpy(&old, inout_ptr, sizeof old);
    trowel_status s = resize_block(ctx, old, size, &p);
    return s == TROWEL_OK ? store_pointer(inout_ptr, p, s) : s;
}

trowel_status trowel_mem_resize_array(trowel_ctx *ctx, void *inout_ptr, size_t count, size_t size)
{
    size_t total = 0;
    trowel_status s = array_bytes(ctx, count, size, &total);
    return s == TROWEL_OK ? trowel_mem_resize(ctx, inout_ptr, total) : s;
}

trowel_status trowel_mem_dup(trowel_ctx *ctx, const char *s, char **out)
{
    size_t n = strlen(s) + 1;
    trowel_status st = trowel_mem_new(ctx, n, out);
    if (st == TROWEL_OK)
        memcpy(*out, s, n);
    return st;
}

trowel_status trowel_mem_dup_bytes(trowel_ctx *ctx, const void *data, size_t size, void *out_ptr)
{
    void *p;
    trowel_status s = resize_block(ctx, NULL, size ? size : 1, &p);
    if (s == TROWEL_OK && size)
        memcpy(p, data, size);
    return store_pointer(out_ptr, p, s);
}

void *trowel_mem_alloc(trowel_ctx *ctx, size_t size)
{
    void *p;
    return resize_block(ctx, NULL, size, &p) == TROWEL_OK ? p : NULL;
}

void *trowel_mem_calloc(trowel_ctx *ctx, size_t count, size_t size)
{
    void *p;
    return trowel_mem_new_zeroed(ctx, count, size, &p) == TROWEL_OK ? p : NULL;
}

void *trowel_mem_realloc(trowel_ctx *ctx, void *p, size_t size)
{
    void *n;
    return resize_block(ctx, p, size, &n) == TROWEL_OK ? n : NULL;
}

void *trowel_mem_disown(trowel_ctx *ctx, void *p)
{
    if (!p)
        return NULL;
    block_header *h = (block_header *)p - 1;
    ctx->mem_in_use -= h->size;
    return h;
}

void trowel_mem_release(void *raw) { free(raw); }

void trowel_mem_free(trowel_ctx *ctx, void *p) { trowel_mem_release(trowel_mem_disown(ctx, p)); }

bool trowel_mem_take_over(trowel_ctx *from, trowel_ctx *to, void *p)
{
    if (!p)
        return true;
    size_t size = ((block_header *)p - 1)->size;
    if (!fits(to, size))
        return false;
    from->mem_in_use -= size;
    to->mem_in_use += size;
    return true;
}

char *trowel_mem_strdup(trowel_ctx *ctx, const char *s)
{
    char *d;
    return trowel_mem_dup(ctx, s, &d) == TROWEL_OK ? d : NULL;
}
