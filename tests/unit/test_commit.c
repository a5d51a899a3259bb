/*
 * Tests of trowel_sinks_finish_all (src/core/commit.c): outputs that succeed
 * or fail together. Two outputs (a str2 and its ASM, say) either both
 * appear or neither; when the second one's commit fails (an injected rename
 * failure, a target that is a folder, a target that exists without
 * overwrite) the first target keeps its old bytes and no temporary is left,
 * with unnamed files and with the named-temporary fallback alike.
 */
#include "files.h"
#include "test.h"

#include "core/core.h"

#include <sys/stat.h>
#include <unistd.h>

static char dir[128];

static void path_of(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

static void put_file(const char *name, const char *text)
{
    char p[256];
    path_of(p, sizeof p, name);
    FILE *f = fopen(p, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static bool file_is(const char *name, const char *text)
{
    char p[256];
    path_of(p, sizeof p, name);
    bytes b = read_file(p);
    bool same = b.data && b.size == strlen(text) && memcmp(b.data, text, b.size) == 0;
    free(b.data);
    return same;
}

static bool exists(const char *name)
{
    char p[256];
    path_of(p, sizeof p, name);
    return access(p, F_OK) == 0;
}

static trowel_sink *sink_with(trowel_ctx *ctx, const char *name, const char *text, unsigned flags)
{
    char p[256];
    path_of(p, sizeof p, name);
    trowel_sink *s = NULL;
    if (trowel_sink_open_file(ctx, p, flags, &s) == TROWEL_OK)
        trowel_sink_write(s, text, strlen(text));
    return s;
}

static bool fresh_dir(void)
{
    char *d = make_temp_dir();
    if (!d)
        return false;
    snprintf(dir, sizeof dir, "%s", d);
    return true;
}

/* Runs one group of two outputs: a.str2_pc and b.asm_pc. */
static trowel_status finish_two(bool named, unsigned fail_at, unsigned flags_b)
{
    trowel_ctx *ctx = trowel_ctx_new();
    ctx->named_temps_only = named;
    ctx->fail_commit_at = fail_at;
    trowel_sink *s[2] = {sink_with(ctx, "a.str2_pc", "new str2", TROWEL_SINK_OVERWRITE),
                         sink_with(ctx, "b.asm_pc", "new asm", flags_b)};
    trowel_status st = TROWEL_ERR_IO;
    if (s[0] && s[1])
        st = trowel_sinks_finish_all(s, 2);
    else
        trowel_sink_discard(s[0]), trowel_sink_discard(s[1]);
    trowel_ctx_free(ctx);
    return st;
}

static void test_new_outputs_appear_together(void)
{
    for (int named = 0; named < 2; named++) {
        REQUIRE(fresh_dir());
        CHECK(finish_two(named, 0, 0) == TROWEL_OK);
        CHECK(file_is("a.str2_pc", "new str2"));
        CHECK(file_is("b.asm_pc", "new asm"));
        CHECK_EQ_U64(count_dir_entries(dir), 2);
        remove_tree(dir);
    }
}

static void test_replacing_both_succeeds(void)
{
    for (int named = 0; named < 2; named++) {
        REQUIRE(fresh_dir());
        put_file("a.str2_pc", "old str2");
        put_file("b.asm_pc", "old asm");
        CHECK(finish_two(named, 0, TROWEL_SINK_OVERWRITE) == TROWEL_OK);
        CHECK(file_is("a.str2_pc", "new str2"));
        CHECK(file_is("b.asm_pc", "new asm"));
        CHECK_EQ_U64(count_dir_entries(dir), 2);
        remove_tree(dir);
    }
}

static void test_second_commit_failing_leaves_the_first_original(void)
{
    for (int named = 0; named < 2; named++) {
        for (unsigned fail_at = 1; fail_at <= 2; fail_at++) {
            REQUIRE(fresh_dir());
            put_file("a.str2_pc", "old str2");
            put_file("b.asm_pc", "old asm");
            trowel_ctx *ctx = trowel_ctx_new();
            ctx->named_temps_only = named;
            ctx->fail_commit_at = fail_at;
            trowel_sink *s[2] = {sink_with(ctx, "a.str2_pc", "new str2", TROWEL_SINK_OVERWRITE),
                                 sink_with(ctx, "b.asm_pc", "new asm", TROWEL_SINK_OVERWRITE)};
            CHECK(trowel_sinks_finish_all(s, 2) == TROWEL_ERR_IO);
            char want[256];
            snprintf(want, sizeof want, "cannot create %s/%s: Input/output error", dir,
                     fail_at == 1 ? "a.str2_pc" : "b.asm_pc");
            CHECK_STR(trowel_ctx_last_error(ctx)->message, want);
            trowel_ctx_free(ctx);
            CHECK(file_is("a.str2_pc", "old str2"));
            CHECK(file_is("b.asm_pc", "old asm"));
            CHECK_EQ_U64(count_dir_entries(dir), 2); /* no temporary, no backup left */
            remove_tree(dir);
        }
    }
}

static void test_a_new_first_output_is_removed_when_the_second_fails(void)
{
    REQUIRE(fresh_dir());
    put_file("b.asm_pc", "old asm");
    CHECK(finish_two(false, 2, TROWEL_SINK_OVERWRITE) == TROWEL_ERR_IO);
    CHECK(!exists("a.str2_pc"));
    CHECK(file_is("b.asm_pc", "old asm"));
    CHECK_EQ_U64(count_dir_entries(dir), 1);
    remove_tree(dir);
}

static void test_a_target_refused_before_any_rename(void)
{
    REQUIRE(fresh_dir());
    put_file("a.str2_pc", "old str2");
    /* b appears after its sink was opened, and may not be replaced:
     * refused while preparing, before any rename. */
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s[2] = {sink_with(ctx, "a.str2_pc", "new str2", TROWEL_SINK_OVERWRITE),
                         sink_with(ctx, "b.asm_pc", "new asm", 0)};
    REQUIRE(s[0] && s[1]);
    put_file("b.asm_pc", "someone else's");
    CHECK(trowel_sinks_finish_all(s, 2) == TROWEL_ERR_EXISTS);
    trowel_ctx_free(ctx);
    CHECK(file_is("a.str2_pc", "old str2"));
    CHECK(file_is("b.asm_pc", "someone else's"));
    CHECK_EQ_U64(count_dir_entries(dir), 2);
    remove_tree(dir);

    REQUIRE(fresh_dir());
    put_file("a.str2_pc", "old str2");
    char p[256];
    path_of(p, sizeof p, "b.asm_pc");
    mkdir(p, 0755);
    CHECK(finish_two(true, 0, TROWEL_SINK_OVERWRITE) == TROWEL_ERR_IO);
    CHECK(file_is("a.str2_pc", "old str2"));
    CHECK_EQ_U64(count_dir_entries(dir), 2);
    remove_tree(dir);
}

static void test_only_file_sinks_finish_together(void)
{
    REQUIRE(fresh_dir());
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s[2] = {sink_with(ctx, "a.str2_pc", "new str2", 0), NULL};
    trowel_sink_open_memory(ctx, &s[1]);
    CHECK(trowel_sinks_finish_all(s, 2) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "(memory) is not a file output: only files finish together");
    CHECK(!exists("a.str2_pc"));
    CHECK_EQ_U64(count_dir_entries(dir), 0);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

TEST_MAIN(TEST(test_new_outputs_appear_together), TEST(test_replacing_both_succeeds),
          TEST(test_second_commit_failing_leaves_the_first_original),
          TEST(test_a_new_first_output_is_removed_when_the_second_fails),
          TEST(test_a_target_refused_before_any_rename), TEST(test_only_file_sinks_finish_together))
