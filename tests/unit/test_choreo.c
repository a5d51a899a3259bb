/*
 * Choreography scenes (src/format/valve/choreo*.c) on real files: every VCD
 * of the corpus parses; our BVCD of each ez2/tsp VCD equals, byte for byte,
 * the one Valve's builder stored in the real scenes.image (with the image's
 * string pool), and so do the summaries (msecs, v3 last-speech time,
 * sounds); text -> binary -> text -> binary and binary -> text -> binary
 * are exact; srctools' sample compiles to srctools' BVCD except where
 * srctools departs from Valve; hostile text and binary give clear errors.
 */
#include "format/valve/choreo.h"
#include "format/valve/choreo_model.h"
#include "choreo_survey_check.h"
#include "files.h"
#include "test.h"

#include <dirent.h>
#include <strings.h>
#include <lzma.h>
#include <sys/stat.h>
#include <zlib.h>

/* ---------------------------------------------------------- helpers */


/* An empty string pool, or NULL when memory runs out. */
static choreo_pool *new_pool(trowel_ctx *ctx)
{
    choreo_pool *p;
    return choreo_pool_new(ctx, &p) == TROWEL_OK ? p : NULL;
}

static bool corpus_path(char *out, size_t cap, const char *rel)
{
    snprintf(out, cap, "%s/valve/%s", TROWEL_CORPUS_DIR, rel);
    struct stat st;
    if (stat(out, &st) != 0) {
        test_skip("%s absent", out);
        return false;
    }
    return true;
}

static trowel_status parse_mem(trowel_ctx *ctx, const void *data, size_t n, choreo_scene **out)
{
    trowel_input *in = NULL;
    trowel_status st = trowel_input_open_memory(ctx, data, n, "mem.vcd", &in);
    if (st != TROWEL_OK)
        return st;
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    st = choreo_parse_vcd(ctx, &r, out);
    trowel_input_close(in);
    return st;
}

static trowel_status read_bvcd_mem(trowel_ctx *ctx, const void *data, size_t n,
                                   const choreo_pool *pool, choreo_scene **out)
{
    trowel_input *in = NULL;
    trowel_status st = trowel_input_open_memory(ctx, data, n, "mem.bvcd", &in);
    if (st != TROWEL_OK)
        return st;
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    st = choreo_read_bvcd(ctx, &r, pool, out);
    trowel_input_close(in);
    return st;
}

/* BVCD of s into a malloc'd buffer. */
static trowel_status to_bvcd(trowel_ctx *ctx, const choreo_scene *s, choreo_pool *pool, uint32_t crc,
                             bytes *out)
{
    trowel_sink *sink = NULL;
    trowel_status st = trowel_sink_open_memory(ctx, &sink);
    if (st != TROWEL_OK)
        return st;
    st = choreo_write_bvcd(ctx, s, pool, crc, sink);
    size_t n = 0;
    const uint8_t *d = trowel_sink_data(sink, &n);
    out->data = malloc(n ? n : 1);
    if (n)
        memcpy(out->data, d, n);
    out->size = n;
    trowel_sink_discard(sink);
    return st;
}

/* The BVCD (source CRC 7) of a text scene, its strings into pool. */
static void bvcd_of_text(trowel_ctx *ctx, const char *vcd, choreo_pool *pool, bytes *out)
{
    choreo_scene *s = NULL;
    REQUIRE(parse_mem(ctx, vcd, strlen(vcd), &s) == TROWEL_OK);
    REQUIRE(to_bvcd(ctx, s, pool, 7, out) == TROWEL_OK);
    choreo_scene_free(ctx, s);
}

static trowel_status to_vcd(trowel_ctx *ctx, const choreo_scene *s, bytes *out)
{
    trowel_sink *sink = NULL;
    trowel_status st = trowel_sink_open_memory(ctx, &sink);
    if (st != TROWEL_OK)
        return st;
    st = choreo_write_vcd(ctx, s, sink);
    size_t n = 0;
    const uint8_t *d = trowel_sink_data(sink, &n);
    out->data = malloc(n + 1);
    if (n)
        memcpy(out->data, d, n);
    out->data[n] = 0;
    out->size = n;
    trowel_sink_discard(sink);
    return st;
}

static bool same_bytes(const bytes *a, const bytes *b)
{
    return a->size == b->size && memcmp(a->data, b->data, a->size) == 0;
}

/* ------------------------------------------------------ image reading */

typedef struct image {
    bytes file;
    int version;
    uint32_t nscenes, nstrings, entry_off;
    choreo_pool *pool;
} image;

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static bool image_load(trowel_ctx *ctx, const char *path, image *im)
{
    memset(im, 0, sizeof *im);
    im->file = read_file(path);
    if (im->file.size < 20 || memcmp(im->file.data, "VSIF", 4) != 0)
        return false;
    const uint8_t *d = im->file.data;
    im->version = (int)rd32(d + 4);
    im->nscenes = rd32(d + 8);
    im->nstrings = rd32(d + 12);
    im->entry_off = rd32(d + 16);
    im->pool = new_pool(ctx);
    for (uint32_t i = 0; i < im->nstrings; i++)
        choreo_pool_append(im->pool, (const char *)d + rd32(d + 20 + 4 * i));
    return true;
}

static void image_free(image *im)
{
    choreo_pool_free(im->pool);
    free(im->file.data);
}

/* The corpus image at rel (under valve/) loaded on a new context, which
 * the caller frees with the image; NULL when the corpus lacks it (the test
 * is skipped, see corpus_path) or it does not load (a failure). */
static trowel_ctx *open_corpus_image(const char *rel, image *im)
{
    char path[1024];
    memset(im, 0, sizeof *im);
    if (!corpus_path(path, sizeof path, rel))
        return NULL;
    trowel_ctx *ctx = trowel_ctx_new();
    if (image_load(ctx, path, im))
        return ctx;
    fprintf(stderr, "  %s does not load as an image\n", path);
    test_failures_in_current++;
    image_free(im);
    trowel_ctx_free(ctx);
    return NULL;
}

