/*
 * Tests of the encoder cursor (core/codec_writer.c): bytes handed over in
 * uneven pieces, sync-flushed between some, finished, decode back to the
 * same bytes through zlib and LZ4 (trowel's decoder, and for zlib the
 * zlib library itself); every flush point is a place where the bytes so
 * far decode to exactly the input so far and the decoder may stop; a
 * counting pass (no sink) gives the writing pass's sizes; a failing sink
 * fails the call that met it and nothing is left allocated.
 */
#include "codec_io.h"
#include "test.h"

#include "codec/lz4_frame.h"
#include "codec/zlib.h"
#include "core/module.h"
#include "core/sink.h"

#include <zlib.h>

#define PIECES 12

/* The end of each piece: uneven, one empty, one past 64 KiB (more than the
 * cursor's output buffer when stored). */
static size_t piece_end(size_t i, size_t len)
{
    size_t end = (i + 1) * len / PIECES;
    if (i == 4)
        end = i * len / PIECES; /* empty */
    return end;
}

/* Input made of text, noise and zeros. */
static buf make_input(void)
{
    static const char *const words[] = {"packfile ", "flush ", "stream ", "\n"};
    buf b = make_text_from(words, 4, 300000);
    fill_random(b.data + 100000, 70000, 7);
    memset(b.data + 200000, 0, 30000);
    return b;
}

/* Decodes z[0, n) with the bare coder; how many bytes it made and the last
 * code it gave when the input ran out (or DONE/ERROR). */
static trowel_code decode_prefix(const trowel_stream_codec *codec, const uint8_t *z, size_t n,
                                 uint8_t *out, size_t cap, size_t *made)
{
    trowel_ctx *ctx = new_ctx();
    trowel_coder c;
    trowel_code r = TROWEL_CODE_ERROR;
    *made = 0;
    CHECK_EQ_U64(trowel_coder_init_decoder(&c, ctx, codec, NULL, 0), TROWEL_OK);
    trowel_codec_io io = {z, n, 0, out, cap, 0};
    while (c.run && (r = trowel_coder_run(&c, &io, TROWEL_FLUSH_NONE)) == TROWEL_CODE_MORE)
        ;
    *made = io.out_pos;
    trowel_coder_end(&c);
    trowel_ctx_free(ctx);
    return r;
}

/* Writes the input in pieces (a flush after every odd piece) into out
 * (NULL: count only); at[i] gets the encoded size after piece i's flush,
 * or 0 when none followed it. Returns the total from finish. */
static uint64_t write_pieces(trowel_ctx *ctx, const trowel_stream_codec *codec, int level,
                             const buf *in, trowel_sink *out, uint64_t *at)
{
    trowel_codec_params p = trowel_codec_params_default();
    p.level = level;
    p.size_hint = in->len;
    trowel_codec_writer *w;
    CHECK_EQ_U64(trowel_codec_writer_open(ctx, codec, &p, out, &w), TROWEL_OK);
    if (!w)
        return 0;
    size_t start = 0;
    for (size_t i = 0; i < PIECES; i++) {
        size_t end = piece_end(i, in->len);
        CHECK_EQ_U64(trowel_codec_writer_write(w, in->data + start, end - start), TROWEL_OK);
        CHECK_EQ_U64(trowel_codec_writer_in(w), end);
        at[i] = 0;
        if (i % 2) {
            CHECK_EQ_U64(trowel_codec_writer_flush(w), TROWEL_OK);
            at[i] = trowel_codec_writer_out(w);
            if (out)
                CHECK_EQ_U64(trowel_sink_written(out), at[i]);
        }
        start = end;
    }
    uint64_t total = 0;
    CHECK_EQ_U64(trowel_codec_writer_finish(w, &total), TROWEL_OK);
    return total;
}

static void round_trip(const trowel_stream_codec *codec, const char *id, int level)
{
    trowel_ctx *ctx = new_ctx();
    buf in = make_input();
    trowel_sink *sink;
    REQUIRE(trowel_sink_open_memory(ctx, &sink) == TROWEL_OK);
    uint64_t at[PIECES], counted_at[PIECES];
    uint64_t total = write_pieces(ctx, codec, level, &in, sink, at);
    uint64_t counted = write_pieces(ctx, codec, level, &in, NULL, counted_at);
    CHECK_EQ_U64(counted, total);
    for (size_t i = 0; i < PIECES; i++)
        CHECK_EQ_U64(counted_at[i], at[i]);
    buf z = {0};
    REQUIRE(trowel_sink_take(sink, &z.data, &z.len) == TROWEL_OK);
    trowel_sink_discard(sink); /* the buffer is ours now */
    CHECK_EQ_U64(z.len, total);
    /* The whole stream, through trowel's whole-call decoder. */
    buf back;
    CHECK_EQ_U64(codec_decode(ctx, id, z.data, z.len, in.len, &back, NULL), TROWEL_OK);
    CHECK(buf_equals(&back, in.data, in.len));
    buf_free(&back);
    /* Each flush point: the bytes so far decode to the input so far, and
     * the decoder waits there at a resting point. */
    uint8_t *out = malloc(in.len + 1);
    for (size_t i = 0; i < PIECES; i++) {
        if (!at[i])
            continue;
        size_t made = 0, want = piece_end(i, in.len);
        trowel_code r = decode_prefix(codec, z.data, (size_t)at[i], out, in.len + 1, &made);
        CHECK_EQ_U64(r, TROWEL_CODE_MAY_STOP);
        CHECK_EQ_U64(made, want);
        CHECK(memcmp(out, in.data, want) == 0);
    }
    /* zlib's own inflate agrees. */
    if (codec == &trowel_zlib_stream) {
        uLongf n = (uLongf)in.len + 1;
        CHECK_EQ_U64(uncompress(out, &n, z.data, (uLong)z.len), Z_OK);
        CHECK_EQ_U64(n, in.len);
        CHECK(memcmp(out, in.data, in.len) == 0);
    }
    free(out);
    trowel_mem_free(ctx, z.data);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    buf_free(&in);
    trowel_ctx_free(ctx);
}

