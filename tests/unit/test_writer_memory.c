/*
 * The public writer (trowel_writer_*) from memory only: for every format
 * that creates, entries handed over as bytes go into a memory sink with an
 * io hook that refuses every path, so a build that read a file (from disk
 * or anywhere else) would fail; the result is read back from memory and
 * compared, and it is the same file trowel_create makes from the same
 * bytes served as paths. Then the writer's own rules: a nested archive
 * built in memory and written into its parent, abort leaves nothing (no
 * memory, no descriptor), names are checked as create checks them, and
 * calls out of order are usage errors.
 */
#include "cost_sample.h"
#include "files.h"
#include "memory_archive.h"
#include "test.h"
#include "trowel/trowel.h"

#include <dirent.h>
#include <string.h>

/* ---- the hook during a writer's build: nothing is a file */

typedef struct asked {
    int open, list;
} asked;

static trowel_status refuse_open(void *user, trowel_ctx *ctx, const char *base, const char *name,
                                 trowel_input **out)
{
    (void)ctx, (void)base, (void)out;
    ((asked *)user)->open++;
    fprintf(stderr, "  the build asked for the file %s\n", name);
    return TROWEL_ERR_IO;
}

static trowel_status refuse_list(void *user, trowel_ctx *ctx, const char *base, const char *dir,
                                 trowel_list_each_fn each, void *each_user)
{
    (void)ctx, (void)base, (void)each, (void)each_user;
    ((asked *)user)->list++;
    fprintf(stderr, "  the build asked for the folder %s\n", dir);
    return TROWEL_ERR_IO;
}

static trowel_ctx *refusing_ctx(asked *a)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (ctx)
        trowel_ctx_set_io_hooks(ctx, &(trowel_io_hooks){refuse_open, refuse_list}, a);
    return ctx;
}

/* ---- building */

/* An entry to begin: its name and size, no props. */
#define ENTRY(name_, size_) (&(trowel_writer_entry){.name = (name_), .size = (size_)})

typedef struct mem_entry {
    const char *name;
    const void *data;
    size_t size;
} mem_entry;

/* Writes the entries through a writer of fmt into *out (malloc'd); each
 * entry's bytes go in two writes, the first announcing its size, the
 * second not. The writer's status. */
static trowel_status write_archive(trowel_ctx *ctx, const char *fmt, const mem_entry *e, size_t n,
                                   const char *const *opts, size_t nopts, const char *manifest,
                                   bytes *out)
{
    *out = (bytes){NULL, 0};
    trowel_sink *s;
    trowel_writer *w;
    trowel_status st = trowel_sink_open_memory(ctx, &s);
    if (st != TROWEL_OK)
        return st;
    st = trowel_writer_open(ctx, trowel_format_find(fmt), opts, nopts, manifest, s, &w);
    for (size_t i = 0; st == TROWEL_OK && i < n; i++) {
        uint64_t size = i % 2 ? TROWEL_SIZE_UNKNOWN : e[i].size;
        trowel_writer_entry we = {.name = e[i].name, .size = size};
        size_t half = e[i].size / 2;
        st = trowel_writer_begin_entry(w, &we);
        if (st == TROWEL_OK)
            st = trowel_writer_write(w, e[i].data, half);
        if (st == TROWEL_OK)
            st = trowel_writer_write(w, (const uint8_t *)e[i].data + half, e[i].size - half);
        if (st == TROWEL_OK)
            st = trowel_writer_end_entry(w);
    }
    if (st == TROWEL_OK)
        st = trowel_writer_finish(w);
    else if (w)
        trowel_writer_abort(w);
    if (st == TROWEL_OK)
        *out = sink_copy(s);
    else
        fprintf(stderr, "  %s writer: %s\n", fmt, trowel_ctx_last_error(ctx)->message);
    trowel_sink_discard(s);
    return st;
}

/* ---- what trowel_create makes of the same bytes, served as "mem/NAME" */

typedef struct shelf {
    const mem_entry *e;
    size_t n;
} shelf;

static trowel_status serve_shelf(void *user, trowel_ctx *ctx, const char *base, const char *name,
                                 trowel_input **out)
{
    const shelf *sh = user;
    for (size_t i = 0; !base && i < sh->n; i++)
        if (strncmp(name, "mem/", 4) == 0 && strcmp(name + 4, sh->e[i].name) == 0)
            return trowel_input_open_memory(ctx, sh->e[i].data, sh->e[i].size, name, out);
    return TROWEL_ERR_IO;
}

