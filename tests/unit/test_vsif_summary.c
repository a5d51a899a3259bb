/*
 * The v3 summary's lastspeech_msecs by Valve's rule (FindLastSpeakTime in
 * the Alien Swarm SDK's choreoscene.cpp): the SPEAK event that comes LAST IN
 * EVENT ORDER, its end (or its start when it has none) -- not the speech
 * that ends last, which trowel once assumed. Checked on scenes where the
 * two differ, through the scene model, a built v3 image and verify.
 */
#include "core/sink.h"
#include "format/valve/choreo.h"
#include "files.h"
#include "test.h"
#include "trowel/trowel.h"

#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

/* An empty string pool, or NULL when memory runs out. */
static choreo_pool *new_pool(trowel_ctx *ctx)
{
    choreo_pool *p;
    return choreo_pool_new(ctx, &p) == TROWEL_OK ? p : NULL;
}

static choreo_scene *parse_text(trowel_ctx *ctx, const char *text)
{
    trowel_input *in = NULL;
    choreo_scene *s = NULL;
    if (trowel_input_open_memory(ctx, text, strlen(text), "mem.vcd", &in) != TROWEL_OK)
        return NULL;
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    if (choreo_parse_vcd(ctx, &r, &s) != TROWEL_OK)
        s = NULL;
    trowel_input_close(in);
    return s;
}

/* The scene written as BVCD and read back (actor-less events move first). */
static choreo_scene *through_bvcd(trowel_ctx *ctx, const choreo_scene *s)
{
    choreo_pool *pool = new_pool(ctx);
    trowel_sink *mem = NULL;
    choreo_scene *back = NULL;
    uint8_t *bytes_ = NULL;
    size_t n = 0;
    if (pool && trowel_sink_open_memory(ctx, &mem) == TROWEL_OK &&
        choreo_write_bvcd(ctx, s, pool, 0, mem) == TROWEL_OK &&
        trowel_sink_take(mem, &bytes_, &n) == TROWEL_OK) {
        trowel_input *in = NULL;
        if (trowel_input_open_memory(ctx, bytes_, n, "mem.bvcd", &in) == TROWEL_OK) {
            trowel_reader r;
            trowel_reader_init(&r, ctx, in);
            if (choreo_read_bvcd(ctx, &r, pool, &back) != TROWEL_OK)
                back = NULL;
            trowel_input_close(in);
        }
    }
    if (mem)
        trowel_sink_discard(mem);
    trowel_mem_free(ctx, bytes_);
    choreo_pool_free(pool);
    return back;
}

static void summary_times(trowel_ctx *ctx, const choreo_scene *s, uint32_t *msecs,
                          uint32_t *last)
{
    choreo_summary sum;
    *msecs = *last = UINT32_MAX;
    if (choreo_summarize(ctx, s, &sum) != TROWEL_OK)
        return;
    *msecs = sum.msecs;
    *last = sum.lastspeech_msecs;
    choreo_summary_free(ctx, &sum);
}

/* One speak event inside an actor/channel, as Faceposer writes it. */
#define SPEAK(name, times, sound)                                                            \
    "    event speak \"" name "\"\n    {\n      time " times "\n      param \"" sound "\"\n"  \
    "      cctype \"cc_master\"\n      cctoken \"\"\n    }\n"
#define ACTOR(name, events) "actor \"" name "\"\n{\n  channel \"audio\"\n  {\n" events "  }\n}\n"

/* The numbers: the first actor's long line ends at 16.494 s; the
 * second actor speaks last in event order, and ends at 5.409 s. */
static const char two_actors[] = "// Choreo version 1\n"
                                 ACTOR("alyx", SPEAK("long", "0.5 16.494", "alyx.long"))
                                 ACTOR("barney", SPEAK("short", "2 5.409", "barney.short"));

/* ------------------------------------------------------------ the model */

