/*
 * Unit tests for trowel_entry_reader (reads of an entry at any offset, what
 * trowel mount serves large entries with): for VPPs made here in every mode
 * that streams (stored, zlib, solid compressed+condensed, v17 LZ4), reads
 * forwards, backwards and at random offsets give the bytes a whole read
 * gives; the memory held stays small whatever the entry's size; a wrong
 * Adler-32 fails the read that reaches the entry's end; two readers over
 * one file input read in turn stay right; entries only a
 * whole decode gives (an SZDD file's LZSS) are TROWEL_ERR_UNSUPPORTED with
 * no error set; a bad index is a usage error.
 */
#include "files.h"
#include "test.h"

#include <trowel/trowel.h>

#include <stdio.h>
#include <string.h>

#define SZDD_FILE TROWEL_SOURCE_DIR "/tests/data/corpus/szdd/DEFAULT.PA_"
#define ENTRY_SIZE (3u << 20) /* 3 MiB: many reads, and more than a chunk */

/* Text that compresses but never repeats exactly: numbered lines. */
static uint8_t *make_source(size_t size)
{
    uint8_t *p = malloc(size);
    size_t at = 0;
    for (unsigned line = 0; p && at < size; line++) {
        char text[64];
        int n = snprintf(text, sizeof text, "line %u of the entry %u\n", line, line * 7919u);
        size_t take = (size_t)n < size - at ? (size_t)n : size - at;
        memcpy(p + at, text, take);
        at += take;
    }
    return p;
}

/* Makes a VPP at out holding src as "big.bin" (and a small "a.txt" before
 * it, so the entry does not start the stream) with the given options. */
static bool make_vpp(const char *dir, const char *out, const char *const *opts, size_t nopts)
{
    char big[512], small[512];
    snprintf(big, sizeof big, "%s/big.bin", dir);
    snprintf(small, sizeof small, "%s/a.txt", dir);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_source src[2] = {{"a.txt", small}, {"big.bin", big}};
    trowel_create_params p = {src, 2, opts, nopts, NULL, NULL};
    trowel_sink *s;
    trowel_status st = trowel_sink_open_file(ctx, out, TROWEL_SINK_OVERWRITE, &s);
    if (st == TROWEL_OK) {
        st = trowel_create(ctx, trowel_format_find("vpp"), &p, s);
        if (st == TROWEL_OK)
            st = trowel_sink_finish(s);
        else
            trowel_sink_discard(s);
    }
    trowel_ctx_free(ctx);
    return st == TROWEL_OK;
}

/* The archive over the file's bytes in memory: a file input may read a
 * small file whole once reads jump about, which would blur what the
 * reader itself holds. */
typedef struct opened {
    trowel_ctx *ctx;
    bytes file;
    trowel_input *in;
    trowel_archive *a;
} opened;

static bool open_archive(opened *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->ctx = trowel_ctx_new();
    o->file = read_file(path);
    return o->ctx && o->file.data &&
           trowel_input_open_memory(o->ctx, o->file.data, o->file.size, path, &o->in) ==
               TROWEL_OK &&
           trowel_archive_open(o->ctx, o->in, NULL, &o->a) == TROWEL_OK;
}

static void close_archive(opened *o)
{
    trowel_archive_close(o->a);
    trowel_input_close(o->in);
    trowel_ctx_free(o->ctx);
    free(o->file.data);
}

/* Reads [off, off + len) through r and compares it with want. */
static bool slice_matches(trowel_entry_reader *r, const uint8_t *want, size_t want_size,
                          uint64_t off, size_t len)
{
    static uint8_t buf[200000];
    size_t got = 0;
    if (len > sizeof buf || trowel_entry_reader_read(r, off, buf, len, &got) != TROWEL_OK)
        return false;
    size_t expect = off >= want_size ? 0 : (want_size - off < len ? want_size - off : len);
    return got == expect && (got == 0 || memcmp(buf, want + off, got) == 0);
}

/* Entry 1 of the VPP made with opts reads as src by any slices, with the
 * memory held by the reader far below the entry's size. */
