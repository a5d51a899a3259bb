/*
 * The SZDD format through the public API: the real corpus files, name
 * restoration, both header variants, create and manifest round trips, and
 * hostile files (truncated, impossible lengths, unknown methods, garbage).
 */
#include "sha256.h"
#include "files.h"
#include "test.h"
#include "trowel/trowel.h"

#include <stdbool.h>
#include <unistd.h>

static const char *const corpus_files[] = {"DEFAULT.PA_", "GLOBE3.AN_", "INTRO.HL_",
                                           "MUENGNR.CN_", "RAIN.AN_",   "TBAV.FA_",
                                           "UNINSTAL.LN_"};
static const char *const restored_names[] = {"DEFAULT.PAL", "GLOBE3.ANI", "INTRO.HLP",
                                             "MUENGNR.CNT", "RAIN.ANI",   "TBAV.FAQ",
                                             "UNINSTAL.LNG"};

/* ---------------------------------------------------------- helpers */

static bytes corpus(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/szdd/%s", TROWEL_CORPUS_DIR, name);
    bytes b = read_file(path);
    if (!b.data)
        test_skip("%s is absent", path);
    return b;
}

/* Opens memory as an archive named name; NULL (and status) on failure. */
static trowel_archive *open_mem(trowel_ctx *ctx, const bytes *b, const char *name,
                                trowel_input **in, trowel_status *status)
{
    trowel_archive *a = NULL;
    *status = trowel_input_open_memory(ctx, b->data, b->size, name, in);
    if (*status == TROWEL_OK)
        *status = trowel_archive_open(ctx, *in, NULL, &a);
    return a;
}

/* Decodes entry 0 into memory; returns the status, hex digest in hex. */
static trowel_status expand(trowel_ctx *ctx, trowel_archive *a, char hex[65], size_t *size)
{
    trowel_sink *s;
    trowel_status st = trowel_sink_open_memory(ctx, &s);
    if (st != TROWEL_OK)
        return st;
    st = trowel_archive_read_entry(a, 0, s);
    size_t n = 0;
    const uint8_t *d = trowel_sink_data(s, &n);
    sha256_hex(d ? d : (const uint8_t *)"", n, hex);
    if (size)
        *size = n;
    trowel_sink_discard(s);
    return st;
}

static const char *prop_str(trowel_archive *a, const char *key)
{
    const trowel_prop *p = trowel_props_find(trowel_archive_info(a), key);
    return p && p->type == TROWEL_VALUE_STRING ? p->s : "(none)";
}

/* An SZDD file opened under the name file with the missing character
 * recorded as missing restores its entry's name as want. */
typedef struct restore_case {
    const char *file, *want;
    uint8_t missing;
} restore_case;

/* Opens b (a real SZDD file) once per case, its byte 9 set to the case's
 * character, and checks the restored name. */
static void check_restored_names(bytes *b, const restore_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        b->data[9] = cases[i].missing;
        trowel_ctx *ctx = trowel_ctx_new();
        trowel_input *in;
        trowel_status st;
        trowel_archive *a = open_mem(ctx, b, cases[i].file, &in, &st);
        CHECK(a != NULL);
        if (a)
            CHECK_STR(trowel_archive_entry(a, 0)->name, cases[i].want);
        trowel_archive_close(a);
        trowel_input_close(in);
        trowel_ctx_free(ctx);
    }
}

/* ---------------------------------------------------------- real files */

static void test_corpus_files_detect_restore_names_and_expand_to_published_hashes(void)
{
    char list[1024];
    snprintf(list, sizeof list, "%s/szdd/expanded.sha256", TROWEL_CORPUS_DIR);
    for (size_t i = 0; i < sizeof corpus_files / sizeof corpus_files[0]; i++) {
        bytes b = corpus(corpus_files[i]);
        REQUIRE_INPUT(b.data != NULL);
        trowel_ctx *ctx = trowel_ctx_new();
        trowel_input *in;
        trowel_status st;
        trowel_archive *a = open_mem(ctx, &b, corpus_files[i], &in, &st);
        CHECK(st == TROWEL_OK);
        if (a) {
            CHECK_STR(trowel_format_id(trowel_archive_format(a)), "szdd");
            CHECK_STR(prop_str(a, "variant"), "normal");
            CHECK_EQ_U64(trowel_archive_entry_count(a), 1);
            const trowel_entry *e = trowel_archive_entry(a, 0);
            CHECK_STR(e->name, restored_names[i]);
            uint32_t declared = (uint32_t)b.data[10] | (uint32_t)b.data[11] << 8 |
                                (uint32_t)b.data[12] << 16 | (uint32_t)b.data[13] << 24;
            CHECK_EQ_U64(e->size, declared);
            CHECK_EQ_U64(e->packed_size, b.size - 14);
            CHECK_EQ_U64(e->offset, 14);
            char got[65], want[65];
            size_t n = 0;
            CHECK(expand(ctx, a, got, &n) == TROWEL_OK);
            CHECK_EQ_U64(n, declared);
            CHECK(sha256_lookup(list, corpus_files[i], want));
            CHECK_STR(got, want);
            CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_OK);
        }
        trowel_archive_close(a);
        trowel_input_close(in);
        trowel_ctx_free(ctx);
        free(b.data);
    }
}

