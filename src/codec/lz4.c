/*
 * LZ4 frames over liblz4's LZ4F API, in the streaming form of
 * core/stream.h (see codec/lz4_frame.h for the contract).
 *
 * LZ4F's decoder already works on in/out buffers. Its encoder does not: it
 * wants room for the worst case of each update. So the encoder compresses
 * into a staging buffer of that size and hands it out as the caller's room
 * allows.
 */
#define LZ4F_STATIC_LINKING_ONLY
#include "codec/lz4_frame.h"
#include "core/module.h"

#include <lz4frame.h>
#include <string.h>

#define STEP ((size_t)64 * 1024) /* input taken per LZ4F_compressUpdate */
/* Without custom allocators, what liblz4 may take for 4 MiB blocks. */
#define LZ4F_MEMORY_GUESS ((uint64_t)9 << 20)

/* ------------------------------------------------------------ allocation */

#ifdef TROWEL_HAVE_LZ4F_CUSTOMMEM
static void *lz4_alloc(void *opaque, size_t size)
{
    return trowel_mem_alloc(opaque, size);
}

static void *lz4_calloc(void *opaque, size_t size)
{
    return trowel_mem_calloc(opaque, 1, size);
}

static void lz4_free(void *opaque, void *p)
{
    trowel_mem_free(opaque, p);
}

static LZ4F_CustomMem custom_mem(trowel_ctx *ctx)
{
    return (LZ4F_CustomMem){lz4_alloc, lz4_calloc, lz4_free, ctx};
}
#endif

static LZ4F_dctx *new_dctx(trowel_ctx *ctx)
{
#ifdef TROWEL_HAVE_LZ4F_CUSTOMMEM
    return LZ4F_createDecompressionContext_advanced(custom_mem(ctx), LZ4F_VERSION);
#else
    LZ4F_dctx *d = NULL;
    if (trowel_mem_check(ctx, LZ4F_MEMORY_GUESS, "the LZ4 decoder") != TROWEL_OK)
        return NULL;
    return LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)) ? NULL : d;
#endif
}

static LZ4F_cctx *new_cctx(trowel_ctx *ctx)
{
#ifdef TROWEL_HAVE_LZ4F_CUSTOMMEM
    return LZ4F_createCompressionContext_advanced(custom_mem(ctx), LZ4F_VERSION);
#else
    LZ4F_cctx *c = NULL;
    if (trowel_mem_check(ctx, LZ4F_MEMORY_GUESS, "the LZ4 encoder") != TROWEL_OK)
        return NULL;
    return LZ4F_isError(LZ4F_createCompressionContext(&c, LZ4F_VERSION)) ? NULL : c;
#endif
}

/* Turns an LZ4F error code into a trowel error at offset. */
static trowel_code lz4_fail(trowel_coder *c, size_t code, uint64_t offset)
{
    trowel_ctx *ctx = c->ctx;
    const char *name = LZ4F_getErrorName(code);
    switch (LZ4F_getErrorCode(code)) {
    case LZ4F_ERROR_allocation_failed:
        if (ctx->last_error.status != TROWEL_ERR_LIMIT && ctx->last_error.status != TROWEL_ERR_NOMEM)
            trowel_fail(ctx, TROWEL_ERR_NOMEM, offset, "liblz4 ran out of memory");
        break;
    case LZ4F_ERROR_contentChecksum_invalid:
        trowel_fail(ctx, TROWEL_ERR_CORRUPT, offset,
                    "the LZ4 frame's content checksum does not match");
        break;
    case LZ4F_ERROR_blockChecksum_invalid:
        trowel_fail(ctx, TROWEL_ERR_CORRUPT, offset, "an LZ4 block checksum does not match");
        break;
    case LZ4F_ERROR_frameType_unknown:
        trowel_fail(ctx, TROWEL_ERR_CORRUPT, offset, "not an LZ4 frame (bad magic number)");
        break;
    case LZ4F_ERROR_frameSize_wrong:
        trowel_fail(ctx, TROWEL_ERR_CORRUPT, offset,
                    "the LZ4 frame's content size does not match its data");
        break;
    default:
        trowel_fail(ctx, TROWEL_ERR_CORRUPT, offset, "the LZ4 frame is corrupt (%s)", name);
        break;
    }
    return TROWEL_CODE_ERROR;
}

/* --------------------------------------------------------------- decoder */