static bytes create_archive(const char *fmt, const mem_entry *e, size_t n,
                            const char *const *opts, size_t nopts, const char *manifest)
{
    bytes out = {NULL, 0};
    trowel_ctx *ctx = trowel_ctx_new();
    shelf sh = {e, n};
    trowel_ctx_set_open_hook(ctx, serve_shelf, &sh);
    trowel_source src[8];
    char paths[8][128];
    for (size_t i = 0; i < n && i < 8; i++) {
        snprintf(paths[i], sizeof paths[i], "mem/%s", e[i].name);
        src[i] = (trowel_source){e[i].name, paths[i]};
    }
    trowel_create_params p = {.sources = src, .source_count = n, .options = opts,
                              .option_count = nopts, .manifest_json = manifest};
    trowel_sink *s;
    if (trowel_sink_open_memory(ctx, &s) == TROWEL_OK) {
        if (trowel_create(ctx, trowel_format_find(fmt), &p, s) == TROWEL_OK)
            out = sink_copy(s);
        else
            fprintf(stderr, "  %s create: %s\n", fmt, trowel_ctx_last_error(ctx)->message);
        trowel_sink_discard(s);
    }
    trowel_ctx_free(ctx);
    return out;
}

static bool same_bytes(const bytes *a, const bytes *b)
{
    return a->data && b->data && a->size == b->size && memcmp(a->data, b->data, a->size) == 0;
}

static const char text[] = "trowel writes archives from memory: the same line, the same line, "
                           "the same line again, so that the packers find something to pack.\n";
static const uint8_t binary[] = {0, 1, 2, 3, 0xff, 0xfe, 0, 0, 0, 0, 0, 0, 0x80, 0x7f, 9};

/* ---- every format that creates */

/* The formats this file builds; test_every_creating_format_is_covered
 * fails when the registry gains one that is not here. */
static const char *const covered[] = {"szdd",      "spz",       "groff",    "cine-part",
                                      "vpp",       "cine-volcnf", "cine-save", "tres-wtd",
                                      "vsif",      "scumm-cost", "asm"};

static void test_every_creating_format_is_covered(void)
{
    size_t creating = 0;
    for (size_t i = 0; i < trowel_format_count(); i++) {
        const trowel_format *f = trowel_format_at(i);
        if (!(trowel_format_caps(f) & TROWEL_CAP_CREATE))
            continue;
        creating++;
        bool found = false;
        for (size_t k = 0; k < sizeof covered / sizeof covered[0]; k++)
            found = found || strcmp(covered[k], trowel_format_id(f)) == 0;
        if (!found)
            fprintf(stderr, "  %s creates but is not built here\n", trowel_format_id(f));
        CHECK(found);
    }
    CHECK_EQ_U64(creating, sizeof covered / sizeof covered[0]);
}

