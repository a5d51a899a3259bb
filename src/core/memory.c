/*
 * Limit-aware allocation. Each block carries a small header with its size so
 * the context can keep a live total and refuse what would pass its limit,
 * the way liblzma's memlimit refuses a stream instead of exhausting memory.
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

/* Keeps the payload aligned for any type. */
typedef union block_header {
    size_t size;
    max_align_t align;
} block_header;

static trowel_status admit(trowel_ctx *ctx, uint64_t size, const char *what)
{
    uint64_t total;
    if (trowel_add_overflows(ctx->mem_in_use, size, &total) || total > ctx->mem_limit)
        return trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                           "%s needs %llu bytes, over the memory limit of %llu bytes", what,
                           (unsigned long long)size, (unsigned long long)ctx->mem_limit);
    return TROWEL_OK;
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

void *trowel_mem_alloc(trowel_ctx *ctx, size_t size)
{
    if (admit(ctx, size, "an allocation") != TROWEL_OK)
        return NULL;
    if (size > SIZE_MAX - sizeof(block_header))
        return NULL;
    block_header *h = injected_failure(ctx) ? NULL : malloc(sizeof *h + size);
    if (!h) {
        trowel_fail(ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "out of memory (%zu bytes)", size);
        return NULL;
    }
    h->size = size;
    ctx->mem_in_use += size;
    return h + 1;
}

void *trowel_mem_calloc(trowel_ctx *ctx, size_t count, size_t size)
{
    uint64_t total;
    if (trowel_mul_overflows(count, size, &total) || total > SIZE_MAX) {
        trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET, "%zu items of %zu bytes overflow",
                    count, size);
        return NULL;
    }
    void *p = trowel_mem_alloc(ctx, (size_t)total);
    if (p)
        memset(p, 0, (size_t)total);
    return p;
}

void *trowel_mem_realloc(trowel_ctx *ctx, void *p, size_t size)
{
    if (!p)
        return trowel_mem_alloc(ctx, size);
    block_header *h = (block_header *)p - 1;
    size_t old = h->size;
    if (size > old && admit(ctx, size - old, "growing a buffer") != TROWEL_OK)
        return NULL;
    if (size > SIZE_MAX - sizeof(block_header))
        return NULL;
    block_header *n = injected_failure(ctx) ? NULL : realloc(h, sizeof *h + size);
    if (!n) {
        trowel_fail(ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "out of memory (%zu bytes)", size);
        return NULL;
    }
    n->size = size;
    ctx->mem_in_use = ctx->mem_in_use - old + size;
    return n + 1;
}

void trowel_mem_free(trowel_ctx *ctx, void *p)
{
    if (!p)
        return;
    block_header *h = (block_header *)p - 1;
    ctx->mem_in_use -= h->size;
    free(h);
}

char *trowel_mem_strdup(trowel_ctx *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = trowel_mem_alloc(ctx, n);
    if (d)
        memcpy(d, s, n);
    return d;
}
