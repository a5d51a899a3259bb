/*
 * Tests of the streaming codec layer (core/stream.h, src/core/codec.c):
 * the forward cursor over a solid stream (a compressed+condensed VPP in
 * miniature: many entries with alignment padding, one zlib stream
 * sync-flushed per entry and never finished), seeking, the end checks; the
 * coder driven one byte at a time; the sync-flushing encoder giving zlib's
 * own bytes (what an exact VPP rebuild needs); the stated bounds.
 */
#include "codec_io.h"
#include "test.h"

#include "codec/lz4_frame.h"
#include "codec/zlib.h"
#include "core/module.h"

#include <zlib.h>

#define ENTRIES 40
#define ALIGN 16

typedef struct solid {
    buf data;              /* the entries with their padding, as fed */
    size_t size[ENTRIES];  /* entry sizes */
    size_t start[ENTRIES]; /* decoded offsets */
    size_t csize[ENTRIES]; /* growth of the stream across each entry */
    buf z;                 /* the stream */
} solid;

static size_t pad_of(size_t n) { return (ALIGN - n % ALIGN) % ALIGN; }

/* Entries of varied sizes (some empty), each fed with its padding (none
 * after the last) then Z_SYNC_FLUSH, never finished: Volition's layout. */
static solid make_solid(int level)
{
    solid s;
    memset(&s, 0, sizeof s);
    static const char *const words[] = {"cloth ", "sim ", "xray ", "effect ", "rfg ", "\n"};
    size_t total = 0;
    for (size_t i = 0; i < ENTRIES; i++) {
        s.size[i] = (i % 7 == 3) ? 0 : (i * 7919) % 20000 + (i % 5) * 1000;
        total += s.size[i] + pad_of(s.size[i]);
    }
    s.data.data = calloc(1, total);
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, level, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY);
    size_t cap = deflateBound(&z, total) + 16 * ENTRIES;
    s.z.data = malloc(cap);
    size_t at = 0;
    for (size_t i = 0; i < ENTRIES; i++) {
        buf t = make_text_from(words, 6, s.size[i]);
        fill_random(t.data, s.size[i] / 3, i + 1); /* some noise */
        memcpy(s.data.data + at, t.data, s.size[i]);
        buf_free(&t);
        s.start[i] = at;
        size_t fed = s.size[i] + (i + 1 < ENTRIES ? pad_of(s.size[i]) : 0);
        z.next_in = s.data.data + at;
        z.avail_in = (uInt)fed;
        z.next_out = s.z.data + s.z.len;
        z.avail_out = (uInt)(cap - s.z.len);
        deflate(&z, Z_SYNC_FLUSH);
        s.csize[i] = (size_t)(z.next_out - s.z.data) - s.z.len;
        s.z.len += s.csize[i];
        at += fed;
    }
    s.data.len = at;
    deflateEnd(&z);
    return s;
}

static void free_solid(solid *s)
{
    buf_free(&s->data);
    buf_free(&s->z);
}

static trowel_codec_stream *open_cursor(trowel_ctx *ctx, const trowel_stream_codec *codec,
                                        const buf *z, trowel_input **in)
{
    if (trowel_input_open_memory(ctx, z->data, z->len, "solid", in) != TROWEL_OK)
        return NULL;
    trowel_reader r;
    trowel_reader_init(&r, ctx, *in);
    trowel_codec_stream *cs = NULL;
    if (trowel_codec_stream_open(ctx, codec, NULL, &r, &cs) != TROWEL_OK)
        return NULL;
    return cs;
}

/* Reads n bytes at the cursor into memory and compares them with want. */
static bool cursor_reads(trowel_ctx *ctx, trowel_codec_stream *cs, const uint8_t *want, size_t n)
{
    trowel_sink *sink;
    if (trowel_sink_open_memory(ctx, &sink) != TROWEL_OK)
        return false;
    bool ok = trowel_codec_stream_read(cs, n, sink) == TROWEL_OK;
    size_t got;
    const uint8_t *d = trowel_sink_data(sink, &got);
    ok = ok && got == n && (n == 0 || memcmp(d, want, n) == 0);
    trowel_sink_discard(sink);
    return ok;
}

