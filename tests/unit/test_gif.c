/*
 * The GIF writer: exact header fields, the loop extension, per-frame delay
 * and transparency in the graphics control blocks, and refusals of frames
 * that do not fit before anything is written. (Pillow decodes real outputs
 * in tests/cli/test_scumm_cost.sh.)
 */
#include "core/core.h"
#include "export/gif.h"
#include "test.h"

#include <string.h>
#include <trowel/trowel.h>

static const uint8_t *find(const uint8_t *p, size_t n, const void *what, size_t len)
{
    for (size_t i = 0; i + len <= n; i++)
        if (memcmp(p + i, what, len) == 0)
            return p + i;
    return NULL;
}

static void test_two_frames_with_delay_loop_and_transparency(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *out;
    REQUIRE(trowel_sink_open_memory(ctx, &out) == TROWEL_OK);
    trowel_palette pal = {.count = 3};
    memcpy(pal.rgba[1], "\xff\x00\x00\xff", 4);
    memcpy(pal.rgba[2], "\x00\x00\xff\xff", 4);
    uint8_t a[6] = {0, 1, 1, 2, 2, 0}, b[2] = {2, 1};
    trowel_gif_frame frames[2] = {
        {.x = 0, .y = 0, .w = 3, .h = 2, .pixels = a, .transparent = 0, .delay_cs = 12,
         .disposal = TROWEL_GIF_DISPOSE_BACKGROUND},
        {.x = 1, .y = 1, .w = 2, .h = 1, .pixels = b, .transparent = -1, .delay_cs = 300},
    };
    trowel_gif g = {.width = 3, .height = 2, .palette = &pal, .loops = 0};
    CHECK(trowel_gif_write(ctx, out, &g, frames, 2) == TROWEL_OK);
    size_t n = 0;
    const uint8_t *p = trowel_sink_data(out, &n);
    REQUIRE(n > 13);
    CHECK(memcmp(p, "GIF89a\x03\x00\x02\x00", 10) == 0);
    CHECK((p[10] & 0x87) == 0x81); /* global table of 4 entries */
    CHECK(memcmp(p + 13, "\x00\x00\x00\xff\x00\x00\x00\x00\xff\x00\x00\x00", 12) == 0);
    CHECK(find(p, n, "NETSCAPE2.0\x03\x01\x00\x00", 16) != NULL);
    /* GCB: size 4, flags (disposal 2 << 2 | transparent), delay 12, index 0 */
    CHECK(find(p, n, "\x21\xf9\x04\x09\x0c\x00\x00\x00", 8) != NULL);
    CHECK(find(p, n, "\x21\xf9\x04\x00\x2c\x01", 6) != NULL);
    CHECK(p[n - 1] == 0x3b);
    trowel_sink_discard(out);
    trowel_ctx_free(ctx);
}

static void test_refuses_frames_outside_the_screen_and_bad_colours(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *out;
    REQUIRE(trowel_sink_open_memory(ctx, &out) == TROWEL_OK);
    trowel_palette pal = {.count = 2};
    uint8_t px[4] = {0, 1, 1, 2};
    trowel_gif g = {.width = 2, .height = 2, .palette = &pal, .loops = -1};
    trowel_gif_frame f = {.x = 1, .y = 0, .w = 2, .h = 2, .pixels = px, .transparent = -1};
    CHECK(trowel_gif_write(ctx, out, &g, &f, 1) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "GIF frame 0 (2x2 at 1,0) is not inside the 2x2 screen");
    f.x = 0;
    CHECK(trowel_gif_write(ctx, out, &g, &f, 1) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "GIF frame 0: pixel 3 has colour 2, past its 2 colours");
    CHECK(trowel_gif_write(ctx, out, &g, &f, 0) == TROWEL_ERR_USAGE);
    size_t n = 1;
    trowel_sink_data(out, &n);
    CHECK_EQ_U64(n, 0);
    trowel_sink_discard(out);
    trowel_ctx_free(ctx);
}

/* A frame with its own palette, then one with the global palette: the
 * local colour table is written once, and nothing leaks (giflib drops its
 * copy of the local map when the next frame has none; ASan and valgrind
 * runs of this test would see it). */
static void test_local_palette_then_global(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *out;
    REQUIRE(trowel_sink_open_memory(ctx, &out) == TROWEL_OK);
    trowel_palette global = {.count = 2}, local = {.count = 2};
    memcpy(local.rgba[1], "\x12\x34\x56\xff", 4);
    uint8_t px[1] = {1};
    trowel_gif_frame frames[2] = {{.w = 1, .h = 1, .pixels = px, .palette = &local, .transparent = -1},
                                  {.w = 1, .h = 1, .pixels = px, .transparent = -1}};
    trowel_gif g = {.width = 1, .height = 1, .palette = &global, .loops = -1};
    CHECK(trowel_gif_write(ctx, out, &g, frames, 2) == TROWEL_OK);
    size_t n = 0;
    const uint8_t *p = trowel_sink_data(out, &n);
    CHECK(find(p, n, "\x12\x34\x56", 3) != NULL);
    trowel_sink_discard(out);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_two_frames_with_delay_loop_and_transparency), TEST(test_local_palette_then_global),
          TEST(test_refuses_frames_outside_the_screen_and_bad_colours))
