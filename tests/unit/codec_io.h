/*
 * Helpers for the streaming-codec tests: run a registered codec over bytes
 * in memory through the public whole-call API, into a memory sink.
 * Test-only.
 */
#ifndef TROWEL_TEST_CODEC_IO_H
#define TROWEL_TEST_CODEC_IO_H

#include "codec_data.h"

/* Decodes data[0, len) with codec id into out (malloc'd; freed by the
 * caller with buf_free), expected exact or TROWEL_SIZE_UNKNOWN. *written
 * (when not NULL) gets how many bytes reached the sink, even on failure. */
static inline trowel_status codec_decode(trowel_ctx *ctx, const char *id, const uint8_t *data,
                                         size_t len, uint64_t expected, buf *out,
                                         uint64_t *written)
{
    out->data = NULL;
    out->len = 0;
    trowel_input *in;
    trowel_sink *sink;
    trowel_status s = trowel_input_open_memory(ctx, data, len, "t", &in);
    if (s != TROWEL_OK)
        return s;
    if ((s = trowel_sink_open_memory(ctx, &sink)) != TROWEL_OK) {
        trowel_input_close(in);
        return s;
    }
    s = trowel_codec_decompress(ctx, trowel_codec_find(id), in, expected, sink);
    if (written)
        *written = trowel_sink_written(sink);
    if (s == TROWEL_OK) {
        size_t n;
        const uint8_t *d = trowel_sink_data(sink, &n);
        out->data = malloc(n ? n : 1);
        if (n)
            memcpy(out->data, d, n);
        out->len = n;
    }
    trowel_sink_discard(sink);
    trowel_input_close(in);
    return s;
}

/* Encodes data with codec id and "key=value" options into out. */
static inline trowel_status codec_encode(trowel_ctx *ctx, const char *id, const uint8_t *data,
                                         size_t len, const char *const *opts, size_t nopts,
                                         buf *out)
{
    out->data = NULL;
    out->len = 0;
    trowel_input *in;
    trowel_sink *sink;
    trowel_status s = trowel_input_open_memory(ctx, data, len, "t", &in);
    if (s != TROWEL_OK)
        return s;
    if ((s = trowel_sink_open_memory(ctx, &sink)) != TROWEL_OK) {
        trowel_input_close(in);
        return s;
    }
    s = trowel_codec_compress_with(ctx, trowel_codec_find(id), in, opts, nopts, sink);
    if (s == TROWEL_OK) {
        size_t n;
        const uint8_t *d = trowel_sink_data(sink, &n);
        out->data = malloc(n ? n : 1);
        if (n)
            memcpy(out->data, d, n);
        out->len = n;
    }
    trowel_sink_discard(sink);
    trowel_input_close(in);
    return s;
}

static inline bool buf_equals(const buf *b, const uint8_t *data, size_t len)
{
    return b->len == len && (len == 0 || memcmp(b->data, data, len) == 0);
}

#endif
