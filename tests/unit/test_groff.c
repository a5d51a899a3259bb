/*
 * Tests of the GROFF container (src/format/trespasser/groff.c): the three
 * public SCN files of the shared corpus (their save headers, section counts,
 * verify, and a byte-identical rebuild from extract + manifest), a small
 * GROFF assembled by hand here (offsets, names, flags and bytes worked out
 * below), and hostile variants of it: a section past the end, a symbol
 * name past the table, a huge section count, a gap between sections.
 */
#include "files.h"
#include "test.h"

#include "core/module.h"

#include <unistd.h>

/* ---- the hand-made file
 * header 48 bytes, 2 section headers (64) -> data from 112:
 *   section 0, symbol "B" (handle 0x10), user flags 0x40 (bitmap): "hi" at 112
 *   section 1, symbol "A" (handle 0x20), user flags 0x2001: "xyz" at 114
 * symbol table at 117, sorted: "A" then "B", 12 + 2 bytes each = 28
 * file size 117 + 28 = 145. */
#define HAND_SIZE 145

static void hand_groff(uint8_t f[HAND_SIZE])
{
    static const uint32_t header[12] = {0x0ACEBABE, HAND_SIZE, 2, 2, 28, 117, 0, 0x0C, 10, 0, 0, 0};
    static const uint32_t sections[2][8] = {{0x10, 0, 112, 2, 0, 0, 0x40, 0x80000000},
                                            {0x20, 0, 114, 3, 0, 0, 0x2001, 0x80000001}};
    memset(f, 0, HAND_SIZE);
    for (int i = 0; i < 12; i++)
        set_u32(f + 4 * i, header[i]);
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 8; i++)
            set_u32(f + 48 + 32 * s + 4 * i, sections[s][i]);
    memcpy(f + 112, "hixyz", 5);
    set_u32(f + 117, 0x20), set_u32(f + 121, 2), set_u32(f + 125, 1), memcpy(f + 129, "A", 2);
    set_u32(f + 131, 0x10), set_u32(f + 135, 2), set_u32(f + 139, 1), memcpy(f + 143, "B", 2);
}

typedef struct opened {
    trowel_ctx *ctx;
    trowel_input *in;
    trowel_archive *a;
    trowel_status status;
} opened;

static opened open_bytes(const uint8_t *data, size_t size)
{
    opened o = {trowel_ctx_new(), NULL, NULL, TROWEL_OK};
    o.status = trowel_input_open_memory(o.ctx, data, size, "hand.grf", &o.in);
    if (o.status == TROWEL_OK)
        o.status = trowel_archive_open(o.ctx, o.in, trowel_format_find("groff"), &o.a);
    return o;
}

static void close_opened(opened *o)
{
    trowel_archive_close(o->a);
    trowel_input_close(o->in);
    trowel_ctx_free(o->ctx);
}

static const trowel_prop *info(const opened *o, const char *key)
{
    return trowel_props_find(trowel_archive_info(o->a), key);
}

static void read_entry_text(opened *o, size_t i, char *out, size_t cap)
{
    trowel_sink *sink;
    out[0] = 0;
    if (trowel_sink_open_memory(o->ctx, &sink) != TROWEL_OK)
        return;
    if (trowel_archive_read_entry(o->a, i, sink) == TROWEL_OK) {
        size_t n;
        const uint8_t *d = trowel_sink_data(sink, &n);
        snprintf(out, cap, "%.*s", (int)n, (const char *)d);
    }
    trowel_sink_discard(sink);
}

static void test_hand_made_file(void)
{
    uint8_t f[HAND_SIZE];
    hand_groff(f);
    opened o = open_bytes(f, sizeof f);
    REQUIRE(o.status == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 2);
    const trowel_entry *e0 = trowel_archive_entry(o.a, 0), *e1 = trowel_archive_entry(o.a, 1);
    CHECK_STR(e0->name, "B");
    CHECK_EQ_U64(e0->offset, 112);
    CHECK_EQ_U64(e0->size, 2);
    CHECK_STR(e1->name, "A");
    CHECK_EQ_U64(e1->offset, 114);
    CHECK_EQ_U64(e1->size, 3);
    CHECK_EQ_U64(trowel_props_find(e1->extra, "flags")->u, 0x2001);
    const trowel_prop *names = trowel_props_find(e1->extra, "flag_names");
    REQUIRE(names && names->list_len == 2);
    CHECK_STR(names->list[0], "header");
    CHECK_STR(names->list[1], "attributes");
    CHECK_EQ_U64(trowel_props_find(e0->extra, "handle")->u, 0x80000000u);
    CHECK_EQ_U64(info(&o, "section_count")->u, 2);
    CHECK_EQ_U64(info(&o, "symbol_table_offset")->u, 117);
    CHECK(info(&o, "kind") == NULL); /* neither SCN nor GRF */
    char text[16];
    read_entry_text(&o, 1, text, sizeof text);
    CHECK_STR(text, "xyz");
    CHECK(trowel_archive_verify(o.a, NULL, NULL) == TROWEL_OK);
    close_opened(&o);
}