static void test_info_names_default_pal_as_the_issue_describes(void)
{
    bytes b = corpus("DEFAULT.PA_");
    REQUIRE_INPUT(b.data != NULL);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, &b, "some/dir/DEFAULT.PA_", &in, &st);
    REQUIRE(a != NULL);
    CHECK_STR(prop_str(a, "original_name"), "DEFAULT.PAL");
    CHECK_STR(prop_str(a, "missing_char"), "l");
    CHECK_STR(prop_str(a, "format"), "szdd");
    CHECK(trowel_props_find(trowel_archive_info(a), "version") != NULL);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(b.data);
}

/* The recorded character is written in the case of the rest of the name
 * whatever case it was recorded in (COMPRESS.EXE records lower case, other
 * tools upper case); a name without letters, or of both cases, takes it as
 * recorded. A character that cannot end a file name here (a path separator,
 * space, control or non-ASCII byte) is not restored: the '_' is dropped. */
static void test_restored_name_recases_and_refuses_separators(void)
{
    bytes b = corpus("DEFAULT.PA_");
    REQUIRE_INPUT(b.data != NULL);
    static const restore_case cases[] = {
        {"default.pa_", "default.pal", 'L'},  /* upper recorded, lower name */
        {"DEFAULT.PA_", "DEFAULT.PAL", 'L'},  /* upper recorded, upper name */
        {"Default.Pa_", "Default.PaL", 'L'},  /* mixed name: as recorded */
        {"Default.Pa_", "Default.Pal", 'l'},
        {"1234.56_", "1234.56L", 'L'},        /* no letters: as recorded */
        {"1234.56_", "1234.56l", 'l'},
        {"readme.tx_", "readme.tx1", '1'},    /* not a letter: unchanged */
        {"EVIL._", "EVIL.", '\\'},            /* a separator is never restored */
        {"evil._", "evil.", '/'},
        {"SPACE.TX_", "SPACE.TX", ' '},
        {"DEL.TX_", "DEL.TX", 0x7f},
        {"HIGH.TX_", "HIGH.TX", 0xe9},
        {"TAB.TX_", "TAB.TX", '\t'},
    };
    check_restored_names(&b, cases, sizeof cases / sizeof cases[0]);
    free(b.data);
}

/* A NULL sink is a usage error with a message, not a crash; the archive
 * still reads afterwards. */
static void test_read_entry_refuses_a_null_sink(void)
{
    bytes b = corpus("DEFAULT.PA_");
    REQUIRE_INPUT(b.data != NULL);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, &b, "DEFAULT.PA_", &in, &st);
    REQUIRE(a != NULL);
    CHECK(trowel_archive_read_entry(a, 0, NULL) == TROWEL_ERR_USAGE);
    CHECK(trowel_ctx_last_error(ctx)->status == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "no sink to read entry 0 into");
    trowel_sink *s;
    REQUIRE(trowel_sink_open_null(ctx, &s) == TROWEL_OK);
    CHECK(trowel_archive_read_entry(a, 0, s) == TROWEL_OK);
    CHECK_EQ_U64(trowel_sink_written(s), trowel_archive_entry(a, 0)->size);
    trowel_sink_discard(s);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(b.data);
}

/* Name restoration follows the case of the rest of the name. */
static void test_restored_name_follows_case_and_mscompress_convention(void)
{
    bytes b = corpus("DEFAULT.PA_"); /* records 'l' */
    REQUIRE_INPUT(b.data != NULL);
    static const restore_case cases[] = {
        {"default.pa_", "default.pal", 'l'}, {"DEFAULT.PA_", "DEFAULT.PAL", 'l'},
        {"Default.Pa_", "Default.Pal", 'l'}, {"BE.GRF", "BE.GRF", 'l'},
        {"notes.txt_", "notes.txt", 0},      {"X_", "X", 0},
        {"_", "_", 0},                       {"EVIL._", "EVIL.", '/'},
    };
    check_restored_names(&b, cases, sizeof cases / sizeof cases[0]);
    free(b.data);
}

