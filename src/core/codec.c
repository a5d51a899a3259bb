/*
 * What every streaming codec shares (see core/stream.h): the coder's
 * bookkeeping, the whole-call decode/encode adapters that drive a coder from
 * a reader into a sink, and the forward cursor over a solid stream.
 *
 * The rules on sizes live here once, so every streaming codec keeps them the
 * same way: a declared size the input cannot hold is refused before decoding;
 * no byte beyond the expected size is ever written (a bomb stops at the
 * first extra byte); a stream that stops short names the input offset where
 * it ran out.
 */
#include "stream.h"
#include "module.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK ((size_t)256 * 1024)

trowel_codec_params trowel_codec_params_default(void)
{
    return (trowel_codec_params){TROWEL_LEVEL_DEFAULT, 0, TROWEL_SIZE_UNKNOWN};
}

/* ----------------------------------------------------------------- coder */

static trowel_status coder_start(trowel_coder *c, trowel_ctx *ctx, const trowel_stream_codec *codec,
                                 const trowel_codec_params *p, uint64_t in_offset, bool encode)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->codec = codec;
    c->in_offset = in_offset;
    trowel_codec_params def = trowel_codec_params_default();
    if (!p)
        p = &def;
    if (encode) {
        trowel_status s = trowel_codec_check_level(ctx, codec, p->level);
        if (s != TROWEL_OK)
            return s;
    }
    trowel_status s = encode ? codec->encoder_init(c, p) : codec->decoder_init(c, p);
    if (s != TROWEL_OK) {
        c->run = NULL;
        c->end = NULL;
    }
    return s;
}

trowel_status trowel_coder_init_decoder(trowel_coder *c, trowel_ctx *ctx,
                                        const trowel_stream_codec *codec,
                                        const trowel_codec_params *p, uint64_t in_offset)
{
    return coder_start(c, ctx, codec, p, in_offset, false);
}

trowel_status trowel_coder_init_encoder(trowel_coder *c, trowel_ctx *ctx,
                                        const trowel_stream_codec *codec,
                                        const trowel_codec_params *p)
{
    return coder_start(c, ctx, codec, p, 0, true);
}

trowel_code trowel_coder_run(trowel_coder *c, trowel_codec_io *io, trowel_flush flush)
{
    size_t in0 = io->in_pos, out0 = io->out_pos;
    trowel_code r = c->run(c, io, flush);
    c->total_in += io->in_pos - in0;
    c->total_out += io->out_pos - out0;
    return r;
}

void trowel_coder_end(trowel_coder *c)
{
    if (c->end)
        c->end(c);
    c->end = NULL;
    c->run = NULL;
    c->state = NULL;
}

uint64_t trowel_coder_offset(const trowel_coder *c)
{
    return c->in_offset + c->total_in;
}

trowel_status trowel_codec_check_level(trowel_ctx *ctx, const trowel_stream_codec *codec, int level)
{
    if (level == TROWEL_LEVEL_DEFAULT || (level >= codec->level_min && level <= codec->level_max))
        return TROWEL_OK;
    return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                       "%s levels go from %d to %d, not %d", codec->name, codec->level_min,
                       codec->level_max, level);
}

bool trowel_codec_size_plausible(const trowel_stream_codec *codec, uint64_t n, uint64_t size)
{
    uint64_t most;
    if (trowel_mul_overflows(n, codec->max_ratio, &most) ||
        trowel_add_overflows(most, codec->ratio_slack, &most))
        return true;
    return size <= most;
}

/* ------------------------------------------------------- input feeding */

/* Refills io's input from r when it is used up; *eof once r has no more. */
static trowel_status feed(trowel_reader *r, trowel_codec_io *io, bool *eof)
{
    if (io->in_pos < io->in_len)
        return TROWEL_OK;
    const uint8_t *p = NULL;
    size_t got = 0;
    trowel_status s = trowel_reader_borrow(r, TROWEL_READER_SPAN_MAX, &p, &got);
    if (s != TROWEL_OK)
        return s;
    io->in = p;
    io->in_len = got;
    io->in_pos = 0;
    *eof = got == 0;
    return TROWEL_OK;
}

/* --------------------------------------------------------- the decoder */

typedef struct decode_job {
    trowel_coder *c;
    trowel_reader *r;
    trowel_codec_io io;
    bool eof;
    trowel_code last; /* what the coder said last (DONE stays: nothing runs
                       * the coder after it) */
} decode_job;

