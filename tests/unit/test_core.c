/*
 * Unit tests for the core: the bounded reader, safe paths, output sinks
 * (temporary + rename), the memory limit and property lists.
 */
#include "core/core.h"
#include "core/input.h"
#include "core/reader.h"
#include "core/sink.h"
#include "files.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------- helpers */

typedef struct fixture {
    trowel_ctx *ctx;
    trowel_input *in;
    trowel_reader r;
} fixture;

static void fixture_memory(fixture *f, const void *data, size_t n)
{
    f->ctx = trowel_ctx_new();
    trowel_input_open_memory(f->ctx, data, n, "mem", &f->in);
    trowel_reader_init(&f->r, f->ctx, f->in);
}

static void fixture_free(fixture *f)
{
    trowel_input_close(f->in);
    trowel_ctx_free(f->ctx);
}

static const uint8_t sample[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                 'a',  'b',  'c',  0,    'x',  'y',  0xFF, 0xFE};

/* ---------------------------------------------------------- reader */

static void test_reader_reads_little_and_big_endian(void)
{
    fixture f;
    fixture_memory(&f, sample, sizeof sample);
    uint16_t a, b;
    uint32_t c;
    CHECK(trowel_read_u16le(&f.r, &a) == TROWEL_OK);
    CHECK(trowel_read_u16be(&f.r, &b) == TROWEL_OK);
    CHECK(trowel_read_u32le(&f.r, &c) == TROWEL_OK);
    CHECK_EQ_U64(a, 0x0201);
    CHECK_EQ_U64(b, 0x0304);
    CHECK_EQ_U64(c, 0x08070605);
    CHECK_EQ_U64(trowel_reader_tell(&f.r), 8);
    fixture_free(&f);
}

static void test_reader_refuses_read_past_end_with_offset(void)
{
    fixture f;
    fixture_memory(&f, sample, sizeof sample);
    CHECK(trowel_reader_seek(&f.r, 14) == TROWEL_OK);
    uint32_t v = 123;
    CHECK(trowel_read_u32le(&f.r, &v) == TROWEL_ERR_TRUNCATED);
    CHECK_EQ_U64(trowel_ctx_last_error(f.ctx)->offset, 14);
    CHECK(strstr(trowel_ctx_last_error(f.ctx)->message, "0x10") != NULL);
    CHECK_EQ_U64(trowel_reader_tell(&f.r), 14); /* failed reads do not move */
    CHECK(trowel_reader_seek(&f.r, 17) == TROWEL_ERR_TRUNCATED);
    CHECK(trowel_reader_skip(&f.r, UINT64_MAX) == TROWEL_ERR_TRUNCATED);
    fixture_free(&f);
}

static void test_reader_sub_window_is_bounded_and_offsets_absolute(void)
{
    fixture f;
    fixture_memory(&f, sample, sizeof sample);
    trowel_reader sub;
    CHECK(trowel_reader_sub(&f.r, 4, 4, &sub) == TROWEL_OK);
    uint32_t v;
    CHECK(trowel_read_u32le(&sub, &v) == TROWEL_OK);
    CHECK_EQ_U64(v, 0x08070605);
    uint8_t b;
    CHECK(trowel_read_u8(&sub, &b) == TROWEL_ERR_TRUNCATED);
    CHECK_EQ_U64(trowel_ctx_last_error(f.ctx)->offset, 8);
    /* sub-ranges that overflow or leave the parent are refused */
    CHECK(trowel_reader_sub(&f.r, 8, UINT64_MAX - 4, &sub) == TROWEL_ERR_TRUNCATED);
    CHECK(trowel_reader_sub(&f.r, 17, 0, &sub) == TROWEL_ERR_TRUNCATED);
    CHECK(trowel_reader_sub(&f.r, 16, 0, &sub) == TROWEL_OK);
    fixture_free(&f);
}

