/*
 * Tests of the zlib codec (src/codec/zlib.c): a known stream of a known
 * string, round trips at every level checked by the zlib library itself,
 * streams zlib writes (finished, sync-flushed and never finished, raw)
 * decoded by trowel, and the decoder's refusals: bombs past the expected
 * size, truncation at every cut, a bad Adler-32, trailing bytes, a preset
 * dictionary, the memory limit.
 */
#include "codec_io.h"
#include "test.h"

#include "codec/zlib.h"
#include "core/module.h"

#include <zlib.h>

/* zlib.compress(b"hello") in Python (level 6) and at level 1. */
static const uint8_t hello_z6[] = {0x78, 0x9c, 0xcb, 0x48, 0xcd, 0xc9, 0xc9,
                                   0x07, 0x00, 0x06, 0x2c, 0x02, 0x15};
static const uint8_t hello_z1[] = {0x78, 0x01, 0xcb, 0x48, 0xcd, 0xc9, 0xc9,
                                   0x07, 0x00, 0x06, 0x2c, 0x02, 0x15};

static buf make_words(size_t n)
{
    static const char *const words[] = {"packfile ", "entry ",   "condensed ", "stream ",
                                        "flush ",    "sector ",  "2048 ",      "zlib\n",
                                        "volition ", "str2_pc ", "asm_pc ",    "guerrilla "};
    return make_text_from(words, sizeof words / sizeof words[0], n);
}

/* Compresses with the zlib library: level, then each piece followed by a
 * sync flush; finished or not. */
static buf zlib_sync_pieces(int level, const buf *data, const size_t *cuts, size_t ncuts,
                            bool finish)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit(&z, level);
    buf out = {malloc(deflateBound(&z, data->len) + 16 * (ncuts + 1)), 0};
    size_t from = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t to = i < ncuts ? cuts[i] : data->len;
        z.next_in = data->data + from;
        z.avail_in = (uInt)(to - from);
        z.next_out = out.data + out.len;
        z.avail_out = 1u << 30;
        int flush = i == ncuts && finish ? Z_FINISH : Z_SYNC_FLUSH;
        deflate(&z, flush);
        out.len = (size_t)(z.next_out - out.data);
        from = to;
    }
    deflateEnd(&z);
    return out;
}

/* ------------------------------------------------------------ known bytes */

static void test_known_stream_of_hello_decodes(void)
{
    trowel_ctx *ctx = new_ctx();
    buf out;
    CHECK_EQ_U64(codec_decode(ctx, "zlib", hello_z6, sizeof hello_z6, 5, &out, NULL), TROWEL_OK);
    CHECK(buf_equals(&out, (const uint8_t *)"hello", 5));
    buf_free(&out);
    CHECK_EQ_U64(codec_decode(ctx, "zlib", hello_z1, sizeof hello_z1, TROWEL_SIZE_UNKNOWN, &out,
                              NULL),
                 TROWEL_OK);
    CHECK(buf_equals(&out, (const uint8_t *)"hello", 5));
    buf_free(&out);
    trowel_ctx_free(ctx);
}

static void test_hello_encodes_to_zlibs_bytes(void)
{
    trowel_ctx *ctx = new_ctx();
    buf out;
    CHECK_EQ_U64(codec_encode(ctx, "zlib", (const uint8_t *)"hello", 5, NULL, 0, &out), TROWEL_OK);
    CHECK(buf_equals(&out, hello_z6, sizeof hello_z6));
    buf_free(&out);
    const char *l1[] = {"level=1"};
    CHECK_EQ_U64(codec_encode(ctx, "zlib", (const uint8_t *)"hello", 5, l1, 1, &out), TROWEL_OK);
    CHECK(buf_equals(&out, hello_z1, sizeof hello_z1));
    buf_free(&out);
    trowel_ctx_free(ctx);
}

