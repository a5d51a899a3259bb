/*
 * Shared body of the streaming-codec fuzz targets (fuzz_zlib, fuzz_lz4).
 * The first byte picks an expected size (unknown, or small) and the cursor's
 * piece size; the rest is the stream. It is decoded whole (public API) and
 * through the forward cursor; both must fail cleanly or agree, never write
 * past the expected size, and leave no memory behind. Short inputs are also
 * encoded and decoded back, which must round-trip.
 */
#ifndef TROWEL_CODEC_FUZZ_H
#define TROWEL_CODEC_FUZZ_H

#include "core/stream.h"
#include "core/module.h"

#include <stdlib.h>
#include <string.h>

static void fuzz_round_trip(trowel_ctx *ctx, const trowel_stream_codec *codec, const uint8_t *data,
                            size_t size, int level)
{
    trowel_input *in;
    trowel_sink *enc, *dec;
    if (trowel_input_open_memory(ctx, data, size, "raw", &in) != TROWEL_OK)
        return;
    trowel_codec_params p = trowel_codec_params_default();
    p.level = level;
    if (trowel_sink_open_memory(ctx, &enc) != TROWEL_OK) {
        trowel_input_close(in);
        return;
    }
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    if (trowel_codec_encode_reader(ctx, codec, &p, &r, enc) != TROWEL_OK)
        abort();
    size_t n;
    const uint8_t *e = trowel_sink_data(enc, &n);
    if (n > codec->bound(size, 0, &p))
        abort();
    trowel_input *ein;
    if (trowel_input_open_memory(ctx, e, n, "enc", &ein) == TROWEL_OK) {
        if (trowel_sink_open_memory(ctx, &dec) == TROWEL_OK) {
            trowel_reader_init(&r, ctx, ein);
            if (trowel_codec_decode_reader(ctx, codec, &p, &r, size, dec) != TROWEL_OK)
                abort();
            size_t m;
            const uint8_t *d = trowel_sink_data(dec, &m);
            if (m != size || (size && memcmp(d, data, size) != 0))
                abort();
            trowel_sink_discard(dec);
        }
        trowel_input_close(ein);
    }
    trowel_sink_discard(enc);
    trowel_input_close(in);
}

/* Reads the stream through the cursor in pieces of `piece` bytes; returns
 * how many bytes came out before it stopped. */
static uint64_t fuzz_cursor(trowel_ctx *ctx, const trowel_stream_codec *codec, unsigned flags,
                            trowel_input *in, size_t piece, trowel_sink *out)
{
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    trowel_codec_params p = trowel_codec_params_default();
    p.flags = flags;
    trowel_codec_stream *cs;
    if (trowel_codec_stream_open(ctx, codec, &p, &r, &cs) != TROWEL_OK)
        return 0;
    while (trowel_codec_stream_tell(cs) < (64u << 20) &&
           trowel_codec_stream_read(cs, piece, out) == TROWEL_OK) {
    }
    uint64_t got = trowel_codec_stream_tell(cs);
    /* Back to the start and forward again: the same position is reached. */
    if (got > 0 && trowel_codec_stream_seek(cs, got / 2) == TROWEL_OK &&
        trowel_codec_stream_tell(cs) != got / 2)
        abort();
    trowel_codec_stream_close(cs);
    return got;
}

static int fuzz_codec(const trowel_stream_codec *codec, const char *id, unsigned flags,
                      const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t knob = data[0];
    data++;
    size--;
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    uint64_t expected = (knob & 0x80) ? (uint64_t)(knob & 0x7f) * 97 : TROWEL_SIZE_UNKNOWN;
    size_t piece = (size_t)(knob & 0x0f) * 4099 + 1;
    trowel_input *in;
    trowel_sink *whole, *cur;
    if (trowel_input_open_memory(ctx, data, size, "stream", &in) != TROWEL_OK) {
        trowel_ctx_free(ctx);
        return 0;
    }
    if (trowel_sink_open_memory(ctx, &whole) == TROWEL_OK) {
        trowel_status st;
        if (flags) {
            trowel_reader r;
            trowel_reader_init(&r, ctx, in);
            trowel_codec_params p = trowel_codec_params_default();
            p.flags = flags;
            st = trowel_codec_decode_reader(ctx, codec, &p, &r, expected, whole);
        } else {
            st = trowel_codec_decompress(ctx, trowel_codec_find(id), in, expected, whole);
        }
        size_t n;
        const uint8_t *w = trowel_sink_data(whole, &n);
        if (expected != TROWEL_SIZE_UNKNOWN && n > expected)
            abort();
        if (st == TROWEL_OK && expected != TROWEL_SIZE_UNKNOWN && n != expected)
            abort();
        if (trowel_sink_open_memory(ctx, &cur) == TROWEL_OK) {
            uint64_t got = fuzz_cursor(ctx, codec, flags, in, piece, cur);
            size_t m;
            const uint8_t *c = trowel_sink_data(cur, &m);
            /* What the whole call accepted, the cursor reads the same. */
            if (st == TROWEL_OK && got >= n && (m < n || (n && memcmp(c, w, n) != 0)))
                abort();
            trowel_sink_discard(cur);
        }
        trowel_sink_discard(whole);
    }
    trowel_input_close(in);
    if (size <= 4096)
        fuzz_round_trip(ctx, codec, data, size, (knob % 3 == 0) ? TROWEL_LEVEL_DEFAULT : codec->level_max);
    if (ctx->mem_in_use != 0)
        abort();
    trowel_ctx_free(ctx);
    return 0;
}

#endif
