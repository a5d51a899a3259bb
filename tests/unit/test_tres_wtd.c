/*
 * tres-wtd: Trespasser's wavelet terrain. A 2x2 terrain whose file is
 * worked out on paper below, the real 8-bit height fields of the game's
 * source release round-tripping exactly (their sizes are not all powers of
 * two), random 16-bit maps, and hostile files: cut bit streams, trees
 * deeper than their extent, extents past 15 levels, wrong branch sizes.
 */
#include "codec/tres_wavelet.h"
#include "export/png.h"
#include "files.h"
#include "test.h"
#include "trowel/trowel.h"

#include <unistd.h>

/* ------------------------------------------------ an independent packer */

typedef struct packer {
    uint8_t bytes[4096];
    size_t bit;
} packer;

/* Bits go into LE u32 words, most significant bit of each word first. */
static void put(packer *p, uint32_t v, unsigned n)
{
    while (n--) {
        size_t word = p->bit / 32, in = 31 - p->bit % 32;
        if ((v >> n) & 1)
            p->bytes[word * 4 + in / 8] |= (uint8_t)(1u << (in % 8));
        p->bit++;
    }
}

static void put_u32_bytes(packer *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        put(p, (v >> (8 * i)) & 0xFF, 8);
}

static void put_f32_bytes(packer *p, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put_u32_bytes(p, u);
}

/* Header of an n x n terrain, 1 m apart, 1 m per unit. */
static void put_header(packer *p, uint32_t nodes, uint32_t vertices, int32_t root, int32_t n)
{
    put(p, 1001, 16);
    put(p, nodes, 32);
    put(p, vertices, 32);
    put(p, (uint32_t)root, 32);
    int32_t quad[4] = {0, 0, n, n};
    for (int i = 0; i < 4; i++)
        put_u32_bytes(p, (uint32_t)quad[i]);
    float f[15] = {0, 0, (float)n, (float)n, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1};
    for (int i = 0; i < 15; i++)
        put_f32_bytes(p, f[i]);
}

static size_t packed_size(const packer *p)
{
    return (p->bit + 31) / 32 * 4;
}

/*
 * The 2x2 terrain on paper. Heights (x, y): (0,0)=10, (1,0)=14, (0,1)=7,
 * (1,1)=20. The root (side 2) touches every border, so every corner reads
 * as corner 0 (reflection at the maximum border) and it is not an odd
 * child: wavelet 0 = 14 - ((10+10+1)>>1) = 4, wavelet 2 = 7 - 10 = -3,
 * wavelet 1 (centre, from corners 0+2) = 20 - 10 = 10. Update of corner 0:
 * w0+w2+w1 = 11, doubled at the minimum X border (+w0 +w1 = 25), at the
 * minimum Y border (+w2 +w1 = 32), and +w1 at both = 42; root = 10 +
 * ((42+4)>>3) = 15. Stream: significant 1, branch 80 bits (1 + 30 + 30 +
 * 3x5 + 4) in 30 bits, max 10 in 30 bits, wavelets in floor(log2 10)+2 = 5
 * bits as magnitude<<1|sign: 8, 20, 7; then four childless side-1 nodes,
 * one 0 bit each. Nodes 1 + 4, vertices 9 (a 3x3 grid).
 */
static void make_paper_2x2(packer *p)
{
    memset(p, 0, sizeof *p);
    put_header(p, 5, 9, 15, 2);
    put(p, 1, 1);
    put(p, 80, 30);
    put(p, 10, 30);
    put(p, 8, 5);
    put(p, 20, 5);
    put(p, 7, 5);
    put(p, 0, 4);
}

/*
 * A 3x3 map on paper, through a 4x4 tree (the last row and column repeat).
 * Hand-assembled file: root 100; only the root has wavelets, w0 = 8,
 * w1 = -4, w2 = 20 (max 20: 6-bit fields 16, 9, 40); its four side-2
 * children are insignificant (one 0 bit each); branch 1 + 60 + 18 + 4 = 83.
 * Decoding, side 4: corner sum 2*8 + 2*20 + 4*(-4) = 40, so (0,0) =
 * 100 - ((40+4)>>3) = 95; every corner reflects to (0,0): (2,0) = 95+8 =
 * 103, (2,2) = 95-4 = 91, (0,2) = 95+20 = 115. Side 2, no wavelets, sums 0:
 * node (0,0) (even child): (1,0) = (95+103+1)>>1 = 99, (1,1) from 0+2 =
 * (95+91+1)>>1 = 93, (0,1) = (95+115+1)>>1 = 105; node (2,0) (odd, at the
 * maximum X border: corners 1, 2 read as 0, 3): (3,0) = 103, (3,1) and
 * (2,1) = (103+91+1)>>1 = 97; node (0,2) (odd, maximum Y): (1,2), (1,3) =
 * (115+91+1)>>1 = 103, (0,3) = 115; node (2,2): all 91. Rows 3 and column
 * 3 repeat row and column 2: the 3x3 map is 95 99 103 / 105 93 97 /
 * 115 103 91.
 */