/* The entry for a CRC: its scene bytes (decompressed) and summary. */
static bool image_entry(const image *im, uint32_t crc, bytes *scene, uint32_t *msecs,
                        uint32_t *lastspeech, const uint8_t **sounds, uint32_t *nsounds)
{
    const uint8_t *d = im->file.data;
    for (uint32_t i = 0; i < im->nscenes; i++) {
        const uint8_t *e = d + im->entry_off + 16 * i;
        if (rd32(e) != crc)
            continue;
        const uint8_t *blob = d + rd32(e + 4);
        uint32_t len = rd32(e + 8);
        const uint8_t *sum = d + rd32(e + 12);
        *msecs = rd32(sum);
        *lastspeech = im->version == 3 ? rd32(sum + 4) : 0;
        sum += im->version == 3 ? 8 : 4;
        *nsounds = rd32(sum);
        *sounds = sum + 4;
        if (memcmp(blob, "LZMA", 4) != 0) {
            scene->data = malloc(len);
            memcpy(scene->data, blob, len);
            scene->size = len;
            return true;
        }
        uint32_t actual = rd32(blob + 4);
        lzma_filter filters[2] = {{LZMA_FILTER_LZMA1, NULL}, {LZMA_VLI_UNKNOWN, NULL}};
        if (lzma_properties_decode(&filters[0], NULL, blob + 12, 5) != LZMA_OK)
            return false;
        lzma_stream strm = LZMA_STREAM_INIT;
        if (lzma_raw_decoder(&strm, filters) != LZMA_OK)
            return false;
        free(filters[0].options);
        scene->data = malloc(actual);
        strm.next_in = blob + 17;
        strm.avail_in = len - 17;
        strm.next_out = scene->data;
        strm.avail_out = actual;
        lzma_ret r = LZMA_OK;
        while (strm.avail_out && r == LZMA_OK)
            r = lzma_code(&strm, LZMA_FINISH);
        lzma_end(&strm);
        scene->size = actual - strm.avail_out;
        return scene->size == actual;
    }
    return false;
}

/* ------------------------------------------------------- corpus walks */

typedef void (*vcd_fn)(const char *path, const char *scenes_rel, void *user);

/* Calls fn for each .vcd under dir; rel is the path under "scenes". */
static size_t walk_vcds(const char *dir, const char *rel, vcd_fn fn, void *user)
{
    size_t count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char path[2048], sub[1024];
        int np = snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        int ns = snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
        if (np < 0 || (size_t)np >= sizeof path || ns < 0 || (size_t)ns >= sizeof sub)
            continue; /* no corpus path is this long */
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            count += walk_vcds(path, sub, fn, user);
            continue;
        }
        size_t n = strlen(de->d_name);
        if (n > 4 && strcmp(de->d_name + n - 4, ".vcd") == 0) {
            fn(path, sub, user);
            count++;
        }
    }
    closedir(d);
    return count;
}

static uint32_t name_crc(const char *scenes_rel)
{
    char name[1100];
    snprintf(name, sizeof name, "scenes\\%s", scenes_rel);
    for (char *p = name; *p; p++) {
        if (*p == '/')
            *p = '\\';
        else if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p + 32);
    }
    return (uint32_t)crc32(0, (const unsigned char *)name, (unsigned)strlen(name));
}

/* --------------------------------------------- against the real images */

static uint32_t crc_with_crlf(const bytes *text)
{
    uLong crc = crc32(0, NULL, 0);
    for (size_t i = 0; i < text->size; i++) {
        if (text->data[i] == '\n' && (i == 0 || text->data[i - 1] != '\r'))
            crc = crc32(crc, (const unsigned char *)"\r", 1);
        crc = crc32(crc, text->data + i, 1);
    }
    return (uint32_t)crc;
}

typedef struct image_check {
    image im;
    size_t matched, bvcd_equal, summary_equal, parsed, stale;
    bool stale_sounds_allowed;
} image_check;

static void check_against_image(const char *path, const char *rel, void *user)
{
    image_check *ic = user;
    trowel_ctx *ctx = trowel_ctx_new();
    bytes text = read_file(path);
    choreo_scene *s = NULL;
    trowel_status st = parse_mem(ctx, text.data, text.size, &s);
    if (st != TROWEL_OK) {
        fprintf(stderr, "  %s: %s\n", rel, trowel_ctx_last_error(ctx)->message);
        CHECK(st == TROWEL_OK);
        goto out;
    }
    ic->parsed++;
    bytes stored = {NULL, 0};
    uint32_t msecs, last, nsounds;
    const uint8_t *sounds;
    if (!image_entry(&ic->im, name_crc(rel), &stored, &msecs, &last, &sounds, &nsounds))
        goto out_scene;
    ic->matched++;
    /* Valve's builders ran on Windows checkouts: the CRC is often that of
     * the file with CRLF line ends (git gave us LF). */
    uint32_t text_crc = (uint32_t)crc32(0, text.data, (unsigned)text.size);
    uint32_t crlf_crc = crc_with_crlf(&text);
    REQUIRE(stored.size >= 9);
    CHECK(rd32(stored.data + 5) == text_crc || rd32(stored.data + 5) == crlf_crc);
    if (rd32(stored.data + 5) == crlf_crc)
        text_crc = crlf_crc;
    /* the summary, computed as the builder does */
    choreo_summary sum;
    REQUIRE(choreo_summarize(ctx, s, &sum) == TROWEL_OK);
    bool same = sum.msecs == msecs;
    if (ic->im.version == 3)
        same = same && sum.lastspeech_msecs == last;
    if (ic->stale_sounds_allowed) {
        /* this image was updated in place (Faceposer's incremental update
         * keeps an entry's old sound list and appends the new sounds), and
         * its narrator scenes were made by copying one another: con3 still
         * lists narration.zen_final_snow. Ours must be the image's list
         * without such leftovers. */
        for (size_t i = 0; same && i < sum.sound_count; i++) {
            bool found = false;
            for (uint32_t j = 0; j < nsounds && !found; j++) {
                const char *have = choreo_pool_get(ic->im.pool, rd32(sounds + 4 * j));
                found = have && strcasecmp(have, sum.sounds[i]) == 0;
            }
            same = found;
        }
        if (sum.sound_count != nsounds)
            ic->stale++;
    } else {
        same = same && sum.sound_count == nsounds;
        for (uint32_t i = 0; same && i < nsounds; i++) {
            const char *want = choreo_pool_get(ic->im.pool, rd32(sounds + 4 * i));
            same = want && strcasecmp(want, sum.sounds[i]) == 0;
        }
    }
    if (same)
        ic->summary_equal++;
    else
        fprintf(stderr, "  %s: summary %u/%u ms, %zu sounds; image %u/%u ms, %u sounds\n", rel,
                sum.msecs, sum.lastspeech_msecs, sum.sound_count, msecs, last, nsounds);
    choreo_summary_free(ctx, &sum);
    /* the BVCD, with the image's pool (every string is already in it) */
    bytes ours = {NULL, 0};
    size_t before = choreo_pool_count(ic->im.pool);
    CHECK(to_bvcd(ctx, s, ic->im.pool, text_crc, &ours) == TROWEL_OK);
    CHECK_EQ_U64(choreo_pool_count(ic->im.pool), before);
    if (same_bytes(&ours, &stored))
        ic->bvcd_equal++;
    else
    {
        fprintf(stderr, "  %s: our BVCD (%zu bytes) differs from the image's (%zu)\n", rel, ours.size,
                stored.size);
        if (getenv("CHOREO_DUMP")) {
            for (size_t i = 0; i < ours.size; i++) fprintf(stderr, "%02x", ours.data[i]);
            fprintf(stderr, "\n");
            for (size_t i = 0; i < stored.size; i++) fprintf(stderr, "%02x", stored.data[i]);
            fprintf(stderr, "\n");
        }
    }
    free(ours.data);
    free(stored.data);
out_scene:
    choreo_scene_free(ctx, s);
out:
    free(text.data);
    trowel_ctx_free(ctx);
}

