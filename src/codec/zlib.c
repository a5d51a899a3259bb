/*
 * zlib and raw deflate over the zlib library, in the streaming form of
 * core/stream.h (see codec/zlib.h for the contract).
 *
 * zlib already works on in/out buffers; what this file adds is the mapping
 * of its return codes onto trowel's (a sync flush that is complete is DONE
 * for an encoder; Z_BUF_ERROR is a stall, MAY_STOP when inflate stands at a
 * block boundary, MUST_FINISH inside the last block), its allocations
 * through the context's limit, and errors that name the offset.
 */
#define ZLIB_CONST
#include "codec/zlib.h"
#include "core/module.h"

#include <limits.h>
#include <zlib.h>

#define WINDOW_BITS 15
#define MEM_LEVEL 8

/* ------------------------------------------------------------ allocation */

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    uint64_t total;
    if (trowel_mul_overflows(items, size, &total) || total > SIZE_MAX)
        return Z_NULL;
    return trowel_mem_alloc(opaque, (size_t)total);
}

static void z_free(voidpf opaque, voidpf p)
{
    trowel_mem_free(opaque, p);
}

static void init_stream(trowel_ctx *ctx, z_stream *z)
{
    z->zalloc = z_alloc;
    z->zfree = z_free;
    z->opaque = ctx;
}

static z_stream *new_stream(trowel_ctx *ctx)
{
    z_stream *z = trowel_mem_calloc(ctx, 1, sizeof *z);
    if (z)
        init_stream(ctx, z);
    return z;
}

/* Points z at io's unused input and free room (zlib counts in uInt). */
static void z_attach(z_stream *z, const trowel_codec_io *io)
{
    size_t in = io->in_len - io->in_pos, out = io->out_cap - io->out_pos;
    z->next_in = io->in ? io->in + io->in_pos : Z_NULL;
    z->avail_in = in > UINT_MAX ? UINT_MAX : (uInt)in;
    z->next_out = io->out ? io->out + io->out_pos : Z_NULL;
    z->avail_out = out > UINT_MAX ? UINT_MAX : (uInt)out;
}

/* Moves io's positions past what zlib used since z_attach gave it
 * avail_in/avail_out; true when anything moved. */
static bool z_detach(const z_stream *z, uInt avail_in, uInt avail_out, trowel_codec_io *io)
{
    size_t used_in = avail_in - z->avail_in, used_out = avail_out - z->avail_out;
    io->in_pos += used_in;
    io->out_pos += used_out;
    return used_in || used_out;
}

/* Turns a zlib failure into a trowel error at absolute offset. Data
 * errors are told apart by the decoder (inflate_fail), which knows where
 * the stream stands; zlib's message is only passed on to the reader. */
static trowel_code z_fail(trowel_coder *c, const z_stream *z, int r, uint64_t offset)
{
    trowel_ctx *ctx = c->ctx;
    switch (r) {
    case Z_MEM_ERROR:
        /* Our allocator has recorded why (the limit, or the system). */
        if (ctx->last_error.status != TROWEL_ERR_LIMIT && ctx->last_error.status != TROWEL_ERR_NOMEM)
            trowel_fail(ctx, TROWEL_ERR_NOMEM, offset, "zlib ran out of memory");
        break;
    case Z_NEED_DICT:
        trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, offset,
                    "the zlib stream needs a preset dictionary (not supported)");
        break;
    case Z_DATA_ERROR:
        trowel_fail(ctx, TROWEL_ERR_CORRUPT, offset, "the deflate stream is corrupt: %s",
                    z->msg ? z->msg : "bad data");
        break;
    default:
        trowel_fail(ctx, TROWEL_ERR_CORRUPT, offset, "zlib failed (%d)", r);
        break;
    }
    return TROWEL_CODE_ERROR;
}

static void z_end_deflate(trowel_coder *c)
{
    if (!c->state)
        return;
    deflateEnd(c->state);
    trowel_mem_free(c->ctx, c->state);
}

/* --------------------------------------------------------------- decoder */

/* inflate's data_type: +128 when it stopped right after a block's end (or
 * the header), i.e. where an encoder may have flushed and stopped. It is
 * only reported by the call that reaches the boundary (with Z_BLOCK, which
 * makes inflate stop there); a later call that stalls for input reports
 * nothing, so the decoder remembers it. */
#define Z_AT_BLOCK_BOUNDARY 128
#define Z_IN_LAST_BLOCK 64