static void test_reader_strings_stop_at_nul_and_cap(void)
{
    fixture f;
    fixture_memory(&f, sample, sizeof sample);
    char s[8];
    CHECK(trowel_reader_seek(&f.r, 8) == TROWEL_OK);
    CHECK(trowel_read_cstring(&f.r, s, sizeof s) == TROWEL_OK);
    CHECK_STR(s, "abc");
    CHECK_EQ_U64(trowel_reader_tell(&f.r), 12);
    CHECK(trowel_reader_seek(&f.r, 8) == TROWEL_OK);
    CHECK(trowel_read_fixed_string(&f.r, 6, s, sizeof s) == TROWEL_OK);
    CHECK_STR(s, "abc");
    CHECK_EQ_U64(trowel_reader_tell(&f.r), 14); /* the whole field is consumed */
    char tiny[3];
    CHECK(trowel_reader_seek(&f.r, 8) == TROWEL_OK);
    CHECK(trowel_read_cstring(&f.r, tiny, sizeof tiny) == TROWEL_ERR_CORRUPT);
    /* no NUL before the end */
    CHECK(trowel_reader_seek(&f.r, 12) == TROWEL_OK);
    CHECK(trowel_read_cstring(&f.r, s, sizeof s) == TROWEL_ERR_TRUNCATED);
    fixture_free(&f);
}

/* One C string read at pos of the window [base, base + size): the
 * outcome (status, cursor, text or error) as text, to compare readers. */
static void cstring_outcome(trowel_input *in, trowel_ctx *ctx, uint64_t base, uint64_t size,
                            uint64_t pos, size_t cap, char *out, size_t out_cap)
{
    trowel_reader whole, r;
    trowel_reader_init(&whole, ctx, in);
    char s[16] = "";
    trowel_status st = trowel_reader_sub(&whole, base, size, &r);
    if (st == TROWEL_OK && (st = trowel_reader_seek(&r, pos)) == TROWEL_OK)
        st = trowel_read_cstring(&r, s, cap);
    const trowel_error *e = trowel_ctx_last_error(ctx);
    if (st == TROWEL_OK)
        snprintf(out, out_cap, "ok at %llu: %s", (unsigned long long)trowel_reader_tell(&r), s);
    else
        snprintf(out, out_cap, "%d at 0x%llx: %s", (int)st, (unsigned long long)e->offset,
                 e->message);
    trowel_ctx_clear_error(ctx);
}

/* C strings read three ways agree on every window, cursor and cap (a NUL
 * just past the window, exactly cap - 1 characters, cap of them): from an
 * input wholly in memory and from a file's cache window (both found with
 * memchr), and byte by byte (an input that reads through its kind, with no
 * memory of its own to search). */
static void test_reader_strings_agree_in_memory_and_from_a_file(void)
{
    static const uint8_t text[] = {'a', 0, 'b', 'c', 0, 'd', 'e', 'f', 0, 'g', 'h', 'i', 'j', 0};
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/strings.bin", dir);
    write_file(path, text, sizeof text);
    fixture m;
    fixture_memory(&m, text, sizeof text);
    trowel_input *file = NULL, *bytewise = NULL;
    REQUIRE(trowel_input_open_file(m.ctx, path, &file) == TROWEL_OK);
    REQUIRE(trowel_input_open_memory_at(m.ctx, text, sizeof text, 0, "bytes", &bytewise) ==
            TROWEL_OK);
    size_t cases = 0, same = 0;
    for (uint64_t base = 0; base <= sizeof text; base++)
        for (uint64_t size = 0; base + size <= sizeof text; size++)
            for (uint64_t pos = 0; pos <= size; pos++)
                for (size_t cap = 1; cap <= 6; cap++) {
                    char want[600], a[600], b[600];
                    cstring_outcome(bytewise, m.ctx, base, size, pos, cap, want, sizeof want);
                    cstring_outcome(m.in, m.ctx, base, size, pos, cap, a, sizeof a);
                    cstring_outcome(file, m.ctx, base, size, pos, cap, b, sizeof b);
                    cases++;
                    same += strcmp(a, want) == 0 && strcmp(b, want) == 0;
                }
    CHECK(m.in->mem != NULL && file->mem == NULL && bytewise->mem == NULL); /* three paths */
    CHECK(file->cache_len == sizeof text);
    CHECK_EQ_U64(same, cases);
    trowel_input_close(bytewise);
    trowel_input_close(file);
    fixture_free(&m);
    remove_tree(dir);
}

/* Reads near the end of a file input's cache window when the window does
 * not start at 0 (600 KiB of strings, the window of 256 KiB moved to 100
 * KiB before each read; too little memory to read the file whole): C
 * strings and words that end in the window, reach its last byte or run
 * past it agree with the same reads from memory. */