static void test_choreo_ez2_vcds_compile_to_the_image_bytes(void)
{
    char dir[1024];
    if (!corpus_path(dir, sizeof dir, "ez2/scenes"))
        return;
    image_check ic;
    memset(&ic, 0, sizeof ic);
    trowel_ctx *ctx = open_corpus_image("ez2/scenes/scenes.image", &ic.im);
    if (!ctx)
        return;
    size_t n = walk_vcds(dir, "", check_against_image, &ic);
    CHECK_EQ_U64(n, 51);
    CHECK_EQ_U64(ic.parsed, 51);
    CHECK_EQ_U64(ic.matched, 51);
    CHECK_EQ_U64(ic.summary_equal, 51);
    CHECK_EQ_U64(ic.bvcd_equal, 51);
    image_free(&ic.im);
    trowel_ctx_free(ctx);
}

static void test_choreo_tsp_narrator_vcds_compile_to_the_v3_image(void)
{
    char dir[1024];
    if (!corpus_path(dir, sizeof dir, "tsp/scenes"))
        return;
    image_check ic;
    memset(&ic, 0, sizeof ic);
    trowel_ctx *ctx = open_corpus_image("tsp/scenes/scenes.image", &ic.im);
    if (!ctx)
        return;
    CHECK_EQ_U64(ic.im.version, 3);
    ic.stale_sounds_allowed = true;
    size_t n = walk_vcds(dir, "", check_against_image, &ic);
    CHECK_EQ_U64(n, 18);
    CHECK_EQ_U64(ic.parsed, 18);
    CHECK_EQ_U64(ic.matched, 18);
    CHECK_EQ_U64(ic.summary_equal, 18);
    CHECK_EQ_U64(ic.bvcd_equal, 18);
    printf("  note: %zu of 18 tsp summaries keep a leftover sound from an earlier build\n", ic.stale);
    image_free(&ic.im);
    trowel_ctx_free(ctx);
}

/* Every stored scene of an image reads, and writes back to the same bytes. */
static void image_binary_round_trip(const char *rel, size_t expect)
{
    image im;
    trowel_ctx *ctx = open_corpus_image(rel, &im);
    if (!ctx)
        return;
    CHECK_EQ_U64(im.nscenes, expect);
    size_t same = 0, via_text = 0, times_equal = 0;
    for (uint32_t i = 0; i < im.nscenes; i++) {
        uint32_t crc = rd32(im.file.data + im.entry_off + 16 * i), msecs, last, ns;
        const uint8_t *snd;
        bytes stored = {NULL, 0}, again = {NULL, 0}, text = {NULL, 0}, third = {NULL, 0};
        REQUIRE(image_entry(&im, crc, &stored, &msecs, &last, &snd, &ns));
        choreo_scene *s = NULL, *t = NULL;
        if (read_bvcd_mem(ctx, stored.data, stored.size, im.pool, &s) != TROWEL_OK) {
            fprintf(stderr, "  %08x: %s\n", crc, trowel_ctx_last_error(ctx)->message);
            CHECK(0);
            free(stored.data);
            continue;
        }
        uint32_t src = rd32(stored.data + 5);
        /* the summary times recomputed from the stored scene */
        choreo_summary sum;
        if (choreo_summarize(ctx, s, &sum) == TROWEL_OK) {
            bool ok = sum.msecs == msecs && (im.version != 3 || sum.lastspeech_msecs == last);
            times_equal += ok;
            if (!ok)
                fprintf(stderr, "  %08x: msecs %u/%u, image %u/%u\n", crc, sum.msecs,
                        sum.lastspeech_msecs, msecs, last);
            choreo_summary_free(ctx, &sum);
        }
        CHECK(to_bvcd(ctx, s, im.pool, src, &again) == TROWEL_OK);
        same += same_bytes(&again, &stored);
        /* binary -> text -> binary */
        CHECK(to_vcd(ctx, s, &text) == TROWEL_OK);
        if (parse_mem(ctx, text.data, text.size, &t) == TROWEL_OK &&
            to_bvcd(ctx, t, im.pool, src, &third) == TROWEL_OK && same_bytes(&third, &stored))
            via_text++;
        else
            fprintf(stderr, "  %08x: binary -> text -> binary differs\n", crc);
        choreo_scene_free(ctx, s);
        choreo_scene_free(ctx, t);
        free(stored.data);
        free(again.data);
        free(text.data);
        free(third.data);
    }
    CHECK_EQ_U64(same, im.nscenes);
    CHECK_EQ_U64(via_text, im.nscenes);
    CHECK_EQ_U64(times_equal, im.nscenes);
    image_free(&im);
    trowel_ctx_free(ctx);
}

static void test_choreo_ez2_image_scenes_round_trip(void) { image_binary_round_trip("ez2/scenes/scenes.image", 51); }
static void test_choreo_tsp_image_scenes_round_trip(void) { image_binary_round_trip("tsp/scenes/scenes.image", 301); }

/* ------------------------------------------- text/binary round trips */

typedef struct rt_count {
    size_t files, exact;
} rt_count;

/* text -> binary -> text -> binary gives the same binary; text -> text is
 * stable after one pass. */
