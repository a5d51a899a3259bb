/*
 * Staged output folders (TROWEL_OUTDIR_STAGED): a folder that does not
 * exist is made at once, empty, to hold its name (its parents as ever), is
 * written under a private name beside it and filled, whole, at
 * trowel_outdir_finish; one that exists is written in place. Nothing is
 * left behind when the folder is given up, when nothing was written, or
 * when files appear in the held name meanwhile; the temp handler hears of
 * both names; kill -9 leaves the private folder, and the next staged
 * folder opened beside it (or into the folder it was for) removes it (a
 * live writer's is kept); and trowel_remove_temp removes a staged tree of
 * any depth without following its links, and any other folder only when
 * empty.
 */
#include "core/core.h"
#include "files.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static trowel_status put(trowel_outdir *d, const char *name, const char *text)
{
    trowel_sink *s;
    trowel_status st = trowel_outdir_create(d, name, &s);
    if (st != TROWEL_OK)
        return st;
    st = trowel_sink_write(s, text, strlen(text));
    return st == TROWEL_OK ? trowel_sink_finish(s) : (trowel_sink_discard(s), st);
}

static bool holds(const char *path, const char *text)
{
    bytes b = read_file(path);
    bool same = b.data && b.size == strlen(text) && memcmp(b.data, text, b.size) == 0;
    free(b.data);
    return same;
}

/* What the temp handler heard: the last name, and how many are live. */
typedef struct heard {
    char name[64];
    int live;
} heard;

static void hear(void *user, int dirfd, const char *name, bool live)
{
    (void)dirfd;
    heard *h = user;
    snprintf(h->name, sizeof h->name, "%s", name);
    h->live += live ? 1 : -1;
}

