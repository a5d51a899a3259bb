/*
 * scenes.image (vsif) and Valve's LZMA wrapper (vsif-lzma) on the real
 * images of the shared corpus: names recovered from the VCD folder, a
 * rebuild from those VCDs that matches the real image scene by scene, the
 * v3 image decompiled whole, LZMA blobs checked against liblzma alone,
 * merges, written images re-read, and hostile images.
 */
#include "codec/vsif_lzma.h"
#include "files.h"
#include "test.h"
#include "vsif_build.h"
#include "trowel/trowel.h"

#include <dirent.h>
#include <lzma.h>
#include <stdbool.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define EZ2 TROWEL_CORPUS_DIR "/valve/ez2"
#define EZ2_IMAGE EZ2 "/scenes/scenes.image"
#define TSP_IMAGE TROWEL_CORPUS_DIR "/valve/tsp/scenes/scenes.image"

/* ---------------------------------------------------------------- helpers */

static trowel_archive *open_mem(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                trowel_input **in, trowel_status *st)
{
    trowel_archive *a = NULL;
    *st = trowel_input_open_memory(ctx, data, size, "scenes.image", in);
    if (*st == TROWEL_OK)
        *st = trowel_archive_open(ctx, *in, trowel_format_find("vsif"), &a);
    return a;
}

/* Entry index's output (text, or BVCD with raw=1) as a malloc'd string. */
static char *entry_text(trowel_ctx *ctx, trowel_archive *a, size_t index, size_t *len,
                        trowel_status *st)
{
    trowel_sink *s;
    *st = trowel_sink_open_memory(ctx, &s);
    if (*st != TROWEL_OK)
        return NULL;
    *st = trowel_archive_read_entry(a, index, s);
    size_t n = 0;
    const uint8_t *d = trowel_sink_data(s, &n);
    char *copy = malloc(n + 1);
    if (copy) {
        if (n)
            memcpy(copy, d, n);
        copy[n] = '\0';
    }
    if (len)
        *len = n;
    trowel_sink_discard(s);
    return copy;
}

static const trowel_prop *extra(const trowel_entry *e, const char *key)
{
    return trowel_props_find(e->extra, key);
}

static size_t entry_by_crc(trowel_archive *a, uint64_t crc)
{
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++)
        if (extra(trowel_archive_entry(a, i), "crc")->u == crc)
            return i;
    return SIZE_MAX;
}

/* Every .vcd under dir (recursively), named "scenes/..." as the CLI would
 * with -C <folder holding scenes> scenes. */
typedef struct source_set {
    trowel_source items[512];
    char names[512][256];
    char paths[512][512];
    size_t count;
} source_set;

static void collect(source_set *set, const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && set->count < 512) {
        if (de->d_name[0] == '.')
            continue;
        char path[512], sub[256];
        if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path ||
            snprintf(sub, sizeof sub, "%s/%s", name, de->d_name) >= (int)sizeof sub)
            continue;
        struct stat sb;
        if (stat(path, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            collect(set, path, sub);
            continue;
        }
        size_t i = set->count++;
        snprintf(set->names[i], sizeof set->names[i], "%s", sub);
        snprintf(set->paths[i], sizeof set->paths[i], "%s", path);
        set->items[i].name = set->names[i];
        set->items[i].path = set->paths[i];
    }
    closedir(d);
}

/* The ez2 image's VCD sources, every file under its scenes folder named
 * "scenes/..." as the image names them (one static set, made anew at
 * each call). */
static const source_set *ez2_sources(void)
{
    static source_set set;
    set.count = 0;
    collect(&set, EZ2 "/scenes", "scenes");
    return &set;
}

/* liblzma alone: the raw LZMA1 decoder on a Valve blob, stopping at the
 * header's actual size. */
static bool liblzma_decode(const uint8_t *blob, size_t size, uint8_t **out, size_t *out_size)
{
    if (size < 17 || memcmp(blob, "LZMA", 4) != 0)
        return false;
    uint32_t actual = get_u32(blob + 4), packed = get_u32(blob + 8);
    if (packed > size - 17)
        return false;
    lzma_filter f[2] = {{LZMA_FILTER_LZMA1, NULL}, {LZMA_VLI_UNKNOWN, NULL}};
    if (lzma_properties_decode(&f[0], NULL, blob + 12, 5) != LZMA_OK)
        return false;
    lzma_stream strm = LZMA_STREAM_INIT;
    lzma_ret r = lzma_raw_decoder(&strm, f);
    free(f[0].options);
    if (r != LZMA_OK)
        return false;
    *out = malloc(actual ? actual : 1);
    strm.next_in = blob + 17;
    strm.avail_in = packed;
    strm.next_out = *out;
    strm.avail_out = actual;
    while (strm.avail_out > 0 && (r = lzma_code(&strm, LZMA_RUN)) == LZMA_OK)
        ;
    bool ok = strm.avail_out == 0;
    /* Our encoder ends with a marker: liblzma must see it right after. */
    *out_size = actual;
    lzma_end(&strm);
    return ok;
}

