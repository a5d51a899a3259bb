/*
 * Volition files cut short (src/format/volition/vpp.c, asm.c, asm_model.c):
 * a packfile of any version and mode (v1, v3 raw / compressed / condensed /
 * compressed+condensed, big-endian v3, v4, v6, v10, v17 raw / LZ4 / LZ4
 * solid), cut anywhere after its directory and names, still opens with
 * every entry listed and is damaged; every entry whose bytes are all there
 * reads its original bytes, each one cut fails with a message naming it
 * and the offset, verify fails, and nothing leaks. An ASM (v5, v11, v12)
 * cut anywhere after its header and remap tables lists the containers
 * before the cut and is damaged; bytes after the last container damage it
 * too; the strict reader the ASM update uses still refuses both.
 */
#include "codec_data.h"
#include "files.h"
#include "test.h"

#include "core/module.h"
#include "format/volition/asm.h"

#define SEEDS TROWEL_SOURCE_DIR "/fuzz/corpus/"
#define RFG TROWEL_CORPUS_DIR "/volition/rfg/"

static const char *const packfiles[] = {
    "synthetic_v1.vpp",           "synthetic_raw.vpp_pc",          "synthetic_v3_compressed.vpp_pc",
    "synthetic_cc1.str2_pc",      "synthetic_cc16.str2_pc",        "synthetic_v3_be.vpp_xbox2",
    "synthetic_v4_raw.vpp_pc",    "synthetic_v4_compressed.vpp_pc", "synthetic_v6_condensed.vpp_pc",
    "synthetic_v6_cc1.vpp_pc",    "synthetic_v10_raw.vpp_pc",      "synthetic_v10_compressed.vpp_pc",
    "synthetic_v10_cc16.vpp_pc",  "synthetic_v17_raw.vpp_pc",      "synthetic_v17_lz4.vpp_pc",
    "synthetic_v17_lz4_solid.vpp_pc"};

typedef struct opened {
    trowel_input *in;
    trowel_archive *a;
    int warnings;
} opened;

static void count_warning(void *user, const trowel_error *w)
{
    (void)w;
    (*(int *)user)++;
}

static void count_problem(void *user, const trowel_error *e)
{
    (void)e;
    (*(int *)user)++;
}

static trowel_status open_as(trowel_ctx *ctx, const char *fmt, const uint8_t *data, size_t n,
                             opened *o)
{
    o->a = NULL;
    o->warnings = 0;
    trowel_ctx_set_warning_handler(ctx, count_warning, &o->warnings);
    trowel_status s = trowel_input_open_memory(ctx, data, n, "t", &o->in);
    if (s == TROWEL_OK)
        s = trowel_archive_open(ctx, o->in, trowel_format_find(fmt), &o->a);
    return s;
}

static void close_opened(opened *o)
{
    trowel_archive_close(o->a);
    trowel_input_close(o->in);
}

/* Entry index's bytes (a malloc'd copy, length in *n), or NULL with *st
 * set. */
static uint8_t *read_entry(trowel_archive *a, size_t index, size_t *n, trowel_status *st)
{
    uint8_t *data = NULL, *copy = NULL;
    *n = 0;
    *st = trowel_archive_read_entry_data(a, index, &data, n);
    if (*st == TROWEL_OK) {
        copy = malloc(*n + 1);
        if (*n)
            memcpy(copy, data, *n);
    }
    trowel_archive_free_data(a, data);
    return copy;
}

static uint64_t info_uint(const trowel_archive *a, const char *key)
{
    const trowel_prop *p = trowel_props_find(trowel_archive_info(a), key);
    return p ? p->u : UINT64_MAX;
}

