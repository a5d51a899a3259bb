/*
 * A scenes.image read with a second thread (core/worker.c: the survey at
 * open and the text of later scenes made ahead) must give exactly what one
 * thread gives: the same entries and names, the same bytes, the same
 * warnings in the same order, the same errors (entry, offset, message) for
 * every scene, whatever order the entries are read in. Checked on the
 * Sentinel Prime image of the corpus (301 scenes, compressed and stored),
 * whole and with bytes damaged at random, with the worker's memory share
 * as shipped and so small that most of its work fails and is done again by
 * the reading thread. Each run also says whether the worker ran, so that
 * "the same" cannot come from the worker never running. An image opened
 * to be read in order (trowel_archive_open_in_order: scenes surveyed as
 * they are reached, by either thread) must show what one opened whole
 * shows, info included.
 */
#include "core/core.h"
#include "core/module.h"
#include "files.h"
#include "test.h"
#include "trowel/trowel.h"
#include "vsif_build.h"

#include <stdarg.h>

#define TSP_IMAGE TROWEL_CORPUS_DIR "/valve/tsp/scenes/scenes.image"

/* Everything a run shows, as text. */
typedef struct run_log {
    char *text;
    size_t len, cap;
} run_log;

static void log_add(run_log *l, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        n = sizeof line - 1;
    if (l->len + (size_t)n + 1 > l->cap) {
        l->cap = (l->len + (size_t)n + 1) * 2;
        l->text = realloc(l->text, l->cap);
    }
    memcpy(l->text + l->len, line, (size_t)n + 1);
    l->len += (size_t)n;
}

static void log_error(run_log *l, const char *what, const trowel_error *e)
{
    log_add(l, "%s %d @%llu [%s] %s\n", what, (int)e->status, (unsigned long long)e->offset,
            e->entry, e->message);
}

static void on_warning(void *user, const trowel_error *w)
{
    log_error(user, "warning", w);
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3u;
    return h;
}

/* NAMES_FIRST: every entry's name asked for, then every entry read in
 * order (as a caller choosing entries by name does). */
enum order { IN_ORDER, BACKWARDS, STRIDED, NAMES_FIRST };

/* How a run reads: threads, the worker's share (0: as shipped), order,
 * the memory limit (0: the default), whether it is opened to be read in
 * order. */
typedef struct run_setup {
    unsigned threads;
    uint64_t share;
    enum order order;
    uint64_t limit;
    bool in_order;
} run_setup;

/* The index of the k-th entry read out of n. */
static size_t nth(enum order order, size_t k, size_t n)
{
    if (order == BACKWARDS)
        return n - 1 - k;
    if (order == STRIDED) /* 7 is prime to every count but its multiples */
        return n % 7 ? k * 7 % n : k;
    return k;
}

/* Opens image and reads every entry as set up; the log of what it showed,
 * and (*jobs) how many jobs the worker ran. */
static run_log run(const bytes *image, run_setup setup, unsigned *jobs)
{
    run_log l = {NULL, 0, 0};
    log_add(&l, "run\n");
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_threads(ctx, setup.threads);
    trowel_ctx_set_mem_limit(ctx, setup.limit);
    ctx->worker_share = setup.share;
    trowel_ctx_set_warning_handler(ctx, on_warning, &l);
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    trowel_status s = trowel_input_open_memory(ctx, image->data, image->size, "scenes.image", &in);
    const trowel_format *vsif = trowel_format_find("vsif");
    if (s == TROWEL_OK)
        s = setup.in_order ? trowel_archive_open_in_order(ctx, in, vsif, &a)
                           : trowel_archive_open(ctx, in, vsif, &a);
    log_add(&l, "open %d\n", (int)s);
    if (s != TROWEL_OK)
        log_error(&l, "error", trowel_ctx_last_error(ctx));
    size_t n = a ? trowel_archive_entry_count(a) : 0;
    log_add(&l, "entries %zu damaged %d\n", n, a ? trowel_archive_damaged(a) : 0);
    for (size_t i = 0; setup.order == NAMES_FIRST && i < n; i++)
        log_add(&l, "name %zu %s\n", i, trowel_archive_entry(a, i)->name);
    for (size_t k = 0; k < n; k++) {
        size_t i = nth(setup.order, k, n);
        trowel_sink *sink = NULL;
        s = trowel_sink_open_memory(ctx, &sink);
        if (s == TROWEL_OK)
            s = trowel_archive_read_entry(a, i, sink);
        size_t size = 0;
        const uint8_t *data = sink ? trowel_sink_data(sink, &size) : NULL;
        log_add(&l, "entry %zu %s: %d %zu bytes %016llx\n", i, trowel_archive_entry(a, i)->name,
                (int)s, size, (unsigned long long)fnv1a(data, size));
        if (s != TROWEL_OK)
            log_error(&l, "error", trowel_ctx_last_error(ctx));
        trowel_sink_discard(sink);
    }
    /* asked for last, so that reading in order surveys as it reads */
    const trowel_prop *rule = a ? trowel_props_find(trowel_archive_info(a), "summary_precision") : NULL;
    log_add(&l, "rule %s\n", rule ? rule->s : "-");
    trowel_archive_close(a);
    trowel_input_close(in);
    log_add(&l, "memory left %llu\n", (unsigned long long)trowel_ctx_mem_in_use(ctx));
    *jobs = ctx->worker_jobs;
    trowel_ctx_free(ctx);
    return l;
}

