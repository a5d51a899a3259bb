/*
 * libFuzzer target for the Delphine packer (src/codec/bytekiller.c).
 *
 * Byte 0 says how the expected size is given (from the stream's own length
 * field, or from bytes 1..4); the rest is the stream. Beyond memory safety:
 *  - a success produces exactly the declared size, a failure nothing;
 *  - the in-place check never disagrees with decoding (a stream that does
 *    not decode is never called safe);
 *  - packing the input and unpacking it gives the input back, and the
 *    stream is deterministic. (In-place safety is not promised: a nearly
 *    incompressible input may have no parse that keeps to it.)
 */
#include "codec/bytekiller.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    bool declared = data[0] & 1;
    const uint8_t *stream = data + 1;
    size_t len = size - 1;
    uint64_t expected = TROWEL_SIZE_UNKNOWN;
    if (declared && len >= 4) {
        expected = (uint64_t)stream[0] << 24 | (uint64_t)stream[1] << 16 | (uint64_t)stream[2] << 8 | stream[3];
        expected &= 0xFFFFF; /* keep it small */
        stream += 4;
        len -= 4;
    }
    static const uint8_t none[1];
    trowel_input *in;
    trowel_sink *sink;
    if (trowel_input_open_memory(ctx, len ? stream : none, len, "fuzz", &in) != TROWEL_OK ||
        trowel_sink_open_memory(ctx, &sink) != TROWEL_OK)
        abort();
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    trowel_status s = trowel_bytekiller_decode(ctx, &r, expected, sink);
    size_t n;
    trowel_sink_data(sink, &n);
    if (s == TROWEL_OK && expected != TROWEL_SIZE_UNKNOWN && n != expected)
        abort();
    if (s != TROWEL_OK && n != 0)
        abort();
    bool broken = s == TROWEL_ERR_CORRUPT || s == TROWEL_ERR_TRUNCATED;
    if (broken && expected == TROWEL_SIZE_UNKNOWN && len >= 12 && len % 4 == 0 &&
        trowel_bytekiller_in_place_safe(ctx, stream, len,
                                        (size_t)stream[len - 4] << 24 | (size_t)stream[len - 3] << 16 |
                                            (size_t)stream[len - 2] << 8 | stream[len - 1]))
        abort();
    trowel_sink_discard(sink);
    trowel_input_close(in);

    /* Round trip of the whole input. */
    uint8_t *packed, *packed2, *back;
    size_t plen, plen2;
    if (trowel_bytekiller_encode(ctx, data, size, &packed, &plen) != TROWEL_OK)
        abort();
    if (trowel_bytekiller_encode(ctx, data, size, &packed2, &plen2) != TROWEL_OK ||
        plen2 != plen || memcmp(packed, packed2, plen) != 0)
        abort();
    back = malloc(size);
    if (!back || trowel_bytekiller_decode_mem(ctx, packed, plen, 0, back, size) != TROWEL_OK ||
        memcmp(back, data, size) != 0)
        abort();
    free(back);
    trowel_mem_free(ctx, packed);
    trowel_mem_free(ctx, packed2);
    trowel_ctx_free(ctx);
    return 0;
}
