/*
 * Output sinks: what every kind shares. A sink is a table of functions (its
 * kind: sink_file.c, sink_fd.c, sink_memory.c, sink_null.c,
 * sink_callbacks.c) and that kind's state; this file keeps the rest, the
 * same for all: the write buffer in front of kinds that want one, the first
 * failure (every later write and the finish report it), the byte count,
 * and the calls into the kind. Nothing here asks which kind a sink is.
 */
#include "sink.h"

#include <stddef.h>
#include <string.h>

/* Where the kind's state starts in the sink's one allocation. */
#define STATE_OFFSET \
    ((sizeof(trowel_sink) + _Alignof(max_align_t) - 1) / _Alignof(max_align_t) * \
     _Alignof(max_align_t))

trowel_sink *trowel_sink_new(trowel_ctx *ctx, const struct trowel_sink_impl *impl,
                             const char *name)
{
    trowel_sink *s = trowel_mem_calloc(ctx, 1, STATE_OFFSET + impl->state_size);
    if (!s)
        return NULL;
    s->ctx = ctx;
    s->impl = impl;
    s->state = (unsigned char *)s + STATE_OFFSET;
    s->name = trowel_mem_strdup(ctx, name);
    if (s->name && impl->buffer_size) {
        const char *purpose = trowel_mem_purpose(ctx, impl->buffer_purpose);
        s->buf = trowel_mem_alloc(ctx, impl->buffer_size);
        trowel_mem_purpose(ctx, purpose);
    }
    if (!s->name || (impl->buffer_size && !s->buf)) {
        trowel_sink_free(s);
        return NULL;
    }
    return s;
}

void trowel_sink_free(trowel_sink *s)
{
    trowel_ctx *ctx = s->ctx;
    if (s->impl->release)
        s->impl->release(s);
    trowel_mem_free(ctx, s->buf);
    trowel_mem_free(ctx, s->name);
    trowel_mem_free(ctx, s);
}

static trowel_status flush_buffer(trowel_sink *s)
{
    if (s->len == 0)
        return TROWEL_OK;
    trowel_status st = s->impl->write(s, s->buf, s->len);
    s->len = 0;
    return st;
}

/* Through the buffer: a write that fits joins it, one that does not flushes
 * it first, and one as large as the buffer goes straight through. */
static trowel_status buffered_write(trowel_sink *s, const void *data, size_t n)
{
    size_t cap = s->impl->buffer_size;
    if (s->len + n <= cap) {
        if (n)
            memcpy(s->buf + s->len, data, n);
        s->len += n;
        return TROWEL_OK;
    }
    trowel_status st = flush_buffer(s);
    if (st != TROWEL_OK)
        return st;
    if (n >= cap)
        return s->impl->write(s, data, n);
    memcpy(s->buf, data, n);
    s->len = n;
    return TROWEL_OK;
}

trowel_status trowel_sink_write(trowel_sink *s, const void *data, size_t n)
{
    if (s->failed)
        return s->failed;
    trowel_status st = s->buf ? buffered_write(s, data, n) : s->impl->write(s, data, n);
    if (st != TROWEL_OK)
        s->failed = st;
    else
        s->written += n;
    return st;
}

trowel_status trowel_sink_flush(trowel_sink *s)
{
    return s->failed ? s->failed : flush_buffer(s);
}

trowel_status trowel_sink_copy_fd(trowel_sink *s, int fd, uint64_t off, uint64_t n,
                                 uint64_t *copied)
{
    *copied = 0;
    if (s->failed)
        return s->failed;
    if (!s->impl->copy_fd)
        return TROWEL_OK;
    trowel_status st = flush_buffer(s);
    if (st == TROWEL_OK)
        st = s->impl->copy_fd(s, fd, off, n, copied);
    if (st != TROWEL_OK)
        s->failed = st;
    s->written += *copied;
    return st;
}

uint64_t trowel_sink_written(const trowel_sink *s)
{
    return s->written;
}

uint32_t trowel_sink_crc32(const trowel_sink *s)
{
    return s->impl->crc ? s->impl->crc(s) : 0;
}

const uint8_t *trowel_sink_data(const trowel_sink *s, size_t *size)
{
    if (!s->impl->data) {
        *size = 0;
        return NULL;
    }
    return s->impl->data(s, size);
}

trowel_status trowel_sink_reserve(trowel_sink *s, size_t size)
{
    return s->impl->reserve ? s->impl->reserve(s, size) : TROWEL_OK;
}

trowel_status trowel_sink_take(trowel_sink *s, uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    if (!s->impl->take)
        return trowel_fail(s->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "not a memory sink");
    s->impl->take(s, data, size);
    return TROWEL_OK;
}

uint8_t *trowel_sink_room(trowel_sink *s, size_t size)
{
    if (!s->impl->room || s->failed || s->written || size == 0)
        return NULL;
    return s->impl->room(s, size);
}

void trowel_sink_filled(trowel_sink *s, size_t size)
{
    s->impl->filled(s, size);
    s->written = size;
}

bool trowel_sink_takes_positional(trowel_sink *s)
{
    if (!s->impl->pwrite || s->failed || s->written != 0 || s->len != 0)
        return false;
    if (s->impl->begin_positional)
        s->failed = s->impl->begin_positional(s);
    return !s->failed;
}

int trowel_sink_pwrite(trowel_sink *s, uint64_t off, const void *data, size_t n)
{
    return s->impl->pwrite(s, off, data, n);
}

trowel_status trowel_sink_positional_done(trowel_sink *s, uint64_t total, int err)
{
    if (err) {
        s->failed = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot write %s: %s",
                                s->name, strerror(err));
        return s->failed;
    }
    s->written = total;
    return TROWEL_OK;
}

trowel_status trowel_sink_finish(trowel_sink *s)
{
    trowel_status st = s->failed ? s->failed : flush_buffer(s);
    if (s->impl->finish)
        st = s->impl->finish(s, st);
    trowel_sink_free(s);
    return st;
}

void trowel_sink_discard(trowel_sink *s)
{
    if (!s)
        return;
    if (s->impl->discard)
        s->impl->discard(s);
    trowel_sink_free(s);
}