#define DECODE_JOB(c, r) ((decode_job){(c), (r), {0}, false, TROWEL_CODE_MORE})

/* Decodes into buf[0, room) until it is full, the stream ends or the input
 * runs out; *made bytes. Returns the last code, also kept in j->last (a
 * stall for input with j->eof when the input ran out first). */
static trowel_code decode_some(decode_job *j, uint8_t *buf, size_t room, size_t *made)
{
    j->io.out = buf;
    j->io.out_cap = room;
    j->io.out_pos = 0;
    trowel_code r = TROWEL_CODE_MORE;
    while (j->io.out_pos < room) {
        if (feed(j->r, &j->io, &j->eof) != TROWEL_OK) {
            r = TROWEL_CODE_ERROR;
            break;
        }
        r = trowel_coder_run(j->c, &j->io, TROWEL_FLUSH_NONE);
        if (r == TROWEL_CODE_ERROR || r == TROWEL_CODE_DONE)
            break;
        if (trowel_code_stalled(r) && j->io.in_pos < j->io.in_len) {
            /* Input and room both present: a coder that cannot move is broken. */
            trowel_fail(j->c->ctx, TROWEL_ERR_CORRUPT, trowel_coder_offset(j->c),
                        "the %s decoder cannot make progress", j->c->codec->name);
            r = TROWEL_CODE_ERROR;
            break;
        }
        if (trowel_code_stalled(r) && j->eof)
            break;
    }
    *made = j->io.out_pos;
    j->last = r;
    return r;
}

/* The input offset where the stream's bytes ran out. */
static uint64_t end_offset(const decode_job *j)
{
    return trowel_reader_abs(j->r) - (j->io.in_len - j->io.in_pos);
}

static trowel_status fail_unended(decode_job *j)
{
    return trowel_fail(j->c->ctx, TROWEL_ERR_TRUNCATED, end_offset(j),
                       "the %s stream ends without its end mark after %llu bytes",
                       j->c->codec->name, (unsigned long long)j->c->total_out);
}

/* After the expected bytes: the stream must end (or, unfinished, stop)
 * here. A probe of one byte finds a bomb without writing its excess. */
static trowel_status expect_end(decode_job *j, uint64_t expected)
{
    trowel_ctx *ctx = j->c->ctx;
    const trowel_stream_codec *codec = j->c->codec;
    uint8_t probe;
    size_t made = 0;
    trowel_code r = j->last;
    if (r != TROWEL_CODE_DONE)
        r = decode_some(j, &probe, 1, &made);
    if (r == TROWEL_CODE_ERROR)
        return ctx->last_error.status;
    if (made)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, trowel_coder_offset(j->c),
                           "the %s stream decodes to more than the %llu bytes expected",
                           codec->name, (unsigned long long)expected);
    switch (r) {
    case TROWEL_CODE_MUST_FINISH:
        return fail_unended(j);
    case TROWEL_CODE_NEED_INPUT:
    case TROWEL_CODE_MAY_STOP:
    case TROWEL_CODE_NEED_OUTPUT:
        return codec->unfinished_ok ? TROWEL_OK : fail_unended(j);
    default:
        return TROWEL_OK;
    }
}

/* Nothing may follow the end of a stream in its window. */
static trowel_status no_trailing_input(decode_job *j)
{
    uint64_t left = (j->io.in_len - j->io.in_pos) + trowel_reader_remaining(j->r);
    if (left == 0 || j->last != TROWEL_CODE_DONE)
        return TROWEL_OK;
    return trowel_fail(j->c->ctx, TROWEL_ERR_CORRUPT, end_offset(j),
                       "%llu bytes follow the end of the %s stream", (unsigned long long)left,
                       j->c->codec->name);
}

/* The stream stopped (input used up, no end) before its expected size, or
 * with the size unknown: accepted only at a resting point. */