static void test_zlib_round_trips_through_the_cursor(void)
{
    round_trip(&trowel_zlib_stream, "zlib", 9);
    round_trip(&trowel_zlib_stream, "zlib", 0); /* stored blocks: output > 64 KiB a call */
}

static void test_lz4_round_trips_through_the_cursor(void)
{
    round_trip(&trowel_lz4_stream, "lz4", TROWEL_LEVEL_DEFAULT);
}

/* The cursor with no flush gives the whole-call encoder's bytes. */
static void test_cursor_matches_the_whole_call_encoder(void)
{
    trowel_ctx *ctx = new_ctx();
    buf in = make_input();
    buf whole;
    REQUIRE(codec_encode(ctx, "zlib", in.data, in.len, NULL, 0, &whole) == TROWEL_OK);
    trowel_sink *sink;
    REQUIRE(trowel_sink_open_memory(ctx, &sink) == TROWEL_OK);
    trowel_codec_writer *w;
    REQUIRE(trowel_codec_writer_open(ctx, &trowel_zlib_stream, NULL, sink, &w) == TROWEL_OK);
    CHECK_EQ_U64(trowel_codec_writer_write(w, in.data, in.len), TROWEL_OK);
    CHECK_EQ_U64(trowel_codec_writer_finish(w, NULL), TROWEL_OK);
    size_t n = 0;
    const uint8_t *got = trowel_sink_data(sink, &n);
    CHECK(n == whole.len && memcmp(got, whole.data, n) == 0);
    trowel_sink_discard(sink);
    buf_free(&whole);
    buf_free(&in);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

/* A sink that fails (the memory limit, then a full device) fails the call
 * that meets it with the sink's status; aborting frees everything. */
static void test_a_failing_sink_fails_the_call(void)
{
    trowel_ctx *ctx = new_ctx();
    buf in = make_binary(1 << 20); /* hardly compressible */
    trowel_sink *sink;
    REQUIRE(trowel_sink_open_memory(ctx, &sink) == TROWEL_OK);
    trowel_codec_writer *w;
    trowel_codec_params p = trowel_codec_params_default();
    p.level = 0;
    REQUIRE(trowel_codec_writer_open(ctx, &trowel_zlib_stream, &p, sink, &w) == TROWEL_OK);
    trowel_ctx_set_mem_limit(ctx, ctx->mem_in_use + 200 * 1024);
    CHECK_EQ_U64(trowel_codec_writer_write(w, in.data, in.len), TROWEL_ERR_LIMIT);
    CHECK(trowel_codec_writer_out(w) > 0);
    trowel_codec_writer_abort(w);
    trowel_sink_discard(sink);
    trowel_ctx_set_mem_limit(ctx, TROWEL_DEFAULT_MEM_LIMIT);
    CHECK_EQ_U64(ctx->mem_in_use, 0);

    FILE *full = fopen("/dev/full", "wb");
    if (full) {
        REQUIRE(trowel_sink_open_fd(ctx, fileno(full), "/dev/full", &sink) == TROWEL_OK);
        REQUIRE(trowel_codec_writer_open(ctx, &trowel_lz4_stream, NULL, sink, &w) == TROWEL_OK);
        trowel_status s = trowel_codec_writer_write(w, in.data, in.len);
        if (s == TROWEL_OK)
            s = trowel_codec_writer_finish(w, NULL);
        else
            trowel_codec_writer_abort(w);
        if (s == TROWEL_OK)
            s = trowel_sink_finish(sink); /* a buffered sink reports it here */
        else
            trowel_sink_discard(sink);
        CHECK_EQ_U64(s, TROWEL_ERR_IO);
        fclose(full);
    }
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    buf_free(&in);
    trowel_ctx_free(ctx);
}

/* Every allocation of open failing in turn: a clean failure, nothing kept. */
static void test_open_fails_cleanly(void)
{
    trowel_ctx *ctx = new_ctx();
    for (uint64_t k = 1; k < 8; k++) {
        ctx->fail_alloc_after = k;
        trowel_codec_writer *w = (trowel_codec_writer *)1;
        trowel_status s = trowel_codec_writer_open(ctx, &trowel_zlib_stream, NULL, NULL, &w);
        ctx->fail_alloc_after = 0;
        CHECK(s == TROWEL_OK || s == TROWEL_ERR_NOMEM);
        if (s == TROWEL_OK)
            trowel_codec_writer_abort(w);
        else
            CHECK(w == NULL);
        CHECK_EQ_U64(ctx->mem_in_use, 0);
    }
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_zlib_round_trips_through_the_cursor),
          TEST(test_lz4_round_trips_through_the_cursor),
          TEST(test_cursor_matches_the_whole_call_encoder),
          TEST(test_a_failing_sink_fails_the_call), TEST(test_open_fails_cleanly))
