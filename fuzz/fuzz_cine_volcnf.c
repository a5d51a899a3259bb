/*
 * libFuzzer target: VOL.CNF through the public archive API, as the
 * CLI drives it: open, info/list JSON, manifest, expand, verify. The input
 * is named as if in a folder that does not exist, so no volume is found.
 * Each call must fail cleanly or succeed; a small memory limit makes any
 * allocation sized by a hostile header show up as an error, not an OOM.
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
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    if (trowel_input_open_memory(ctx, data, size, "/nonexistent-trowel-fuzz/VOL.CNF", &in) == TROWEL_OK &&
        trowel_archive_open(ctx, in, trowel_format_find("cine-volcnf"), &a) == TROWEL_OK) {
        char *json = NULL;
        if (trowel_archive_to_json(a, TROWEL_JSON_INFO | TROWEL_JSON_ENTRIES, &json) == TROWEL_OK)
            trowel_free(json);
        if (trowel_archive_manifest(a, &json) == TROWEL_OK)
            trowel_free(json);
        for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
            trowel_sink *s;
            if (trowel_sink_open_memory(ctx, &s) != TROWEL_OK)
                break;
            trowel_status st = trowel_archive_read_entry(a, i, s);
            size_t n = 0;
            trowel_sink_data(s, &n);
            /* the promise: never more than the declared size */
            if (st == TROWEL_OK && n != trowel_archive_entry(a, i)->size)
                abort();
            if (n > trowel_archive_entry(a, i)->size)
                abort();
            trowel_sink_discard(s);
        }
        trowel_archive_verify(a, NULL, NULL);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return 0;
}