/* ------------------------------------------------------------- LZMA codec */

/* Fills data[0, n) with text, repeated, and every `every`-th byte with
 * noise from a generator seeded with seed: compressible as a scene is,
 * but not trivially. */
static void fill_scene_like(uint8_t *data, size_t n, uint32_t seed, unsigned every,
                            const char *text)
{
    size_t len = strlen(text);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        data[i] = i % every ? (uint8_t)text[i % len] : (uint8_t)(seed >> 24);
    }
}

static void test_vsif_lzma_blobs_decode_with_liblzma_alone(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    static uint8_t data[200000];
    fill_scene_like(data, sizeof data, 12345, 3, "choreo scene actor channel ");
    const size_t sizes[] = {0, 1, 17, 4096, 65537, sizeof data};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint8_t *blob = NULL, *back = NULL, *ref = NULL;
        size_t blob_size = 0, back_size = 0, ref_size = 0;
        CHECK(trowel_vsif_lzma_encode(ctx, data, sizes[k], &blob, &blob_size) == TROWEL_OK);
        if (!blob)
            continue;
        CHECK(memcmp(blob, "LZMA", 4) == 0);
        CHECK_EQ_U64(get_u32(blob + 4), sizes[k]);
        CHECK_EQ_U64(get_u32(blob + 8) + 17, blob_size);
        CHECK(liblzma_decode(blob, blob_size, &ref, &ref_size));
        CHECK(ref_size == sizes[k] && (sizes[k] == 0 || memcmp(ref, data, sizes[k]) == 0));
        CHECK(trowel_vsif_lzma_decode(ctx, blob, blob_size, 0, &back, &back_size) == TROWEL_OK);
        CHECK(back_size == sizes[k] && (sizes[k] == 0 || memcmp(back, data, sizes[k]) == 0));
        free(ref);
        trowel_mem_free(ctx, back);
        trowel_mem_free(ctx, blob);
    }
    trowel_ctx_free(ctx);
}

/* One decoder for many blobs of changing sizes, a broken one among them:
 * each gives what a decoder of its own gives, and all its memory goes. */
static void test_vsif_lzma_one_decoder_decodes_many_blobs(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    static uint8_t data[200000];
    fill_scene_like(data, sizeof data, 777, 5, "event \"speak\" time 0.5 1.25 ");
    trowel_vsif_lzma_decoder *d;
    REQUIRE(trowel_vsif_lzma_decoder_new(ctx, &d) == TROWEL_OK);
    const size_t sizes[] = {4096, 100, 65537, 4096, 0, sizeof data, 17, 3000, 4097};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const uint8_t *from = data + k * 7;
        size_t size = sizes[k] < sizeof data - k * 7 ? sizes[k] : sizeof data - k * 7;
        uint8_t *blob = NULL, *back = NULL;
        size_t blob_size = 0, back_size = 0;
        REQUIRE(trowel_vsif_lzma_encode(ctx, from, size, &blob, &blob_size) == TROWEL_OK);
        if (k == 3) { /* a broken stream first: the next decode starts clean */
            uint8_t *bad = malloc(blob_size);
            REQUIRE(bad != NULL);
            memcpy(bad, blob, blob_size);
            memset(bad + 17, 0xFF, blob_size - 17);
            CHECK(trowel_vsif_lzma_decoder_run(d, bad, blob_size, 0, &back, &back_size) !=
                  TROWEL_OK);
            CHECK(back == NULL);
            free(bad);
        }
        CHECK(trowel_vsif_lzma_decoder_run(d, blob, blob_size, 0, &back, &back_size) ==
              TROWEL_OK);
        CHECK(back_size == size && (size == 0 || memcmp(back, from, size) == 0));
        trowel_mem_free(ctx, back);
        trowel_mem_free(ctx, blob);
    }
    trowel_vsif_lzma_decoder_free(d);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    trowel_ctx_free(ctx);
}

static void test_vsif_lzma_codec_round_trip_through_public_api(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    const trowel_codec *c = trowel_codec_find("vsif-lzma");
    REQUIRE(c != NULL);
    const char *text = "actor \"Alyx\" { channel \"audio\" { } } actor \"Alyx\" { }";
    trowel_input *in;
    trowel_sink *packed, *plain;
    REQUIRE(trowel_input_open_memory(ctx, text, strlen(text), "t", &in) == TROWEL_OK);
    REQUIRE(trowel_sink_open_memory(ctx, &packed) == TROWEL_OK);
    CHECK(trowel_codec_compress(ctx, c, in, packed) == TROWEL_OK);
    trowel_input_close(in);
    size_t n;
    const uint8_t *d = trowel_sink_data(packed, &n);
    REQUIRE(n > 17);
    CHECK_EQ_U64(get_u32(d + 4), strlen(text));
    REQUIRE(trowel_input_open_memory(ctx, d, n, "t.lz", &in) == TROWEL_OK);
    REQUIRE(trowel_sink_open_memory(ctx, &plain) == TROWEL_OK);
    CHECK(trowel_codec_decompress(ctx, c, in, TROWEL_SIZE_UNKNOWN, plain) == TROWEL_OK);
    const uint8_t *o = trowel_sink_data(plain, &n);
    CHECK(n == strlen(text) && memcmp(o, text, n) == 0);
    trowel_sink_discard(plain);
    /* A container that expects another size is told so. */
    REQUIRE(trowel_sink_open_memory(ctx, &plain) == TROWEL_OK);
    CHECK(trowel_codec_decompress(ctx, c, in, 3, plain) == TROWEL_ERR_CORRUPT);
    trowel_sink_discard(plain);
    trowel_input_close(in);
    trowel_sink_discard(packed);
    trowel_ctx_free(ctx);
}

