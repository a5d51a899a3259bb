/*
 * The PNG exporter's memory (src/export/png.c): libpng allocates through the
 * context, so its buffers count against the memory limit, a limit too small
 * for them fails with the limit's own error (not libpng's "out of memory"),
 * and nothing stays allocated after either outcome. Also the palette check:
 * a pixel past the palette is named, a 256-colour palette takes any byte.
 * A refusal libpng first takes as a warning (a text chunk) still ends the
 * read with the limit's message.
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

/* A PNG with a 3 MB tEXt chunk: libpng asks for the chunk's size. Under a
 * limit too small for the text the read fails with the limit's own error,
 * whatever libpng says after it, and leaks nothing. */
static void test_refused_text_chunk(void)
{
    trowel_ctx *ctx = new_ctx();
    uint16_t gray[16];
    uint8_t samples[32];
    for (unsigned i = 0; i < 16; i++) {
        gray[i] = (uint16_t)(i * 4000);
        samples[2 * i] = (uint8_t)(gray[i] >> 8);
        samples[2 * i + 1] = (uint8_t)gray[i];
    }
    trowel_sink *mem;
    REQUIRE(trowel_sink_open_memory(ctx, &mem) == TROWEL_OK);
    REQUIRE(trowel_png_write_gray16(ctx, mem, 4, 4, samples) == TROWEL_OK);
    uint8_t *png;
    size_t size;
    REQUIRE(trowel_sink_take(mem, &png, &size) == TROWEL_OK);
    trowel_sink_discard(mem);
    /* After the signature (8) and IHDR (25): length, "tEXt", key NUL text, CRC. */
    const size_t text_len = 3u << 20, at = 33;
    uint8_t *big = malloc(size + text_len + 12);
    REQUIRE(big);
    memcpy(big, png, at);
    uint8_t *c = big + at;
    c[0] = (uint8_t)(text_len >> 24), c[1] = (uint8_t)(text_len >> 16);
    c[2] = (uint8_t)(text_len >> 8), c[3] = (uint8_t)text_len;
    memcpy(c + 4, "tEXt", 4);
    memset(c + 8, 'x', text_len);
    memcpy(c + 8, "Comment", 8); /* keyword and its NUL */
    uint32_t crc = trowel_crc32_update(0, c + 4, 4 + text_len);
    c[8 + text_len] = (uint8_t)(crc >> 24), c[9 + text_len] = (uint8_t)(crc >> 16);
    c[10 + text_len] = (uint8_t)(crc >> 8), c[11 + text_len] = (uint8_t)crc;
    memcpy(c + 12 + text_len, png + at, size - at);
    size_t big_size = size + text_len + 12;
    trowel_mem_free(ctx, png);

    uint32_t w = 0, h = 0;
    unsigned depth = 0;
    uint16_t *got = NULL;
    /* Room for the text: the picture reads. */
    CHECK(trowel_png_read_gray(ctx, big, big_size, &w, &h, &depth, &got) == TROWEL_OK);
    CHECK(w == 4 && h == 4 && depth == 16);
    CHECK(got && memcmp(got, gray, sizeof gray) == 0);
    trowel_mem_free(ctx, got);
    got = NULL;
    /* No room: libpng 1.6 warns, but then does not skip the chunk and
     * stumbles on its bytes; what the read reports is the refusal. */
    trowel_ctx_set_mem_limit(ctx, 1u << 20);
    CHECK(trowel_png_read_gray(ctx, big, big_size, &w, &h, &depth, &got) == TROWEL_ERR_LIMIT);
    CHECK(got == NULL);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "needs 3 MiB") != NULL);
    trowel_mem_free(ctx, got);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    free(big);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_libpng_counts_against_the_limit), TEST(test_palette_check),
          TEST(test_refused_text_chunk))