static void test_empty_input_round_trips(void)
{
    trowel_ctx *ctx = new_ctx();
    buf enc, out;
    REQUIRE(codec_encode(ctx, "zlib", (const uint8_t *)"", 0, NULL, 0, &enc) == TROWEL_OK);
    /* zlib.compress(b"") */
    static const uint8_t want[] = {0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01};
    CHECK(buf_equals(&enc, want, sizeof want));
    CHECK_EQ_U64(codec_decode(ctx, "zlib", enc.data, enc.len, 0, &out, NULL), TROWEL_OK);
    CHECK_EQ_U64(out.len, 0);
    buf_free(&out);
    buf_free(&enc);
    trowel_ctx_free(ctx);
}

/* ------------------------------------------------------------ round trips */

static void test_every_level_round_trips_through_zlib_itself(void)
{
    trowel_ctx *ctx = new_ctx();
    buf text = make_words(300000);
    /* The second header byte zlib writes for each level (FLEVEL + FCHECK). */
    static const uint8_t flg[10] = {0x01, 0x01, 0x5e, 0x5e, 0x5e, 0x5e, 0x9c, 0xda, 0xda, 0xda};
    size_t prev = SIZE_MAX;
    for (int level = 0; level <= 9; level++) {
        char opt[16];
        snprintf(opt, sizeof opt, "level=%d", level);
        const char *opts[] = {opt};
        buf enc;
        REQUIRE(codec_encode(ctx, "zlib", text.data, text.len, opts, 1, &enc) == TROWEL_OK);
        CHECK_EQ_U64(enc.data[0], 0x78);
        CHECK_EQ_U64(enc.data[1], flg[level]);
        /* zlib's one-call decoder agrees. */
        uLongf n = (uLongf)text.len;
        uint8_t *back = malloc(text.len);
        CHECK_EQ_U64(uncompress(back, &n, enc.data, (uLong)enc.len), Z_OK);
        CHECK(n == text.len && memcmp(back, text.data, text.len) == 0);
        free(back);
        /* And zlib's own compress2 at the same level gives the same bytes
         * (not at level 0, whose stored blocks follow the buffer sizes). */
        uLongf zn = compressBound((uLong)text.len);
        uint8_t *zb = malloc(zn);
        compress2(zb, &zn, text.data, (uLong)text.len, level);
        CHECK(level == 0 || (zn == enc.len && memcmp(zb, enc.data, zn) == 0));
        free(zb);
        buf out;
        CHECK_EQ_U64(codec_decode(ctx, "zlib", enc.data, enc.len, text.len, &out, NULL), TROWEL_OK);
        CHECK(buf_equals(&out, text.data, text.len));
        buf_free(&out);
        if (level == 1 || level == 9)
            CHECK(enc.len < prev);
        if (level == 1 || level == 9)
            prev = enc.len;
        buf_free(&enc);
    }
    buf_free(&text);
    trowel_ctx_free(ctx);
}

static void test_bad_levels_are_usage_errors(void)
{
    trowel_ctx *ctx = new_ctx();
    buf enc;
    const char *bad[][1] = {{"level=10"}, {"level=-1"}, {"level=x"}, {"level="}, {"speed=1"}};
    for (size_t i = 0; i < 5; i++)
        CHECK_EQ_U64(codec_encode(ctx, "zlib", (const uint8_t *)"a", 1, bad[i], 1, &enc),
                     TROWEL_ERR_USAGE);
    codec_encode(ctx, "zlib", (const uint8_t *)"a", 1, bad[0], 1, &enc);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "zlib levels go from 0 to 9, not '10'");
    trowel_ctx_free(ctx);
}

/* ----------------------------------------------- streams zlib writes */