/* ---------------------------------------------------------- hostile */

static void test_truncated_file_lists_but_fails_to_expand_and_verify(void)
{
    bytes b = corpus("INTRO.HL_");
    REQUIRE_INPUT(b.data != NULL);
    bytes cut = {b.data, b.size - 100};
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, &cut, "INTRO.HL_", &in, &st);
    REQUIRE(a != NULL);
    CHECK_EQ_U64(trowel_archive_entry_count(a), 1); /* what could be read is listed */
    char hex[65];
    CHECK(expand(ctx, a, hex, NULL) == TROWEL_ERR_TRUNCATED);
    CHECK_STR(trowel_ctx_last_error(ctx)->entry, "INTRO.HLP");
    CHECK(trowel_ctx_last_error(ctx)->offset != TROWEL_NO_OFFSET);
    CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_ERR_VERIFY);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(b.data);
}

static void count_problem(void *user, const trowel_error *e)
{
    (void)e;
    (*(int *)user)++;
}

static void test_huge_declared_length_is_refused_before_decoding(void)
{
    bytes b = corpus("RAIN.AN_");
    REQUIRE_INPUT(b.data != NULL);
    b.data[10] = b.data[11] = b.data[12] = b.data[13] = 0xFF;
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_mem_limit(ctx, 1 << 20); /* nothing may try to allocate 4 GiB */
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, &b, "RAIN.AN_", &in, &st);
    REQUIRE(a != NULL);
    CHECK_EQ_U64(trowel_archive_entry(a, 0)->size, 0xFFFFFFFFu);
    trowel_sink *s;
    REQUIRE(trowel_sink_open_null(ctx, &s) == TROWEL_OK);
    CHECK(trowel_archive_read_entry(a, 0, s) == TROWEL_ERR_TRUNCATED);
    CHECK_EQ_U64(trowel_sink_written(s), 0);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "declares") != NULL);
    trowel_sink_discard(s);
    int problems = 0;
    CHECK(trowel_archive_verify(a, count_problem, &problems) == TROWEL_ERR_VERIFY);
    CHECK_EQ_U64(problems, 1);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(b.data);
}

static void test_declared_length_shorter_than_stream_is_corrupt(void)
{
    bytes b = corpus("GLOBE3.AN_");
    REQUIRE_INPUT(b.data != NULL);
    b.data[10] = (uint8_t)(b.data[10] - 1); /* one byte less than the stream makes */
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, &b, "GLOBE3.AN_", &in, &st);
    REQUIRE(a != NULL);
    char hex[65];
    CHECK(expand(ctx, a, hex, NULL) == TROWEL_ERR_CORRUPT);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(b.data);
}

static void test_unknown_method_is_unsupported(void)
{
    bytes b = corpus("TBAV.FA_");
    REQUIRE_INPUT(b.data != NULL);
    b.data[8] = 'B';
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, &b, "TBAV.FA_", &in, &st);
    CHECK(a == NULL);
    CHECK(st == TROWEL_ERR_UNSUPPORTED);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "method") != NULL);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(b.data);
}

static void test_garbage_empty_and_cut_headers_are_not_detected(void)
{
    static const uint8_t garbage[64] = {'M', 'Z', 1, 2, 3};
    static const uint8_t cut[] = {'S', 'Z', 'D', 'D', 0x88, 0xF0, 0x27, 0x33, 'A'};
    const bytes inputs[] = {{(uint8_t *)(uintptr_t)garbage, sizeof garbage},
                            {(uint8_t *)(uintptr_t)garbage, 0},
                            {(uint8_t *)(uintptr_t)cut, sizeof cut}};
    for (size_t i = 0; i < 3; i++) {
        trowel_ctx *ctx = trowel_ctx_new();
        trowel_input *in;
        trowel_status st;
        trowel_archive *a = open_mem(ctx, &inputs[i], "x", &in, &st);
        CHECK(a == NULL);
        CHECK(st == TROWEL_ERR_UNSUPPORTED);
        trowel_input_close(in);
        trowel_ctx_free(ctx);
    }
    /* forcing the format on a cut header reports the truncation */
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a = NULL;
    REQUIRE(trowel_input_open_memory(ctx, cut, sizeof cut, "cut", &in) == TROWEL_OK);
    CHECK(trowel_archive_open(ctx, in, trowel_format_find("szdd"), &a) == TROWEL_ERR_TRUNCATED);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "header") != NULL);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

