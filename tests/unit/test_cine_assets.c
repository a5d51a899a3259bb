/*
 * The Cinematique asset formats (cine-font, cine-bg, cine-ani, cine-msk,
 * cine-set, cine-sample) and the PNG and WAV writers under them. Every
 * fixture is built by hand from the layouts in docs/formats/cine-assets.md;
 * PNG output is decoded back with libpng and compared, every pixel, with a
 * picture built by hand (CHECK_IMAGE), its PLTE and tRNS chunks with the
 * palette expected (CHECK_PALETTE); WAV output byte by byte. Hostile inputs
 * must fail with the right status.
 */
#include "test.h"
#include "trowel/trowel.h"

#include "core/core.h"
#include "export/png.h"
#include "export/wav.h"

#include <json-c/json.h>
#include <png.h>
#include <unistd.h>

/* ---------------------------------------------------------------- buffers */

typedef struct buf {
    uint8_t data[70000];
    size_t n;
} buf;

static void put8(buf *b, unsigned v) { b->data[b->n++] = (uint8_t)v; }
static void put16(buf *b, unsigned v)
{
    put8(b, v >> 8);
    put8(b, v & 0xff);
}
static void put32(buf *b, uint32_t v)
{
    put16(b, v >> 16);
    put16(b, v & 0xffff);
}
static void zeros(buf *b, size_t n)
{
    memset(b->data + b->n, 0, n);
    b->n += n;
}

/* An ANI/MSK header: width in bytes, height, frames. */
static void anim_header(buf *b, unsigned row_bytes, unsigned height, unsigned frames)
{
    put32(b, 0x414e494d); /* "ANIM": the id is not checked */
    put16(b, row_bytes);
    put16(b, height);
    zeros(b, 6);
    put16(b, frames);
    zeros(b, 4);
    put16(b, 0);
}

/* ---------------------------------------------------------------- running */

typedef struct run {
    trowel_ctx *ctx;
    trowel_input *in;
    trowel_archive *a;
    trowel_status open_status;
} run;

/* Opens b under name; forced to format id unless id is NULL (detect). */
static run open_buf(const buf *b, const char *name, const char *id)
{
    run r = {trowel_ctx_new(), NULL, NULL, TROWEL_OK};
    r.open_status = trowel_input_open_memory(r.ctx, b->data, b->n, name, &r.in);
    if (r.open_status == TROWEL_OK)
        r.open_status = trowel_archive_open(r.ctx, r.in, id ? trowel_format_find(id) : NULL, &r.a);
    return r;
}

static void close_run(run *r)
{
    trowel_archive_close(r->a);
    trowel_input_close(r->in);
    trowel_ctx_free(r->ctx);
}

static const char *detected(const buf *b, const char *name)
{
    run r = open_buf(b, name, NULL);
    const char *id = r.a ? trowel_format_id(trowel_archive_format(r.a)) : "none";
    close_run(&r);
    return id;
}

/* Converts; the output bytes go to *out (malloc'd) unless the call fails. */
static trowel_status convert(run *r, const char *target, const char *const *opts, size_t nopts,
                             uint8_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    trowel_sink *s;
    trowel_status st = trowel_sink_open_memory(r->ctx, &s);
    if (st != TROWEL_OK)
        return st;
    st = trowel_convert(r->ctx, r->a, target, opts, nopts, s);
    const uint8_t *d = trowel_sink_data(s, n);
    if (st == TROWEL_OK && *n) {
        *out = malloc(*n);
        memcpy(*out, d, *n);
    }
    trowel_sink_discard(s);
    return st;
}

/* A decoded PNG as RGBA, with its PLTE and tRNS chunks as stored. */
typedef struct image {
    uint32_t w, h;
    uint8_t *rgba;
    size_t plte_n, trns_n; /* bytes; 0 when the chunk is absent */
    uint8_t plte[768], trns[256];
} image;

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Copies the PLTE and tRNS chunks of a PNG (after its 8-byte signature). */
static void read_palette_chunks(const uint8_t *data, size_t n, image *im)
{
    for (size_t at = 8; at + 12 <= n;) {
        uint32_t len = be32(data + at);
        if (len > n - at - 12)
            break;
        const uint8_t *body = data + at + 8;
        if (memcmp(data + at + 4, "PLTE", 4) == 0 && len <= sizeof im->plte) {
            memcpy(im->plte, body, len);
            im->plte_n = len;
        } else if (memcmp(data + at + 4, "tRNS", 4) == 0 && len <= sizeof im->trns) {
            memcpy(im->trns, body, len);
            im->trns_n = len;
        }
        at += (size_t)len + 12;
    }
}

static image decode_png(const uint8_t *data, size_t n)
{
    image im;
    memset(&im, 0, sizeof im);
    png_image p;
    memset(&p, 0, sizeof p);
    p.version = PNG_IMAGE_VERSION;
    if (!data || !png_image_begin_read_from_memory(&p, data, n))
        return im;
    p.format = PNG_FORMAT_RGBA;
    im.rgba = malloc(PNG_IMAGE_SIZE(p));
    if (!png_image_finish_read(&p, NULL, im.rgba, 0, NULL)) {
        free(im.rgba);
        im.rgba = NULL;
        return im;
    }
    im.w = p.width;
    im.h = p.height;
    read_palette_chunks(data, n, &im);
    return im;
}

/* A picture built by hand: w x h pixels as 0xRRGGBBAA. */
typedef struct picture {
    uint32_t w, h;
    uint32_t *px;
} picture;

static picture picture_new(uint32_t w, uint32_t h, uint32_t fill)
{
    picture p = {w, h, malloc((size_t)w * h * sizeof(uint32_t))};
    for (size_t i = 0; p.px && i < (size_t)w * h; i++)
        p.px[i] = fill;
    return p;
}

static void paint(picture *p, uint32_t x, uint32_t y, uint32_t rgba)
{
    if (p->px && x < p->w && y < p->h)
        p->px[(size_t)y * p->w + x] = rgba;
}

/* Every pixel of a decoded PNG equals the picture (frees the picture). */
#define CHECK_IMAGE(im, want) check_image(&(im), &(want), __FILE__, __LINE__)
static void check_image(const image *im, picture *want, const char *file, int line)
{
    if (!im->rgba || !want->px || im->w != want->w || im->h != want->h) {
        fprintf(stderr, "  %s:%d: image is %" PRIu32 "x%" PRIu32 ", want %" PRIu32 "x%" PRIu32 "\n",
                file, line, im->w, im->h, want->w, want->h);
        test_failures_in_current++;
        free(want->px);
        return;
    }
    size_t wrong = 0;
    for (uint32_t y = 0; y < im->h; y++) {
        for (uint32_t x = 0; x < im->w; x++) {
            const uint8_t *p = im->rgba + ((size_t)y * im->w + x) * 4;
            uint32_t got = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
            uint32_t exp = want->px[(size_t)y * want->w + x];
            if (got != exp && wrong++ < 5)
                fprintf(stderr, "  %s:%d: pixel (%" PRIu32 ",%" PRIu32 ") is %08" PRIx32
                        ", want %08" PRIx32 "\n", file, line, x, y, got, exp);
        }
    }
    if (wrong) {
        fprintf(stderr, "  %s:%d: %zu pixels differ\n", file, line, wrong);
        test_failures_in_current++;
    }
    free(want->px);
}

/* The PNG's PLTE holds exactly these n colours (0xRRGGBBAA) and its tRNS
 * their alphas up to the last one that is not 255 (none when all are). */
