/*
 * libFuzzer target: Valve's LZMA blobs (17-byte header + raw LZMA1). The
 * input is decoded as a blob from memory, by a decoder used for several
 * blobs in a row, and through the codec's streaming path; all must fail
 * cleanly or give exactly the declared size, and agree. Short inputs are
 * also encoded and decoded back, which must round-trip.
 */
#include "codec/vsif_lzma.h"
#include "trowel/trowel.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(trowel_ctx *ctx, const uint8_t *data, size_t size)
{
    uint8_t *blob, *back;
    size_t blob_size, back_size;
    if (trowel_vsif_lzma_encode(ctx, data, size, &blob, &blob_size) != TROWEL_OK)
        return;
    if (trowel_vsif_lzma_decode(ctx, blob, blob_size, 0, &back, &back_size) != TROWEL_OK)
        abort();
    if (back_size != size || (size && memcmp(back, data, size) != 0))
        abort();
    trowel_mem_free(ctx, back);
    trowel_mem_free(ctx, blob);
}

/* A decoder used again gives what a decoder of its own gives (status and
 * bytes). */
static void check_reused_decoder(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                 trowel_status want, const uint8_t *want_bytes, size_t want_size)
{
    trowel_vsif_lzma_decoder *d;
    if (trowel_vsif_lzma_decoder_new(ctx, &d) != TROWEL_OK)
        return;
    /* The whole input twice (so that a decode follows a good one), with
     * its first half between (so that one follows a failure). */
    const size_t lengths[] = {size, size / 2, size, size};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        uint8_t *out = NULL;
        size_t n = 0;
        trowel_status st = trowel_vsif_lzma_decoder_run(d, data, lengths[k], 0, &out, &n);
        if (lengths[k] == size && st != want)
            abort();
        if (lengths[k] == size && st == TROWEL_OK &&
            (n != want_size || (n && memcmp(out, want_bytes, n) != 0)))
            abort();
        if (st == TROWEL_OK)
            trowel_mem_free(ctx, out);
    }
    trowel_vsif_lzma_decoder_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    uint8_t *out = NULL;
    size_t n = 0;
    trowel_status mem = trowel_vsif_lzma_decode(ctx, data, size, 0, &out, &n);
    if (mem == TROWEL_OK && size >= 8) {
        uint32_t declared = (uint32_t)data[4] | (uint32_t)data[5] << 8 |
                            (uint32_t)data[6] << 16 | (uint32_t)data[7] << 24;
        if (n != declared)
            abort();
    }
    check_reused_decoder(ctx, data, size, mem, out, n);
    trowel_input *in;
    trowel_sink *s;
    if (trowel_input_open_memory(ctx, data, size, "blob", &in) == TROWEL_OK) {
        if (trowel_sink_open_memory(ctx, &s) == TROWEL_OK) {
            trowel_status st = trowel_codec_decompress(ctx, trowel_codec_find("vsif-lzma"), in,
                                                       TROWEL_SIZE_UNKNOWN, s);
            size_t m = 0;
            const uint8_t *d = trowel_sink_data(s, &m);
            /* The two paths agree on good blobs. */
            if (mem == TROWEL_OK && st == TROWEL_OK && (m != n || (n && memcmp(d, out, n) != 0)))
                abort();
            trowel_sink_discard(s);
        }
        trowel_input_close(in);
    }
    trowel_mem_free(ctx, out);
    if (size <= 4096)
        check_round_trip(ctx, data, size);
    trowel_ctx_free(ctx);
    return 0;
}