/* ---------------------------------------------------------- writing */

/* Creates an SZDD from path with options; returns the file's bytes. */
static bytes create_szdd(const char *dir, const char *src_name, const char *src_path,
                         const char *const *opts, size_t nopts, const char *manifest,
                         trowel_status *status)
{
    char out[512];
    snprintf(out, sizeof out, "%s/out.sz", dir);
    unlink(out);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_source src = {src_name, src_path};
    trowel_create_params p = {&src, 1, opts, nopts, manifest, NULL};
    trowel_sink *s;
    *status = trowel_sink_open_file(ctx, out, 0, &s);
    if (*status == TROWEL_OK) {
        *status = trowel_create(ctx, trowel_format_find("szdd"), &p, s);
        if (*status == TROWEL_OK)
            *status = trowel_sink_finish(s);
        else
            trowel_sink_discard(s);
    }
    trowel_ctx_free(ctx);
    bytes b = {NULL, 0};
    if (*status == TROWEL_OK)
        b = read_file(out);
    return b;
}

static void test_create_records_lowercase_missing_char_and_round_trips(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char src[512];
    snprintf(src, sizeof src, "%s/DEFAULT.PAL", dir);
    static const char text[] = "JASC-PAL\r\n0100\r\n256\r\n0 0 0\r\n0 0 0\r\n0 0 0\r\n";
    write_file(src, text, sizeof text - 1);
    trowel_status st;
    bytes b = create_szdd(dir, "DEFAULT.PAL", src, NULL, 0, NULL, &st);
    CHECK(st == TROWEL_OK);
    REQUIRE(b.size >= 14);
    static const uint8_t head[] = {'S', 'Z', 'D', 'D', 0x88, 0xF0, 0x27, 0x33, 'A', 'l'};
    CHECK(memcmp(b.data, head, sizeof head) == 0);
    CHECK_EQ_U64(b.data[10] | b.data[11] << 8, sizeof text - 1);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a = open_mem(ctx, &b, "DEFAULT.PA_", &in, &st);
    REQUIRE(a != NULL);
    char got[65], want[65];
    CHECK(expand(ctx, a, got, NULL) == TROWEL_OK);
    sha256_hex(text, sizeof text - 1, want);
    CHECK_STR(got, want);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(b.data);
    remove_tree(dir);
}

