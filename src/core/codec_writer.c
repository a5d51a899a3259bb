/*
 * The encoder cursor (core/stream.h): bytes handed over in pieces are
 * encoded into a sink, with sync flushes between them and a finish at the
 * end, the write side of trowel_codec_stream. It is what a container that
 * lays out its own compressed data needs (a VPP's one sync-flushed stream
 * of all its files, or each file compressed alone), so no format runs a
 * coder by hand.
 *
 * Every byte the coder makes is in the sink when a call returns, so the
 * caller may write bytes of its own (padding, a directory) to the same
 * sink between calls. A NULL sink only counts: a first pass that sizes the
 * encoded pieces before anything is written gets the same counts the
 * writing pass will (the codecs are deterministic for the same pieces).
 */
#include "stream.h"
#include "module.h"

#define OUT_CHUNK ((size_t)1 << 16)

struct trowel_codec_writer {
    trowel_ctx *ctx;
    trowel_coder c;
    trowel_sink *out; /* NULL: count only */
    uint8_t *buf;     /* OUT_CHUNK bytes of coder output */
};

trowel_status trowel_codec_writer_open(trowel_ctx *ctx, const trowel_stream_codec *codec,
                                       const trowel_codec_params *p, trowel_sink *out,
                                       trowel_codec_writer **w)
{
    *w = NULL;
    trowel_codec_writer *cw = trowel_mem_calloc(ctx, 1, sizeof *cw);
    if (!cw)
        return ctx->last_error.status;
    cw->ctx = ctx;
    cw->out = out;
    trowel_status s = TROWEL_OK;
    if (!(cw->buf = trowel_mem_alloc(ctx, OUT_CHUNK)))
        s = ctx->last_error.status;
    if (s == TROWEL_OK)
        s = trowel_coder_init_encoder(&cw->c, ctx, codec, p);
    if (s != TROWEL_OK) {
        trowel_codec_writer_abort(cw);
        return s;
    }
    *w = cw;
    return TROWEL_OK;
}

void trowel_codec_writer_abort(trowel_codec_writer *w)
{
    if (!w)
        return;
    trowel_coder_end(&w->c);
    trowel_mem_free(w->ctx, w->buf);
    trowel_mem_free(w->ctx, w);
}

/* Runs the coder over data[0, n) with flush until the input is used up
 * and (for a flush or finish) the coder says it is complete, handing what
 * it makes to the sink after every run. */
static trowel_status run(trowel_codec_writer *w, const uint8_t *data, size_t n,
                         trowel_flush flush)
{
    trowel_codec_io io = {data, n, 0, w->buf, OUT_CHUNK, 0};
    for (;;) {
        io.out_pos = 0;
        trowel_code r = trowel_coder_run(&w->c, &io, flush);
        if (r == TROWEL_CODE_ERROR)
            return w->ctx->last_error.status;
        if (w->out && io.out_pos) {
            trowel_status s = trowel_sink_write(w->out, w->buf, io.out_pos);
            if (s != TROWEL_OK)
                return s;
        }
        /* Without a flush, input used up and room to spare: the coder
         * holds the rest until more comes or a flush asks for it. */
        if (flush == TROWEL_FLUSH_NONE && io.in_pos == io.in_len && io.out_pos < io.out_cap)
            return TROWEL_OK;
        switch (r) {
        case TROWEL_CODE_DONE:
            if (flush != TROWEL_FLUSH_NONE)
                return TROWEL_OK;
            break;
        case TROWEL_CODE_MORE:
            break;
        default: /* a stall: with no room left, the next run has room again */
            if (io.out_pos == 0 && io.in_pos == io.in_len)
                return trowel_fail(w->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET,
                                   "the %s encoder stalled", w->c.codec->name);
            break;
        }
    }
}

trowel_status trowel_codec_writer_write(trowel_codec_writer *w, const void *data, size_t n)
{
    return n ? run(w, data, n, TROWEL_FLUSH_NONE) : TROWEL_OK;
}

trowel_status trowel_codec_writer_flush(trowel_codec_writer *w)
{
    return run(w, NULL, 0, TROWEL_FLUSH_SYNC);
}

trowel_status trowel_codec_writer_finish(trowel_codec_writer *w, uint64_t *total_out)
{
    trowel_status s = run(w, NULL, 0, TROWEL_FLUSH_FINISH);
    if (total_out)
        *total_out = w->c.total_out;
    trowel_codec_writer_abort(w);
    return s;
}

uint64_t trowel_codec_writer_in(const trowel_codec_writer *w)
{
    return w->c.total_in;
}

uint64_t trowel_codec_writer_out(const trowel_codec_writer *w)
{
    return w->c.total_out;
}
