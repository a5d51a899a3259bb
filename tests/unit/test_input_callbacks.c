/*
 * Callback inputs (trowel_input_open_callbacks): real archives of several
 * formats served from the test's memory through read/size/close functions,
 * named without a folder so that no file is behind them, open as the same
 * format as the file does, with the same entries and the same bytes in
 * each; a failing read surfaces with the caller's status and its offset;
 * close is called once, also when the open fails.
 */
#include "files.h"
#include "test.h"

#include <trowel/trowel.h>

#define CORPUS TROWEL_CORPUS_DIR "/"

/* The caller's side: bytes in memory, how it was used. */
typedef struct served {
    bytes b;
    unsigned reads;
    uint64_t fail_at; /* a read touching this offset fails (UINT64_MAX: none) */
    int closes;
} served;

static trowel_status served_read(void *user, uint64_t off, void *dst, size_t n)
{
    served *s = user;
    s->reads++;
    if (s->fail_at >= off && s->fail_at - off < n)
        return TROWEL_ERR_IO;
    memcpy(dst, s->b.data + off, n);
    return TROWEL_OK;
}

static trowel_status served_size(void *user, uint64_t *size)
{
    *size = ((served *)user)->b.size;
    return TROWEL_OK;
}

static void served_close(void *user)
{
    ((served *)user)->closes++;
}

static const trowel_input_ops served_ops = {
    .read_at = served_read,
    .size = served_size,
    .close = served_close,
};

/* Every entry of in's archive read whole: count, format id, and the
 * concatenation of names and bytes, for comparing two inputs. */
typedef struct listing {
    const char *format;
    size_t count;
    uint8_t *all;
    size_t len;
} listing;

static void append(listing *l, const void *p, size_t n)
{
    l->all = realloc(l->all, l->len + n + 1);
    if (n) /* an empty entry's bytes may be NULL */
        memcpy(l->all + l->len, p, n);
    l->len += n;
}

static bool list_all(trowel_ctx *ctx, trowel_input *in, listing *l)
{
    *l = (listing){0};
    trowel_archive *a;
    if (trowel_archive_open(ctx, in, NULL, &a) != TROWEL_OK)
        return false;
    l->format = trowel_format_id(trowel_archive_format(a));
    l->count = trowel_archive_entry_count(a);
    bool ok = true;
    for (size_t i = 0; ok && i < l->count; i++) {
        const char *name = trowel_archive_entry(a, i)->name;
        append(l, name, strlen(name) + 1);
        uint8_t *data;
        size_t size;
        ok = trowel_archive_read_entry_data(a, i, &data, &size) == TROWEL_OK;
        if (ok) {
            append(l, data, size);
            trowel_archive_free_data(a, data);
        }
    }
    trowel_archive_close(a);
    return ok;
}

static void same_as_file(const char *rel, const char *format)
{
    char path[512];
    snprintf(path, sizeof path, CORPUS "%s", rel);
    if (!have_file(path))
        return;
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *file, *cb;
    REQUIRE(trowel_input_open_file(ctx, path, &file) == TROWEL_OK);
    listing want, got;
    REQUIRE(list_all(ctx, file, &want));
    trowel_input_close(file);

    served s = {.b = read_file(path), .fail_at = UINT64_MAX};
    REQUIRE(s.b.data != NULL);
    const char *base = strrchr(rel, '/') + 1; /* no folder: nothing on disk */
    REQUIRE(trowel_input_open_callbacks(ctx, &served_ops, &s, base, &cb) == TROWEL_OK);
    CHECK_EQ_U64(trowel_input_size(cb), s.b.size);
    CHECK_STR(trowel_input_name(cb), base);
    REQUIRE(list_all(ctx, cb, &got));
    CHECK_STR(want.format, format);
    CHECK_STR(got.format, format);
    CHECK_EQ_U64(got.count, want.count);
    CHECK(want.count > 0);
    CHECK_EQ_U64(got.len, want.len);
    CHECK(got.len == want.len && memcmp(got.all, want.all, got.len) == 0);
    CHECK(s.reads > 0);
    CHECK_EQ_U64(s.closes, 0);
    trowel_input_close(cb);
    CHECK_EQ_U64(s.closes, 1);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    free(want.all);
    free(got.all);
    free(s.b.data);
    trowel_ctx_free(ctx);
}

static void test_vpp(void)
{
    same_as_file("volition/rfg/cloth_sim.vpp_pc", "vpp");
}

static void test_vsif(void)
{
    same_as_file("valve/ez2/scenes/scenes.image", "vsif");
}

static void test_szdd(void)
{
    same_as_file("szdd/GLOBE3.AN_", "szdd");
}

static void test_groff(void)
{
    same_as_file("trespasser/scn/LastScene.scn", "groff");
}

static void test_cost(void)
{
    same_as_file("scumm/openquest/zif.cost", "scumm-cost");
}

/* A read that fails reaches the caller of the library with the callback's
 * status and the offset read. */
static void test_failed_read_reports_status_and_offset(void)
{
    const char *path = CORPUS "volition/rfg/cloth_sim.vpp_pc";
    if (!have_file(path))
        return;
    trowel_ctx *ctx = trowel_ctx_new();
    served s = {.b = read_file(path), .fail_at = 0};
    REQUIRE(s.b.data != NULL);
    trowel_input *cb;
    REQUIRE(trowel_input_open_callbacks(ctx, &served_ops, &s, "x.vpp_pc", &cb) == TROWEL_OK);
    trowel_archive *a = NULL;
    trowel_status st = trowel_archive_open(ctx, cb, trowel_format_find("vpp"), &a);
    CHECK(st == TROWEL_ERR_IO);
    CHECK(a == NULL);
    const trowel_error *e = trowel_ctx_last_error(ctx);
    CHECK(e->status == TROWEL_ERR_IO);
    CHECK_EQ_U64(e->offset, 0);
    CHECK(strstr(e->message, "read function failed") != NULL);
    trowel_archive_close(a);
    trowel_input_close(cb);
    CHECK_EQ_U64(s.closes, 1);
    free(s.b.data);
    trowel_ctx_free(ctx);
}

static trowel_status no_size(void *user, uint64_t *size)
{
    (void)user;
    (void)size;
    return TROWEL_ERR_IO;
}

/* An open that fails still releases the caller's state, once; a table
 * without read_at is a usage error. */
static void test_failed_open_closes_user(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    served s = {.fail_at = UINT64_MAX};
    trowel_input_ops ops = served_ops;
    ops.size = no_size;
    trowel_input *cb = (trowel_input *)&s;
    CHECK(trowel_input_open_callbacks(ctx, &ops, &s, "x", &cb) == TROWEL_ERR_IO);
    CHECK(cb == NULL);
    CHECK_EQ_U64(s.closes, 1);
    ops = served_ops;
    ops.read_at = NULL;
    CHECK(trowel_input_open_callbacks(ctx, &ops, &s, "x", &cb) == TROWEL_ERR_USAGE);
    CHECK_EQ_U64(s.closes, 2);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_vpp), TEST(test_vsif), TEST(test_szdd), TEST(test_groff), TEST(test_cost),
          TEST(test_failed_read_reports_status_and_offset), TEST(test_failed_open_closes_user))
