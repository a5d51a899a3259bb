/*
 * libFuzzer target: the scenes.image reader through the public archive API,
 * as the CLI drives it: open, info/list JSON, manifest, every entry
 * decompiled to text and extracted raw, verify (structure and summaries
 * against the scenes), and the image opened to be read in order, each
 * scene surveyed as it is reached, against the image surveyed whole.
 * A small memory limit turns any allocation sized by a hostile header into
 * an error rather than an OOM.
 */
#include "trowel/trowel.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Entry i of a, read whole: its status, and its bytes in *s. */
static trowel_status read_one(trowel_ctx *ctx, trowel_archive *a, size_t i, trowel_sink **s)
{
    *s = NULL;
    trowel_status st = trowel_sink_open_memory(ctx, s);
    return st == TROWEL_OK ? trowel_archive_read_entry(a, i, *s) : st;
}

static void read_all(trowel_ctx *ctx, trowel_archive *a, bool raw)
{
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
        trowel_sink *s;
        trowel_status st = read_one(ctx, a, i, &s);
        if (!s)
            return;
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

/* Read in order, every scene both read well must have the same name and
 * bytes as in the archive surveyed whole. (One read failing where the
 * other did not can be memory: the whole survey keeps decoded scenes.)
 * The in-order archive has a context of its own, with room for its
 * worker's share, so that the worker surveys too. */
static void compare_in_order(const uint8_t *data, size_t size, trowel_ctx *ctx,
                             trowel_archive *whole)
{
    trowel_ctx *own = trowel_ctx_new();
    trowel_input *in = NULL;
    trowel_archive *b = NULL;
    if (!own)
        return;
    trowel_ctx_set_mem_limit(own, 256u << 20);
    if (trowel_input_open_memory(own, data, size, "scenes.image", &in) != TROWEL_OK ||
        trowel_archive_open_in_order(own, in, trowel_format_find("vsif"), &b) != TROWEL_OK) {
        trowel_input_close(in);
        trowel_ctx_free(own);
        return;
    }
    if (trowel_archive_entry_count(b) != trowel_archive_entry_count(whole))
        abort();
    for (size_t i = 0; i < trowel_archive_entry_count(b); i++) {
        trowel_sink *got, *want;
        trowel_status sg = read_one(own, b, i, &got), sw = read_one(ctx, whole, i, &want);
        size_t n = 0, m = 0;
        const uint8_t *x = got ? trowel_sink_data(got, &n) : NULL;
        const uint8_t *y = want ? trowel_sink_data(want, &m) : NULL;
        if (sg == TROWEL_OK && sw == TROWEL_OK &&
            (strcmp(trowel_archive_entry(b, i)->name, trowel_archive_entry(whole, i)->name) != 0 ||
             n != m || (n && memcmp(x, y, n) != 0)))
            abort();
        trowel_sink_discard(got);
        trowel_sink_discard(want);
    }
    trowel_archive_close(b);
    trowel_input_close(in);
    trowel_ctx_free(own);
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
        compare_in_order(data, size, ctx, a);
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
