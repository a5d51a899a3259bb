/*
 * libFuzzer target: the ASM JSON reader (src/format/volition/asm_json.c
 * over the pull reader of src/core/json_pull.c), the text a user hands to
 * `create -t asm --manifest`. Whatever it accepts must write an ASM (or be
 * refused by the writer's own check of the size lists) that reads back and
 * goes to JSON and back again to the very same bytes. Seeds: the corpus
 * ASMs' JSON (fuzz/corpus/asm_json/).
 */
#include "core/json_pull.h"
#include "core/json_write.h"
#include "format/volition/asm.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The model as a manifest text (malloc'ed, NUL-terminated). */
static char *manifest_of(trowel_ctx *ctx, const vol_asm *m)
{
    trowel_sink *sink = NULL;
    if (trowel_sink_open_memory(ctx, &sink) != TROWEL_OK)
        return NULL;
    trowel_json_writer *w = malloc(sizeof *w);
    char *text = NULL;
    if (w) {
        trowel_jw_init(w, sink);
        trowel_jw_begin_object(w);
        trowel_jw_key(w, "asm");
        vol_asm_write_json(m, w);
        trowel_jw_end_object(w);
        size_t n = 0;
        if (trowel_jw_finish(w, ctx) == TROWEL_OK) {
            const uint8_t *d = trowel_sink_data(sink, &n);
            text = malloc(n + 1);
            if (text) {
                memcpy(text, d, n);
                text[n] = '\0';
            }
        }
        free(w);
    }
    trowel_sink_discard(sink);
    return text;
}

/* The model's ASM bytes (memory sink), or NULL when the writer refuses. */
static trowel_sink *asm_of(trowel_ctx *ctx, const vol_asm *m)
{
    trowel_sink *sink = NULL;
    if (trowel_sink_open_memory(ctx, &sink) != TROWEL_OK)
        return NULL;
    if (vol_asm_write(ctx, m, sink) != TROWEL_OK) {
        trowel_sink_discard(sink);
        return NULL;
    }
    return sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    vol_asm *m = NULL, *again = NULL, *reread = NULL;
    if (vol_asm_read_json(ctx, (const char *)data, size, &m) == TROWEL_OK) {
        trowel_sink *bin = asm_of(ctx, m);
        char *text = bin ? manifest_of(ctx, m) : NULL;
        if (text) {
            /* Its JSON reads back to a model that writes the same bytes. */
            if (vol_asm_read_json(ctx, text, strlen(text), &again) != TROWEL_OK)
                abort();
            trowel_sink *bin2 = asm_of(ctx, again);
            size_t n1 = 0, n2 = 0;
            const uint8_t *b1 = trowel_sink_data(bin, &n1);
            const uint8_t *b2 = bin2 ? trowel_sink_data(bin2, &n2) : NULL;
            if (!b2 || n1 != n2 || memcmp(b1, b2, n1) != 0)
                abort();
            trowel_sink_discard(bin2);
            /* And the bytes read as an ASM. */
            trowel_input *in = NULL;
            if (trowel_input_open_memory(ctx, b1, n1, "fuzz.asm_pc", &in) == TROWEL_OK) {
                trowel_reader r;
                trowel_reader_init(&r, ctx, in);
                if (vol_asm_read(ctx, &r, &reread) != TROWEL_OK)
                    abort();
                trowel_input_close(in);
            }
        }
        free(text);
        trowel_sink_discard(bin);
    }
    vol_asm_free(ctx, reread);
    vol_asm_free(ctx, again);
    vol_asm_free(ctx, m);
    if (trowel_ctx_mem_in_use(ctx) != 0)
        abort(); /* nothing leaked on any path */
    trowel_ctx_free(ctx);
    return 0;
}
