/*
 * libFuzzer target: the BVCD reader (src/format/valve/choreo_bvcd.c). The
 * first byte sets how many strings the pool holds ("s0", "s1", ...), the
 * rest is the BVCD. A scene that reads writes again, and what it writes
 * reads and writes to the same bytes; the decompiled text is written too.
 * The survey's read (choreo_survey_bvcd, no model) must fail where the
 * loose full read fails, with the same message and offset, and otherwise
 * learn the same indices and times.
 */
#include "format/valve/choreo.h"
#include "../tests/unit/choreo_survey_check.h" /* shared with test_choreo */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An empty string pool, or NULL when memory runs out. */
static choreo_pool *new_pool(trowel_ctx *ctx)
{
    choreo_pool *p;
    return choreo_pool_new(ctx, &p) == TROWEL_OK ? p : NULL;
}

static choreo_scene *read_scene(trowel_ctx *ctx, const uint8_t *d, size_t n, const choreo_pool *pool)
{
    trowel_input *in = NULL;
    choreo_scene *s = NULL;
    if (trowel_input_open_memory(ctx, d, n, "fuzz.bvcd", &in) != TROWEL_OK)
        return NULL;
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    if (choreo_read_bvcd(ctx, &r, pool, &s) != TROWEL_OK)
        s = NULL;
    trowel_input_close(in);
    return s;
}

static uint8_t *write_scene(trowel_ctx *ctx, const choreo_scene *s, choreo_pool *pool, size_t *n)
{
    trowel_sink *sink = NULL;
    uint8_t *out = NULL;
    if (trowel_sink_open_memory(ctx, &sink) != TROWEL_OK)
        return NULL;
    if (choreo_write_bvcd(ctx, s, pool, 0, sink) == TROWEL_OK) {
        const uint8_t *d = trowel_sink_data(sink, n);
        out = malloc(*n ? *n : 1);
        if (out)
            memcpy(out, d, *n);
    }
    trowel_sink_discard(sink);
    return out;
}

/* Aborts when the survey's read and the loose full read disagree. */
static void check_survey(trowel_ctx *ctx, const uint8_t *d, size_t n, const choreo_pool *pool)
{
    char why[600];
    if (!choreo_survey_agrees(ctx, d, n, pool, true, why, sizeof why))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    choreo_pool *pool = new_pool(ctx);
    for (unsigned i = 0; pool && i < data[0]; i++) {
        char name[16];
        snprintf(name, sizeof name, "s%u", i);
        choreo_pool_append(pool, name);
    }
    if (pool)
        check_survey(ctx, data + 1, size - 1, pool);
    choreo_scene *s = pool ? read_scene(ctx, data + 1, size - 1, pool) : NULL, *t = NULL;
    uint8_t *w1 = NULL, *w2 = NULL;
    size_t n1 = 0, n2 = 0;
    if (s) {
        trowel_sink *null = NULL;
        if (trowel_sink_open_null(ctx, &null) == TROWEL_OK) {
            choreo_write_vcd(ctx, s, null);
            trowel_sink_discard(null);
        }
        choreo_summary sum;
        if (choreo_summarize(ctx, s, &sum) == TROWEL_OK)
            choreo_summary_free(ctx, &sum);
        w1 = write_scene(ctx, s, pool, &n1);
        if (w1) {
            t = read_scene(ctx, w1, n1, pool);
            if (!t)
                abort(); /* what we write must read */
            w2 = write_scene(ctx, t, pool, &n2);
            if (!w2 || n1 != n2 || memcmp(w1, w2, n1) != 0)
                abort(); /* and write again to the same bytes */
        }
    }
    free(w1);
    free(w2);
    choreo_scene_free(ctx, s);
    choreo_scene_free(ctx, t);
    choreo_pool_free(pool);
    trowel_ctx_free(ctx);
    return 0;
}
