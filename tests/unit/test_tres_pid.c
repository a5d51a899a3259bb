/*
 * tres-pid: a texture directory and its SPZ page file, both built here
 * strictly from the documented layouts (the SPZ by our own writer), read
 * back as PNGs whose every pixel is worked out below; mip chains grouped
 * by the hash's low 32 bits; a bump map's colour-index image and angle
 * map; a missing page file, a page file declaring a size its stream cannot
 * hold, and a cut directory.
 */
#include "codec/lzss.h"
#include "files.h"
#include "test.h"
#include "trowel/trowel.h"

#include <png.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

/* One raster record, 56 bytes. */
static void put_raster(uint8_t *p, uint32_t size, uint32_t off, uint32_t w, uint32_t h,
                       uint32_t stride, uint32_t bits, uint32_t transparent, uint32_t bump,
                       uint32_t palette, uint64_t hash)
{
    uint32_t f[12] = {size, off, w, h, stride, bits, 0, transparent, bump, 0, palette, 0};
    for (int i = 0; i < 12; i++)
        set_u32(p + 4 * i, f[i]);
    set_u32(p + 48, (uint32_t)hash);
    set_u32(p + 52, (uint32_t)(hash >> 32));
}

/* Bump pixel: phi bits 0-3, theta 4-9, colour index 10-15. */
static uint16_t bump(unsigned phi, unsigned theta, unsigned ci)
{
    return (uint16_t)(phi | theta << 4 | ci << 10);
}

static const uint16_t bump_px[4] = {0, 0, 0, 0}; /* filled in make_fixture */
static uint16_t bumps[4];

/* level-130.pid and level-130.spz in dir. Palette 0: four colours stored
 * B, G, R, flags. Raster 0: 4x2 8-bit, transparent, group 0xdeadbeef.
 * Raster 1: its 2x1 mip. Raster 2: a 2x2 bump map with stride 3, no
 * palette, group 0x11112222. */
