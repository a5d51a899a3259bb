/*
 * The PNG exporter's memory (src/export/png.c): libpng allocates through the
 * context, so its buffers count against the memory limit, a limit too small
 * for them fails with the limit's own error (not libpng's "out of memory"),
 * and nothing stays allocated after either outcome. Also the palette check:
 * a pixel past the palette is named, a 256-colour palette takes any byte.
 */
#include "codec_data.h"
#include "test.h"

#include "core/sink.h"
#include "export/png.h"

#include <stdlib.h>
#include <string.h>

#define SIDE 256

static uint8_t *test_pixels(void)
{
    uint8_t *px = malloc(SIDE * SIDE);
    for (size_t i = 0; i < SIDE * SIDE; i++)
        px[i] = (uint8_t)((i * 7 + i / SIDE) % 200);
    return px;
}

static trowel_palette grey_palette(unsigned count)
{
    trowel_palette pal = {.count = count};
    for (unsigned i = 0; i < count; i++) {
        pal.rgba[i][0] = pal.rgba[i][1] = pal.rgba[i][2] = (uint8_t)i;
        pal.rgba[i][3] = 255;
    }
    return pal;
}

/* Writes the test picture into memory; *size gets the PNG's length. */
static trowel_status write_test_png(trowel_ctx *ctx, unsigned colours, uint8_t **png, size_t *size)
{
    uint8_t *px = test_pixels();
    trowel_palette pal = grey_palette(colours);
    trowel_sink *mem;
    trowel_status s = trowel_sink_open_memory(ctx, &mem);
    if (s == TROWEL_OK) {
        s = trowel_png_write_indexed(ctx, mem, SIDE, SIDE, px, &pal);
        if (s == TROWEL_OK)
            s = trowel_sink_take(mem, png, size);
        trowel_sink_discard(mem);
    }
    free(px);
    return s;
}

static void test_libpng_counts_against_the_limit(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t *png = NULL;
    size_t size = 0;
    REQUIRE(write_test_png(ctx, 256, &png, &size) == TROWEL_OK);
    CHECK(size > 8 && memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0);
    trowel_mem_free(ctx, png);
    CHECK_EQ_U64(ctx->mem_in_use, 0);

    /* 64 KiB: room for the sink's first blocks, not for libpng's deflate
     * state (about 256 KiB at the default level). */
    trowel_ctx_set_mem_limit(ctx, 64 << 10);
    png = NULL;
    trowel_status s = write_test_png(ctx, 256, &png, &size);
    CHECK(s == TROWEL_ERR_LIMIT);
    CHECK(png == NULL);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "memory limit") != NULL);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "out of memory") == NULL);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

static void test_palette_check(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t *png = NULL;
    size_t size = 0;
    CHECK(write_test_png(ctx, 200, &png, &size) == TROWEL_OK); /* largest index 199 */
    trowel_mem_free(ctx, png);
    png = NULL;
    CHECK(write_test_png(ctx, 199, &png, &size) == TROWEL_ERR_CORRUPT);
    /* The message names the first pixel past the palette. */
    size_t first = 0;
    uint8_t *px = test_pixels();
    while (px[first] < 199)
        first++;
    char want[96];
    snprintf(want, sizeof want, "pixel %zu uses colour %u of a 199-colour palette", first,
             px[first]);
    CHECK(strcmp(trowel_ctx_last_error(ctx)->message, want) == 0);
    free(px);
    CHECK(png == NULL);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_libpng_counts_against_the_limit), TEST(test_palette_check))