/* One packfile cut to len bytes: checked against the entries of the whole. */
static void check_cut_packfile(const char *name, const bytes *whole, uint8_t **want,
                               const size_t *want_len, size_t count, size_t len)
{
    trowel_ctx *ctx = new_ctx();
    opened o;
    trowel_status st = open_as(ctx, "vpp", whole->data, len, &o);
    if (st != TROWEL_OK) {
        fprintf(stderr, "  %s cut to %zu: open fails: %s\n", name, len,
                trowel_ctx_last_error(ctx)->message);
        CHECK(st == TROWEL_OK);
        close_opened(&o);
        trowel_ctx_free(ctx);
        return;
    }
    CHECK(trowel_archive_damaged(o.a));
    CHECK(o.warnings > 0);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), count);
    bool solid = !strcmp(trowel_archive_entry(o.a, 0)->method, "zlib-solid");
    for (size_t i = 0; i < count; i++) {
        const trowel_entry *e = trowel_archive_entry(o.a, i);
        size_t n;
        uint8_t *got = read_entry(o.a, i, &n, &st);
        bool present = e->offset <= len && e->packed_size <= len - e->offset;
        if (got) { /* what reads is the original */
            CHECK_EQ_U64(n, want_len[i]);
            CHECK(n == want_len[i] && (!n || !memcmp(got, want[i], n)));
        }
        if (present && !(solid && !strcmp(e->method, "zlib-solid") && e->packed_size == 0))
            CHECK_EQ_U64(st, TROWEL_OK);
        /* A solid stream may give a cut entry whole when only the end of
         * its last sync flush is missing; a separate entry never reads. */
        if (!present && !solid) {
            CHECK(st == TROWEL_ERR_TRUNCATED);
            { /* the message names the entry, its bytes and the file's end */
                char msg[512];
                snprintf(msg, sizeof msg,
                         "entry %zu (%s): %llu bytes at offset %llu run past the end of the "
                         "%zu-byte file",
                         i, e->name, (unsigned long long)e->packed_size,
                         (unsigned long long)e->offset, len);
                CHECK_STR(trowel_ctx_last_error(ctx)->message, msg);
            }
        }
        free(got);
    }
    int problems = 0;
    CHECK_EQ_U64(trowel_archive_verify(o.a, count_problem, &problems), TROWEL_ERR_VERIFY);
    CHECK(problems > 0);
    close_opened(&o);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

static void check_packfile(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, SEEDS "vpp/%s", name);
    bytes whole = read_file(path);
    REQUIRE(whole.data && whole.size);
    trowel_ctx *ctx = new_ctx();
    opened o;
    REQUIRE(open_as(ctx, "vpp", whole.data, whole.size, &o) == TROWEL_OK);
    CHECK(!trowel_archive_damaged(o.a));
    CHECK_EQ_U64(o.warnings, 0);
    size_t count = trowel_archive_entry_count(o.a);
    REQUIRE(count > 0);
    uint8_t **want = calloc(count, sizeof *want);
    size_t *want_len = calloc(count, sizeof *want_len);
    trowel_status st;
    for (size_t i = 0; i < count; i++) {
        want[i] = read_entry(o.a, i, &want_len[i], &st);
        CHECK_EQ_U64(st, TROWEL_OK);
    }
    /* Every cut after the names: the data start of v10 and v17 files may
     * lie before them (v17 keeps a directory table there too). */
    uint64_t start = info_uint(o.a, "data_start");
    close_opened(&o);
    trowel_ctx_free(ctx);
    REQUIRE(start < whole.size);
    bool failed = false;
    for (size_t len = whole.size - 1; len >= start && !failed; len--) {
        int before = test_failures_in_current;
        check_cut_packfile(name, &whole, want, want_len, count, len);
        if (test_failures_in_current != before) {
            fprintf(stderr, "  (%s cut to %zu bytes)\n", name, len);
            failed = true; /* one report per archive is enough */
        }
        if (len == 0)
            break;
    }
    for (size_t i = 0; i < count; i++)
        free(want[i]);
    free(want);
    free(want_len);
    free(whole.data);
}

static void test_every_packfile_cut_short_lists_all_reads_what_is_there(void)
{
    for (size_t k = 0; k < sizeof packfiles / sizeof packfiles[0]; k++)
        check_packfile(packfiles[k]);
}

/* The header's file size shows a cut that spares every entry (here: bytes
 * that only pad the end of a raw v3 archive). */