static void test_sync_flushed_unfinished_stream_gives_every_byte(void)
{
    trowel_ctx *ctx = new_ctx();
    buf text = make_words(100000);
    size_t cuts[] = {1000, 1001, 40000, 70000};
    buf z = zlib_sync_pieces(9, &text, cuts, 4, false);
    /* Never finished: ends with an empty stored block, no Adler-32. */
    REQUIRE(z.len > 4);
    CHECK(memcmp(z.data + z.len - 4, "\x00\x00\xff\xff", 4) == 0);
    buf out;
    uint64_t w = 0;
    CHECK_EQ_U64(codec_decode(ctx, "zlib", z.data, z.len, text.len, &out, NULL), TROWEL_OK);
    CHECK(buf_equals(&out, text.data, text.len));
    buf_free(&out);
    /* Size unknown: it stops at a flush point, so it is accepted too. */
    CHECK_EQ_U64(codec_decode(ctx, "zlib", z.data, z.len, TROWEL_SIZE_UNKNOWN, &out, NULL),
                 TROWEL_OK);
    CHECK(buf_equals(&out, text.data, text.len));
    buf_free(&out);
    /* The caller's size decides: one more is truncation, one fewer a bomb. */
    CHECK_EQ_U64(codec_decode(ctx, "zlib", z.data, z.len, text.len + 1, &out, NULL),
                 TROWEL_ERR_TRUNCATED);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the zlib stream ends after 100000 of the 100001 bytes expected");
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, z.len);
    CHECK_EQ_U64(codec_decode(ctx, "zlib", z.data, z.len, text.len - 1, &out, &w),
                 TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the zlib stream decodes to more than the 99999 bytes expected");
    CHECK_EQ_U64(w, text.len - 1);
    buf_free(&z);
    buf_free(&text);
    trowel_ctx_free(ctx);
}

static void test_sync_flushed_finished_stream_decodes(void)
{
    trowel_ctx *ctx = new_ctx();
    buf text = make_words(50000);
    size_t cuts[] = {10, 20000};
    buf z = zlib_sync_pieces(1, &text, cuts, 2, true);
    buf out;
    CHECK_EQ_U64(codec_decode(ctx, "zlib", z.data, z.len, TROWEL_SIZE_UNKNOWN, &out, NULL),
                 TROWEL_OK);
    CHECK(buf_equals(&out, text.data, text.len));
    buf_free(&out);
    buf_free(&z);
    buf_free(&text);
    trowel_ctx_free(ctx);
}

static void test_cut_in_a_block_without_size_is_truncated(void)
{
    trowel_ctx *ctx = new_ctx();
    buf text = make_words(30000);
    buf z = zlib_sync_pieces(6, &text, NULL, 0, false);
    buf out;
    /* Drop the empty stored block's last byte: no longer at a flush point. */
    CHECK_EQ_U64(codec_decode(ctx, "zlib", z.data, z.len - 1, TROWEL_SIZE_UNKNOWN, &out, NULL),
                 TROWEL_ERR_TRUNCATED);
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, z.len - 1);
    buf_free(&z);
    buf_free(&text);
    trowel_ctx_free(ctx);
}

