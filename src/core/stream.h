/*
 * The streaming form of a codec, and what trowel builds on it.
 *
 * A streaming codec is a state object run over an input buffer and an
 * output buffer, as zlib's z_stream, liblzma's lzma_stream and zstd's
 * in/out buffers are:
 *
 *     trowel_coder c;
 *     trowel_coder_init_decoder(&c, ctx, &trowel_zlib_stream, &params, offset);
 *     trowel_codec_io io = {in, in_len, 0, out, out_cap, 0};
 *     trowel_code r = trowel_coder_run(&c, &io, TROWEL_FLUSH_NONE);
 *     ...
 *     trowel_coder_end(&c);
 *
 * Each run consumes from io.in[io.in_pos, io.in_len) and writes into
 * io.out[io.out_pos, io.out_cap), moving both positions; it never touches
 * bytes outside those ranges, whatever the input. Its return value is the
 * one signal of where the stream stands (as zstd's), so no caller reads
 * side flags or guesses from the positions:
 *   TROWEL_CODE_DONE         decoders: the stream's end was read and its
 *                            checks (Adler-32, content checksum) passed;
 *                            encoders: the flush or finish asked for is
 *                            complete and all its bytes are in io.out;
 *   TROWEL_CODE_MORE         bytes moved; call again (with more input or
 *                            more room when a side is used up);
 *   TROWEL_CODE_NEED_INPUT   nothing could move, the input is used up, and
 *                            the stream stands in the middle of its data:
 *                            stopping here is truncation unless the
 *                            expected size is met and the codec accepts
 *                            unfinished streams;
 *   TROWEL_CODE_MAY_STOP     a decoder stalled for input at a resting point
 *                            (zlib: a block boundary, e.g. right after a
 *                            sync flush; LZ4: before a block header): an
 *                            unfinished stream may end here;
 *   TROWEL_CODE_MUST_FINISH  a decoder stalled for input inside its
 *                            stream's final part (zlib: the last block, the
 *                            Adler-32): that stream was finished, so a stop
 *                            here is truncation whatever the expected size;
 *   TROWEL_CODE_NEED_OUTPUT  nothing could move for want of output room;
 *   TROWEL_CODE_ERROR        failed; the context's last error says why and
 *                            at which absolute input offset. The coder may
 *                            only be ended after an error.
 * A coder never stalls with both input and room present (the callers treat
 * that as a broken coder).
 *
 * Every allocation of a coder, the third-party library's included (zlib's
 * zalloc/zfree, liblz4's LZ4F_CustomMem), goes through the context's
 * limit-aware allocator.
 *
 * On top of the coder, in src/core/codec.c:
 *  - trowel_codec_decode_reader / trowel_codec_encode_reader: the whole-call
 *    compress/decompress of struct trowel_codec driven from a reader into a
 *    sink, with the expected-size rules every decoder keeps;
 *  - trowel_codec_stream: a forward cursor over one (solid) stream, from
 *    which successive pieces of decoded bytes are read into sinks without
 *    restarting the decoder (a compressed+condensed VPP's entries).
 */
#ifndef TROWEL_CODEC_STREAM_H
#define TROWEL_CODEC_STREAM_H

#include "core/reader.h"

typedef enum trowel_code {
    TROWEL_CODE_ERROR = -1,
    TROWEL_CODE_DONE = 0,
    TROWEL_CODE_MORE,
    /* the stalls: */
    TROWEL_CODE_NEED_INPUT,
    TROWEL_CODE_MAY_STOP,
    TROWEL_CODE_MUST_FINISH,
    TROWEL_CODE_NEED_OUTPUT
} trowel_code;

/* True for the codes that say nothing could move. */
static inline bool trowel_code_stalled(trowel_code r)
{
    return r >= TROWEL_CODE_NEED_INPUT;
}

/* What an encoder should do once its input is used up. Decoders take
 * TROWEL_FLUSH_NONE. */
typedef enum trowel_flush {
    TROWEL_FLUSH_NONE,   /* keep going; output may lag behind input */
    TROWEL_FLUSH_SYNC,   /* emit everything so far on a byte boundary; the
                          * stream stays open (zlib Z_SYNC_FLUSH, LZ4F_flush) */
    TROWEL_FLUSH_FINISH  /* end the stream (trailer, checksum) */
} trowel_flush;