static trowel_status stopped_short(decode_job *j, uint64_t expected)
{
    trowel_ctx *ctx = j->c->ctx;
    const trowel_stream_codec *codec = j->c->codec;
    uint64_t total = j->c->total_out;
    if (expected != TROWEL_SIZE_UNKNOWN)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, end_offset(j),
                           "the %s stream ends after %llu of the %llu bytes expected", codec->name,
                           (unsigned long long)total, (unsigned long long)expected);
    if (codec->unfinished_ok && j->last == TROWEL_CODE_MAY_STOP) {
        trowel_warn(ctx, end_offset(j),
                    "the %s stream stops at a flush point without its end (%llu bytes)",
                    codec->name, (unsigned long long)total);
        return TROWEL_OK;
    }
    return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, end_offset(j),
                       "the %s stream is cut short after %llu decoded bytes", codec->name,
                       (unsigned long long)total);
}

static trowel_status decode_loop(decode_job *j, uint64_t expected, uint8_t *buf, size_t chunk,
                                 trowel_sink *out)
{
    trowel_ctx *ctx = j->c->ctx;
    uint64_t in_size = trowel_reader_remaining(j->r);
    for (;;) {
        uint64_t due = expected == TROWEL_SIZE_UNKNOWN ? UINT64_MAX : expected - j->c->total_out;
        size_t room = due < chunk ? (size_t)due : chunk;
        size_t made = 0;
        trowel_code r = room ? decode_some(j, buf, room, &made) : j->last;
        if (r == TROWEL_CODE_ERROR)
            return ctx->last_error.status;
        if (made) {
            trowel_status s = trowel_sink_write(out, buf, made);
            if (s != TROWEL_OK)
                return s;
            trowel_progress(ctx, in_size - trowel_reader_remaining(j->r), in_size);
        }
        if (expected != TROWEL_SIZE_UNKNOWN && j->c->total_out == expected)
            return expect_end(j, expected);
        switch (r) {
        case TROWEL_CODE_DONE:
            if (expected != TROWEL_SIZE_UNKNOWN)
                return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, end_offset(j),
                                   "the %s stream ends after %llu of the %llu bytes expected",
                                   j->c->codec->name, (unsigned long long)j->c->total_out,
                                   (unsigned long long)expected);
            return TROWEL_OK;
        case TROWEL_CODE_MORE:
            break;
        default: /* a stall: only for input once the input ran out */
            if (j->eof)
                return stopped_short(j, expected);
            break;
        }
    }
}

trowel_status trowel_codec_decode_reader(trowel_ctx *ctx, const trowel_stream_codec *codec,
                                         const trowel_codec_params *p, trowel_reader *r,
                                         uint64_t expected_size, trowel_sink *out)
{
    uint64_t n = trowel_reader_remaining(r);
    if (expected_size != TROWEL_SIZE_UNKNOWN && !trowel_codec_size_plausible(codec, n, expected_size))
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, trowel_reader_abs(r) + n,
                           "%llu bytes of %s cannot decode to the %llu bytes expected",
                           (unsigned long long)n, codec->name, (unsigned long long)expected_size);
    /* Big outputs get the codec's preferred buffer (LZ4 decodes a block
     * straight into it only when a whole block fits). */
    size_t chunk = CHUNK;
    if (codec->out_chunk > chunk && (expected_size == TROWEL_SIZE_UNKNOWN || expected_size > chunk))
        chunk = codec->out_chunk;
    uint8_t *buf = trowel_mem_alloc(ctx, chunk);
    if (!buf)
        return ctx->last_error.status;
    trowel_coder c;
    trowel_status s = trowel_coder_init_decoder(&c, ctx, codec, p, trowel_reader_abs(r));
    if (s == TROWEL_OK) {
        decode_job j = DECODE_JOB(&c, r);
        s = decode_loop(&j, expected_size, buf, chunk, out);
        if (s == TROWEL_OK)
            s = no_trailing_input(&j);
    }
    trowel_coder_end(&c);
    trowel_mem_free(ctx, buf);
    return s;
}

/* --------------------------------------------------------- the encoder */

static trowel_status encode_loop(trowel_coder *c, trowel_reader *r, uint8_t *buf, trowel_sink *out)
{
    trowel_ctx *ctx = c->ctx;
    uint64_t in_size = trowel_reader_remaining(r);
    trowel_codec_io io = {0};
    bool eof = false;
    for (;;) {
        trowel_status s = feed(r, &io, &eof);
        if (s != TROWEL_OK)
            return s;
        io.out = buf;
        io.out_cap = CHUNK;
        io.out_pos = 0;
        trowel_code code = trowel_coder_run(c, &io, eof ? TROWEL_FLUSH_FINISH : TROWEL_FLUSH_NONE);
        if (code == TROWEL_CODE_ERROR)
            return ctx->last_error.status;
        if (io.out_pos && (s = trowel_sink_write(out, buf, io.out_pos)) != TROWEL_OK)
            return s;
        trowel_progress(ctx, in_size - trowel_reader_remaining(r), in_size);
        if (code == TROWEL_CODE_DONE && eof)
            return TROWEL_OK;
        if (trowel_code_stalled(code) && eof && io.out_pos == 0)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                               "the %s encoder cannot finish its stream", c->codec->name);
    }
}

