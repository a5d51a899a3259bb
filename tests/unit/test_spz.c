/*
 * spz: Trespasser's compressed page file (u32 size + LZSS with a zero
 * window starting at 4078). Hand-assembled streams whose output is worked
 * out below, create round trips, detection by name, hostile headers.
 */
#include "files.h"
#include "test.h"
#include "trowel/trowel.h"

#include <unistd.h>

/* Opens data named name (format detected, or forced when fmt is given),
 * reads entry 0; returns the status of the first failing step. */
static trowel_status expand(const uint8_t *data, size_t size, const char *name, const char *fmt,
                            bytes *out, char *msg, size_t cap)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    trowel_sink *s = NULL;
    out->data = NULL;
    out->size = 0;
    trowel_status st = trowel_input_open_memory(ctx, data, size, name, &in);
    if (st == TROWEL_OK)
        st = trowel_archive_open(ctx, in, fmt ? trowel_format_find(fmt) : NULL, &a);
    if (st == TROWEL_OK)
        st = trowel_sink_open_memory(ctx, &s);
    if (st == TROWEL_OK)
        st = trowel_archive_read_entry(a, 0, s);
    if (st == TROWEL_OK) {
        size_t n;
        const uint8_t *d = trowel_sink_data(s, &n);
        out->data = malloc(n + 1);
        memcpy(out->data, d, n);
        out->size = n;
    }
    if (msg)
        snprintf(msg, cap, "%s", trowel_ctx_last_error(ctx)->message);
    trowel_sink_discard(s);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return st;
}

/* "abc" as literals, then a match of 3 at ring position 4078 (where the
 * first byte landed): flags 1,1,1,0 LSB first = 0x07; the match is
 * b0 = 4078 & 0xFF = 0xEE, b1 = (4078 >> 8) << 4 | (3 - 3) = 0xF0. */
static void test_spz_hand_stream_expands_to_abcabc(void)
{
    const uint8_t file[] = {6, 0, 0, 0, 0x07, 'a', 'b', 'c', 0xEE, 0xF0};
    bytes out;
    REQUIRE(expand(file, sizeof file, "level-130.spz", NULL, &out, NULL, 0) == TROWEL_OK);
    CHECK_EQ_U64(out.size, 6);
    CHECK(out.size == 6 && memcmp(out.data, "abcabc", 6) == 0);
    free(out.data);
}

/* A first match into the untouched window: SPZ gives zeros (SZDD would
 * give spaces). Flag 0x00, match at position 0, length 3. */
static void test_spz_window_starts_zero_filled(void)
{
    const uint8_t file[] = {3, 0, 0, 0, 0x00, 0x00, 0x00};
    bytes out;
    REQUIRE(expand(file, sizeof file, "x.SPZ", NULL, &out, NULL, 0) == TROWEL_OK);
    CHECK_EQ_U64(out.size, 3);
    CHECK(out.size == 3 && out.data[0] == 0 && out.data[1] == 0 && out.data[2] == 0);
    free(out.data);
}

static void test_spz_create_round_trips(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir);
    char src[128], dst[128];
    snprintf(src, sizeof src, "%s/pages.swp", dir);
    snprintf(dst, sizeof dst, "%s/pages.spz", dir);
    uint8_t data[20000];
    uint32_t seed = 7;
    for (size_t i = 0; i < sizeof data; i++) {
        seed = seed * 1103515245u + 12345u;
        data[i] = i % 3 ? (uint8_t)(seed >> 24) : (uint8_t)(i / 64); /* some repeats */
    }
    FILE *f = fopen(src, "wb");
    REQUIRE(f);
    fwrite(data, 1, sizeof data, f);
    fclose(f);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_source s = {"pages.swp", src};
    trowel_create_params p = {&s, 1, NULL, 0, NULL, NULL};
    trowel_sink *out;
    REQUIRE(trowel_sink_open_file(ctx, dst, TROWEL_SINK_OVERWRITE, &out) == TROWEL_OK);
    CHECK(trowel_create(ctx, trowel_format_find("spz"), &p, out) == TROWEL_OK);
    CHECK(trowel_sink_finish(out) == TROWEL_OK);
    trowel_ctx_free(ctx);
    bytes spz = read_file(dst);
    REQUIRE(spz.data && spz.size > 4);
    CHECK_EQ_U64(spz.data[0] | spz.data[1] << 8 | spz.data[2] << 16 | (uint32_t)spz.data[3] << 24,
                 sizeof data);
    bytes back;
    CHECK(expand(spz.data, spz.size, "pages.spz", NULL, &back, NULL, 0) == TROWEL_OK);
    CHECK(back.size == sizeof data && memcmp(back.data, data, sizeof data) == 0);
    free(back.data);
    free(spz.data);
    unlink(src);
    unlink(dst);
    rmdir(dir);
}

static void test_spz_needs_its_name_to_be_detected(void)
{
    const uint8_t file[] = {6, 0, 0, 0, 0x07, 'a', 'b', 'c', 0xEE, 0xF0};
    bytes out;
    CHECK(expand(file, sizeof file, "level.bin", NULL, &out, NULL, 0) == TROWEL_ERR_UNSUPPORTED);
    /* Named explicitly, the same bytes read. */
    CHECK(expand(file, sizeof file, "level.bin", "spz", &out, NULL, 0) == TROWEL_OK);
    free(out.data);
}

static void test_spz_hostile_headers_fail_clearly(void)
{
    char msg[512];
    bytes out;
    const uint8_t huge[] = {0xFF, 0xFF, 0xFF, 0xFF, 0x07, 'a', 'b', 'c', 0xEE, 0xF0};
    CHECK_EQ_U64(expand(huge, sizeof huge, "h.spz", "spz", &out, msg, sizeof msg),
                 TROWEL_ERR_TRUNCATED);
    CHECK(strstr(msg, "can hold at most") != NULL);
    const uint8_t cut[] = {6, 0};
    CHECK_EQ_U64(expand(cut, sizeof cut, "c.spz", "spz", &out, msg, sizeof msg),
                 TROWEL_ERR_TRUNCATED);
    CHECK(strstr(msg, "SPZ header is cut short") != NULL);
    /* The stream ends before the declared 7 bytes. */
    const uint8_t shortstream[] = {7, 0, 0, 0, 0x07, 'a', 'b', 'c', 0xEE, 0xF0};
    CHECK_EQ_U64(expand(shortstream, sizeof shortstream, "s.spz", "spz", &out, msg, sizeof msg),
                 TROWEL_ERR_TRUNCATED);
}

int main(int argc, char **argv)
{
    static const test_case cases[] = {
        TEST(test_spz_hand_stream_expands_to_abcabc),
        TEST(test_spz_window_starts_zero_filled),
        TEST(test_spz_create_round_trips),
        TEST(test_spz_needs_its_name_to_be_detected),
        TEST(test_spz_hostile_headers_fail_clearly),
    };
    return test_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