static void make_fixture(bool with_spz)
{
    (void)bump_px;
    uint8_t pid[64 + 3 * 56] = {0};
    uint32_t header[8] = {0x130, 16, 64, 3, 32, 1, 0, 3};
    for (int i = 0; i < 8; i++)
        set_u32(pid + 4 * i, header[i]);
    set_u32(pid + 32, 32); /* 16 + 4 x 4 */
    set_u32(pid + 36, 4);
    set_u32(pid + 40, 0xABCD1234);
    const uint8_t colours[16] = {0, 0, 0, 0, 0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0, 0};
    memcpy(pid + 44, colours, 16); /* black, red, green, blue; then 4 slack bytes */
    uint64_t low = 0xDEADBEEF;
    put_raster(pid + 64, 8, 0, 4, 2, 4, 8, 1, 0, 0, low | 4ull << 32 | 2ull << 42);
    put_raster(pid + 120, 2, 8, 2, 1, 2, 8, 0, 0, 0, low | 2ull << 32 | 1ull << 42);
    put_raster(pid + 176, 12, 10, 2, 2, 3, 16, 0, 1, 0xFFFFFFFF, 0x11112222ull | 2ull << 32);
    char path[128];
    snprintf(path, sizeof path, "%s/level-130.pid", dir);
    FILE *f = fopen(path, "wb");
    fwrite(pid, 1, sizeof pid, f);
    fclose(f);

    bumps[0] = bump(1, 2, 3);
    bumps[1] = bump(15, 63, 63);
    bumps[2] = bump(0, 10, 0);
    bumps[3] = bump(7, 0, 32);
    uint8_t swp[22] = {0, 1, 2, 3, 3, 2, 1, 0, 1, 2};
    const uint16_t rows[6] = {bumps[0], bumps[1], 0xFFFF, bumps[2], bumps[3], 0xFFFF};
    for (int i = 0; i < 6; i++) {
        swp[10 + 2 * i] = (uint8_t)rows[i];
        swp[11 + 2 * i] = (uint8_t)(rows[i] >> 8);
    }
    char swp_path[128];
    snprintf(swp_path, sizeof swp_path, "%s/pages.bin", dir);
    f = fopen(swp_path, "wb");
    fwrite(swp, 1, sizeof swp, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/level-130.spz", dir);
    unlink(path);
    if (!with_spz)
        return;
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_source s = {"pages.bin", swp_path};
    trowel_create_params p = {&s, 1, NULL, 0, NULL, NULL};
    trowel_sink *out;
    if (trowel_sink_open_file(ctx, path, TROWEL_SINK_OVERWRITE, &out) == TROWEL_OK) {
        if (trowel_create(ctx, trowel_format_find("spz"), &p, out) == TROWEL_OK)
            trowel_sink_finish(out);
        else
            trowel_sink_discard(out);
    }
    trowel_ctx_free(ctx);
}

typedef struct opened {
    trowel_ctx *ctx;
    trowel_input *in;
    trowel_archive *a;
    trowel_status status;
} opened;

static opened open_pid(void)
{
    opened o = {trowel_ctx_new(), NULL, NULL, TROWEL_OK};
    char path[128];
    snprintf(path, sizeof path, "%s/level-130.pid", dir);
    o.status = trowel_input_open_file(o.ctx, path, &o.in);
    if (o.status == TROWEL_OK)
        o.status = trowel_archive_open(o.ctx, o.in, NULL, &o.a);
    return o;
}

static void close_pid(opened *o)
{
    trowel_archive_close(o->a);
    trowel_input_close(o->in);
    trowel_ctx_free(o->ctx);
}

/* Entry i decoded from PNG to RGBA; NULL on failure. */
static uint8_t *entry_rgba(opened *o, size_t i, uint32_t *w, uint32_t *h)
{
    trowel_sink *s;
    if (trowel_sink_open_memory(o->ctx, &s) != TROWEL_OK)
        return NULL;
    uint8_t *rgba = NULL;
    if (trowel_archive_read_entry(o->a, i, s) == TROWEL_OK) {
        size_t n;
        const uint8_t *data = trowel_sink_data(s, &n);
        CHECK_EQ_U64(n, trowel_archive_entry(o->a, i)->size);
        png_image p;
        memset(&p, 0, sizeof p);
        p.version = PNG_IMAGE_VERSION;
        if (png_image_begin_read_from_memory(&p, data, n)) {
            p.format = PNG_FORMAT_RGBA;
            rgba = malloc(PNG_IMAGE_SIZE(p));
            if (!png_image_finish_read(&p, NULL, rgba, 0, NULL)) {
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

static uint32_t px(const uint8_t *rgba, size_t i)
{
    return (uint32_t)rgba[4 * i] << 24 | (uint32_t)rgba[4 * i + 1] << 16 |
           (uint32_t)rgba[4 * i + 2] << 8 | rgba[4 * i + 3];
}

static void test_pid_lists_one_png_per_raster_grouped_by_hash(void)
{
    make_fixture(true);
    opened o = open_pid();
    REQUIRE(o.status == TROWEL_OK);
    CHECK_STR(trowel_format_id(trowel_archive_format(o.a)), "tres-pid");
    REQUIRE(trowel_archive_entry_count(o.a) == 5);
    CHECK_STR(trowel_archive_entry(o.a, 0)->name, "index.json");
    CHECK_STR(trowel_archive_entry(o.a, 1)->name, "deadbeef/4x2.png");
    CHECK_STR(trowel_archive_entry(o.a, 2)->name, "deadbeef/2x1.png");
    CHECK_STR(trowel_archive_entry(o.a, 3)->name, "11112222/2x2.png");
    CHECK_STR(trowel_archive_entry(o.a, 4)->name, "11112222/2x2-angles.png");
    CHECK(!trowel_archive_damaged(o.a));
    close_pid(&o);
}

static void test_pid_paletted_raster_has_its_colours_and_transparency(void)
{
    make_fixture(true);
    opened o = open_pid();
    REQUIRE(o.status == TROWEL_OK);
    uint32_t w, h;
    uint8_t *rgba = entry_rgba(&o, 1, &w, &h);
    REQUIRE(rgba);
    CHECK_EQ_U64(w, 4);
    CHECK_EQ_U64(h, 2);
    /* Indices 0 1 2 3 / 3 2 1 0; colour 0 is transparent in this raster. */
    const uint32_t want[8] = {0x00000000, 0xFF0000FF, 0x00FF00FF, 0x0000FFFF,
                              0x0000FFFF, 0x00FF00FF, 0xFF0000FF, 0x00000000};
    for (size_t i = 0; i < 8; i++)
        CHECK_EQ_U64(px(rgba, i), want[i]);
    free(rgba);
    /* The mip is opaque: colour 0 stays black. */
    rgba = entry_rgba(&o, 2, &w, &h);
    REQUIRE(rgba);
    CHECK_EQ_U64(w, 2);
    CHECK_EQ_U64(px(rgba, 0), 0xFF0000FF);
    CHECK_EQ_U64(px(rgba, 1), 0x00FF00FF);
    free(rgba);
    close_pid(&o);
}

static void test_pid_bump_map_gives_colour_index_and_angles(void)
{
    make_fixture(true);
    opened o = open_pid();
    REQUIRE(o.status == TROWEL_OK);
    uint32_t w, h;
    uint8_t *rgba = entry_rgba(&o, 3, &w, &h);
    REQUIRE(rgba);
    CHECK_EQ_U64(w, 2);
    CHECK_EQ_U64(h, 2);
    /* No palette: a gray ramp, colour index ci -> ci*4 + ci/16. */
    const unsigned ci[4] = {3, 63, 0, 32};
    for (size_t i = 0; i < 4; i++) {
        uint32_t g = ci[i] * 4 + ci[i] / 16;
        CHECK_EQ_U64(px(rgba, i), g << 24 | g << 16 | g << 8 | 0xFF);
    }
    free(rgba);
    rgba = entry_rgba(&o, 4, &w, &h);
    REQUIRE(rgba);
    /* Red = theta x 4, green = phi x 16; stride padding skipped. */
    const uint32_t want[4] = {0x08100000 | 0xFF, 0xFCF00000 | 0xFF, 0x28000000 | 0xFF,
                              0x00700000 | 0xFF};
    for (size_t i = 0; i < 4; i++)
        CHECK_EQ_U64(px(rgba, i), want[i]);
    free(rgba);
    close_pid(&o);
}

static void test_pid_index_json_names_hash_size_flags_palette(void)
{
    make_fixture(true);
    opened o = open_pid();
    REQUIRE(o.status == TROWEL_OK);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(o.ctx, &s) == TROWEL_OK);
    CHECK(trowel_archive_read_entry(o.a, 0, s) == TROWEL_OK);
    size_t n;
    const char *text = (const char *)trowel_sink_data(s, &n);
    char *copy = strndup(text, n);
    /* low 32 bits | width << 32 | height << 42 */
    CHECK(strstr(copy, "\"hash\":\"0x00000804deadbeef\"") != NULL);
    CHECK(strstr(copy, "\"group\":\"11112222\"") != NULL);
    CHECK(strstr(copy, "\"transparent\":true") != NULL);
    CHECK(strstr(copy, "\"palette\":null") != NULL);
    CHECK(strstr(copy, "\"hash\":\"0xabcd1234\"") != NULL);
    free(copy);
    trowel_sink_discard(s);
    close_pid(&o);
}

/* Without a page file the directory still opens (index.json needs no
 * pages, so the archive is not damaged as a whole); every picture asked for
 * fails with the reason, the same each time. */
static void test_pid_without_page_file_opens_and_says_why(void)
{
    make_fixture(false);
    opened o = open_pid();
    REQUIRE(o.status == TROWEL_OK);
    CHECK(!trowel_archive_damaged(o.a));
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(o.ctx, &s) == TROWEL_OK);
    CHECK(trowel_archive_read_entry(o.a, 0, s) == TROWEL_OK);
    for (size_t i = 1; i <= 2; i++) {
        CHECK_EQ_U64(trowel_archive_read_entry(o.a, i, s), TROWEL_ERR_IO);
        CHECK(strstr(trowel_ctx_last_error(o.ctx)->message, "no page file beside the PID") !=
              NULL);
    }
    trowel_sink_discard(s);
    close_pid(&o);
}

/* Keeps the first warning's message and offset. */
static void keep_first_warning(void *user, const trowel_error *w)
{
    trowel_error *first = user;
    if (!first->message[0])
        *first = *w;
}

/* The page file is decoded by the spz format's own code: a size its stream
 * cannot hold is refused before decoding, with spz's message, named by the
 * page file (its offsets count there, not in the PID). Open finds it and
 * warns once; every picture read later gives that real cause again, never
 * "no page file". */
static void test_pid_page_file_with_impossible_size_names_it(void)
{
    make_fixture(true);
    char path[128];
    snprintf(path, sizeof path, "%s/level-130.spz", dir);
    struct stat sb;
    REQUIRE(stat(path, &sb) == 0);
    uint64_t stream = (uint64_t)sb.st_size - 4;
    FILE *f = fopen(path, "r+b");
    REQUIRE(f != NULL);
    const uint8_t huge[4] = {0xFF, 0xFF, 0xFF, 0x00};
    fwrite(huge, 1, sizeof huge, f);
    fclose(f);
    opened o = {trowel_ctx_new(), NULL, NULL, TROWEL_OK};
    trowel_error first = {0};
    trowel_ctx_set_warning_handler(o.ctx, keep_first_warning, &first);
    char pid[128];
    snprintf(pid, sizeof pid, "%s/level-130.pid", dir);
    REQUIRE(trowel_input_open_file(o.ctx, pid, &o.in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(o.ctx, o.in, NULL, &o.a) == TROWEL_OK);
    char cause[512], want[768];
    snprintf(cause, sizeof cause,
             "%s: SPZ header declares 16777215 bytes but the %llu-byte "
             "stream can hold at most %llu: the file is truncated or the size is corrupt",
             path, (unsigned long long)stream,
             (unsigned long long)trowel_lzss_max_output(stream));
    snprintf(want, sizeof want,
             "%s: none of the 4 pictures can be made (listed with size 0); index.json can",
             cause);
    CHECK_STR(first.message, want);
    CHECK_EQ_U64(first.offset, 0);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(o.ctx, &s) == TROWEL_OK);
    for (size_t i = 1; i <= 2; i++) {
        CHECK(trowel_archive_read_entry(o.a, i, s) != TROWEL_OK);
        CHECK_STR(trowel_ctx_last_error(o.ctx)->message, cause);
    }
    trowel_sink_discard(s);
    close_pid(&o);
}

static void test_pid_raster_table_past_the_end_is_refused(void)
{
    make_fixture(true);
    char path[128];
    snprintf(path, sizeof path, "%s/level-130.pid", dir);
    truncate(path, 64 + 56 + 10);
    opened o = open_pid();
    CHECK_EQ_U64(o.status, TROWEL_ERR_TRUNCATED);
    CHECK(strstr(trowel_ctx_last_error(o.ctx)->message, "pass the end") != NULL);
    close_pid(&o);
}

int main(int argc, char **argv)
{
    char *d = make_temp_dir();
    snprintf(dir, sizeof dir, "%s", d ? d : "/tmp");
    static const test_case cases[] = {
        TEST(test_pid_lists_one_png_per_raster_grouped_by_hash),
        TEST(test_pid_paletted_raster_has_its_colours_and_transparency),
        TEST(test_pid_bump_map_gives_colour_index_and_angles),
        TEST(test_pid_index_json_names_hash_size_flags_palette),
        TEST(test_pid_without_page_file_opens_and_says_why),
        TEST(test_pid_raster_table_past_the_end_is_refused),
        TEST(test_pid_page_file_with_impossible_size_names_it),
    };
    int rc = test_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
    const char *names[] = {"level-130.pid", "level-130.spz", "pages.bin"};
    for (int i = 0; i < 3; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    return rc;
}