/* Runs image one-threaded and as set up; the number of setups whose log
 * differs (reported), and whether the worker ran in every two-thread run
 * (*all_ran). */
static int differences(const bytes *image, const run_setup *setups, size_t count, bool *all_ran)
{
    int bad = 0;
    *all_ran = true;
    for (size_t k = 0; k < count; k++) {
        unsigned jobs_one = 0, jobs = 0;
        /* in order against in order: memory in use (which refusals tell)
         * differs from a whole survey's, which keeps every decoded scene */
        run_setup one = {1, 0, setups[k].order, setups[k].limit, setups[k].in_order};
        run_log want = run(image, one, &jobs_one);
        run_log got = run(image, setups[k], &jobs);
        if (jobs_one != 0 || jobs == 0)
            *all_ran = false;
        if (want.len != got.len || memcmp(want.text, got.text, want.len) != 0) {
            if (bad++ == 0) {
                size_t at = 0;
                while (at < want.len && at < got.len && want.text[at] == got.text[at])
                    at++;
                while (at > 0 && want.text[at - 1] != '\n')
                    at--;
                fprintf(stderr, "  setup %zu differs; one thread:\n%.300s\n  two threads:\n%.300s\n",
                        k, want.text + at, got.text + at);
            }
        }
        free(want.text);
        free(got.text);
    }
    return bad;
}

/* Image opened whole (one thread) and opened to be read in order (one
 * thread, and two): the logs must be the same. The first, for the caller
 * to free. Only where no read is refused for memory: a refusal tells what
 * is in use, which differs (a whole survey keeps every decoded scene). */
static run_log same_in_order(const bytes *image)
{
    unsigned jobs;
    run_setup whole = {1, 0, IN_ORDER, 0, false};
    run_log want = run(image, whole, &jobs);
    static const run_setup in_order[] = {
        {1, 0, IN_ORDER, 0, true}, {2, 0, IN_ORDER, 0, true}, {2, 4096, IN_ORDER, 0, true},
        {2, 0, NAMES_FIRST, 0, true}};
    for (size_t k = 0; k < sizeof in_order / sizeof in_order[0]; k++) {
        run_log got = run(image, in_order[k], &jobs);
        if (in_order[k].order == NAMES_FIRST) { /* its names come first */
            const char *at = strstr(got.text, "\nentry 0 ");
            CHECK(at != NULL);
            CHECK(at && strstr(want.text, at + 1) != NULL);
        } else {
            CHECK(want.len == got.len && memcmp(want.text, got.text, want.len) == 0);
        }
        free(got.text);
    }
    return want;
}

static const run_setup setups[] = {
    {2, 0, IN_ORDER, 0, false},    {2, 0, BACKWARDS, 0, false},    {2, 0, STRIDED, 0, false},
    {2, 4096, IN_ORDER, 0, false}, {2, 65536, IN_ORDER, 0, false}, {2, 65536, STRIDED, 0, false},
    {2, 0, IN_ORDER, 0, true},     {2, 0, BACKWARDS, 0, true},     {2, 65536, IN_ORDER, 0, true},
    {2, 4096, IN_ORDER, 0, true},  {2, 0, NAMES_FIRST, 0, true},
};

static void test_worker_gives_what_one_thread_gives(void)
{
    REQUIRE_INPUT(have_file(TSP_IMAGE));
    bytes image = read_file(TSP_IMAGE);
    bool all_ran;
    CHECK_EQ_U64(differences(&image, setups, sizeof setups / sizeof setups[0], &all_ran), 0);
    CHECK(all_ran);
    free(same_in_order(&image).text);
    free(image.data);
}

