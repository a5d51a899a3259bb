/*
 * Every create source served from memory: a program that embeds the
 * library hands trowel_create paths that name no file at all ("mem/...")
 * and serves their bytes through the context's open hook, as it serves
 * siblings and option files. For each format whose create reads its
 * sources through src/core/source.c, this builds an archive that way and
 * reads it back: the entries hold the served bytes, -O base= comes from
 * memory too, and a path the hook does not serve is refused (so nothing
 * was read from disk behind the hook's back).
 */
#include "export/image.h"
#include "files.h"
#include "memory_archive.h"
#include "test.h"
#include "trowel/trowel.h"

#include <json-c/json.h>
#include <string.h>

/* ---- the embedding program's shelf of files */

typedef struct shelf_file {
    const char *name;
    const uint8_t *data;
    size_t size;
} shelf_file;

typedef struct shelf {
    shelf_file files[8];
    size_t n;
    int served, refused;
} shelf;

static void shelve(shelf *sh, const char *name, const void *data, size_t size)
{
    REQUIRE(sh->n < sizeof sh->files / sizeof sh->files[0]);
    sh->files[sh->n++] = (shelf_file){name, data, size};
}

static trowel_status serve_shelf(void *user, trowel_ctx *ctx, const char *base, const char *name,
                                 trowel_input **out)
{
    (void)base;
    shelf *sh = user;
    for (size_t i = 0; i < sh->n; i++)
        if (strcmp(sh->files[i].name, name) == 0) {
            sh->served++;
            return trowel_input_open_memory(ctx, sh->files[i].data, sh->files[i].size, name, out);
        }
    sh->refused++;
    return TROWEL_ERR_IO;
}

/* create -t fmt from the sources into *out (malloc'd copy); create's status. */
static trowel_status build(trowel_ctx *ctx, const char *fmt, const trowel_source *src, size_t n,
                           const char *const *opts, size_t nopts, bytes *out)
{
    out->data = NULL;
    out->size = 0;
    trowel_sink *s;
    trowel_status st = trowel_sink_open_memory(ctx, &s);
    if (st != TROWEL_OK)
        return st;
    trowel_create_params p = {.sources = src, .source_count = n, .options = opts,
                              .option_count = nopts};
    st = trowel_create(ctx, trowel_format_find(fmt), &p, s);
    if (st == TROWEL_OK)
        *out = sink_copy(s);
    trowel_sink_discard(s);
    return st;
}

static const char text[] = "trowel builds archives from memory: the same line, the same line, "
                           "the same line again, so that the packers find something to pack.\n";
static const uint8_t binary[] = {0, 1, 2, 3, 0xff, 0xfe, 0, 0, 0, 0, 0, 0, 0x80, 0x7f, 9};

static trowel_ctx *ctx_with(shelf *sh)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (ctx)
        trowel_ctx_set_open_hook(ctx, serve_shelf, sh);
    return ctx;
}

/* ---- single-file formats: szdd, spz */