/* One entry in, one entry out (szdd, spz): the bytes, and create's file. */
static void check_one_entry_format(const char *fmt, const char *archive_name)
{
    asked a = {0};
    trowel_ctx *ctx = refusing_ctx(&a);
    REQUIRE(ctx);
    mem_entry e = {"readme.txt", text, sizeof text - 1};
    bytes b;
    REQUIRE(write_archive(ctx, fmt, &e, 1, NULL, 0, NULL, &b) == TROWEL_OK);
    CHECK(a.open == 0 && a.list == 0);
    CHECK(b.size < sizeof text - 1); /* it packed */
    bytes c = create_archive(fmt, &e, 1, NULL, 0, NULL);
    CHECK(same_bytes(&b, &c));
    opened o;
    REQUIRE(open_bytes(ctx, &b, archive_name, fmt, &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 1);
    CHECK(entry_at_holds(o.a, 0, text, sizeof text - 1));
    close_opened(&o);
    free(c.data);
    free(b.data);
    trowel_ctx_free(ctx);
}

static void test_szdd(void)
{
    check_one_entry_format("szdd", "readme.tx_");
}

static void test_spz(void)
{
    check_one_entry_format("spz", "readme.spz");
}

/* Two entries, names and bytes kept (groff, cine-part, vpp). */
static void check_two_entry_format(const char *fmt, const char *archive_name)
{
    asked a = {0};
    trowel_ctx *ctx = refusing_ctx(&a);
    REQUIRE(ctx);
    mem_entry e[2] = {{"TEXT.TXT", text, sizeof text - 1}, {"DATA.BIN", binary, sizeof binary}};
    bytes b;
    REQUIRE(write_archive(ctx, fmt, e, 2, NULL, 0, NULL, &b) == TROWEL_OK);
    CHECK(a.open == 0 && a.list == 0);
    bytes c = create_archive(fmt, e, 2, NULL, 0, NULL);
    CHECK(same_bytes(&b, &c));
    opened o;
    REQUIRE(open_bytes(ctx, &b, archive_name, fmt, &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 2);
    CHECK(entry_holds(o.a, "TEXT.TXT", text, sizeof text - 1));
    CHECK(entry_holds(o.a, "DATA.BIN", binary, sizeof binary));
    close_opened(&o);
    free(c.data);
    free(b.data);
    trowel_ctx_free(ctx);
}

static void test_groff(void)
{
    check_two_entry_format("groff", "level.grf");
}

static void test_cine_part(void)
{
    check_two_entry_format("cine-part", "PROCS00");
}

static void test_vpp(void)
{
    check_two_entry_format("vpp", "new.vpp");
}

/* cine-volcnf stores part files: one built by a writer in memory, written
 * into the VOL.CNF's writer as an input. Read back, the volume is the
 * sibling PROCS00, which the reading context serves. */
static trowel_status serve_part(void *user, trowel_ctx *ctx, const char *base, const char *name,
                                trowel_input **out)
{
    const bytes *part = user;
    if (base && strcmp(name, "PROCS00") == 0)
        return trowel_input_open_memory(ctx, part->data, part->size, name, out);
    return TROWEL_ERR_IO;
}

static void test_cine_volcnf(void)
{
    asked a = {0};
    trowel_ctx *ctx = refusing_ctx(&a);
    REQUIRE(ctx);
    mem_entry hello = {"HELLO.TXT", text, sizeof text - 1};
    bytes part;
    REQUIRE(write_archive(ctx, "cine-part", &hello, 1, NULL, 0, NULL, &part) == TROWEL_OK);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    trowel_writer *w;
    REQUIRE(trowel_writer_open(ctx, trowel_format_find("cine-volcnf"), NULL, 0, NULL, s, &w) ==
            TROWEL_OK);
    trowel_input *in;
    REQUIRE(trowel_input_open_memory(ctx, part.data, part.size, "PROCS00", &in) == TROWEL_OK);
    CHECK(trowel_writer_begin_entry(w, ENTRY("PROCS00", part.size)) == TROWEL_OK);
    CHECK(trowel_writer_write_input(w, in) == TROWEL_OK);
    CHECK(trowel_writer_end_entry(w) == TROWEL_OK);
    trowel_input_close(in);
    CHECK(trowel_writer_finish(w) == TROWEL_OK);
    bytes cnf = sink_copy(s);
    trowel_sink_discard(s);
    CHECK(a.open == 0 && a.list == 0);
    mem_entry vol = {"PROCS00", part.data, part.size};
    bytes c = create_archive("cine-volcnf", &vol, 1, NULL, 0, NULL);
    CHECK(same_bytes(&cnf, &c));
    trowel_ctx_set_open_hook(ctx, serve_part, &part);
    opened o;
    REQUIRE(open_bytes(ctx, &cnf, "VOL.CNF", "cine-volcnf", &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 1);
    CHECK(entry_holds(o.a, "PROCS00/HELLO.TXT", text, sizeof text - 1));
    close_opened(&o);
    free(c.data);
    free(cnf.data);
    free(part.data);
    trowel_ctx_free(ctx);
}

/* cine-save: a Future Wars save (30-byte animation entries) to its JSON,
 * and the JSON through the writer back to the same bytes. */
static void test_cine_save(void)
{
    static uint8_t save[FW_SAVE_SIZE];
    fw_save(save);
    asked a = {0};
    trowel_ctx *ctx = refusing_ctx(&a);
    REQUIRE(ctx);
    bytes orig = {save, sizeof save};
    bytes json = converted(ctx, &orig, "FW.1", "cine-save", "savejson");
    REQUIRE(json.data);
    mem_entry e = {"save.json", json.data, json.size};
    bytes b;
    CHECK(write_archive(ctx, "cine-save", &e, 1, NULL, 0, NULL, &b) == TROWEL_OK);
    CHECK(a.open == 0 && a.list == 0);
    CHECK(same_bytes(&b, &orig));
    free(b.data);
    free(json.data);
    trowel_ctx_free(ctx);
}

/* tres-wtd: a raw 2x2 height map, options for its size; its PNG back. */
static void test_tres_wtd(void)
{
    static const uint8_t raw[8] = {10, 0, 14, 0, 7, 0, 20, 0}; /* 16-bit LE */
    asked a = {0};
    trowel_ctx *ctx = refusing_ctx(&a);
    REQUIRE(ctx);
    mem_entry e = {"map.raw", raw, sizeof raw};
    const char *opts[] = {"width=2", "height=2"};
    bytes b;
    REQUIRE(write_archive(ctx, "tres-wtd", &e, 1, opts, 2, NULL, &b) == TROWEL_OK);
    CHECK(a.open == 0 && a.list == 0);
    bytes c = create_archive("tres-wtd", &e, 1, opts, 2, NULL);
    CHECK(same_bytes(&b, &c));
    /* what it stores: its PNG, written back through a writer, is the same WTD */
    bytes pb = converted(ctx, &b, "map.wtd", "tres-wtd", "png");
    REQUIRE(pb.data);
    mem_entry again = {"map.png", pb.data, pb.size};
    bytes b2;
    CHECK(write_archive(ctx, "tres-wtd", &again, 1, NULL, 0, NULL, &b2) == TROWEL_OK);
    CHECK(same_bytes(&b2, &b));
    CHECK(a.open == 0 && a.list == 0);
    free(b2.data);
    free(pb.data);
    free(c.data);
    free(b.data);
    trowel_ctx_free(ctx);
}

/* vsif: a text VCD compiled in, read back as text. */
static void test_vsif(void)
{
    static const char vcd[] = "// Choreo version 1\r\nactor \"bad_cop\"\r\n{\r\n"
                              "  channel \"audio\"\r\n"
                              "  {\r\n    event speak \"hello\"\r\n    {\r\n      time 0.5 2.25\r\n"
                              "      param \"bad_cop.hello\"\r\n    }\r\n  }\r\n}\r\n";
    asked a = {0};
    trowel_ctx *ctx = refusing_ctx(&a);
    REQUIRE(ctx);
    mem_entry e = {"scenes/brand_new.vcd", vcd, sizeof vcd - 1};
    bytes b;
    REQUIRE(write_archive(ctx, "vsif", &e, 1, NULL, 0, NULL, &b) == TROWEL_OK);
    CHECK(a.open == 0 && a.list == 0);
    bytes c = create_archive("vsif", &e, 1, NULL, 0, NULL);
    CHECK(same_bytes(&b, &c));
    opened o;
    REQUIRE(open_bytes(ctx, &b, "scenes.image", "vsif", &o) == TROWEL_OK);
    REQUIRE(trowel_archive_entry_count(o.a) == 1);
    uint8_t *d = NULL;
    size_t n = 0;
    CHECK(trowel_archive_read_entry_data(o.a, 0, &d, &n) == TROWEL_OK);
    char *t = calloc(1, n + 1);
    if (t && d)
        memcpy(t, d, n);
    CHECK(t && strstr(t, "event speak \"hello\"") != NULL);
    CHECK(t && strstr(t, "\"bad_cop.hello\"") != NULL);
    free(t);
    trowel_archive_free_data(o.a, d);
    close_opened(&o);
    free(c.data);
    free(b.data);
    trowel_ctx_free(ctx);
}

/* An entry's props are its manifest keys: a scene read from an image
 * whose scenes were forced to LZMA, written again with its props (no
 * option, no manifest), comes out compressed again, where the default
 * (auto: LZMA only when smaller) stores it. */
static void test_vsif_props_carry_the_scene_keys(void)
{
    static const char vcd[] = "// Choreo version 1\r\nactor \"a\"\r\n{\r\n}\r\n";
    asked a = {0};
    trowel_ctx *ctx = refusing_ctx(&a);
    REQUIRE(ctx);
    mem_entry e = {"scenes/tiny.vcd", vcd, sizeof vcd - 1};
    const char *lzma[] = {"compress=lzma"};
    bytes forced, plain;
    REQUIRE(write_archive(ctx, "vsif", &e, 1, lzma, 1, NULL, &forced) == TROWEL_OK);
    REQUIRE(write_archive(ctx, "vsif", &e, 1, NULL, 0, NULL, &plain) == TROWEL_OK);
    CHECK(!same_bytes(&forced, &plain)); /* auto stores so small a scene */
    opened o;
    REQUIRE(open_bytes(ctx, &forced, "scenes.image", "vsif", &o) == TROWEL_OK);
    REQUIRE(trowel_archive_entry_count(o.a) == 1);
    const trowel_entry *scene = trowel_archive_entry(o.a, 0);
    const trowel_prop *c = trowel_props_find(scene->extra, "compressed");
    CHECK(c && c->type == TROWEL_VALUE_BOOL && c->i == 1);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    trowel_writer *w;
    REQUIRE(trowel_writer_open(ctx, trowel_format_find("vsif"), NULL, 0, NULL, s, &w) ==
            TROWEL_OK);
    trowel_writer_entry we = {e.name, e.size, scene->extra};
    CHECK(trowel_writer_begin_entry(w, &we) == TROWEL_OK);
    CHECK(trowel_writer_write(w, e.data, e.size) == TROWEL_OK);
    CHECK(trowel_writer_end_entry(w) == TROWEL_OK);
    CHECK(trowel_writer_finish(w) == TROWEL_OK);
    bytes again = sink_copy(s);
    trowel_sink_discard(s);
    CHECK(same_bytes(&again, &forced));
    /* asm's manifest is the whole file: entry props are refused */
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    REQUIRE(trowel_writer_open(ctx, trowel_format_find("asm"), NULL, 0, "{}", s, &w) ==
            TROWEL_OK);
    CHECK(trowel_writer_begin_entry(w, &we) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "asm takes no entry props: its manifest describes the whole file");
    trowel_writer_abort(w);
    trowel_sink_discard(s);
    close_opened(&o);
    CHECK(a.open == 0 && a.list == 0);
    free(again.data);
    free(plain.data);
    free(forced.data);
    trowel_ctx_free(ctx);
}

typedef struct folder_files {
    char names[8][256];
    bytes data[8];
    mem_entry e[8];
    size_t n;
} folder_files;

/* Reads every file of dir into f and removes them and dir. */
static void take_folder(const char *dir, folder_files *f)
{
    f->n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.' || f->n == 8)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        snprintf(f->names[f->n], sizeof f->names[f->n], "%s", de->d_name);
        f->data[f->n] = read_file(path);
        unlink(path);
        f->e[f->n] = (mem_entry){f->names[f->n], f->data[f->n].data, f->data[f->n].size};
        f->n++;
    }
    closedir(d);
    rmdir(dir);
}

/* convert --to png of a COST into a folder, taken into memory. */
static bool cost_to_folder(trowel_ctx *ctx, const bytes *cost, folder_files *f)
{
    char *dir = make_temp_dir();
    opened o;
    trowel_outdir *od = NULL;
    bool ok = dir && open_bytes(ctx, cost, "t.cost", "scumm-cost", &o) == TROWEL_OK;
    if (ok) {
        ok = trowel_outdir_open(ctx, dir, 0, &od) == TROWEL_OK &&
             trowel_convert_folder(ctx, o.a, "png", NULL, 0, od) == TROWEL_OK;
        trowel_outdir_close(od);
        close_opened(&o);
    }
    if (!ok)
        fprintf(stderr, "  cost to png: %s\n", trowel_ctx_last_error(ctx)->message);
    if (dir)
        take_folder(dir, f);
    return ok && f->n >= 2;
}

static void free_folder(folder_files *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->data[i].data);
}

/* scumm-cost: its create reads a folder (costume.json and the pictures
 * beside it); through the writer each file of it is an entry. The folder
 * is made once on disk by convert (the test's preparation), read into
 * memory and removed before the build. The costume is cost_sample.h's. */
static void test_scumm_cost(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    REQUIRE(ctx);
    static uint8_t raw[256];
    bytes cost = {raw, make_cost(raw)};
    folder_files first = {.n = 0};
    REQUIRE(cost_to_folder(ctx, &cost, &first));
    asked a = {0};
    trowel_ctx_set_io_hooks(ctx, &(trowel_io_hooks){refuse_open, refuse_list}, &a);
    bytes b;
    CHECK(write_archive(ctx, "scumm-cost", first.e, first.n, NULL, 0, NULL, &b) == TROWEL_OK);
    CHECK(a.open == 0 && a.list == 0);
    bytes c = create_archive("scumm-cost", first.e, first.n, NULL, 0, NULL);
    CHECK(same_bytes(&b, &c));
    /* what the costume holds: converted again, the same folder */
    trowel_ctx_set_io_hooks(ctx, NULL, NULL);
    folder_files again = {.n = 0};
    CHECK(b.data && cost_to_folder(ctx, &b, &again));
    CHECK_EQ_U64(again.n, first.n);
    for (size_t i = 0; i < first.n && i < again.n; i++) {
        bool same = false;
        for (size_t k = 0; k < again.n; k++)
            same = same || (strcmp(first.names[i], again.names[k]) == 0 &&
                            same_bytes(&first.data[i], &again.data[k]));
        CHECK(same);
    }
    free_folder(&again);
    free_folder(&first);
    free(c.data);
    free(b.data);
    trowel_ctx_free(ctx);
}

/* asm: its create reads the manifest only; the writer gets no entries. */
static void test_asm(void)
{
    static const char manifest[] =
        "{\"format\":\"asm\",\"entries\":[],\"asm\":{\"version\":5,\"containers\":"
        "[{\"name\":\"c\",\"type\":1,\"flags\":128,\"base_offset\":6144,\"read_size\":9,"
        "\"sizes\":[4],\"primitives\":[{\"name\":\"p\",\"type\":1,\"allocator\":0,\"flags\":0,"
        "\"split_ext\":0,\"cpu_size\":4,\"gpu_size\":0}]}]}}";
    asked a = {0};
    trowel_ctx *ctx = refusing_ctx(&a);
    REQUIRE(ctx);
    bytes b;
    REQUIRE(write_archive(ctx, "asm", NULL, 0, NULL, 0, manifest, &b) == TROWEL_OK);
    CHECK(a.open == 0 && a.list == 0);
    bytes c = create_archive("asm", NULL, 0, NULL, 0, manifest);
    CHECK(same_bytes(&b, &c));
    opened o;
    REQUIRE(open_bytes(ctx, &b, "t.asm_pc", "asm", &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 1);
    CHECK(trowel_archive_entry_count(o.a) == 1 &&
          strcmp(trowel_archive_entry(o.a, 0)->name, "c") == 0);
    close_opened(&o);
    free(c.data);
    free(b.data);
    trowel_ctx_free(ctx);
}

/* ---- the writer's own rules */

/* An SZDD built in memory goes into a VPP as an entry, through
 * write_input; opened nested, it gives back the text. */
static void test_nested_archive_written_as_an_input(void)
{
    asked a = {0};
    trowel_ctx *ctx = refusing_ctx(&a);
    REQUIRE(ctx);
    mem_entry e = {"readme.txt", text, sizeof text - 1};
    bytes szdd;
    REQUIRE(write_archive(ctx, "szdd", &e, 1, NULL, 0, NULL, &szdd) == TROWEL_OK);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    trowel_writer *w;
    REQUIRE(trowel_writer_open(ctx, trowel_format_find("vpp"), NULL, 0, NULL, s, &w) ==
            TROWEL_OK);
    trowel_input *in;
    REQUIRE(trowel_input_open_memory(ctx, szdd.data, szdd.size, "readme.tx_", &in) == TROWEL_OK);
    CHECK(trowel_writer_begin_entry(w, ENTRY("readme.tx_", TROWEL_SIZE_UNKNOWN)) ==
          TROWEL_OK);
    CHECK(trowel_writer_write_input(w, in) == TROWEL_OK);
    CHECK(trowel_writer_end_entry(w) == TROWEL_OK);
    trowel_input_close(in);
    CHECK(trowel_writer_begin_entry(w, ENTRY("DATA.BIN", sizeof binary)) ==
          TROWEL_OK);
    CHECK(trowel_writer_write(w, binary, sizeof binary) == TROWEL_OK);
    CHECK(trowel_writer_end_entry(w) == TROWEL_OK);
    CHECK(trowel_writer_finish(w) == TROWEL_OK);
    bytes vpp = sink_copy(s);
    trowel_sink_discard(s);
    CHECK(a.open == 0 && a.list == 0);
    opened o;
    REQUIRE(open_bytes(ctx, &vpp, "outer.vpp", "vpp", &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 2);
    CHECK(entry_holds(o.a, "readme.tx_", szdd.data, szdd.size));
    CHECK(entry_holds(o.a, "DATA.BIN", binary, sizeof binary));
    trowel_archive *nested = NULL;
    CHECK(trowel_archive_open_entry(o.a, 0, trowel_format_find("szdd"), &nested) == TROWEL_OK);
    CHECK(nested && entry_at_holds(nested, 0, text, sizeof text - 1));
    trowel_archive_close(nested);
    close_opened(&o);
    free(vpp.data);
    free(szdd.data);
    trowel_ctx_free(ctx);
}

/* Descriptors open now (what /proc/self/fd lists). */
static int open_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* Entries larger than the spill keeps in memory go to its unnamed file;
 * abort frees it all: the memory counted, the descriptor, and nothing is
 * written to the sink. A finished writer likewise. */
static void test_large_entries_and_abort_leave_nothing(void)
{
    asked a = {0};
    trowel_ctx *ctx = refusing_ctx(&a);
    REQUIRE(ctx);
    trowel_ctx_set_mem_limit(ctx, 1u << 20); /* the spill keeps 100 KiB in memory */
    size_t big_n = 300 * 1024;
    uint8_t *big = malloc(big_n);
    REQUIRE(big);
    for (size_t i = 0; i < big_n; i++)
        big[i] = (uint8_t)(i * 7 + (i >> 9));
    int fds = open_descriptors();
    uint64_t mem = trowel_ctx_mem_in_use(ctx);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    trowel_writer *w;
    REQUIRE(trowel_writer_open(ctx, trowel_format_find("vpp"), NULL, 0, NULL, s, &w) ==
            TROWEL_OK);
    CHECK(trowel_writer_begin_entry(w, ENTRY("big.bin", big_n)) == TROWEL_OK);
    CHECK(trowel_writer_write(w, big, big_n) == TROWEL_OK);
    CHECK(trowel_writer_end_entry(w) == TROWEL_OK);
    CHECK(fds < 0 || open_descriptors() == fds + 1); /* the spill's file */
    trowel_writer_abort(w);
    CHECK_EQ_U64(trowel_sink_written(s), 0);
    CHECK(fds < 0 || open_descriptors() == fds);
    trowel_sink_discard(s);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), mem);
    /* the same through finish: the big entry read back from the file */
    mem_entry e[2] = {{"big.bin", big, big_n}, {"TEXT.TXT", text, sizeof text - 1}};
    trowel_ctx_set_mem_limit(ctx, 8u << 20); /* room for the built file */
    bytes b;
    REQUIRE(write_archive(ctx, "vpp", e, 2, NULL, 0, NULL, &b) == TROWEL_OK);
    CHECK(a.open == 0 && a.list == 0);
    CHECK(fds < 0 || open_descriptors() == fds);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), mem);
    opened o;
    REQUIRE(open_bytes(ctx, &b, "big.vpp", "vpp", &o) == TROWEL_OK);
    CHECK(entry_holds(o.a, "big.bin", big, big_n));
    CHECK(entry_holds(o.a, "TEXT.TXT", text, sizeof text - 1));
    close_opened(&o);
    free(b.data);
    free(big);
    trowel_writer_abort(NULL);
    trowel_ctx_free(ctx);
}