static void test_cut_in_the_last_padding_is_damage(void)
{
    bytes whole = read_file(SEEDS "vpp/synthetic_raw.vpp_pc");
    REQUIRE(whole.data);
    trowel_ctx *ctx = new_ctx();
    opened o;
    REQUIRE(open_as(ctx, "vpp", whole.data, whole.size, &o) == TROWEL_OK);
    size_t last = trowel_archive_entry_count(o.a) - 1;
    const trowel_entry *e = trowel_archive_entry(o.a, last);
    uint64_t end = e->offset + e->packed_size;
    close_opened(&o);
    /* Pad the file past its last entry and say so in the header. */
    size_t padded = whole.size + 100;
    uint8_t *p = calloc(1, padded);
    memcpy(p, whole.data, whole.size);
    p[0x158] = (uint8_t)padded;
    p[0x159] = (uint8_t)(padded >> 8);
    p[0x15A] = (uint8_t)(padded >> 16);
    p[0x15B] = (uint8_t)(padded >> 24);
    REQUIRE(open_as(ctx, "vpp", p, padded, &o) == TROWEL_OK);
    CHECK(!trowel_archive_damaged(o.a));
    close_opened(&o);
    REQUIRE(end <= whole.size);
    REQUIRE(open_as(ctx, "vpp", p, whole.size, &o) == TROWEL_OK);
    CHECK(trowel_archive_damaged(o.a));
    CHECK_EQ_U64(o.warnings, 1);
    size_t n;
    trowel_status st;
    free(read_entry(o.a, last, &n, &st));
    CHECK_EQ_U64(st, TROWEL_OK); /* every entry is still whole */
    close_opened(&o);
    trowel_ctx_free(ctx);
    free(p);
    free(whole.data);
}

/* ------------------------------------------------------------------ ASM */

typedef struct asm_whole {
    bytes file;
    size_t count;
    char **names;
    uint64_t *sizes;
} asm_whole;

static void free_asm_whole(asm_whole *w)
{
    for (size_t i = 0; i < w->count; i++)
        free(w->names[i]);
    free(w->names);
    free(w->sizes);
    free(w->file.data);
}

static bool load_asm(const char *path, asm_whole *w)
{
    memset(w, 0, sizeof *w);
    w->file = read_file(path);
    if (!w->file.data)
        return false;
    trowel_ctx *ctx = new_ctx();
    opened o;
    bool ok = open_as(ctx, "asm", w->file.data, w->file.size, &o) == TROWEL_OK &&
              !trowel_archive_damaged(o.a) && o.warnings == 0;
    if (ok) {
        w->count = trowel_archive_entry_count(o.a);
        w->names = calloc(w->count + 1, sizeof *w->names);
        w->sizes = calloc(w->count + 1, sizeof *w->sizes);
        for (size_t i = 0; i < w->count; i++) {
            w->names[i] = strdup(trowel_archive_entry(o.a, i)->name);
            w->sizes[i] = trowel_archive_entry(o.a, i)->size;
        }
    }
    close_opened(&o);
    trowel_ctx_free(ctx);
    return ok;
}

/* Every cut of an ASM: refused while in the header and remap tables, else
 * damaged with the containers before the cut listed as they were. Returns
 * the shortest cut that opened. */
static size_t check_asm_cuts(const char *name, const asm_whole *w)
{
    size_t shortest = w->file.size;
    bool refused = false;
    for (size_t len = w->file.size - 1; len > 0; len--) {
        trowel_ctx *ctx = new_ctx();
        opened o;
        trowel_status st = open_as(ctx, "asm", w->file.data, len, &o);
        int before = test_failures_in_current;
        if (st == TROWEL_OK) {
            CHECK(!refused); /* once a cut is refused, shorter ones are too */
            shortest = len;
            CHECK(trowel_archive_damaged(o.a));
            CHECK_EQ_U64(o.warnings, 1);
            size_t n = trowel_archive_entry_count(o.a);
            CHECK(n < w->count);
            for (size_t i = 0; i < n && i < w->count; i++) {
                CHECK_STR(trowel_archive_entry(o.a, i)->name, w->names[i]);
                CHECK_EQ_U64(trowel_archive_entry(o.a, i)->size, w->sizes[i]);
            }
            int problems = 0;
            CHECK_EQ_U64(trowel_archive_verify(o.a, count_problem, &problems), TROWEL_ERR_VERIFY);
            CHECK_EQ_U64(problems, 1);
            /* The update refuses a cut file outright. */
            trowel_reader r;
            trowel_reader_init(&r, ctx, o.in);
            vol_asm *m = NULL;
            CHECK(vol_asm_read(ctx, &r, &m) != TROWEL_OK);
            CHECK(m == NULL);
        } else {
            CHECK(st == TROWEL_ERR_TRUNCATED || st == TROWEL_ERR_CORRUPT);
            refused = true;
        }
        close_opened(&o);
        CHECK_EQ_U64(ctx->mem_in_use, 0);
        trowel_ctx_free(ctx);
        if (test_failures_in_current != before) {
            fprintf(stderr, "  (%s cut to %zu bytes)\n", name, len);
            break;
        }
    }
    return shortest;
}