static void test_a_fresh_folder_appears_whole(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    trowel_ctx *ctx = trowel_ctx_new();
    heard h = {{0}, 0};
    trowel_ctx_set_temp_handler(ctx, hear, &h);
    char path[640], parent[512], stage[64], file[700];
    snprintf(parent, sizeof parent, "%s/made/too", dir); /* neither exists */
    snprintf(path, sizeof path, "%s/out/", parent); /* a trailing slash */
    snprintf(stage, sizeof stage, ".trowel-%ld-stage0", (long)getpid());
    trowel_outdir *d;
    REQUIRE(trowel_outdir_open(ctx, path, TROWEL_OUTDIR_STAGED, &d) == TROWEL_OK);
    CHECK(h.live == 2 && strcmp(h.name, stage) == 0); /* "out", then the stage */
    CHECK(put(d, "one.txt", "one") == TROWEL_OK);
    CHECK(put(d, "sub/deeper/two.txt", "two") == TROWEL_OK);
    CHECK(put(d, "sub/deeper/two.txt", "again") == TROWEL_ERR_CORRUPT); /* a duplicate */
    CHECK(count_dir_entries(parent) == 2 && exists_in(parent, stage)); /* and "out", held */
    snprintf(file, sizeof file, "%s/out", parent);
    CHECK(count_dir_entries(file) == 0);
    CHECK(trowel_outdir_finish(d) == TROWEL_OK);
    CHECK(put(d, "late.txt", "late") == TROWEL_ERR_USAGE);
    CHECK(h.live == 0);
    CHECK(count_dir_entries(dir) == 1 && count_dir_entries(parent) == 1);
    snprintf(file, sizeof file, "%s/out/one.txt", parent);
    CHECK(holds(file, "one"));
    snprintf(file, sizeof file, "%s/out/sub/deeper/two.txt", parent);
    CHECK(holds(file, "two"));
    trowel_outdir_close(d);
    CHECK(exists_in(parent, "out"));
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

/* Two runs into sibling fresh folders whose parent is missing: each
 * makes the parent as ever, and both folders appear whole. */
static void test_sibling_fresh_folders_both_appear(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    trowel_ctx *ctx = trowel_ctx_new();
    char x[512], y[512], file[600];
    snprintf(x, sizeof x, "%s/p/x", dir);
    snprintf(y, sizeof y, "%s/p/y", dir);
    trowel_outdir *dx, *dy;
    REQUIRE(trowel_outdir_open(ctx, x, TROWEL_OUTDIR_STAGED, &dx) == TROWEL_OK);
    REQUIRE(trowel_outdir_open(ctx, y, TROWEL_OUTDIR_STAGED, &dy) == TROWEL_OK);
    CHECK(put(dx, "x.txt", "x") == TROWEL_OK);
    CHECK(put(dy, "y.txt", "y") == TROWEL_OK);
    CHECK(trowel_outdir_finish(dx) == TROWEL_OK);
    CHECK(trowel_outdir_finish(dy) == TROWEL_OK);
    trowel_outdir_close(dx);
    trowel_outdir_close(dy);
    snprintf(file, sizeof file, "%s/x.txt", x);
    CHECK(holds(file, "x"));
    snprintf(file, sizeof file, "%s/y.txt", y);
    CHECK(holds(file, "y"));
    snprintf(file, sizeof file, "%s/p", dir);
    CHECK(count_dir_entries(file) == 2);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

static void test_an_existing_folder_is_written_in_place(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_outdir *d;
    REQUIRE(trowel_outdir_open(ctx, dir, TROWEL_OUTDIR_STAGED, &d) == TROWEL_OK);
    CHECK(put(d, "at-once.txt", "now") == TROWEL_OK);
    char file[600];
    snprintf(file, sizeof file, "%s/at-once.txt", dir);
    CHECK(holds(file, "now")); /* before the finish */
    /* A name of trowel's temporaries would be taken for a stale one later. */
    CHECK(put(d, "a/.trowel-5-stage0/x.txt", "x") == TROWEL_ERR_UNSAFE_PATH);
    CHECK(put(d, ".trowel-5-stage0/x.txt", "x") == TROWEL_ERR_UNSAFE_PATH);
    CHECK(put(d, "a/.trowel-5-0", "x") == TROWEL_ERR_UNSAFE_PATH); /* a file too */
    static char long_serial[200];
    snprintf(long_serial, sizeof long_serial, ".trowel-5-stage%0120d/x.txt", 0);
    CHECK(put(d, long_serial, "x") == TROWEL_ERR_UNSAFE_PATH);
    CHECK(put(d, "a/.trowel-x-0/y.txt", "kept") == TROWEL_OK); /* no pid: not one */
    CHECK(put(d, "a/b.trowel-5-0", "kept") == TROWEL_OK);
    CHECK(count_dir_entries(dir) == 2);
    CHECK(trowel_outdir_finish(d) == TROWEL_OK);
    trowel_outdir_close(d);
    CHECK(holds(file, "now"));
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

/* Given up (closed unfinished), or finished with every output discarded:
 * no folder, no private one, no parent made for it. */
static void test_nothing_is_left_when_nothing_is_published(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    trowel_ctx *ctx = trowel_ctx_new();
    char path[512];
    snprintf(path, sizeof path, "%s/p/out", dir);
    trowel_outdir *d;
    REQUIRE(trowel_outdir_open(ctx, path, TROWEL_OUTDIR_STAGED, &d) == TROWEL_OK);
    CHECK(put(d, "a/b/written.txt", "x") == TROWEL_OK);
    trowel_outdir_close(d); /* never finished */
    CHECK(count_dir_entries(dir) == 0);

    REQUIRE(trowel_outdir_open(ctx, path, TROWEL_OUTDIR_STAGED, &d) == TROWEL_OK);
    trowel_sink *s;
    REQUIRE(trowel_outdir_create(d, "a/partial.bin", &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "part", 4) == TROWEL_OK);
    trowel_sink_discard(s);
    CHECK(trowel_outdir_finish(d) == TROWEL_OK);
    trowel_outdir_close(d);
    CHECK(count_dir_entries(dir) == 0);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

static void test_a_folder_others_wrote_into_is_not_replaced(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    trowel_ctx *ctx = trowel_ctx_new();
    char path[512];
    snprintf(path, sizeof path, "%s/out", dir);
    trowel_outdir *d;
    REQUIRE(trowel_outdir_open(ctx, path, TROWEL_OUTDIR_STAGED, &d) == TROWEL_OK);
    CHECK(put(d, "mine.txt", "mine") == TROWEL_OK);
    char theirs[600];
    snprintf(theirs, sizeof theirs, "%s/theirs.txt", path); /* in the held name */
    write_file(theirs, "theirs", 6);
    CHECK(trowel_outdir_finish(d) == TROWEL_ERR_EXISTS);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "appeared") != NULL);
    trowel_outdir_close(d);
    CHECK(count_dir_entries(dir) == 1 && count_dir_entries(path) == 1); /* theirs, untouched */
    CHECK(holds(theirs, "theirs"));
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

/* In a child: stages dir/name and writes a file into it. */
static bool stage_a_file(const char *dir, const char *name)
{
    trowel_ctx *ctx = trowel_ctx_new();
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    trowel_outdir *d;
    return ctx && trowel_outdir_open(ctx, path, TROWEL_OUTDIR_STAGED, &d) == TROWEL_OK &&
           put(d, "in/side.txt", "inside") == TROWEL_OK;
}

static void test_kill_9_leaves_a_stage_the_next_run_removes(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    pid_t killed = start_waiting_child(stage_a_file, dir, "a"),
          alive = start_waiting_child(stage_a_file, dir, "b");
    REQUIRE(killed > 0 && alive > 0);
    kill_child(killed);
    char left[64], live[64];
    snprintf(left, sizeof left, ".trowel-%ld-stage0", (long)killed);
    snprintf(live, sizeof live, ".trowel-%ld-stage0", (long)alive);
    CHECK(exists_in(dir, left) && exists_in(dir, live));
    CHECK(exists_in(dir, "a") && exists_in(dir, "b")); /* the names held, empty */
    /* A folder of the dead pid not named as a stage is somebody else's. */
    char other[64], other_path[600];
    snprintf(other, sizeof other, ".trowel-%ld-mine", (long)killed);
    snprintf(other_path, sizeof other_path, "%s/%s", dir, other);
    REQUIRE(mkdir(other_path, 0777) == 0);

    trowel_ctx *ctx = trowel_ctx_new();
    char path[512];
    snprintf(path, sizeof path, "%s/c", dir);
    trowel_outdir *d;
    REQUIRE(trowel_outdir_open(ctx, path, TROWEL_OUTDIR_STAGED, &d) == TROWEL_OK);
    CHECK(!exists_in(dir, left)); /* its writer is gone: removed, with what it held */
    CHECK(exists_in(dir, live));  /* its writer lives */
    CHECK(exists_in(dir, other));
    CHECK(put(d, "c.txt", "c") == TROWEL_OK);
    CHECK(trowel_outdir_finish(d) == TROWEL_OK);
    trowel_outdir_close(d);
    CHECK(exists_in(dir, "c"));
    /* The same kill -9 again, then a run into that very folder (it is
     * there, empty, so it is written in place): the stage beside it goes. */
    killed = start_waiting_child(stage_a_file, dir, "again");
    REQUIRE(killed > 0);
    kill_child(killed);
    snprintf(left, sizeof left, ".trowel-%ld-stage0", (long)killed);
    CHECK(exists_in(dir, left));
    snprintf(path, sizeof path, "%s/again", dir);
    REQUIRE(trowel_outdir_open(ctx, path, TROWEL_OUTDIR_STAGED, &d) == TROWEL_OK);
    CHECK(!exists_in(dir, left));
    CHECK(put(d, "again.txt", "again") == TROWEL_OK);
    CHECK(trowel_outdir_finish(d) == TROWEL_OK);
    trowel_outdir_close(d);

    kill_child(alive);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

/* trowel_remove_temp takes a file, a staged folder with all it holds
 * (deeper than a recursion would go, a link inside removed, not followed),
 * and any other folder only when it is empty. */
static void test_remove_temp_takes_a_stage_not_what_links_lead_to(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char path[600], keep[600];
    snprintf(keep, sizeof keep, "%s/keep", dir);
    REQUIRE(mkdir(keep, 0777) == 0);
    snprintf(path, sizeof path, "%s/keep/precious.txt", dir);
    write_file(path, "precious", 8);
    static const char stage[] = ".trowel-1-stage0";
    static char deep[4096];
    size_t n = (size_t)snprintf(deep, sizeof deep, "%s/%s", dir, stage);
    REQUIRE(mkdir(deep, 0777) == 0);
    for (int i = 0; i < 400; i++) { /* 400 levels, a file in every tenth */
        n += (size_t)snprintf(deep + n, sizeof deep - n, "/d");
        REQUIRE(mkdir(deep, 0777) == 0);
        if (i % 10 == 0) {
            char f[4200];
            snprintf(f, sizeof f, "%s/f", deep);
            write_file(f, "f", 1);
        }
    }
    snprintf(path, sizeof path, "%s/%s/d/to-keep", dir, stage);
    REQUIRE(symlink(keep, path) == 0);
    snprintf(path, sizeof path, "%s/%s/d/d/dangling", dir, stage);
    REQUIRE(symlink("/nonexistent/x", path) == 0);
    snprintf(path, sizeof path, "%s/%s/d/d/d/sibling", dir, stage);
    REQUIRE(mkdir(path, 0777) == 0);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    REQUIRE(fd >= 0);
    CHECK(trowel_remove_temp(fd, stage) == 0);
    CHECK(!exists_in(dir, stage));
    snprintf(path, sizeof path, "%s/keep/precious.txt", dir);
    CHECK(holds(path, "precious"));
    /* Not a stage's name: a folder holding something stays. */
    CHECK(trowel_remove_temp(fd, "keep") == -1);
    CHECK(holds(path, "precious"));
    snprintf(path, sizeof path, "%s/empty", dir);
    REQUIRE(mkdir(path, 0777) == 0);
    CHECK(trowel_remove_temp(fd, "empty") == 0 && !exists_in(dir, "empty"));
    snprintf(path, sizeof path, "%s/file", dir);
    write_file(path, "x", 1);
    CHECK(trowel_remove_temp(fd, "file") == 0 && !exists_in(dir, "file"));
    CHECK(trowel_remove_temp(fd, "file") == -1 && errno == ENOENT);
    close(fd);
    remove_tree(dir);
}

TEST_MAIN(TEST(test_a_fresh_folder_appears_whole), TEST(test_sibling_fresh_folders_both_appear),
          TEST(test_an_existing_folder_is_written_in_place),
          TEST(test_nothing_is_left_when_nothing_is_published),
          TEST(test_a_folder_others_wrote_into_is_not_replaced),
          TEST(test_kill_9_leaves_a_stage_the_next_run_removes),
          TEST(test_remove_temp_takes_a_stage_not_what_links_lead_to))