static void round_trip_one(const char *path, const char *rel, void *user)
{
    rt_count *rc = user;
    trowel_ctx *ctx = trowel_ctx_new();
    bytes text = read_file(path), b1 = {0}, t2 = {0}, b2 = {0}, t3 = {0}, t4 = {0};
    choreo_scene *s1 = NULL, *s2 = NULL, *s3 = NULL, *s4 = NULL;
    choreo_pool *p1 = new_pool(ctx), *p2 = new_pool(ctx);
    rc->files++;
    bool ok = parse_mem(ctx, text.data, text.size, &s1) == TROWEL_OK &&
              to_bvcd(ctx, s1, p1, 1234, &b1) == TROWEL_OK &&
              read_bvcd_mem(ctx, b1.data, b1.size, p1, &s2) == TROWEL_OK &&
              to_vcd(ctx, s2, &t2) == TROWEL_OK && parse_mem(ctx, t2.data, t2.size, &s3) == TROWEL_OK &&
              to_bvcd(ctx, s3, p2, 1234, &b2) == TROWEL_OK && same_bytes(&b1, &b2);
    /* text -> text: the second pass prints what the first printed */
    ok = ok && to_vcd(ctx, s1, &t3) == TROWEL_OK && parse_mem(ctx, t3.data, t3.size, &s4) == TROWEL_OK &&
         to_vcd(ctx, s4, &t4) == TROWEL_OK && same_bytes(&t3, &t4);
    if (ok)
        rc->exact++;
    else
        fprintf(stderr, "  %s: round trip differs (%s)\n", rel, trowel_ctx_last_error(ctx)->message);
    choreo_scene_free(ctx, s1);
    choreo_scene_free(ctx, s2);
    choreo_scene_free(ctx, s3);
    choreo_scene_free(ctx, s4);
    choreo_pool_free(p1);
    choreo_pool_free(p2);
    free(text.data);
    free(b1.data);
    free(t2.data);
    free(b2.data);
    free(t3.data);
    free(t4.data);
    trowel_ctx_free(ctx);
}

static void test_choreo_corpus_round_trips_are_exact(void)
{
    char dir[1024];
    rt_count rc = {0, 0};
    const char *const dirs[] = {"ez2/scenes", "tsp/scenes", "srctools"};
    for (size_t i = 0; i < 3; i++)
        if (corpus_path(dir, sizeof dir, dirs[i]))
            walk_vcds(dir, "", round_trip_one, &rc);
    CHECK(rc.files >= 51 + 18 + 2 || rc.files == 0);
    CHECK_EQ_U64(rc.exact, rc.files);
}

/* ------------------------------------------------------------ srctools */

/* srctools' test_save_binary.bvcd: its pool as a JSON list, then the BVCD. */
static void test_choreo_srctools_sample_matches_its_bvcd(void)
{
    char vcd[1024], bin[1024];
    if (!corpus_path(vcd, sizeof vcd, "srctools/sample.vcd") ||
        !corpus_path(bin, sizeof bin, "srctools/test_save_binary.bvcd"))
        return;
    trowel_ctx *ctx = trowel_ctx_new();
    bytes text = read_file(vcd), theirs = read_file(bin);
    uint8_t *magic = theirs.data;
    while (magic + 4 <= theirs.data + theirs.size && memcmp(magic, "]bvcd", 5) != 0)
        magic++;
    REQUIRE(magic + 5 <= theirs.data + theirs.size);
    bytes their_bvcd = {magic + 1, theirs.size - (size_t)(magic + 1 - theirs.data)};
    choreo_scene *s = NULL;
    REQUIRE(parse_mem(ctx, text.data, text.size, &s) == TROWEL_OK);
    choreo_pool *pool = new_pool(ctx);
    bytes ours = {NULL, 0};
    REQUIRE(to_bvcd(ctx, s, pool, rd32(their_bvcd.data + 5), &ours) == TROWEL_OK);
    /* One difference, and Valve wins: a gesture without a sequence duration
     * is stored by the engine as -1.0 (00 00 80 bf); srctools writes 0.0.
     * Every other byte (and the rounding srctools uses where Valve truncates
     * happens to agree for this file) is the same. */
    CHECK_EQ_U64(ours.size, their_bvcd.size);
    size_t first = SIZE_MAX, last = 0;
    for (size_t i = 0; i < ours.size && i < their_bvcd.size; i++)
        if (ours.data[i] != their_bvcd.data[i]) {
            if (first == SIZE_MAX)
                first = i;
            last = i;
        }
    static const uint8_t minus_one[4] = {0x00, 0x00, 0x80, 0xbf}, zero[4] = {0, 0, 0, 0};
    REQUIRE(first != SIZE_MAX && first >= 2 && last - first <= 1);
    size_t at = first - 2; /* the float's low bytes are 0 in both */
    CHECK(memcmp(ours.data + at, minus_one, 4) == 0);
    CHECK(memcmp(their_bvcd.data + at, zero, 4) == 0);
    /* ... and that float is the gesture's: type 6 ... 4 empty tag lists */
    CHECK(memcmp(ours.data + at - 4, zero, 4) == 0);
    /* the pool holds the strings in first-use order, as their JSON list */
    char *json = malloc((size_t)(magic + 1 - theirs.data) + 1);
    memcpy(json, theirs.data, (size_t)(magic + 1 - theirs.data));
    json[magic + 1 - theirs.data] = 0;
    char expect[4096] = "[";
    for (size_t i = 0; i < choreo_pool_count(pool); i++) {
        strcat(expect, i ? ", \"" : "\"");
        strcat(expect, choreo_pool_get(pool, (uint32_t)i));
        strcat(expect, "\"");
    }
    strcat(expect, "]");
    CHECK_STR(json, expect);
    free(json);
    free(ours.data);
    choreo_pool_free(pool);
    choreo_scene_free(ctx, s);
    free(text.data);
    free(theirs.data);
    trowel_ctx_free(ctx);
}

/* ------------------------------------------------------------- hostile */

static trowel_status parse_str(trowel_ctx *ctx, const char *text)
{
    choreo_scene *s = NULL;
    trowel_status st = parse_mem(ctx, text, strlen(text), &s);
    choreo_scene_free(ctx, s);
    return st;
}

/* A field a text repeats is kept once: what the scene holds does not grow
 * with the repetitions (its strings live in an arena freed with it). */
static void test_choreo_repeated_fields_do_not_grow_the_scene(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    static const char *const lines[] = {"mapname a\n",
                                        "scalesettings\n{\n  \"CChoreoView\" \"100\"\n}\n"};
    for (size_t k = 0; k < sizeof lines / sizeof lines[0]; k++) {
        size_t n = strlen(lines[k]), times = 200000 / n;
        char *text = malloc(n * times + 1);
        REQUIRE(text != NULL);
        for (size_t i = 0; i < times; i++)
            memcpy(text + i * n, lines[k], n);
        text[n * times] = 0;
        uint64_t before = trowel_ctx_mem_in_use(ctx);
        choreo_scene *scene = NULL;
        CHECK(parse_mem(ctx, text, n * times, &scene) == TROWEL_OK);
        CHECK(trowel_ctx_mem_in_use(ctx) - before < 16384);
        choreo_scene_free(ctx, scene);
        CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), before);
        free(text);
    }
    trowel_ctx_free(ctx);
}