typedef struct problems {
    int n;
    char first[512];
} problems;

static void collect(void *user, const trowel_error *e)
{
    problems *p = user;
    if (p->n++ == 0)
        snprintf(p->first, sizeof p->first, "%s", e->message);
}

static void test_gap_between_sections_fails_verify(void)
{
    uint8_t f[HAND_SIZE];
    hand_groff(f);
    set_u32(f + 48 + 32 + 8, 115); /* section 1 now claims offset 115 */
    opened o = open_bytes(f, sizeof f);
    REQUIRE(o.status == TROWEL_OK);
    problems p = {0};
    CHECK(trowel_archive_verify(o.a, collect, &p) == TROWEL_ERR_VERIFY);
    CHECK_EQ_U64(p.n, 1);
    CHECK_STR(p.first, "section 1 (A) is stored at offset 115, but the game reads it at 114 "
                       "(sections follow the table back to back, in table order)");
    close_opened(&o);
}

static void test_section_past_the_end(void)
{
    uint8_t f[HAND_SIZE];
    hand_groff(f);
    set_u32(f + 48 + 32 + 8, 1000);
    opened o = open_bytes(f, sizeof f);
    REQUIRE(o.status == TROWEL_OK); /* the rest stays readable */
    CHECK(trowel_archive_damaged(o.a));
    trowel_sink *sink;
    REQUIRE(trowel_sink_open_null(o.ctx, &sink) == TROWEL_OK);
    CHECK(trowel_archive_read_entry(o.a, 1, sink) == TROWEL_ERR_TRUNCATED);
    CHECK_STR(trowel_ctx_last_error(o.ctx)->message,
              "section 1 (A) at offset 1000, 3 bytes, runs past the end of the file (145 bytes)");
    trowel_sink_discard(sink);
    char text[16];
    read_entry_text(&o, 0, text, sizeof text);
    CHECK_STR(text, "hi");
    close_opened(&o);
}

static void test_repeated_names(void)
{
    uint8_t f[HAND_SIZE];
    hand_groff(f);
    set_u32(f + 48 + 32, 0x10); /* section 1 also names "B" */
    opened o = open_bytes(f, sizeof f);
    REQUIRE(o.status == TROWEL_OK);
    CHECK_STR(trowel_archive_entry(o.a, 0)->name, "B");
    CHECK_STR(trowel_archive_entry(o.a, 1)->name, "B~1");
    close_opened(&o);
}

static void test_refusals(void)
{
    uint8_t f[HAND_SIZE];
    hand_groff(f);
    set_u32(f + 135, 100); /* symbol B's name length */
    opened o = open_bytes(f, sizeof f);
    CHECK(o.status == TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(o.ctx)->message,
              "symbol 1's name of 100 bytes runs past the symbol table (2 bytes left)");
    close_opened(&o);

    hand_groff(f);
    set_u32(f + 8, 0x10000000); /* section count */
    o = open_bytes(f, sizeof f);
    CHECK(o.status == TROWEL_ERR_TRUNCATED);
    CHECK_STR(trowel_ctx_last_error(o.ctx)->message,
              "the section table of 268435456 sections needs 8589934640 bytes but the file "
              "has 145");
    close_opened(&o);

    hand_groff(f);
    set_u32(f + 16, 0xFFFFFF00); /* symbol table size */
    o = open_bytes(f, sizeof f);
    CHECK(o.status == TROWEL_ERR_TRUNCATED);
    CHECK_STR(trowel_ctx_last_error(o.ctx)->message,
              "the symbol table (offset 117, 4294967040 bytes) runs past the end of the file "
              "(145 bytes)");
    close_opened(&o);

    hand_groff(f);
    set_u32(f + 12, 3); /* three symbols cannot fit in 28 bytes */
    o = open_bytes(f, sizeof f);
    CHECK(o.status == TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(o.ctx)->message,
              "3 symbols cannot fit in a symbol table of 28 bytes");
    close_opened(&o);
}