/* --------------------------------------------------------------- cursor */

static void test_cursor_reads_every_entry_in_one_pass(void)
{
    trowel_ctx *ctx = new_ctx();
    for (int level = 1; level <= 9; level += 8) {
        solid s = make_solid(level);
        CHECK(memcmp(s.z.data + s.z.len - 4, "\x00\x00\xff\xff", 4) == 0);
        trowel_input *in;
        trowel_codec_stream *cs = open_cursor(ctx, &trowel_zlib_stream, &s.z, &in);
        REQUIRE(cs);
        for (size_t i = 0; i < ENTRIES; i++) {
            /* The padding before entry i is skipped by seeking forward. */
            CHECK_EQ_U64(trowel_codec_stream_seek(cs, s.start[i]), TROWEL_OK);
            CHECK(cursor_reads(ctx, cs, s.data.data + s.start[i], s.size[i]));
            CHECK_EQ_U64(trowel_codec_stream_tell(cs), s.start[i] + s.size[i]);
        }
        CHECK_EQ_U64(trowel_codec_stream_restarts(cs), 0);
        CHECK_EQ_U64(trowel_codec_stream_finish(cs), TROWEL_OK);
        CHECK_EQ_U64(trowel_codec_stream_consumed(cs), s.z.len);
        trowel_codec_stream_close(cs);
        trowel_input_close(in);
        CHECK_EQ_U64(ctx->mem_in_use, 0);
        free_solid(&s);
    }
    trowel_ctx_free(ctx);
}

static void test_cursor_seeks_back_by_restarting(void)
{
    trowel_ctx *ctx = new_ctx();
    solid s = make_solid(9);
    trowel_input *in;
    trowel_codec_stream *cs = open_cursor(ctx, &trowel_zlib_stream, &s.z, &in);
    REQUIRE(cs);
    size_t last = ENTRIES - 1, mid = ENTRIES / 2;
    CHECK_EQ_U64(trowel_codec_stream_seek(cs, s.start[last]), TROWEL_OK);
    CHECK(cursor_reads(ctx, cs, s.data.data + s.start[last], s.size[last]));
    CHECK_EQ_U64(trowel_codec_stream_seek(cs, s.start[mid]), TROWEL_OK);
    CHECK_EQ_U64(trowel_codec_stream_restarts(cs), 1);
    CHECK(cursor_reads(ctx, cs, s.data.data + s.start[mid], s.size[mid]));
    /* Seeking to where it stands costs nothing. */
    CHECK_EQ_U64(trowel_codec_stream_seek(cs, trowel_codec_stream_tell(cs)), TROWEL_OK);
    CHECK_EQ_U64(trowel_codec_stream_restarts(cs), 1);
    trowel_codec_stream_close(cs);
    trowel_input_close(in);
    free_solid(&s);
    trowel_ctx_free(ctx);
}

static void test_cursor_reading_past_the_end_is_truncated(void)
{
    trowel_ctx *ctx = new_ctx();
    solid s = make_solid(1);
    trowel_input *in;
    trowel_codec_stream *cs = open_cursor(ctx, &trowel_zlib_stream, &s.z, &in);
    REQUIRE(cs);
    CHECK_EQ_U64(trowel_codec_stream_read(cs, s.data.len + 10, NULL), TROWEL_ERR_TRUNCATED);
    char want[160];
    snprintf(want, sizeof want,
             "the zlib stream stops at decoded byte %zu, 10 more were wanted", s.data.len);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, want);
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, s.z.len);
    trowel_codec_stream_close(cs);
    trowel_input_close(in);
    free_solid(&s);
    trowel_ctx_free(ctx);
}

