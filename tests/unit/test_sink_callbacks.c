/*
 * Callback sinks (trowel_sink_open_callbacks): a real archive (a VPP of a
 * 300 KB and a small file, an SZDD of a small one) built by trowel_create
 * into the test's write function comes out byte for byte as the same
 * create into a file sink, in few calls (writes gathered in 64 KiB), with
 * finish called once after the last byte and discard never; a failing
 * write surfaces
 * with the caller's status (in the create when the archive outgrows the
 * buffer, else in the finish), fails every later write, and ends the sink
 * in discard, not finish; a failing finish is the finish's result; a
 * discarded sink and a refused open call discard once.
 */
#include "files.h"
#include "test.h"

#include <trowel/trowel.h>

#define PIECE_MAX ((size_t)64 * 1024)

/* The caller's side: what it was given and how it was used. */
typedef struct taken {
    uint8_t *data;
    size_t len, cap;
    unsigned writes, finishes, discards;
    size_t len_at_finish;      /* len when finish was called */
    unsigned fail_write_at;    /* this write call (1-based) fails; 0: none */
    trowel_status fail_status; /* what it returns then */
    trowel_status finish_status;
} taken;

static trowel_status take_write(void *user, const void *data, size_t n)
{
    taken *t = user;
    t->writes++;
    if (t->fail_write_at && t->writes == t->fail_write_at)
        return t->fail_status;
    if (t->len + n > t->cap) {
        size_t cap = (t->len + n) * 2;
        uint8_t *p = realloc(t->data, cap);
        if (!p)
            return TROWEL_ERR_NOMEM;
        t->data = p;
        t->cap = cap;
    }
    memcpy(t->data + t->len, data, n);
    t->len += n;
    return TROWEL_OK;
}

static trowel_status take_finish(void *user)
{
    taken *t = user;
    t->finishes++;
    t->len_at_finish = t->len;
    return t->finish_status;
}

static void take_discard(void *user)
{
    ((taken *)user)->discards++;
}

static const trowel_sink_ops take_ops = {
    .write = take_write,
    .finish = take_finish,
    .discard = take_discard,
};

/* The sources: big.bin (300,000 bytes that do not repeat in short runs)
 * and note.txt, written into dir. */
static void write_sources(const char *dir, char *big, char *small, size_t cap)
{
    size_t n = 300000;
    uint8_t *b = malloc(n);
    REQUIRE(b != NULL);
    uint32_t x = 0x12345678u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (uint8_t)(x >> 24);
    }
    snprintf(big, cap, "%s/big.bin", dir);
    snprintf(small, cap, "%s/note.txt", dir);
    write_file(big, b, n);
    static const char note[] = "a short note, stored and compressed alike\n";
    write_file(small, note, sizeof note - 1);
    free(b);
}

/* trowel_create of fmt from the sources into s; the create's status. */
static trowel_status create_into(trowel_ctx *ctx, const char *fmt, const trowel_source *src,
                                 size_t n, trowel_sink *s)
{
    trowel_create_params p = {.sources = src, .source_count = n};
    return trowel_create(ctx, trowel_format_find(fmt), &p, s);
}

/* The same archive through a file sink, read back ({NULL, 0} on failure). */
static bytes create_file(trowel_ctx *ctx, const char *dir, const char *fmt,
                         const trowel_source *src, size_t n)
{
    char path[600];
    snprintf(path, sizeof path, "%s/out.%s", dir, fmt);
    trowel_sink *s;
    bytes none = {NULL, 0};
    if (trowel_sink_open_file(ctx, path, TROWEL_SINK_OVERWRITE, &s) != TROWEL_OK)
        return none;
    if (create_into(ctx, fmt, src, n, s) != TROWEL_OK) {
        trowel_sink_discard(s);
        return none;
    }
    if (trowel_sink_finish(s) != TROWEL_OK)
        return none;
    return read_file(path);
}

static void check_same_as_file(const char *fmt, size_t source_count)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char big[600], small[600];
    write_sources(dir, big, small, sizeof big);
    trowel_source src[] = {{"note.txt", small}, {"big.bin", big}};
    trowel_ctx *ctx = trowel_ctx_new();
    bytes want = create_file(ctx, dir, fmt, src, source_count);
    REQUIRE(want.size > 0);

    taken t = {0};
    trowel_sink *s;
    REQUIRE(trowel_sink_open_callbacks(ctx, &take_ops, &t, "archive", &s) == TROWEL_OK);
    CHECK(create_into(ctx, fmt, src, source_count, s) == TROWEL_OK);
    CHECK_EQ_U64(trowel_sink_written(s), want.size);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK_EQ_U64(t.finishes, 1);
    CHECK_EQ_U64(t.discards, 0);
    CHECK_EQ_U64(t.len_at_finish, want.size); /* finish came after the last byte */
    CHECK_EQ_U64(t.len, want.size);
    CHECK(t.len == want.size && memcmp(t.data, want.data, want.size) == 0);
    /* Gathered: any two calls in a row carry more than the 64 KiB buffer
     * (a flush happens only when the next write would not fit). */
    CHECK(t.writes <= 2 * (want.size / PIECE_MAX) + 2);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    free(t.data);
    free(want.data);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