/* Where the stored (uncompressed) scenes of image lie, to damage them
 * byte by byte: their BVCDs then fail to parse, or parse into fields the
 * text cannot name (a warning). */
typedef struct span {
    size_t offset, size;
} span;

static size_t stored_scenes(const bytes *image, span *out, size_t cap)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    size_t n = 0;
    if (trowel_input_open_memory(ctx, image->data, image->size, "scenes.image", &in) == TROWEL_OK &&
        trowel_archive_open(ctx, in, trowel_format_find("vsif"), &a) == TROWEL_OK) {
        for (size_t i = 0; i < trowel_archive_entry_count(a) && n < cap; i++) {
            const trowel_entry *e = trowel_archive_entry(a, i);
            if (strcmp(e->method, "stored") == 0 && e->packed_size > 8)
                out[n++] = (span){(size_t)e->offset, (size_t)e->packed_size};
        }
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return n;
}

static uint64_t next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Damage: bytes changed at random anywhere past the header (a damaged
 * table, scenes that do not decode) and in the stored scenes (scenes that
 * do not parse, fields the text cannot name). Some of it must show as
 * warnings, so that the warnings the worker keeps are compared too. */
static void test_worker_gives_what_one_thread_gives_on_damage(void)
{
    REQUIRE_INPUT(have_file(TSP_IMAGE));
    bytes image = read_file(TSP_IMAGE);
    uint8_t *original = malloc(image.size);
    memcpy(original, image.data, image.size);
    span stored[400];
    size_t nstored = stored_scenes(&image, stored, 400);
    REQUIRE(nstored > 100);
    uint64_t x = 0x2545f4914f6cdd1du;
    int bad = 0;
    unsigned ran = 0, warned = 0;
    for (int round = 0; round < 16; round++) {
        memcpy(image.data, original, image.size);
        for (int k = 0; k < 4; k++) {
            size_t at = 16 + (size_t)(next_random(&x) % (image.size - 16));
            image.data[at] ^= (uint8_t)(1u << (x >> 60 & 7));
        }
        for (size_t k = round % 2; k < nstored; k += 2) {
            const span *sp = &stored[k];
            size_t at = sp->offset + 8 + (size_t)(next_random(&x) % (sp->size - 8));
            image.data[at] = (uint8_t)(x >> 56);
        }
        static const run_setup damage_setups[] = {
            {2, 0, IN_ORDER, 0, false}, {2, 0, BACKWARDS, 0, false}, {2, 0, STRIDED, 0, false},
            {2, 4096, IN_ORDER, 0, false}, {2, 0, IN_ORDER, 0, true}, {2, 4096, IN_ORDER, 0, true},
        };
        bool all_ran;
        bad += differences(&image, damage_setups, 6, &all_ran);
        ran += all_ran;
        unsigned jobs;
        run_setup two = {2, 0, IN_ORDER, 0, false};
        run_log l = run(&image, two, &jobs);
        warned += strstr(l.text, "\nwarning ") != NULL;
        free(l.text);
    }
    CHECK_EQ_U64(bad, 0);
    CHECK(ran > 0);    /* most damage leaves the image open, with the worker at work */
    CHECK(warned > 0); /* and some of it warns */
    free(original);
    free(image.data);
}

/* A scene with one flex sample whose curve is exponential_decay to hold:
 * in its BVCD the sample's value (1.0: 0xff) is followed by the curve,
 * 0x0e0f, little-endian. */
static const char flex_scene[] =
    "actor \"a\"\n{\n  channel \"c\"\n  {\n    event flexanimation \"f\"\n    {\n"
    "      time 0.000000 1.000000\n      param \"\"\n      flexanimations samples_use_time\n"
    "      {\n        \"lid_raiser\"\n        {\n"
    "          0.5000 1.0000 \"curve_exponential_decay_to_curve_hold\"\n"
    "        }\n      }\n    }\n  }\n}\n";

/* count flex scenes built into an image (no compression). With
 * last_string, scene i uses the flex track "zzz_last_0" instead of
 * "lid_raiser" when i % 7 == 3, which makes it the pool's last string. */