static void test_reader_reads_at_the_end_of_a_moved_cache_window(void)
{
    enum { SIZE = 600 * 1024, WINDOW_AT = 100 * 1024, WINDOW_END = WINDOW_AT + 256 * 1024 };
    uint8_t *data = malloc(SIZE);
    REQUIRE(data != NULL);
    for (size_t i = 0; i < SIZE; i++)
        data[i] = i % 13 == 12 ? 0 : (uint8_t)('a' + i % 26);
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/strings.bin", dir);
    write_file(path, data, SIZE);
    fixture m;
    fixture_memory(&m, data, SIZE);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_mem_limit(ctx, 700 * 1024);
    trowel_input *file = NULL;
    REQUIRE(trowel_input_open_file(ctx, path, &file) == TROWEL_OK);
    size_t cases = 0, same = 0, moved = 0;
    for (uint64_t at = WINDOW_END - 40; at < WINDOW_END + 8; at++)
        for (size_t cap = 4; cap <= 16; cap += 6) {
            trowel_reader r;
            uint8_t b;
            trowel_reader_init(&r, ctx, file); /* the window back to WINDOW_AT */
            REQUIRE(trowel_reader_seek(&r, WINDOW_AT) == TROWEL_OK);
            REQUIRE(trowel_read_u8(&r, &b) == TROWEL_OK);
            moved += file->cache_off == WINDOW_AT && file->mem == NULL;
            char want[600], got[600];
            cstring_outcome(m.in, m.ctx, at, 24, 0, cap, want, sizeof want);
            cstring_outcome(file, ctx, at, 24, 0, cap, got, sizeof got);
            uint32_t w1 = 0, w2 = 0;
            trowel_reader rm, rf;
            trowel_reader_init(&rm, m.ctx, m.in);
            REQUIRE(trowel_reader_seek(&r, WINDOW_AT) == TROWEL_OK);
            REQUIRE(trowel_read_u8(&r, &b) == TROWEL_OK);
            trowel_reader_init(&rf, ctx, file);
            trowel_status s1 = trowel_reader_seek(&rm, at), s2 = trowel_reader_seek(&rf, at);
            if (s1 == TROWEL_OK)
                s1 = trowel_read_u32le(&rm, &w1);
            if (s2 == TROWEL_OK)
                s2 = trowel_read_u32le(&rf, &w2);
            cases++;
            same += strcmp(want, got) == 0 && s1 == s2 && w1 == w2;
        }
    CHECK_EQ_U64(moved, cases); /* every read began from the moved window */
    CHECK_EQ_U64(same, cases);
    trowel_input_close(file);
    trowel_ctx_free(ctx);
    fixture_free(&m);
    remove_tree(dir);
    free(data);
}

/* The entry name errors carry is cut as snprintf would cut it, and may be
 * set from itself. */
static void test_context_entry_name_is_cut_to_fit(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    char name[300];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    trowel_set_entry(ctx, name);
    CHECK_EQ_U64(strlen(ctx->entry), sizeof ctx->entry - 1);
    CHECK(strncmp(ctx->entry, name, sizeof ctx->entry - 1) == 0);
    trowel_set_entry(ctx, ctx->entry);
    CHECK_EQ_U64(strlen(ctx->entry), sizeof ctx->entry - 1);
    trowel_set_entry(ctx, "short");
    CHECK_STR(ctx->entry, "short");
    trowel_set_entry(ctx, NULL);
    CHECK_STR(ctx->entry, "");
    trowel_ctx_free(ctx);
}

static void test_reader_borrow_gives_spans_up_to_end(void)
{
    fixture f;
    fixture_memory(&f, sample, sizeof sample);
    const uint8_t *p;
    size_t got;
    CHECK(trowel_reader_borrow(&f.r, 10, &p, &got) == TROWEL_OK);
    CHECK_EQ_U64(got, 10);
    CHECK(p[0] == 0x01);
    CHECK(trowel_reader_borrow(&f.r, 100, &p, &got) == TROWEL_OK);
    CHECK_EQ_U64(got, 6);
    CHECK(trowel_reader_borrow(&f.r, 100, &p, &got) == TROWEL_OK);
    CHECK_EQ_U64(got, 0);
    fixture_free(&f);
}

/* Reads a 600 KiB file in jumps and in spans under a memory limit (0: the
 * default); whole: whether the input should have switched to reading the
 * file whole (it does once its cache window has moved, if the limit lets). */
