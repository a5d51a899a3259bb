/*
 * Shared driver of the Cinematique asset fuzz targets: opens the input as
 * one forced format (as `trowel convert -t FORMAT` does), dumps its JSON,
 * reads every entry, verifies, and runs each conversion into memory. Every
 * call must fail cleanly or succeed; the 64 MiB limit turns allocations
 * sized by hostile headers into errors.
 */
#ifndef TROWEL_CINE_FUZZ_H
#define TROWEL_CINE_FUZZ_H

#include "trowel/trowel.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct cine_fuzz_conversion {
    const char *target;
    const char *const *opts;
    size_t nopts;
} cine_fuzz_conversion;

static inline void cine_fuzz_run(const uint8_t *data, size_t size, const char *format,
                                 const char *name, const cine_fuzz_conversion *conv, size_t nconv)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    /* detection must never crash either, whatever it picks */
    if (trowel_input_open_memory(ctx, data, size, name, &in) == TROWEL_OK) {
        const trowel_format *f;
        (void)trowel_detect(ctx, in, &f, NULL);
    }
    if (in && trowel_archive_open(ctx, in, trowel_format_find(format), &a) == TROWEL_OK) {
        char *json = NULL;
        if (trowel_archive_to_json(a, TROWEL_JSON_INFO | TROWEL_JSON_ENTRIES, &json) == TROWEL_OK)
            trowel_free(json);
        for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
            trowel_sink *s;
            if (trowel_sink_open_memory(ctx, &s) != TROWEL_OK)
                break;
            trowel_status st = trowel_archive_read_entry(a, i, s);
            size_t n = 0;
            trowel_sink_data(s, &n);
            if (st == TROWEL_OK && n != trowel_archive_entry(a, i)->size)
                abort(); /* the promise: exactly the declared size */
            trowel_sink_discard(s);
        }
        trowel_archive_verify(a, NULL, NULL);
        for (size_t k = 0; k < nconv; k++) {
            trowel_sink *s;
            if (trowel_sink_open_memory(ctx, &s) != TROWEL_OK)
                break;
            trowel_convert(ctx, a, conv[k].target, conv[k].opts, conv[k].nopts, s);
            trowel_sink_discard(s);
        }
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

#endif
