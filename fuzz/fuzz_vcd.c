/*
 * libFuzzer target: the text VCD parser (src/format/valve/choreo_vcd.c),
 * then everything done with a parsed scene: summary, BVCD and text
 * writers. The promise checked besides memory safety: a scene that compiles
 * reads back from its own BVCD and compiles again to the same bytes.
 */
#include "format/valve/choreo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static trowel_status compile(trowel_ctx *ctx, const choreo_scene *s, choreo_pool *pool, uint8_t **out,
                             size_t *n)
{
    trowel_sink *sink = NULL;
    trowel_status st = trowel_sink_open_memory(ctx, &sink);
    if (st != TROWEL_OK)
        return st;
    st = choreo_write_bvcd(ctx, s, pool, 0, sink);
    const uint8_t *d = trowel_sink_data(sink, n);
    *out = malloc(*n ? *n : 1);
    if (*out)
        memcpy(*out, d, *n);
    trowel_sink_discard(sink);
    return *out ? st : TROWEL_ERR_NOMEM;
}

/* An empty string pool, or NULL when memory runs out. */
static choreo_pool *new_pool(trowel_ctx *ctx)
{
    choreo_pool *p;
    return choreo_pool_new(ctx, &p) == TROWEL_OK ? p : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    trowel_input *in = NULL;
    choreo_scene *s = NULL, *back = NULL;
    choreo_pool *pool = new_pool(ctx);
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    if (pool && trowel_input_open_memory(ctx, data, size, "fuzz.vcd", &in) == TROWEL_OK) {
        trowel_reader r;
        trowel_reader_init(&r, ctx, in);
        if (choreo_parse_vcd(ctx, &r, &s) == TROWEL_OK) {
            choreo_summary sum;
            if (choreo_summarize(ctx, s, &sum) == TROWEL_OK)
                choreo_summary_free(ctx, &sum);
            trowel_sink *null = NULL;
            if (trowel_sink_open_null(ctx, &null) == TROWEL_OK) {
                choreo_write_vcd(ctx, s, null);
                trowel_sink_discard(null);
            }
            /* Out-of-range values wrap when quantised (as in the engine) and
             * can then re-sort on reading; one read normalises them, so the
             * promise is: what we compile reads, and from the first re-read
             * on, read and write give the same bytes. */
            if (compile(ctx, s, pool, &b1, &n1) == TROWEL_OK) {
                for (int pass = 0; pass < 2; pass++) {
                    uint8_t *src = pass ? b2 : b1;
                    size_t nsrc = pass ? n2 : n1;
                    trowel_input *bin = NULL;
                    if (trowel_input_open_memory(ctx, src, nsrc, "fuzz.bvcd", &bin) != TROWEL_OK)
                        abort();
                    trowel_reader br;
                    trowel_reader_init(&br, ctx, bin);
                    choreo_scene_free(ctx, back);
                    back = NULL;
                    if (choreo_read_bvcd(ctx, &br, pool, &back) != TROWEL_OK)
                        abort(); /* our own BVCD must read */
                    trowel_input_close(bin);
                    uint8_t *next = NULL;
                    size_t nn = 0;
                    if (compile(ctx, back, pool, &next, &nn) != TROWEL_OK)
                        abort();
                    if (pass == 1 && (nn != n2 || memcmp(next, b2, nn) != 0))
                        abort(); /* read and write again: the same bytes */
                    free(b2);
                    b2 = next;
                    n2 = nn;
                }
            }
        }
    }
    free(b1);
    free(b2);
    choreo_scene_free(ctx, s);
    choreo_scene_free(ctx, back);
    choreo_pool_free(pool);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return 0;
}