static void read_big_file(uint64_t limit, bool whole)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/big.bin", dir);
    /* 600 KiB of a known pattern: larger than the 256 KiB input cache */
    size_t n = 600 * 1024;
    uint8_t *data = malloc(n);
    REQUIRE(data != NULL);
    for (size_t i = 0; i < n; i++)
        data[i] = (uint8_t)(i * 7 + (i >> 10));
    FILE *fp = fopen(path, "wb");
    REQUIRE(fp != NULL);
    fwrite(data, 1, n, fp);
    fclose(fp);

    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_mem_limit(ctx, limit);
    trowel_input *in;
    REQUIRE(trowel_input_open_file(ctx, path, &in) == TROWEL_OK);
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    CHECK_EQ_U64(trowel_reader_size(&r), n);
    /* a read straddling the cache edge, then a far seek backwards */
    uint8_t buf[64];
    CHECK(trowel_reader_seek(&r, 262144 - 30) == TROWEL_OK);
    CHECK(trowel_read_bytes(&r, buf, sizeof buf) == TROWEL_OK);
    CHECK(memcmp(buf, data + 262144 - 30, sizeof buf) == 0);
    CHECK(trowel_reader_seek(&r, 5) == TROWEL_OK);
    CHECK(trowel_read_bytes(&r, buf, 8) == TROWEL_OK);
    CHECK(memcmp(buf, data + 5, 8) == 0);
    /* borrowing everything in spans reassembles the file */
    CHECK(trowel_reader_seek(&r, 0) == TROWEL_OK);
    size_t at = 0, got;
    const uint8_t *p;
    bool same = true;
    while (trowel_reader_borrow(&r, 70000, &p, &got) == TROWEL_OK && got) {
        same = same && memcmp(p, data + at, got) == 0;
        at += got;
    }
    CHECK(same);
    CHECK_EQ_U64(at, n);
    CHECK((in->mem != NULL) == whole);
    CHECK(trowel_ctx_last_error(ctx)->status == TROWEL_OK);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(data);
    remove_tree(dir);
}

static void test_reader_over_file_crosses_cache_boundaries(void)
{
    read_big_file(0, true);
    /* No room for the whole file: the window serves every read. */
    read_big_file(700 * 1024, false);
}

/* A stream input over a pipe holding n bytes of a pattern, under limit. */
static trowel_status stream_of(size_t n, uint64_t limit, bool *same)
{
    int fds[2];
    if (pipe(fds) != 0)
        return TROWEL_ERR_IO;
    uint8_t chunk[4096];
    for (size_t i = 0; i < sizeof chunk; i++)
        chunk[i] = (uint8_t)(i * 13);
    for (size_t left = n; left > 0;) { /* n stays under the pipe's buffer */
        size_t k = left < sizeof chunk ? left : sizeof chunk;
        if (write(fds[1], chunk, k) != (ssize_t)k)
            break;
        left -= k;
    }
    close(fds[1]);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_mem_limit(ctx, limit);
    trowel_input *in = NULL;
    trowel_status s = trowel_input_open_stream(ctx, fds[0], "(pipe)", &in);
    close(fds[0]);
    *same = false;
    if (s == TROWEL_OK) {
        trowel_reader r;
        trowel_reader_init(&r, ctx, in);
        uint8_t *all = NULL;
        size_t got = 0;
        *same = trowel_input_size(in) == n && trowel_reader_load(&r, &all, &got) == TROWEL_OK &&
                got == n;
        for (size_t i = 0; *same && i < n; i++)
            *same = all[i] == (uint8_t)((i % sizeof chunk) * 13);
        trowel_mem_free(ctx, all);
    } else {
        *same = strstr(trowel_ctx_last_error(ctx)->message, "larger than the memory limit") != NULL;
    }
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return s;
}

static void test_input_reads_a_stream_within_the_limit(void)
{
    bool same;
    CHECK(stream_of(0, 0, &same) == TROWEL_OK && same);
    CHECK(stream_of(50000, 0, &same) == TROWEL_OK && same);
    /* The stream's buffer counts: 50,000 bytes and their copy fit 110,000. */
    CHECK(stream_of(50000, 110000, &same) == TROWEL_OK && same);
    CHECK(stream_of(50000, 40000, &same) == TROWEL_ERR_LIMIT && same);
}

static void test_input_open_reports_missing_file_and_folder(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    CHECK(trowel_input_open_file(ctx, "/nonexistent/x", &in) == TROWEL_ERR_IO);
    CHECK(in == NULL);
    CHECK(trowel_input_open_file(ctx, "/tmp", &in) == TROWEL_ERR_IO);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "folder") != NULL);
    trowel_ctx_free(ctx);
}