static void check_mode(const char *dir, const uint8_t *src, const char *name,
                       const char *const *opts, size_t nopts, const char *method,
                       uint64_t max_held)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.vpp_pc", dir, name);
    REQUIRE(make_vpp(dir, path, opts, nopts));
    opened o;
    REQUIRE(open_archive(&o, path));
    REQUIRE(trowel_archive_entry_count(o.a) == 2);
    CHECK(strcmp(trowel_archive_entry(o.a, 1)->method, method) == 0);
    uint64_t base = trowel_ctx_mem_in_use(o.ctx); /* the archive's own */
    trowel_entry_reader *r = NULL;
    CHECK(trowel_entry_reader_open(o.a, 1, &r) == TROWEL_OK);
    if (!r) {
        close_archive(&o);
        return;
    }
    CHECK_EQ_U64(trowel_entry_reader_size(r), ENTRY_SIZE);
    bool ok = true;
    uint64_t peak = 0;
    for (uint64_t off = 0; off < ENTRY_SIZE; off += 131072) { /* forwards, to the end */
        ok = ok && slice_matches(r, src, ENTRY_SIZE, off, 131072);
        peak = trowel_ctx_mem_in_use(o.ctx) > peak ? trowel_ctx_mem_in_use(o.ctx) : peak;
    }
    CHECK(ok);
    CHECK(trowel_ctx_mem_in_use(o.ctx) > base || !strcmp(name, "stored")); /* a decoder */
    printf("  %s: %llu bytes held by the archive, at most %llu more while reading\n", name,
           (unsigned long long)base, (unsigned long long)(peak - base));
    CHECK(peak - base < max_held); /* a decoder and a read, not the entry */
    /* backwards, then scattered (a fixed sequence), then past the end */
    CHECK(slice_matches(r, src, ENTRY_SIZE, 2000000, 5000));
    CHECK(slice_matches(r, src, ENTRY_SIZE, 10, 100));
    uint64_t x = 12345;
    for (int i = 0; i < 40 && ok; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        ok = slice_matches(r, src, ENTRY_SIZE, (x >> 20) % (ENTRY_SIZE + 100), 1 + (x >> 8) % 70000);
    }
    CHECK(ok);
    CHECK(slice_matches(r, src, ENTRY_SIZE, ENTRY_SIZE - 3, 100));
    CHECK(slice_matches(r, src, ENTRY_SIZE, ENTRY_SIZE + 5, 100));
    trowel_entry_reader_close(r);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(o.ctx), base);
    close_archive(&o);
}

static void test_entry_reader_every_streaming_vpp_mode(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir);
    uint8_t *src = make_source(ENTRY_SIZE);
    REQUIRE(src);
    char p[512];
    snprintf(p, sizeof p, "%s/big.bin", dir);
    write_file(p, src, ENTRY_SIZE);
    snprintf(p, sizeof p, "%s/a.txt", dir);
    write_file(p, "small\n", 6);
    check_mode(dir, src, "stored", NULL, 0, "stored", 1u << 20);
    const char *zlib[] = {"compressed=1", "level=1"};
    check_mode(dir, src, "zlib", zlib, 2, "zlib", 1u << 20);
    const char *solid[] = {"compressed=1", "condensed=1", "level=1"};
    check_mode(dir, src, "solid", solid, 3, "zlib-solid", 1u << 20);
    const char *lz4[] = {"version=17", "compressed=1"};
    /* (an LZ4 frame's decoder buffers a block: trowel writes them small) */
    check_mode(dir, src, "lz4", lz4, 2, "lz4", 1u << 20);
    free(src);
    remove_tree(dir);
}

/* The zlib stream's Adler-32 made wrong: the slices before the end read,
 * the one that reaches the end fails naming the entry. */