static void test_vsif_lzma_refuses_hostile_headers(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_mem_limit(ctx, 16u << 20);
    uint8_t *blob, *out;
    size_t n, out_n;
    const char *text = "0123456789abcdef0123456789abcdef0123456789abcdef";
    REQUIRE(trowel_vsif_lzma_encode(ctx, (const uint8_t *)text, strlen(text), &blob, &n) ==
            TROWEL_OK);
    uint8_t *copy = malloc(n);
    REQUIRE(copy != NULL);
    /* Huge declared size: refused before any allocation for it. */
    memcpy(copy, blob, n);
    set_u32(copy + 4, 0xFFFFFFF0u);
    CHECK(trowel_vsif_lzma_decode(ctx, copy, n, 0, &out, &out_n) == TROWEL_ERR_LIMIT);
    CHECK(out == NULL);
    /* Stream size past the bytes present. */
    memcpy(copy, blob, n);
    set_u32(copy + 8, (uint32_t)n);
    CHECK(trowel_vsif_lzma_decode(ctx, copy, n, 0, &out, &out_n) == TROWEL_ERR_TRUNCATED);
    /* Properties byte out of range. */
    memcpy(copy, blob, n);
    copy[12] = 225;
    CHECK(trowel_vsif_lzma_decode(ctx, copy, n, 0, &out, &out_n) == TROWEL_ERR_CORRUPT);
    /* A declared size larger than the stream makes. */
    memcpy(copy, blob, n);
    set_u32(copy + 4, (uint32_t)strlen(text) + 100);
    trowel_status st = trowel_vsif_lzma_decode(ctx, copy, n, 0, &out, &out_n);
    CHECK(st == TROWEL_ERR_TRUNCATED || st == TROWEL_ERR_CORRUPT);
    /* A stream cut short. */
    memcpy(copy, blob, n);
    set_u32(copy + 8, 4);
    st = trowel_vsif_lzma_decode(ctx, copy, 21, 0, &out, &out_n);
    CHECK(st == TROWEL_ERR_TRUNCATED || st == TROWEL_ERR_CORRUPT);
    /* Shorter than the header; wrong id. */
    CHECK(trowel_vsif_lzma_decode(ctx, blob, 10, 0, &out, &out_n) == TROWEL_ERR_TRUNCATED);
    memcpy(copy, blob, n);
    copy[0] = 'X';
    CHECK(trowel_vsif_lzma_decode(ctx, copy, n, 0, &out, &out_n) == TROWEL_ERR_CORRUPT);
    /* A blob declaring a 4 GiB dictionary for a short scene still decodes. */
    memcpy(copy, blob, n);
    set_u32(copy + 13, 0xFFFFFFFFu);
    CHECK(trowel_vsif_lzma_decode(ctx, copy, n, 0, &out, &out_n) == TROWEL_OK);
    CHECK(out_n == strlen(text) && memcmp(out, text, out_n) == 0);
    trowel_mem_free(ctx, out);
    free(copy);
    trowel_mem_free(ctx, blob);
    trowel_ctx_free(ctx);
}

/* --------------------------------------------------------------- reading */

static void test_vsif_ez2_info_and_list(void)
{
    if (!have_file(EZ2_IMAGE))
        return;
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(trowel_input_open_file(ctx, EZ2_IMAGE, &in) == TROWEL_OK);
    const trowel_format *f;
    CHECK(trowel_detect(ctx, in, &f, NULL) == TROWEL_OK && f == trowel_format_find("vsif"));
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    const trowel_props *info = trowel_archive_info(a);
    CHECK_EQ_U64(trowel_props_find(info, "version")->u, 2);
    CHECK_EQ_U64(trowel_props_find(info, "scene_count")->u, 51);
    CHECK_EQ_U64(trowel_props_find(info, "string_count")->u, 505);
    CHECK_EQ_U64(trowel_archive_entry_count(a), 51);
    const trowel_entry *e = trowel_archive_entry(a, 0);
    CHECK_STR(e->name, "0049e643.vcd");
    CHECK_EQ_U64(extra(e, "crc")->u, 0x0049e643);
    CHECK(extra(e, "compressed")->i == 1);
    CHECK_EQ_U64(e->packed_size, 363);
    CHECK_EQ_U64(e->size, 0x2cf);
    CHECK(extra(e, "msecs") != NULL && extra(e, "sounds") != NULL);
    CHECK(extra(e, "lastspeech_msecs") == NULL);
    CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_OK);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

