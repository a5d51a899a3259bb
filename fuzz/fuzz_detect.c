/*
 * libFuzzer target: format detection and every registered format's reader,
 * reached the way `trowel info FILE` reaches them (no format named). Grows
 * with the registry: each new format is fuzzed here from day one, besides
 * its own dedicated target.
 */
#include "trowel/trowel.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    if (trowel_input_open_memory(ctx, data, size, "fuzz.bin", &in) == TROWEL_OK &&
        trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK) {
        trowel_sink *s;
        if (trowel_sink_open_null(ctx, &s) == TROWEL_OK) {
            trowel_convert(ctx, a, "json", NULL, 0, s);
            trowel_sink_discard(s);
        }
        trowel_archive_verify(a, NULL, NULL);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return 0;
}
