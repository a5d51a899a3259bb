/*
 * Null sinks: the bytes are counted (by sink.c) and their CRC-32 kept, then
 * dropped. verify and the benchmarks decode into one.
 */
#include "sink.h"

struct null_state {
    uint32_t crc;
};

static trowel_status null_write(trowel_sink *s, const void *data, size_t n)
{
    struct null_state *z = s->state;
    z->crc = trowel_crc32_update(z->crc, data, n);
    return TROWEL_OK;
}

static uint32_t null_crc(const trowel_sink *s)
{
    const struct null_state *z = s->state;
    return z->crc;
}

static const struct trowel_sink_impl null_impl = {
    .write = null_write,
    .state_size = sizeof(struct null_state),
    .crc = null_crc,
};

trowel_status trowel_sink_open_null(trowel_ctx *ctx, trowel_sink **out)
{
    *out = trowel_sink_new(ctx, &null_impl, "(null)");
    return *out ? TROWEL_OK : ctx->last_error.status;
}
