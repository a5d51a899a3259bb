/*
 * Tests of the lz4 codec (src/codec/lz4.c): a known frame of a known string
 * (made by the lz4 command), round trips at every level checked by liblz4's
 * own decoder, frames liblz4 writes with linked and independent blocks,
 * block checksums and content sizes decoded by trowel, and the decoder's
 * refusals: bombs past the expected size, truncation at every cut, a bad
 * content checksum, bad magic, trailing bytes, the memory limit.
 */
#include "codec_io.h"
#include "test.h"

#include "codec/lz4_frame.h"
#include "core/module.h"

#include <lz4frame.h>

/* printf hello | lz4 -c */
static const uint8_t hello_lz4[] = {0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7, 0x05,
                                    0x00, 0x00, 0x80, 0x68, 0x65, 0x6c, 0x6c, 0x6f,
                                    0x00, 0x00, 0x00, 0x00, 0xf9, 0x77, 0x00, 0xfb};

static buf make_words(size_t n)
{
    static const char *const words[] = {"agents ", "of ",     "mayhem ", "frame ",
                                        "block ",  "linked ", "lz4 ",    "vpp_pc\n",
                                        "saints ", "row ",    "2022 ",   "str2_pc "};
    return make_text_from(words, sizeof words / sizeof words[0], n);
}

/* A frame from liblz4 itself with the given block settings. */
static buf lz4f_frame(const buf *data, LZ4F_blockSizeID_t bs, LZ4F_blockMode_t mode,
                      bool block_checksum, bool content_size)
{
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof prefs);
    prefs.frameInfo.blockSizeID = bs;
    prefs.frameInfo.blockMode = mode;
    prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    prefs.frameInfo.blockChecksumFlag = block_checksum ? LZ4F_blockChecksumEnabled : 0;
    prefs.frameInfo.contentSize = content_size ? data->len : 0;
    size_t cap = LZ4F_compressFrameBound(data->len, &prefs);
    buf out = {malloc(cap), 0};
    out.len = LZ4F_compressFrame(out.data, cap, data->data, data->len, &prefs);
    if (LZ4F_isError(out.len))
        out.len = 0;
    return out;
}

/* liblz4's decoder over a whole frame; true when it gives want. */
static bool lz4f_decodes_to(const buf *frame, const buf *want)
{
    LZ4F_dctx *d;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&d, LZ4F_VERSION)))
        return false;
    uint8_t *out = malloc(want->len + 1);
    size_t in_pos = 0, out_pos = 0, hint = 1;
    while (hint != 0 && in_pos < frame->len) {
        size_t src = frame->len - in_pos, dst = want->len + 1 - out_pos;
        hint = LZ4F_decompress(d, out + out_pos, &dst, frame->data + in_pos, &src, NULL);
        if (LZ4F_isError(hint))
            break;
        in_pos += src;
        out_pos += dst;
    }
    bool ok = hint == 0 && out_pos == want->len && memcmp(out, want->data, want->len) == 0;
    free(out);
    LZ4F_freeDecompressionContext(d);
    return ok;
}

static void test_known_frame_of_hello_decodes(void)
{
    trowel_ctx *ctx = new_ctx();
    buf out;
    CHECK_EQ_U64(codec_decode(ctx, "lz4", hello_lz4, sizeof hello_lz4, 5, &out, NULL), TROWEL_OK);
    CHECK(buf_equals(&out, (const uint8_t *)"hello", 5));
    buf_free(&out);
    CHECK_EQ_U64(codec_decode(ctx, "lz4", hello_lz4, sizeof hello_lz4, TROWEL_SIZE_UNKNOWN, &out,
                              NULL),
                 TROWEL_OK);
    CHECK(buf_equals(&out, (const uint8_t *)"hello", 5));
    buf_free(&out);
    trowel_ctx_free(ctx);
}

static void test_hello_frame_layout(void)
{
    trowel_ctx *ctx = new_ctx();
    buf enc;
    REQUIRE(codec_encode(ctx, "lz4", (const uint8_t *)"hello", 5, NULL, 0, &enc) == TROWEL_OK);
    /* magic, FLG 0x4C (v1, linked blocks, content size, content checksum),
     * BD 0x40 (64 KiB blocks), the content size 5 in 8 bytes. */
    static const uint8_t head[] = {0x04, 0x22, 0x4d, 0x18, 0x4c, 0x40,
                                   0x05, 0, 0, 0, 0, 0, 0, 0};
    REQUIRE(enc.len > sizeof head + 8);
    CHECK(memcmp(enc.data, head, sizeof head) == 0);
    /* One stored block of 5 bytes, the end mark, xxh32("hello"). */
    static const uint8_t tail[] = {0x05, 0x00, 0x00, 0x80, 'h',  'e',  'l',  'l', 'o',
                                   0x00, 0x00, 0x00, 0x00, 0xf9, 0x77, 0x00, 0xfb};
    CHECK_EQ_U64(enc.len, sizeof head + 1 + sizeof tail);
    CHECK(memcmp(enc.data + enc.len - sizeof tail, tail, sizeof tail) == 0);
    buf_free(&enc);
    trowel_ctx_free(ctx);
}

