/*
 * Unit tests for how file sinks put outputs in place: unnamed files (no
 * name at all until finished), the short named fallback and what the temp
 * handler hears of it, names of 255 bytes, replacing, and positional writes;
 * and memory-limit refusals that say what, how much, in use and the limit.
 */
#include "core/sink_file.h"
#include "files.h"
#include "test.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a temp handler heard: names made live and gone, in order. */
typedef struct heard {
    int live, gone;
    char last_live[64];
    char last_gone[64];
    bool mismatched_dirfd;
    int dirfd;
} heard;

static void listen_temps(void *user, int dirfd, const char *name, bool live)
{
    heard *h = user;
    if (h->live > h->gone && dirfd != h->dirfd)
        h->mismatched_dirfd = true;
    h->dirfd = dirfd;
    if (live) {
        h->live++;
        snprintf(h->last_live, sizeof h->last_live, "%s", name);
    } else {
        h->gone++;
        snprintf(h->last_gone, sizeof h->last_gone, "%s", name);
    }
}

/* The only name in dir, in out; false unless there is exactly one. */
static bool only_name(const char *dir, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(out, cap, "%s", e->d_name);
        n++;
    }
    closedir(d);
    return n == 1;
}

static bool file_is(const char *path, const char *text)
{
    bytes b = read_file(path);
    bool same = b.data && b.size == strlen(text) && memcmp(b.data, text, b.size) == 0;
    free(b.data);
    return same;
}

/* A name of 255 bytes, the most most file systems allow. */
static void long_name(char *out)
{
    memset(out, 'n', 251);
    memcpy(out + 251, ".bin", 5);
}

