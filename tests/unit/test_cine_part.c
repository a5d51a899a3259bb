/*
 * Cinematique part files (src/format/cine/part.c) through the public API:
 * a hand-built file read field by field, create (packing where it shrinks,
 * storing where it does not), manifest round trips to identical bytes,
 * detection by structure only, and hostile files refused with a message
 * naming the check.
 */
#include "test.h"

#include "core/bytes.h"
#include "trowel/trowel.h"

#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct buf {
    uint8_t *data;
    size_t len;
} buf;

static trowel_ctx *new_ctx(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        exit(2);
    return ctx;
}

/* The 16-byte packer stream of a hundred 'A': a literal, then a long copy
 * of 99 from 1 above (worked out like the vectors of test_bytekiller.c). */
static const uint8_t a100_stream[] = {0x80, 0x04, 0x67, 0x04, 0x00, 0x00, 0x00, 0x10,
                                      0x80, 0x04, 0x67, 0x14, 0x00, 0x00, 0x00, 0x64};

/* A part file: HELLO.TXT stored ("hello"), A100.BIN packed (a100_stream). */
static size_t build_part(uint8_t *f)
{
    memset(f, 0, 256);
    trowel_put_be16(f, 2);
    trowel_put_be16(f + 2, 30);
    size_t data = 4 + 2 * 30;
    memcpy(f + 4, "HELLO.TXT", 9);
    trowel_put_be32(f + 4 + 14, (uint32_t)data);
    trowel_put_be32(f + 4 + 18, 5);
    trowel_put_be32(f + 4 + 22, 5);
    memcpy(f + 34, "A100.BIN", 8);
    trowel_put_be32(f + 34 + 14, (uint32_t)data + 5);
    trowel_put_be32(f + 34 + 18, sizeof a100_stream);
    trowel_put_be32(f + 34 + 22, 100);
    memcpy(f + data, "hello", 5);
    memcpy(f + data + 5, a100_stream, sizeof a100_stream);
    return data + 5 + sizeof a100_stream;
}

static trowel_status open_mem(trowel_ctx *ctx, const uint8_t *d, size_t n, trowel_input **in,
                              trowel_archive **a)
{
    *a = NULL;
    trowel_status s = trowel_input_open_memory(ctx, d, n, "TEST.PRT", in);
    if (s != TROWEL_OK)
        return s;
    s = trowel_archive_open(ctx, *in, NULL, a);
    if (s != TROWEL_OK) {
        trowel_input_close(*in);
        *in = NULL;
    }
    return s;
}

static trowel_status read_entry(trowel_archive *a, trowel_ctx *ctx, size_t i, buf *out)
{
    trowel_sink *sink;
    out->data = NULL;
    out->len = 0;
    trowel_status s = trowel_sink_open_memory(ctx, &sink);
    if (s != TROWEL_OK)
        return s;
    s = trowel_archive_read_entry(a, i, sink);
    if (s == TROWEL_OK) {
        const uint8_t *d = trowel_sink_data(sink, &out->len);
        out->data = malloc(out->len + 1);
        memcpy(out->data, d, out->len);
    }
    trowel_sink_discard(sink);
    return s;
}

static bool message_has(trowel_ctx *ctx, const char *needle)
{
    const char *m = trowel_ctx_last_error(ctx)->message;
    if (strstr(m, needle))
        return true;
    fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", m, needle);
    return false;
}

/* ------------------------------------------------------------- reading */