static void test_entry_reader_checks_the_stream_end(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir);
    uint8_t *src = make_source(ENTRY_SIZE);
    REQUIRE(src);
    char p[512], vpp[512];
    snprintf(p, sizeof p, "%s/big.bin", dir);
    write_file(p, src, ENTRY_SIZE);
    snprintf(p, sizeof p, "%s/a.txt", dir);
    write_file(p, "small\n", 6);
    snprintf(vpp, sizeof vpp, "%s/z.vpp_pc", dir);
    const char *zlib[] = {"compressed=1", "level=1"};
    REQUIRE(make_vpp(dir, vpp, zlib, 2));
    opened o;
    REQUIRE(open_archive(&o, vpp));
    const trowel_entry *e = trowel_archive_entry(o.a, 1);
    uint64_t last = e->offset + e->packed_size - 1;
    close_archive(&o);
    bytes b = read_file(vpp);
    REQUIRE(b.data && last < b.size);
    b.data[last] ^= 0x55;
    write_file(vpp, b.data, b.size);
    free(b.data);
    REQUIRE(open_archive(&o, vpp));
    trowel_entry_reader *r = NULL;
    REQUIRE(trowel_entry_reader_open(o.a, 1, &r) == TROWEL_OK);
    CHECK(slice_matches(r, src, ENTRY_SIZE, 0, 100000));
    uint8_t buf[4096];
    size_t got = 99;
    CHECK(trowel_entry_reader_read(r, ENTRY_SIZE - sizeof buf, buf, sizeof buf, &got) ==
          TROWEL_ERR_CORRUPT);
    CHECK_EQ_U64(got, 0);
    CHECK(strcmp(trowel_ctx_last_error(o.ctx)->entry, "big.bin") == 0);
    trowel_entry_reader_close(r);
    close_archive(&o);
    free(src);
    remove_tree(dir);
}

/* Two readers of one entry over one file input, read in turn (as trowel
 * mount serves two programs): each decoder must not keep pointers into the
 * input's read window, which the other's reads refill. */
static void test_entry_reader_two_readers_on_one_file(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir);
    uint8_t *src = make_source(ENTRY_SIZE);
    REQUIRE(src);
    char p[512], vpp[512];
    snprintf(p, sizeof p, "%s/big.bin", dir);
    write_file(p, src, ENTRY_SIZE);
    snprintf(p, sizeof p, "%s/a.txt", dir);
    write_file(p, "small\n", 6);
    snprintf(vpp, sizeof vpp, "%s/z.vpp_pc", dir);
    const char *zlib[] = {"compressed=1", "level=1"};
    REQUIRE(make_vpp(dir, vpp, zlib, 2));
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    REQUIRE(trowel_input_open_file(ctx, vpp, &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    trowel_entry_reader *one = NULL, *two = NULL;
    REQUIRE(trowel_entry_reader_open(a, 1, &one) == TROWEL_OK);
    REQUIRE(trowel_entry_reader_open(a, 1, &two) == TROWEL_OK);
    bool ok = true;
    for (uint64_t off = 0; ok && off + 2000000 + 50000 < ENTRY_SIZE; off += 50000)
        ok = slice_matches(one, src, ENTRY_SIZE, off, 50000) &&
             slice_matches(two, src, ENTRY_SIZE, off + 2000000, 50000);
    CHECK(ok);
    trowel_entry_reader_close(one);
    trowel_entry_reader_close(two);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(src);
    remove_tree(dir);
}

static void test_entry_reader_refuses_what_it_cannot_stream(void)
{
    if (!have_file(SZDD_FILE))
        return;
    opened o;
    REQUIRE(open_archive(&o, SZDD_FILE));
    trowel_entry_reader *r = (trowel_entry_reader *)&o; /* must be reset */
    trowel_ctx_clear_error(o.ctx);
    CHECK(trowel_entry_reader_open(o.a, 0, &r) == TROWEL_ERR_UNSUPPORTED);
    CHECK(r == NULL);
    CHECK(trowel_ctx_last_error(o.ctx)->status == TROWEL_OK); /* nothing wrong: read it whole */
    CHECK(trowel_entry_reader_open(o.a, 7, &r) == TROWEL_ERR_USAGE);
    CHECK(r == NULL);
    trowel_entry_reader_close(NULL);
    close_archive(&o);
}

TEST_MAIN(TEST(test_entry_reader_every_streaming_vpp_mode),
          TEST(test_entry_reader_checks_the_stream_end),
          TEST(test_entry_reader_two_readers_on_one_file),
          TEST(test_entry_reader_refuses_what_it_cannot_stream))