#define CHECK_PALETTE(im, colours, n) check_palette(&(im), colours, n, __FILE__, __LINE__)
static void check_palette(const image *im, const uint32_t *colours, size_t n, const char *file,
                          int line)
{
    uint8_t plte[768], trns[256];
    size_t trns_n = 0;
    for (size_t i = 0; i < n; i++) {
        plte[i * 3] = (uint8_t)(colours[i] >> 24);
        plte[i * 3 + 1] = (uint8_t)(colours[i] >> 16);
        plte[i * 3 + 2] = (uint8_t)(colours[i] >> 8);
        trns[i] = (uint8_t)colours[i];
        if (trns[i] != 255)
            trns_n = i + 1;
    }
    if (im->plte_n != n * 3) {
        fprintf(stderr, "  %s:%d: PLTE has %zu colours, want %zu\n", file, line,
                im->plte_n / 3, n);
        test_failures_in_current++;
    } else if (memcmp(im->plte, plte, n * 3) != 0) {
        size_t i = 0;
        while (im->plte[i] == plte[i])
            i++;
        fprintf(stderr, "  %s:%d: PLTE colour %zu differs\n", file, line, i / 3);
        test_failures_in_current++;
    }
    if (im->trns_n != trns_n || memcmp(im->trns, trns, trns_n) != 0) {
        fprintf(stderr, "  %s:%d: tRNS differs (%zu bytes, want %zu)\n", file, line, im->trns_n,
                trns_n);
        test_failures_in_current++;
    }
}

/* The palettes the converters use: 16 or 256 grey levels (colour i is
 * level i * 255 / (n - 1)), colour `clear` (or none: -1) transparent. */
static void grey_palette(uint32_t *out, unsigned n, int clear)
{
    for (unsigned i = 0; i < n; i++) {
        uint32_t level = i * 255 / (n - 1);
        out[i] = level * 0x01010100u | 0xffu;
    }
    if (clear >= 0)
        out[clear] = 0;
}