static void make_paper_3x3(packer *p)
{
    memset(p, 0, sizeof *p);
    put_header(p, 5, 9, 100, 4);
    put(p, 1, 1);
    put(p, 83, 30);
    put(p, 20, 30);
    put(p, 16, 6);
    put(p, 9, 6);
    put(p, 40, 6);
    put(p, 0, 4);
}

static const uint8_t paper_3x3[9] = {95, 99, 103, 105, 93, 97, 115, 103, 91};

/* ------------------------------------------------------------- helpers */

static char dir[64];

static const char *path_in(const char *name)
{
    static char buf[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
    return buf[i];
}

/* Creates a WTD from a file with options; the new file's bytes. */
static bytes create_wtd(const char *src_path, const char *const *opts, size_t nopts,
                        trowel_status *status, char *message, size_t cap)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_source src = {"map", src_path};
    trowel_create_params p = {&src, 1, opts, nopts, NULL, NULL};
    trowel_sink *s;
    bytes b = {NULL, 0};
    *status = trowel_sink_open_memory(ctx, &s);
    if (*status == TROWEL_OK) {
        *status = trowel_create(ctx, trowel_format_find("tres-wtd"), &p, s);
        size_t n;
        const uint8_t *d = trowel_sink_data(s, &n);
        if (*status == TROWEL_OK && d) {
            b.data = malloc(n + 1);
            memcpy(b.data, d, n);
            b.size = n;
        }
        trowel_sink_discard(s);
    }
    if (message)
        snprintf(message, cap, "%s", trowel_ctx_last_error(ctx)->message);
    trowel_ctx_free(ctx);
    return b;
}

/* Decodes a WTD in memory to its heights (via convert --to png and our
 * gray PNG reader); status of the first failing step, message copied. */
static trowel_status decode_wtd(const uint8_t *data, size_t size, uint32_t *w, uint32_t *h,
                                uint16_t **out, char *message, size_t cap)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    trowel_sink *s = NULL;
    *out = NULL;
    trowel_status st = trowel_input_open_memory(ctx, data, size, "t.wtd", &in);
    if (st == TROWEL_OK)
        st = trowel_archive_open(ctx, in, trowel_format_find("tres-wtd"), &a);
    if (st == TROWEL_OK)
        st = trowel_sink_open_memory(ctx, &s);
    if (st == TROWEL_OK)
        st = trowel_convert(ctx, a, "png", NULL, 0, s);
    if (st == TROWEL_OK) {
        size_t n;
        const uint8_t *png = trowel_sink_data(s, &n);
        unsigned depth;
        uint16_t *px;
        st = trowel_png_read_gray(ctx, png, n, w, h, &depth, &px);
        if (st == TROWEL_OK) {
            *out = malloc((size_t)*w * *h * 2);
            memcpy(*out, px, (size_t)*w * *h * 2);
            trowel_mem_free(ctx, px);
            CHECK_EQ_U64(depth, 16);
        }
    }
    if (message)
        snprintf(message, cap, "%s", trowel_ctx_last_error(ctx)->message);
    trowel_sink_discard(s);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return st;
}

/* ---------------------------------------------------------------- tests */