static void test_raw_deflate_mode_matches_zlib(void)
{
    trowel_ctx *ctx = new_ctx();
    buf text = make_words(70000);
    /* Raw deflate from zlib (windowBits -15) decodes in trowel's raw mode. */
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    buf raw = {malloc(deflateBound(&z, text.len)), 0};
    z.next_in = text.data;
    z.avail_in = (uInt)text.len;
    z.next_out = raw.data;
    z.avail_out = (uInt)deflateBound(&z, text.len);
    CHECK_EQ_U64(deflate(&z, Z_FINISH), Z_STREAM_END);
    raw.len = z.total_out;
    deflateEnd(&z);

    trowel_codec_params p = trowel_codec_params_default();
    p.flags = TROWEL_CODEC_RAW;
    p.level = 9;
    trowel_input *in;
    trowel_sink *sink;
    REQUIRE(trowel_input_open_memory(ctx, raw.data, raw.len, "raw", &in) == TROWEL_OK);
    REQUIRE(trowel_sink_open_memory(ctx, &sink) == TROWEL_OK);
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    CHECK_EQ_U64(trowel_codec_decode_reader(ctx, &trowel_zlib_stream, &p, &r, text.len, sink),
                 TROWEL_OK);
    size_t n;
    const uint8_t *d = trowel_sink_data(sink, &n);
    CHECK(n == text.len && memcmp(d, text.data, n) == 0);
    trowel_sink_discard(sink);
    trowel_input_close(in);

    /* And trowel's raw encoder writes what zlib writes. */
    REQUIRE(trowel_input_open_memory(ctx, text.data, text.len, "text", &in) == TROWEL_OK);
    REQUIRE(trowel_sink_open_memory(ctx, &sink) == TROWEL_OK);
    trowel_reader_init(&r, ctx, in);
    CHECK_EQ_U64(trowel_codec_encode_reader(ctx, &trowel_zlib_stream, &p, &r, sink), TROWEL_OK);
    d = trowel_sink_data(sink, &n);
    CHECK(n == raw.len && memcmp(d, raw.data, n) == 0);
    trowel_sink_discard(sink);
    trowel_input_close(in);
    /* The zlib (non-raw) decoder refuses raw deflate: no header. */
    buf out;
    CHECK_EQ_U64(codec_decode(ctx, "zlib", raw.data, raw.len, TROWEL_SIZE_UNKNOWN, &out, NULL),
                 TROWEL_ERR_CORRUPT);
    buf_free(&raw);
    buf_free(&text);
    trowel_ctx_free(ctx);
}

/* ------------------------------------------------------------- refusals */

static void test_bomb_stops_at_the_expected_size(void)
{
    trowel_ctx *ctx = new_ctx();
    size_t big = 20u << 20;
    uint8_t *zeros = calloc(1, big);
    uLongf zn = compressBound((uLong)big);
    uint8_t *z = malloc(zn);
    REQUIRE(compress2(z, &zn, zeros, (uLong)big, 9) == Z_OK);
    buf out;
    uint64_t w = 0;
    CHECK_EQ_U64(codec_decode(ctx, "zlib", z, zn, 4096, &out, &w), TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the zlib stream decodes to more than the 4096 bytes expected");
    CHECK_EQ_U64(w, 4096);
    /* A declared size no stream of this length can reach is refused at once. */
    CHECK_EQ_U64(codec_decode(ctx, "zlib", z, zn, (uint64_t)zn * 1032 + 1, &out, &w),
                 TROWEL_ERR_TRUNCATED);
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, zn);
    CHECK_EQ_U64(w, 0);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "cannot decode to") != NULL);
    /* The true size passes. */
    CHECK_EQ_U64(codec_decode(ctx, "zlib", z, zn, big, &out, &w), TROWEL_OK);
    CHECK_EQ_U64(out.len, big);
    buf_free(&out);
    free(z);
    free(zeros);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

static void test_truncated_at_every_cut(void)
{
    trowel_ctx *ctx = new_ctx();
    buf text = make_words(3000);
    buf enc;
    REQUIRE(codec_encode(ctx, "zlib", text.data, text.len, NULL, 0, &enc) == TROWEL_OK);
    for (size_t cut = 0; cut < enc.len; cut++) {
        buf out;
        trowel_status s = codec_decode(ctx, "zlib", enc.data, cut, text.len, &out, NULL);
        CHECK_EQ_U64(s, TROWEL_ERR_TRUNCATED);
        CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, cut);
        s = codec_decode(ctx, "zlib", enc.data, cut, TROWEL_SIZE_UNKNOWN, &out, NULL);
        CHECK(s == TROWEL_ERR_TRUNCATED || (s == TROWEL_OK && cut == 2));
        buf_free(&out);
    }
    buf out;
    codec_decode(ctx, "zlib", enc.data, enc.len - 4, text.len, &out, NULL);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the zlib stream ends without its end mark after 3000 bytes");
    (void)out;
    buf_free(&enc);
    buf_free(&text);
    trowel_ctx_free(ctx);
}