static void test_unnamed_output_has_no_name_until_finished(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char path[512], name[256];
    long_name(name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    trowel_ctx *ctx = trowel_ctx_new();
    heard h = {0};
    trowel_ctx_set_temp_handler(ctx, listen_temps, &h);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_file(ctx, path, 0, &s) == TROWEL_OK);
    CHECK(trowel_sink_file_state(s)->unnamed);
    CHECK(trowel_sink_write(s, "hello", 5) == TROWEL_OK);
    CHECK_EQ_U64(count_dir_entries(dir), 0);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK(file_is(path, "hello"));
    CHECK_EQ_U64(count_dir_entries(dir), 1);
    CHECK_EQ_U64(h.live, 0); /* a new name needs no named temporary */

    /* Replacing: a named temporary for an instant, announced and gone. */
    REQUIRE(trowel_sink_open_file(ctx, path, TROWEL_SINK_OVERWRITE, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "again", 5) == TROWEL_OK);
    CHECK(file_is(path, "hello"));
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK(file_is(path, "again"));
    CHECK_EQ_U64(h.live, 1);
    CHECK_EQ_U64(h.gone, 1);
    CHECK_STR(h.last_live, h.last_gone);
    CHECK(strncmp(h.last_live, ".trowel-", 8) == 0);
    CHECK_EQ_U64(count_dir_entries(dir), 1);

    /* Without the flag a name that exists is refused, and nothing is left. */
    REQUIRE(trowel_sink_open_file(ctx, path, 0, &s) == TROWEL_ERR_EXISTS);
    CHECK_EQ_U64(count_dir_entries(dir), 1);

    /* A discarded output never had a name. */
    snprintf(path, sizeof path, "%s/gone.bin", dir);
    REQUIRE(trowel_sink_open_file(ctx, path, 0, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "partial", 7) == TROWEL_OK);
    trowel_sink_discard(s);
    CHECK_EQ_U64(count_dir_entries(dir), 1);
    CHECK(!h.mismatched_dirfd);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

static void test_unnamed_output_refuses_name_taken_meanwhile(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/race.bin", dir);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s;
    REQUIRE(trowel_sink_open_file(ctx, path, 0, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "mine", 4) == TROWEL_OK);
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL);
    fputs("theirs", f);
    fclose(f);
    CHECK(trowel_sink_finish(s) == TROWEL_ERR_EXISTS);
    CHECK(file_is(path, "theirs"));
    CHECK_EQ_U64(count_dir_entries(dir), 1);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

static void test_named_fallback_is_short_announced_and_removed(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char path[512], name[256], seen[300];
    long_name(name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    trowel_ctx *ctx = trowel_ctx_new();
    ctx->named_temps_only = true;
    heard h = {0};
    trowel_ctx_set_temp_handler(ctx, listen_temps, &h);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_file(ctx, path, 0, &s) == TROWEL_OK);
    CHECK(!trowel_sink_file_state(s)->unnamed);
    CHECK(trowel_sink_write(s, "hello", 5) == TROWEL_OK);
    CHECK_EQ_U64(h.live, 1);
    CHECK_EQ_U64(h.gone, 0);
    REQUIRE(only_name(dir, seen, sizeof seen));
    CHECK_STR(seen, h.last_live);
    char want[64];
    snprintf(want, sizeof want, ".trowel-%ld-0", (long)getpid());
    CHECK_STR(seen, want);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK_EQ_U64(h.gone, 1);
    CHECK_STR(h.last_gone, want);
    CHECK(file_is(path, "hello"));
    CHECK_EQ_U64(count_dir_entries(dir), 1);

    REQUIRE(trowel_sink_open_file(ctx, path, TROWEL_SINK_OVERWRITE, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "again", 5) == TROWEL_OK);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK(file_is(path, "again"));
    CHECK_EQ_U64(count_dir_entries(dir), 1);

    snprintf(path, sizeof path, "%s/gone.bin", dir);
    REQUIRE(trowel_sink_open_file(ctx, path, 0, &s) == TROWEL_OK);
    CHECK_EQ_U64(count_dir_entries(dir), 2);
    trowel_sink_discard(s);
    CHECK_EQ_U64(count_dir_entries(dir), 1);
    CHECK_EQ_U64(h.live, 3);
    CHECK_EQ_U64(h.gone, 3);
    CHECK(!h.mismatched_dirfd);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

/* The Delphine decoder's writer thread writes pieces out of order. */
static void check_positional(bool named)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/pos.bin", dir);
    trowel_ctx *ctx = trowel_ctx_new();
    ctx->named_temps_only = named;
    trowel_sink *s;
    REQUIRE(trowel_sink_open_file(ctx, path, 0, &s) == TROWEL_OK);
    CHECK(trowel_sink_file_state(s)->unnamed == !named);
    REQUIRE(trowel_sink_takes_positional(s));
    CHECK(trowel_sink_pwrite(s, 6, "world", 5) == 0);
    CHECK(trowel_sink_pwrite(s, 0, "hello ", 6) == 0);
    CHECK(trowel_sink_positional_done(s, 11, 0) == TROWEL_OK);
    CHECK_EQ_U64(trowel_sink_written(s), 11);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK(file_is(path, "hello world"));
    CHECK_EQ_U64(count_dir_entries(dir), 1);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

static void test_positional_writes_to_unnamed_file(void)
{
    check_positional(false);
}

static void test_positional_writes_to_named_fallback(void)
{
    check_positional(true);
}

/* ---------------------------------------------------------- output folders */

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_outdir_removes_only_the_empty_folders_it_made(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char root[256], path[400];
    snprintf(root, sizeof root, "%s/made/deeper", dir);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_outdir *d;
    REQUIRE(trowel_outdir_open(ctx, root, 0, &d) == TROWEL_OK);
    trowel_sink *s;
    /* One entry fails in a sub-folder, one is written in another. */
    REQUIRE(trowel_outdir_create(d, "FAILS/SUB/x.bin", &s) == TROWEL_OK);
    trowel_sink_discard(s);
    REQUIRE(trowel_outdir_create(d, "KEPT/EMPTY/../y.bin", &s) == TROWEL_ERR_UNSAFE_PATH);
    REQUIRE(trowel_outdir_create(d, "KEPT/y.bin", &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "y", 1) == TROWEL_OK);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    trowel_outdir_close(d);
    snprintf(path, sizeof path, "%s/KEPT/y.bin", root);
    CHECK(file_is(path, "y"));
    snprintf(path, sizeof path, "%s/FAILS", root);
    CHECK(!is_dir(path));
    CHECK_EQ_U64(count_dir_entries(root), 1);

    /* Nothing written: every folder it made goes, the user's stays. */
    snprintf(root, sizeof root, "%s/new/er", dir);
    REQUIRE(trowel_outdir_open(ctx, root, 0, &d) == TROWEL_OK);
    REQUIRE(trowel_outdir_create(d, "A/B/z.bin", &s) == TROWEL_OK);
    trowel_sink_discard(s);
    trowel_outdir_close(d);
    snprintf(path, sizeof path, "%s/new", dir);
    CHECK(!is_dir(path));
    CHECK(is_dir(dir));
    REQUIRE(trowel_outdir_open(ctx, dir, 0, &d) == TROWEL_OK);
    trowel_outdir_close(d);
    CHECK(is_dir(dir));
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

/* ---------------------------------------------------------- memory words */

static void test_limit_message_names_purpose_sizes_and_limit(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_mem_limit(ctx, 300 * 1024);
    void *held = trowel_mem_alloc(ctx, 100 * 1024);
    REQUIRE(held != NULL);
    CHECK(trowel_mem_purpose(ctx, "the decoded scene") == NULL);
    CHECK(trowel_mem_alloc(ctx, 256 * 1024) == NULL);
    CHECK(trowel_ctx_last_error(ctx)->status == TROWEL_ERR_LIMIT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "over the memory limit: needs 256 KiB for the decoded scene, 100 KiB already in "
              "use, limit 300 KiB (--mem-limit)");
    /* Growing names the same purpose and counts only the growth. */
    CHECK(trowel_mem_realloc(ctx, held, 500 * 1024) == NULL);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "over the memory limit: needs 400 KiB for the decoded scene, 100 KiB already in "
              "use, limit 300 KiB (--mem-limit)");
    /* Restoring: back to unnamed. */
    CHECK_STR(trowel_mem_purpose(ctx, NULL), "the decoded scene");
    CHECK(trowel_mem_alloc(ctx, 1024 * 1024 + 512 * 1024) == NULL);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "over the memory limit: needs 1.5 MiB for working memory, 100 KiB already in use, "
              "limit 300 KiB (--mem-limit)");
    trowel_mem_free(ctx, held);
    /* An explicit what wins; bytes, tenths and GiB. */
    trowel_ctx_set_mem_limit(ctx, 0); /* the default: 1 GiB */
    trowel_mem_purpose(ctx, "ignored here");
    CHECK(trowel_mem_check(ctx, ((uint64_t)3 << 30) / 2, "the LZMA decoder") == TROWEL_ERR_LIMIT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "over the memory limit: needs 1.5 GiB for the LZMA decoder, 0 bytes already in use, "
              "limit 1 GiB (--mem-limit)");
    trowel_ctx_set_mem_limit(ctx, 1000);
    void *one = trowel_mem_alloc(ctx, 1);
    CHECK(trowel_mem_check(ctx, 1000, "x") == TROWEL_ERR_LIMIT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "over the memory limit: needs 1000 bytes for x, 1 byte already in use, limit 1000 "
              "bytes (--mem-limit)");
    CHECK(trowel_mem_check(ctx, 999, "x") == TROWEL_OK);
    trowel_mem_free(ctx, one);
    trowel_ctx_set_mem_limit(ctx, 1024 + 1023);
    CHECK(trowel_mem_check(ctx, 5000, "y") == TROWEL_ERR_LIMIT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "over the memory limit: needs 4.8 KiB for y, 0 bytes already in use, limit 1.9 KiB "
              "(--mem-limit)");
    trowel_ctx_free(ctx);
}

/* Writes text to path (replacing it through a rename when fresh, so that
 * the name then holds another inode). */
static void put_file(const char *path, const char *text, bool fresh)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    FILE *fp = fopen(fresh ? tmp : path, fresh ? "wb" : "r+b");
    REQUIRE(fp != NULL);
    fputs(text, fp);
    fclose(fp);
    if (fresh)
        REQUIRE(rename(tmp, path) == 0);
}