/* Pixel (x, y) as 0xRRGGBBAA. */
static uint32_t px(const image *im, uint32_t x, uint32_t y)
{
    const uint8_t *p = im->rgba + ((size_t)y * im->w + x) * 4;
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Converts to PNG and decodes it; im.rgba NULL on failure. */
static image convert_png(run *r, const char *const *opts, size_t nopts, trowel_status *st)
{
    uint8_t *out;
    size_t n;
    *st = convert(r, "png", opts, nopts, &out, &n);
    image im = decode_png(out, n);
    free(out);
    return im;
}

#define GREY16(i) ((uint32_t)((i) * 17) * 0x01010100u | 0xffu)
#define CLEAR 0x00000000u

static char temp_dir[64];

static const char *temp_path(const char *name)
{
    static char path[128];
    if (!temp_dir[0]) {
        snprintf(temp_dir, sizeof temp_dir, "/tmp/trowel-cine-XXXXXX");
        if (!mkdtemp(temp_dir))
            return "/nonexistent";
    }
    snprintf(path, sizeof path, "%s/%s", temp_dir, name);
    return path;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

/* A 32-byte palette file: colour 1 red, 2 green, 3 blue, 15 white. */
static const char *palette_file(void)
{
    buf b = {.n = 0};
    for (unsigned i = 0; i < 16; i++)
        put16(&b, i == 1 ? 0x700 : i == 2 ? 0x070 : i == 3 ? 0x007 : i == 15 ? 0x777 : 0);
    const char *path = temp_path("test.pal");
    write_file(path, b.data, b.n);
    return path;
}

/* palette_file()'s colours, colour `clear` (or none: -1) transparent. */
static void file_palette(uint32_t *out, int clear)
{
    for (unsigned i = 0; i < 16; i++)
        out[i] = 0x000000ffu;
    out[1] = 0xff0000ffu;
    out[2] = 0x00ff00ffu;
    out[3] = 0x0000ffffu;
    out[15] = 0xffffffffu;
    if (clear >= 0)
        out[clear] = 0;
}

/* ------------------------------------------------------------ PNG and WAV */

static void test_png_indexed_writes_palette_and_transparency_exactly(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_palette pal = {.count = 3};
    const uint8_t colours[3][4] = {{0, 0, 0, 0}, {10, 20, 30, 255}, {200, 100, 50, 128}};
    memcpy(pal.rgba, colours, sizeof colours);
    const uint8_t pixels[6] = {0, 1, 2, 2, 1, 0};
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    CHECK(trowel_png_write_indexed(ctx, s, 3, 2, pixels, &pal) == TROWEL_OK);
    size_t n;
    const uint8_t *d = trowel_sink_data(s, &n);
    image im = decode_png(d, n);
    REQUIRE(im.rgba != NULL);
    picture want = picture_new(3, 2, CLEAR);
    paint(&want, 1, 0, 0x0a141eff);
    paint(&want, 2, 0, 0xc8643280);
    paint(&want, 0, 1, 0xc8643280);
    paint(&want, 1, 1, 0x0a141eff);
    CHECK_IMAGE(im, want);
    const uint32_t written[3] = {CLEAR, 0x0a141eff, 0xc8643280};
    CHECK_PALETTE(im, written, 3);
    /* the file is a real palette PNG: colour type 3 at IHDR offset 25 */
    CHECK_EQ_U64(d[25], 3);
    free(im.rgba);
    trowel_sink_discard(s);
    /* an index past the palette is refused, not written */
    const uint8_t bad[1] = {3};
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    CHECK(trowel_png_write_indexed(ctx, s, 1, 1, bad, &pal) == TROWEL_ERR_CORRUPT);
    trowel_sink_discard(s);
    trowel_ctx_free(ctx);
}

static void test_png_rgba_round_trips_and_refuses_bad_sizes(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    const uint8_t pixels[8] = {1, 2, 3, 4, 250, 251, 252, 253};
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    CHECK(trowel_png_write_rgba(ctx, s, 2, 1, pixels) == TROWEL_OK);
    size_t n = 0;
    const uint8_t *d = trowel_sink_data(s, &n);
    image im = decode_png(d, n);
    REQUIRE(im.rgba != NULL);
    CHECK_EQ_U64(im.w, 2);
    CHECK_EQ_U64(im.h, 1);
    CHECK(memcmp(im.rgba, pixels, 8) == 0);
    CHECK_EQ_U64(im.plte_n, 0); /* true colour: no palette */
    free(im.rgba);
    CHECK(trowel_png_write_rgba(ctx, s, 0, 1, pixels) == TROWEL_ERR_UNSUPPORTED);
    CHECK(trowel_png_write_rgba(ctx, s, 70000, 1, pixels) == TROWEL_ERR_UNSUPPORTED);
    trowel_sink_discard(s);
    trowel_ctx_free(ctx);
}

static void test_png_writer_passes_on_sink_failure_without_leaking(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    static uint8_t pixels[256 * 256 * 4];
    for (size_t i = 0; i < sizeof pixels; i++)
        pixels[i] = (uint8_t)(i * 7919 >> 3); /* not compressible to nothing */
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    trowel_ctx_set_mem_limit(ctx, ctx->mem_in_use + 1000); /* the memory sink hits it */
    CHECK(trowel_png_write_rgba(ctx, s, 256, 256, pixels) == TROWEL_ERR_LIMIT);
    trowel_sink_discard(s);
    trowel_ctx_free(ctx);
}

static void test_sheet_plan_lays_out_cells_and_refuses_giant_sheets(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    const uint32_t w[5] = {4, 2, 4, 1, 3}, h[5] = {1, 3, 2, 1, 1};
    trowel_sheet sh;
    CHECK(trowel_sheet_plan(ctx, 5, w, h, 0, 1, &sh) == TROWEL_OK);
    CHECK_EQ_U64(sh.columns, 3);
    CHECK_EQ_U64(sh.rows, 2);
    CHECK_EQ_U64(sh.width, 12);
    CHECK_EQ_U64(sh.height, 6);
    uint32_t x, y;
    trowel_sheet_cell(&sh, 4, &x, &y);
    CHECK_EQ_U64(x, 4);
    CHECK_EQ_U64(y, 3);
    const uint32_t big[2] = {60000, 60000};
    CHECK(trowel_sheet_plan(ctx, 2, big, h, 0, 1, &sh) == TROWEL_ERR_LIMIT);
    trowel_ctx_free(ctx);
}

static void test_wav_header_and_signed_samples_are_exact(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    const uint8_t samples[3] = {0x00, 0x7f, 0x80};
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    CHECK(trowel_wav_write_u8(ctx, s, samples, 3, 8000, true) == TROWEL_OK);
    static const uint8_t want[48] = {
        'R', 'I', 'F', 'F', 40, 0, 0, 0, 'W', 'A', 'V', 'E', 'f', 'm', 't', ' ',
        16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x40, 0x1f, 0, 0,
        1, 0, 8, 0, 'd', 'a', 't', 'a', 3, 0, 0, 0, 0x80, 0xff, 0x00, 0x00};
    size_t n;
    const uint8_t *d = trowel_sink_data(s, &n);
    CHECK_EQ_U64(n, sizeof want);
    CHECK(n == sizeof want && memcmp(d, want, n) == 0);
    trowel_sink_discard(s);
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    CHECK(trowel_wav_write_u8(ctx, s, samples, 3, 0, true) == TROWEL_ERR_USAGE);
    trowel_sink_discard(s);
    trowel_ctx_free(ctx);
}

/* ------------------------------------------------------------------ fonts */

/* A font of n glyphs: glyph 0 row 0 has pixel 0 = colour 1 and pixel 15 =
 * colour 8; glyph 1 row 7 is all colour 2; the rest are empty. */
static void font_fixture(buf *b, unsigned glyphs)
{
    b->n = 0;
    put16(b, 8);
    put16(b, glyphs * 8);
    size_t start = b->n;
    zeros(b, (size_t)glyphs * 64);
    b->data[start + 0] = 0x80;        /* glyph 0 row 0 plane 0: leftmost pixel */
    b->data[start + 7] = 0x01;        /* plane 3: rightmost pixel */
    b->data[start + 64 + 56 + 2] = 0xff; /* glyph 1 row 7 plane 1 */
    b->data[start + 64 + 56 + 3] = 0xff;
}

static void test_font_detects_known_glyph_counts_only(void)
{
    static buf b;
    const unsigned good[4] = {78, 85, 90, 93};
    for (int i = 0; i < 4; i++) {
        font_fixture(&b, good[i]);
        CHECK_STR(detected(&b, "TEXTE.DAT"), "cine-font");
        CHECK_STR(detected(&b, "whatever.bin"), "cine-font");
    }
    font_fixture(&b, 79);
    CHECK_STR(detected(&b, "TEXTE.DAT"), "none");
    font_fixture(&b, 78);
    b.n--; /* one byte short: the sizes no longer agree */
    CHECK_STR(detected(&b, "TEXTE.DAT"), "none");
}

static void test_font_info_entries_and_glyph_pixels(void)
{
    static buf b;
    font_fixture(&b, 90);
    run r = open_buf(&b, "TEXTE.DAT", NULL);
    REQUIRE(r.a != NULL);
    CHECK_EQ_U64(trowel_props_find(trowel_archive_info(r.a), "glyphs")->u, 90);
    CHECK_EQ_U64(trowel_archive_entry_count(r.a), 90);
    CHECK_STR(trowel_archive_entry(r.a, 1)->name, "glyph_001");
    CHECK_EQ_U64(trowel_archive_entry(r.a, 1)->offset, 68);
    trowel_status st;
    const char *one[] = {"frame=0"};
    image im = convert_png(&r, one, 1, &st);
    CHECK(st == TROWEL_OK);
    REQUIRE(im.rgba != NULL);
    picture want = picture_new(16, 8, CLEAR); /* colour 0 is transparent */
    paint(&want, 0, 0, GREY16(1));
    paint(&want, 15, 0, GREY16(8));
    CHECK_IMAGE(im, want);
    uint32_t grey[17];
    grey_palette(grey, 16, 0);
    CHECK_PALETTE(im, grey, 16);
    grey[16] = CLEAR; /* a sheet adds a clear colour for the gaps between cells */
    free(im.rgba);
    /* the sheet: 16 glyphs a row, 90 glyphs -> 6 rows */
    im = convert_png(&r, NULL, 0, &st);
    CHECK(st == TROWEL_OK);
    REQUIRE(im.rgba != NULL);
    want = picture_new(256, 48, CLEAR); /* also the empty cells past glyph 89 */
    paint(&want, 0, 0, GREY16(1));
    paint(&want, 15, 0, GREY16(8));
    for (uint32_t x = 16; x < 32; x++)
        paint(&want, x, 7, GREY16(2));
    CHECK_IMAGE(im, want);
    CHECK_PALETTE(im, grey, 17);
    free(im.rgba);
    /* a palette file replaces the grey */
    const char *pal[2] = {NULL, "frame=1"};
    char opt[160];
    snprintf(opt, sizeof opt, "palette=%s", palette_file());
    pal[0] = opt;
    im = convert_png(&r, pal, 2, &st);
    CHECK(st == TROWEL_OK);
    REQUIRE(im.rgba != NULL);
    want = picture_new(16, 8, CLEAR);
    for (uint32_t x = 0; x < 16; x++)
        paint(&want, x, 7, 0x00ff00ffu);
    CHECK_IMAGE(im, want);
    uint32_t colours[16];
    file_palette(colours, 0);
    CHECK_PALETTE(im, colours, 16);
    free(im.rgba);
    close_run(&r);
}

static void test_font_glyphmap_lists_positions_and_ink(void)
{
    static buf b;
    font_fixture(&b, 78);
    run r = open_buf(&b, "TEXTE.DAT", NULL);
    REQUIRE(r.a != NULL);
    uint8_t *out;
    size_t n;
    CHECK(convert(&r, "glyphmap", NULL, 0, &out, &n) == TROWEL_OK);
    REQUIRE(out != NULL);
    char *text = calloc(1, n + 1);
    memcpy(text, out, n);
    json_object *root = json_tokener_parse(text);
    REQUIRE(root != NULL);
    json_object *v, *glyphs, *g;
    CHECK(json_object_object_get_ex(root, "format", &v) &&
          strcmp(json_object_get_string(v), "cine-font") == 0);
    CHECK(json_object_object_get_ex(root, "columns", &v) && json_object_get_int(v) == 16);
    REQUIRE(json_object_object_get_ex(root, "glyphs", &glyphs));
    CHECK_EQ_U64(json_object_array_length(glyphs), 78);
    g = json_object_array_get_idx(glyphs, 0);
    CHECK(json_object_object_get_ex(g, "ink_width", &v) && json_object_get_int(v) == 16);
    g = json_object_array_get_idx(glyphs, 2);
    CHECK(json_object_object_get_ex(g, "ink_width", &v) && json_object_get_int(v) == 0);
    g = json_object_array_get_idx(glyphs, 17);
    CHECK(json_object_object_get_ex(g, "x", &v) && json_object_get_int(v) == 16);
    CHECK(json_object_object_get_ex(g, "y", &v) && json_object_get_int(v) == 8);
    json_object_put(root);
    free(text);
    free(out);
    const char *bad[] = {"frame=1"};
    CHECK(convert(&r, "glyphmap", bad, 1, &out, &n) == TROWEL_ERR_USAGE);
    close_run(&r);
}

static void test_font_hostile_counts_and_options(void)
{
    static buf b;
    b.n = 0;
    put16(&b, 8);
    put16(&b, 0xfff8); /* 8191 glyphs declared, 1 present */
    zeros(&b, 64);
    run r = open_buf(&b, "TEXTE.DAT", "cine-font");
    CHECK(r.open_status == TROWEL_ERR_TRUNCATED);
    close_run(&r);
    b.n = 0;
    put16(&b, 3);
    put16(&b, 7); /* 21 bytes: not whole glyphs */
    zeros(&b, 21);
    r = open_buf(&b, "TEXTE.DAT", "cine-font");
    CHECK(r.open_status == TROWEL_ERR_CORRUPT);
    close_run(&r);
    font_fixture(&b, 78);
    r = open_buf(&b, "TEXTE.DAT", NULL);
    REQUIRE(r.a != NULL);
    uint8_t *out;
    size_t n;
    const char *o1[] = {"frame=78"}, *o2[] = {"colour=3"}, *o3[] = {"palette=/nonexistent/x"};
    CHECK(convert(&r, "png", o1, 1, &out, &n) == TROWEL_ERR_UNSUPPORTED); /* past the file's frames: bad input */
    CHECK(convert(&r, "png", o2, 1, &out, &n) == TROWEL_ERR_USAGE);
    CHECK(convert(&r, "png", o3, 1, &out, &n) == TROWEL_ERR_IO);
    CHECK(convert(&r, "wav", NULL, 0, &out, &n) == TROWEL_ERR_UNSUPPORTED);
    close_run(&r);
}

/* ---------------------------------------------------------- ANI and MSK */

static void test_ani_frames_decode_with_palette_and_transparency(void)
{
    static buf b;
    b.n = 0;
    anim_header(&b, 8, 2, 2); /* 16 x 2 pixels, 2 frames */
    size_t f0 = b.n;
    zeros(&b, 32);
    b.data[f0 + 0] = 0x80;      /* frame 0 (0,0): colour 1 */
    b.data[f0 + 8 + 3] = 0x01;  /* frame 0 (15,1): plane 1 -> colour 2 */
    b.data[f0 + 16 + 4] = 0x40; /* frame 1 (1,0): plane 2 -> colour 4 */
    b.data[f0 + 16 + 6] = 0x40; /* and plane 3 -> colour 12 */
    CHECK_STR(detected(&b, "WALK.ANI"), "cine-ani");
    CHECK_STR(detected(&b, "noname"), "cine-ani");
    CHECK_STR(detected(&b, "WALK.MSK"), "cine-msk");
    run r = open_buf(&b, "WALK.ANI", NULL);
    REQUIRE(r.a != NULL);
    CHECK_EQ_U64(trowel_archive_entry_count(r.a), 2);
    CHECK_EQ_U64(trowel_props_find(trowel_archive_info(r.a), "width")->u, 16);
    trowel_status st;
    image im = convert_png(&r, NULL, 0, &st); /* 2 frames: 2 columns */
    CHECK(st == TROWEL_OK);
    REQUIRE(im.rgba != NULL);
    picture want = picture_new(32, 2, CLEAR);
    paint(&want, 0, 0, GREY16(1));
    paint(&want, 15, 1, GREY16(2));
    paint(&want, 17, 0, GREY16(12));
    CHECK_IMAGE(im, want);
    uint32_t colours[17];
    grey_palette(colours, 16, 0);
    colours[16] = CLEAR; /* the sheet's gap colour */
    CHECK_PALETTE(im, colours, 17);
    free(im.rgba);
    char opt[160];
    snprintf(opt, sizeof opt, "palette=%s", palette_file());
    const char *opts[3] = {opt, "frame=0", "transparent=none"};
    im = convert_png(&r, opts, 3, &st);
    CHECK(st == TROWEL_OK);
    REQUIRE(im.rgba != NULL);
    want = picture_new(16, 2, 0x000000ffu); /* colour 0 opaque black */
    paint(&want, 0, 0, 0xff0000ffu);
    paint(&want, 15, 1, 0x00ff00ffu);
    CHECK_IMAGE(im, want);
    file_palette(colours, -1);
    CHECK_PALETTE(im, colours, 16);
    free(im.rgba);
    close_run(&r);
}

static void test_msk_bits_become_opaque_white(void)
{
    static buf b;
    b.n = 0;
    anim_header(&b, 1, 2, 1);
    put8(&b, 0xa0);
    put8(&b, 0x01);
    CHECK_STR(detected(&b, "DOOR.MSK"), "cine-msk");
    run r = open_buf(&b, "DOOR.MSK", NULL);
    REQUIRE(r.a != NULL);
    trowel_status st;
    image im = convert_png(&r, NULL, 0, &st);
    CHECK(st == TROWEL_OK);
    REQUIRE(im.rgba != NULL);
    CHECK_EQ_U64(im.w, 8);
    CHECK_EQ_U64(im.h, 2);
    const int want[16] = {1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    for (int i = 0; i < 16; i++)
        CHECK_EQ_U64(px(&im, (uint32_t)i % 8, (uint32_t)i / 8), want[i] ? 0xffffffffu : CLEAR);
    const uint32_t mask_colours[2] = {CLEAR, 0xffffffffu};
    CHECK_PALETTE(im, mask_colours, 2);
    free(im.rgba);
    char opt[160];
    snprintf(opt, sizeof opt, "palette=%s", palette_file());
    const char *opts[] = {opt}, *clear[] = {"transparent=1"};
    uint8_t *out;
    size_t n;
    CHECK(convert(&r, "png", opts, 1, &out, &n) == TROWEL_ERR_USAGE);
    CHECK(convert(&r, "png", clear, 1, &out, &n) == TROWEL_ERR_USAGE);
    close_run(&r);
}

static void test_anim_hostile_headers(void)
{
    static buf b;
    b.n = 0;
    anim_header(&b, 8, 2, 30000); /* frames far past the end */
    zeros(&b, 16);
    run r = open_buf(&b, "X.ANI", "cine-ani");
    CHECK(r.open_status == TROWEL_ERR_TRUNCATED);
    CHECK(strstr(trowel_ctx_last_error(r.ctx)->message, "frames") != NULL);
    close_run(&r);
    b.n = 0;
    anim_header(&b, 0xfff0, 2, 1); /* negative width */
    r = open_buf(&b, "X.ANI", "cine-ani");
    CHECK(r.open_status == TROWEL_ERR_CORRUPT);
    close_run(&r);
    b.n = 0;
    anim_header(&b, 3, 1, 1); /* 3 bytes a row: not whole groups */
    zeros(&b, 3);
    r = open_buf(&b, "X.ANI", "cine-ani");
    CHECK(r.open_status == TROWEL_ERR_UNSUPPORTED);
    close_run(&r);
    b.n = 10; /* header cut short */
    r = open_buf(&b, "X.MSK", "cine-msk");
    CHECK(r.open_status == TROWEL_ERR_TRUNCATED);
    close_run(&r);
    /* a mask of 64000 x 1000 pixels: 64 MB decoded, more than the limit */
    static buf big;
    big.n = 0;
    anim_header(&big, 8000, 8, 1);
    zeros(&big, 64000);
    r = open_buf(&big, "BIG.MSK", NULL);
    REQUIRE(r.a != NULL);
    trowel_ctx_set_mem_limit(r.ctx, 256 * 1024);
    uint8_t *out;
    size_t n;
    CHECK(convert(&r, "png", NULL, 0, &out, &n) == TROWEL_ERR_LIMIT);
    close_run(&r);
    /* a mask 8 x 32000 = 256000 pixels wide: refused before any pixel
     * memory is taken, whatever the limit */
    big.n = 0;
    anim_header(&big, 32000, 1, 1);
    zeros(&big, 32000);
    r = open_buf(&big, "WIDE.MSK", NULL);
    REQUIRE(r.a != NULL);
    const char *one[] = {"frame=0"};
    /* room for the output, not for the 256000 pixels: the message shows
     * which check refused it */
    trowel_ctx_set_mem_limit(r.ctx, r.ctx->mem_in_use + 200000);
    CHECK(convert(&r, "png", one, 1, &out, &n) == TROWEL_ERR_LIMIT);
    CHECK(strstr(trowel_ctx_last_error(r.ctx)->message, "256000x1") != NULL);
    close_run(&r);
}

/* -------------------------------------------------------------------- SET */

static void set_fixture(buf *b)
{
    b->n = 0;
    put32(b, 0x53455400); /* "SET\0" */
    put16(b, 4);
    /* headers: offset, width, height, type, 3 unknown */
    const unsigned hdr[4][4] = {{0, 1, 1, 1}, {1, 8, 1, 4}, {9, 1, 1, 5}, {26, 16, 1, 8}};
    for (int i = 0; i < 4; i++) {
        put32(b, hdr[i][0]);
        put16(b, hdr[i][1]);
        put16(b, hdr[i][2]);
        put16(b, hdr[i][3]);
        zeros(b, 6);
    }
    put8(b, 0x80); /* type 1: leftmost pixel set */
    put16(b, 0);   /* type 4: planes 0..2 empty, plane 3 leftmost -> 8 */
    put16(b, 0);
    put16(b, 0);
    put16(b, 0x8000);
    for (unsigned i = 0; i < 16; i++) /* type 5: table[i] = 15 - i, then 0x12 */
        put8(b, 15 - i);
    put8(b, 0x12);
    for (unsigned p = 0; p < 8; p++) /* type 8: plane 7 leftmost, plane 0 rightmost */
        put16(b, p == 7 ? 0x8000 : p == 0 ? 0x0001 : 0);
}

static void test_set_decodes_every_frame_type(void)
{
    static buf b;
    set_fixture(&b);
    CHECK_STR(detected(&b, "anything"), "cine-set");
    run r = open_buf(&b, "ROBOT.SET", NULL);
    REQUIRE(r.a != NULL);
    CHECK_EQ_U64(trowel_archive_entry_count(r.a), 4);
    CHECK_EQ_U64(trowel_archive_entry(r.a, 3)->offset, 6 + 64 + 26);
    CHECK_EQ_U64(trowel_props_find(trowel_archive_info(r.a), "colours")->u, 256);
    trowel_status st;
    /* 256 colours, no palette: grey where colour i is level i */
    /* each frame one row; the pixels not listed are colour 0 (opaque black) */
    const uint32_t widths[4] = {8, 16, 2, 16};
    const uint32_t expect[4][2][2] = {{{0, 1}, {1, 0}}, {{0, 8}, {1, 0}},
                                      {{0, 14}, {1, 13}}, {{0, 128}, {15, 1}}};
    uint32_t opaque[256], clear0[256];
    grey_palette(opaque, 256, -1);
    grey_palette(clear0, 256, 0);
    for (int f = 0; f < 4; f++) {
        char frame[16];
        snprintf(frame, sizeof frame, "frame=%d", f);
        const char *opts[] = {frame, "transparent=none"};
        image im = convert_png(&r, opts, 2, &st);
        CHECK(st == TROWEL_OK);
        REQUIRE(im.rgba != NULL);
        picture want = picture_new(widths[f], 1, opaque[0]);
        for (int k = 0; k < 2; k++)
            paint(&want, expect[f][k][0], 0, opaque[expect[f][k][1]]);
        CHECK_IMAGE(im, want);
        CHECK_PALETTE(im, opaque, 256);
        free(im.rgba);
    }
    image im = convert_png(&r, NULL, 0, &st); /* sheet: 2 x 2 cells of 16 x 1 */
    CHECK(st == TROWEL_OK);
    REQUIRE(im.rgba != NULL);
    picture want = picture_new(32, 2, CLEAR); /* colour 0 and the cells' spare room */
    paint(&want, 0, 0, clear0[1]);   /* frame 0 (0,0): colour 1 */
    paint(&want, 16, 0, clear0[8]);  /* frame 1 (0,0): colour 8 */
    paint(&want, 0, 1, clear0[14]);  /* frame 2: colours 14, 13 */
    paint(&want, 1, 1, clear0[13]);
    paint(&want, 16, 1, clear0[128]); /* frame 3: colour 128 ... 1 */
    paint(&want, 31, 1, clear0[1]);
    CHECK_IMAGE(im, want);
    CHECK_PALETTE(im, clear0, 256);
    free(im.rgba);
    close_run(&r);
}

static void test_set_hostile_offsets(void)
{
    static buf b;
    set_fixture(&b);
    b.data[6 + 48 + 3] = 200; /* frame 3's offset far past the end */
    CHECK_STR(detected(&b, "ROBOT.SET"), "none");
    run r = open_buf(&b, "ROBOT.SET", "cine-set");
    CHECK(r.open_status == TROWEL_ERR_TRUNCATED);
    CHECK(strstr(trowel_ctx_last_error(r.ctx)->message, "frame 3") != NULL);
    close_run(&r);
    set_fixture(&b);
    b.data[5] = 200; /* 200 headers: past the end */
    r = open_buf(&b, "ROBOT.SET", "cine-set");
    CHECK(r.open_status == TROWEL_ERR_TRUNCATED);
    close_run(&r);
}

/* ------------------------------------------------------------ backgrounds */

static void test_bg_pi1_neo_and_type8(void)
{
    static buf b;
    /* PI1: colour 0 black, 1 = 0x700 red, 15 = white */
    b.n = 0;
    put16(&b, 0);
    for (unsigned i = 0; i < 16; i++)
        put16(&b, i == 1 ? 0x700 : i == 15 ? 0x777 : 0);
    size_t pix = b.n;
    zeros(&b, 32000);
    b.data[pix] = 0x80;                  /* (0,0): colour 1 */
    for (int p = 0; p < 4; p++)          /* (319,199): colour 15 */
        b.data[pix + 31992 + 2 * p + 1] = 0x01;
    CHECK_STR(detected(&b, "ROOM.PI1"), "cine-bg");
    run r = open_buf(&b, "ROOM.PI1", NULL);
    REQUIRE(r.a != NULL);
    trowel_status st;
    image im = convert_png(&r, NULL, 0, &st);
    CHECK(st == TROWEL_OK);
    REQUIRE(im.rgba != NULL);
    picture want = picture_new(320, 200, 0x000000ffu); /* no colour transparent */
    paint(&want, 0, 0, 0xff0000ffu);
    paint(&want, 319, 199, 0xffffffffu);
    CHECK_IMAGE(im, want);
    uint32_t colours[256] = {0};
    for (unsigned i = 0; i < 16; i++)
        colours[i] = i == 1 ? 0xff0000ffu : i == 15 ? 0xffffffffu : 0x000000ffu;
    CHECK_PALETTE(im, colours, 16);
    free(im.rgba);
    close_run(&r);

    /* NEO: the same pixels behind a 128-byte header, palette at 4 */
    static buf n;
    n.n = 0;
    put16(&n, 0);
    put16(&n, 0);
    for (unsigned i = 0; i < 16; i++)
        put16(&n, i == 1 ? 0x070 : 0);
    zeros(&n, 128 - n.n);
    memcpy(n.data + n.n, b.data + pix, 32000);
    n.n += 32000;
    CHECK_STR(detected(&n, "TITLE.NEO"), "cine-bg");
    r = open_buf(&n, "TITLE.NEO", NULL);
    REQUIRE(r.a != NULL);
    im = convert_png(&r, NULL, 0, &st);
    CHECK(st == TROWEL_OK);
    REQUIRE(im.rgba != NULL);
    want = picture_new(320, 200, 0x000000ffu); /* colour 15 is black here */
    paint(&want, 0, 0, 0x00ff00ffu);
    CHECK_IMAGE(im, want);
    for (unsigned i = 0; i < 16; i++)
        colours[i] = i == 1 ? 0x00ff00ffu : 0x000000ffu;
    CHECK_PALETTE(im, colours, 16);
    free(im.rgba);
    close_run(&r);

    /* type 8: 256 RGB colours, chunky pixels */
    b.n = 0;
    put16(&b, 8);
    zeros(&b, 768);
    b.data[2 + 15] = 1, b.data[2 + 16] = 2, b.data[2 + 17] = 3; /* colour 5 */
    pix = b.n;
    zeros(&b, 64000);
    b.data[pix + 10] = 5;
    CHECK_STR(detected(&b, "BG1.PI1"), "cine-bg");
    r = open_buf(&b, "BG1.PI1", NULL);
    REQUIRE(r.a != NULL);
    im = convert_png(&r, NULL, 0, &st);
    CHECK(st == TROWEL_OK);
    REQUIRE(im.rgba != NULL);
    want = picture_new(320, 200, 0x000000ffu);
    paint(&want, 10, 0, 0x010203ffu);
    CHECK_IMAGE(im, want);
    for (unsigned i = 0; i < 256; i++)
        colours[i] = i == 5 ? 0x010203ffu : 0x000000ffu;
    CHECK_PALETTE(im, colours, 256);
    free(im.rgba);
    close_run(&r);
    /* truncated: forced, one byte short */
    b.n--;
    r = open_buf(&b, "BG1.PI1", "cine-bg");
    CHECK(r.open_status == TROWEL_ERR_TRUNCATED);
    close_run(&r);
    CHECK_STR(detected(&b, "BG1.PI1"), "none");
}

/* ---------------------------------------------------------------- samples */

static void test_sample_converts_to_exact_wav(void)
{
    static buf b;
    b.n = 0;
    put8(&b, 0x00);
    put8(&b, 0x7f);
    put8(&b, 0x80);
    put8(&b, 0xff);
    CHECK_STR(detected(&b, "BOOM.AMI"), "cine-sample");
    CHECK_STR(detected(&b, "boom.spl"), "cine-sample");
    CHECK_STR(detected(&b, "BOOM.RAW"), "none");
    run r = open_buf(&b, "BOOM.AMI", NULL);
    REQUIRE(r.a != NULL);
    uint8_t *out;
    size_t n;
    const char *opts[] = {"rate=22050"};
    CHECK(convert(&r, "wav", opts, 1, &out, &n) == TROWEL_OK);
    REQUIRE(out != NULL);
    CHECK_EQ_U64(n, 48);
    CHECK_EQ_U64(out[24] | out[25] << 8, 22050);
    CHECK_EQ_U64(out[40], 4);
    const uint8_t want[4] = {0x80, 0xff, 0x00, 0x7f};
    CHECK(memcmp(out + 44, want, 4) == 0);
    free(out);
    CHECK(convert(&r, "wav", NULL, 0, &out, &n) == TROWEL_OK);
    REQUIRE(out != NULL);
    CHECK_EQ_U64(out[24] | out[25] << 8, 8287);
    free(out);
    const char *bad[] = {"rate=0"}, *bad2[] = {"rate=fast"}, *bad3[] = {"speed=2"};
    CHECK(convert(&r, "wav", bad, 1, &out, &n) == TROWEL_ERR_USAGE);
    CHECK(convert(&r, "wav", bad2, 1, &out, &n) == TROWEL_ERR_USAGE);
    CHECK(convert(&r, "wav", bad3, 1, &out, &n) == TROWEL_ERR_USAGE);
    close_run(&r);
    /* an SZDD file named .AMI is still SZDD's */
    static const uint8_t szdd[] = {'S', 'Z', 'D', 'D', 0x88, 0xf0, 0x27, 0x33, 'A', 0, 0, 0, 0, 0};
    b.n = 0;
    memcpy(b.data, szdd, sizeof szdd);
    b.n = sizeof szdd;
    CHECK_STR(detected(&b, "BOOM.AMI"), "szdd");
}


/* -------------------------------------------------------------- savegames */

static void set16(buf *b, size_t at, unsigned v)
{
    b->data[at] = (uint8_t)(v >> 8);
    b->data[at + 1] = (uint8_t)v;
}

static void set_text(buf *b, size_t at, const char *t)
{
    memcpy(b->data + at, t, strlen(t));
}

/* An Operation Stealth PC save at the seed's offsets, with 10 bytes of
 * (empty) lists after 0x4D46. */
static void os_save_fixture(buf *b)
{
    memset(b->data, 0, 0x4D46 + 10);
    b->n = 0x4D46 + 10;
    set16(b, 0x0000, 2);
    set_text(b, 0x0002, "PART01");
    set_text(b, 0x000F, "AUTO00.PRC");
    set_text(b, 0x0036 + 13, "SECOND.PI1"); /* background 1 */
    set_text(b, 0x009E, "CT01.PI1");
    set16(b, 0x00AB, 255);
    set16(b, 0x00AD, 32);
    set16(b, 0x00AF, 10);            /* object 0 x */
    set16(b, 0x00AF + 2, 0xfffb);    /* y = -5 */
    set_text(b, 0x00AF + 10, "DOOR");
    b->data[0x208F + 5] = 0x3f;      /* palette_temp byte 5 */
    set16(b, 0x268F + 6, 7);         /* global var 3 */
    set_text(b, 0x2925, "MUSIC.MUS");
    set16(b, 0x2958, 1);             /* system menu disabled */
    set16(b, 0x295A, 255);
    set16(b, 0x295C, 36);
    b->data[0x295E + 8] = 0x78;      /* anim 0 data pointer, little-endian */
    b->data[0x295E + 11] = 0x12;
    set_text(b, 0x295E + 16, "ANIM.SET");
    set16(b, 0x4D3A + 10, 99);       /* screen parameter 5 */
    b->data[0x4D46 + 1] = 0;         /* the lists: five zero counts */
}

static json_object *savejson(run *r)
{
    uint8_t *out;
    size_t n;
    if (convert(r, "savejson", NULL, 0, &out, &n) != TROWEL_OK || !out)
        return NULL;
    char *text = calloc(1, n + 1);
    memcpy(text, out, n);
    json_object *root = json_tokener_parse(text);
    free(text);
    free(out);
    return root;
}

static int64_t jint(json_object *o, const char *path)
{
    /* "a.b.3.c": keys and array indices */
    char copy[128];
    snprintf(copy, sizeof copy, "%s", path);
    for (char *tok = strtok(copy, "."); tok && o; tok = strtok(NULL, "."))
        if (json_object_is_type(o, json_type_array))
            o = json_object_array_get_idx(o, (size_t)atoi(tok));
        else if (!json_object_object_get_ex(o, tok, &o))
            o = NULL;
    return o ? json_object_get_int64(o) : INT64_MIN;
}

static const char *jstr(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "(missing)";
}

/* create -t cine-save from the JSON gives back the original bytes. */
static void check_round_trip(json_object *root, const buf *orig)
{
    const char *path = temp_path("save.json");
    const char *text = json_object_to_json_string(root);
    write_file(path, text, strlen(text));
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_source src = {"save.json", path};
    trowel_create_params p = {.sources = &src, .source_count = 1};
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    CHECK(trowel_create(ctx, trowel_format_find("cine-save"), &p, s) == TROWEL_OK);
    size_t n;
    const uint8_t *d = trowel_sink_data(s, &n);
    CHECK_EQ_U64(n, orig->n);
    CHECK(n == orig->n && memcmp(d, orig->data, n) == 0);
    trowel_sink_discard(s);
    trowel_ctx_free(ctx);
    unlink(path);
}

static void test_save_os_pc_fields_at_seed_offsets_and_round_trip(void)
{
    static buf b;
    os_save_fixture(&b);
    CHECK_STR(detected(&b, "OS.SAV"), "cine-save");
    run r = open_buf(&b, "OS.SAV", NULL);
    REQUIRE(r.a != NULL);
    const trowel_props *info = trowel_archive_info(r.a);
    CHECK_STR(trowel_props_find(info, "layout")->s, "os-pc");
    CHECK_STR(trowel_props_find(info, "part_name")->s, "PART01");
    CHECK_EQ_U64(trowel_props_find(info, "fixed_bytes")->u, 0x4D46);
    CHECK_EQ_U64(trowel_props_find(info, "rest_bytes")->u, 10);
    json_object *root = savejson(&r);
    REQUIRE(root != NULL);
    CHECK_EQ_U64(jint(root, "disk"), 2);
    CHECK_STR(jstr(root, "procedure_name"), "AUTO00.PRC");
    CHECK_EQ_U64(jint(root, "objects.0.x"), 10);
    CHECK(jint(root, "objects.0.y") == -5);
    CHECK_EQ_U64(jint(root, "global_vars.3"), 7);
    CHECK_EQ_U64(jint(root, "system_menu_disabled"), 1);
    CHECK_EQ_U64(jint(root, "anims.0.data_ptr"), 0x12000078);
    CHECK_EQ_U64(jint(root, "screen_params.5"), 99);
    CHECK_STR(jstr(root, "music_name"), "MUSIC.MUS");
    json_object *bgs, *anims;
    REQUIRE(json_object_object_get_ex(root, "background_names", &bgs));
    CHECK_STR(jstr(json_object_array_get_idx(bgs, 1), "name"), "SECOND.PI1");
    REQUIRE(json_object_object_get_ex(root, "anims", &anims));
    CHECK_STR(jstr(json_object_array_get_idx(anims, 0), "name"), "ANIM.SET");
    char want_pal[1537];
    memset(want_pal, '0', 1536);
    want_pal[1536] = '\0';
    want_pal[10] = '3', want_pal[11] = 'f'; /* byte 5 */
    CHECK_STR(jstr(root, "palette_temp"), want_pal);
    check_round_trip(root, &b);
    /* a name with bytes after its NUL keeps them, as hex */
    json_object_put(root);
    b.data[0x0002 + 10] = 0x55;
    close_run(&r);
    r = open_buf(&b, "OS.SAV", NULL);
    REQUIRE(r.a != NULL);
    root = savejson(&r);
    REQUIRE(root != NULL);
    json_object *part, *hex;
    REQUIRE(json_object_object_get_ex(root, "part_name", &part));
    CHECK(json_object_object_get_ex(part, "hex", &hex));
    check_round_trip(root, &b);
    json_object_put(root);
    close_run(&r);
}

/* A Future Wars save: 30- or 23-byte animation entries, plus 4 list bytes;
 * with a ScummVM header when id is given. */
static void fw_save_fixture(buf *b, unsigned entry, const char *id)
{
    size_t base = id ? 12 : 0;
    size_t size = base + 0x2315 + 255u * entry + 12 + 4;
    memset(b->data, 0, size);
    b->n = size;
    if (id) {
        memcpy(b->data, id, 4);
        b->data[7] = 4; /* version 4 */
    }
    set16(b, base + 0x0000, 1);
    set_text(b, base + 0x0002, "PART01");
    set_text(b, base + 0x0045, "BG01.PI1");
    set16(b, base + 0x005F, 255);
    set16(b, base + 0x0061, 32);
    set16(b, base + 0x2043, 0x777); /* palette colour 0 */
    set16(b, base + 0x230F, 5);      /* message_bg */
    set_text(b, base + 0x2315 + (entry == 30 ? 20 : 12), "ROBOT.SET");
    if (entry == 23)
        b->data[base + 0x2315 + 22] = 1;
    set16(b, base + 0x2315 + 255u * entry + 2, 42); /* screen parameter 1 */
}

static void test_save_fw_layouts_and_scummvm_headers(void)
{
    static buf b;
    const unsigned entries[2] = {30, 23};
    for (int k = 0; k < 2; k++) {
        fw_save_fixture(&b, entries[k], NULL);
        run r = open_buf(&b, "FW.SAV", NULL);
        REQUIRE(r.a != NULL);
        CHECK_STR(trowel_format_id(trowel_archive_format(r.a)), "cine-save");
        CHECK_STR(trowel_props_find(trowel_archive_info(r.a), "layout")->s, "fw-pc");
        CHECK_EQ_U64(trowel_props_find(trowel_archive_info(r.a), "fixed_bytes")->u,
                     0x2315 + 255u * entries[k] + 12);
        json_object *root = savejson(&r);
        REQUIRE(root != NULL);
        CHECK_STR(jstr(root, "background_name"), "BG01.PI1");
        CHECK_EQ_U64(jint(root, "palette.0"), 0x777);
        CHECK_EQ_U64(jint(root, "message_bg"), 5);
        CHECK_EQ_U64(jint(root, "screen_params.1"), 42);
        json_object *anims;
        REQUIRE(json_object_object_get_ex(root, "anims", &anims));
        CHECK_STR(jstr(json_object_array_get_idx(anims, 0), "name"), "ROBOT.SET");
        check_round_trip(root, &b);
        json_object_put(root);
        close_run(&r);
    }
    fw_save_fixture(&b, 30, "C1FW");
    run r = open_buf(&b, "scummvm.s01", NULL);
    REQUIRE(r.a != NULL);
    CHECK_STR(trowel_props_find(trowel_archive_info(r.a), "layout")->s, "scummvm-fw");
    CHECK_EQ_U64(trowel_props_find(trowel_archive_info(r.a), "save_version")->u, 4);
    json_object *root = savejson(&r);
    REQUIRE(root != NULL);
    CHECK_STR(jstr(root, "id"), "C1FW");
    CHECK_STR(jstr(root, "part_name"), "PART01");
    check_round_trip(root, &b);
    json_object_put(root);
    close_run(&r);
}

static void test_save_hostile_inputs_and_json(void)
{
    static buf b;
    os_save_fixture(&b);
    b.n = 0x4D00; /* cut inside the animation table */
    CHECK_STR(detected(&b, "OS.SAV"), "none");
    run r = open_buf(&b, "OS.SAV", "cine-save");
    CHECK(r.open_status == TROWEL_ERR_UNSUPPORTED);
    close_run(&r);
    os_save_fixture(&b);
    set16(&b, 0x00AD, 33); /* an object size no game uses */
    CHECK_STR(detected(&b, "OS.SAV"), "none");
    os_save_fixture(&b);
    set16(&b, 0x00AB, 254); /* not detected without 255 objects, yet readable */
    CHECK_STR(detected(&b, "OS.SAV"), "none");
    r = open_buf(&b, "OS.SAV", "cine-save");
    CHECK(r.open_status == TROWEL_OK);
    close_run(&r);
    /* bad JSON sources for create */
    trowel_ctx *ctx = trowel_ctx_new();
    const char *path = temp_path("bad.json");
    const char *cases[] = {"not json", "[1,2]", "{\"layout\": \"amiga\"}",
                           "{\"layout\": \"fw-pc\", \"disk\": 70000}",
                           "{\"layout\": \"fw-pc\", \"disk\": 1, \"part_name\": \"MUCH.TOO.LONG.NAME\"}"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file(path, cases[i], strlen(cases[i]));
        trowel_source src = {"bad.json", path};
        trowel_create_params p = {.sources = &src, .source_count = 1};
        trowel_sink *s;
        REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
        CHECK(trowel_create(ctx, trowel_format_find("cine-save"), &p, s) == TROWEL_ERR_CORRUPT);
        trowel_sink_discard(s);
    }
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "part_name") != NULL);
    unlink(path);
    trowel_ctx_free(ctx);
}


/* ---------------------------------------------------------------- scripts */

static void test_scripts_prc_and_rel_tables(void)
{
    static buf b;
    b.n = 0;
    put16(&b, 2);
    put16(&b, 3);
    put16(&b, 1);
    put8(&b, 0xaa), put8(&b, 0xbb), put8(&b, 0xcc), put8(&b, 0xdd);
    CHECK_STR(detected(&b, "AUTO00.PRC"), "cine-script");
    run r = open_buf(&b, "AUTO00.PRC", NULL);
    REQUIRE(r.a != NULL);
    CHECK_STR(trowel_props_find(trowel_archive_info(r.a), "kind")->s, "prc");
    CHECK_EQ_U64(trowel_archive_entry_count(r.a), 2);
    CHECK_EQ_U64(trowel_archive_entry(r.a, 1)->offset, 9);
    CHECK_EQ_U64(trowel_archive_entry(r.a, 1)->size, 1);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(r.ctx, &s) == TROWEL_OK);
    CHECK(trowel_archive_read_entry(r.a, 0, s) == TROWEL_OK);
    size_t n;
    const uint8_t *d = trowel_sink_data(s, &n);
    CHECK(n == 3 && memcmp(d, "\xaa\xbb\xcc", 3) == 0);
    trowel_sink_discard(s);
    uint8_t *out;
    CHECK(convert(&r, "json", NULL, 0, &out, &n) == TROWEL_OK);
    REQUIRE(out != NULL);
    char *text = calloc(1, n + 1);
    memcpy(text, out, n);
    json_object *root = json_tokener_parse(text);
    REQUIRE(root != NULL);
    CHECK_EQ_U64(jint(root, "scripts"), 2);
    CHECK_EQ_U64(jint(root, "entries.0.size"), 3);
    CHECK_EQ_U64(jint(root, "entries.1.offset"), 9);
    json_object_put(root);
    free(text);
    free(out);
    close_run(&r);

    b.n = 0;
    put16(&b, 1);
    put16(&b, 2), put16(&b, 7), put16(&b, 8), put16(&b, 9);
    put16(&b, 0x1234);
    CHECK_STR(detected(&b, "MASKG.REL"), "cine-script");
    CHECK_STR(detected(&b, "noname"), "cine-script");
    r = open_buf(&b, "noname", NULL);
    REQUIRE(r.a != NULL);
    CHECK_STR(trowel_props_find(trowel_archive_info(r.a), "kind")->s, "rel");
    const trowel_entry *e = trowel_archive_entry(r.a, 0);
    REQUIRE(e != NULL);
    CHECK_EQ_U64(e->offset, 10);
    CHECK_EQ_U64(trowel_props_find(e->extra, "param1")->u, 7);
    CHECK_EQ_U64(trowel_props_find(e->extra, "index")->u, 8);
    CHECK_EQ_U64(trowel_props_find(e->extra, "param2")->u, 9);
    close_run(&r);

    /* sizes past the end */
    b.n = 0;
    put16(&b, 1);
    put16(&b, 500);
    put8(&b, 1);
    CHECK_STR(detected(&b, "AUTO00.PRC"), "none");
    r = open_buf(&b, "AUTO00.PRC", "cine-script");
    CHECK(r.open_status == TROWEL_ERR_TRUNCATED);
    close_run(&r);
    b.n = 0;
    put16(&b, 40000); /* a table past the end */
    r = open_buf(&b, "AUTO00.PRC", "cine-script");
    CHECK(r.open_status == TROWEL_ERR_TRUNCATED);
    close_run(&r);
}

