/*
 * The context: memory limit, last error, warning and progress callbacks.
 * Everything the library would otherwise keep in globals lives here.
 */
#include "core.h"
#include "bytes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

const char *trowel_version(void)
{
    return TROWEL_VERSION_STRING;
}

const char *trowel_status_string(trowel_status status)
{
    switch (status) {
    case TROWEL_OK: return "success";
    case TROWEL_ERR_IO: return "input/output error";
    case TROWEL_ERR_TRUNCATED: return "truncated data";
    case TROWEL_ERR_CORRUPT: return "corrupt data";
    case TROWEL_ERR_UNSUPPORTED: return "unsupported";
    case TROWEL_ERR_LIMIT: return "memory limit exceeded";
    case TROWEL_ERR_NOMEM: return "out of memory";
    case TROWEL_ERR_UNSAFE_PATH: return "unsafe path";
    case TROWEL_ERR_EXISTS: return "file exists";
    case TROWEL_ERR_USAGE: return "bad usage";
    case TROWEL_ERR_VERIFY: return "verification failed";
    }
    return "unknown status";
}

trowel_ctx *trowel_ctx_new(void)
{
    trowel_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx)
        ctx->mem_limit = TROWEL_DEFAULT_MEM_LIMIT;
    return ctx;
}

void trowel_ctx_free(trowel_ctx *ctx)
{
    free(ctx);
}

void trowel_ctx_set_mem_limit(trowel_ctx *ctx, uint64_t bytes)
{
    ctx->mem_limit = bytes ? bytes : TROWEL_DEFAULT_MEM_LIMIT;
}

uint64_t trowel_ctx_mem_limit(const trowel_ctx *ctx)
{
    return ctx->mem_limit;
}

uint64_t trowel_ctx_mem_in_use(const trowel_ctx *ctx)
{
    return ctx->mem_in_use;
}

void trowel_ctx_set_threads(trowel_ctx *ctx, unsigned threads)
{
    ctx->threads = threads;
}

unsigned trowel_ctx_threads(const trowel_ctx *ctx)
{
    return ctx->threads;
}

unsigned trowel_threads_for(const trowel_ctx *ctx, size_t pieces)
{
    unsigned t = ctx->threads;
    if (t == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        t = cpus > 0 ? (cpus < 64 ? (unsigned)cpus : 64u) : 1u;
    }
    if (t > pieces)
        t = pieces ? (unsigned)pieces : 1u;
    return t;
}

void trowel_ctx_set_warning_handler(trowel_ctx *ctx, trowel_warning_fn fn, void *user)
{
    ctx->warn_fn = fn;
    ctx->warn_user = user;
}

void trowel_ctx_set_note_handler(trowel_ctx *ctx, trowel_warning_fn fn, void *user)
{
    ctx->note_fn = fn;
    ctx->note_user = user;
}

void trowel_ctx_set_progress_handler(trowel_ctx *ctx, trowel_progress_fn fn, void *user)
{
    ctx->progress_fn = fn;
    ctx->progress_user = user;
}

void trowel_ctx_set_temp_handler(trowel_ctx *ctx, trowel_temp_fn fn, void *user)
{
    ctx->temp_fn = fn;
    ctx->temp_user = user;
}

const trowel_error *trowel_ctx_last_error(const trowel_ctx *ctx)
{
    return &ctx->last_error;
}

void trowel_ctx_clear_error(trowel_ctx *ctx)
{
    memset(&ctx->last_error, 0, sizeof ctx->last_error);
    ctx->last_error.offset = TROWEL_NO_OFFSET;
}

TROWEL_PRINTF(5, 0)
static void fill_error(trowel_ctx *ctx, trowel_error *e, trowel_status status, uint64_t offset,
                       const char *fmt, va_list ap)
{
    /* Format first into a local buffer: callers may quote the previous
     * error (ctx->last_error.message), which e may be. */
    char message[sizeof e->message];
    vsnprintf(message, sizeof message, fmt, ap);
    e->status = status;
    e->offset = offset;
    snprintf(e->entry, sizeof e->entry, "%s", ctx->entry);
    memcpy(e->message, message, sizeof message);
}

trowel_status trowel_vfail(trowel_ctx *ctx, trowel_status status, uint64_t offset,
                           const char *fmt, va_list ap)
{
    fill_error(ctx, &ctx->last_error, status, offset, fmt, ap);
    return status;
}

trowel_status trowel_fail(trowel_ctx *ctx, trowel_status status, uint64_t offset,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    trowel_vfail(ctx, status, offset, fmt, ap);
    va_end(ap);
    return status;
}

void trowel_warn(trowel_ctx *ctx, uint64_t offset, const char *fmt, ...)
{
    if (!ctx->warn_fn)
        return;
    trowel_error w;
    va_list ap;
    va_start(ap, fmt);
    fill_error(ctx, &w, TROWEL_OK, offset, fmt, ap);
    va_end(ap);
    ctx->warn_fn(ctx->warn_user, &w);
}

void trowel_pass_warnings(trowel_ctx *ctx, const trowel_error *list, size_t count, size_t from,
                          size_t to)
{
    for (size_t i = from; i < to && i < count; i++)
        if (ctx->warn_fn)
            ctx->warn_fn(ctx->warn_user, &list[i]);
}

void trowel_note(trowel_ctx *ctx, const char *fmt, ...)
{
    if (!ctx->note_fn)
        return;
    trowel_error n;
    va_list ap;
    va_start(ap, fmt);
    fill_error(ctx, &n, TROWEL_OK, TROWEL_NO_OFFSET, fmt, ap);
    va_end(ap);
    ctx->note_fn(ctx->note_user, &n);
}

void trowel_set_entry(trowel_ctx *ctx, const char *name)
{
    /* As snprintf "%s" would, without its cost: called for every entry. */
    ctx->entry[trowel_text_put_cut(ctx->entry, sizeof ctx->entry, 0, name ? name : "")] = '\0';
}

void trowel_progress(trowel_ctx *ctx, uint64_t done, uint64_t total)
{
    if (!ctx->progress_fn)
        return;
    if (ctx->progress_total) {
        /* A piece of a larger whole: scale into its share. */
        uint64_t part = done;
        if (total && total != ctx->progress_span)
            part = (uint64_t)((double)done / (double)total * (double)ctx->progress_span);
        if (part > ctx->progress_span)
            part = ctx->progress_span;
        done = ctx->progress_base + part;
        total = ctx->progress_total;
    }
    ctx->progress_fn(ctx->progress_user, done, total);
}

void trowel_progress_scope(trowel_ctx *ctx, uint64_t base, uint64_t span, uint64_t total)
{
    ctx->progress_base = base;
    ctx->progress_span = span;
    ctx->progress_total = total;
}

void trowel_free(void *p)
{
    free(p);
}

uint32_t trowel_crc32_update(uint32_t crc, const void *data, size_t size)
{
    /* zlib's crc32 takes a uInt length: feed it in slices. */
    const unsigned char *p = data;
    while (size > 0) {
        uInt n = size > (1u << 30) ? (1u << 30) : (uInt)size;
        crc = (uint32_t)crc32(crc, p, n);
        p += n;
        size -= n;
    }
    return crc;
}

uint32_t trowel_crc32(uint32_t crc, const void *data, size_t size)
{
    return trowel_crc32_update(crc, data, size);
}
