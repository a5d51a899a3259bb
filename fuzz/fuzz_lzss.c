/*
 * libFuzzer target for the LZSS codec (src/codec/lzss.c).
 *
 * Input layout: byte 0 picks the set-up (SZDD, QBasic, SPZ) and how the
 * declared size is read; bytes 1..4 give that size; the rest is the stream.
 * Each run checks, beyond memory safety:
 *  - with the size declared, a success produces exactly that many bytes and
 *    a failure never more;
 *  - without it, the output stays within trowel_lzss_max_output, and a stream
 *    accepted with a declared size gives the same bytes without one;
 *  - encoding the whole input and decoding it gives the input back.
 */
#include "codec/lzss.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const trowel_lzss_params *const setups[] = {&trowel_lzss_szdd, &trowel_lzss_qbasic,
                                                   &trowel_lzss_spz};

/* Decodes stream into a memory sink; returns the status and a copy of what
 * reached the sink (freed by the caller). */
static trowel_status run_decode(trowel_ctx *ctx, const trowel_lzss_params *p,
                                const uint8_t *stream, size_t len, uint64_t expected,
                                uint8_t **out, size_t *out_len)
{
    static const uint8_t none[1];
    trowel_input *in;
    trowel_sink *sink;
    *out = NULL;
    *out_len = 0;
    if (trowel_input_open_memory(ctx, len ? stream : none, len, "fuzz", &in) != TROWEL_OK)
        abort();
    if (trowel_sink_open_memory(ctx, &sink) != TROWEL_OK)
        abort();
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    trowel_status s = trowel_lzss_decode(ctx, p, &r, expected, sink);
    size_t n;
    const uint8_t *d = trowel_sink_data(sink, &n);
    *out = malloc(n ? n : 1);
    if (!*out)
        abort();
    if (n)
        memcpy(*out, d, n);
    *out_len = n;
    trowel_sink_discard(sink);
    trowel_input_close(in);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5)
        return 0;
    const trowel_lzss_params *p = setups[data[0] % 3];
    /* Mostly small sizes (they can succeed); sometimes a full u32. */
    uint64_t expected = (data[0] & 0x80)
                            ? ((uint64_t)data[1] | (uint64_t)data[2] << 8 |
                               (uint64_t)data[3] << 16 | (uint64_t)data[4] << 24)
                            : ((uint64_t)data[1] | (uint64_t)(data[2] & 0x3F) << 8);
    const uint8_t *stream = data + 5;
    size_t len = size - 5;

    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, (uint64_t)256 << 20);

    uint8_t *known = NULL, *unknown = NULL;
    size_t known_len, unknown_len;
    trowel_status sk = run_decode(ctx, p, stream, len, expected, &known, &known_len);
    if (known_len > expected)
        abort(); /* never more than declared */
    if (sk == TROWEL_OK && known_len != expected)
        abort();

    trowel_status su = run_decode(ctx, p, stream, len, TROWEL_SIZE_UNKNOWN, &unknown, &unknown_len);
    if (unknown_len > trowel_lzss_max_output(len))
        abort();
    if (sk == TROWEL_OK &&
        (su != TROWEL_OK || unknown_len != known_len || memcmp(known, unknown, known_len) != 0))
        abort();
    free(known);
    free(unknown);

    /* Round trip of the whole input. */
    trowel_sink *sink;
    if (trowel_sink_open_memory(ctx, &sink) != TROWEL_OK)
        abort();
    if (trowel_lzss_encode(ctx, p, data, size, sink) != TROWEL_OK)
        abort();
    size_t packed_len;
    const uint8_t *packed_view = trowel_sink_data(sink, &packed_len);
    uint8_t *packed = malloc(packed_len ? packed_len : 1);
    if (!packed)
        abort();
    if (packed_len)
        memcpy(packed, packed_view, packed_len);
    trowel_sink_discard(sink);
    uint8_t *back;
    size_t back_len;
    if (run_decode(ctx, p, packed, packed_len, size, &back, &back_len) != TROWEL_OK ||
        back_len != size || memcmp(back, data, size) != 0)
        abort();
    free(back);
    free(packed);

    if (ctx->mem_in_use != 0)
        abort(); /* everything the codec took was given back */
    trowel_ctx_free(ctx);
    return 0;
}
