/*
 * Memory sinks: the bytes kept in one buffer, grown by doubling within the
 * context's memory limit. A decoder that knows its output size reserves it
 * (no doublings, no slack) and may then fill that room in place
 * (trowel_sink_room).
 */
#include "sink.h"

#include <stdint.h>
#include <string.h>

struct memory_state {
    uint8_t *data;
    size_t len, cap;
};

static struct memory_state *mem_of(const trowel_sink *s)
{
    return s->state;
}

static trowel_status resize(trowel_sink *s, size_t cap)
{
    struct memory_state *m = mem_of(s);
    const char *purpose = trowel_mem_purpose(s->ctx, "the output kept in memory");
    uint8_t *b = trowel_mem_realloc(s->ctx, m->data, cap);
    trowel_mem_purpose(s->ctx, purpose);
    if (!b)
        return s->ctx->last_error.status;
    m->data = b;
    m->cap = cap;
    return TROWEL_OK;
}

static trowel_status grow(trowel_sink *s, size_t need)
{
    size_t cap = mem_of(s)->cap ? mem_of(s)->cap : 4096;
    while (cap < need) {
        if (cap > SIZE_MAX / 2)
            return trowel_fail(s->ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET, "output too large");
        cap *= 2;
    }
    return resize(s, cap);
}

static trowel_status memory_write(trowel_sink *s, const void *data, size_t n)
{
    struct memory_state *m = mem_of(s);
    if (n > SIZE_MAX - m->len)
        return trowel_fail(s->ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET, "output too large");
    if (m->len + n > m->cap) {
        trowel_status st = grow(s, m->len + n);
        if (st != TROWEL_OK)
            return st;
    }
    if (n) {
        memcpy(m->data + m->len, data, n);
        m->len += n;
    }
    return TROWEL_OK;
}

static const uint8_t *memory_data(const trowel_sink *s, size_t *size)
{
    *size = mem_of(s)->len;
    return mem_of(s)->data;
}

static void memory_take(trowel_sink *s, uint8_t **data, size_t *size)
{
    struct memory_state *m = mem_of(s);
    *data = m->data;
    *size = m->len;
    m->data = NULL;
    m->len = m->cap = 0;
}

static trowel_status memory_reserve(trowel_sink *s, size_t size)
{
    return size <= mem_of(s)->cap ? TROWEL_OK : resize(s, size);
}

static uint8_t *memory_room(trowel_sink *s, size_t size)
{
    struct memory_state *m = mem_of(s);
    return m->len == 0 && m->cap >= size ? m->data : NULL;
}

static void memory_filled(trowel_sink *s, size_t size)
{
    mem_of(s)->len = size;
}

static void memory_release(trowel_sink *s)
{
    struct memory_state *m = mem_of(s);
    trowel_mem_free(s->ctx, m->data);
}

static const struct trowel_sink_impl memory_impl = {
    .write = memory_write,
    .release = memory_release,
    .data = memory_data,
    .take = memory_take,
    .reserve = memory_reserve,
    .room = memory_room,
    .filled = memory_filled,
    .state_size = sizeof(struct memory_state),
};

trowel_status trowel_sink_open_memory(trowel_ctx *ctx, trowel_sink **out)
{
    *out = trowel_sink_new(ctx, &memory_impl, "(memory)");
    return *out ? TROWEL_OK : ctx->last_error.status;
}
