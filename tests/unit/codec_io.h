/*
 * Helpers for the streaming-codec tests: run a registered codec over bytes
 * in memory through the public whole-call API, into a memory sink; fail
 * each allocation of both in turn. Test-only.
 */
#ifndef TROWEL_TEST_CODEC_IO_H
#define TROWEL_TEST_CODEC_IO_H

#include "codec_data.h"
#include "test.h"

#include "core/core.h"

/* Runs codec id over data[0, len) into out (malloc'd; freed by the caller
 * with buf_free): a decode of expected bytes, or (encode) an encode with
 * the options. *written (when not NULL) gets how many bytes reached the
 * sink, even on failure. */
static inline trowel_status codec_run(trowel_ctx *ctx, const char *id, bool encode,
                                      const uint8_t *data, size_t len, uint64_t expected,
                                      const char *const *opts, size_t nopts, buf *out,
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
    const trowel_codec *codec = trowel_codec_find(id);
    s = encode ? trowel_codec_compress_with(ctx, codec, in, opts, nopts, sink)
               : trowel_codec_decompress(ctx, codec, in, expected, sink);
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

/* Decodes data[0, len) with codec id into out, expected exact or
 * TROWEL_SIZE_UNKNOWN (see codec_run). */
static inline trowel_status codec_decode(trowel_ctx *ctx, const char *id, const uint8_t *data,
                                         size_t len, uint64_t expected, buf *out,
                                         uint64_t *written)
{
    return codec_run(ctx, id, false, data, len, expected, NULL, 0, out, written);
}

/* Encodes data with codec id and "key=value" options into out. */
static inline trowel_status codec_encode(trowel_ctx *ctx, const char *id, const uint8_t *data,
                                         size_t len, const char *const *opts, size_t nopts,
                                         buf *out)
{
    return codec_run(ctx, id, true, data, len, TROWEL_SIZE_UNKNOWN, opts, nopts, out, NULL);
}

/* Fails the k-th allocation, for every k from 1 to tries - 1, of a decode
 * of enc (text->len bytes expected) and of an encode of text with codec
 * id: each call succeeds or fails cleanly (TROWEL_ERR_NOMEM) and leaves
 * nothing allocated. */
static inline void check_each_allocation_failing(trowel_ctx *ctx, const char *id, const buf *enc,
                                                 const buf *text, uint64_t tries)
{
    for (uint64_t k = 1; k < tries; k++) {
        ctx->fail_alloc_after = k;
        buf out;
        trowel_status s = codec_decode(ctx, id, enc->data, enc->len, text->len, &out, NULL);
        CHECK(s == TROWEL_OK || s == TROWEL_ERR_NOMEM);
        buf_free(&out);
        ctx->fail_alloc_after = k;
        buf e2;
        s = codec_encode(ctx, id, text->data, text->len, NULL, 0, &e2);
        CHECK(s == TROWEL_OK || s == TROWEL_ERR_NOMEM);
        buf_free(&e2);
        ctx->fail_alloc_after = 0;
        CHECK_EQ_U64(ctx->mem_in_use, 0);
    }
}

static inline bool buf_equals(const buf *b, const uint8_t *data, size_t len)
{
    return b->len == len && (len == 0 || memcmp(b->data, data, len) == 0);
}

#endif
