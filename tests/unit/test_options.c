/*
 * The -O option tables: every format's reading and convert options are
 * declared once, well formed, for targets the format really converts to;
 * the archive layer refuses anything else with a message that names the
 * format and lists the valid keys.
 */
#include "core/core.h"
#include "core/module.h"
#include "test.h"

#include <trowel/trowel.h>

#include <stdlib.h>
#include <unistd.h>

/* True when list (space separated) holds word. */
static int word_in(const char *list, const char *word, size_t n)
{
    for (const char *w = list; *w;) {
        size_t len = strcspn(w, " ");
        if (len == n && strncmp(w, word, n) == 0)
            return 1;
        w += len + (w[len] == ' ');
    }
    return 0;
}

static void test_option_rows_are_complete_and_for_real_targets(void)
{
    size_t rows = 0, creates = 0;
    for (size_t i = 0; i < trowel_format_count(); i++) {
        const trowel_format *f = trowel_format_at(i);
        const trowel_option_info *o;
        for (size_t k = 0; (o = trowel_format_option_at(f, k)) != NULL; k++, rows++) {
            CHECK(o->key[0] && !strchr(o->key, '=') && !strchr(o->key, ' '));
            CHECK(o->value && o->value[0]);
            CHECK(o->help && o->help[0] && !strchr(o->help, '\n'));
            creates += o->targets && strcmp(o->targets, "create") == 0;
            CHECK(trowel_option_row_valid(o)); /* its default is a value it allows */
            if (o->type == TROWEL_OPTION_CHOICE)
                CHECK((o->choices ? o->choices : o->value)[0]);
            if (o->type == TROWEL_OPTION_UINT)
                CHECK(o->min >= 0 && o->min <= o->max);
            if (o->targets && strcmp(o->targets, "create") == 0) {
                CHECK(f->create != NULL); /* a create option of a format that creates */
            } else if (o->targets) {
                const char *t = o->targets;
                CHECK(t[0]);
                while (*t) {
                    size_t len = strcspn(t, " ");
                    if (!word_in(trowel_format_convert_targets(f), t, len))
                        fprintf(stderr, "  %s: option %s for %.*s, not a target of it\n",
                                trowel_format_id(f), o->key, (int)len, t);
                    CHECK(word_in(trowel_format_convert_targets(f), t, len));
                    t += len + (t[len] == ' ');
                }
            } else {
                CHECK(f->set_options != NULL); /* a reading option someone reads */
            }
        }
        CHECK(trowel_format_option_at(f, SIZE_MAX) == NULL);
    }
    CHECK(rows >= 7); /* vsif raw, the four png keys, glyphmap columns, wav rate */
    CHECK(creates >= 20); /* vpp 9, vsif 4, tres-wtd 4, cine-volcnf 3, szdd 2, cine-part 1 */
}

/* A cine-set of one 8x1 frame, as test_cine_assets builds it. */
static const unsigned char robot_set[] = {'S', 'E', 'T', 0, 0, 1, 0, 0, 0, 0, 0, 8, 0, 1,
                                          0, 4, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0};