static void test_choreo_rejects_hostile_text(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    CHECK(parse_str(ctx, "event speak \"unterminated\n{\n}\n") == TROWEL_ERR_CORRUPT);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "unterminated") != NULL);
    CHECK(parse_str(ctx, "event speak \"x\"\n{\n  time 1 2\n") == TROWEL_ERR_CORRUPT);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "ends inside") != NULL);
    CHECK(parse_str(ctx, "actor \"a\"\n{\n  channel \"c\"\n  {\n    { { { {\n") == TROWEL_ERR_CORRUPT);
    CHECK(parse_str(ctx, "event speak \"x\"\n{\n  time\n  1 2\n}\n") == TROWEL_ERR_CORRUPT);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "incomplete") != NULL);
    CHECK(parse_str(ctx, "bogus\n") == TROWEL_ERR_CORRUPT);
    CHECK(parse_str(ctx, "event speak \"x\"\n[\n}\n") == TROWEL_ERR_CORRUPT);
    /* a token of 1024 bytes or more */
    char *huge = malloc(5000);
    strcpy(huge, "event speak \"");
    memset(huge + 13, 'a', 3000);
    strcpy(huge + 3013, "\"\n{\n}\n");
    CHECK(parse_str(ctx, huge) == TROWEL_ERR_LIMIT);
    memset(huge, 'b', 4000);
    huge[4000] = 0;
    CHECK(parse_str(ctx, huge) == TROWEL_ERR_LIMIT);
    free(huge);
    /* deep nesting of blocks that the grammar does not allow */
    char *deep = malloc(200000);
    strcpy(deep, "event speak \"x\"\n{\n");
    for (size_t i = 0; i < 50000; i++)
        strcat(deep + strlen(deep) - 0, "{\n");
    CHECK(parse_str(ctx, deep) == TROWEL_ERR_CORRUPT);
    free(deep);
    /* comments of every kind are fine */
    CHECK(parse_str(ctx, "// c\n; c\n# c\n/* c\nc */ event speak \"x\" // tail\n{\n}\n") == TROWEL_OK);
    trowel_ctx_free(ctx);
}

static void test_choreo_refuses_counts_over_255_on_write(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    char *text = malloc(256 * 64 + 16);
    text[0] = 0;
    for (int i = 0; i < 256; i++)
        sprintf(text + strlen(text), "event section \"e%d\"\n{\n time 1 2\n}\n", i);
    choreo_scene *s = NULL;
    REQUIRE(parse_mem(ctx, text, strlen(text), &s) == TROWEL_OK);
    choreo_pool *pool = new_pool(ctx);
    bytes out = {NULL, 0};
    CHECK(to_bvcd(ctx, s, pool, 0, &out) == TROWEL_ERR_UNSUPPORTED);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "256") != NULL);
    free(out.data);
    choreo_pool_free(pool);
    choreo_scene_free(ctx, s);
    free(text);
    trowel_ctx_free(ctx);
}

static const char small_vcd[] =
    "event section \"pause\"\n{\n  time 1.5 -1\n  param \"noaction\"\n}\n"
    "actor \"a\"\n{\n  channel \"c\"\n  {\n"
    "    event speak \"s\"\n    {\n      time 0.1 2.5\n      param \"snd.one\"\n"
    "      tags\n      {\n        \"t\" 0.5\n      }\n      cctype \"cc_master\"\n      cctoken \"\"\n    }\n"
    "    event flexanimation \"f\"\n    {\n      time 0 2\n      param \"\"\n"
    "      flexanimations samples_use_time\n      {\n        \"jaw\" combo range 0 2\n"
    "        {\n          0.5 0.25\n          1 0.75 \"curve_linear_interp_to_curve_hold\"\n        }\n"
    "        {\n          0.2 0.5\n        }\n      }\n    }\n  }\n}\n";

static void test_choreo_rejects_truncated_and_bad_bvcd(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    choreo_pool *pool = new_pool(ctx);
    bytes bin = {NULL, 0};
    bvcd_of_text(ctx, small_vcd, pool, &bin);
    /* every proper prefix fails cleanly */
    size_t truncated = 0;
    for (size_t n = 0; n < bin.size; n++) {
        choreo_scene *t = NULL;
        trowel_status st = read_bvcd_mem(ctx, bin.data, n, pool, &t);
        truncated += st == TROWEL_ERR_TRUNCATED || (n < 5 && st != TROWEL_OK);
        CHECK(t == NULL);
    }
    CHECK_EQ_U64(truncated, bin.size);
    /* a pool missing strings: indices out of range */
    choreo_pool *small = new_pool(ctx);
    choreo_pool_append(small, "pause");
    choreo_scene *t = NULL;
    CHECK(read_bvcd_mem(ctx, bin.data, bin.size, small, &t) == TROWEL_ERR_CORRUPT);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "outside the pool") != NULL);
    /* read loosely, as the engine does: those strings are "" and counted */
    trowel_input *in = NULL;
    REQUIRE(trowel_input_open_memory(ctx, bin.data, bin.size, "mem.bvcd", &in) == TROWEL_OK);
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    size_t missing = 0;
    int first = 0;
    CHECK(choreo_read_bvcd_loose(ctx, &r, small, &t, &missing, &first) == TROWEL_OK);
    CHECK(t != NULL);
    CHECK(missing > 0);
    CHECK(first >= 1); /* "pause" (index 0) is in the small pool */
    choreo_scene_free(ctx, t);
    t = NULL;
    trowel_input_close(in);
    /* a negative index */
    bin.data[11] = 0xFF;
    bin.data[12] = 0xFF;
    CHECK(read_bvcd_mem(ctx, bin.data, bin.size, pool, &t) == TROWEL_ERR_CORRUPT);
    /* wrong version and magic */
    bin.data[4] = 3;
    CHECK(read_bvcd_mem(ctx, bin.data, bin.size, pool, &t) == TROWEL_ERR_UNSUPPORTED);
    bin.data[0] = 'x';
    CHECK(read_bvcd_mem(ctx, bin.data, bin.size, pool, &t) == TROWEL_ERR_UNSUPPORTED);
    choreo_pool_free(small);
    choreo_pool_free(pool);
    free(bin.data);
    trowel_ctx_free(ctx);
}

/* ------------------------------------------------- the survey's read */

/* One BVCD read both ways (choreo_survey_check.h); a disagreement is told. */
static bool survey_agrees(trowel_ctx *ctx, const uint8_t *data, size_t n, const choreo_pool *pool)
{
    char why[600];
    bool same = choreo_survey_agrees(ctx, data, n, pool, false, why, sizeof why);
    if (!same)
        fprintf(stderr, "  %s\n", why);
    return same;
}