static void test_every_asm_cut_short_lists_the_containers_before_the_cut(void)
{
    static const char *const seeds[] = {"v5_dlc_activity.asm_pc", "v11_synthetic.asm_pc",
                                        "v12_synthetic.asm_pc"};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        char path[512];
        snprintf(path, sizeof path, SEEDS "asm/%s", seeds[k]);
        asm_whole w;
        REQUIRE(load_asm(path, &w));
        CHECK(w.count > 0);
        size_t shortest = check_asm_cuts(seeds[k], &w);
        CHECK(shortest < w.file.size); /* some cut opens: after the remap tables */
        free_asm_whole(&w);
    }
}

/* The message of a cut inside a container's name, exactly. */
static void test_cut_asm_names_the_container_and_what_is_lost(void)
{
    asm_whole w;
    REQUIRE_INPUT(load_asm(RFG "cloth_containers.asm_pc", &w));
    trowel_ctx *ctx = new_ctx();
    opened o;
    REQUIRE(open_as(ctx, "asm", w.file.data, 3000, &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), 40);
    CHECK_EQ_U64(w.count, 57);
    trowel_reader r;
    trowel_reader_init(&r, ctx, o.in);
    vol_asm *m = NULL;
    REQUIRE(vol_asm_read_damaged(ctx, &r, &m) == TROWEL_OK);
    CHECK(m->damaged);
    CHECK_EQ_U64(m->declared_count, 57);
    CHECK_EQ_U64(m->container_count, 40);
    CHECK_STR(m->damage.message, "container 40: a 23-byte name runs past the end of the file; "
                                 "it and the 16 after it are not listed");
    CHECK_EQ_U64(m->damage.offset, 0xbb6);
    vol_asm_free(ctx, m);
    close_opened(&o);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
    free_asm_whole(&w);
}

static void test_bytes_after_the_last_container_damage_the_asm(void)
{
    asm_whole w;
    REQUIRE(load_asm(SEEDS "asm/v12_synthetic.asm_pc", &w));
    uint8_t *longer = calloc(1, w.file.size + 3);
    memcpy(longer, w.file.data, w.file.size);
    trowel_ctx *ctx = new_ctx();
    opened o;
    REQUIRE(open_as(ctx, "asm", longer, w.file.size + 3, &o) == TROWEL_OK);
    CHECK(trowel_archive_damaged(o.a));
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), w.count);
    trowel_reader r;
    trowel_reader_init(&r, ctx, o.in);
    vol_asm *m = NULL;
    REQUIRE(vol_asm_read_damaged(ctx, &r, &m) == TROWEL_OK);
    CHECK_STR(m->damage.message, "3 bytes follow the last container");
    CHECK_EQ_U64(m->damage.offset, w.file.size);
    vol_asm_free(ctx, m);
    close_opened(&o);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
    free(longer);
    free_asm_whole(&w);
}

/* A container count far past what the file holds costs no more memory
 * than the file could describe. */
static void test_huge_container_count_allocates_by_the_file(void)
{
    asm_whole w;
    REQUIRE(load_asm(SEEDS "asm/v5_dlc_activity.asm_pc", &w));
    uint8_t *p = malloc(w.file.size);
    memcpy(p, w.file.data, w.file.size);
    p[6] = 0xFF;
    p[7] = 0xFF; /* 65535 containers */
    trowel_ctx *ctx = new_ctx();
    trowel_ctx_set_mem_limit(ctx, 64 * 1024);
    opened o;
    REQUIRE(open_as(ctx, "asm", p, w.file.size, &o) == TROWEL_OK);
    CHECK(trowel_archive_damaged(o.a));
    CHECK_EQ_U64(trowel_archive_entry_count(o.a), w.count);
    close_opened(&o);
    trowel_ctx_free(ctx);
    free(p);
    free_asm_whole(&w);
}

TEST_MAIN(TEST(test_every_packfile_cut_short_lists_all_reads_what_is_there),
          TEST(test_cut_in_the_last_padding_is_damage),
          TEST(test_every_asm_cut_short_lists_the_containers_before_the_cut),
          TEST(test_cut_asm_names_the_container_and_what_is_lost),
          TEST(test_bytes_after_the_last_container_damage_the_asm),
          TEST(test_huge_container_count_allocates_by_the_file))