static void test_convert_checks_keys_against_the_table(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    trowel_sink *out = NULL;
    REQUIRE(trowel_input_open_memory(ctx, robot_set, sizeof robot_set, "ROBOT.SET", &in) ==
            TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    CHECK_STR(trowel_format_id(trowel_archive_format(a)), "cine-set");
    REQUIRE(trowel_sink_open_memory(ctx, &out) == TROWEL_OK);

    const char *unknown[] = {"frame=0", "x=1"};
    CHECK(trowel_convert(ctx, a, "png", unknown, 2, out) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "unknown option 'x' for cine-set to png; valid: frame, palette, transparent, columns");
    const char *png_key[] = {"frame=0"};
    CHECK(trowel_convert(ctx, a, "json", png_key, 1, out) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "unknown option 'frame' for cine-set: it takes no convert options to json");
    CHECK(trowel_convert(ctx, a, "png", png_key, 1, out) == TROWEL_OK);
    size_t n = 0;
    const uint8_t *png = trowel_sink_data(out, &n);
    CHECK(n > 8 && png[1] == 'P' && png[2] == 'N' && png[3] == 'G');

    const char *raw[] = {"raw=1"};
    CHECK(trowel_archive_set_options(a, raw, 1) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "unknown option 'raw' for cine-set: it takes no reading options");
    const char *not_kv[] = {"frame"};
    CHECK(trowel_convert(ctx, a, "png", not_kv, 1, out) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "option 'frame' is not of the form key=value");

    trowel_sink_discard(out);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

/* A table of every type, as a format declares one. */
static const trowel_option_info demo_rows[] = {
    {"flag", "0|1", "a bool", "create", .type = TROWEL_OPTION_BOOL, .def = "1"},
    {"count", "N", "a number", "create", .type = TROWEL_OPTION_UINT, .min = 2, .max = 300,
     .def = "16"},
    {"shift", "N", "a signed number", "create", .type = TROWEL_OPTION_INT, .min = -8, .max = 8},
    {"any", "N", "any number from 0", "create", .type = TROWEL_OPTION_UINT},
    {"kind", "a|bb|c", "a choice", "create", .type = TROWEL_OPTION_CHOICE, .def = "bb"},
    {"name", "NAME", "text, repeatable", "create", .type = TROWEL_OPTION_STRING},
    {"raw", "0|1", "a reading option", NULL, .type = TROWEL_OPTION_BOOL},
    {0},
};

/* A real number in a range, and a number that may also be a word. */
static const trowel_option_info more_rows[] = {
    {"metres", "M", "a length", "create", .type = TROWEL_OPTION_REAL, .min = 0, .max = 1000},
    {"index", "N|none", "a number or none", "create", .type = TROWEL_OPTION_UINT,
     .max = 255, .choices = "none"},
    {0},
};

static void more_refused(trowel_ctx *ctx, const char *opt, const char *message)
{
    trowel_option_values v;
    const char *opts[] = {opt};
    CHECK(trowel_options_parse_rows(ctx, "demo", more_rows, "create", opts, 1, &v) ==
          TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, message);
}

static void test_real_and_number_or_word(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    const char *bad_reals[] = {"metres=", "metres=x", "metres=1.5m", "metres= 2", "metres=+2",
                               "metres=inf", "metres=nan", "metres=1001", "metres=-0.5",
                               "metres=1e400"};
    for (size_t i = 0; i < sizeof bad_reals / sizeof bad_reals[0]; i++) {
        char want[160];
        snprintf(want, sizeof want,
                 "option '%s' for creating demo: metres= takes a decimal number from 0 to 1000",
                 bad_reals[i]);
        more_refused(ctx, bad_reals[i], want);
    }
    more_refused(ctx, "index=256",
                 "option 'index=256' for creating demo: "
                 "index= takes a number from 0 to 255, or none");
    more_refused(ctx, "index=nonе", /* a look-alike: the last letter is Cyrillic */
                 "option 'index=nonе' for creating demo: "
                 "index= takes a number from 0 to 255, or none");
    trowel_option_values v;
    const char *good[] = {"metres=2.5", "index=none"};
    CHECK(trowel_options_parse_rows(ctx, "demo", more_rows, "create", good, 2, &v) == TROWEL_OK);
    CHECK(trowel_option_real(&v, "metres") == 2.5);
    CHECK_STR(trowel_option_str(&v, "index"), "none");
    const char *exp[] = {"metres=.5e1", "index=7"};
    CHECK(trowel_options_parse_rows(ctx, "demo", more_rows, "create", exp, 2, &v) == TROWEL_OK);
    CHECK(trowel_option_real(&v, "metres") == 5.0);
    CHECK(trowel_option_uint(&v, "index") == 7);
    trowel_ctx_free(ctx);
}

/* Parses opts against demo_rows for create: the status, and the message
 * in msg when it fails. */
static trowel_status demo_parse(trowel_ctx *ctx, const char *const *opts, size_t n,
                                trowel_option_values *v)
{
    return trowel_options_parse_rows(ctx, "demo", demo_rows, "create", opts, n, v);
}

static void refused(trowel_ctx *ctx, const char *opt, const char *message)
{
    trowel_option_values v;
    const char *opts[] = {opt};
    CHECK(demo_parse(ctx, opts, 1, &v) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, message);
}

static void test_each_type_is_checked(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    refused(ctx, "flag=2", "option 'flag=2' for creating demo: flag= takes 0 or 1");
    refused(ctx, "flag=", "option 'flag=' for creating demo: flag= takes 0 or 1");
    refused(ctx, "count=1", "option 'count=1' for creating demo: count= takes a number from 2 to 300");
    refused(ctx, "count=301",
            "option 'count=301' for creating demo: count= takes a number from 2 to 300");
    refused(ctx, "count=12x",
            "option 'count=12x' for creating demo: count= takes a number from 2 to 300");
    refused(ctx, "count=-3", "option 'count=-3' for creating demo: count= takes a number from 2 to 300");
    refused(ctx, "count= 5", "option 'count= 5' for creating demo: count= takes a number from 2 to 300");
    refused(ctx, "count=+5", "option 'count=+5' for creating demo: count= takes a number from 2 to 300");
    refused(ctx, "shift=-9", "option 'shift=-9' for creating demo: shift= takes a number from -8 to 8");
    refused(ctx, "any=-1", "option 'any=-1' for creating demo: any= takes a number from 0 up");
    refused(ctx, "any=99999999999999999999",
            "option 'any=99999999999999999999' for creating demo: any= takes a number from 0 up");
    refused(ctx, "kind=b", "option 'kind=b' for creating demo: kind= takes one of a|bb|c");
    refused(ctx, "kind=a|bb", "option 'kind=a|bb' for creating demo: kind= takes one of a|bb|c");
    refused(ctx, "nokey=1",
            "unknown option 'nokey' for creating demo; valid: flag, count, shift, any, kind, name");
    refused(ctx, "raw=1", /* a reading option is not a create option */
            "unknown option 'raw' for creating demo; valid: flag, count, shift, any, kind, name");
    refused(ctx, "count", "option 'count' is not of the form key=value");

    trowel_option_values v;
    const char *none[] = {"x=1"};
    CHECK(trowel_options_parse_rows(ctx, "demo", demo_rows, "png", none, 1, &v) ==
          TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "unknown option 'x' for demo: it takes no convert options to png");
    CHECK(trowel_options_parse_rows(ctx, "demo", demo_rows, NULL, none, 1, &v) ==
          TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "unknown option 'x' for demo; valid: raw");
    trowel_ctx_free(ctx);
}

static void test_typed_values_and_defaults(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_option_values v;
    /* nothing given: the rows' defaults, else 0, false, NULL */
    REQUIRE(demo_parse(ctx, NULL, 0, &v) == TROWEL_OK);
    CHECK(trowel_option_bool(&v, "flag"));
    CHECK(!trowel_option_given(&v, "flag"));
    CHECK(trowel_option_uint(&v, "count") == 16);
    CHECK(trowel_option_int(&v, "shift") == 0);
    CHECK_STR(trowel_option_str(&v, "kind"), "bb");
    CHECK(trowel_option_str(&v, "name") == NULL);

    /* given: each type read back; a key given twice is checked twice and
     * the last one counts (as trowel_options_get always did) */
    const char *opts[] = {"flag=0", "count=300", "shift=-8", "any=18446744073709551", "kind=c",
                          "name=first", "count=002", "name=second"};
    REQUIRE(demo_parse(ctx, opts, 8, &v) == TROWEL_OK);
    CHECK(!trowel_option_bool(&v, "flag"));
    CHECK(trowel_option_given(&v, "flag"));
    CHECK(trowel_option_uint(&v, "count") == 2);
    CHECK(trowel_option_int(&v, "shift") == -8);
    CHECK(trowel_option_uint(&v, "any") == 18446744073709551u);
    CHECK_STR(trowel_option_str(&v, "kind"), "c");
    CHECK_STR(trowel_option_str(&v, "name"), "second");
    size_t pos = 0;
    CHECK_STR(trowel_option_next(&v, "name", &pos), "first");
    CHECK_STR(trowel_option_next(&v, "name", &pos), "second");
    CHECK(trowel_option_next(&v, "name", &pos) == NULL);

    const char *twice[] = {"count=5", "count=400"}; /* the bad one is refused, first or last */
    CHECK(demo_parse(ctx, twice, 2, &v) == TROWEL_ERR_USAGE);
    trowel_ctx_free(ctx);
}

/* create checks its options against the format's create rows before the
 * format runs: unknown keys name the valid ones, values are checked. */
static void test_create_checks_the_create_rows(void)
{
    char path[] = "/tmp/trowel-test-options-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, "hello", 5) == 5);
    close(fd);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *out = NULL;
    REQUIRE(trowel_sink_open_memory(ctx, &out) == TROWEL_OK);
    const trowel_format *szdd = trowel_format_find("szdd");
    REQUIRE(szdd != NULL);
    trowel_source src = {.name = "HELLO.TXT", .path = path};
    const char *unknown[] = {"level=9"};
    trowel_create_params p = {.sources = &src, .source_count = 1, .options = unknown,
                              .option_count = 1};
    CHECK(trowel_create(ctx, szdd, &p, out) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "unknown option 'level' for creating szdd; valid: variant, missing");
    const char *bad[] = {"variant=fancy"};
    p.options = bad;
    CHECK(trowel_create(ctx, szdd, &p, out) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "option 'variant=fancy' for creating szdd: variant= takes one of normal|qbasic");
    size_t n = 1;
    trowel_sink_data(out, &n);
    CHECK(n == 0); /* nothing written */
    const char *good[] = {"variant=qbasic"};
    p.options = good;
    CHECK(trowel_create(ctx, szdd, &p, out) == TROWEL_OK);
    const uint8_t *b = trowel_sink_data(out, &n);
    CHECK(n > 12 && memcmp(b, "SZ \x88\xf0'3\xd1", 8) == 0); /* the QBasic magic */

    const char *none[] = {"x=1"};
    p.options = none;
    CHECK(trowel_create(ctx, trowel_format_find("groff"), &p, out) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "unknown option 'x' for groff: it takes no create options");
    trowel_sink_discard(out);
    trowel_ctx_free(ctx);
    unlink(path);
}

TEST_MAIN(TEST(test_option_rows_are_complete_and_for_real_targets),
          TEST(test_convert_checks_keys_against_the_table), TEST(test_each_type_is_checked),
          TEST(test_real_and_number_or_word),
          TEST(test_typed_values_and_defaults), TEST(test_create_checks_the_create_rows))