static void test_cine_part_reads_hand_built_file(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t f[256];
    size_t n = build_part(f);
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(open_mem(ctx, f, n, &in, &a) == TROWEL_OK);
    CHECK_STR(trowel_format_id(trowel_archive_format(a)), "cine-part");
    REQUIRE(trowel_archive_entry_count(a) == 2);
    const trowel_entry *e0 = trowel_archive_entry(a, 0), *e1 = trowel_archive_entry(a, 1);
    CHECK_STR(e0->name, "HELLO.TXT");
    CHECK_STR(e0->method, "stored");
    CHECK_EQ_U64(e0->offset, 64);
    CHECK_STR(e1->name, "A100.BIN");
    CHECK_STR(e1->method, "bytekiller");
    CHECK_EQ_U64(e1->size, 100);
    CHECK_EQ_U64(e1->packed_size, 16);
    buf b;
    CHECK(read_entry(a, ctx, 0, &b) == TROWEL_OK && b.len == 5 && memcmp(b.data, "hello", 5) == 0);
    free(b.data);
    CHECK(read_entry(a, ctx, 1, &b) == TROWEL_OK && b.len == 100 && b.data[0] == 'A' &&
          b.data[99] == 'A' && memcmp(b.data, b.data + 1, 99) == 0);
    free(b.data);
    CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_OK);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

static void test_cine_part_detection_needs_consistent_structure(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t f[256];
    size_t n = build_part(f);
    trowel_input *in;
    const trowel_format *fmt;
    REQUIRE(trowel_input_open_memory(ctx, f, n, "x", &in) == TROWEL_OK);
    CHECK(trowel_detect(ctx, in, &fmt, NULL) == TROWEL_OK && fmt &&
          strcmp(trowel_format_id(fmt), "cine-part") == 0);
    trowel_input_close(in);
    int bid = 0;
    REQUIRE(trowel_input_open_memory(ctx, f, n, "x", &in) == TROWEL_OK);
    CHECK(trowel_detect(ctx, in, &fmt, &bid) == TROWEL_OK && bid > 10);
    trowel_input_close(in);
    /* The second entry's offset one byte too far: a damaged part file, a
     * weak bid (so that open can say what is wrong). */
    trowel_put_be32(f + 34 + 14, (uint32_t)(n - 15));
    REQUIRE(trowel_input_open_memory(ctx, f, n, "x", &in) == TROWEL_OK);
    fmt = NULL;
    CHECK(trowel_detect(ctx, in, &fmt, &bid) == TROWEL_OK && bid == 10 &&
          strcmp(trowel_format_id(fmt), "cine-part") == 0);
    trowel_input_close(in);
    /* The first entry's offset off too: nothing left to go on. */
    trowel_put_be32(f + 4 + 14, 65);
    REQUIRE(trowel_input_open_memory(ctx, f, n, "x", &in) == TROWEL_OK);
    fmt = NULL;
    CHECK(trowel_detect(ctx, in, &fmt, NULL) != TROWEL_OK || strcmp(trowel_format_id(fmt), "cine-part") != 0);
    trowel_input_close(in);
    /* Random data, many seeds, never detected as a part file. */
    uint8_t r[4096];
    uint64_t x = 12345;
    for (int round = 0; round < 2000; round++) {
        for (size_t i = 0; i < sizeof r; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            r[i] = (uint8_t)x;
        }
        if (round % 2) { /* half of them with a plausible header */
            trowel_put_be16(r, (uint16_t)(1 + round % 5));
            trowel_put_be16(r + 2, 30);
        }
        REQUIRE(trowel_input_open_memory(ctx, r, sizeof r, "r", &in) == TROWEL_OK);
        fmt = NULL;
        if (trowel_detect(ctx, in, &fmt, NULL) == TROWEL_OK)
            CHECK(strcmp(trowel_format_id(fmt), "cine-part") != 0);
        trowel_input_close(in);
    }
    /* The SZDD corpus files are not part files. */
    static const char *const szdd[] = {"DEFAULT.PA_", "GLOBE3.AN_", "INTRO.HL_", "RAIN.AN_"};
    for (size_t i = 0; i < 4; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/szdd/%s", TROWEL_CORPUS_DIR, szdd[i]);
        if (trowel_input_open_file(ctx, path, &in) != TROWEL_OK) {
            test_skip("%s absent", path);
            continue;
        }
        fmt = NULL;
        CHECK(trowel_detect(ctx, in, &fmt, NULL) == TROWEL_OK && strcmp(trowel_format_id(fmt), "szdd") == 0);
        trowel_input_close(in);
    }
    trowel_ctx_free(ctx);
}

