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

/* what: what the memory is for; NULL takes the context's purpose. */
static trowel_status admit(trowel_ctx *ctx, uint64_t size, const char *what)
{
    uint64_t total;
    if (!trowel_add_overflows(ctx->mem_in_use, size, &total) && total <= ctx->mem_limit)
        return TROWEL_OK;
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

void *trowel_mem_alloc(trowel_ctx *ctx, size_t size)
{
    if (admit(ctx, size, NULL) != TROWEL_OK)
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
    if (size > old && admit(ctx, size - old, NULL) != TROWEL_OK)
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