static void test_lastspeech_is_the_last_speech_in_order_not_the_latest_end(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    choreo_scene *s = parse_text(ctx, two_actors);
    REQUIRE(s != NULL);
    uint32_t msecs, last;
    summary_times(ctx, s, &msecs, &last);
    CHECK_EQ_U64(msecs, 16494);
    CHECK_EQ_U64(last, 5409);
    CHECK(choreo_lastspeech_possible(s, 5409));
    CHECK(!choreo_lastspeech_possible(s, 16494));
    /* The same from the scene's BVCD: no actor-less events, same order. */
    choreo_scene *b = through_bvcd(ctx, s);
    REQUIRE(b != NULL);
    summary_times(ctx, b, &msecs, &last);
    CHECK_EQ_U64(last, 5409);
    CHECK(choreo_lastspeech_possible(b, 5409));
    CHECK(!choreo_lastspeech_possible(b, 16494));
    choreo_scene_free(ctx, b);
    choreo_scene_free(ctx, s);
    trowel_ctx_free(ctx);
}

static void test_lastspeech_takes_the_start_of_a_speech_without_end(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    /* end -1 means "none": the start counts, even though an earlier speech
     * ends much later; a later gesture does not count at all. */
    const char *text = "// Choreo version 1\n"
                       ACTOR("alyx", SPEAK("a", "0 10", "alyx.a") SPEAK("b", "3.25 -1", "alyx.b")
                                         "    event gesture \"g\"\n    {\n      time 1 12.5\n"
                                         "      param \"wave\"\n    }\n");
    choreo_scene *s = parse_text(ctx, text);
    REQUIRE(s != NULL);
    uint32_t msecs, last;
    summary_times(ctx, s, &msecs, &last);
    CHECK_EQ_U64(msecs, 12500);
    CHECK_EQ_U64(last, 3250);
    choreo_scene_free(ctx, s);
    /* Without any speech: 0. */
    s = parse_text(ctx, "// Choreo version 1\nactor \"a\"\n{\n  channel \"c\"\n  {\n"
                        "    event gesture \"g\"\n    {\n      time 1 2\n      param \"wave\"\n"
                        "    }\n  }\n}\n");
    REQUIRE(s != NULL);
    summary_times(ctx, s, &msecs, &last);
    CHECK_EQ_U64(msecs, 2000);
    CHECK_EQ_U64(last, 0);
    CHECK(choreo_lastspeech_possible(s, 0));
    CHECK(!choreo_lastspeech_possible(s, 2000));
    choreo_scene_free(ctx, s);
    trowel_ctx_free(ctx);
}

/* Scene-level (actor-less) events count in the order the text gives them;
 * BVCD stores them before every actor, so a scene read back from BVCD can
 * only say which values the text could have given. */
static void test_lastspeech_with_actorless_events_follows_the_text_order(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    const char *text = "// Choreo version 1\n"
                       ACTOR("alyx", SPEAK("a", "0 2", "alyx.a"))
                       "event speak \"narrator\"\n{\n  time 7 8\n  param \"narr.line\"\n"
                       "  cctype \"cc_master\"\n  cctoken \"\"\n}\n";
    choreo_scene *s = parse_text(ctx, text);
    REQUIRE(s != NULL);
    uint32_t msecs, last;
    summary_times(ctx, s, &msecs, &last);
    CHECK_EQ_U64(last, 8000); /* the narrator comes last in the text */
    CHECK(!choreo_lastspeech_possible(s, 2000));
    choreo_scene *b = through_bvcd(ctx, s);
    REQUIRE(b != NULL);
    summary_times(ctx, b, &msecs, &last);
    CHECK_EQ_U64(last, 2000); /* in BVCD order the narrator comes first */
    CHECK(choreo_lastspeech_possible(b, 8000));
    CHECK(choreo_lastspeech_possible(b, 2000));
    CHECK(!choreo_lastspeech_possible(b, 7000));
    CHECK(!choreo_lastspeech_possible(b, 0));
    choreo_scene_free(ctx, b);
    choreo_scene_free(ctx, s);
    trowel_ctx_free(ctx);
}

/* ------------------------------------------------------------ the image */

typedef struct problems {
    size_t count;
    char first[512];
} problems;

static void collect_problem(void *user, const trowel_error *e)
{
    problems *p = user;
    if (p->count++ == 0)
        snprintf(p->first, sizeof p->first, "%s", e->message);
}