static void test_corrupt_adler32_is_refused(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t bad[sizeof hello_z6];
    memcpy(bad, hello_z6, sizeof bad);
    bad[sizeof bad - 1] ^= 1;
    buf out;
    CHECK_EQ_U64(codec_decode(ctx, "zlib", bad, sizeof bad, 5, &out, NULL), TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "the zlib stream's Adler-32 does not match");
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, 9);
    /* A bad header check is corrupt too, at offset 0. */
    memcpy(bad, hello_z6, sizeof bad);
    bad[1] ^= 1;
    CHECK_EQ_U64(codec_decode(ctx, "zlib", bad, sizeof bad, 5, &out, NULL), TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the deflate stream is corrupt: incorrect header check");
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, 0);
    trowel_ctx_free(ctx);
}

/* A zlib header with method cm and window code cinfo, its check bits right. */
static void set_header(uint8_t *z, unsigned cm, unsigned cinfo)
{
    z[0] = (uint8_t)(cinfo << 4 | cm);
    z[1] = 0;
    while ((z[0] * 256u + z[1]) % 31 != 0)
        z[1]++;
}

/* Errors are placed by where the stream stands, not by zlib's wording:
 * header faults at the stream's start, a bad block where inflate stopped,
 * a bad Adler-32 at its first byte even when it arrives a byte at a time. */
static void test_errors_are_placed_by_stream_position(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t bad[sizeof hello_z6];
    buf out;
    memcpy(bad, hello_z6, sizeof bad);
    set_header(bad, 9, 7); /* method 9 */
    CHECK_EQ_U64(codec_decode(ctx, "zlib", bad, sizeof bad, 5, &out, NULL), TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the deflate stream is corrupt: unknown compression method");
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, 0);
    set_header(bad, 8, 8); /* a 64 KiB window: deflate has none */
    CHECK_EQ_U64(codec_decode(ctx, "zlib", bad, sizeof bad, 5, &out, NULL), TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the deflate stream is corrupt: invalid window size");
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, 0);
    /* Block type 3 (reserved) in the third byte. */
    memcpy(bad, hello_z6, sizeof bad);
    bad[2] |= 6;
    CHECK_EQ_U64(codec_decode(ctx, "zlib", bad, sizeof bad, 5, &out, NULL), TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the deflate stream is corrupt: invalid block type");
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, 3);
    /* The same in raw deflate (no header) is a block fault too, at the
     * end of its first byte (the coder's stream starts at offset 100). */
    trowel_coder c;
    trowel_codec_params raw = trowel_codec_params_default();
    raw.flags = TROWEL_CODEC_RAW;
    REQUIRE(trowel_coder_init_decoder(&c, ctx, &trowel_zlib_stream, &raw, 100) == TROWEL_OK);
    uint8_t sink[16];
    trowel_codec_io io = {bad + 2, sizeof bad - 2, 0, sink, sizeof sink, 0};
    CHECK_EQ_U64(trowel_coder_run(&c, &io, TROWEL_FLUSH_NONE), TROWEL_CODE_ERROR);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the deflate stream is corrupt: invalid block type");
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, 101);
    trowel_coder_end(&c);
    /* A bad Adler-32 handed over one byte per run. */
    memcpy(bad, hello_z6, sizeof bad);
    bad[sizeof bad - 2] ^= 0x10;
    REQUIRE(trowel_coder_init_decoder(&c, ctx, &trowel_zlib_stream, NULL, 0) == TROWEL_OK);
    io = (trowel_codec_io){bad, 0, 0, sink, sizeof sink, 0};
    trowel_code r = TROWEL_CODE_MORE;
    while (r != TROWEL_CODE_ERROR && r != TROWEL_CODE_DONE && io.in_len < sizeof bad) {
        io.in_len++;
        do
            r = trowel_coder_run(&c, &io, TROWEL_FLUSH_NONE);
        while (r == TROWEL_CODE_MORE);
    }
    CHECK_EQ_U64(r, TROWEL_CODE_ERROR);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "the zlib stream's Adler-32 does not match");
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, 9);
    CHECK_EQ_U64(io.out_pos, 5);
    trowel_coder_end(&c);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

