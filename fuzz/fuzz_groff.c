/*
 * libFuzzer target: GROFF containers (.scn, .grf) through the public API as
 * the CLI drives them (see archive_fuzz.h), then the GRF conversions
 * (placements, OBJ, MTL, GLB) into a null sink. Seeds: small SCN/GRF files
 * made by create -t groff and tests/tools/make_grf.py.
 */
#include "archive_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_archive(data, size, "groff", "FUZZ.GRF");
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    if (trowel_input_open_memory(ctx, data, size, "FUZZ.GRF", &in) == TROWEL_OK &&
        trowel_archive_open(ctx, in, trowel_format_find("groff"), &a) == TROWEL_OK) {
        static const char *const targets[] = {"placements", "obj", "mtl", "glb"};
        for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
            trowel_sink *s;
            if (trowel_sink_open_null(ctx, &s) != TROWEL_OK)
                break;
            trowel_convert(ctx, a, targets[i], NULL, 0, s);
            trowel_sink_discard(s);
        }
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return 0;
}