/* ------------------------------------------------------------- hostile */

/* Opens (and, if that works, reads every entry of) a modified file;
 * returns the first failure. */
static trowel_status open_and_read(trowel_ctx *ctx, const uint8_t *f, size_t n)
{
    trowel_input *in;
    trowel_archive *a;
    trowel_status s = open_mem(ctx, f, n, &in, &a);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; s == TROWEL_OK && i < trowel_archive_entry_count(a); i++) {
        buf b;
        s = read_entry(a, ctx, i, &b);
        free(b.data);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    return s;
}

static trowel_status open_as_part(trowel_ctx *ctx, const uint8_t *f, size_t n)
{
    trowel_input *in;
    trowel_archive *a = NULL;
    trowel_status s = trowel_input_open_memory(ctx, f, n, "x", &in);
    if (s != TROWEL_OK)
        return s;
    s = trowel_archive_open(ctx, in, trowel_format_find("cine-part"), &a);
    for (size_t i = 0; s == TROWEL_OK && i < trowel_archive_entry_count(a); i++) {
        buf b;
        s = read_entry(a, ctx, i, &b);
        free(b.data);
    }
    if (a)
        trowel_archive_close(a);
    trowel_input_close(in);
    return s;
}

static void test_cine_part_rejects_hostile_files(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t f[256];
    size_t n = build_part(f);

    CHECK(open_and_read(ctx, f, n) == TROWEL_OK);

    n = build_part(f);
    trowel_put_be32(f + 4 + 18, 6); /* stored entry: packed 6 > unpacked 5 */
    CHECK(open_as_part(ctx, f, n) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "larger than the unpacked size"));

    n = build_part(f);
    trowel_put_be32(f + 34 + 14, 0x7fffff00); /* offset past the end */
    CHECK(open_as_part(ctx, f, n) == TROWEL_ERR_TRUNCATED);
    CHECK(message_has(ctx, "past the end"));

    n = build_part(f);
    memcpy(f + 4, "../EVIL\0\0", 9);
    CHECK(open_as_part(ctx, f, n) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "not a valid part-file name"));

    n = build_part(f);
    memset(f + 4, 'A', 14); /* no NUL in the name field */
    CHECK(open_as_part(ctx, f, n) == TROWEL_ERR_CORRUPT);

    n = build_part(f);
    f[n - 10] ^= 0x40; /* a data word of the packed entry: checksum */
    CHECK(open_as_part(ctx, f, n) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "checksum"));

    n = build_part(f);
    trowel_put_be32(f + 34 + 22, 101); /* unpacked size disagrees with the stream */
    CHECK(open_as_part(ctx, f, n) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "length field says 100"));

    n = build_part(f);
    trowel_put_be32(f + 34 + 22, 15); /* packed 16 > unpacked 15 */
    CHECK(open_as_part(ctx, f, n) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "larger than the unpacked size"));

    n = build_part(f);
    CHECK(open_as_part(ctx, f, 40) == TROWEL_ERR_TRUNCATED); /* directory cut */

    n = build_part(f);
    trowel_put_be16(f + 2, 32);
    CHECK(open_as_part(ctx, f, n) == TROWEL_ERR_UNSUPPORTED);
    trowel_ctx_free(ctx);
}

static void test_cine_part_verify_reports_duplicates_and_overlaps(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t f[256];
    size_t n = build_part(f);
    memcpy(f + 34, "HELLO.TXT", 10);
    trowel_put_be32(f + 34 + 14, 64); /* both entries share bytes too */
    trowel_put_be32(f + 34 + 18, 5);
    trowel_put_be32(f + 34 + 22, 5);
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(open_mem(ctx, f, n, &in, &a) == TROWEL_OK);
    CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_ERR_VERIFY);
    CHECK(message_has(ctx, "2 problems"));
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

/* -------------------------------------------------------------- create */

static char tmpdir[256];

static void write_file(const char *name, const void *d, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    if (f) {
        if (n)
            fwrite(d, 1, n, f);
        fclose(f);
    }
}

