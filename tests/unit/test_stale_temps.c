/*
 * Named temporaries left by kill -9: a process writing through the named
 * fallback is really killed with SIGKILL; the next sink opened in that
 * folder removes its temporary, and keeps those of live writers (a live
 * pid, this process's own, or a file somebody holds locked even though its
 * pid looks dead).
 */
#include "core/sink.h"
#include "files.h"
#include "test.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* In a child: opens a named-temporary sink dir/name and writes to it. */
static bool write_partial(const char *dir, const char *name)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return false;
    ctx->named_temps_only = true;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    trowel_sink *s;
    return trowel_sink_open_file(ctx, path, 0, &s) == TROWEL_OK &&
           trowel_sink_write(s, "partial", 7) == TROWEL_OK && trowel_sink_flush(s) == TROWEL_OK;
}

static void test_kill_9_leftovers_are_swept_live_ones_kept(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    pid_t killed = start_waiting_child(write_partial, dir, "out.bin"),
          alive = start_waiting_child(write_partial, dir, "out.bin");
    REQUIRE(killed > 0 && alive > 0);
    kill_child(killed);
    char left[64], live[64], own[64], locked[64];
    snprintf(left, sizeof left, ".trowel-%ld-0", (long)killed);
    snprintf(live, sizeof live, ".trowel-%ld-0", (long)alive);
    snprintf(own, sizeof own, ".trowel-%ld-7", (long)getpid());
    CHECK(exists_in(dir, left)); /* what kill -9 leaves */
    CHECK(exists_in(dir, live));
    /* The killed writer's pid with another serial, held locked by us: a
     * writer in another pid namespace looks like this. */
    snprintf(locked, sizeof locked, ".trowel-%ld-g1", (long)killed);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, locked);
    int lock_fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    REQUIRE(lock_fd >= 0);
    REQUIRE(flock(lock_fd, LOCK_EX) == 0);
    snprintf(path, sizeof path, "%s/%s", dir, own);
    write_file(path, "mine", 4);
    /* Not ours to judge: a name that only looks like one, and a link. */
    snprintf(path, sizeof path, "%s/.trowel-x-0", dir);
    write_file(path, "x", 1);
    char link_name[64];
    snprintf(link_name, sizeof link_name, ".trowel-%ld-9", (long)killed);
    snprintf(path, sizeof path, "%s/%s", dir, link_name);
    REQUIRE(symlink("/nonexistent", path) == 0);

    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s;
    snprintf(path, sizeof path, "%s/next.bin", dir);
    REQUIRE(trowel_sink_open_file(ctx, path, 0, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "next", 4) == TROWEL_OK);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK(!exists_in(dir, left));
    CHECK(exists_in(dir, live));
    CHECK(exists_in(dir, locked));
    CHECK(exists_in(dir, own));
    CHECK(exists_in(dir, ".trowel-x-0"));
    CHECK(exists_in(dir, link_name));
    bytes got = read_file(path);
    CHECK(got.size == 4 && got.data && memcmp(got.data, "next", 4) == 0);
    free(got.data);

    kill_child(alive);
    close(lock_fd);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

TEST_MAIN(TEST(test_kill_9_leftovers_are_swept_live_ones_kept))
