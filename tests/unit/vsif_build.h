/*
 * Builds a scenes.image into memory through the public create API, for the
 * vsif tests (test_vsif, test_vsif_merge). Test-only.
 */
#ifndef TROWEL_TEST_VSIF_BUILD_H
#define TROWEL_TEST_VSIF_BUILD_H

#include "files.h"
#include "trowel/trowel.h"

#include <string.h>

/* Creates a vsif image from n sources with the options into out (bytes
 * malloc'd, even on failure: what the sink holds; empty when nothing was
 * written); returns create's status. */
static inline trowel_status vsif_build(trowel_ctx *ctx, const trowel_source *src, size_t n,
                                       const char *const *opts, size_t nopts, bytes *out)
{
    out->data = NULL;
    out->size = 0;
    trowel_sink *s;
    trowel_status st = trowel_sink_open_memory(ctx, &s);
    if (st != TROWEL_OK)
        return st;
    trowel_create_params p = {.sources = src, .source_count = n, .options = opts,
                              .option_count = nopts};
    st = trowel_create(ctx, trowel_format_find("vsif"), &p, s);
    size_t len = 0;
    const uint8_t *d = trowel_sink_data(s, &len);
    out->data = malloc(len ? len : 1);
    if (out->data && len) {
        memcpy(out->data, d, len);
        out->size = len;
    }
    trowel_sink_discard(s);
    return st;
}

#endif