/* Builds a one-scene image from text; returns its bytes (malloc'd). */
static bytes build_image(trowel_ctx *ctx, const char *text, const char *version)
{
    bytes out = {NULL, 0};
    char path[] = "/tmp/trowel-summary-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return out;
    if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
        close(fd);
        unlink(path);
        return out;
    }
    close(fd);
    trowel_source src = {"scenes/two_actors.vcd", path};
    const char *opts[] = {version};
    trowel_create_params p = {.sources = &src, .source_count = 1, .options = opts,
                              .option_count = 1};
    trowel_sink *s;
    if (trowel_sink_open_memory(ctx, &s) == TROWEL_OK) {
        if (trowel_create(ctx, trowel_format_find("vsif"), &p, s) == TROWEL_OK) {
            size_t n = 0;
            const uint8_t *d = trowel_sink_data(s, &n);
            out.data = malloc(n);
            if (out.data) {
                memcpy(out.data, d, n);
                out.size = n;
            }
        }
        trowel_sink_discard(s);
    }
    unlink(path);
    return out;
}

static trowel_status verify_image(const bytes *img, problems *p)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    trowel_status st = trowel_input_open_memory(ctx, img->data, img->size, "x.image", &in);
    if (st == TROWEL_OK)
        st = trowel_archive_open(ctx, in, trowel_format_find("vsif"), &a);
    if (st == TROWEL_OK)
        st = trowel_archive_verify(a, collect_problem, p);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return st;
}

static void test_v3_image_stores_and_verifies_valves_lastspeech(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    bytes img = build_image(ctx, two_actors, "version=3");
    REQUIRE(img.size > 20 && get_u32(img.data + 4) == 3);
    uint32_t eo = get_u32(img.data + 16), so = get_u32(img.data + eo + 12);
    CHECK_EQ_U64(get_u32(img.data + so), 16494);     /* msecs */
    CHECK_EQ_U64(get_u32(img.data + so + 4), 5409);  /* lastspeech_msecs */
    problems p = {0, ""};
    CHECK(verify_image(&img, &p) == TROWEL_OK);
    CHECK_EQ_U64(p.count, 0);
    /* The old inference's value (the latest end) is now a verify problem. */
    set_u32(img.data + so + 4, 16494);
    p.count = 0;
    CHECK(verify_image(&img, &p) == TROWEL_ERR_VERIFY);
    CHECK_EQ_U64(p.count, 1);
    CHECK_STR(p.first, "summary says the last speech ends at 16494 ms, the scene says 5409 ms");
    free(img.data);
    trowel_ctx_free(ctx);
}

/* A v3 image built from text whose narrator comes after the actors stores
 * the text's answer (8000), and verify, reading BVCD, accepts it. (Both
 * events play the same sound: verify compares sound lists in BVCD order,
 * see docs/formats/vsif.md.) */
static void test_v3_image_with_a_late_actorless_speech_verifies(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    const char *text = "// Choreo version 1\n"
                       ACTOR("alyx", SPEAK("a", "0 2", "alyx.a"))
                       "event speak \"narrator\"\n{\n  time 7 8\n  param \"alyx.a\"\n"
                       "  cctype \"cc_master\"\n  cctoken \"\"\n}\n";
    bytes img = build_image(ctx, text, "version=3");
    REQUIRE(img.size > 20);
    uint32_t eo = get_u32(img.data + 16), so = get_u32(img.data + eo + 12);
    CHECK_EQ_U64(get_u32(img.data + so + 4), 8000);
    problems p = {0, ""};
    CHECK(verify_image(&img, &p) == TROWEL_OK);
    set_u32(img.data + so + 4, 7000); /* no order of the text gives this */
    CHECK(verify_image(&img, &p) == TROWEL_ERR_VERIFY);
    CHECK_STR(p.first, "summary says the last speech ends at 7000 ms, the scene says 2000 ms");
    free(img.data);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_lastspeech_is_the_last_speech_in_order_not_the_latest_end),
          TEST(test_lastspeech_takes_the_start_of_a_speech_without_end),
          TEST(test_lastspeech_with_actorless_events_follows_the_text_order),
          TEST(test_v3_image_stores_and_verifies_valves_lastspeech),
          TEST(test_v3_image_with_a_late_actorless_speech_verifies))