static void test_wtd_paper_2x2_decodes_to_its_heights(void)
{
    packer p;
    make_paper_2x2(&p);
    CHECK_EQ_U64(p.bit, 800);
    uint32_t w, h;
    uint16_t *px;
    REQUIRE(decode_wtd(p.bytes, packed_size(&p), &w, &h, &px, NULL, 0) == TROWEL_OK);
    /* The extent and its maximum border, which the game fills from the
     * near side: (2, y) and (x, 2) copy the vertices 2 back, (0, 0) here. */
    CHECK_EQ_U64(w, 3);
    CHECK_EQ_U64(h, 3);
    /* PNG row y is quad row y. */
    CHECK_EQ_U64(px[0], 10);
    CHECK_EQ_U64(px[1], 14);
    CHECK_EQ_U64(px[3], 7);
    CHECK_EQ_U64(px[4], 20);
    static const uint16_t border[5] = {10, 10, 10, 10, 10}; /* (2,0) (2,1) (0,2) (1,2) (2,2) */
    const size_t at[5] = {2, 5, 6, 7, 8};
    for (int i = 0; i < 5; i++)
        CHECK_EQ_U64(px[at[i]], border[i]);
    free(px);
}

static void test_wtd_encoder_writes_the_paper_2x2_bit_for_bit(void)
{
    const uint8_t raw[8] = {10, 0, 14, 0, 7, 0, 20, 0}; /* 16-bit LE, row 0 first */
    write_file(path_in("paper.raw"), raw, sizeof raw);
    const char *opts[] = {"width=2", "height=2"};
    trowel_status st;
    bytes b = create_wtd(path_in("paper.raw"), opts, 2, &st, NULL, 0);
    REQUIRE(st == TROWEL_OK);
    packer p;
    make_paper_2x2(&p);
    CHECK_EQ_U64(b.size, packed_size(&p));
    CHECK(b.size == packed_size(&p) && memcmp(b.data, p.bytes, b.size) == 0);
    free(b.data);
}

static void test_wtd_paper_3x3_decodes_to_its_heights(void)
{
    packer p;
    make_paper_3x3(&p);
    uint32_t w, h;
    uint16_t *px;
    REQUIRE(decode_wtd(p.bytes, packed_size(&p), &w, &h, &px, NULL, 0) == TROWEL_OK);
    REQUIRE(w == 5 && h == 5);
    for (uint32_t y = 0; y < 4; y++)
        for (uint32_t x = 0; x < 4; x++)
            CHECK_EQ_U64(px[y * 5 + x], paper_3x3[(y < 3 ? y : 2) * 3 + (x < 3 ? x : 2)]);
    free(px);
}

static void test_wtd_encoder_writes_the_paper_3x3_bit_for_bit(void)
{
    write_file(path_in("paper3.raw"), paper_3x3, sizeof paper_3x3);
    const char *opts[] = {"width=3", "height=3"};
    trowel_status st;
    bytes b = create_wtd(path_in("paper3.raw"), opts, 2, &st, NULL, 0);
    REQUIRE(st == TROWEL_OK);
    packer p;
    make_paper_3x3(&p);
    CHECK_EQ_U64(b.size, packed_size(&p));
    CHECK(b.size == packed_size(&p) && memcmp(b.data, p.bytes, b.size) == 0);
    free(b.data);
}

static void test_wavelet_transform_inverts_exactly_on_random_grids(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    uint32_t seed = 12345;
    for (uint32_t n = 2; n <= 64; n *= 2) {
        int32_t *c = malloc((size_t)n * n * 4), *orig = malloc((size_t)n * n * 4);
        for (size_t i = 0; i < (size_t)n * n; i++) {
            seed = seed * 1103515245u + 12345u;
            orig[i] = c[i] = (int32_t)((seed >> 8) & 0xFFFF);
        }
        CHECK(trowel_wavelet_forward(ctx, c, n) == TROWEL_OK);
        CHECK(trowel_wavelet_inverse(ctx, c, n) == TROWEL_OK);
        CHECK(memcmp(c, orig, (size_t)n * n * 4) == 0);
        free(c);
        free(orig);
    }
    trowel_ctx_free(ctx);
}