typedef struct trowel_codec_io {
    const uint8_t *in;
    size_t in_len;
    size_t in_pos;
    uint8_t *out;
    size_t out_cap;
    size_t out_pos;
} trowel_codec_io;

/* The stall a coder reports when nothing moved: for want of room while
 * input is left, else `for_input` (NEED_INPUT, MAY_STOP or MUST_FINISH:
 * where the stream stands). */
static inline trowel_code trowel_code_stall(const trowel_codec_io *io, trowel_code for_input)
{
    return io->in_pos < io->in_len ? TROWEL_CODE_NEED_OUTPUT : for_input;
}

/* Levels: TROWEL_LEVEL_DEFAULT picks the codec's default. */
#define TROWEL_LEVEL_DEFAULT (-1)

/* zlib: raw deflate (no 2-byte header, no Adler-32), for containers that
 * frame deflate themselves (SR2 PS3 chunks). */
#define TROWEL_CODEC_RAW 1u

typedef struct trowel_codec_params {
    int level;          /* TROWEL_LEVEL_DEFAULT or within the codec's range */
    unsigned flags;     /* TROWEL_CODEC_* */
    uint64_t size_hint; /* encoders: the input's total size when known, else
                         * TROWEL_SIZE_UNKNOWN (LZ4 records it in the frame) */
} trowel_codec_params;

/* Default parameters (level default, no flags, size unknown). */
trowel_codec_params trowel_codec_params_default(void);

typedef struct trowel_coder trowel_coder;

typedef struct trowel_stream_codec {
    const char *name;     /* for messages: "zlib", "LZ4" */
    int level_min, level_max, level_default;
    /* The most bytes one input byte can decode to (deflate: 1032, LZ4: 255),
     * plus a constant: a stream of n bytes never decodes to more than
     * n * max_ratio + ratio_slack. Declared sizes past that are refused
     * before anything is decoded. */
    uint32_t max_ratio;
    uint32_t ratio_slack;
    /* Unfinished streams (no end, no checksum) are accepted when the
     * expected size is met, or (size unknown) when the decoder is resting. */
    bool unfinished_ok;
    /* The output buffer the whole-call decoder prefers for large outputs
     * (0: the default 256 KiB). */
    size_t out_chunk;
    /* The largest encoding of n input bytes in one stream, finished once,
     * with up to `flushes` sync flushes besides. */
    uint64_t (*bound)(uint64_t n, uint64_t flushes, const trowel_codec_params *p);
    /* Set up c->state, c->run and c->end. On failure the context holds the
     * error and nothing is left allocated. */
    trowel_status (*encoder_init)(trowel_coder *c, const trowel_codec_params *p);
    trowel_status (*decoder_init)(trowel_coder *c, const trowel_codec_params *p);
} trowel_stream_codec;

struct trowel_coder {
    trowel_ctx *ctx;
    const trowel_stream_codec *codec;
    trowel_code (*run)(trowel_coder *c, trowel_codec_io *io, trowel_flush flush);
    void (*end)(trowel_coder *c);
    void *state;
    uint64_t in_offset; /* absolute input offset of the stream's first byte */
    uint64_t total_in;  /* bytes consumed so far (kept by trowel_coder_run) */
    uint64_t total_out; /* bytes produced so far */
};

trowel_status trowel_coder_init_decoder(trowel_coder *c, trowel_ctx *ctx,
                                        const trowel_stream_codec *codec,
                                        const trowel_codec_params *p, uint64_t in_offset);
trowel_status trowel_coder_init_encoder(trowel_coder *c, trowel_ctx *ctx,
                                        const trowel_stream_codec *codec,
                                        const trowel_codec_params *p);
/* One step (see above); keeps total_in/total_out. */
trowel_code trowel_coder_run(trowel_coder *c, trowel_codec_io *io, trowel_flush flush);
/* Frees everything the coder holds; safe on a coder that failed to start
 * or was already ended. */
void trowel_coder_end(trowel_coder *c);
/* The absolute input offset of the next byte the coder will consume, for
 * messages (between runs; inside a run a codec adds what it consumed). */
uint64_t trowel_coder_offset(const trowel_coder *c);

/* Checks a level against the codec's range (USAGE when outside). */
trowel_status trowel_codec_check_level(trowel_ctx *ctx, const trowel_stream_codec *codec,
                                       int level);
/* True when n input bytes could decode to `size` bytes (the ratio check). */
bool trowel_codec_size_plausible(const trowel_stream_codec *codec, uint64_t n, uint64_t size);

