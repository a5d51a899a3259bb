/*
 * The detection that peels input filters (see filter.h). The filters
 * themselves live with their families (scumm/xor69.c,
 * trespasser/szdd_filter.c) and are listed in registry.c.
 */
#include "filter.h"
#include "input.h"

#include <string.h>

/* ------------------------------------------------------------ detection */

int trowel_best_format(trowel_ctx *ctx, trowel_input *in, const trowel_format *want,
                       const trowel_format **fmt)
{
    *fmt = NULL;
    int best = 0;
    trowel_input_begin_detection(in);
    for (size_t i = 0; i < trowel_formats_len; i++) {
        if (want && trowel_formats[i] != want)
            continue;
        trowel_reader r;
        trowel_reader_init(&r, ctx, in);
        int b = trowel_formats[i]->bid(&r);
        if (b > best) {
            best = b;
            *fmt = trowel_formats[i];
        }
    }
    trowel_ctx_clear_error(ctx); /* bids may have left read errors behind */
    trowel_input_end_detection(in);
    return best;
}

/* Tries each filter on in; on success c holds the chain from depth on.
 * A trial open runs without warnings or progress: only a kept chain counts. */
/* True when a chain of filters ending in a format was found (in c). A
 * filter that does not open is passed over for the plain format, except
 * when the system allocator failed (*fatal: TROWEL_ERR_NOMEM, with its
 * error kept): then nothing else would fare better, and the caller must
 * hear it. A refusal of the memory limit is passed over like any other:
 * the plain format may stream what the filter had to hold whole. */
static bool peel(trowel_ctx *ctx, trowel_input *in, const trowel_format *want, size_t depth,
                 trowel_chain *c, trowel_status *fatal)
{
    if (depth >= TROWEL_FILTER_DEPTH)
        return false;
    for (size_t i = 0; i < trowel_filters_len; i++) {
        const trowel_filter *f = trowel_filters[i];
        trowel_reader r;
        trowel_reader_init(&r, ctx, in);
        trowel_input_begin_detection(in);
        bool bids = f->bid(&r) > 0;
        if (bids && !want && f->worth_peeling) {
            trowel_reader_init(&r, ctx, in);
            bids = f->worth_peeling(&r);
        }
        trowel_input_end_detection(in);
        trowel_ctx_clear_error(ctx);
        if (!bids)
            continue;
        trowel_warning_fn warn = ctx->warn_fn;
        trowel_progress_fn progress = ctx->progress_fn;
        ctx->warn_fn = NULL;
        ctx->progress_fn = NULL;
        trowel_input *peeled = NULL;
        trowel_status s = f->open(ctx, in, &peeled);
        ctx->warn_fn = warn;
        ctx->progress_fn = progress;
        if (s == TROWEL_ERR_NOMEM) {
            *fatal = s;
            return false;
        }
        trowel_ctx_clear_error(ctx);
        trowel_set_entry(ctx, NULL); /* a trial read may have named its entry */
        if (s != TROWEL_OK)
            continue;
        c->filters[depth] = f;
        c->inputs[depth] = peeled;
        if (peel(ctx, peeled, want, depth + 1, c, fatal))
            return true;
        if (*fatal != TROWEL_OK) {
            trowel_input_close(peeled);
            c->inputs[depth] = NULL;
            return false;
        }
        const trowel_format *fmt;
        int bid = trowel_best_format(ctx, peeled, want, &fmt);
        if (fmt && (want ? bid > 0 : bid >= TROWEL_BID_MAGIC)) {
            c->count = depth + 1;
            c->fmt = fmt;
            return true;
        }
        trowel_input_close(peeled);
        c->inputs[depth] = NULL;
    }
    return false;
}

trowel_status trowel_detect_chain(trowel_ctx *ctx, trowel_input *in, const trowel_format *want,
                                  trowel_chain *out)
{
    memset(out, 0, sizeof *out);
    trowel_status fatal = TROWEL_OK;
    if (peel(ctx, in, want, 0, out, &fatal))
        return TROWEL_OK;
    if (fatal != TROWEL_OK) {
        memset(out, 0, sizeof *out); /* each level closed what it peeled */
        return fatal;
    }
    memset(out, 0, sizeof *out);
    if (want) {
        out->fmt = want;
        return TROWEL_OK;
    }
    trowel_best_format(ctx, in, NULL, &out->fmt);
    if (!out->fmt)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "not a format trowel knows (see 'trowel formats')");
    return TROWEL_OK;
}

void trowel_chain_close(trowel_chain *c)
{
    for (size_t i = c->count; i-- > 0;) {
        trowel_input_close(c->inputs[i]);
        c->inputs[i] = NULL;
    }
    c->count = 0;
}