static trowel_code lz4d_run(trowel_coder *c, trowel_codec_io *io, trowel_flush flush)
{
    (void)flush;
    size_t src_size = io->in_len - io->in_pos, dst_size = io->out_cap - io->out_pos;
    const uint8_t *src = io->in ? io->in + io->in_pos : NULL;
    uint8_t *dst = io->out ? io->out + io->out_pos : NULL;
    size_t hint = LZ4F_decompress(c->state, dst, &dst_size, src, &src_size, NULL);
    if (LZ4F_isError(hint))
        return lz4_fail(c, hint, c->in_offset + c->total_in);
    io->in_pos += src_size;
    io->out_pos += dst_size;
    if (hint == 0)
        return TROWEL_CODE_DONE;
    if (src_size || dst_size)
        return TROWEL_CODE_MORE;
    /* Waiting for exactly a block header (4 bytes): between blocks, where
     * a flush (LZ4F_flush) leaves the frame. The frame is still not
     * finished there (unfinished_ok stays false); a VPP's solid stream is
     * checked against its entries' sizes with it. */
    return trowel_code_stall(io, hint == 4 ? TROWEL_CODE_MAY_STOP : TROWEL_CODE_NEED_INPUT);
}

static void lz4d_end(trowel_coder *c)
{
    if (c->state)
        LZ4F_freeDecompressionContext(c->state);
}

static trowel_status lz4d_init(trowel_coder *c, const trowel_codec_params *p)
{
    (void)p;
    LZ4F_dctx *d = new_dctx(c->ctx);
    if (!d) {
        if (c->ctx->last_error.status == TROWEL_OK)
            trowel_fail(c->ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET,
                        "liblz4 cannot make a decoder");
        return c->ctx->last_error.status;
    }
    c->state = d;
    c->run = lz4d_run;
    c->end = lz4d_end;
    return TROWEL_OK;
}

/* --------------------------------------------------------------- encoder */

typedef struct lz4_encoder {
    LZ4F_cctx *cctx;
    LZ4F_preferences_t prefs;
    uint8_t *stage; /* compressed bytes not yet handed out */
    size_t stage_cap, stage_len, stage_pos;
    bool begun, flushed, finished;
} lz4_encoder;

static trowel_code lz4e_error(trowel_coder *c, size_t code)
{
    return lz4_fail(c, code, TROWEL_NO_OFFSET);
}

/* Hands out staged bytes; true when the stage is now empty. */
static bool drain(lz4_encoder *e, trowel_codec_io *io, bool *moved)
{
    size_t n = e->stage_len - e->stage_pos, room = io->out_cap - io->out_pos;
    if (n > room)
        n = room;
    if (n) {
        memcpy(io->out + io->out_pos, e->stage + e->stage_pos, n);
        io->out_pos += n;
        e->stage_pos += n;
        *moved = true;
    }
    if (e->stage_pos < e->stage_len)
        return false;
    e->stage_len = e->stage_pos = 0;
    return true;
}

/* The next piece of frame into the stage: header, a block's worth of
 * input, a flush or the end. Returns 0 when there is nothing to do, else 1
 * with liblz4's result (bytes staged, or an error code) in *res. */
static int stage_next(lz4_encoder *e, trowel_codec_io *io, trowel_flush flush, size_t *res)
{
    if (!e->begun) {
        e->begun = true;
        *res = LZ4F_compressBegin(e->cctx, e->stage, e->stage_cap, &e->prefs);
        return 1;
    }
    if (io->in_pos < io->in_len) {
        size_t take = io->in_len - io->in_pos;
        if (take > STEP)
            take = STEP;
        *res = LZ4F_compressUpdate(e->cctx, e->stage, e->stage_cap, io->in + io->in_pos, take, NULL);
        if (!LZ4F_isError(*res))
            io->in_pos += take;
        e->flushed = false;
        return 1;
    }
    if (flush == TROWEL_FLUSH_FINISH && !e->finished) {
        e->finished = true;
        *res = LZ4F_compressEnd(e->cctx, e->stage, e->stage_cap, NULL);
        return 1;
    }
    if (flush == TROWEL_FLUSH_SYNC && !e->flushed) {
        e->flushed = true;
        *res = LZ4F_flush(e->cctx, e->stage, e->stage_cap, NULL);
        return 1;
    }
    return 0;
}

static trowel_code lz4e_run(trowel_coder *c, trowel_codec_io *io, trowel_flush flush)
{
    lz4_encoder *e = c->state;
    bool moved = false;
    for (;;) {
        if (!drain(e, io, &moved))
            return moved ? TROWEL_CODE_MORE : TROWEL_CODE_NEED_OUTPUT;
        size_t res = 0;
        if (!stage_next(e, io, flush, &res)) {
            bool done = (flush == TROWEL_FLUSH_FINISH && e->finished) ||
                        (flush == TROWEL_FLUSH_SYNC && e->flushed);
            if (done)
                return TROWEL_CODE_DONE;
            return moved ? TROWEL_CODE_MORE : TROWEL_CODE_NEED_INPUT;
        }
        if (LZ4F_isError(res))
            return lz4e_error(c, res);
        moved = true;
        e->stage_len = res;
        e->stage_pos = 0;
    }
}