static size_t count_named(trowel_archive *a)
{
    size_t named = 0;
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++)
        named += strncmp(trowel_archive_entry(a, i)->name, "scenes/", 7) == 0;
    return named;
}

static void test_vsif_ez2_every_scene_named_from_its_vcd_folder(void)
{
    if (!have_file(EZ2_IMAGE))
        return;
    const char *const folders[] = {EZ2, EZ2 "/scenes"};
    for (size_t k = 0; k < 2; k++) {
        trowel_ctx *ctx = trowel_ctx_new();
        trowel_input *in;
        trowel_archive *a;
        REQUIRE(trowel_input_open_file(ctx, EZ2_IMAGE, &in) == TROWEL_OK);
        REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
        CHECK(trowel_archive_set_names(a, folders[k]) == TROWEL_OK);
        CHECK_EQ_U64(count_named(a), 51);
        size_t old = SIZE_MAX;
        for (size_t i = 0; i < trowel_archive_entry_count(a); i++)
            if (strcmp(trowel_archive_entry(a, i)->name, "scenes/_old/op.vcd") == 0)
                old = i;
        CHECK(old != SIZE_MAX);
        trowel_archive_close(a);
        trowel_input_close(in);
        trowel_ctx_free(ctx);
    }
}

static void test_vsif_names_from_a_text_list(void)
{
    if (!have_file(EZ2_IMAGE))
        return;
    char list[] = "/tmp/trowel-vsif-names-XXXXXX";
    int fd = mkstemp(list);
    REQUIRE(fd >= 0);
    const char *text = "# comment\r\nscenes\\F02_LOBBY1.vcd\r\n"
                       "  scenes/_old/op  \nnot/a/scene.vcd\n";
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(trowel_input_open_file(ctx, EZ2_IMAGE, &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    CHECK(trowel_archive_set_names(a, list) == TROWEL_OK);
    CHECK_EQ_U64(count_named(a), 2);
    /* CRC-32 of "scenes\f02_lobby1.vcd" (lower case, backslash). */
    size_t i = entry_by_crc(a, 0x8135d827u);
    REQUIRE(i != SIZE_MAX);
    CHECK_STR(trowel_archive_entry(a, i)->name, "scenes/F02_LOBBY1.vcd");
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    unlink(list);
}

typedef struct summary_problems {
    size_t total, sounds;
} summary_problems;

static void count_problem(void *user, const trowel_error *e)
{
    summary_problems *sp = user;
    sp->total++;
    sp->sounds += strstr(e->message, "sounds") != NULL && e->status == TROWEL_ERR_VERIFY;
}

/* Warnings carry TROWEL_OK as their status. */
static void count_problem_any(void *user, const trowel_error *e)
{
    summary_problems *sp = user;
    sp->total++;
    sp->sounds += strstr(e->message, "sounds") != NULL;
}

static void test_vsif_tsp_v3_lists_and_decompiles_every_scene(void)
{
    if (!have_file(TSP_IMAGE))
        return;
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(trowel_input_open_file(ctx, TSP_IMAGE, &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    CHECK_EQ_U64(trowel_props_find(trowel_archive_info(a), "version")->u, 3);
    REQUIRE(trowel_archive_entry_count(a) == 301);
    size_t decompiled = 0, raw = 0;
    for (size_t i = 0; i < 301; i++) {
        const trowel_entry *e = trowel_archive_entry(a, i);
        CHECK(extra(e, "lastspeech_msecs") != NULL);
        raw += extra(e, "compressed")->i == 0;
        trowel_status st;
        size_t len;
        char *t = entry_text(ctx, a, i, &len, &st);
        decompiled += st == TROWEL_OK && t && len > 0 && strstr(t, "// Choreo version") != NULL;
        free(t);
    }
    CHECK_EQ_U64(decompiled, 301);
    CHECK_EQ_U64(raw, 162);
    CHECK(trowel_archive_set_names(a, TROWEL_CORPUS_DIR "/valve/tsp") == TROWEL_OK);
    CHECK_EQ_U64(count_named(a), 18);
    /* The real image's builder left a stale sound (another scene's) in
     * front of 16 narrator summaries: verify warns about each, and passes,
     * since the engine only precaches one sound too many. */
    summary_problems sp = {0, 0}, warned = {0, 0};
    trowel_ctx_set_warning_handler(ctx, count_problem_any, &warned);
    CHECK(trowel_archive_verify(a, count_problem, &sp) == TROWEL_OK);
    CHECK_EQ_U64(sp.total, 0);
    CHECK_EQ_U64(warned.total, 16);
    CHECK_EQ_U64(warned.sounds, 16);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

static void test_vsif_raw_option_gives_the_stored_bvcd(void)
{
    if (!have_file(EZ2_IMAGE))
        return;
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(trowel_input_open_file(ctx, EZ2_IMAGE, &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    const char *bad[] = {"rawish=1"};
    CHECK(trowel_archive_set_options(a, bad, 1) == TROWEL_ERR_USAGE);
    const char *raw[] = {"raw=1"};
    REQUIRE(trowel_archive_set_options(a, raw, 1) == TROWEL_OK);
    trowel_status st;
    size_t len;
    char *b = entry_text(ctx, a, 0, &len, &st);
    CHECK(st == TROWEL_OK && len == trowel_archive_entry(a, 0)->size);
    CHECK(b && memcmp(b, "bvcd\x04", 5) == 0);
    free(b);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

/* ------------------------------------------------------------- building */

/* The rebuilt image against the real one, scene by scene by CRC. */
static void compare_images(trowel_ctx *ctx, trowel_archive *real, trowel_archive *ours,
                           size_t *same_text)
{
    *same_text = 0;
    for (size_t i = 0; i < trowel_archive_entry_count(real); i++) {
        const trowel_entry *e = trowel_archive_entry(real, i);
        size_t j = entry_by_crc(ours, extra(e, "crc")->u);
        CHECK(j == i); /* both sorted by CRC */
        if (j == SIZE_MAX)
            continue;
        const trowel_entry *f = trowel_archive_entry(ours, j);
        CHECK_EQ_U64(extra(e, "msecs")->u, extra(f, "msecs")->u);
        const trowel_prop *s1 = extra(e, "sounds"), *s2 = extra(f, "sounds");
        CHECK_EQ_U64(s1->list_len, s2->list_len);
        for (size_t k = 0; k < s1->list_len && k < s2->list_len; k++)
            CHECK_STR(s1->list[k], s2->list[k]);
        trowel_status st1, st2;
        char *t1 = entry_text(ctx, real, i, NULL, &st1);
        char *t2 = entry_text(ctx, ours, j, NULL, &st2);
        CHECK(st1 == TROWEL_OK && st2 == TROWEL_OK);
        if (t1 && t2 && strcmp(t1, t2) == 0)
            ++*same_text;
        else
            fprintf(stderr, "  decompiled text differs for %s\n", e->name);
        free(t1);
        free(t2);
    }
}

static void test_vsif_ez2_rebuild_matches_the_real_image(void)
{
    if (!have_file(EZ2_IMAGE))
        return;
    const source_set *set = ez2_sources();
    trowel_ctx *ctx = trowel_ctx_new();
    bytes img = {0};
    /* The folder also holds scenes.image and .txt files: ignored. */
    REQUIRE(vsif_build(ctx, set->items, set->count, NULL, 0, &img) == TROWEL_OK);
    trowel_input *in1, *in2;
    trowel_status st;
    trowel_archive *real, *ours;
    REQUIRE(trowel_input_open_file(ctx, EZ2_IMAGE, &in1) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in1, NULL, &real) == TROWEL_OK);
    ours = open_mem(ctx, img.data, img.size, &in2, &st);
    REQUIRE(st == TROWEL_OK);
    CHECK_EQ_U64(trowel_props_find(trowel_archive_info(ours), "version")->u, 2);
    REQUIRE(trowel_archive_entry_count(ours) == 51);
    size_t same = 0;
    compare_images(ctx, real, ours, &same);
    CHECK_EQ_U64(same, 51);
    CHECK(trowel_archive_verify(ours, NULL, NULL) == TROWEL_OK);
    /* Every scene named: the builder's names hash to the stored CRCs. */
    CHECK(trowel_archive_set_names(ours, EZ2) == TROWEL_OK);
    CHECK_EQ_U64(count_named(ours), 51);
    trowel_archive_close(ours);
    trowel_archive_close(real);
    trowel_input_close(in2);
    trowel_input_close(in1);
    free(img.data);
    trowel_ctx_free(ctx);
}

/* Valve's pool order, summaries and BVCD bytes are reproduced exactly: only
 * the LZMA streams (Valve's encoder vs liblzma) and so the data offsets
 * differ. */
static void test_vsif_ez2_rebuild_is_byte_exact_but_for_lzma(void)
{
    if (!have_file(EZ2_IMAGE))
        return;
    const source_set *set = ez2_sources();
    trowel_ctx *ctx = trowel_ctx_new();
    bytes ours = {0}, real = read_file(EZ2_IMAGE);
    REQUIRE(real.size > 20);
    REQUIRE(vsif_build(ctx, set->items, set->count, NULL, 0, &ours) == TROWEL_OK);
    uint32_t eo = get_u32(real.data + 16);
    REQUIRE(ours.size > eo && get_u32(ours.data + 16) == eo);
    CHECK(memcmp(real.data, ours.data, eo) == 0); /* header, string table, pool */
    uint32_t first_summary = get_u32(real.data + eo + 12), data_start = get_u32(real.data + eo + 4);
    CHECK(memcmp(real.data + first_summary, ours.data + first_summary,
                 data_start - first_summary) == 0); /* every summary */
    trowel_input *i1, *i2;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, real.data, real.size, &i1, &st);
    REQUIRE(st == TROWEL_OK);
    trowel_archive *b = open_mem(ctx, ours.data, ours.size, &i2, &st);
    REQUIRE(st == TROWEL_OK);
    const char *raw[] = {"raw=1"};
    CHECK(trowel_archive_set_options(a, raw, 1) == TROWEL_OK);
    CHECK(trowel_archive_set_options(b, raw, 1) == TROWEL_OK);
    size_t same = 0;
    size_t n = trowel_archive_entry_count(a);
    CHECK_EQ_U64(trowel_archive_entry_count(b), n);
    for (size_t i = 0; i < n && i < trowel_archive_entry_count(b); i++) {
        size_t n1, n2;
        trowel_status s1, s2;
        char *x = entry_text(ctx, a, i, &n1, &s1), *y = entry_text(ctx, b, i, &n2, &s2);
        same += s1 == TROWEL_OK && s2 == TROWEL_OK && n1 == n2 && memcmp(x, y, n1) == 0;
        free(x);
        free(y);
    }
    CHECK_EQ_U64(same, 51);
    trowel_archive_close(a);
    trowel_archive_close(b);
    trowel_input_close(i1);
    trowel_input_close(i2);
    free(real.data);
    free(ours.data);
    trowel_ctx_free(ctx);
}

static void test_vsif_written_images_reread_identically(void)
{
    if (!have_file(EZ2_IMAGE))
        return;
    const source_set *set = ez2_sources();
    trowel_ctx *ctx = trowel_ctx_new();
    const char *v3[] = {"version=3", "compress=lzma"};
    bytes a = {0}, b = {0}, c = {0};
    REQUIRE(vsif_build(ctx, set->items, set->count, v3, 2, &a) == TROWEL_OK);
    /* Merging with no sources keeps every scene; doing it twice is a fixed
     * point, byte for byte. */
    char path_a[] = "/tmp/trowel-vsif-a-XXXXXX", path_b[] = "/tmp/trowel-vsif-b-XXXXXX";
    int fa = mkstemp(path_a), fb = mkstemp(path_b);
    REQUIRE(fa >= 0 && fb >= 0);
    close(fa);
    close(fb);
    write_file(path_a, a.data, a.size);
    char base_a[64], base_b[64];
    snprintf(base_a, sizeof base_a, "base=%s", path_a);
    snprintf(base_b, sizeof base_b, "base=%s", path_b);
    const char *oa[] = {base_a}, *ob[] = {base_b};
    REQUIRE(vsif_build(ctx, NULL, 0, oa, 1, &b) == TROWEL_OK);
    write_file(path_b, b.data, b.size);
    REQUIRE(vsif_build(ctx, NULL, 0, ob, 1, &c) == TROWEL_OK);
    CHECK(b.size == c.size && memcmp(b.data, c.data, b.size) == 0);
    trowel_input *ia, *ib;
    trowel_status st;
    trowel_archive *A = open_mem(ctx, a.data, a.size, &ia, &st);
    REQUIRE(st == TROWEL_OK);
    trowel_archive *B = open_mem(ctx, b.data, b.size, &ib, &st);
    REQUIRE(st == TROWEL_OK);
    CHECK_EQ_U64(trowel_props_find(trowel_archive_info(B), "version")->u, 3);
    size_t same = 0;
    compare_images(ctx, A, B, &same);
    CHECK_EQ_U64(same, 51);
    for (size_t i = 0; i < trowel_archive_entry_count(A); i++) {
        const trowel_entry *e = trowel_archive_entry(A, i), *f = trowel_archive_entry(B, i);
        CHECK(extra(e, "compressed")->i == 1);
        CHECK_EQ_U64(extra(e, "lastspeech_msecs")->u, extra(f, "lastspeech_msecs")->u);
        CHECK_EQ_U64(e->size, f->size);
    }
    CHECK(trowel_archive_verify(A, NULL, NULL) == TROWEL_OK);
    CHECK(trowel_archive_verify(B, NULL, NULL) == TROWEL_OK);
    trowel_archive_close(A);
    trowel_archive_close(B);
    trowel_input_close(ia);
    trowel_input_close(ib);
    unlink(path_a);
    unlink(path_b);
    free(a.data);
    free(b.data);
    free(c.data);
    trowel_ctx_free(ctx);
}

static void test_vsif_merge_replaces_and_adds_scenes(void)
{
    if (!have_file(EZ2_IMAGE))
        return;
    char dir[] = "/tmp/trowel-vsif-merge-XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    char scenes[128], changed[160], added[160];
    snprintf(scenes, sizeof scenes, "%s/scenes", dir);
    mkdir(scenes, 0700);
    snprintf(changed, sizeof changed, "%s/office_wake.vcd", scenes);
    snprintf(added, sizeof added, "%s/brand_new.vcd", scenes);
    const char *vcd = "// Choreo version 1\r\nactor \"bad_cop\"\r\n{\r\n  channel \"audio\"\r\n"
                      "  {\r\n    event speak \"hello\"\r\n    {\r\n      time 0.5 2.25\r\n"
                      "      param \"bad_cop.hello\"\r\n    }\r\n  }\r\n}\r\n";
    write_file(changed, vcd, strlen(vcd));
    write_file(added, vcd, strlen(vcd));
    trowel_source src[2] = {{"scenes/office_wake.vcd", changed}, {"scenes/brand_new.vcd", added}};
    trowel_ctx *ctx = trowel_ctx_new();
    const char *opts[] = {"base=" EZ2_IMAGE};
    bytes img = {0};
    REQUIRE(vsif_build(ctx, src, 2, opts, 1, &img) == TROWEL_OK);
    trowel_input *in1, *in2;
    trowel_status st;
    trowel_archive *real, *ours;
    REQUIRE(trowel_input_open_file(ctx, EZ2_IMAGE, &in1) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in1, NULL, &real) == TROWEL_OK);
    ours = open_mem(ctx, img.data, img.size, &in2, &st);
    REQUIRE(st == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry_count(ours), 52);
    uint32_t office = 0, fresh = 0;
    {
        const char *n1 = "scenes\\office_wake.vcd", *n2 = "scenes\\brand_new.vcd";
        office = trowel_crc32(0, n1, strlen(n1));
        fresh = trowel_crc32(0, n2, strlen(n2));
    }
    size_t untouched = 0;
    for (size_t i = 0; i < trowel_archive_entry_count(real); i++) {
        const trowel_entry *e = trowel_archive_entry(real, i);
        size_t j = entry_by_crc(ours, extra(e, "crc")->u);
        REQUIRE(j != SIZE_MAX);
        const trowel_entry *f = trowel_archive_entry(ours, j);
        if (extra(e, "crc")->u == office) {
            CHECK_EQ_U64(extra(f, "msecs")->u, 2250);
            CHECK_STR(extra(f, "sounds")->list[0], "bad_cop.hello");
            continue;
        }
        trowel_status s1, s2;
        char *t1 = entry_text(ctx, real, i, NULL, &s1), *t2 = entry_text(ctx, ours, j, NULL, &s2);
        untouched += t1 && t2 && strcmp(t1, t2) == 0 &&
                     extra(e, "msecs")->u == extra(f, "msecs")->u;
        free(t1);
        free(t2);
    }
    CHECK_EQ_U64(untouched, 50);
    size_t k = entry_by_crc(ours, fresh);
    CHECK(k != SIZE_MAX && extra(trowel_archive_entry(ours, k), "msecs")->u == 2250);
    CHECK(trowel_archive_verify(ours, NULL, NULL) == TROWEL_OK);
    trowel_archive_close(ours);
    trowel_archive_close(real);
    trowel_input_close(in2);
    trowel_input_close(in1);
    free(img.data);
    unlink(changed);
    unlink(added);
    rmdir(scenes);
    rmdir(dir);
    trowel_ctx_free(ctx);
}

static void test_vsif_create_options_are_checked(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    bytes img = {0};
    const char *bad1[] = {"version=4"}, *bad2[] = {"compress=zip"}, *bad3[] = {"level=9"};
    trowel_source none[1] = {{"readme.txt", "/dev/null"}};
    CHECK(vsif_build(ctx, none, 1, bad1, 1, &img) == TROWEL_ERR_USAGE);
    free(img.data);
    CHECK(vsif_build(ctx, none, 1, bad2, 1, &img) == TROWEL_ERR_USAGE);
    free(img.data);
    CHECK(vsif_build(ctx, none, 1, bad3, 1, &img) == TROWEL_ERR_USAGE);
    free(img.data);
    /* Only non-.vcd sources: nothing to build. */
    CHECK(vsif_build(ctx, none, 1, NULL, 0, &img) == TROWEL_ERR_USAGE);
    free(img.data);
    trowel_ctx_free(ctx);
}

/* -------------------------------------------------------------- hostile */

static void note_problem(void *user, const trowel_error *e)
{
    unsigned *seen = user;
    *seen |= 1u << e->status;
}

/* Opens (and verifies) a damaged copy; returns the statuses it failed with
 * (bit 1 << status): open's, or those of the problems verify reports (a
 * damaged image opens, lists what it can, and verify reports what it
 * lacks). 0: no failure. */
static unsigned damaged_statuses(const bytes *b)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_ctx_set_mem_limit(ctx, 8u << 20);
    trowel_input *in = NULL;
    trowel_status st;
    unsigned seen = 0;
    trowel_archive *a = open_mem(ctx, b->data, b->size, &in, &st);
    if (st == TROWEL_OK) {
        st = trowel_archive_verify(a, note_problem, &seen);
        /* damaged at open means verify fails */
        CHECK(!trowel_archive_damaged(a) || st != TROWEL_OK);
        CHECK((st == TROWEL_OK) == (seen == 0));
    } else {
        seen = 1u << st;
    }
    if (st != TROWEL_OK)
        CHECK(trowel_ctx_last_error(ctx)->message[0] != '\0');
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return seen;
}

/* The copy fails, among other things, with status want. */
static bool fails_with(const bytes *b, trowel_status want)
{
    return (damaged_statuses(b) & (1u << want)) != 0;
}

static void test_vsif_hostile_images_fail_cleanly(void)
{
    if (!have_file(EZ2_IMAGE))
        return;
    bytes real = read_file(EZ2_IMAGE);
    REQUIRE(real.size > 0);
    bytes b = {malloc(real.size), real.size};
    REQUIRE(b.data != NULL);
    uint32_t eo = get_u32(real.data + 16);
#define RESET() memcpy(b.data, real.data, real.size), b.size = real.size
    RESET();
    CHECK(damaged_statuses(&b) == 0);
    /* Entry data offset past EOF. */
    RESET();
    set_u32(b.data + eo + 4, (uint32_t)real.size + 10);
    CHECK(fails_with(&b, TROWEL_ERR_TRUNCATED));
    /* Summary offset past EOF. */
    RESET();
    set_u32(b.data + eo + 12, 0xFFFFFF00u);
    CHECK(fails_with(&b, TROWEL_ERR_TRUNCATED));
    /* Sound string index out of range. */
    RESET();
    uint32_t so = get_u32(real.data + eo + 12);
    REQUIRE(get_u32(real.data + so + 4) > 0);
    set_u32(b.data + so + 8, 505);
    CHECK(fails_with(&b, TROWEL_ERR_CORRUPT));
    /* Unsorted CRCs: swap two entries. */
    RESET();
    memcpy(b.data + eo, real.data + eo + 16, 16);
    memcpy(b.data + eo + 16, real.data + eo, 16);
    CHECK(fails_with(&b, TROWEL_ERR_VERIFY));
    /* Huge LZMA actual size. */
    RESET();
    uint32_t d0 = get_u32(real.data + eo + 4);
    set_u32(b.data + d0 + 4, 0x7FFFFFFFu);
    CHECK(fails_with(&b, TROWEL_ERR_VERIFY) || fails_with(&b, TROWEL_ERR_LIMIT));
    /* LZMA stream size disagreeing with the entry. */
    RESET();
    set_u32(b.data + d0 + 8, get_u32(real.data + d0 + 8) + 1000);
    CHECK(fails_with(&b, TROWEL_ERR_TRUNCATED));
    /* Truncated pool: the file ends inside it. */
    RESET();
    b.size = get_u32(real.data + 20) + 10;
    CHECK(fails_with(&b, TROWEL_ERR_TRUNCATED));
    /* String offset past EOF; string count past the file; bad version. */
    RESET();
    set_u32(b.data + 24, (uint32_t)real.size);
    CHECK(fails_with(&b, TROWEL_ERR_TRUNCATED));
    RESET();
    set_u32(b.data + 12, 30000);
    CHECK(fails_with(&b, TROWEL_ERR_TRUNCATED));
    RESET();
    set_u32(b.data + 8, 0x10000000u);
    CHECK(fails_with(&b, TROWEL_ERR_TRUNCATED));
    RESET();
    set_u32(b.data + 4, 7);
    CHECK(fails_with(&b, TROWEL_ERR_UNSUPPORTED));
    /* A summary whose msecs lie about the scene. */
    RESET();
    set_u32(b.data + so, get_u32(real.data + so) + 1);
    CHECK(fails_with(&b, TROWEL_ERR_VERIFY));
    /* Every cut of the file fails cleanly (or lists what it can). */
    for (size_t cut = 0; cut < real.size; cut += 97) {
        RESET();
        b.size = cut;
        CHECK(damaged_statuses(&b) != 0);
    }
#undef RESET
    free(b.data);
    free(real.data);
}

TEST_MAIN(TEST(test_vsif_lzma_blobs_decode_with_liblzma_alone),
          TEST(test_vsif_lzma_one_decoder_decodes_many_blobs),
          TEST(test_vsif_lzma_codec_round_trip_through_public_api),
          TEST(test_vsif_lzma_refuses_hostile_headers), TEST(test_vsif_ez2_info_and_list),
          TEST(test_vsif_ez2_every_scene_named_from_its_vcd_folder),
          TEST(test_vsif_names_from_a_text_list),
          TEST(test_vsif_tsp_v3_lists_and_decompiles_every_scene),
          TEST(test_vsif_raw_option_gives_the_stored_bvcd),
          TEST(test_vsif_ez2_rebuild_matches_the_real_image),
          TEST(test_vsif_ez2_rebuild_is_byte_exact_but_for_lzma),
          TEST(test_vsif_written_images_reread_identically),
          TEST(test_vsif_merge_replaces_and_adds_scenes),
          TEST(test_vsif_create_options_are_checked), TEST(test_vsif_hostile_images_fail_cleanly))
