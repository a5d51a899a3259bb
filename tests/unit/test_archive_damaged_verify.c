/*
 * verify fails whenever opening found damage (src/core/archive.c), even
 * when every check after it passes: a good Volition packfile marked damaged
 * (as a format's open does after warning) fails with one problem that says
 * so; unmarked, the same archive verifies; an archive whose own checks
 * already failed gets no second problem for its damage.
 */
#include "files.h"
#include "test.h"

#include "core/module.h"

#define SEEDS TROWEL_SOURCE_DIR "/fuzz/corpus/vpp/"

typedef struct problems {
    int count;
    char last[512];
} problems;

static void on_problem(void *user, const trowel_error *e)
{
    problems *p = user;
    p->count++;
    snprintf(p->last, sizeof p->last, "%s", e->message);
}

/* Verifies the file at path, marked damaged first when asked. */
static trowel_status verify_file(const char *path, bool mark, problems *p)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    trowel_status s = trowel_input_open_file(ctx, path, &in);
    if (s == TROWEL_OK)
        s = trowel_archive_open(ctx, in, NULL, &a);
    if (s == TROWEL_OK && mark)
        trowel_archive_mark_damaged(a);
    if (s == TROWEL_OK)
        s = trowel_archive_verify(a, on_problem, p);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return s;
}

static void test_damage_found_at_open_fails_verify(void)
{
    problems p = {0};
    CHECK_EQ_U64(verify_file(SEEDS "synthetic_v1.vpp", false, &p), TROWEL_OK);
    CHECK_EQ_U64(p.count, 0);
    CHECK_EQ_U64(verify_file(SEEDS "synthetic_v1.vpp", true, &p), TROWEL_ERR_VERIFY);
    CHECK_EQ_U64(p.count, 1);
    CHECK(strstr(p.last, "damaged: opening it found what cannot be read") != NULL);
}

static void test_damage_adds_nothing_to_problems_already_found(void)
{
    /* This seed's own checks fail (its `start` fields are not where the
     * entries are): marking it damaged adds no problem. */
    problems before = {0}, after = {0};
    CHECK_EQ_U64(verify_file(SEEDS "synthetic_raw.vpp_pc", false, &before), TROWEL_ERR_VERIFY);
    CHECK_EQ_U64(verify_file(SEEDS "synthetic_raw.vpp_pc", true, &after), TROWEL_ERR_VERIFY);
    CHECK(before.count > 0);
    CHECK_EQ_U64(after.count, before.count);
}

TEST_MAIN(TEST(test_damage_found_at_open_fails_verify),
          TEST(test_damage_adds_nothing_to_problems_already_found))