static void test_random_data_is_not_claimed(void)
{
    static buf b;
    uint32_t x = 12345;
    const size_t sizes[] = {4, 22, 100, 1000, 32034, 32128, 64770};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        b.n = 0;
        for (size_t i = 0; i < sizes[k]; i++) {
            x = x * 1103515245u + 12345u;
            put8(&b, x >> 24);
        }
        b.data[0] = 0x41; /* not type 0 or 8 */
        CHECK_STR(detected(&b, "random.bin"), "none");
    }
}

static void cleanup(void)
{
    if (temp_dir[0]) {
        unlink(temp_path("test.pal"));
        rmdir(temp_dir);
    }
}

static void test_zz_cleanup(void)
{
    cleanup();
}

TEST_MAIN(TEST(test_png_indexed_writes_palette_and_transparency_exactly),
          TEST(test_png_rgba_round_trips_and_refuses_bad_sizes),
          TEST(test_png_writer_passes_on_sink_failure_without_leaking),
          TEST(test_sheet_plan_lays_out_cells_and_refuses_giant_sheets),
          TEST(test_wav_header_and_signed_samples_are_exact),
          TEST(test_font_detects_known_glyph_counts_only),
          TEST(test_font_info_entries_and_glyph_pixels),
          TEST(test_font_glyphmap_lists_positions_and_ink),
          TEST(test_font_hostile_counts_and_options),
          TEST(test_ani_frames_decode_with_palette_and_transparency),
          TEST(test_msk_bits_become_opaque_white),
          TEST(test_anim_hostile_headers),
          TEST(test_set_decodes_every_frame_type),
          TEST(test_set_hostile_offsets),
          TEST(test_bg_pi1_neo_and_type8),
          TEST(test_sample_converts_to_exact_wav),
          TEST(test_save_os_pc_fields_at_seed_offsets_and_round_trip),
          TEST(test_save_fw_layouts_and_scummvm_headers),
          TEST(test_save_hostile_inputs_and_json),
          TEST(test_scripts_prc_and_rel_tables),
          TEST(test_random_data_is_not_claimed),
          TEST(test_zz_cleanup))
