/*
 * Core's temporary storage (src/core/spill.c): small contents stay in
 * memory, larger ones move to an unnamed file in $TMPDIR that leaves no
 * name behind; either way the input reads back exactly the bytes written;
 * the threshold follows a small memory limit; writes after the read side
 * is taken, and a $TMPDIR that cannot hold a file, fail clearly.
 */
#include "files.h"
#include "test.h"

#include "core/input.h"
#include "core/spill.h"

#include <dirent.h>
#include <stdlib.h>

static uint8_t pattern_byte(size_t i)
{
    return (uint8_t)(i * 131 + (i >> 12));
}

/* Writes n pattern bytes in chunks of chunk. */
static bool write_pattern(trowel_spill *sp, size_t n, size_t chunk)
{
    uint8_t *b = malloc(chunk);
    bool ok = true;
    for (size_t at = 0; ok && at < n; at += chunk) {
        size_t k = n - at < chunk ? n - at : chunk;
        for (size_t i = 0; i < k; i++)
            b[i] = pattern_byte(at + i);
        ok = trowel_spill_write(sp, b, k) == TROWEL_OK;
    }
    free(b);
    return ok;
}

/* The spill's input holds exactly the n pattern bytes. */
static bool reads_back(trowel_spill *sp, size_t n)
{
    trowel_input *in, *again;
    if (trowel_spill_input(sp, &in) != TROWEL_OK || trowel_spill_input(sp, &again) != TROWEL_OK)
        return false;
    if (in != again || trowel_input_size(in) != n)
        return false;
    uint8_t *got = malloc(n ? n : 1);
    bool same = trowel_input_copy(in, 0, got, n) == TROWEL_OK;
    for (size_t i = 0; same && i < n; i++)
        same = got[i] == pattern_byte(i);
    /* and a short read from the middle, through the cache */
    uint8_t mid[7];
    if (same && n > 20) {
        same = trowel_input_copy(in, n / 2, mid, sizeof mid) == TROWEL_OK;
        for (size_t i = 0; same && i < sizeof mid; i++)
            same = mid[i] == pattern_byte(n / 2 + i);
    }
    free(got);
    return same;
}

static size_t names_in(const char *dir)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

static void test_small_stays_in_memory(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_spill *sp;
    REQUIRE(trowel_spill_open(ctx, "a test spill", &sp) == TROWEL_OK);
    REQUIRE(write_pattern(sp, 100000, 3000));
    CHECK(!trowel_spill_on_disk(sp));
    CHECK_EQ_U64(trowel_spill_size(sp), 100000);
    CHECK(reads_back(sp, 100000));
    trowel_spill_close(sp);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    trowel_ctx_free(ctx);
}

static void test_large_moves_to_an_unnamed_file(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char tmp[128];
    snprintf(tmp, sizeof tmp, "%s", dir);
    setenv("TMPDIR", tmp, 1);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_spill *sp;
    REQUIRE(trowel_spill_open(ctx, "a test spill", &sp) == TROWEL_OK);
    const size_t n = (3u << 20) + 17;
    REQUIRE(write_pattern(sp, n, 65536));
    CHECK(trowel_spill_on_disk(sp));
    CHECK_EQ_U64(trowel_spill_size(sp), n);
    CHECK_EQ_U64(names_in(tmp), 0); /* unnamed while in use */
    CHECK(reads_back(sp, n));
    CHECK(trowel_spill_write(sp, "x", 1) == TROWEL_ERR_USAGE); /* being read */
    trowel_spill_close(sp);
    CHECK_EQ_U64(names_in(tmp), 0);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    trowel_ctx_free(ctx);
    unsetenv("TMPDIR");
    rmdir(tmp);
}

/* Under a 1 MiB memory limit a tenth of it is the most kept in memory. */
static void test_threshold_follows_the_limit(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_mem_limit(ctx, 1u << 20);
    trowel_spill *sp;
    REQUIRE(trowel_spill_open(ctx, "a test spill", &sp) == TROWEL_OK);
    REQUIRE(write_pattern(sp, 100000, 10000));
    CHECK(!trowel_spill_on_disk(sp));
    REQUIRE(write_pattern(sp, 0, 1) && trowel_spill_write(sp, "", 0) == TROWEL_OK);
    trowel_spill_close(sp);
    REQUIRE(trowel_spill_open(ctx, "a test spill", &sp) == TROWEL_OK);
    REQUIRE(write_pattern(sp, 200000, 10000));
    CHECK(trowel_spill_on_disk(sp));
    CHECK(reads_back(sp, 200000));
    trowel_spill_close(sp);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    trowel_ctx_free(ctx);
}

static void test_unusable_tmpdir_fails_clearly(void)
{
    setenv("TMPDIR", "/nonexistent/trowel-spill-test", 1);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_spill *sp;
    REQUIRE(trowel_spill_open(ctx, "the base archive's copy", &sp) == TROWEL_OK);
    CHECK(!write_pattern(sp, 2u << 20, 65536));
    const trowel_error *e = trowel_ctx_last_error(ctx);
    CHECK(e->status == TROWEL_ERR_IO);
    CHECK(strstr(e->message, "the base archive's copy") != NULL);
    CHECK(strstr(e->message, "/nonexistent/trowel-spill-test") != NULL);
    CHECK(trowel_spill_write(sp, "x", 1) == TROWEL_ERR_IO); /* stays failed */
    trowel_input *in;
    CHECK(trowel_spill_input(sp, &in) == TROWEL_ERR_IO);
    CHECK(in == NULL);
    trowel_spill_close(sp);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    trowel_ctx_free(ctx);
    unsetenv("TMPDIR");
}

TEST_MAIN(TEST(test_small_stays_in_memory), TEST(test_large_moves_to_an_unnamed_file),
          TEST(test_threshold_follows_the_limit), TEST(test_unusable_tmpdir_fails_clearly))