trowel_status trowel_codec_encode_reader(trowel_ctx *ctx, const trowel_stream_codec *codec,
                                         const trowel_codec_params *p, trowel_reader *r,
                                         trowel_sink *out)
{
    trowel_codec_params q = p ? *p : trowel_codec_params_default();
    if (q.size_hint == TROWEL_SIZE_UNKNOWN)
        q.size_hint = trowel_reader_remaining(r);
    uint8_t *buf = trowel_mem_alloc(ctx, CHUNK);
    if (!buf)
        return ctx->last_error.status;
    trowel_coder c;
    trowel_status s = trowel_coder_init_encoder(&c, ctx, codec, &q);
    if (s == TROWEL_OK)
        s = encode_loop(&c, r, buf, out);
    trowel_coder_end(&c);
    trowel_mem_free(ctx, buf);
    return s;
}

/* ----------------------------------------------------------- the cursor */

struct trowel_codec_stream {
    trowel_ctx *ctx;
    const trowel_stream_codec *codec;
    trowel_codec_params params;
    trowel_reader origin; /* the window as opened, for restarts */
    trowel_reader r;
    trowel_coder c;
    decode_job job;       /* job.last: the last code the coder gave */
    uint8_t *buf;
    unsigned restarts;
};

static trowel_status cursor_start(trowel_codec_stream *s)
{
    s->r = s->origin;
    trowel_status st = trowel_coder_init_decoder(&s->c, s->ctx, s->codec, &s->params,
                                                 trowel_reader_abs(&s->r));
    s->job = DECODE_JOB(&s->c, &s->r);
    return st;
}

trowel_status trowel_codec_stream_open(trowel_ctx *ctx, const trowel_stream_codec *codec,
                                       const trowel_codec_params *p, const trowel_reader *src,
                                       trowel_codec_stream **out)
{
    *out = NULL;
    trowel_codec_stream *s = trowel_mem_calloc(ctx, 1, sizeof *s);
    if (!s)
        return ctx->last_error.status;
    s->ctx = ctx;
    s->codec = codec;
    s->params = p ? *p : trowel_codec_params_default();
    trowel_status st = trowel_reader_rest(src, &s->origin);
    if (st == TROWEL_OK && !(s->buf = trowel_mem_alloc(ctx, CHUNK)))
        st = ctx->last_error.status;
    if (st == TROWEL_OK)
        st = cursor_start(s);
    if (st != TROWEL_OK) {
        trowel_codec_stream_close(s);
        return st;
    }
    *out = s;
    return TROWEL_OK;
}

void trowel_codec_stream_close(trowel_codec_stream *s)
{
    if (!s)
        return;
    trowel_coder_end(&s->c);
    trowel_mem_free(s->ctx, s->buf);
    trowel_mem_free(s->ctx, s);
}

uint64_t trowel_codec_stream_tell(const trowel_codec_stream *s) { return s->c.total_out; }
uint64_t trowel_codec_stream_consumed(const trowel_codec_stream *s) { return s->c.total_in; }
unsigned trowel_codec_stream_restarts(const trowel_codec_stream *s) { return s->restarts; }

/* Gives back the part of the borrowed input span the coder has not read
 * (the reader steps back over it), so that the cursor holds no pointer into
 * the input between calls: whoever reads the same input meanwhile (trowel
 * mount reads several entries of one file in turn) may refill the input's
 * window under it. */
static void give_back_input(decode_job *j)
{
    j->r->pos -= j->io.in_len - j->io.in_pos;
    j->io.in = NULL;
    j->io.in_len = j->io.in_pos = 0;
}

static trowel_status stream_read(trowel_codec_stream *s, uint64_t n, trowel_sink *out);

trowel_status trowel_codec_stream_read(trowel_codec_stream *s, uint64_t n, trowel_sink *out)
{
    trowel_status st = stream_read(s, n, out);
    give_back_input(&s->job);
    return st;
}