static bytes flex_image(int count, bool last_string)
{
    bytes image = {NULL, 0};
    char *dir = make_temp_dir();
    if (!dir)
        return image;
    trowel_source *src = calloc((size_t)count, sizeof *src);
    char **paths = calloc((size_t)count, sizeof *paths);
    char(*names)[32] = calloc((size_t)count, sizeof *names);
    char scene[sizeof flex_scene];
    for (int i = 0; i < count; i++) {
        memcpy(scene, flex_scene, sizeof flex_scene);
        if (last_string && i % 7 == 3)
            memcpy(strstr(scene, "lid_raiser"), "zzz_last_0", 10); /* as long */
        snprintf(names[i], sizeof names[i], "scene%03d.vcd", i);
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        paths[i] = malloc(len);
        snprintf(paths[i], len, "%s/%s", dir, names[i]);
        write_file(paths[i], scene, strlen(scene));
        src[i] = (trowel_source){names[i], paths[i]};
    }
    trowel_ctx *ctx = trowel_ctx_new();
    const char *opts[] = {"compress=none"};
    CHECK(vsif_build(ctx, src, (size_t)count, opts, 1, &image) == TROWEL_OK);
    trowel_ctx_free(ctx);
    for (int i = 0; i < count; i++)
        free(paths[i]);
    free(paths);
    free(names);
    free(src);
    remove_tree(dir);
    return image;
}

/* How many times what occurs in text. */
static int count_in(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}

/* 300 such scenes, stored (not compressed); in every third one the curve
 * is given a type with no name (a warning when the scene becomes text, on
 * whichever thread makes the text). */
static void test_worker_passes_on_each_scenes_warnings(void)
{
    enum { SCENES = 300 };
    bytes image = flex_image(SCENES, false);
    REQUIRE(image.size > 0);
    static const uint8_t sample[] = {0xff, 0x0f, 0x0e};
    int patched = 0, seen = 0;
    for (size_t at = 0; at + sizeof sample <= image.size; at++)
        if (memcmp(image.data + at, sample, sizeof sample) == 0 && seen++ % 3 == 0) {
            image.data[at + 2] = 0x7f;
            patched++;
        }
    CHECK_EQ_U64(seen, SCENES);
    bool all_ran;
    CHECK_EQ_U64(differences(&image, setups, sizeof setups / sizeof setups[0], &all_ran), 0);
    CHECK(all_ran);
    unsigned jobs;
    run_setup two = {2, 0, IN_ORDER, 0, false};
    run_log l = run(&image, two, &jobs);
    CHECK_EQ_U64(count_in(l.text, "\nwarning "), patched);
    free(l.text);
    free(image.data);
}

/* Compressed scenes whose LZMA header declares 2047 MiB: decoding one
 * needs more than the limit leaves, so it is refused, and the message says
 * how much was in use. While the worker works, its share counts as in use
 * and what it made ahead is held; before the reading thread's own work is
 * refused, all of it gives way, so the refusals (and their "already in
 * use") are those of one thread, under the default limit and near a small
 * one. */
static void test_worker_gives_way_to_the_limit(void)
{
    REQUIRE_INPUT(have_file(TSP_IMAGE));
    bytes image = read_file(TSP_IMAGE);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    int patched = 0;
    if (trowel_input_open_memory(ctx, image.data, image.size, "scenes.image", &in) == TROWEL_OK &&
        trowel_archive_open(ctx, in, trowel_format_find("vsif"), &a) == TROWEL_OK)
        for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
            const trowel_entry *e = trowel_archive_entry(a, i);
            uint8_t *h = image.data + e->offset;
            if (strcmp(e->method, "lzma") == 0 && i % 5 == 0 && memcmp(h, "LZMA", 4) == 0) {
                set_u32(h + 4, 2047u << 20);
                patched++;
            }
        }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    REQUIRE(patched > 10);
    const run_setup limits[] = {
        {2, 0, IN_ORDER, 0, false},          {2, 0, STRIDED, 0, false},
        {2, 65536, IN_ORDER, 4u << 20, false}, {2, 65536, STRIDED, 64u << 20, false},
        {2, 0, IN_ORDER, 0, true},           {2, 65536, IN_ORDER, 4u << 20, true},
    };
    bool all_ran;
    CHECK_EQ_U64(differences(&image, limits, sizeof limits / sizeof limits[0], &all_ran), 0);
    CHECK(all_ran);
    unsigned jobs;
    run_log l = run(&image, limits[0], &jobs);
    CHECK(strstr(l.text, "already in use") != NULL); /* the refusals are there */
    free(l.text);
    free(image.data);
}


