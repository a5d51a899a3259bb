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
    size_t rows = 0;
    for (size_t i = 0; i < trowel_format_count(); i++) {
        const trowel_format *f = trowel_format_at(i);
        const trowel_option_info *o;
        for (size_t k = 0; (o = trowel_format_option_at(f, k)) != NULL; k++, rows++) {
            CHECK(o->key[0] && !strchr(o->key, '=') && !strchr(o->key, ' '));
            CHECK(o->value && o->value[0]);
            CHECK(o->help && o->help[0] && !strchr(o->help, '\n'));
            if (o->targets) {
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

TEST_MAIN(TEST(test_option_rows_are_complete_and_for_real_targets),
          TEST(test_convert_checks_keys_against_the_table))