/* ---- the corpus */

typedef struct scn_fact {
    const char *file;
    uint64_t sections;
    int64_t save_version;
    const char *groff0;
} scn_fact;

static const scn_fact scn_facts[] = {
    {"Error.scn", 10, 21, ""},
    {"LastScene.scn", 16, 21, "J:\\Users\\Wyatt\\TestObjects\\VO Test\\vo test.grf"},
    {"SlideTest.scn", 146, 11, "M:\\Island\\TestScene\\TestScene.GRF"},
};

/* Extracts every section to memory and rebuilds through create with the
 * manifest; returns the rebuilt bytes (malloc'd) or NULL. */
static uint8_t *rebuild(opened *o, const char *dir, size_t *size)
{
    char *manifest = NULL;
    if (trowel_archive_manifest(o->a, &manifest) != TROWEL_OK)
        return NULL;
    size_t n = trowel_archive_entry_count(o->a);
    trowel_source *src = calloc(n, sizeof *src);
    char (*paths)[512] = calloc(n, sizeof *paths);
    for (size_t i = 0; i < n; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/s%zu", dir, i);
        trowel_sink *sink;
        if (trowel_sink_open_file(o->ctx, paths[i], 0, &sink) != TROWEL_OK)
            continue;
        if (trowel_archive_read_entry(o->a, i, sink) == TROWEL_OK)
            trowel_sink_finish(sink);
        else
            trowel_sink_discard(sink);
        src[i].name = trowel_archive_entry(o->a, i)->name;
        src[i].path = paths[i];
    }
    trowel_create_params p = {.sources = src, .source_count = n, .manifest_json = manifest};
    trowel_sink *out;
    uint8_t *result = NULL;
    if (trowel_sink_open_memory(o->ctx, &out) == TROWEL_OK) {
        if (trowel_create(o->ctx, trowel_format_find("groff"), &p, out) == TROWEL_OK) {
            const uint8_t *d = trowel_sink_data(out, size);
            result = malloc(*size + 1);
            memcpy(result, d, *size);
        }
        trowel_sink_discard(out);
    }
    free(src);
    free(paths);
    free(manifest);
    return result;
}

static void test_corpus_scn(void)
{
    for (size_t k = 0; k < sizeof scn_facts / sizeof *scn_facts; k++) {
        const scn_fact *fact = &scn_facts[k];
        char path[1024];
        snprintf(path, sizeof path, "%s/trespasser/scn/%s", TROWEL_CORPUS_DIR, fact->file);
        bytes b = read_file(path);
        if (!b.data) {
            test_skip("corpus file %s is absent", path);
            continue;
        }
        opened o = open_bytes(b.data, b.size);
        CHECK(o.status == TROWEL_OK);
        if (o.status == TROWEL_OK) {
            CHECK_EQ_U64(trowel_archive_entry_count(o.a), fact->sections);
            CHECK_STR(info(&o, "kind")->s, "scn");
            CHECK_EQ_U64(info(&o, "save_header.version")->i, fact->save_version);
            const trowel_prop *g = info(&o, "save_header.groff");
            REQUIRE(g && g->list_len == 5);
            CHECK_STR(g->list[0], fact->groff0);
            CHECK_STR(g->list[1], "");
            CHECK(trowel_archive_verify(o.a, NULL, NULL) == TROWEL_OK);
            char *dir = make_temp_dir();
            size_t size = 0;
            uint8_t *again = dir ? rebuild(&o, dir, &size) : NULL;
            CHECK(again && size == b.size && memcmp(again, b.data, size) == 0);
            free(again);
            if (dir)
                remove_tree(dir);
        }
        close_opened(&o);
        free(b.data);
    }
}

static void test_detection(void)
{
    uint8_t f[HAND_SIZE];
    hand_groff(f);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    REQUIRE(trowel_input_open_memory(ctx, f, sizeof f, "x", &in) == TROWEL_OK);
    const trowel_format *fmt = NULL;
    int bid = 0;
    CHECK(trowel_detect(ctx, in, &fmt, &bid) == TROWEL_OK);
    CHECK(fmt && strcmp(trowel_format_id(fmt), "groff") == 0);
    CHECK_EQ_U64(bid, 100);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_hand_made_file), TEST(test_gap_between_sections_fails_verify),
          TEST(test_section_past_the_end), TEST(test_repeated_names), TEST(test_refusals),
          TEST(test_corpus_scn),
          TEST(test_detection))