static void test_vpp_same_as_file(void)
{
    check_same_as_file("vpp", 2);
}

static void test_szdd_same_as_file(void)
{
    check_same_as_file("szdd", 1);
}

/* A write that fails at call fail_at with TROWEL_ERR_LIMIT (a status no
 * other step of a create gives here, so it is the caller's that shows). */
static void check_failing_write(const char *fmt, size_t source_count, unsigned fail_at,
                                bool create_sees_it)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char big[600], small[600];
    write_sources(dir, big, small, sizeof big);
    trowel_source src[] = {{"note.txt", small}, {"big.bin", big}};
    trowel_ctx *ctx = trowel_ctx_new();
    taken t = {.fail_write_at = fail_at, .fail_status = TROWEL_ERR_LIMIT};
    trowel_sink *s;
    REQUIRE(trowel_sink_open_callbacks(ctx, &take_ops, &t, "archive", &s) == TROWEL_OK);
    trowel_status created = create_into(ctx, fmt, src, source_count, s);
    if (create_sees_it) {
        CHECK_EQ_U64(created, TROWEL_ERR_LIMIT);
        CHECK(strstr(trowel_ctx_last_error(ctx)->message, "the write function failed") != NULL);
        /* every later write fails the same way, without calling write */
        unsigned before = t.writes;
        CHECK_EQ_U64(trowel_sink_write(s, "x", 1), TROWEL_ERR_LIMIT);
        CHECK_EQ_U64(t.writes, before);
    } else {
        CHECK_EQ_U64(created, TROWEL_OK); /* all still in the sink's buffer */
        CHECK_EQ_U64(t.writes, 0);
    }
    CHECK_EQ_U64(trowel_sink_finish(s), TROWEL_ERR_LIMIT);
    if (!create_sees_it)
        CHECK(strstr(trowel_ctx_last_error(ctx)->message, "the write function failed") != NULL);
    CHECK_EQ_U64(t.writes, fail_at);
    CHECK_EQ_U64(t.finishes, 0);
    CHECK_EQ_U64(t.discards, 1);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    free(t.data);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

static void test_failing_first_write_fails_the_create(void)
{
    check_failing_write("vpp", 2, 1, true);
}

static void test_failing_later_write_fails_the_create(void)
{
    check_failing_write("vpp", 2, 3, true);
}

static void test_failing_write_of_a_small_archive_fails_the_finish(void)
{
    check_failing_write("szdd", 1, 1, false);
}

static void test_failing_finish_is_the_result(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    taken t = {.finish_status = TROWEL_ERR_IO};
    trowel_sink *s;
    REQUIRE(trowel_sink_open_callbacks(ctx, &take_ops, &t, NULL, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "hello", 5) == TROWEL_OK);
    CHECK_EQ_U64(trowel_sink_finish(s), TROWEL_ERR_IO);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "(callbacks)") != NULL);
    CHECK_EQ_U64(t.writes, 1);
    CHECK_EQ_U64(t.len_at_finish, 5);
    CHECK_EQ_U64(t.finishes, 1);
    CHECK_EQ_U64(t.discards, 0);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    free(t.data);
    trowel_ctx_free(ctx);
}

static void test_discard_and_refused_open_call_discard(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    taken t = {0};
    trowel_sink *s;
    REQUIRE(trowel_sink_open_callbacks(ctx, &take_ops, &t, "x", &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "partial", 7) == TROWEL_OK);
    trowel_sink_discard(s);
    CHECK_EQ_U64(t.discards, 1);
    CHECK_EQ_U64(t.finishes, 0);
    CHECK_EQ_U64(t.writes, 0); /* still buffered: thrown away, never written */

    /* Only finish and discard, no write: refused, and user released. */
    trowel_sink_ops ops = take_ops;
    ops.write = NULL;
    s = (trowel_sink *)&t;
    CHECK_EQ_U64(trowel_sink_open_callbacks(ctx, &ops, &t, "x", &s), TROWEL_ERR_USAGE);
    CHECK(s == NULL);
    CHECK_EQ_U64(t.discards, 2);
    CHECK_EQ_U64(trowel_sink_open_callbacks(ctx, NULL, &t, "x", &s), TROWEL_ERR_USAGE);
    CHECK_EQ_U64(t.discards, 2);

    /* Neither finish nor discard: a sink that only writes. */
    taken w = {0};
    ops = (trowel_sink_ops){.write = take_write};
    REQUIRE(trowel_sink_open_callbacks(ctx, &ops, &w, "x", &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "abc", 3) == TROWEL_OK);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK(w.len == 3 && memcmp(w.data, "abc", 3) == 0);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    free(w.data);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_vpp_same_as_file), TEST(test_szdd_same_as_file),
          TEST(test_failing_first_write_fails_the_create),
          TEST(test_failing_later_write_fails_the_create),
          TEST(test_failing_write_of_a_small_archive_fails_the_finish),
          TEST(test_failing_finish_is_the_result), TEST(test_discard_and_refused_open_call_discard))