/* An image whose pool lacks its last string (the string count cut by
 * one): the scenes using it cannot become text and are written as stored,
 * named .bvcd. Opened to be read in order, whichever thread surveys such
 * a scene (the reading one, in the gap before a batch, or the worker, with
 * its batch) names it and writes it as the whole survey in open does. */
static void test_in_order_names_scenes_that_cannot_become_text(void)
{
    enum { SCENES = 400 };
    bytes image = flex_image(SCENES, true);
    REQUIRE(image.size > 16 && memcmp(image.data, "VSIF", 4) == 0);
    set_u32(image.data + 12, get_u32(image.data + 12) - 1);
    static const run_setup in_order[] = {
        {2, 0, IN_ORDER, 0, true}, {2, 0, BACKWARDS, 0, true}, {2, 4096, IN_ORDER, 0, true},
        {2, 0, IN_ORDER, 0, false},
    };
    bool all_ran;
    CHECK_EQ_U64(differences(&image, in_order, sizeof in_order / sizeof in_order[0], &all_ran), 0);
    CHECK(all_ran);
    run_log want = same_in_order(&image);
    CHECK_EQ_U64(count_in(want.text, ".bvcd:"), (SCENES + 3) / 7);
    CHECK_EQ_U64(count_in(want.text, "cannot become text"), (SCENES + 3) / 7);
    free(want.text);
    free(image.data);
}

/* Read in order, the names of the scenes the worker surveyed are made as
 * its batch is taken. A rename refused there must neither free the batch
 * under the taking (the memory limit's give-way) nor leave a scene that
 * cannot become text to be read as an empty text: its entry fails. The
 * refusal is forced before entry at is read: by an allocation failure
 * (mode 0), or (mode 1) by a limit the next name does not fit under, the
 * names' store being full (a small worker share lets the batch run). Adds
 * the entries read as empty successes, and the entries refused. */
static void refused_rename(const bytes *image, int mode, size_t at, size_t *empty, size_t *refused)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_threads(ctx, 2);
    if (mode == 1)
        ctx->worker_share = 65536;
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    REQUIRE(trowel_input_open_memory(ctx, image->data, image->size, "scenes.image", &in) ==
            TROWEL_OK);
    REQUIRE(trowel_archive_open_in_order(ctx, in, trowel_format_find("vsif"), &a) == TROWEL_OK);
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
        trowel_sink *sink = NULL;
        REQUIRE(trowel_sink_open_memory(ctx, &sink) == TROWEL_OK);
        if (i == at && mode == 0)
            ctx->fail_alloc_after = 1;
        if (i == at && mode == 1) {
            size_t full = 1;
            while (full < trowel_props_count(a->strings))
                full *= 2;
            while (trowel_props_count(a->strings) < full)
                REQUIRE(trowel_archive_rename_entry(a, 0, trowel_archive_entry(a, 0)->name) ==
                        TROWEL_OK);
            trowel_ctx_set_mem_limit(ctx, trowel_ctx_mem_in_use(ctx) - 30000);
        }
        trowel_status s = trowel_archive_read_entry(a, i, sink);
        if (i == at) {
            ctx->fail_alloc_after = 0;
            trowel_ctx_set_mem_limit(ctx, 0);
        }
        size_t size = 0;
        (void)trowel_sink_data(sink, &size);
        *empty += s == TROWEL_OK && size == 0;
        *refused += s != TROWEL_OK;
        trowel_sink_discard(sink);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

static void test_in_order_refused_renames_fail_their_entries(void)
{
    bytes image = flex_image(300, true);
    REQUIRE(image.size > 16);
    set_u32(image.data + 12, get_u32(image.data + 12) - 1); /* scenes i % 7 == 3: .bvcd */
    for (int mode = 0; mode < 2; mode++) {
        size_t empty = 0, refused = 0;
        for (size_t at = 1; at < 48; at++) /* the first batches start in here */
            refused_rename(&image, mode, at, &empty, &refused);
        CHECK_EQ_U64(empty, 0);
        CHECK(refused > 0);
    }
    free(image.data);
}

TEST_MAIN(TEST(test_worker_gives_what_one_thread_gives),
          TEST(test_in_order_refused_renames_fail_their_entries),
          TEST(test_in_order_names_scenes_that_cannot_become_text),
          TEST(test_worker_gives_what_one_thread_gives_on_damage),
          TEST(test_worker_passes_on_each_scenes_warnings),
          TEST(test_worker_gives_way_to_the_limit))
