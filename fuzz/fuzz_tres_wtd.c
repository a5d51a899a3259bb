/*
 * libFuzzer target: the WTD terrain reader: header, info JSON, verify
 * (which decodes the whole tree and inverts the transform) and convert to
 * the 16-bit PNG, the shaded preview, JSON (the height range) and GLB (the
 * sparse synthesis and the quad-tree mesh of wtd_mesh.c). The memory limit is small so large declared extents are refused
 * quickly instead of decoded (4 MiB: extents up to 512 decode).
 */
#include "trowel/trowel.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 4u << 20);
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    if (trowel_input_open_memory(ctx, data, size, "fuzz.wtd", &in) == TROWEL_OK &&
        trowel_archive_open(ctx, in, trowel_format_find("tres-wtd"), &a) == TROWEL_OK) {
        char *json = NULL;
        if (trowel_archive_to_json(a, TROWEL_JSON_INFO, &json) == TROWEL_OK)
            trowel_free(json);
        trowel_archive_verify(a, NULL, NULL);
        trowel_sink *s;
        if (trowel_sink_open_null(ctx, &s) == TROWEL_OK) {
            static const char *const shade[] = {"shade=1"};
            trowel_convert(ctx, a, "png", NULL, 0, s);
            trowel_convert(ctx, a, "png", shade, 1, s);
            trowel_convert(ctx, a, "json", NULL, 0, s);
            trowel_convert(ctx, a, "glb", NULL, 0, s);
            trowel_sink_discard(s);
        }
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return 0;
}
