/* libFuzzer target: -O palette=FILE for SCUMM costumes (CLUT, APAL and PALS
 * blocks, raw RGB, PNG, GIF), read from the input's bytes. */
#include "core/core.h"
#include "format/scumm/costume.h"

#include <trowel/trowel.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    uint8_t rgb[768];
    const char *kind = NULL;
    (void)scumm_palette_from_bytes(ctx, "fuzz", data, size, rgb, &kind);
    trowel_ctx_free(ctx);
    return 0;
}