/* ---------------------------------------------------------- paths */

static void test_path_normalize_rejects_escapes(void)
{
    char out[64];
    static const char *const bad[] = {
        "/etc/passwd", "\\windows\\x", "C:\\x", "c:x",       "../x",    "a/../../x",
        "a\\..\\..\\x", "..",          "",      "a/\x01/b", "./.",     "a/..",
        "x:y",         "\\\\server\\share",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (trowel_path_normalize(bad[i], out, sizeof out) != TROWEL_ERR_UNSAFE_PATH) {
            fprintf(stderr, "  accepted: '%s'\n", bad[i]);
            CHECK(0);
        }
    }
}

static void test_path_normalize_cleans_separators(void)
{
    char out[64];
    CHECK(trowel_path_normalize("scenes\\npc\\a.vcd", out, sizeof out) == TROWEL_OK);
    CHECK_STR(out, "scenes/npc/a.vcd");
    CHECK(trowel_path_normalize("./a//b/./c", out, sizeof out) == TROWEL_OK);
    CHECK_STR(out, "a/b/c");
    CHECK(trowel_path_normalize("..a/b..", out, sizeof out) == TROWEL_OK);
    CHECK_STR(out, "..a/b..");
    char small[4];
    CHECK(trowel_path_normalize("abcd", small, sizeof small) == TROWEL_ERR_UNSAFE_PATH);
}

/* ---------------------------------------------------------- sinks */