/* ---- whole calls over a reader, for struct trowel_codec */

/* Decodes the rest of r's window into out. expected_size is exact or
 * TROWEL_SIZE_UNKNOWN. Refuses a declared size the input cannot hold (the
 * ratio: TRUNCATED, before decoding), output beyond expected_size (CORRUPT;
 * nothing past it is written) and input left after the stream's end
 * (CORRUPT); a stream that stops short is TRUNCATED with the offset where
 * the input ran out. Memory: the coder plus
 * one 256 KiB buffer (the cursor below: the same). */
trowel_status trowel_codec_decode_reader(trowel_ctx *ctx, const trowel_stream_codec *codec,
                                         const trowel_codec_params *p, trowel_reader *r,
                                         uint64_t expected_size, trowel_sink *out);
/* Encodes the rest of r's window into out as one finished stream. */
trowel_status trowel_codec_encode_reader(trowel_ctx *ctx, const trowel_stream_codec *codec,
                                         const trowel_codec_params *p, trowel_reader *r,
                                         trowel_sink *out);

/* ---- a forward cursor over one stream */

typedef struct trowel_codec_stream trowel_codec_stream;

/* Opens a decoding cursor over the rest of src's window (src is copied; the
 * input must stay open). Decoded position 0. */
trowel_status trowel_codec_stream_open(trowel_ctx *ctx, const trowel_stream_codec *codec,
                                       const trowel_codec_params *p, const trowel_reader *src,
                                       trowel_codec_stream **out);
void trowel_codec_stream_close(trowel_codec_stream *s);
/* Decodes exactly the next n bytes into out (NULL: decode and drop them).
 * A stream that ends or stops first is TRUNCATED, naming the decoded
 * position and the input offset. Nothing beyond the n bytes is decoded. */
trowel_status trowel_codec_stream_read(trowel_codec_stream *s, uint64_t n, trowel_sink *out);
/* Moves to decoded position pos: forward by decoding and dropping, backward
 * by starting the stream again (counted in restarts). */
trowel_status trowel_codec_stream_seek(trowel_codec_stream *s, uint64_t pos);
/* The decoded position, and the input bytes consumed so far. */
uint64_t trowel_codec_stream_tell(const trowel_codec_stream *s);
uint64_t trowel_codec_stream_consumed(const trowel_codec_stream *s);
/* How many times seek went backward and restarted the decoder. */
unsigned trowel_codec_stream_restarts(const trowel_codec_stream *s);
/* Checks that the stream holds nothing past the current position: it ends
 * here (finished, with its checks, and no input after it) or, for codecs
 * that allow it, stops here at a resting point with the input used up.
 * CORRUPT when more bytes would decode or input is left over. */
trowel_status trowel_codec_stream_finish(trowel_codec_stream *s);

/* ---- an encoder cursor, beside the decoder cursor (core/codec_writer.c) */

typedef struct trowel_codec_writer trowel_codec_writer;

/* Opens an encoder that writes one stream into out as bytes are handed to
 * it. out NULL: nothing is written, the encoded bytes are only counted (a
 * sizing pass). Every byte made is in out when a call returns, so the
 * caller may write its own bytes between calls. */
trowel_status trowel_codec_writer_open(trowel_ctx *ctx, const trowel_stream_codec *codec,
                                       const trowel_codec_params *p, trowel_sink *out,
                                       trowel_codec_writer **w);
/* Encodes data[0, n); the coder may hold some back until a flush. */
trowel_status trowel_codec_writer_write(trowel_codec_writer *w, const void *data, size_t n);
/* A sync flush: everything so far, on a byte boundary; the stream stays open. */
trowel_status trowel_codec_writer_flush(trowel_codec_writer *w);
/* Ends the stream (trailer, checksum) and frees w, whatever the outcome;
 * *total_out (when not NULL) gets the stream's encoded size. */
trowel_status trowel_codec_writer_finish(trowel_codec_writer *w, uint64_t *total_out);
/* Frees w without ending the stream (after a failure, or an unfinished
 * stream by design). NULL is fine. */
void trowel_codec_writer_abort(trowel_codec_writer *w);
/* Bytes handed in, and encoded bytes made (written or counted), so far. */
uint64_t trowel_codec_writer_in(const trowel_codec_writer *w);
uint64_t trowel_codec_writer_out(const trowel_codec_writer *w);

#endif
