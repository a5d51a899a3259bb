/*
 * VOL.CNF (src/format/cine/volcnf.c): hand-built tables with 11- and
 * 13-character names (the seed's name examples), the ABASECP-packed form,
 * entries read from the part files beside VOL.CNF, create with every
 * option, and hostile tables refused with a message.
 */
#include "test.h"

#include "core/bytes.h"
#include "trowel/trowel.h"

#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static trowel_ctx *new_ctx(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        exit(2);
    return ctx;
}

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

static void write_file(const char *name, const void *d, size_t n)
{
    char path[512];
    path_in(path, sizeof path, name);
    FILE *f = fopen(path, "wb");
    if (f) {
        if (n)
            fwrite(d, 1, n, f);
        fclose(f);
    }
}

static void remove_file(const char *name)
{
    char path[512];
    path_in(path, sizeof path, name);
    unlink(path);
}

/* A plain VOL.CNF with one volume (PROCS00, disk 2) listing the seed's
 * four 11-character names. */
static size_t build_11(uint8_t *f)
{
    static const char names[] = "AEROPORTMSG"
                                "MITRAILLHP "
                                "BOND10     "
                                "GIRL    SET";
    memset(f, 0, 128);
    trowel_put_be16(f, 1);
    trowel_put_be16(f + 2, 20);
    memcpy(f + 4, "PROCS00", 7);
    trowel_put_be16(f + 4 + 14, 2);
    trowel_put_be32(f + 4 + 16, 1234);
    trowel_put_be32(f + 24, 44);
    memcpy(f + 28, names, 44);
    return 28 + 44;
}

static trowel_status open_file(trowel_ctx *ctx, const char *name, trowel_input **in,
                               trowel_archive **a)
{
    char path[512];
    path_in(path, sizeof path, name);
    *a = NULL;
    trowel_status s = trowel_input_open_file(ctx, path, in);
    if (s != TROWEL_OK)
        return s;
    s = trowel_archive_open(ctx, *in, NULL, a);
    if (s != TROWEL_OK)
        trowel_input_close(*in);
    return s;
}