static trowel_status stream_read(trowel_codec_stream *s, uint64_t n, trowel_sink *out)
{
    while (n > 0) {
        if (s->job.last == TROWEL_CODE_DONE)
            return trowel_fail(s->ctx, TROWEL_ERR_TRUNCATED, end_offset(&s->job),
                               "the %s stream ends at decoded byte %llu, %llu more were wanted",
                               s->codec->name, (unsigned long long)s->c.total_out,
                               (unsigned long long)n);
        size_t room = n < CHUNK ? (size_t)n : CHUNK;
        size_t made = 0;
        trowel_code r = decode_some(&s->job, s->buf, room, &made);
        if (r == TROWEL_CODE_ERROR)
            return s->ctx->last_error.status;
        if (made && out) {
            trowel_status st = trowel_sink_write(out, s->buf, made);
            if (st != TROWEL_OK)
                return st;
        }
        n -= made;
        if (n > 0 && trowel_code_stalled(r) && s->job.eof)
            return trowel_fail(s->ctx, TROWEL_ERR_TRUNCATED, end_offset(&s->job),
                               "the %s stream stops at decoded byte %llu, %llu more were wanted",
                               s->codec->name, (unsigned long long)s->c.total_out,
                               (unsigned long long)n);
    }
    return TROWEL_OK;
}

trowel_status trowel_codec_stream_seek(trowel_codec_stream *s, uint64_t pos)
{
    if (pos < s->c.total_out) {
        trowel_coder_end(&s->c);
        s->restarts++;
        trowel_status st = cursor_start(s);
        if (st != TROWEL_OK)
            return st;
    }
    return trowel_codec_stream_read(s, pos - s->c.total_out, NULL);
}

trowel_status trowel_codec_stream_finish(trowel_codec_stream *s)
{
    trowel_status st = expect_end(&s->job, s->c.total_out);
    /* Without an expected size to decide, an unfinished stream must stop
     * where its encoder flushed. */
    bool at_rest = s->job.last == TROWEL_CODE_DONE || s->job.last == TROWEL_CODE_MAY_STOP;
    if (st == TROWEL_OK && !at_rest)
        st = trowel_fail(s->ctx, TROWEL_ERR_TRUNCATED, end_offset(&s->job),
                         "the %s stream stops in the middle of a block after %llu bytes",
                         s->codec->name, (unsigned long long)s->c.total_out);
    if (st == TROWEL_OK)
        st = no_trailing_input(&s->job);
    give_back_input(&s->job);
    return st;
}

/* ------------------------------------------------------- public options */

int trowel_codec_levels(const trowel_codec *c, int *min, int *max, int *def)
{
    if (!c->stream)
        return 0;
    *min = c->stream->level_min;
    *max = c->stream->level_max;
    *def = c->stream->level_default;
    return 1;
}

/* Reads "level=N" into p. */
static trowel_status parse_level(trowel_ctx *ctx, const trowel_stream_codec *codec,
                                 const char *text, trowel_codec_params *p)
{
    char *end = NULL;
    long v = text[0] >= '0' && text[0] <= '9' ? strtol(text, &end, 10) : -1;
    if (!end || *end || v < codec->level_min || v > codec->level_max)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "%s levels go from %d to %d, not '%s'", codec->name, codec->level_min,
                           codec->level_max, text);
    p->level = (int)v;
    return TROWEL_OK;
}

trowel_status trowel_codec_compress_with(trowel_ctx *ctx, const trowel_codec *c, trowel_input *in,
                                         const char *const *options, size_t option_count,
                                         trowel_sink *out)
{
    if (option_count == 0)
        return trowel_codec_compress(ctx, c, in, out);
    trowel_ctx_clear_error(ctx);
    if (!c->stream)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "codec %s takes no options",
                           c->id);
    static const char *const allowed[] = {"level", NULL};
    trowel_status s = trowel_options_check(ctx, options, option_count, allowed);
    trowel_codec_params p = trowel_codec_params_default();
    const char *level = trowel_options_get(options, option_count, "level");
    if (s == TROWEL_OK && level)
        s = parse_level(ctx, c->stream, level, &p);
    if (s != TROWEL_OK)
        return s;
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    return trowel_codec_encode_reader(ctx, c->stream, &p, &r, out);
}