static void test_cursor_on_a_stream_that_ends_early(void)
{
    trowel_ctx *ctx = new_ctx();
    solid s = make_solid(9);
    /* Cut the stream in the middle of entry 30's compressed bytes. */
    size_t cut = 0;
    for (size_t i = 0; i < 30; i++)
        cut += s.csize[i];
    cut += s.csize[30] / 2;
    buf part = {s.z.data, cut};
    trowel_input *in;
    trowel_codec_stream *cs = open_cursor(ctx, &trowel_zlib_stream, &part, &in);
    REQUIRE(cs);
    for (size_t i = 0; i < 30; i++) {
        CHECK_EQ_U64(trowel_codec_stream_seek(cs, s.start[i]), TROWEL_OK);
        CHECK(cursor_reads(ctx, cs, s.data.data + s.start[i], s.size[i]));
    }
    CHECK_EQ_U64(trowel_codec_stream_seek(cs, s.start[30]), TROWEL_OK);
    CHECK_EQ_U64(trowel_codec_stream_read(cs, s.size[30], NULL), TROWEL_ERR_TRUNCATED);
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, cut);
    trowel_codec_stream_close(cs);
    trowel_input_close(in);
    free_solid(&s);
    trowel_ctx_free(ctx);
}

static void test_cursor_finish_finds_more_data(void)
{
    trowel_ctx *ctx = new_ctx();
    solid s = make_solid(6);
    trowel_input *in;
    trowel_codec_stream *cs = open_cursor(ctx, &trowel_zlib_stream, &s.z, &in);
    REQUIRE(cs);
    CHECK_EQ_U64(trowel_codec_stream_read(cs, s.data.len - 1, NULL), TROWEL_OK);
    CHECK_EQ_U64(trowel_codec_stream_finish(cs), TROWEL_ERR_CORRUPT);
    trowel_codec_stream_close(cs);
    trowel_input_close(in);
    free_solid(&s);
    trowel_ctx_free(ctx);
}

static void test_cursor_over_an_lz4_frame(void)
{
    trowel_ctx *ctx = new_ctx();
    static const char *const words[] = {"mayhem ", "frame ", "\n"};
    buf text = make_text_from(words, 3, 300000);
    buf f;
    REQUIRE(codec_encode(ctx, "lz4", text.data, text.len, NULL, 0, &f) == TROWEL_OK);
    trowel_input *in;
    trowel_codec_stream *cs = open_cursor(ctx, &trowel_lz4_stream, &f, &in);
    REQUIRE(cs);
    size_t pieces[] = {1, 65535, 65537, 100000, 68927};
    size_t at = 0;
    for (size_t i = 0; i < 5; i++) {
        CHECK(cursor_reads(ctx, cs, text.data + at, pieces[i]));
        at += pieces[i];
    }
    CHECK_EQ_U64(at, text.len);
    CHECK_EQ_U64(trowel_codec_stream_finish(cs), TROWEL_OK);
    trowel_codec_stream_close(cs);
    trowel_input_close(in);
    buf_free(&f);
    buf_free(&text);
    trowel_ctx_free(ctx);
}

/* ---------------------------------------------------------------- coder */

/* Decodes z one input byte and one output byte at a time. */
static void drip_decode(const trowel_stream_codec *codec, const buf *z, const buf *want)
{
    trowel_ctx *ctx = new_ctx();
    trowel_coder c;
    REQUIRE(trowel_coder_init_decoder(&c, ctx, codec, NULL, 0) == TROWEL_OK);
    uint8_t *out = malloc(want->len + 1);
    size_t in_pos = 0, out_pos = 0;
    trowel_code r = TROWEL_CODE_MORE;
    unsigned stalls = 0;
    while (r != TROWEL_CODE_DONE && r != TROWEL_CODE_ERROR && stalls < 4) {
        size_t in_len = in_pos < z->len ? in_pos + 1 : in_pos;
        trowel_codec_io io = {z->data, in_len, in_pos, out, out_pos < want->len + 1 ? out_pos + 1 : out_pos, out_pos};
        r = trowel_coder_run(&c, &io, TROWEL_FLUSH_NONE);
        in_pos = io.in_pos;
        out_pos = io.out_pos;
        stalls = trowel_code_stalled(r) ? stalls + 1 : 0;
    }
    CHECK(r == TROWEL_CODE_DONE || r == TROWEL_CODE_MAY_STOP);
    CHECK_EQ_U64(out_pos, want->len);
    CHECK(memcmp(out, want->data, want->len) == 0);
    CHECK_EQ_U64(c.total_in, in_pos);
    CHECK_EQ_U64(c.total_out, out_pos);
    trowel_coder_end(&c);
    trowel_coder_end(&c); /* twice is harmless */
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    free(out);
    trowel_ctx_free(ctx);
}