static void test_cine_volcnf_reads_11_character_names(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t f[128];
    size_t n = build_11(f);
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(trowel_input_open_memory(ctx, f, n, "VOL.CNF", &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    CHECK_STR(trowel_format_id(trowel_archive_format(a)), "cine-volcnf");
    /* 44 divides by 11 only. */
    CHECK_EQ_U64(trowel_props_find(trowel_archive_info(a), "name_width")->u, 11);
    REQUIRE(trowel_archive_entry_count(a) == 4);
    CHECK_STR(trowel_archive_entry(a, 0)->name, "PROCS00/AEROPORT.MSG");
    CHECK_STR(trowel_archive_entry(a, 1)->name, "PROCS00/MITRAILL.HP");
    CHECK_STR(trowel_archive_entry(a, 2)->name, "PROCS00/BOND10");
    CHECK_STR(trowel_archive_entry(a, 3)->name, "PROCS00/GIRL.SET");
    const trowel_prop *disk = trowel_props_find(trowel_archive_entry(a, 0)->extra, "disk");
    CHECK(disk && disk->i == 2);
    const trowel_prop *present = trowel_props_find(trowel_archive_entry(a, 0)->extra, "present");
    CHECK(present && present->i == 0); /* no volume beside a memory input */
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

static trowel_status create_file(trowel_ctx *ctx, const char *format, const char *const *names,
                                 size_t n, const char *const *opts, size_t nopts, const char *out)
{
    trowel_source src[8];
    char paths[8][512];
    for (size_t i = 0; i < n; i++) {
        path_in(paths[i], sizeof paths[i], names[i]);
        src[i].name = names[i];
        src[i].path = paths[i];
    }
    trowel_create_params p = {src, n, opts, nopts, NULL, dir};
    char path[512];
    path_in(path, sizeof path, out);
    trowel_sink *sink;
    trowel_status s = trowel_sink_open_file(ctx, path, TROWEL_SINK_OVERWRITE, &sink);
    if (s != TROWEL_OK)
        return s;
    s = trowel_create(ctx, trowel_format_find(format), &p, sink);
    if (s == TROWEL_OK)
        return trowel_sink_finish(sink);
    trowel_sink_discard(sink);
    return s;
}

static bool entry_bytes_are(trowel_ctx *ctx, trowel_archive *a, size_t i, const char *want)
{
    trowel_sink *sink;
    if (trowel_sink_open_memory(ctx, &sink) != TROWEL_OK)
        return false;
    bool ok = trowel_archive_read_entry(a, i, sink) == TROWEL_OK;
    size_t n;
    const uint8_t *d = trowel_sink_data(sink, &n);
    ok = ok && n == strlen(want) && memcmp(d, want, n) == 0;
    trowel_sink_discard(sink);
    return ok;
}

/* Progress as a caller sees it: every report in one total, never back. */
typedef struct progress_log {
    uint64_t last, total;
    size_t reports;
    bool steady;
} progress_log;

static void on_progress(void *user, uint64_t done, uint64_t total)
{
    progress_log *log = user;
    if (log->reports++ == 0)
        log->total = total;
    if (total != log->total || done < log->last || done > total)
        log->steady = false;
    log->last = done;
}

static void setup(void);

static void test_cine_volcnf_create_and_extract_beside(void)
{
    setup();
    trowel_ctx *ctx = new_ctx();
    char text[3000];
    for (size_t i = 0; i < sizeof text - 1; i++)
        text[i] = "volume text, repeated. "[i % 23];
    text[sizeof text - 1] = '\0';
    write_file("AUTO00.PRC", text, strlen(text));
    write_file("MASKG.REL", "mask", 4);
    write_file("GIRL.SET", "girl", 4);
    static const char *const p1[] = {"AUTO00.PRC", "MASKG.REL"};
    static const char *const p2[] = {"GIRL.SET"};
    REQUIRE(create_file(ctx, "cine-part", p1, 2, NULL, 0, "PROCS00") == TROWEL_OK);
    REQUIRE(create_file(ctx, "cine-part", p2, 1, NULL, 0, "RSC04") == TROWEL_OK);
    static const char *const vols[] = {"PROCS00", "RSC04"};

    static const char *const variants[][2] = {
        {"compress=0", "names=13"}, {"compress=0", "names=11"},
        {"compress=1", "names=11"}, {"compress=1", "names=13"}};
    for (size_t v = 0; v < 4; v++) {
        REQUIRE(create_file(ctx, "cine-volcnf", vols, 2, variants[v], 2, "VOL.CNF") == TROWEL_OK);
        trowel_input *in;
        trowel_archive *a;
        REQUIRE(open_file(ctx, "VOL.CNF", &in, &a) == TROWEL_OK);
        CHECK_STR(trowel_format_id(trowel_archive_format(a)), "cine-volcnf");
        const trowel_props *info = trowel_archive_info(a);
        CHECK_EQ_U64(trowel_props_find(info, "name_width")->u, variants[v][1][7] == '1' ? 11 : 13);
        CHECK_EQ_U64(trowel_props_find(info, "compressed")->i, variants[v][0][9] == '1');
        REQUIRE(trowel_archive_entry_count(a) == 3);
        CHECK_STR(trowel_archive_entry(a, 0)->name, "PROCS00/AUTO00.PRC");
        CHECK_STR(trowel_archive_entry(a, 0)->method, "bytekiller");
        CHECK_EQ_U64(trowel_archive_entry(a, 0)->size, strlen(text));
        CHECK_STR(trowel_archive_entry(a, 2)->name, "RSC04/GIRL.SET");
        /* Each entry is read from its volume, itself an archive: progress
         * stays on VOL.CNF's scale, all the way to its total. */
        progress_log log = {0, 0, 0, true};
        trowel_ctx_set_progress_handler(ctx, on_progress, &log);
        CHECK(entry_bytes_are(ctx, a, 0, text));
        CHECK(entry_bytes_are(ctx, a, 1, "mask"));
        CHECK(entry_bytes_are(ctx, a, 2, "girl"));
        trowel_ctx_set_progress_handler(ctx, NULL, NULL);
        CHECK(log.steady && log.reports > 0);
        CHECK_EQ_U64(log.total, strlen(text) + 8);
        CHECK_EQ_U64(log.last, log.total);
        CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_OK);
        trowel_archive_close(a);
        trowel_input_close(in);
    }

    /* A volume missing beside VOL.CNF: listed, but reading it fails. */
    remove_file("RSC04");
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(open_file(ctx, "VOL.CNF", &in, &a) == TROWEL_OK);
    CHECK_STR(trowel_archive_entry(a, 2)->method, "absent");
    CHECK(!entry_bytes_are(ctx, a, 2, "girl"));
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "not beside VOL.CNF") != NULL);
    CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_ERR_VERIFY);
    trowel_archive_close(a);
    trowel_input_close(in);

    /* Options refused. */
    static const char *const bad_names[] = {"names=12"};
    CHECK(create_file(ctx, "cine-volcnf", vols, 1, bad_names, 1, "BAD.CNF") == TROWEL_ERR_USAGE);
    static const char *const bad_key[] = {"level=1"};
    CHECK(create_file(ctx, "cine-volcnf", vols, 1, bad_key, 1, "BAD.CNF") == TROWEL_ERR_USAGE);
    /* A name that has no 11-character form. */
    write_file("LONGNAME1.TXT", "x", 1);
    static const char *const p3[] = {"LONGNAME1.TXT"};
    REQUIRE(create_file(ctx, "cine-part", p3, 1, NULL, 0, "LONGVOL") == TROWEL_OK);
    static const char *const lv[] = {"LONGVOL"};
    static const char *const n11[] = {"names=11"};
    CHECK(create_file(ctx, "cine-volcnf", lv, 1, n11, 1, "BAD.CNF") == TROWEL_ERR_USAGE);

    static const char *const files[] = {"AUTO00.PRC", "MASKG.REL", "GIRL.SET", "PROCS00", "VOL.CNF",
                                        "LONGNAME1.TXT", "LONGVOL", "BAD.CNF"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        remove_file(files[i]);
    CHECK(rmdir(dir) == 0);
    trowel_ctx_free(ctx);
}