typedef struct inflater {
    z_stream z; /* first: c->state points at both */
    bool raw;   /* no header, no Adler-32 */
    bool at_boundary;
    /* inflate stopped once right after the last block's end (+64 and +128
     * together): all that can follow in a zlib stream is the Adler-32. */
    bool last_block_ended;
} inflater;

/* Where a Z_DATA_ERROR arose, from what zlib documents (the stream's
 * position and data_type), never from its message text. `offset` is the
 * absolute input offset just past what inflate read. */
static trowel_code inflate_fail(trowel_coder *c, const inflater *st, uint64_t offset)
{
    const z_stream *z = &st->z;
    if (!st->raw && st->last_block_ended)
        /* The only check after the last block: zlib has read all four
         * bytes of the Adler-32 when it compares them. */
        trowel_fail(c->ctx, TROWEL_ERR_CORRUPT, offset - 4,
                    "the zlib stream's Adler-32 does not match");
    else if (!st->raw && z->total_in <= 2 && z->total_out == 0)
        /* Deflate data starts at the third byte: the 2-byte header (method,
         * window size, check bits) was refused. */
        trowel_fail(c->ctx, TROWEL_ERR_CORRUPT, c->in_offset,
                    "the deflate stream is corrupt: %s", z->msg ? z->msg : "bad zlib header");
    else
        trowel_fail(c->ctx, TROWEL_ERR_CORRUPT, offset, "the deflate stream is corrupt: %s",
                    z->msg ? z->msg : "bad deflate data");
    return TROWEL_CODE_ERROR;
}

static void z_end_inflate(trowel_coder *c)
{
    inflater *st = c->state;
    if (!st)
        return;
    inflateEnd(&st->z);
    trowel_mem_free(c->ctx, st);
}

static trowel_code inflate_run(trowel_coder *c, trowel_codec_io *io, trowel_flush flush)
{
    (void)flush;
    inflater *st = c->state;
    z_stream *z = &st->z;
    uint64_t at = c->in_offset + c->total_in;
    size_t in0 = io->in_pos;
    z_attach(z, io);
    uInt avail_in = z->avail_in, avail_out = z->avail_out;
    int r = inflate(z, Z_BLOCK);
    bool moved = z_detach(z, avail_in, avail_out, io);
    if (moved)
        st->at_boundary = (z->data_type & Z_AT_BLOCK_BOUNDARY) != 0;
    if ((z->data_type & (Z_AT_BLOCK_BOUNDARY | Z_IN_LAST_BLOCK)) ==
        (Z_AT_BLOCK_BOUNDARY | Z_IN_LAST_BLOCK))
        st->last_block_ended = true;
    switch (r) {
    case Z_STREAM_END:
        return TROWEL_CODE_DONE;
    case Z_OK:
        return moved ? TROWEL_CODE_MORE : trowel_code_stall(io, TROWEL_CODE_NEED_INPUT);
    case Z_BUF_ERROR:
        /* +64: the last block has begun, so the stream was finished and a
         * stop here (before its end or Adler-32) is truncation. */
        if (z->data_type & Z_IN_LAST_BLOCK)
            return trowel_code_stall(io, TROWEL_CODE_MUST_FINISH);
        return trowel_code_stall(io, st->at_boundary ? TROWEL_CODE_MAY_STOP
                                                     : TROWEL_CODE_NEED_INPUT);
    case Z_DATA_ERROR:
        return inflate_fail(c, st, at + (io->in_pos - in0));
    default:
        return z_fail(c, z, r, at + (io->in_pos - in0));
    }
}

static trowel_status inflate_init(trowel_coder *c, const trowel_codec_params *p)
{
    inflater *st = trowel_mem_calloc(c->ctx, 1, sizeof *st);
    if (!st)
        return c->ctx->last_error.status;
    z_stream *z = &st->z;
    init_stream(c->ctx, z);
    st->raw = (p->flags & TROWEL_CODEC_RAW) != 0;
    int r = inflateInit2(z, st->raw ? -WINDOW_BITS : WINDOW_BITS);
    if (r != Z_OK) {
        z_fail(c, z, r, c->in_offset);
        trowel_mem_free(c->ctx, st);
        return c->ctx->last_error.status;
    }
    c->state = st;
    c->run = inflate_run;
    c->end = z_end_inflate;
    return TROWEL_OK;
}

/* --------------------------------------------------------------- encoder */