typedef struct warned {
    int count;
    char last[512];
} warned;

static void on_warning(void *user, const trowel_error *e)
{
    warned *wd = user;
    wd->count++;
    snprintf(wd->last, sizeof wd->last, "%s", e->message);
}

/* A name given twice (after normalising) is refused, naming both; with
 * keep_last the later one is stored, with a warning. Unsafe names are
 * refused. A refused entry leaves the writer usable. */
static void test_names_are_checked(void)
{
    asked a = {0};
    trowel_ctx *ctx = refusing_ctx(&a);
    REQUIRE(ctx);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    trowel_writer *w;
    REQUIRE(trowel_writer_open(ctx, trowel_format_find("groff"), NULL, 0, NULL, s, &w) ==
            TROWEL_OK);
    CHECK(trowel_writer_begin_entry(w, ENTRY("a.txt", 1)) == TROWEL_OK);
    CHECK(trowel_writer_write(w, "x", 1) == TROWEL_OK);
    CHECK(trowel_writer_end_entry(w) == TROWEL_OK);
    CHECK(trowel_writer_begin_entry(w, ENTRY("./a.txt", 1)) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "'a.txt' and './a.txt' would both be stored as 'a.txt': rename one, or keep only "
              "the last (keep_last=1)");
    CHECK(trowel_writer_begin_entry(w, ENTRY("../a.txt", 1)) ==
          TROWEL_ERR_UNSAFE_PATH);
    CHECK(trowel_writer_begin_entry(w, ENTRY("/etc/a.txt", 1)) ==
          TROWEL_ERR_UNSAFE_PATH);
    CHECK(trowel_writer_begin_entry(w, ENTRY(NULL, 1)) == TROWEL_ERR_USAGE);
    CHECK(trowel_writer_begin_entry(w, ENTRY("b.txt", 1)) == TROWEL_OK);
    CHECK(trowel_writer_write(w, "y", 1) == TROWEL_OK);
    CHECK(trowel_writer_end_entry(w) == TROWEL_OK);
    CHECK(trowel_writer_finish(w) == TROWEL_OK);
    bytes b = sink_copy(s);
    trowel_sink_discard(s);
    opened o;
    REQUIRE(open_bytes(ctx, &b, "t.grf", "groff", &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 2);
    CHECK(entry_holds(o.a, "a.txt", "x", 1));
    CHECK(entry_holds(o.a, "b.txt", "y", 1));
    close_opened(&o);
    free(b.data);
    /* keep_last: the later bytes win, and a warning says so */
    warned wd = {0};
    trowel_ctx_set_warning_handler(ctx, on_warning, &wd);
    const char *keep[] = {TROWEL_CREATE_KEEP_LAST};
    mem_entry twice[2] = {{"a.txt", "first", 5}, {"./a.txt", "second", 6}};
    REQUIRE(write_archive(ctx, "groff", twice, 2, keep, 1, NULL, &b) == TROWEL_OK);
    CHECK_EQ_U64(wd.count, 1);
    CHECK_STR(wd.last, "'./a.txt' is stored as 'a.txt' in place of 'a.txt'");
    REQUIRE(open_bytes(ctx, &b, "t.grf", "groff", &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 1);
    CHECK(trowel_archive_entry_count(o.a) == 1 && entry_at_holds(o.a, 0, "second", 6));
    close_opened(&o);
    free(b.data);
    CHECK(a.open == 0 && a.list == 0);
    trowel_ctx_free(ctx);
}

/* Calls out of order are usage errors that change nothing. */
static void test_calls_out_of_order_are_usage_errors(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    REQUIRE(ctx);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    trowel_writer *w = (trowel_writer *)s; /* set to NULL by a refused open */
    CHECK(trowel_writer_open(ctx, trowel_format_find("scumm-akos"), NULL, 0, NULL, s, &w) ==
          TROWEL_ERR_UNSUPPORTED);
    CHECK(w == NULL);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "trowel cannot create scumm-akos files yet");
    REQUIRE(trowel_writer_open(ctx, trowel_format_find("groff"), NULL, 0, NULL, s, &w) ==
            TROWEL_OK);
    CHECK(trowel_writer_write(w, "x", 1) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "bytes written outside an entry (begin one first)");
    CHECK(trowel_writer_end_entry(w) == TROWEL_ERR_USAGE);
    CHECK(trowel_writer_begin_entry(w, ENTRY("a.txt", 2)) == TROWEL_OK);
    CHECK(trowel_writer_begin_entry(w, ENTRY("b.txt", 2)) == TROWEL_ERR_USAGE);
    CHECK(trowel_writer_set_companion(w, NULL, NULL) == TROWEL_ERR_USAGE);
    CHECK(trowel_writer_write(w, "xyz", 3) == TROWEL_ERR_USAGE); /* past the size announced */
    CHECK(trowel_writer_write(w, "x", 1) == TROWEL_OK);
    CHECK(trowel_writer_end_entry(w) == TROWEL_ERR_USAGE); /* 1 of 2 */
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "1 bytes written of the 2 announced");
    CHECK(trowel_writer_write(w, "y", 1) == TROWEL_OK);
    CHECK(trowel_writer_end_entry(w) == TROWEL_OK);
    CHECK(trowel_writer_begin_entry(w, ENTRY("b.txt", TROWEL_SIZE_UNKNOWN)) ==
          TROWEL_OK);
    CHECK(trowel_writer_finish(w) == TROWEL_ERR_USAGE); /* b.txt still open; w is freed */
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the writer finishes while 'b.txt' is still open (end it first)");
    CHECK_EQ_U64(trowel_sink_written(s), 0);
    trowel_sink_discard(s);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_every_creating_format_is_covered), TEST(test_szdd), TEST(test_spz),
          TEST(test_groff), TEST(test_cine_part), TEST(test_vpp), TEST(test_cine_volcnf),
          TEST(test_cine_save), TEST(test_tres_wtd), TEST(test_vsif),
          TEST(test_vsif_props_carry_the_scene_keys),
          TEST(test_scumm_cost),
          TEST(test_asm), TEST(test_nested_archive_written_as_an_input),
          TEST(test_large_entries_and_abort_leave_nothing), TEST(test_names_are_checked),
          TEST(test_calls_out_of_order_are_usage_errors))