/* xorshift: the same mutations every run. */
static uint32_t next_random(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

typedef struct tally {
    size_t cases, agreed;
} tally;

static void count_case(tally *t, bool agreed)
{
    t->cases++;
    t->agreed += agreed;
}

/* Every stored scene of an image whole and cut short (64 cuts at most),
 * read with a pool of half the strings (indices outside it), and 40
 * copies with a few of its bytes changed. */
static void survey_agrees_on_image(const char *rel, tally *t)
{
    image im;
    trowel_ctx *ctx = open_corpus_image(rel, &im);
    if (!ctx)
        return;
    choreo_pool *half = new_pool(ctx);
    for (size_t i = 0; i < choreo_pool_count(im.pool) / 2; i++)
        choreo_pool_append(half, choreo_pool_get(im.pool, (uint32_t)i));
    uint32_t seed = 2463534242u;
    for (uint32_t i = 0; i < im.nscenes; i++) {
        uint32_t crc = rd32(im.file.data + im.entry_off + 16 * i), msecs, last, ns;
        const uint8_t *snd;
        bytes b = {NULL, 0};
        REQUIRE(image_entry(&im, crc, &b, &msecs, &last, &snd, &ns));
        for (size_t n = 0; n < b.size; n += b.size / 64 + 1)
            count_case(t, survey_agrees(ctx, b.data, n, im.pool));
        count_case(t, survey_agrees(ctx, b.data, b.size, im.pool));
        count_case(t, survey_agrees(ctx, b.data, b.size, half));
        uint8_t *copy = malloc(b.size);
        REQUIRE(copy != NULL);
        for (int m = 0; m < 40 && b.size > 9; m++) {
            memcpy(copy, b.data, b.size);
            for (int k = 0; k < 1 + m % 3; k++) /* past the signature and CRC */
                copy[9 + next_random(&seed) % (b.size - 9)] = (uint8_t)next_random(&seed);
            count_case(t, survey_agrees(ctx, copy, b.size, im.pool));
        }
        free(copy);
        free(b.data);
    }
    choreo_pool_free(half);
    image_free(&im);
    trowel_ctx_free(ctx);
}

/* Times the corpus lacks: speech without an end (its start counts), the
 * last speech earlier than the scene's end, actor-less events before the
 * actors. (The text parser already makes an end before the start equal
 * to the start; the BVCD reader's own clamp is met by the changed bytes.) */
static const char survey_vcd[] =
    "event speak \"early\"\n{\n  time 3.25 -1\n  param \"snd.a\"\n}\n"
    "event section \"pause\"\n{\n  time 9.5 -1\n  param \"noaction\"\n}\n"
    "actor \"a\"\n{\n  channel \"c\"\n  {\n"
    "    event speak \"open\"\n    {\n      time 4.0625 -1\n      param \"snd.b\"\n    }\n"
    "    event gesture \"g\"\n    {\n      time 7 6\n      param \"wave\"\n    }\n"
    "    event speak \"last\"\n    {\n      time 1.5 2.9875\n      param \"snd.c\"\n    }\n"
    "  }\n}\n";

/* A scene from text, whole and cut at every length, and its bytes changed
 * one at a time to every value at a stride. */
static void survey_agrees_on_text(const char *vcd, tally *t)
{
    trowel_ctx *ctx = trowel_ctx_new();
    choreo_pool *pool = new_pool(ctx);
    bytes bin = {NULL, 0};
    bvcd_of_text(ctx, vcd, pool, &bin);
    for (size_t n = 0; n <= bin.size; n++)
        count_case(t, survey_agrees(ctx, bin.data, n, pool));
    for (size_t at = 9; at < bin.size; at++)
        for (unsigned v = 0; v < 256; v += 37) {
            uint8_t keep = bin.data[at];
            bin.data[at] = (uint8_t)v;
            count_case(t, survey_agrees(ctx, bin.data, bin.size, pool));
            bin.data[at] = keep;
        }
    choreo_pool_free(pool);
    free(bin.data);
    trowel_ctx_free(ctx);
}

static void test_choreo_survey_read_agrees_with_the_full_read(void)
{
    tally t = {0, 0};
    survey_agrees_on_text(small_vcd, &t);
    survey_agrees_on_text(survey_vcd, &t);
    survey_agrees_on_image("ez2/scenes/scenes.image", &t);
    survey_agrees_on_image("tsp/scenes/scenes.image", &t);
    printf("  %zu of %zu reads agree\n", t.agreed, t.cases);
    CHECK(t.cases > 10000);
    CHECK_EQ_U64(t.agreed, t.cases);
}

/* ------------------------------------------------------- text writer */

/* The writer's own number formatting (no printf) against printf's: ints
 * at their limits, the source CRC at both ends, and a scene longer than
 * the writer's 8 KiB buffer written the same twice. */
static void test_choreo_writer_numbers_match_printf(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    static const char *const ints[] = {"-2147483648", "-1", "7", "2147483647"}; /* 0: not written */
    static const uint32_t crcs[] = {0, 0x0a0b0c0du, 0xffffffffu};
    for (size_t i = 0; i < sizeof crcs / sizeof crcs[0]; i++) {
        const char *v = ints[i % 4], *w = ints[3 - i % 4];
        char text[512], want[64];
        snprintf(text, sizeof text,
                 "actor \"a\"\n{\n  channel \"c\"\n  {\n    event lookat \"l\"\n    {\n"
                 "      time 0 1\n      param \"x\"\n      pitch \"%s\"\n      yaw \"%s\"\n"
                 "    }\n  }\n}\nfps %s\n",
                 v, w, ints[(i + 2) % 4]);
        choreo_scene *s = NULL;
        REQUIRE(parse_mem(ctx, text, strlen(text), &s) == TROWEL_OK);
        s->has_crc = true;
        s->source_crc = crcs[i];
        bytes out = {NULL, 0};
        REQUIRE(to_vcd(ctx, s, &out) == TROWEL_OK);
        snprintf(want, sizeof want, "// bvcd source crc %08x\n", (unsigned)crcs[i]);
        CHECK(strstr((char *)out.data, want) != NULL);
        snprintf(want, sizeof want, "pitch \"%s\"\n", v);
        CHECK(strstr((char *)out.data, want) != NULL);
        snprintf(want, sizeof want, "yaw \"%s\"\n", w);
        CHECK(strstr((char *)out.data, want) != NULL);
        snprintf(want, sizeof want, "fps %d\n", s->fps);
        CHECK(strstr((char *)out.data, want) != NULL);
        free(out.data);
        choreo_scene_free(ctx, s);
    }
    /* 300 events: about 30 KiB of text, three buffers and a part */
    size_t cap = 300 * 120 + 64, n = 0;
    char *big = malloc(cap);
    REQUIRE(big != NULL);
    n += (size_t)snprintf(big + n, cap - n, "actor \"a\"\n{\n  channel \"c\"\n  {\n");
    for (int i = 0; i < 300; i++)
        n += (size_t)snprintf(big + n, cap - n,
                              "    event loop \"l%d\"\n    {\n      time %d -1\n      param \"x\"\n"
                              "      loopcount \"%d\"\n    }\n",
                              i, i, i - 100);
    snprintf(big + n, cap - n, "  }\n}\n");
    choreo_scene *s = NULL, *t = NULL;
    REQUIRE(parse_mem(ctx, big, strlen(big), &s) == TROWEL_OK);
    bytes once = {NULL, 0}, twice = {NULL, 0};
    REQUIRE(to_vcd(ctx, s, &once) == TROWEL_OK);
    CHECK(once.size > 3 * 8192);
    CHECK(strstr((char *)once.data, "loopcount \"-1\"\n") != NULL);
    REQUIRE(parse_mem(ctx, once.data, once.size, &t) == TROWEL_OK);
    REQUIRE(to_vcd(ctx, t, &twice) == TROWEL_OK);
    CHECK(same_bytes(&once, &twice));
    free(once.data);
    free(twice.data);
    choreo_scene_free(ctx, s);
    choreo_scene_free(ctx, t);
    free(big);
    trowel_ctx_free(ctx);
}

/* ------------------------------------------------------- small units */

/* Summary milliseconds by both rules; expected values worked out by hand
 * from the floats' exact values (2.9875f = 2.98749995231628...). */
static void test_choreo_msecs_rounds_by_both_rules(void)
{
    CHECK_EQ_U64(choreo_msecs(2.9875f, false), 2987); /* 2987.49995 + 0.5 */
    CHECK_EQ_U64(choreo_msecs(2.9875f, true), 2988);  /* product rounds to 2987.5 */
    CHECK_EQ_U64(choreo_msecs(1.0875f, false), 1087);
    CHECK_EQ_U64(choreo_msecs(1.0875f, true), 1088);
    CHECK_EQ_U64(choreo_msecs(2.5f, false), 2500); /* exact: both agree */
    CHECK_EQ_U64(choreo_msecs(2.5f, true), 2500);
    CHECK_EQ_U64(choreo_msecs(0.0f, true), 0);
    CHECK_EQ_U64(choreo_msecs(-1.0f, true), 0);
    CHECK_EQ_U64(choreo_msecs(3.0e38f, true), UINT32_MAX); /* no float overflow */
    CHECK_EQ_U64(choreo_msecs(3.0e38f, false), UINT32_MAX);
}

static void test_choreo_pool_dedups_ignoring_case_in_insertion_order(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    choreo_pool *p = new_pool(ctx);
    uint32_t a, b, c;
    CHECK(choreo_pool_intern(p, "Hello", &a) == TROWEL_OK);
    CHECK(choreo_pool_intern(p, "world", &b) == TROWEL_OK);
    CHECK(choreo_pool_intern(p, "HELLO", &c) == TROWEL_OK);
    CHECK_EQ_U64(a, 0);
    CHECK_EQ_U64(b, 1);
    CHECK_EQ_U64(c, 0);
    CHECK_STR(choreo_pool_get(p, 0), "Hello");
    CHECK(choreo_pool_get(p, 2) == NULL);
    CHECK(choreo_pool_append(p, "hello") == TROWEL_OK); /* as read: no de-dup */
    CHECK_EQ_U64(choreo_pool_count(p), 3);
    CHECK(choreo_pool_intern(p, "hello", &c) == TROWEL_OK);
    CHECK_EQ_U64(c, 0);
    choreo_pool_free(p);
    trowel_ctx_free(ctx);
}

/* The hash is built on the first intern, after strings were appended as an
 * image's pool is read (more than its first 64 slots hold), and catches up
 * with strings appended after it: the first spelling still wins. */
static void test_choreo_pool_hash_catches_up_with_appends(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    choreo_pool *p = new_pool(ctx);
    char s[16];
    for (int i = 0; i < 500; i++) {
        snprintf(s, sizeof s, "s%d", i);
        CHECK(choreo_pool_append(p, s) == TROWEL_OK);
    }
    CHECK(choreo_pool_append(p, "S7") == TROWEL_OK); /* 500: a later spelling */
    uint32_t at = 0;
    CHECK(choreo_pool_intern(p, "S7", &at) == TROWEL_OK);
    CHECK_EQ_U64(at, 7);
    CHECK(choreo_pool_append(p, "NEW") == TROWEL_OK); /* 501, after the hash */
    CHECK(choreo_pool_append(p, "new") == TROWEL_OK); /* 502 */
    CHECK(choreo_pool_intern(p, "New", &at) == TROWEL_OK);
    CHECK_EQ_U64(at, 501);
    CHECK(choreo_pool_intern(p, "fresh", &at) == TROWEL_OK);
    CHECK_EQ_U64(at, 503);
    CHECK(choreo_pool_intern(p, "FRESH", &at) == TROWEL_OK);
    CHECK_EQ_U64(at, 503);
    CHECK(choreo_pool_intern(p, "s499", &at) == TROWEL_OK);
    CHECK_EQ_U64(at, 499);
    CHECK_EQ_U64(choreo_pool_count(p), 504);
    choreo_pool_free(p);
    trowel_ctx_free(ctx);
}

/* Midpoint printing: every u8 value survives binary -> text -> binary. */
static void test_choreo_midpoints_keep_every_quantised_value(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    /* a ramp with all 256 values would exceed 255 samples: use two events */
    char *text = malloc(40000);
    strcpy(text, "");
    for (int part = 0; part < 2; part++) {
        sprintf(text + strlen(text), "event expression \"e%d\"\n{\n time 0 300\n param \"x\"\n event_ramp\n {\n", part);
        for (int k = part * 128; k < part * 128 + 128; k++)
            sprintf(text + strlen(text), "  %d.0 %.6f\n", k, k / 255.0 + 0.000001);
        strcat(text, " }\n}\n");
    }
    choreo_scene *s = NULL, *s2 = NULL, *s3 = NULL;
    REQUIRE(parse_mem(ctx, text, strlen(text), &s) == TROWEL_OK);
    choreo_pool *p = new_pool(ctx);
    bytes b1 = {0}, t = {0}, b2 = {0};
    REQUIRE(to_bvcd(ctx, s, p, 0, &b1) == TROWEL_OK);
    REQUIRE(read_bvcd_mem(ctx, b1.data, b1.size, p, &s2) == TROWEL_OK);
    REQUIRE(to_vcd(ctx, s2, &t) == TROWEL_OK);
    REQUIRE(parse_mem(ctx, t.data, t.size, &s3) == TROWEL_OK);
    REQUIRE(to_bvcd(ctx, s3, p, 0, &b2) == TROWEL_OK);
    CHECK(same_bytes(&b1, &b2));
    CHECK(strstr((char *)t.data, "0.0020") != NULL); /* (0 + 0.5) / 255 */
    CHECK(strstr((char *)t.data, "1.0000") != NULL); /* 255 stays 1 */
    choreo_scene_free(ctx, s);
    choreo_scene_free(ctx, s2);
    choreo_scene_free(ctx, s3);
    choreo_pool_free(p);
    free(b1.data);
    free(t.data);
    free(b2.data);
    free(text);
    trowel_ctx_free(ctx);
}

static void test_choreo_fixups_reconcile_tags_and_captions(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    const char *text =
        "actor \"a\"\n{\n  channel \"c\"\n  {\n"
        "    event speak \"s1\"\n    {\n      time 1 3\n      param \"snd.line\"\n"
        "      tags\n      {\n        \"go\" 0.5\n      }\n"
        "      cctype \"cc_slave\"\n      cctoken \"\"\n    }\n"
        "    event gesture \"g\"\n    {\n      time 0 1\n      param \"wave\"\n"
        "      relativetag \"go\" \"snd.line\"\n    }\n"
        "    event speak \"s2\"\n    {\n      time 5 6\n      param \"snd.b\"\n"
        "      cctype \"cc_master\"\n      cctoken \"tok\"\n      cc_usingcombinedfile\n    }\n"
        "    event speak \"s3\"\n    {\n      time 4 4.5\n      param \"snd.c\"\n"
        "      cctype \"cc_master\"\n      cctoken \"TOK\"\n    }\n"
        "  }\n}\n";
    choreo_scene *s = NULL;
    REQUIRE(parse_mem(ctx, text, strlen(text), &s) == TROWEL_OK);
    bytes out = {0};
    REQUIRE(to_vcd(ctx, s, &out) == TROWEL_OK);
    const char *o = (const char *)out.data;
    /* the gesture moved to the tag: start 1 + 2 * 0.5 = 2, end 3 */
    CHECK(strstr(o, "time 2.000000 3.000000") != NULL);
    /* the slave without a token became a master */
    CHECK(strstr(o, "cctype \"cc_slave\"\n      cctoken \"\"") == NULL);
    /* s3 starts first: it is the master; s2 the slave, sharing s3's flag (off) */
    const char *s2 = strstr(o, "\"s2\""), *s3 = strstr(o, "\"s3\"");
    REQUIRE(s2 && s3);
    CHECK(strstr(s2, "cctype \"cc_slave\"") != NULL && strstr(s2, "cctype \"cc_slave\"") < s3);
    CHECK(strstr(s2, "cc_usingcombinedfile") == NULL || strstr(s2, "cc_usingcombinedfile") > s3);
    choreo_summary sum;
    REQUIRE(choreo_summarize(ctx, s, &sum) == TROWEL_OK);
    CHECK_EQ_U64(sum.msecs, 6000);
    /* Valve's rule: s3 is the last speech in event order (it ends at 4.5,
     * before s2 does) */
    CHECK_EQ_U64(sum.lastspeech_msecs, 4500);
    /* s1: param + (master, no token) param again; s2 slave: param only;
     * s3 master: param + token */
    REQUIRE(sum.sound_count == 4);
    CHECK_STR(sum.sounds[0], "snd.line");
    CHECK_STR(sum.sounds[1], "snd.b");
    CHECK_STR(sum.sounds[2], "snd.c");
    CHECK_STR(sum.sounds[3], "TOK");
    choreo_summary_free(ctx, &sum);
    free(out.data);
    choreo_scene_free(ctx, s);
    trowel_ctx_free(ctx);
}

/* The linear tag sort gives what the engine's full exchange sort after
 * each insertion gives, equal values (kept apart by name) included. */
static void test_choreo_tag_sort_matches_the_engines_exchange_sort(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    uint32_t seed = 12345;
    for (int round = 0; round < 200; round++) {
        choreo_scene *scene; /* the tags' names live in its arena */
        REQUIRE(choreo_scene_new(ctx, &scene) == TROWEL_OK);
        choreo_tags tags = {NULL, 0, 0};
        choreo_tag naive[40];
        int n = 1 + round % 40;
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            char name[16];
            snprintf(name, sizeof name, "%d", i);
            float v = (float)((seed >> 16) % 5);
            REQUIRE(choreo_tags_push(scene, &tags, name, v, false) == TROWEL_OK);
            choreo_tags_sort(&tags);
            /* the engine: append, then a full exchange-sort pass */
            static char names[40][16];
            snprintf(names[i], sizeof names[i], "%d", i);
            naive[i] = (choreo_tag){names[i], v, false};
            for (int a = 0; a <= i; a++)
                for (int b = a + 1; b <= i; b++)
                    if (naive[a].value > naive[b].value) {
                        choreo_tag t = naive[a];
                        naive[a] = naive[b];
                        naive[b] = t;
                    }
        }
        for (int i = 0; i < n; i++)
            CHECK_STR(tags.t[i].name, naive[i].name);
        trowel_mem_free(ctx, tags.t);
        choreo_scene_free(ctx, scene);
    }
    trowel_ctx_free(ctx);
}