static void check_one_file_format(const char *fmt)
{
    shelf sh = {0};
    shelve(&sh, "mem/readme.txt", text, sizeof text - 1);
    trowel_ctx *ctx = ctx_with(&sh);
    REQUIRE(ctx);
    trowel_source src = {"readme.txt", "mem/readme.txt"};
    bytes b;
    REQUIRE(build(ctx, fmt, &src, 1, NULL, 0, &b) == TROWEL_OK);
    CHECK_EQ_U64(sh.served, 1);
    CHECK(b.size < sizeof text - 1); /* it packed */
    opened o;
    REQUIRE(open_bytes(ctx, &b, "readme.tx_", fmt, &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 1);
    REQUIRE(trowel_archive_entry_count(o.a) == 1);
    CHECK(entry_holds(o.a, trowel_archive_entry(o.a, 0)->name, text, sizeof text - 1));
    close_opened(&o);
    free(b.data);
    trowel_ctx_free(ctx);
}

static void test_szdd_from_memory(void)
{
    check_one_file_format("szdd");
}

static void test_spz_from_memory(void)
{
    check_one_file_format("spz");
}

/* ---- multi-entry formats: groff, cine-part, vpp */

static void check_two_entry_format(const char *fmt, const char *archive_name)
{
    shelf sh = {0};
    shelve(&sh, "mem/TEXT.TXT", text, sizeof text - 1);
    shelve(&sh, "mem/DATA.BIN", binary, sizeof binary);
    trowel_ctx *ctx = ctx_with(&sh);
    REQUIRE(ctx);
    trowel_source src[2] = {{"TEXT.TXT", "mem/TEXT.TXT"}, {"DATA.BIN", "mem/DATA.BIN"}};
    bytes b;
    REQUIRE(build(ctx, fmt, src, 2, NULL, 0, &b) == TROWEL_OK);
    CHECK_EQ_U64(sh.refused, 0);
    opened o;
    REQUIRE(open_bytes(ctx, &b, archive_name, fmt, &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 2);
    CHECK(entry_holds(o.a, "TEXT.TXT", text, sizeof text - 1));
    CHECK(entry_holds(o.a, "DATA.BIN", binary, sizeof binary));
    close_opened(&o);
    free(b.data);
    trowel_ctx_free(ctx);
}

static void test_groff_from_memory(void)
{
    check_two_entry_format("groff", "level.grf");
}

static void test_cine_part_from_memory(void)
{
    check_two_entry_format("cine-part", "PROCS00");
}

static void test_vpp_from_memory(void)
{
    check_two_entry_format("vpp", "new.vpp");
}

/* -O base= is served too: the base's kept entry comes along, the replaced
 * one holds the new bytes. */
static void test_vpp_base_from_memory(void)
{
    shelf sh = {0};
    shelve(&sh, "mem/TEXT.TXT", text, sizeof text - 1);
    shelve(&sh, "mem/DATA.BIN", binary, sizeof binary);
    trowel_ctx *ctx = ctx_with(&sh);
    REQUIRE(ctx);
    trowel_source src[2] = {{"TEXT.TXT", "mem/TEXT.TXT"}, {"DATA.BIN", "mem/DATA.BIN"}};
    bytes base;
    REQUIRE(build(ctx, "vpp", src, 2, NULL, 0, &base) == TROWEL_OK);
    static const char changed[] = "new text, from memory as well\n";
    shelve(&sh, "mem/base.vpp", base.data, base.size);
    shelve(&sh, "mem/changed.txt", changed, sizeof changed - 1);
    trowel_source replace = {"TEXT.TXT", "mem/changed.txt"};
    const char *opts[] = {"base=mem/base.vpp"};
    bytes b;
    REQUIRE(build(ctx, "vpp", &replace, 1, opts, 1, &b) == TROWEL_OK);
    CHECK_EQ_U64(sh.refused, 0);
    opened o;
    REQUIRE(open_bytes(ctx, &b, "new.vpp", "vpp", &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 2);
    CHECK(entry_holds(o.a, "TEXT.TXT", changed, sizeof changed - 1));
    CHECK(entry_holds(o.a, "DATA.BIN", binary, sizeof binary));
    close_opened(&o);
    free(b.data);
    free(base.data);
    trowel_ctx_free(ctx);
}

/* ---- cine-volcnf: its sources are part files, themselves built from memory;
 * reading it back, its volume is a sibling served by the same hook. */
static void test_cine_volcnf_from_memory(void)
{
    shelf sh = {0};
    shelve(&sh, "mem/HELLO.TXT", text, sizeof text - 1);
    trowel_ctx *ctx = ctx_with(&sh);
    REQUIRE(ctx);
    trowel_source file = {"HELLO.TXT", "mem/HELLO.TXT"};
    bytes part;
    REQUIRE(build(ctx, "cine-part", &file, 1, NULL, 0, &part) == TROWEL_OK);
    shelve(&sh, "mem/PROCS00", part.data, part.size);
    shelve(&sh, "PROCS00", part.data, part.size); /* the sibling, when read back */
    trowel_source vol = {"PROCS00", "mem/PROCS00"};
    bytes cnf;
    REQUIRE(build(ctx, "cine-volcnf", &vol, 1, NULL, 0, &cnf) == TROWEL_OK);
    CHECK_EQ_U64(sh.refused, 0);
    opened o;
    REQUIRE(open_bytes(ctx, &cnf, "mem/VOL.CNF", "cine-volcnf", &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 1);
    CHECK(entry_holds(o.a, "PROCS00/HELLO.TXT", text, sizeof text - 1));
    close_opened(&o);
    free(cnf.data);
    free(part.data);
    trowel_ctx_free(ctx);
}

/* ---- cine-save: a Future Wars save (30-byte animation entries, the
 * seed's offsets) to its JSON and, served from memory, back to its bytes. */
static void test_cine_save_from_memory(void)
{
    static uint8_t save[FW_SAVE_SIZE];
    fw_save(save);
    shelf sh = {0};
    trowel_ctx *ctx = ctx_with(&sh);
    REQUIRE(ctx);
    bytes orig = {save, sizeof save};
    bytes json = converted(ctx, &orig, "FW.1", "cine-save", "savejson");
    REQUIRE(json.data && json.size > 0);
    shelve(&sh, "mem/save.json", json.data, json.size);
    trowel_source src = {"save.json", "mem/save.json"};
    bytes b;
    CHECK(build(ctx, "cine-save", &src, 1, NULL, 0, &b) == TROWEL_OK);
    CHECK_EQ_U64(sh.served, 1);
    CHECK_EQ_U64(b.size, sizeof save);
    CHECK(b.data && b.size == sizeof save && memcmp(b.data, save, b.size) == 0);
    free(b.data);
    free(json.data);
    trowel_ctx_free(ctx);
}

/* ---- tres-wtd: a raw height map to a WTD, its PNG (convert), and the PNG,
 * served from memory, back to the same WTD. */
static void test_tres_wtd_from_memory(void)
{
    static const uint8_t raw[8] = {10, 0, 14, 0, 7, 0, 20, 0}; /* 2x2, 16-bit LE */
    shelf sh = {0};
    shelve(&sh, "mem/map.raw", raw, sizeof raw);
    trowel_ctx *ctx = ctx_with(&sh);
    REQUIRE(ctx);
    trowel_source src = {"map", "mem/map.raw"};
    const char *opts[] = {"width=2", "height=2"};
    bytes wtd;
    REQUIRE(build(ctx, "tres-wtd", &src, 1, opts, 2, &wtd) == TROWEL_OK);
    bytes png = converted(ctx, &wtd, "map.wtd", "tres-wtd", "png");
    REQUIRE(png.data && png.size > 8);
    shelve(&sh, "mem/map.png", png.data, png.size);
    trowel_source again = {"map", "mem/map.png"};
    bytes wtd2;
    CHECK(build(ctx, "tres-wtd", &again, 1, NULL, 0, &wtd2) == TROWEL_OK);
    CHECK_EQ_U64(wtd2.size, wtd.size);
    CHECK(wtd2.data && wtd2.size == wtd.size && memcmp(wtd2.data, wtd.data, wtd.size) == 0);
    CHECK_EQ_U64(sh.refused, 0);
    free(wtd2.data);
    free(png.data);
    free(wtd.data);
    trowel_ctx_free(ctx);
}

/* ---- vsif: a text VCD compiled into a scenes.image, read back as text. */
static void test_vsif_from_memory(void)
{
    static const char vcd[] = "// Choreo version 1\r\nactor \"bad_cop\"\r\n{\r\n  channel \"audio\"\r\n"
                              "  {\r\n    event speak \"hello\"\r\n    {\r\n      time 0.5 2.25\r\n"
                              "      param \"bad_cop.hello\"\r\n    }\r\n  }\r\n}\r\n";
    shelf sh = {0};
    shelve(&sh, "mem/brand_new.vcd", vcd, sizeof vcd - 1);
    trowel_ctx *ctx = ctx_with(&sh);
    REQUIRE(ctx);
    trowel_source src = {"scenes/brand_new.vcd", "mem/brand_new.vcd"};
    bytes b;
    REQUIRE(build(ctx, "vsif", &src, 1, NULL, 0, &b) == TROWEL_OK);
    CHECK_EQ_U64(sh.served, 1);
    opened o;
    REQUIRE(open_bytes(ctx, &b, "scenes.image", "vsif", &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 1);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    CHECK(trowel_archive_read_entry(o.a, 0, s) == TROWEL_OK);
    size_t n;
    const uint8_t *d = trowel_sink_data(s, &n);
    char *t = calloc(1, n + 1);
    if (t && d)
        memcpy(t, d, n);
    CHECK(t && strstr(t, "\"bad_cop.hello\"") != NULL);
    CHECK(t && strstr(t, "event speak \"hello\"") != NULL);
    free(t);
    trowel_sink_discard(s);
    close_opened(&o);
    free(b.data);
    trowel_ctx_free(ctx);
}

/* ---- convert's -O palette=FILE (src/export/image.c) is served as well:
 * a Cinematique font (78 glyphs, 4 planes) to PNG in the served colours. */
static void test_palette_file_from_memory(void)
{
    static uint8_t font[4 + 78 * 64];
    memset(font, 0, sizeof font);
    put_be16_at(font, 0, 8);
    put_be16_at(font, 2, 78 * 8);
    font[4 + 64 + 56 + 2] = 0xff; /* glyph 1 row 7 plane 1: colour 2 */
    static uint8_t pal[768];
    memset(pal, 0, sizeof pal);
    pal[3] = 0xff;      /* colour 1: red */
    pal[6 + 1] = 0xff;  /* colour 2: green */
    pal[9 + 2] = 0xff;  /* colour 3: blue */
    shelf sh = {0};
    shelve(&sh, "mem/game.pal", pal, sizeof pal);
    trowel_ctx *ctx = ctx_with(&sh);
    REQUIRE(ctx);
    bytes b = {font, sizeof font};
    opened o;
    REQUIRE(open_bytes(ctx, &b, "TEXTE.DAT", "cine-font", &o) == TROWEL_OK);
    trowel_sink *png;
    REQUIRE(trowel_sink_open_memory(ctx, &png) == TROWEL_OK);
    const char *opts[] = {"palette=mem/game.pal", "frame=1"};
    CHECK(trowel_convert(ctx, o.a, "png", opts, 2, png) == TROWEL_OK);
    CHECK_EQ_U64(sh.served, 1);
    size_t n;
    const uint8_t *d = trowel_sink_data(png, &n);
    static const uint8_t plte[] = {'P', 'L', 'T', 'E', 0, 0, 0, 0xff, 0, 0, 0, 0xff, 0, 0, 0, 0xff};
    bool found = false;
    for (size_t i = 0; d && i + sizeof plte <= n && !found; i++)
        found = memcmp(d + i, plte, sizeof plte) == 0;
    CHECK(found);
    trowel_sink_discard(png);
    /* a palette the hook does not serve is refused, naming it */
    REQUIRE(trowel_sink_open_memory(ctx, &png) == TROWEL_OK);
    const char *missing[] = {"palette=mem/none.pal", "frame=1"};
    CHECK(trowel_convert(ctx, o.a, "png", missing, 2, png) != TROWEL_OK);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "palette=mem/none.pal") != NULL);
    CHECK_EQ_U64(sh.refused, 1);
    trowel_sink_discard(png);
    close_opened(&o);
    /* the shared loader of 768-byte palettes (image.c's default) alike */
    trowel_palette p;
    CHECK(trowel_palette_load_rgb768(ctx, "mem/game.pal", &p) == TROWEL_OK);
    CHECK_EQ_U64(sh.served, 2);
    CHECK(p.rgba[1][0] == 0xff && p.rgba[1][1] == 0 && p.rgba[2][1] == 0xff &&
          p.rgba[3][2] == 0xff && p.rgba[3][0] == 0);
    CHECK(trowel_palette_load_rgb768(ctx, "mem/none.pal", &p) != TROWEL_OK);
    CHECK_EQ_U64(sh.refused, 2);
    trowel_ctx_free(ctx);
}

/* ---- a path the hook does not serve is not read from disk behind it */
static void test_unserved_source_is_refused(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir);
    char path[512];
    snprintf(path, sizeof path, "%s/on_disk.vcd", dir);
    write_file(path, text, sizeof text - 1);
    static const char *const fmts[] = {"szdd", "spz", "groff", "cine-part", "vpp", "vsif"};
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        shelf sh = {0};
        trowel_ctx *ctx = ctx_with(&sh);
        REQUIRE(ctx);
        trowel_source src = {"on_disk.vcd", path};
        bytes b;
        trowel_status st = build(ctx, fmts[i], &src, 1, NULL, 0, &b);
        if (st == TROWEL_OK)
            fprintf(stderr, "  %s read a source the hook refused\n", fmts[i]);
        CHECK(st != TROWEL_OK);
        if (sh.refused < 1)
            fprintf(stderr, "  %s: %s\n", fmts[i], trowel_ctx_last_error(ctx)->message);
        CHECK(sh.refused >= 1);
        CHECK(strstr(trowel_ctx_last_error(ctx)->message, "on_disk.vcd") != NULL);
        free(b.data);
        trowel_ctx_free(ctx);
    }
    unlink(path);
    rmdir(dir);
}

TEST_MAIN(TEST(test_szdd_from_memory), TEST(test_spz_from_memory), TEST(test_groff_from_memory),
          TEST(test_cine_part_from_memory), TEST(test_vpp_from_memory),
          TEST(test_vpp_base_from_memory), TEST(test_cine_volcnf_from_memory),
          TEST(test_cine_save_from_memory), TEST(test_tres_wtd_from_memory),
          TEST(test_vsif_from_memory), TEST(test_palette_file_from_memory),
          TEST(test_unserved_source_is_refused))