static void test_coders_work_a_byte_at_a_time(void)
{
    trowel_ctx *ctx = new_ctx();
    static const char *const words[] = {"drip ", "byte ", "by ", "\n"};
    buf text = make_text_from(words, 4, 20000);
    buf z, f;
    REQUIRE(codec_encode(ctx, "zlib", text.data, text.len, NULL, 0, &z) == TROWEL_OK);
    REQUIRE(codec_encode(ctx, "lz4", text.data, text.len, NULL, 0, &f) == TROWEL_OK);
    drip_decode(&trowel_zlib_stream, &z, &text);
    drip_decode(&trowel_lz4_stream, &f, &text);
    solid s = make_solid(9);
    drip_decode(&trowel_zlib_stream, &s.z, &s.data);
    free_solid(&s);
    buf_free(&z);
    buf_free(&f);
    buf_free(&text);
    trowel_ctx_free(ctx);
}

/* Encodes the solid layout with trowel's coder: each entry then a sync
 * flush, never finished; output taken 1000 bytes at a time. */
static buf coder_sync_pieces(const trowel_stream_codec *codec, int level, const solid *s)
{
    trowel_ctx *ctx = new_ctx();
    trowel_codec_params p = trowel_codec_params_default();
    p.level = level;
    trowel_coder c;
    buf out = {malloc(codec->bound(s->data.len, ENTRIES, &p)), 0};
    if (trowel_coder_init_encoder(&c, ctx, codec, &p) != TROWEL_OK)
        return out;
    for (size_t i = 0; i < ENTRIES; i++) {
        size_t end = i + 1 < ENTRIES ? s->start[i + 1] : s->data.len;
        trowel_codec_io io = {s->data.data, end, s->start[i], NULL, 0, 0};
        trowel_code r;
        do {
            io.out = out.data + out.len;
            io.out_cap = 1000;
            io.out_pos = 0;
            r = trowel_coder_run(&c, &io, TROWEL_FLUSH_SYNC);
            out.len += io.out_pos;
        } while (r == TROWEL_CODE_MORE);
        if (r != TROWEL_CODE_DONE)
            out.len = 0;
    }
    trowel_coder_end(&c);
    trowel_ctx_free(ctx);
    return out;
}

static void test_sync_flushing_encoder_gives_zlibs_own_bytes(void)
{
    for (int level = 1; level <= 9; level += 8) {
        solid s = make_solid(level);
        buf mine = coder_sync_pieces(&trowel_zlib_stream, level, &s);
        CHECK(mine.len == s.z.len && memcmp(mine.data, s.z.data, mine.len) == 0);
        buf_free(&mine);
        free_solid(&s);
    }
}

static void test_lz4_sync_flush_gives_whole_blocks(void)
{
    solid s = make_solid(1);
    buf mine = coder_sync_pieces(&trowel_lz4_stream, 1, &s);
    REQUIRE(mine.len > 0);
    /* Flushed but not ended: every entry's bytes are decodable already. */
    trowel_ctx *ctx = new_ctx();
    trowel_input *in;
    trowel_codec_stream *cs = open_cursor(ctx, &trowel_lz4_stream, &mine, &in);
    REQUIRE(cs);
    CHECK(cursor_reads(ctx, cs, s.data.data, s.data.len));
    /* ... but an LZ4 frame without its end mark does not pass finish. */
    CHECK_EQ_U64(trowel_codec_stream_finish(cs), TROWEL_ERR_TRUNCATED);
    trowel_codec_stream_close(cs);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    buf_free(&mine);
    free_solid(&s);
}