int main(int argc, char **argv)
{
    static const test_case cases[] = {
        TEST(test_choreo_pool_dedups_ignoring_case_in_insertion_order),
        TEST(test_choreo_repeated_fields_do_not_grow_the_scene),
        TEST(test_choreo_pool_hash_catches_up_with_appends),
        TEST(test_choreo_msecs_rounds_by_both_rules),
        TEST(test_choreo_ez2_vcds_compile_to_the_image_bytes),
        TEST(test_choreo_tsp_narrator_vcds_compile_to_the_v3_image),
        TEST(test_choreo_ez2_image_scenes_round_trip),
        TEST(test_choreo_tsp_image_scenes_round_trip),
        TEST(test_choreo_corpus_round_trips_are_exact),
        TEST(test_choreo_srctools_sample_matches_its_bvcd),
        TEST(test_choreo_midpoints_keep_every_quantised_value),
        TEST(test_choreo_fixups_reconcile_tags_and_captions),
        TEST(test_choreo_tag_sort_matches_the_engines_exchange_sort),
        TEST(test_choreo_rejects_hostile_text),
        TEST(test_choreo_refuses_counts_over_255_on_write),
        TEST(test_choreo_rejects_truncated_and_bad_bvcd),
        TEST(test_choreo_survey_read_agrees_with_the_full_read),
        TEST(test_choreo_writer_numbers_match_printf),
    };
    return test_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
