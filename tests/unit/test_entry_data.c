/*
 * Unit tests for reading an entry whole into counted memory
 * (trowel_archive_read_entry_data, what trowel mount caches), whether an
 * entry's size is known before it is read (trowel_archive_entry_size_exact)
 * and trowel_ctx_mem_in_use: the same bytes as a sink read, the memory
 * counted while kept and given back when freed, refusals that leave
 * nothing behind, and every allocation failed in turn without a leak.
 */
#include "core/core.h"
#include "test.h"

#include <string.h>

#define SZDD_FILE TROWEL_SOURCE_DIR "/tests/data/corpus/szdd/DEFAULT.PA_"
#define VSIF_FILE TROWEL_SOURCE_DIR "/fuzz/corpus/vsif/three_scenes_v3.image"

typedef struct opened {
    trowel_ctx *ctx;
    trowel_input *in;
    trowel_archive *a;
} opened;

static bool open_archive(opened *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->ctx = trowel_ctx_new();
    /* One thread: a scenes.image's worker borrows a share of the limit
     * while it reads ahead, which would move the counts compared here
     * (test_vsif_worker covers it, and that it gives all back). */
    if (o->ctx)
        trowel_ctx_set_threads(o->ctx, 1);
    return o->ctx && trowel_input_open_file(o->ctx, path, &o->in) == TROWEL_OK &&
           trowel_archive_open(o->ctx, o->in, NULL, &o->a) == TROWEL_OK;
}

static void close_archive(opened *o)
{
    trowel_archive_close(o->a);
    trowel_input_close(o->in);
    trowel_ctx_free(o->ctx);
}

/* Entry index read through a memory sink, for comparison; *sink is the
 * caller's to discard. */
static const uint8_t *sink_read(opened *o, size_t index, trowel_sink **sink, size_t *size)
{
    *size = 0;
    if (trowel_sink_open_memory(o->ctx, sink) != TROWEL_OK)
        return NULL;
    if (trowel_archive_read_entry(o->a, index, *sink) != TROWEL_OK)
        return NULL;
    return trowel_sink_data(*sink, size);
}

/* Every entry: the same bytes as a sink read, counted while kept. */
static void check_same_bytes(const char *path)
{
    opened o;
    REQUIRE(open_archive(&o, path));
    REQUIRE(trowel_archive_entry_count(o.a) > 0);
    for (size_t i = 0; i < trowel_archive_entry_count(o.a); i++) {
        trowel_sink *sink = NULL;
        size_t want_size;
        const uint8_t *want = sink_read(&o, i, &sink, &want_size);
        CHECK(want != NULL);
        uint64_t before = trowel_ctx_mem_in_use(o.ctx);
        uint8_t *data;
        size_t size;
        CHECK(trowel_archive_read_entry_data(o.a, i, &data, &size) == TROWEL_OK);
        CHECK_EQ_U64(size, want_size);
        CHECK(want && data && memcmp(data, want, size) == 0);
        CHECK_EQ_U64(trowel_ctx_mem_in_use(o.ctx), before + size);
        if (trowel_archive_entry_size_exact(o.a, i))
            CHECK_EQ_U64(size, trowel_archive_entry(o.a, i)->size);
        trowel_archive_free_data(o.a, data);
        CHECK_EQ_U64(trowel_ctx_mem_in_use(o.ctx), before);
        trowel_sink_discard(sink);
    }
    close_archive(&o);
}

static void test_entry_data_szdd_same_bytes_as_a_sink(void)
{
    check_same_bytes(SZDD_FILE);
}

static void test_entry_data_vsif_text_same_bytes_as_a_sink(void)
{
    check_same_bytes(VSIF_FILE);
}