static ino_t inode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* A replacing sink over path, which is made to hold target first, given
 * written and flushed: compared with the target so far. *s NULL on failure. */
static void compared_so_far(trowel_ctx *ctx, const char *path, const char *target,
                            const char *written, trowel_sink **s)
{
    *s = NULL;
    put_file(path, target, true);
    trowel_sink *sink;
    REQUIRE(trowel_sink_open_file(ctx, path, TROWEL_SINK_OVERWRITE, &sink) == TROWEL_OK);
    *s = sink;
    CHECK(trowel_sink_write(sink, written, strlen(written)) == TROWEL_OK);
    CHECK(trowel_sink_flush(sink) == TROWEL_OK);
}

/* s's finish is refused, its target having changed while it was compared,
 * and the target is left as whoever changed it made it (holding left),
 * with nothing beside it in dir. */
static void check_refused(trowel_ctx *ctx, trowel_sink *s, const char *dir, const char *path,
                          const char *left)
{
    CHECK(trowel_sink_finish(s) == TROWEL_ERR_IO);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "changed while it was compared") != NULL);
    CHECK(file_is(path, left));
    CHECK_EQ_U64(count_dir_entries(dir), 1);
}

/* Replacing a file that already holds the output leaves it as it is (same
 * inode, nothing written); a target that changes while it is compared is
 * never taken for the output. The comparison happens when the sink's
 * buffer is flushed, so a flush stands for "while it is compared". */
