/*
 * libFuzzer target: the scenes.image reader through the public archive API,
 * as the CLI drives it: open, info/list JSON, manifest, every entry
 * decompiled to text and extracted raw, verify (structure and summaries
 * against the scenes).
 * A small memory limit turns any allocation sized by a hostile header into
 * an error rather than an OOM.
 */
#include "trowel/trowel.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_all(trowel_ctx *ctx, trowel_archive *a, bool raw)
{
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
        trowel_sink *s;
        if (trowel_sink_open_memory(ctx, &s) != TROWEL_OK)
            return;
        trowel_status st = trowel_archive_read_entry(a, i, s);
        size_t n = 0;
        trowel_sink_data(s, &n);
        /* Raw BVCD: exactly the declared size when it succeeds. */
        if (raw && st == TROWEL_OK && n != trowel_archive_entry(a, i)->size)
            abort();
        if (raw && n > trowel_archive_entry(a, i)->size)
            abort();
        trowel_sink_discard(s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    if (trowel_input_open_memory(ctx, data, size, "scenes.image", &in) == TROWEL_OK &&
        trowel_archive_open(ctx, in, trowel_format_find("vsif"), &a) == TROWEL_OK) {
        char *json = NULL;
        if (trowel_archive_to_json(a, TROWEL_JSON_INFO | TROWEL_JSON_ENTRIES, &json) == TROWEL_OK)
            trowel_free(json);
        if (trowel_archive_manifest(a, &json) == TROWEL_OK)
            trowel_free(json);
        read_all(ctx, a, false);
        trowel_archive_verify(a, NULL, NULL);
        const char *raw[] = {"raw=1"};
        if (trowel_archive_set_options(a, raw, 1) == TROWEL_OK)
            read_all(ctx, a, true);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return 0;
}