static void test_entry_size_exact_follows_conversion(void)
{
    opened o;
    REQUIRE(open_archive(&o, SZDD_FILE));
    CHECK(trowel_archive_entry_size_exact(o.a, 0));
    CHECK(!trowel_archive_entry_size_exact(o.a, 1)); /* past the end */
    close_archive(&o);

    REQUIRE(open_archive(&o, VSIF_FILE));
    /* Text VCDs: the size in the table is the BVCD's. */
    CHECK(!trowel_archive_entry_size_exact(o.a, 0));
    uint8_t *data;
    size_t size;
    REQUIRE(trowel_archive_read_entry_data(o.a, 0, &data, &size) == TROWEL_OK);
    CHECK(size != trowel_archive_entry(o.a, 0)->size);
    trowel_archive_free_data(o.a, data);
    static const char *const raw[] = {"raw=1"};
    REQUIRE(trowel_archive_set_options(o.a, raw, 1) == TROWEL_OK);
    for (size_t i = 0; i < trowel_archive_entry_count(o.a); i++) {
        CHECK(trowel_archive_entry_size_exact(o.a, i));
        CHECK(trowel_archive_read_entry_data(o.a, i, &data, &size) == TROWEL_OK);
        CHECK_EQ_U64(size, trowel_archive_entry(o.a, i)->size);
        trowel_archive_free_data(o.a, data);
    }
    close_archive(&o);
}

static void test_entry_data_refusals_leave_nothing(void)
{
    opened o;
    REQUIRE(open_archive(&o, SZDD_FILE));
    uint8_t *data = (uint8_t *)&o;
    size_t size = 7;
    uint64_t before = trowel_ctx_mem_in_use(o.ctx);
    CHECK(trowel_archive_read_entry_data(o.a, 5, &data, &size) == TROWEL_ERR_USAGE);
    CHECK(data == NULL);
    CHECK_EQ_U64(size, 0);
    /* A limit just over what is in use: the entry cannot be kept. */
    trowel_ctx_set_mem_limit(o.ctx, before + 16);
    data = (uint8_t *)&o;
    CHECK(trowel_archive_read_entry_data(o.a, 0, &data, &size) == TROWEL_ERR_LIMIT);
    CHECK(data == NULL);
    CHECK_EQ_U64(size, 0);
    CHECK(strstr(trowel_ctx_last_error(o.ctx)->message, "over the memory limit") != NULL);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(o.ctx), before);
    trowel_archive_free_data(o.a, NULL); /* NULL: nothing */
    close_archive(&o);
}

/* Every allocation of the read failed in turn: a failure returns no data
 * and gives back all it took; a success is the right bytes. */
static void test_entry_data_every_allocation_failing(void)
{
    opened o;
    REQUIRE(open_archive(&o, VSIF_FILE));
    trowel_sink *sink = NULL;
    size_t want_size;
    const uint8_t *want = sink_read(&o, 0, &sink, &want_size);
    REQUIRE(want != NULL);
    uint64_t before = trowel_ctx_mem_in_use(o.ctx);
    int failures = 0;
    for (uint64_t k = 1; k < 200; k++) {
        o.ctx->fail_alloc_after = k;
        uint8_t *data;
        size_t size;
        trowel_status st = trowel_archive_read_entry_data(o.a, 0, &data, &size);
        bool injected = o.ctx->fail_alloc_after == 0;
        o.ctx->fail_alloc_after = 0;
        if (st == TROWEL_OK) {
            CHECK_EQ_U64(size, want_size);
            CHECK(memcmp(data, want, size) == 0);
            trowel_archive_free_data(o.a, data);
            if (!injected)
                break; /* every allocation has been failed once */
        } else {
            failures++;
            CHECK(data == NULL);
        }
        CHECK_EQ_U64(trowel_ctx_mem_in_use(o.ctx), before);
    }
    CHECK(failures > 0);
    trowel_sink_discard(sink);
    close_archive(&o);
}

TEST_MAIN(TEST(test_entry_data_szdd_same_bytes_as_a_sink),
          TEST(test_entry_data_vsif_text_same_bytes_as_a_sink),
          TEST(test_entry_size_exact_follows_conversion),
          TEST(test_entry_data_refusals_leave_nothing),
          TEST(test_entry_data_every_allocation_failing))