static trowel_status open_as_volcnf(trowel_ctx *ctx, const uint8_t *f, size_t n)
{
    trowel_input *in;
    trowel_archive *a = NULL;
    trowel_status s = trowel_input_open_memory(ctx, f, n, "VOL.CNF", &in);
    if (s != TROWEL_OK)
        return s;
    s = trowel_archive_open(ctx, in, trowel_format_find("cine-volcnf"), &a);
    if (a)
        trowel_archive_close(a);
    trowel_input_close(in);
    return s;
}

static void test_cine_volcnf_rejects_hostile_tables(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t f[128];
    size_t n = build_11(f);
    CHECK(open_as_volcnf(ctx, f, n - 1) != TROWEL_OK); /* list cut short */
    n = build_11(f);
    trowel_put_be32(f + 24, 45); /* neither 11 nor 13 divides it */
    CHECK(open_as_volcnf(ctx, f, n + 1) == TROWEL_ERR_CORRUPT);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "do not fit") != NULL);
    n = build_11(f);
    memcpy(f + 4, "..\0\0\0\0\0", 7); /* a volume named .. */
    CHECK(open_as_volcnf(ctx, f, n) == TROWEL_ERR_CORRUPT);
    n = build_11(f);
    memcpy(f + 28, "../ETC  PAS", 11); /* a file name with a separator */
    CHECK(open_as_volcnf(ctx, f, n) == TROWEL_ERR_CORRUPT);
    n = build_11(f);
    trowel_put_be16(f + 2, 22);
    CHECK(open_as_volcnf(ctx, f, n) == TROWEL_ERR_UNSUPPORTED);
    /* ABASECP header whose sizes disagree with the file. */
    uint8_t c[32] = {'A', 'B', 'A', 'S', 'E', 'C', 'P', 0};
    trowel_put_be32(c + 8, 100);
    trowel_put_be32(c + 12, 40);
    CHECK(open_as_volcnf(ctx, c, sizeof c) == TROWEL_ERR_CORRUPT);
    trowel_put_be32(c + 12, 16); /* right size, garbage stream */
    CHECK(open_as_volcnf(ctx, c, sizeof c) == TROWEL_ERR_CORRUPT);
    trowel_ctx_free(ctx);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/trowel-volcnf.XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(2);
    }
}

TEST_MAIN(TEST(test_cine_volcnf_reads_11_character_names),
          TEST(test_cine_volcnf_create_and_extract_beside),
          TEST(test_cine_volcnf_rejects_hostile_tables))
