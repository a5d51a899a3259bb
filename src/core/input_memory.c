/*
 * Memory inputs: a caller's memory (not copied, not owned), memory the
 * library made and hands over (adopted, freed at close), and a stream
 * (standard input, a pipe) read whole into memory the limit counts. All
 * are served from in->mem by input.c without a cache window.
 */
#include "input.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static trowel_status memory_read_at(trowel_input *in, uint64_t off, void *dst, size_t n)
{
    memcpy(dst, in->mem + off, n);
    return TROWEL_OK;
}

static const trowel_input_kind memory_kind = {
    .read_at = memory_read_at,
};

trowel_status trowel_input_open_memory(trowel_ctx *ctx, const void *data, size_t size,
                                       const char *name, trowel_input **out)
{
    *out = NULL;
    trowel_input *in = trowel_input_new(ctx, &memory_kind, 0, name, size);
    if (!in)
        return ctx->last_error.status;
    in->mem = data;
    *out = in;
    return TROWEL_OK;
}

trowel_status trowel_input_adopt_memory(trowel_ctx *ctx, uint8_t *data, size_t size,
                                        const char *name, trowel_input **out)
{
    *out = NULL;
    trowel_input *in = trowel_input_new(ctx, &memory_kind, 0, name, size);
    if (!in) {
        trowel_mem_free(ctx, data);
        return ctx->last_error.status;
    }
    in->owned = data; /* freed at close */
    in->mem = data ? data : (const uint8_t *)"";
    *out = in;
    return TROWEL_OK;
}

/* Memory that stands for bytes [origin, origin + size) of a larger input
 * (a span loaded from a file, handed to another thread): offsets are the
 * larger input's, so everything read through it is reported where it lies
 * in the file. Bytes below origin are not there; readers over it only
 * window the span. */
typedef struct shifted_memory {
    const uint8_t *data;
    uint64_t origin;
} shifted_memory;

static const uint8_t *shifted(const trowel_input *in, uint64_t off)
{
    const shifted_memory *m = in->impl;
    return m->data + (off - m->origin);
}

static trowel_status not_loaded(trowel_input *in, uint64_t off)
{
    return trowel_fail(in->ctx, TROWEL_ERR_IO, off, "byte 0x%llx was not loaded",
                       (unsigned long long)off);
}

static trowel_status shifted_read_at(trowel_input *in, uint64_t off, void *dst, size_t n)
{
    if (off < ((const shifted_memory *)in->impl)->origin)
        return not_loaded(in, off);
    memcpy(dst, shifted(in, off), n);
    return TROWEL_OK;
}

static trowel_status shifted_span_at(trowel_input *in, uint64_t off, size_t want,
                                     const uint8_t **out, size_t *got)
{
    if (off < ((const shifted_memory *)in->impl)->origin)
        return not_loaded(in, off);
    *out = shifted(in, off);
    *got = want;
    return TROWEL_OK;
}

static const trowel_input_kind shifted_kind = {
    .read_at = shifted_read_at,
    .span_at = shifted_span_at,
};

trowel_status trowel_input_open_memory_at(trowel_ctx *ctx, const void *data, size_t size,
                                          uint64_t origin, const char *name, trowel_input **out)
{
    *out = NULL;
    uint64_t end;
    if (trowel_add_overflows(origin, size, &end))
        return trowel_fail(ctx, TROWEL_ERR_LIMIT, origin, "a span of %zu bytes at 0x%llx overflows",
                           size, (unsigned long long)origin);
    trowel_input *in = trowel_input_new(ctx, &shifted_kind, sizeof(shifted_memory), name, end);
    if (!in)
        return ctx->last_error.status;
    shifted_memory *m = in->impl;
    m->data = data;
    m->origin = origin;
    *out = in;
    return TROWEL_OK;
}

/* One read of up to n bytes into buf, EINTR retried: bytes read, 0 at the
 * end, -1 on error (errno set). */
static ssize_t read_some(int fd, uint8_t *buf, size_t n)
{
    ssize_t got;
    do
        got = read(fd, buf, n);
    while (got < 0 && errno == EINTR);
    return got;
}

trowel_status trowel_input_open_stream(trowel_ctx *ctx, int fd, const char *name,
                                       trowel_input **out)
{
    *out = NULL;
    trowel_input *in = trowel_input_new(ctx, &memory_kind, 0, name, 0);
    if (!in)
        return ctx->last_error.status;
    in->name_is_label = true;
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            /* Grow by doubling, but never past what the limit allows: the
             * last byte that fits is still taken. */
            uint64_t room = ctx->mem_limit > ctx->mem_in_use ? ctx->mem_limit - ctx->mem_in_use
                                                            : 0;
            size_t more = cap ? cap : (size_t)1 << 16;
            if (more > room)
                more = (size_t)room;
            if (more == 0) {
                uint8_t probe;
                ssize_t got = read_some(fd, &probe, 1);
                if (got == 0)
                    break;
                trowel_mem_free(ctx, buf);
                trowel_input_close(in);
                return got < 0 ? trowel_fail(ctx, TROWEL_ERR_IO, len, "read failed: %s",
                                             strerror(errno))
                               : trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                                             "larger than the memory limit (%llu bytes)",
                                             (unsigned long long)ctx->mem_limit);
            }
            uint8_t *grown = trowel_mem_realloc(ctx, buf, cap + more);
            if (!grown) {
                trowel_mem_free(ctx, buf);
                trowel_input_close(in);
                return ctx->last_error.status;
            }
            buf = grown;
            cap += more;
        }
        ssize_t got = read_some(fd, buf + len, cap - len);
        if (got < 0) {
            int err = errno;
            trowel_mem_free(ctx, buf);
            trowel_input_close(in);
            return trowel_fail(ctx, TROWEL_ERR_IO, len, "read failed: %s", strerror(err));
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    if (len && len < cap) { /* give back what doubling took beyond the data */
        uint8_t *fit = trowel_mem_realloc(ctx, buf, len);
        buf = fit ? fit : buf;
    }
    in->owned = buf; /* freed at close */
    in->mem = buf ? buf : (const uint8_t *)"";
    in->size = len;
    *out = in;
    return TROWEL_OK;
}