static void lz4e_end(trowel_coder *c)
{
    lz4_encoder *e = c->state;
    if (!e)
        return;
    if (e->cctx)
        LZ4F_freeCompressionContext(e->cctx);
    trowel_mem_free(c->ctx, e->stage);
    trowel_mem_free(c->ctx, e);
}

static LZ4F_preferences_t encoder_prefs(const trowel_codec_params *p)
{
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof prefs);
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockLinked;
    prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    if (p->size_hint != TROWEL_SIZE_UNKNOWN)
        prefs.frameInfo.contentSize = p->size_hint;
    prefs.compressionLevel = p->level == TROWEL_LEVEL_DEFAULT ? 1 : p->level;
    return prefs;
}

static trowel_status lz4e_init(trowel_coder *c, const trowel_codec_params *p)
{
    trowel_ctx *ctx = c->ctx;
    lz4_encoder *e = trowel_mem_calloc(ctx, 1, sizeof *e);
    if (!e)
        return ctx->last_error.status;
    c->state = e;
    c->end = lz4e_end;
    e->prefs = encoder_prefs(p);
    /* Room for the header, or one step with what liblz4 holds back, or
     * the flush or end. */
    e->stage_cap = LZ4F_compressBound(STEP, &e->prefs);
    if (e->stage_cap < LZ4F_HEADER_SIZE_MAX)
        e->stage_cap = LZ4F_HEADER_SIZE_MAX;
    e->stage = trowel_mem_alloc(ctx, e->stage_cap);
    if (e->stage)
        e->cctx = new_cctx(ctx);
    if (!e->stage || !e->cctx) {
        if (ctx->last_error.status == TROWEL_OK)
            trowel_fail(ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "liblz4 cannot make an encoder");
        lz4e_end(c);
        c->state = NULL;
        return ctx->last_error.status;
    }
    c->run = lz4e_run;
    return TROWEL_OK;
}

/* liblz4's bound for the whole frame, plus a block header and checksum for
 * each sync flush (a flush closes the block early; a block that does not
 * shrink is stored as it is). Saturates. */
static uint64_t lz4_bound(uint64_t n, uint64_t flushes, const trowel_codec_params *p)
{
    LZ4F_preferences_t prefs = encoder_prefs(p);
    if (n > SIZE_MAX / 2)
        return UINT64_MAX;
    uint64_t total = LZ4F_compressFrameBound((size_t)n, &prefs), flush_cost;
    if (trowel_mul_overflows(flushes, 8, &flush_cost) ||
        trowel_add_overflows(total, flush_cost, &total))
        return UINT64_MAX;
    return total;
}

const trowel_stream_codec trowel_lz4_stream = {
    .name = "LZ4",
    .level_min = 1,
    .level_max = 12,
    .level_default = 1,
    .max_ratio = 255,
    .ratio_slack = 1024,
    .unfinished_ok = false,
    /* LZ4F decodes a block straight into the caller's room when a whole
     * block fits, else through its own buffer and a copy; between calls
     * it keeps the last 64 KiB of linked output as its dictionary. 1 MiB
     * holds sixteen 64 KiB blocks (the common size, trowel's own) at one
     * dictionary copy each, without the page faults of a 4 MiB buffer
     * (measured: 36 ms of task clock against 40 for 4 MiB and 43 for
     * 256 KiB on bench_vpp.sh's 26.5 MB frame). A 4 MiB block goes
     * through LZ4F's buffer. */
    .out_chunk = (size_t)1 << 20,
    .bound = lz4_bound,
    .encoder_init = lz4e_init,
    .decoder_init = lz4d_init,
};

/* ----------------------------------------------------------------- codec */

static trowel_status codec_compress(trowel_ctx *ctx, trowel_reader *in, trowel_sink *out)
{
    return trowel_codec_encode_reader(ctx, &trowel_lz4_stream, NULL, in, out);
}

static trowel_status codec_decompress(trowel_ctx *ctx, trowel_reader *in, uint64_t expected_size,
                                      trowel_sink *out)
{
    return trowel_codec_decode_reader(ctx, &trowel_lz4_stream, NULL, in, expected_size, out);
}

const struct trowel_codec trowel_codec_lz4 = {
    .id = "lz4",
    .description = "LZ4 frame (liblz4 frame format: linked blocks, content checksum); "
                   "-O level=1..12",
    .compress = codec_compress,
    .decompress = codec_decompress,
    .stream = &trowel_lz4_stream,
};