static void test_every_level_round_trips_through_liblz4(void)
{
    trowel_ctx *ctx = new_ctx();
    buf text = make_words(5u << 20); /* many 64 KiB blocks, linked */
    size_t fast = 0;
    for (int level = 1; level <= 12; level++) {
        if (level > 4 && level < 12 && level != 9)
            continue; /* HC levels are slow; 3, 4, 9 and 12 stand for them */
        char opt[16];
        snprintf(opt, sizeof opt, "level=%d", level);
        const char *opts[] = {opt};
        buf enc;
        REQUIRE(codec_encode(ctx, "lz4", text.data, text.len, opts, 1, &enc) == TROWEL_OK);
        CHECK(lz4f_decodes_to(&enc, &text));
        buf out;
        CHECK_EQ_U64(codec_decode(ctx, "lz4", enc.data, enc.len, text.len, &out, NULL), TROWEL_OK);
        CHECK(buf_equals(&out, text.data, text.len));
        buf_free(&out);
        if (level == 1)
            fast = enc.len;
        if (level == 9)
            CHECK(enc.len < fast);
        buf_free(&enc);
    }
    const char *bad[] = {"level=13"};
    buf enc;
    CHECK_EQ_U64(codec_encode(ctx, "lz4", text.data, 10, bad, 1, &enc), TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "LZ4 levels go from 1 to 12, not '13'");
    buf_free(&text);
    trowel_ctx_free(ctx);
}

static void test_liblz4_frames_of_every_kind_decode(void)
{
    trowel_ctx *ctx = new_ctx();
    buf text = make_words(700000);
    LZ4F_blockSizeID_t sizes[] = {LZ4F_max64KB, LZ4F_max256KB, LZ4F_max4MB};
    for (size_t i = 0; i < 3; i++)
        for (int mode = 0; mode < 2; mode++)
            for (int extras = 0; extras < 2; extras++) {
                buf f = lz4f_frame(&text, sizes[i], mode ? LZ4F_blockIndependent : LZ4F_blockLinked,
                                   extras, extras);
                REQUIRE(f.len > 0);
                buf out;
                CHECK_EQ_U64(codec_decode(ctx, "lz4", f.data, f.len, text.len, &out, NULL),
                             TROWEL_OK);
                CHECK(buf_equals(&out, text.data, text.len));
                buf_free(&out);
                buf_free(&f);
            }
    buf_free(&text);
    trowel_ctx_free(ctx);
}

static void test_empty_input_round_trips(void)
{
    trowel_ctx *ctx = new_ctx();
    buf enc, out;
    REQUIRE(codec_encode(ctx, "lz4", (const uint8_t *)"", 0, NULL, 0, &enc) == TROWEL_OK);
    uint8_t none = 0;
    CHECK(lz4f_decodes_to(&enc, &(buf){&none, 0}));
    CHECK_EQ_U64(codec_decode(ctx, "lz4", enc.data, enc.len, 0, &out, NULL), TROWEL_OK);
    CHECK_EQ_U64(out.len, 0);
    buf_free(&out);
    buf_free(&enc);
    trowel_ctx_free(ctx);
}

static void test_bad_content_checksum_is_refused(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t bad[sizeof hello_lz4];
    memcpy(bad, hello_lz4, sizeof bad);
    bad[sizeof bad - 1] ^= 0x10;
    buf out;
    CHECK_EQ_U64(codec_decode(ctx, "lz4", bad, sizeof bad, 5, &out, NULL), TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the LZ4 frame's content checksum does not match");
    /* A changed data byte is caught by the same checksum. */
    memcpy(bad, hello_lz4, sizeof bad);
    bad[12] = 'E';
    CHECK_EQ_U64(codec_decode(ctx, "lz4", bad, sizeof bad, 5, &out, NULL), TROWEL_ERR_CORRUPT);
    /* Bad magic. */
    memcpy(bad, hello_lz4, sizeof bad);
    bad[0] = 0x05;
    CHECK_EQ_U64(codec_decode(ctx, "lz4", bad, sizeof bad, 5, &out, NULL), TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "not an LZ4 frame (bad magic number)");
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, 0);
    trowel_ctx_free(ctx);
}