/* The game's own height fields: encode, decode, compare every sample. */
static void round_trip_corpus(const char *name, uint32_t w, uint32_t h, uint32_t extent)
{
    char src[512];
    snprintf(src, sizeof src, "%s/trespasser/heightfields/%s", TROWEL_CORPUS_DIR, name);
    bytes raw = read_file(src);
    if (!raw.data)
        SKIP("%s is absent", src);
    CHECK_EQ_U64(raw.size, (uint64_t)w * h);
    char ow[32], oh[32];
    snprintf(ow, sizeof ow, "width=%u", w);
    snprintf(oh, sizeof oh, "height=%u", h);
    const char *opts[] = {ow, oh};
    trowel_status st;
    bytes wtd = create_wtd(src, opts, 2, &st, NULL, 0);
    REQUIRE(st == TROWEL_OK);
    CHECK_EQ_U64(wtd.size % 4, 0);
    uint32_t dw, dh;
    uint16_t *px;
    REQUIRE(decode_wtd(wtd.data, wtd.size, &dw, &dh, &px, NULL, 0) == TROWEL_OK);
    CHECK_EQ_U64(dw, extent + 1); /* the maximum border too */
    CHECK_EQ_U64(dh, extent + 1);
    size_t wrong = 0;
    for (uint32_t y = 0; y < extent; y++)
        for (uint32_t x = 0; x < extent; x++) {
            /* Beyond the map the edge repeats. */
            uint32_t sx = x < w ? x : w - 1, sy = y < h ? y : h - 1;
            wrong += px[(size_t)y * dw + x] != raw.data[(size_t)sy * w + sx];
        }
    CHECK_EQ_U64(wrong, 0);
    free(px);
    free(wtd.data);
    free(raw.data);
}

static void test_wtd_corpus_pine_valley_128x256_round_trips(void)
{
    round_trip_corpus("PineValley8M128x256.RAW", 128, 256, 256);
}

static void test_wtd_corpus_400x400_round_trips(void)
{
    round_trip_corpus("HeightField400x400x8.raw", 400, 400, 512);
}

static void test_wtd_corpus_80x80_maps_round_trip(void)
{
    round_trip_corpus("80x80.RAW", 80, 80, 128);
    round_trip_corpus("phytestheightmap.RAW", 80, 80, 128);
}

static void test_wtd_random_16bit_png_round_trips(void)
{
    /* A 16-bit PNG written by our writer, odd sizes, full range. */
    uint32_t w = 37, h = 21, seed = 99;
    uint8_t *px = malloc((size_t)w * h * 2);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        seed = seed * 1103515245u + 12345u;
        uint16_t v = (uint16_t)(seed >> 12);
        px[2 * i] = (uint8_t)(v >> 8);
        px[2 * i + 1] = (uint8_t)v;
    }
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s;
    REQUIRE(trowel_sink_open_file(ctx, path_in("r16.png"), TROWEL_SINK_OVERWRITE, &s) == TROWEL_OK);
    CHECK(trowel_png_write_gray16(ctx, s, w, h, px) == TROWEL_OK);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    trowel_ctx_free(ctx);
    trowel_status st;
    bytes wtd = create_wtd(path_in("r16.png"), NULL, 0, &st, NULL, 0);
    REQUIRE(st == TROWEL_OK);
    uint32_t dw, dh;
    uint16_t *out;
    REQUIRE(decode_wtd(wtd.data, wtd.size, &dw, &dh, &out, NULL, 0) == TROWEL_OK);
    CHECK_EQ_U64(dw, 65);
    size_t wrong = 0;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            wrong += out[(size_t)y * dw + x] != (px[2 * ((size_t)y * w + x)] << 8 |
                                                 px[2 * ((size_t)y * w + x) + 1]);
    CHECK_EQ_U64(wrong, 0);
    free(out);
    free(wtd.data);
    free(px);
}

/* ---------------------------------------------------------------- hostile */

static void expect_failure(const uint8_t *data, size_t size, trowel_status want,
                           const char *needle)
{
    uint32_t w, h;
    uint16_t *px;
    char msg[512];
    trowel_status st = decode_wtd(data, size, &w, &h, &px, msg, sizeof msg);
    CHECK_EQ_U64(st, want);
    if (!strstr(msg, needle)) {
        fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", msg, needle);
        CHECK(0);
    }
    free(px);
}

static void test_wtd_cut_bit_stream_is_truncated(void)
{
    packer p;
    make_paper_2x2(&p);
    /* 800 bits; keep 23 words: the header and a few tree bits. */
    expect_failure(p.bytes, 92, TROWEL_ERR_TRUNCATED, "bit stream runs out");
    expect_failure(p.bytes, 40, TROWEL_ERR_TRUNCATED, "cut short");
}

static void test_wtd_tree_deeper_than_extent_is_refused(void)
{
    packer p;
    memset(&p, 0, sizeof p);
    put_header(&p, 5, 9, 15, 2);
    put(&p, 1, 1);
    put(&p, 80, 30); /* not checked before the deeper node fails */
    put(&p, 10, 30);
    put(&p, 8, 5);
    put(&p, 20, 5);
    put(&p, 7, 5);
    put(&p, 1, 1); /* a side-1 child that claims wavelets */
    put(&p, 0, 31);
    expect_failure(p.bytes, packed_size(&p), TROWEL_ERR_CORRUPT, "deeper than");
}