static trowel_status create_mem(trowel_ctx *ctx, const char *const *names, size_t n,
                                const char *const *opts, size_t nopts, const char *manifest,
                                buf *out)
{
    trowel_source src[8];
    char paths[8][512];
    for (size_t i = 0; i < n; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", tmpdir, names[i]);
        src[i].name = names[i];
        src[i].path = paths[i];
    }
    trowel_create_params p = {src, n, opts, nopts, manifest, tmpdir};
    trowel_sink *sink;
    out->data = NULL;
    out->len = 0;
    trowel_status s = trowel_sink_open_memory(ctx, &sink);
    if (s != TROWEL_OK)
        return s;
    s = trowel_create(ctx, trowel_format_find("cine-part"), &p, sink);
    if (s == TROWEL_OK) {
        const uint8_t *d = trowel_sink_data(sink, &out->len);
        out->data = malloc(out->len + 1);
        memcpy(out->data, d, out->len);
    }
    trowel_sink_discard(sink);
    return s;
}

static void test_cine_part_create_round_trips(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/trowel-cine-part.XXXXXX");
    REQUIRE(mkdtemp(tmpdir) != NULL);
    trowel_ctx *ctx = new_ctx();
    char text[20000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = "the quick brown fox jumps over the lazy dog\n"[i % 44];
    uint8_t noise[3000];
    uint64_t x = 99;
    for (size_t i = 0; i < sizeof noise; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        noise[i] = (uint8_t)x;
    }
    write_file("TEXT.TXT", text, sizeof text);
    write_file("NOISE.BIN", noise, sizeof noise);
    write_file("A11.BIN", "AAAAAAAAAAA", 11);
    write_file("EMPTY", "", 0);
    static const char *const names[] = {"TEXT.TXT", "NOISE.BIN", "A11.BIN", "EMPTY"};
    buf p1, p2;
    REQUIRE(create_mem(ctx, names, 4, NULL, 0, NULL, &p1) == TROWEL_OK);
    REQUIRE(create_mem(ctx, names, 4, NULL, 0, NULL, &p2) == TROWEL_OK);
    CHECK(p1.len == p2.len && memcmp(p1.data, p2.data, p1.len) == 0); /* deterministic */
    free(p2.data);

    trowel_input *in;
    trowel_archive *a;
    REQUIRE(open_mem(ctx, p1.data, p1.len, &in, &a) == TROWEL_OK);
    REQUIRE(trowel_archive_entry_count(a) == 4);
    CHECK_STR(trowel_archive_entry(a, 0)->method, "bytekiller");
    CHECK(trowel_archive_entry(a, 0)->packed_size < 2000);
    CHECK_STR(trowel_archive_entry(a, 1)->method, "stored"); /* packing would grow it */
    CHECK_STR(trowel_archive_entry(a, 2)->method, "stored"); /* 16 > 11 bytes */
    CHECK_STR(trowel_archive_entry(a, 3)->method, "stored");
    buf b;
    CHECK(read_entry(a, ctx, 0, &b) == TROWEL_OK && b.len == sizeof text &&
          memcmp(b.data, text, sizeof text) == 0);
    free(b.data);
    CHECK(read_entry(a, ctx, 1, &b) == TROWEL_OK && b.len == sizeof noise &&
          memcmp(b.data, noise, sizeof noise) == 0);
    free(b.data);
    CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_OK);

    /* Manifest round trip: the same bytes again. */
    char *m = NULL;
    REQUIRE(trowel_archive_manifest(a, &m) == TROWEL_OK);
    CHECK(strstr(m, "\"stored\"") != NULL);
    CHECK(create_mem(ctx, NULL, 0, NULL, 0, m, &p2) == TROWEL_OK);
    CHECK(p2.len == p1.len && memcmp(p2.data, p1.data, p1.len) == 0);
    free(p2.data);
    trowel_free(m);
    trowel_archive_close(a);
    trowel_input_close(in);

    /* method=stored keeps everything as it is. */
    static const char *const stored[] = {"method=stored"};
    REQUIRE(create_mem(ctx, names, 1, stored, 1, NULL, &p2) == TROWEL_OK);
    CHECK_EQ_U64(p2.len, 4 + 30 + sizeof text);
    free(p2.data);
    free(p1.data);

    /* Names that cannot be stored. */
    write_file("FOURTEENCHARS1", "x", 1);
    static const char *const long_name[] = {"FOURTEENCHARS1"};
    CHECK(create_mem(ctx, long_name, 1, NULL, 0, NULL, &p2) == TROWEL_ERR_USAGE);
    static const char *const bad_opt[] = {"level=9"};
    CHECK(create_mem(ctx, names, 1, bad_opt, 1, NULL, &p2) == TROWEL_ERR_USAGE);
    trowel_ctx_free(ctx);

    static const char *const all[] = {"TEXT.TXT", "NOISE.BIN", "A11.BIN", "EMPTY", "FOURTEENCHARS1"};
    for (size_t i = 0; i < 5; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", tmpdir, all[i]);
        unlink(path);
    }
    rmdir(tmpdir);
}