static void test_truncated_at_every_cut(void)
{
    trowel_ctx *ctx = new_ctx();
    buf text = make_words(100000);
    buf f = lz4f_frame(&text, LZ4F_max64KB, LZ4F_blockLinked, false, false);
    REQUIRE(f.len > 0);
    for (size_t cut = 0; cut < f.len; cut += (cut < 64 || f.len - cut < 64) ? 1 : 97) {
        buf out;
        CHECK_EQ_U64(codec_decode(ctx, "lz4", f.data, cut, text.len, &out, NULL),
                     TROWEL_ERR_TRUNCATED);
        CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, cut);
        CHECK_EQ_U64(codec_decode(ctx, "lz4", f.data, cut, TROWEL_SIZE_UNKNOWN, &out, NULL),
                     TROWEL_ERR_TRUNCATED);
    }
    buf out;
    /* All the data but not the content checksum: still truncated. */
    codec_decode(ctx, "lz4", f.data, f.len - 4, text.len, &out, NULL);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the LZ4 stream ends without its end mark after 100000 bytes");
    buf_free(&f);
    buf_free(&text);
    trowel_ctx_free(ctx);
}

static void test_bomb_stops_at_the_expected_size(void)
{
    trowel_ctx *ctx = new_ctx();
    buf zeros = {calloc(1, 16u << 20), 16u << 20};
    buf f = lz4f_frame(&zeros, LZ4F_max4MB, LZ4F_blockLinked, false, false);
    buf out;
    uint64_t w = 0;
    CHECK_EQ_U64(codec_decode(ctx, "lz4", f.data, f.len, 1000, &out, &w), TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the LZ4 stream decodes to more than the 1000 bytes expected");
    CHECK_EQ_U64(w, 1000);
    CHECK_EQ_U64(codec_decode(ctx, "lz4", f.data, f.len, (uint64_t)f.len * 255 + 1025, &out, &w),
                 TROWEL_ERR_TRUNCATED);
    CHECK_EQ_U64(w, 0);
    CHECK_EQ_U64(codec_decode(ctx, "lz4", f.data, f.len, zeros.len, &out, &w), TROWEL_OK);
    CHECK_EQ_U64(out.len, zeros.len);
    buf_free(&out);
    buf_free(&f);
    buf_free(&zeros);
    trowel_ctx_free(ctx);
}

static void test_trailing_frame_is_refused(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t two[2 * sizeof hello_lz4];
    memcpy(two, hello_lz4, sizeof hello_lz4);
    memcpy(two + sizeof hello_lz4, hello_lz4, sizeof hello_lz4);
    buf out;
    CHECK_EQ_U64(codec_decode(ctx, "lz4", two, sizeof two, TROWEL_SIZE_UNKNOWN, &out, NULL),
                 TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "24 bytes follow the end of the LZ4 stream");
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, sizeof hello_lz4);
    trowel_ctx_free(ctx);
}

static void test_liblz4_allocations_count_against_the_limit(void)
{
    trowel_ctx *ctx = new_ctx();
    buf text = make_words(300000);
    buf f = lz4f_frame(&text, LZ4F_max4MB, LZ4F_blockLinked, false, false);
    /* 4 MiB blocks need liblz4's buffers of over 4 MiB: refused under 1 MiB. */
    trowel_ctx_set_mem_limit(ctx, 1u << 20);
    buf out;
    CHECK_EQ_U64(codec_decode(ctx, "lz4", f.data, f.len, text.len, &out, NULL), TROWEL_ERR_LIMIT);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_set_mem_limit(ctx, TROWEL_DEFAULT_MEM_LIMIT);
    check_each_allocation_failing(ctx, "lz4", &f, &text, 10);
    buf_free(&f);
    buf_free(&text);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_known_frame_of_hello_decodes), TEST(test_hello_frame_layout),
          TEST(test_every_level_round_trips_through_liblz4),
          TEST(test_liblz4_frames_of_every_kind_decode), TEST(test_empty_input_round_trips),
          TEST(test_bad_content_checksum_is_refused), TEST(test_truncated_at_every_cut),
          TEST(test_bomb_stops_at_the_expected_size), TEST(test_trailing_frame_is_refused),
          TEST(test_liblz4_allocations_count_against_the_limit))