static void test_file_sink_appears_only_when_finished(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s;
    REQUIRE(trowel_sink_open_file(ctx, path, 0, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "hello", 5) == TROWEL_OK);
    struct stat st;
    CHECK(stat(path, &st) != 0); /* not there yet */
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    CHECK(stat(path, &st) == 0 && st.st_size == 5);
    CHECK_EQ_U64(count_dir_entries(dir), 1); /* no temporary left */

    /* discard leaves nothing */
    snprintf(path, sizeof path, "%s/gone.bin", dir);
    REQUIRE(trowel_sink_open_file(ctx, path, 0, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "partial", 7) == TROWEL_OK);
    trowel_sink_discard(s);
    CHECK(stat(path, &st) != 0);
    CHECK_EQ_U64(count_dir_entries(dir), 1);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

static void test_file_sink_refuses_overwrite_without_flag(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/x", dir);
    FILE *fp = fopen(path, "w");
    REQUIRE(fp != NULL);
    fputs("old", fp);
    fclose(fp);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s;
    CHECK(trowel_sink_open_file(ctx, path, 0, &s) == TROWEL_ERR_EXISTS);
    REQUIRE(trowel_sink_open_file(ctx, path, TROWEL_SINK_OVERWRITE, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "new!", 4) == TROWEL_OK);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == 4);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

static void test_file_sink_does_not_follow_symlink_at_target(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char victim[256], link[256];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    FILE *fp = fopen(victim, "w");
    REQUIRE(fp != NULL);
    fputs("precious", fp);
    fclose(fp);
    REQUIRE(symlink(victim, link) == 0);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s;
    REQUIRE(trowel_sink_open_file(ctx, link, TROWEL_SINK_OVERWRITE, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "x", 1) == TROWEL_OK);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    struct stat st;
    CHECK(stat(victim, &st) == 0 && st.st_size == 8); /* the link was replaced, not followed */
    CHECK(lstat(link, &st) == 0 && S_ISREG(st.st_mode));
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

static void test_outdir_refuses_unsafe_names_and_symlinked_folders(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char out[256], link[300];
    snprintf(out, sizeof out, "%s/out", dir);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_outdir *od;
    REQUIRE(trowel_outdir_open(ctx, out, 0, &od) == TROWEL_OK);
    trowel_sink *s;
    CHECK(trowel_outdir_create(od, "../escape", &s) == TROWEL_ERR_UNSAFE_PATH);
    CHECK(trowel_outdir_create(od, "/abs", &s) == TROWEL_ERR_UNSAFE_PATH);
    CHECK(trowel_outdir_create(od, "a\\..\\..\\b", &s) == TROWEL_ERR_UNSAFE_PATH);
    /* a link inside the folder pointing outside must not be walked through */
    snprintf(link, sizeof link, "%s/sneaky", out);
    REQUIRE(symlink(dir, link) == 0);
    CHECK(trowel_outdir_create(od, "sneaky/file", &s) == TROWEL_ERR_UNSAFE_PATH);
    /* nested names make their folders */
    REQUIRE(trowel_outdir_create(od, "sub\\dir/file.txt", &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "ok", 2) == TROWEL_OK);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    char made[300];
    snprintf(made, sizeof made, "%s/sub/dir/file.txt", out);
    struct stat st;
    CHECK(stat(made, &st) == 0 && st.st_size == 2);
    CHECK_EQ_U64(count_dir_entries(dir), 1); /* only out/: nothing escaped */
    trowel_outdir_close(od);
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

static void test_memory_sink_respects_limit(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_mem_limit(ctx, 100000);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    static uint8_t chunk[40000];
    CHECK(trowel_sink_write(s, chunk, sizeof chunk) == TROWEL_OK);
    trowel_status st = TROWEL_OK;
    for (int i = 0; i < 4 && st == TROWEL_OK; i++)
        st = trowel_sink_write(s, chunk, sizeof chunk);
    CHECK(st == TROWEL_ERR_LIMIT);
    CHECK(trowel_sink_write(s, "x", 1) == TROWEL_ERR_LIMIT); /* stays failed */
    trowel_sink_discard(s);
    trowel_ctx_free(ctx);
}

static void test_null_sink_counts_and_crcs(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s;
    REQUIRE(trowel_sink_open_null(ctx, &s) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "1234", 4) == TROWEL_OK);
    CHECK(trowel_sink_write(s, "56789", 5) == TROWEL_OK);
    CHECK_EQ_U64(trowel_sink_written(s), 9);
    CHECK_EQ_U64(trowel_sink_crc32(s), 0xCBF43926u); /* the CRC-32 check value */
    trowel_sink_discard(s);
    trowel_ctx_free(ctx);
}

/* ---------------------------------------------------------- memory */

static void test_memory_limit_refuses_and_recovers(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_mem_limit(ctx, 1000);
    void *a = trowel_mem_alloc(ctx, 600);
    CHECK(a != NULL);
    CHECK(trowel_mem_alloc(ctx, 600) == NULL);
    CHECK(trowel_ctx_last_error(ctx)->status == TROWEL_ERR_LIMIT);
    CHECK(trowel_mem_calloc(ctx, SIZE_MAX / 2, 4) == NULL);
    trowel_mem_free(ctx, a);
    void *b = trowel_mem_alloc(ctx, 900);
    CHECK(b != NULL);
    CHECK(trowel_mem_realloc(ctx, b, 2000) == NULL);
    trowel_mem_free(ctx, b);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_set_mem_limit(ctx, 0);
    CHECK_EQ_U64(trowel_ctx_mem_limit(ctx), TROWEL_DEFAULT_MEM_LIMIT);
    trowel_ctx_free(ctx);
}

/* The status-returning forms hand on the status of the failure they met,
 * even when an earlier, different error is still in the context. */
static void test_memory_status_forms_return_their_own_status(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_mem_limit(ctx, 1000);
    trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "an older error");
    char *big = (char *)ctx; /* must be overwritten with NULL */
    CHECK(trowel_mem_new(ctx, 2000, &big) == TROWEL_ERR_LIMIT);
    CHECK(big == NULL);
    uint32_t *words = NULL;
    CHECK(trowel_mem_new_zeroed(ctx, 10, sizeof *words, &words) == TROWEL_OK);
    CHECK(words != NULL && words[9] == 0);
    uint32_t *kept = words;
    CHECK(trowel_mem_resize_array(ctx, &words, SIZE_MAX / 2, 4) == TROWEL_ERR_LIMIT);
    CHECK(words == kept);
    CHECK(trowel_mem_resize_array(ctx, &words, 20, sizeof *words) == TROWEL_OK);
    char *copy;
    CHECK(trowel_mem_dup(ctx, "abc", &copy) == TROWEL_OK);
    CHECK(strcmp(copy, "abc") == 0);
    ctx->fail_alloc_after = 1;
    char *none;
    CHECK(trowel_mem_dup(ctx, "abc", &none) == TROWEL_ERR_NOMEM);
    CHECK(none == NULL);
    trowel_props *props;
    ctx->fail_alloc_after = 1;
    CHECK(trowel_props_create(ctx, &props) == TROWEL_ERR_NOMEM);
    CHECK(trowel_props_create(ctx, &props) == TROWEL_OK);
    trowel_props_free(props);
    trowel_mem_free(ctx, copy);
    trowel_mem_free(ctx, words);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

static void test_injected_allocation_failure_is_reported(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    ctx->fail_alloc_after = 2;
    void *a = trowel_mem_alloc(ctx, 10);
    CHECK(a != NULL);
    CHECK(trowel_mem_alloc(ctx, 10) == NULL);
    CHECK(trowel_ctx_last_error(ctx)->status == TROWEL_ERR_NOMEM);
    trowel_mem_free(ctx, a);
    trowel_ctx_free(ctx);
}

/* ---------------------------------------------------------- props */

static void test_props_keep_order_types_and_copies(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_props *p = trowel_props_new(ctx);
    char key[8] = "k1", val[8] = "hello";
    const char *list[] = {"a", "b"};
    CHECK(trowel_props_add_str(p, key, val) == TROWEL_OK);
    strcpy(key, "zz");
    strcpy(val, "bye");
    CHECK(trowel_props_add_uint(p, "n", 42) == TROWEL_OK);
    CHECK(trowel_props_add_hex(p, "h", 0xBEEF) == TROWEL_OK);
    CHECK(trowel_props_add_list(p, "l", list, 2) == TROWEL_OK);
    CHECK_EQ_U64(trowel_props_count(p), 4);
    CHECK_STR(trowel_props_at(p, 0)->key, "k1");
    CHECK_STR(trowel_props_at(p, 0)->s, "hello");
    CHECK(trowel_props_find(p, "h")->hex == 1);
    CHECK_STR(trowel_props_find(p, "l")->list[1], "b");
    CHECK(trowel_props_find(p, "missing") == NULL);
    trowel_props_free(p);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

static void test_options_check_and_get(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    const char *opts[] = {"variant=qbasic", "missing=x", "variant=normal"};
    const char *allowed[] = {"variant", "missing", NULL};
    const char *narrow[] = {"variant", NULL};
    CHECK(trowel_options_check(ctx, opts, 3, allowed) == TROWEL_OK);
    CHECK(trowel_options_check(ctx, opts, 3, narrow) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_options_get(opts, 3, "variant"), "normal");
    CHECK(trowel_options_get(opts, 3, "miss") == NULL);
    const char *bad[] = {"novalue"};
    CHECK(trowel_options_check(ctx, bad, 1, allowed) == TROWEL_ERR_USAGE);
    trowel_ctx_free(ctx);
}

static void test_status_strings_are_distinct(void)
{
    for (int a = TROWEL_OK; a <= TROWEL_ERR_VERIFY; a++)
        for (int b = a + 1; b <= TROWEL_ERR_VERIFY; b++)
            CHECK(strcmp(trowel_status_string((trowel_status)a),
                         trowel_status_string((trowel_status)b)) != 0);
}

TEST_MAIN(TEST(test_reader_reads_little_and_big_endian),
          TEST(test_reader_refuses_read_past_end_with_offset),
          TEST(test_reader_sub_window_is_bounded_and_offsets_absolute),
          TEST(test_reader_strings_stop_at_nul_and_cap),
          TEST(test_reader_strings_agree_in_memory_and_from_a_file),
          TEST(test_reader_reads_at_the_end_of_a_moved_cache_window),
          TEST(test_context_entry_name_is_cut_to_fit),
          TEST(test_reader_borrow_gives_spans_up_to_end),
          TEST(test_reader_over_file_crosses_cache_boundaries),
          TEST(test_input_reads_a_stream_within_the_limit),
          TEST(test_input_open_reports_missing_file_and_folder),
          TEST(test_path_normalize_rejects_escapes),
          TEST(test_path_normalize_cleans_separators),
          TEST(test_file_sink_appears_only_when_finished),
          TEST(test_file_sink_refuses_overwrite_without_flag),
          TEST(test_file_sink_does_not_follow_symlink_at_target),
          TEST(test_outdir_refuses_unsafe_names_and_symlinked_folders),
          TEST(test_memory_sink_respects_limit),
          TEST(test_null_sink_counts_and_crcs),
          TEST(test_memory_limit_refuses_and_recovers),
          TEST(test_memory_status_forms_return_their_own_status),
          TEST(test_injected_allocation_failure_is_reported),
          TEST(test_props_keep_order_types_and_copies),
          TEST(test_options_check_and_get),
          TEST(test_status_strings_are_distinct))