static void test_create_qbasic_variant_reads_back(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    char src[512];
    snprintf(src, sizeof src, "%s/prog.bas", dir);
    char text[5000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = "10 PRINT \"HELLO\"\n20 GOTO 10\n"[i % 28];
    write_file(src, text, sizeof text);
    const char *opts[] = {"variant=qbasic"};
    trowel_status st;
    bytes b = create_szdd(dir, "prog.bas", src, opts, 1, NULL, &st);
    CHECK(st == TROWEL_OK);
    REQUIRE(b.size > 12);
    CHECK(memcmp(b.data, "SZ \x88\xF0\x27\x33\xD1", 8) == 0);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a = open_mem(ctx, &b, "PROG.BA_", &in, &st);
    REQUIRE(a != NULL);
    CHECK_STR(prop_str(a, "variant"), "qbasic");
    CHECK_EQ_U64(trowel_archive_entry(a, 0)->offset, 12);
    char got[65], want[65];
    CHECK(expand(ctx, a, got, NULL) == TROWEL_OK);
    sha256_hex(text, sizeof text, want);
    CHECK_STR(got, want);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(b.data);
    remove_tree(dir);
}

static void test_create_rejects_bad_options_and_source_counts(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s;
    REQUIRE(trowel_sink_open_null(ctx, &s) == TROWEL_OK);
    const char *bad[] = {"colour=blue"};
    const char *bad_variant[] = {"variant=kwaj"};
    trowel_source src[2] = {{"a", "/nonexistent/a"}, {"b", "/nonexistent/b"}};
    trowel_create_params p = {src, 1, bad, 1, NULL, NULL};
    const trowel_format *f = trowel_format_find("szdd");
    CHECK(trowel_create(ctx, f, &p, s) == TROWEL_ERR_USAGE);
    p.options = bad_variant;
    CHECK(trowel_create(ctx, f, &p, s) == TROWEL_ERR_USAGE);
    p.option_count = 0;
    p.source_count = 2;
    CHECK(trowel_create(ctx, f, &p, s) == TROWEL_ERR_USAGE);
    p.source_count = 1;
    CHECK(trowel_create(ctx, f, &p, s) == TROWEL_ERR_IO);
    trowel_sink_discard(s);
    trowel_ctx_free(ctx);
}

/* extract -> manifest -> create gives the same header and the same bytes. */
static void test_manifest_round_trip_keeps_header_and_content(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    bytes orig = corpus("UNINSTAL.LN_");
    REQUIRE_INPUT(orig.data != NULL);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, &orig, "UNINSTAL.LN_", &in, &st);
    REQUIRE(a != NULL);
    char *manifest = NULL;
    CHECK(trowel_archive_manifest(a, &manifest) == TROWEL_OK);
    REQUIRE(manifest != NULL);
    CHECK(strstr(manifest, "\"format\": \"szdd\"") || strstr(manifest, "\"format\":\"szdd\""));
    const trowel_format *mf = NULL;
    CHECK(trowel_manifest_format(ctx, manifest, &mf) == TROWEL_OK && mf == trowel_format_find("szdd"));
    /* extract the entry under its name */
    trowel_outdir *od;
    REQUIRE(trowel_outdir_open(ctx, dir, 0, &od) == TROWEL_OK);
    trowel_sink *s;
    REQUIRE(trowel_outdir_create(od, trowel_archive_entry(a, 0)->name, &s) == TROWEL_OK);
    CHECK(trowel_archive_read_entry(a, 0, s) == TROWEL_OK);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    trowel_outdir_close(od);

    /* create from the manifest alone (no sources: the manifest lists them) */
    char out[512];
    snprintf(out, sizeof out, "%s/rebuilt.LN_", dir);
    trowel_create_params p = {NULL, 0, NULL, 0, manifest, dir};
    REQUIRE(trowel_sink_open_file(ctx, out, 0, &s) == TROWEL_OK);
    CHECK(trowel_create(ctx, mf, &p, s) == TROWEL_OK);
    CHECK(trowel_sink_finish(s) == TROWEL_OK);
    bytes rebuilt = read_file(out);
    REQUIRE(rebuilt.size >= 14);
    CHECK(memcmp(rebuilt.data, orig.data, 14) == 0);

    trowel_input *in2;
    trowel_archive *b = open_mem(ctx, &rebuilt, "UNINSTAL.LN_", &in2, &st);
    REQUIRE(b != NULL);
    char h1[65], h2[65];
    CHECK(expand(ctx, a, h1, NULL) == TROWEL_OK);
    CHECK(expand(ctx, b, h2, NULL) == TROWEL_OK);
    CHECK_STR(h1, h2);
    trowel_archive_close(b);
    trowel_input_close(in2);
    trowel_free(manifest);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(orig.data);
    free(rebuilt.data);
    remove_tree(dir);
}

static void test_json_lists_contract_keys(void)
{
    bytes b = corpus("MUENGNR.CN_");
    REQUIRE_INPUT(b.data != NULL);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, &b, "MUENGNR.CN_", &in, &st);
    REQUIRE(a != NULL);
    char *json = NULL;
    CHECK(trowel_archive_to_json(a, TROWEL_JSON_ENTRIES, &json) == TROWEL_OK);
    REQUIRE(json != NULL);
    CHECK(strncmp(json, "{\"format\":\"szdd\",\"version\":0,", 29) == 0);
    CHECK(strstr(json, "\"entries\":[{\"name\":\"MUENGNR.CNT\",\"size\":980,") != NULL);
    CHECK(strstr(json, "\"packed_size\":537,\"offset\":14,") != NULL);
    trowel_free(json);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(b.data);
}

TEST_MAIN(TEST(test_corpus_files_detect_restore_names_and_expand_to_published_hashes),
          TEST(test_info_names_default_pal_as_the_issue_describes),
          TEST(test_restored_name_follows_case_and_mscompress_convention),
          TEST(test_restored_name_recases_and_refuses_separators),
          TEST(test_read_entry_refuses_a_null_sink),
          TEST(test_truncated_file_lists_but_fails_to_expand_and_verify),
          TEST(test_huge_declared_length_is_refused_before_decoding),
          TEST(test_declared_length_shorter_than_stream_is_corrupt),
          TEST(test_unknown_method_is_unsupported),
          TEST(test_garbage_empty_and_cut_headers_are_not_detected),
          TEST(test_create_records_lowercase_missing_char_and_round_trips),
          TEST(test_create_qbasic_variant_reads_back),
          TEST(test_create_rejects_bad_options_and_source_counts),
          TEST(test_manifest_round_trip_keeps_header_and_content),
          TEST(test_json_lists_contract_keys))
