/*
 * tres-pid asks for its page file through the context's open hook: an
 * embedder serves level-130.swp from memory (no file on disk at all), the
 * hook sees the PID's name as the base and the page file's plain name, and
 * the raster decodes to the pixels the page holds; a hook that declines
 * leaves the page file missing, as on disk.
 */
#include "open_hook_server.h"
#include "files.h"
#include "test.h"
#include "trowel/trowel.h"

#include <png.h>
#include <stdlib.h>
#include <string.h>

/* A PID with one palette (black, red, green, blue; stored B G R flags) and
 * one 4x2 8-bit raster at page offset 2, transparent colour 0. */
static void build_pid(uint8_t pid[120])
{
    memset(pid, 0, 120);
    const uint32_t header[8] = {0x130, 16, 64, 1, 32, 1, 0, 1};
    for (int i = 0; i < 8; i++)
        set_u32(pid + 4 * i, header[i]);
    set_u32(pid + 32, 32);
    set_u32(pid + 36, 4);
    set_u32(pid + 40, 0xABCD1234);
    const uint8_t colours[16] = {0, 0, 0, 0, 0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0, 0};
    memcpy(pid + 44, colours, 16);
    const uint32_t raster[12] = {8, 2, 4, 2, 4, 8, 0, 1, 0, 0, 0, 0};
    for (int i = 0; i < 12; i++)
        set_u32(pid + 64 + 4 * i, raster[i]);
    set_u32(pid + 64 + 48, 0xDEADBEEF);
    set_u32(pid + 64 + 52, 4u | 2u << 10);
}

/* Entry index of a decoded to RGBA (malloc), or NULL. */
static uint8_t *entry_rgba(trowel_ctx *ctx, trowel_archive *a, size_t index, uint32_t *w,
                           uint32_t *h)
{
    trowel_sink *s;
    if (trowel_sink_open_memory(ctx, &s) != TROWEL_OK)
        return NULL;
    uint8_t *rgba = NULL;
    if (trowel_archive_read_entry(a, index, s) == TROWEL_OK) {
        size_t n;
        const uint8_t *data = trowel_sink_data(s, &n);
        png_image p;
        memset(&p, 0, sizeof p);
        p.version = PNG_IMAGE_VERSION;
        if (png_image_begin_read_from_memory(&p, data, n)) {
            p.format = PNG_FORMAT_RGBA;
            rgba = malloc(PNG_IMAGE_SIZE(p));
            if (rgba && !png_image_finish_read(&p, NULL, rgba, 0, NULL)) {
                free(rgba);
                rgba = NULL;
            }
            *w = p.width;
            *h = p.height;
        }
    }
    trowel_sink_discard(s);
    return rgba;
}

static void test_pid_page_file_served_from_memory_by_the_open_hook(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    uint8_t pid[120];
    build_pid(pid);
    const uint8_t page[10] = {0xEE, 0xEE, 0, 1, 2, 3, 3, 2, 1, 0};
    server sv = {.serves = "level-130.swp", .data = page, .size = sizeof page};
    trowel_ctx_set_open_hook(ctx, serve, &sv);
    trowel_input *in;
    REQUIRE(trowel_input_open_memory(ctx, pid, sizeof pid, "maps/level-130.pid", &in) ==
            TROWEL_OK);
    trowel_archive *a = NULL;
    CHECK(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    if (a) {
        REQUIRE(trowel_archive_entry_count(a) == 2);
        CHECK_STR(trowel_archive_entry(a, 1)->name, "deadbeef/4x2.png");
        CHECK(!trowel_archive_damaged(a));
        uint32_t w = 0, h = 0;
        uint8_t *rgba = entry_rgba(ctx, a, 1, &w, &h);
        CHECK(rgba != NULL);
        if (rgba) {
            CHECK_EQ_U64(w, 4);
            CHECK_EQ_U64(h, 2);
            const uint8_t want[8][4] = {{0, 0, 0, 0},     {255, 0, 0, 255}, {0, 255, 0, 255},
                                        {0, 0, 255, 255}, {0, 0, 255, 255}, {0, 255, 0, 255},
                                        {255, 0, 0, 255}, {0, 0, 0, 0}};
            CHECK(memcmp(rgba, want, sizeof want) == 0);
            free(rgba);
        }
        CHECK_STR(sv.base, "maps/level-130.pid");
        CHECK_STR(sv.name, "level-130.swp");
        CHECK(sv.calls == 3); /* .spz and .SPZ declined first */
    }
    trowel_archive_close(a);
    a = NULL;
    /* Declined: no page file, as on disk. */
    sv.data = NULL;
    CHECK(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    if (a) {
        trowel_sink *out;
        REQUIRE(trowel_sink_open_memory(ctx, &out) == TROWEL_OK);
        CHECK(trowel_archive_read_entry(a, 1, out) == TROWEL_ERR_IO);
        CHECK_STR(trowel_ctx_last_error(ctx)->message,
                  "no page file beside the PID (maps/level-130.spz or .swp)");
        trowel_sink_discard(out);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_pid_page_file_served_from_memory_by_the_open_hook))