static void test_trailing_bytes_are_refused(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t more[sizeof hello_z6 + 3];
    memcpy(more, hello_z6, sizeof hello_z6);
    memcpy(more + sizeof hello_z6, "xyz", 3);
    buf out;
    CHECK_EQ_U64(codec_decode(ctx, "zlib", more, sizeof more, 5, &out, NULL), TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "3 bytes follow the end of the zlib stream");
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, sizeof hello_z6);
    CHECK_EQ_U64(codec_decode(ctx, "zlib", more, sizeof more, TROWEL_SIZE_UNKNOWN, &out, NULL),
                 TROWEL_ERR_CORRUPT);
    trowel_ctx_free(ctx);
}

static void test_preset_dictionary_is_unsupported(void)
{
    trowel_ctx *ctx = new_ctx();
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit(&z, 6);
    deflateSetDictionary(&z, (const Bytef *)"hello", 5);
    uint8_t out[64];
    z.next_in = (Bytef *)(uintptr_t)"hello hello";
    z.avail_in = 11;
    z.next_out = out;
    z.avail_out = sizeof out;
    deflate(&z, Z_FINISH);
    size_t n = z.total_out;
    deflateEnd(&z);
    buf b;
    CHECK_EQ_U64(codec_decode(ctx, "zlib", out, n, 11, &b, NULL), TROWEL_ERR_UNSUPPORTED);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the zlib stream needs a preset dictionary (not supported)");
    trowel_ctx_free(ctx);
}

static void test_zlib_allocations_count_against_the_limit(void)
{
    trowel_ctx *ctx = new_ctx();
    buf text = make_words(20000);
    buf enc;
    REQUIRE(codec_encode(ctx, "zlib", text.data, text.len, NULL, 0, &enc) == TROWEL_OK);
    /* Room for our 64 KiB buffer, not for inflate's 32 KiB window too. */
    trowel_ctx_set_mem_limit(ctx, 64 * 1024 + 16 * 1024);
    buf out;
    CHECK_EQ_U64(codec_decode(ctx, "zlib", enc.data, enc.len, text.len, &out, NULL),
                 TROWEL_ERR_LIMIT);
    trowel_ctx_set_mem_limit(ctx, TROWEL_DEFAULT_MEM_LIMIT);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    /* Every allocation failing in turn: clean failure, nothing leaked. */
    check_each_allocation_failing(ctx, "zlib", &enc, &text, 12);
    buf_free(&enc);
    buf_free(&text);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_known_stream_of_hello_decodes), TEST(test_hello_encodes_to_zlibs_bytes),
          TEST(test_empty_input_round_trips),
          TEST(test_every_level_round_trips_through_zlib_itself),
          TEST(test_bad_levels_are_usage_errors),
          TEST(test_sync_flushed_unfinished_stream_gives_every_byte),
          TEST(test_sync_flushed_finished_stream_decodes),
          TEST(test_cut_in_a_block_without_size_is_truncated),
          TEST(test_raw_deflate_mode_matches_zlib), TEST(test_bomb_stops_at_the_expected_size),
          TEST(test_truncated_at_every_cut), TEST(test_corrupt_adler32_is_refused),
          TEST(test_errors_are_placed_by_stream_position),
          TEST(test_trailing_bytes_are_refused), TEST(test_preset_dictionary_is_unsupported),
          TEST(test_zlib_allocations_count_against_the_limit))