/* Counts warnings, keeps the last. */
typedef struct warnings {
    int count;
    char last[512];
} warnings;

static void count_warning(void *user, const trowel_error *w)
{
    warnings *ws = user;
    ws->count++;
    snprintf(ws->last, sizeof ws->last, "%s", w->message);
}

/* A file cut inside its second entry's data: both listed, the first read,
 * the second failing with its name and offsets, the archive damaged. */
static void test_cine_part_cut_file_keeps_what_can_be_read(void)
{
    trowel_ctx *ctx = new_ctx();
    warnings ws = {0};
    trowel_ctx_set_warning_handler(ctx, count_warning, &ws);
    uint8_t f[256];
    size_t n = build_part(f);
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(open_mem(ctx, f, n, &in, &a) == TROWEL_OK);
    CHECK(!trowel_archive_damaged(a));
    CHECK_EQ_U64(ws.count, 0);
    trowel_archive_close(a);
    trowel_input_close(in);

    REQUIRE(trowel_input_open_memory(ctx, f, n - 3, "CUT.PRT", &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, trowel_format_find("cine-part"), &a) == TROWEL_OK);
    CHECK(trowel_archive_damaged(a));
    CHECK_EQ_U64(trowel_archive_entry_count(a), 2);
    CHECK_EQ_U64(ws.count, 1);
    char want[256];
    snprintf(want, sizeof want,
             "entry 1 (A100.BIN): %zu bytes at offset 69 run past the end of the %zu-byte file",
             n - 69, n - 3);
    CHECK_STR(ws.last, want);
    buf b;
    CHECK(read_entry(a, ctx, 0, &b) == TROWEL_OK);
    CHECK(b.len == 5 && memcmp(b.data, "hello", 5) == 0);
    free(b.data);
    CHECK(read_entry(a, ctx, 1, &b) == TROWEL_ERR_TRUNCATED);
    free(b.data);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, want);
    CHECK_STR(trowel_ctx_last_error(ctx)->entry, "A100.BIN");
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, 34 + 14);
    trowel_archive_close(a);
    trowel_input_close(in);

    /* A cut directory is refused, not damaged. */
    REQUIRE(trowel_input_open_memory(ctx, f, 40, "DIR.PRT", &in) == TROWEL_OK);
    CHECK(trowel_archive_open(ctx, in, trowel_format_find("cine-part"), &a) == TROWEL_ERR_TRUNCATED);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "directory of 2 entries needs 64 bytes but the file has 40");
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_cine_part_reads_hand_built_file),
          TEST(test_cine_part_cut_file_keeps_what_can_be_read),
          TEST(test_cine_part_detection_needs_consistent_structure),
          TEST(test_cine_part_rejects_hostile_files),
          TEST(test_cine_part_verify_reports_duplicates_and_overlaps),
          TEST(test_cine_part_create_round_trips))