static void test_wtd_extent_past_15_levels_is_refused(void)
{
    packer p;
    memset(&p, 0, sizeof p);
    put_header(&p, 1, 4, 0, 65536);
    put(&p, 0, 1);
    expect_failure(p.bytes, packed_size(&p), TROWEL_ERR_CORRUPT, "at most 15");
    memset(&p, 0, sizeof p);
    put_header(&p, 1, 4, 0, 48);
    put(&p, 0, 1);
    expect_failure(p.bytes, packed_size(&p), TROWEL_ERR_CORRUPT, "power-of-two");
}

static void test_wtd_wrong_branch_size_is_refused(void)
{
    packer p;
    memset(&p, 0, sizeof p);
    put_header(&p, 5, 9, 15, 2);
    put(&p, 1, 1);
    put(&p, 81, 30);
    put(&p, 10, 30);
    put(&p, 8, 5);
    put(&p, 20, 5);
    put(&p, 7, 5);
    put(&p, 0, 4);
    expect_failure(p.bytes, packed_size(&p), TROWEL_ERR_CORRUPT, "declares 81 bits but holds 80");
}

static void test_wtd_huge_extent_stops_at_the_memory_limit(void)
{
    packer p;
    memset(&p, 0, sizeof p);
    put_header(&p, 1, 4, 0, 32768); /* 4 GiB of coefficients */
    put(&p, 0, 1);
    expect_failure(p.bytes, packed_size(&p), TROWEL_ERR_LIMIT, "");
}

static void test_wtd_create_refuses_bad_options(void)
{
    const uint8_t raw[4] = {1, 2, 3, 4};
    write_file(path_in("four.raw"), raw, sizeof raw);
    trowel_status st;
    char msg[512];
    bytes b = create_wtd(path_in("four.raw"), NULL, 0, &st, msg, sizeof msg);
    CHECK_EQ_U64(st, TROWEL_ERR_USAGE);
    CHECK(strstr(msg, "width=W") != NULL);
    const char *bad[] = {"width=3", "height=3"};
    b = create_wtd(path_in("four.raw"), bad, 2, &st, msg, sizeof msg);
    CHECK_EQ_U64(st, TROWEL_ERR_USAGE);
    const char *scale[] = {"width=2", "height=2", "scale=-1"};
    b = create_wtd(path_in("four.raw"), scale, 3, &st, msg, sizeof msg);
    CHECK_EQ_U64(st, TROWEL_ERR_USAGE);
    CHECK(b.data == NULL);
}

static void setup(void)
{
    char *d = make_temp_dir();
    snprintf(dir, sizeof dir, "%s", d ? d : "/tmp");
}

static void cleanup(void)
{
    const char *names[] = {"paper.raw", "paper3.raw", "r16.png", "four.raw"};
    for (size_t i = 0; i < 4; i++)
        unlink(path_in(names[i]));
    rmdir(dir);
}

int main(int argc, char **argv)
{
    static const test_case cases[] = {
        TEST(test_wtd_paper_2x2_decodes_to_its_heights),
        TEST(test_wtd_encoder_writes_the_paper_2x2_bit_for_bit),
        TEST(test_wtd_paper_3x3_decodes_to_its_heights),
        TEST(test_wtd_encoder_writes_the_paper_3x3_bit_for_bit),
        TEST(test_wavelet_transform_inverts_exactly_on_random_grids),
        TEST(test_wtd_corpus_pine_valley_128x256_round_trips),
        TEST(test_wtd_corpus_400x400_round_trips),
        TEST(test_wtd_corpus_80x80_maps_round_trip),
        TEST(test_wtd_random_16bit_png_round_trips),
        TEST(test_wtd_cut_bit_stream_is_truncated),
        TEST(test_wtd_tree_deeper_than_extent_is_refused),
        TEST(test_wtd_extent_past_15_levels_is_refused),
        TEST(test_wtd_wrong_branch_size_is_refused),
        TEST(test_wtd_huge_extent_stops_at_the_memory_limit),
        TEST(test_wtd_create_refuses_bad_options),
    };
    setup();
    int rc = test_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
    cleanup();
    return rc;
}