/* An encoder that cannot move wants room when it has any input or output
 * pending (the room is used up), else input. */
static trowel_code encoder_stall(const trowel_codec_io *io)
{
    return io->out_pos == io->out_cap ? TROWEL_CODE_NEED_OUTPUT : TROWEL_CODE_NEED_INPUT;
}

static trowel_code deflate_run(trowel_coder *c, trowel_codec_io *io, trowel_flush flush)
{
    z_stream *z = c->state;
    static const int zflush[] = {Z_NO_FLUSH, Z_SYNC_FLUSH, Z_FINISH};
    z_attach(z, io);
    uInt avail_in = z->avail_in, avail_out = z->avail_out;
    int r = deflate(z, zflush[flush]);
    bool moved = z_detach(z, avail_in, avail_out, io);
    bool input_done = io->in_pos == io->in_len;
    switch (r) {
    case Z_STREAM_END:
        return TROWEL_CODE_DONE;
    case Z_OK:
        if (flush == TROWEL_FLUSH_SYNC && input_done && io->out_pos < io->out_cap)
            return TROWEL_CODE_DONE;
        return moved ? TROWEL_CODE_MORE : encoder_stall(io);
    case Z_BUF_ERROR:
        /* No progress possible: after a complete sync flush, nothing is due. */
        if (flush == TROWEL_FLUSH_SYNC && input_done)
            return TROWEL_CODE_DONE;
        return encoder_stall(io);
    default:
        return z_fail(c, z, r, TROWEL_NO_OFFSET);
    }
}

static trowel_status deflate_init(trowel_coder *c, const trowel_codec_params *p)
{
    z_stream *z = new_stream(c->ctx);
    if (!z)
        return c->ctx->last_error.status;
    int level = p->level == TROWEL_LEVEL_DEFAULT ? Z_DEFAULT_COMPRESSION : p->level;
    int bits = (p->flags & TROWEL_CODEC_RAW) ? -WINDOW_BITS : WINDOW_BITS;
    int r = deflateInit2(z, level, Z_DEFLATED, bits, MEM_LEVEL, Z_DEFAULT_STRATEGY);
    if (r != Z_OK) {
        z_fail(c, z, r, TROWEL_NO_OFFSET);
        trowel_mem_free(c->ctx, z);
        return c->ctx->last_error.status;
    }
    c->state = z;
    c->run = deflate_run;
    c->end = z_end_deflate;
    return TROWEL_OK;
}

/* zlib's own bound for these settings (deflateBound), plus the header and
 * Adler-32, plus at most 10 bytes a sync flush adds (pending bits and an
 * empty stored block, or a stored block's header at level 0). Saturates. */
static uint64_t deflate_bound(uint64_t n, uint64_t flushes, const trowel_codec_params *p)
{
    (void)p;
    uint64_t extra = (n >> 12) + (n >> 14) + (n >> 25) + 13 + 6, total, flush_cost;
    if (trowel_mul_overflows(flushes, 10, &flush_cost) || trowel_add_overflows(n, extra, &total) ||
        trowel_add_overflows(total, flush_cost, &total))
        return UINT64_MAX;
    return total;
}

const trowel_stream_codec trowel_zlib_stream = {
    .name = "zlib",
    .level_min = 0,
    .level_max = 9,
    .level_default = 6,
    .max_ratio = 1032,
    .ratio_slack = 0,
    .unfinished_ok = true,
    .bound = deflate_bound,
    .encoder_init = deflate_init,
    .decoder_init = inflate_init,
};

/* ----------------------------------------------------------------- codec */

static trowel_status codec_compress(trowel_ctx *ctx, trowel_reader *in, trowel_sink *out)
{
    return trowel_codec_encode_reader(ctx, &trowel_zlib_stream, NULL, in, out);
}

static trowel_status codec_decompress(trowel_ctx *ctx, trowel_reader *in, uint64_t expected_size,
                                      trowel_sink *out)
{
    return trowel_codec_decode_reader(ctx, &trowel_zlib_stream, NULL, in, expected_size, out);
}

const struct trowel_codec trowel_codec_zlib = {
    .id = "zlib",
    .description = "zlib stream (RFC 1950: header, deflate, Adler-32); -O level=0..9; "
                   "sync-flushed unfinished streams decode",
    .compress = codec_compress,
    .decompress = codec_decompress,
    .stream = &trowel_zlib_stream,
};