static void test_bounds_hold_for_incompressible_data(void)
{
    trowel_ctx *ctx = new_ctx();
    size_t sizes[] = {0, 1, 100, 65536, 65537, 1u << 20, (5u << 20) + 3};
    trowel_codec_params p = trowel_codec_params_default();
    for (size_t i = 0; i < 7; i++) {
        buf noise = {malloc(sizes[i] + 1), sizes[i]};
        fill_random(noise.data, noise.len, i + 7);
        const char *lv0[] = {"level=0"};
        buf z, z0, f;
        REQUIRE(codec_encode(ctx, "zlib", noise.data, noise.len, NULL, 0, &z) == TROWEL_OK);
        REQUIRE(codec_encode(ctx, "zlib", noise.data, noise.len, lv0, 1, &z0) == TROWEL_OK);
        REQUIRE(codec_encode(ctx, "lz4", noise.data, noise.len, NULL, 0, &f) == TROWEL_OK);
        CHECK(z.len <= trowel_zlib_stream.bound(noise.len, 0, &p));
        CHECK(z0.len <= trowel_zlib_stream.bound(noise.len, 0, &p));
        CHECK(f.len <= trowel_lz4_stream.bound(noise.len, 0, &p));
        /* The ratio check lets every real stream through. */
        CHECK(trowel_codec_size_plausible(&trowel_zlib_stream, z.len, noise.len));
        CHECK(trowel_codec_size_plausible(&trowel_lz4_stream, f.len, noise.len));
        buf_free(&z);
        buf_free(&z0);
        buf_free(&f);
        buf_free(&noise);
    }
    CHECK_EQ_U64(trowel_zlib_stream.bound(UINT64_MAX - 5, 0, &p), UINT64_MAX);
    CHECK(!trowel_codec_size_plausible(&trowel_zlib_stream, 10, 10321));
    CHECK(trowel_codec_size_plausible(&trowel_zlib_stream, 10, 10320));
    trowel_ctx_free(ctx);
}

static void test_codec_table_and_levels(void)
{
    const trowel_codec *z = trowel_codec_find("zlib"), *l = trowel_codec_find("lz4");
    REQUIRE(z && l);
    CHECK(z->stream == &trowel_zlib_stream);
    CHECK(l->stream == &trowel_lz4_stream);
    int lo = -5, hi = -5, def = -5;
    CHECK_EQ_U64(trowel_codec_levels(z, &lo, &hi, &def), 1);
    CHECK(lo == 0 && hi == 9 && def == 6);
    CHECK_EQ_U64(trowel_codec_levels(l, &lo, &hi, &def), 1);
    CHECK(lo == 1 && hi == 12 && def == 1);
    CHECK_EQ_U64(trowel_codec_levels(trowel_codec_find("szdd"), &lo, &hi, &def), 0);
    CHECK(lo == 1);
}

TEST_MAIN(TEST(test_cursor_reads_every_entry_in_one_pass),
          TEST(test_cursor_seeks_back_by_restarting),
          TEST(test_cursor_reading_past_the_end_is_truncated),
          TEST(test_cursor_on_a_stream_that_ends_early), TEST(test_cursor_finish_finds_more_data),
          TEST(test_cursor_over_an_lz4_frame), TEST(test_coders_work_a_byte_at_a_time),
          TEST(test_sync_flushing_encoder_gives_zlibs_own_bytes),
          TEST(test_lz4_sync_flush_gives_whole_blocks),
          TEST(test_bounds_hold_for_incompressible_data), TEST(test_codec_table_and_levels))