static void test_replacing_compares_with_the_target(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/t.txt", dir);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s;

    /* The same bytes: the same file afterwards. */
    put_file(path, "hello", true);
    ino_t before = inode_of(path);
    REQUIRE(trowel_sink_open_file(ctx, path, TROWEL_SINK_OVERWRITE, &s) == TROWEL_OK);
    CHECK(trowel_sink_file_state(s)->comparing);
    CHECK(trowel_sink_write(s, "hello", 5) == TROWEL_OK);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK(file_is(path, "hello"));
    CHECK(inode_of(path) == before);

    /* Other bytes of the same size: a new file. */
    REQUIRE(trowel_sink_open_file(ctx, path, TROWEL_SINK_OVERWRITE, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "HELLO", 5) == TROWEL_OK);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK(file_is(path, "HELLO"));
    CHECK(inode_of(path) != before);

    /* Grown after its bytes matched: it still holds them, so the output is
     * made from them and replaces it. */
    compared_so_far(ctx, path, "hello", "hello", &s);
    REQUIRE(s != NULL);
    FILE *fp = fopen(path, "ab");
    REQUIRE(fp != NULL);
    fputs(" world", fp);
    fclose(fp);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK(file_is(path, "hello"));
    CHECK_EQ_U64(count_dir_entries(dir), 1);

    /* Changed in place (same size) after its bytes matched: refused, and
     * left to whoever changed it, whatever its time stamps say. */
    compared_so_far(ctx, path, "hello", "hello", &s);
    REQUIRE(s != NULL);
    put_file(path, "HELLO", false);
    check_refused(ctx, s, dir, path, "HELLO");

    /* The same, and a second name of it removed meanwhile (which changes
     * its link count): still refused, never made from the changed bytes. */
    char link2[600];
    snprintf(link2, sizeof link2, "%s/second", dir);
    put_file(path, "helloAAAA", true);
    REQUIRE(link(path, link2) == 0); /* two links when the comparison starts */
    REQUIRE(trowel_sink_open_file(ctx, path, TROWEL_SINK_OVERWRITE, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "hello", 5) == TROWEL_OK);
    CHECK(trowel_sink_flush(s) == TROWEL_OK);
    put_file(path, "HELLO", false);
    REQUIRE(unlink(link2) == 0);
    CHECK(trowel_sink_write(s, "BBBB", 4) == TROWEL_OK);
    check_refused(ctx, s, dir, path, "HELLOAAAA");

    /* Harmless changes meanwhile (its mode, a new name elsewhere): it still
     * holds the output, and stays. */
    compared_so_far(ctx, path, "hello", "hello", &s);
    REQUIRE(s != NULL);
    before = inode_of(path);
    REQUIRE(chmod(path, 0640) == 0);
    REQUIRE(link(path, link2) == 0);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK(inode_of(path) == before);
    CHECK(file_is(path, "hello"));
    REQUIRE(unlink(link2) == 0);

    /* Changed inside the matched bytes before a difference: the matched
     * bytes would come from the changed file, so it is refused. */
    compared_so_far(ctx, path, "helloAAAA", "hello", &s);
    REQUIRE(s != NULL);
    put_file(path, "HELLO", false); /* in place: the first five bytes */
    CHECK(trowel_sink_write(s, "BBBB", 4) == TROWEL_OK);
    check_refused(ctx, s, dir, path, "HELLOAAAA");

    /* Another file renamed over the name after its bytes matched: the open
     * file still holds them, and the name gets the output. */
    compared_so_far(ctx, path, "hello", "hello", &s);
    REQUIRE(s != NULL);
    put_file(path, "other", true);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK(file_is(path, "hello"));
    CHECK_EQ_U64(count_dir_entries(dir), 1);

    /* Anything but a regular file is looked at, never opened (a device
     * could act on an open): a folder here. */
    REQUIRE(unlink(path) == 0);
    REQUIRE(mkdir(path, 0700) == 0);
    REQUIRE(trowel_sink_open_file(ctx, path, TROWEL_SINK_OVERWRITE, &s) == TROWEL_OK);
    CHECK(!trowel_sink_file_state(s)->comparing);
    trowel_sink_discard(s);
    REQUIRE(rmdir(path) == 0);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

TEST_MAIN(TEST(test_outdir_removes_only_the_empty_folders_it_made),
          TEST(test_limit_message_names_purpose_sizes_and_limit),
          TEST(test_unnamed_output_has_no_name_until_finished),
          TEST(test_unnamed_output_refuses_name_taken_meanwhile),
          TEST(test_named_fallback_is_short_announced_and_removed),
          TEST(test_positional_writes_to_unnamed_file),
          TEST(test_positional_writes_to_named_fallback),
          TEST(test_replacing_compares_with_the_target))
