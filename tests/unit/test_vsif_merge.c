/*
 * Merging into a scenes.image (create -O base=) keeps what it does not
 * touch: the base's string pool stays in its order (every old string keeps
 * its index, new ones are appended), and every scene no source replaces is
 * copied as stored -- its data bytes (compressed or not) and its summary --
 * byte for byte. Checked on a generated image the size of HL2's (1,800
 * scenes), on the ez2 (v2) and tsp (v3) corpus images; and create says,
 * through the note handler, what each source did (warning when it matches
 * no scene of the base).
 */
#include "files.h"
#include "test.h"
#include "vsif_build.h"
#include "trowel/trowel.h"

#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#define EZ2_IMAGE TROWEL_CORPUS_DIR "/valve/ez2/scenes/scenes.image"
#define TSP_IMAGE TROWEL_CORPUS_DIR "/valve/tsp/scenes/scenes.image"
#define BIG_SCENES 1800

/* ---------------------------------------------------------------- helpers */

/* What an image holds, read straight from its bytes. */
typedef struct image_view {
    const uint8_t *d;
    size_t size;
    uint32_t version, scenes, strings, entry_off;
} image_view;

static bool view(const bytes *b, image_view *v)
{
    if (b->size < 20 || memcmp(b->data, "VSIF", 4) != 0)
        return false;
    v->d = b->data;
    v->size = b->size;
    v->version = get_u32(b->data + 4);
    v->scenes = get_u32(b->data + 8);
    v->strings = get_u32(b->data + 12);
    v->entry_off = get_u32(b->data + 16);
    return (uint64_t)v->entry_off + 16ull * v->scenes <= b->size;
}

static const char *pool_string(const image_view *v, uint32_t i)
{
    return (const char *)v->d + get_u32(v->d + 20 + 4 * i);
}

/* Entry index of crc, or UINT32_MAX. */
static uint32_t find_crc(const image_view *v, uint32_t crc)
{
    for (uint32_t i = 0; i < v->scenes; i++)
        if (get_u32(v->d + v->entry_off + 16 * i) == crc)
            return i;
    return UINT32_MAX;
}

static size_t summary_size(const image_view *v, uint32_t i)
{
    uint32_t at = get_u32(v->d + v->entry_off + 16 * i + 12);
    uint32_t fixed = v->version == 3 ? 12 : 8;
    return fixed + 4 * (size_t)get_u32(v->d + at + fixed - 4);
}

/* Entry i of a and entry j of b store the same data and summary bytes. */
static bool same_stored(const image_view *a, uint32_t i, const image_view *b, uint32_t j)
{
    const uint8_t *ea = a->d + a->entry_off + 16 * i, *eb = b->d + b->entry_off + 16 * j;
    uint32_t len = get_u32(ea + 8);
    if (len != get_u32(eb + 8) || memcmp(a->d + get_u32(ea + 4), b->d + get_u32(eb + 4), len))
        return false;
    size_t n = summary_size(a, i);
    return a->version == b->version && n == summary_size(b, j) &&
           memcmp(a->d + get_u32(ea + 12), b->d + get_u32(eb + 12), n) == 0;
}

typedef struct told {
    size_t notes, warnings;
    char note[4][800], warning[4][800];
} told;

static void on_note(void *user, const trowel_error *e)
{
    told *t = user;
    if (t->notes < 4)
        snprintf(t->note[t->notes], sizeof t->note[0], "%s: %s", e->entry, e->message);
    t->notes++;
}

static void on_warning(void *user, const trowel_error *e)
{
    told *t = user;
    if (t->warnings < 4)
        snprintf(t->warning[t->warnings], sizeof t->warning[0], "%s: %s", e->entry, e->message);
    t->warnings++;
}

static trowel_status verify_bytes(const bytes *b)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    trowel_status st = trowel_input_open_memory(ctx, b->data, b->size, "x.image", &in);
    if (st == TROWEL_OK)
        st = trowel_archive_open(ctx, in, trowel_format_find("vsif"), &a);
    if (st == TROWEL_OK)
        st = trowel_archive_verify(a, NULL, NULL);
    if (st != TROWEL_OK)
        fprintf(stderr, "  verify: %s: %s\n", trowel_ctx_last_error(ctx)->entry,
                trowel_ctx_last_error(ctx)->message);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return st;
}

static uint32_t name_crc(const char *name)
{
    return trowel_crc32(0, name, strlen(name));
}

/* One generated scene: k decides its actors, lines and length, so that
 * sizes vary (some scenes compress, some are kept raw) and many strings
 * are shared between scenes, as in a real game. */
static void scene_text(char *buf, size_t cap, unsigned k, const char *extra_sound)
{
    int n = snprintf(buf, cap, "// Choreo version 1\n");
    unsigned actors = 1 + k % 3;
    for (unsigned a = 0; a < actors; a++) {
        n += snprintf(buf + n, cap - (size_t)n,
                      "actor \"npc_%u\"\n{\n  channel \"audio\"\n  {\n", (k + a) % 40);
        unsigned lines = 1 + (k / 3 + a) % 4;
        for (unsigned l = 0; l < lines; l++)
            n += snprintf(buf + n, cap - (size_t)n,
                          "    event speak \"line%u\"\n    {\n      time %u.%02u %u.%02u\n"
                          "      param \"npc_%u.line_%u_%u\"\n      cctype \"cc_master\"\n"
                          "      cctoken \"\"\n    }\n",
                          l, 2 * l, k % 100, 2 * l + 1, (k * 7) % 100, (k + a) % 40, k, l);
        n += snprintf(buf + n, cap - (size_t)n,
                      "  }\n  channel \"look\"\n  {\n    event lookat \"look\"\n    {\n"
                      "      time 0 %u.5\n      param \"!player\"\n    }\n  }\n}\n",
                      1 + k % 9);
    }
    if (extra_sound)
        n += snprintf(buf + n, cap - (size_t)n,
                      "actor \"editor\"\n{\n  channel \"audio\"\n  {\n    event speak \"new\"\n"
                      "    {\n      time 1 30\n      param \"%s\"\n      cctype \"cc_master\"\n"
                      "      cctoken \"\"\n    }\n  }\n}\n",
                      extra_sound);
}

/* -------------------------------------------------- HL2-sized, generated */

typedef struct big_base {
    char dir[64];
    char (*paths)[96];
    char (*names)[64];
    trowel_source *src;
    bytes image;
    char image_path[96];
} big_base;

static bool make_big_base(trowel_ctx *ctx, big_base *bb)
{
    snprintf(bb->dir, sizeof bb->dir, "/tmp/trowel-merge-XXXXXX");
    if (!mkdtemp(bb->dir))
        return false;
    bb->paths = calloc(BIG_SCENES, sizeof *bb->paths);
    bb->names = calloc(BIG_SCENES, sizeof *bb->names);
    bb->src = calloc(BIG_SCENES, sizeof *bb->src);
    if (!bb->paths || !bb->names || !bb->src)
        return false;
    static char text[16384];
    for (unsigned k = 0; k < BIG_SCENES; k++) {
        snprintf(bb->names[k], sizeof bb->names[k], "scenes/npc/scene_%04u.vcd", k);
        snprintf(bb->paths[k], sizeof bb->paths[k], "%s/s%04u.vcd", bb->dir, k);
        scene_text(text, sizeof text, k, NULL);
        write_file(bb->paths[k], text, strlen(text));
        bb->src[k].name = bb->names[k];
        bb->src[k].path = bb->paths[k];
    }
    if (vsif_build(ctx, bb->src, BIG_SCENES, NULL, 0, &bb->image) != TROWEL_OK)
        return false;
    snprintf(bb->image_path, sizeof bb->image_path, "%s/base.image", bb->dir);
    FILE *f = fopen(bb->image_path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(bb->image.data, 1, bb->image.size, f) == bb->image.size;
    return fclose(f) == 0 && ok;
}

static void free_big_base(big_base *bb)
{
    for (unsigned k = 0; bb->paths && k < BIG_SCENES; k++)
        unlink(bb->paths[k]);
    unlink(bb->image_path);
    rmdir(bb->dir);
    free(bb->paths);
    free(bb->names);
    free(bb->src);
    free(bb->image.data);
}

static void test_merge_of_one_scene_into_an_hl2_sized_image_keeps_the_rest(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    static big_base bb;
    memset(&bb, 0, sizeof bb);
    REQUIRE(make_big_base(ctx, &bb));
    image_view old;
    REQUIRE(view(&bb.image, &old));
    CHECK_EQ_U64(old.scenes, BIG_SCENES);
    size_t compressed = 0;
    for (uint32_t i = 0; i < old.scenes; i++)
        compressed += memcmp(old.d + get_u32(old.d + old.entry_off + 16 * i + 4), "LZMA", 4) == 0;
    CHECK(compressed > 100 && compressed < BIG_SCENES); /* both kinds of scene */

    /* The edited scene: same name, one new sound string. */
    static char text[16384];
    char edited[128];
    snprintf(edited, sizeof edited, "%s/edited.vcd", bb.dir);
    scene_text(text, sizeof text, 1234, "editor.brand_new_line");
    write_file(edited, text, strlen(text));
    trowel_source src = {"scenes/npc/scene_1234.vcd", edited};
    char base_opt[128];
    snprintf(base_opt, sizeof base_opt, "base=%s", bb.image_path);
    const char *opts[] = {base_opt};
    told t;
    memset(&t, 0, sizeof t);
    trowel_ctx_set_note_handler(ctx, on_note, &t);
    trowel_ctx_set_warning_handler(ctx, on_warning, &t);
    bytes merged = {NULL, 0};
    REQUIRE(vsif_build(ctx, &src, 1, opts, 1, &merged) == TROWEL_OK);
    CHECK_EQ_U64(t.warnings, 0);
    CHECK_EQ_U64(t.notes, 1);
    char expect[128];
    snprintf(expect, sizeof expect, "scenes/npc/scene_1234.vcd: replaces scene %08lx of the base image",
             (unsigned long)name_crc("scenes\\npc\\scene_1234.vcd"));
    CHECK_STR(t.note[0], expect);

    image_view now;
    REQUIRE(view(&merged, &now));
    CHECK_EQ_U64(now.version, 2);
    CHECK_EQ_U64(now.scenes, BIG_SCENES);
    /* The pool: every old string at its old index; only the new sound and
     * the new actor's strings ("editor", "new") appended. */
    REQUIRE(now.strings >= old.strings);
    size_t same_index = 0;
    for (uint32_t i = 0; i < old.strings; i++)
        same_index += strcmp(pool_string(&old, i), pool_string(&now, i)) == 0;
    CHECK_EQ_U64(same_index, old.strings);
    CHECK_EQ_U64(now.strings - old.strings, 3);
    CHECK_STR(pool_string(&now, old.strings), "editor.brand_new_line");
    /* Every untouched scene: the same stored bytes and summary. */
    uint32_t edited_crc = name_crc("scenes\\npc\\scene_1234.vcd");
    size_t untouched = 0;
    for (uint32_t i = 0; i < old.scenes; i++) {
        uint32_t crc = get_u32(old.d + old.entry_off + 16 * i);
        uint32_t j = find_crc(&now, crc);
        REQUIRE(j != UINT32_MAX);
        if (crc != edited_crc)
            untouched += same_stored(&old, i, &now, j);
        else
            CHECK(!same_stored(&old, i, &now, j));
    }
    CHECK_EQ_U64(untouched, BIG_SCENES - 1);
    CHECK(verify_bytes(&merged) == TROWEL_OK);
    /* Merging the same edit again into the merged image changes nothing. */
    FILE *f = fopen(bb.image_path, "wb");
    REQUIRE(f != NULL);
    CHECK(fwrite(merged.data, 1, merged.size, f) == merged.size);
    fclose(f);
    bytes again = {NULL, 0};
    REQUIRE(vsif_build(ctx, &src, 1, opts, 1, &again) == TROWEL_OK);
    CHECK(again.size == merged.size && memcmp(again.data, merged.data, merged.size) == 0);
    free(again.data);
    free(merged.data);
    unlink(edited);
    free_big_base(&bb);
    trowel_ctx_free(ctx);
}

/* --------------------------------------------------------------- corpus */

/* Merges one edited scene (and, when added is set, one new one) into a
 * real image, and checks that everything else is kept as stored. */
static void merge_into_real(const char *image, const char *edited_name, const char *added_name,
                            uint32_t expect_version)
{
    char dir[] = "/tmp/trowel-merge-real-XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    char p1[96], p2[96];
    snprintf(p1, sizeof p1, "%s/a.vcd", dir);
    snprintf(p2, sizeof p2, "%s/b.vcd", dir);
    static char text[16384];
    scene_text(text, sizeof text, 7, "merge.test_line");
    write_file(p1, text, strlen(text));
    write_file(p2, text, strlen(text));
    trowel_source src[2] = {{edited_name, p1}, {added_name, p2}};
    trowel_ctx *ctx = trowel_ctx_new();
    told t;
    memset(&t, 0, sizeof t);
    trowel_ctx_set_note_handler(ctx, on_note, &t);
    trowel_ctx_set_warning_handler(ctx, on_warning, &t);
    char base_opt[256];
    snprintf(base_opt, sizeof base_opt, "base=%s", image);
    const char *opts[] = {base_opt};
    bytes base = read_file(image), merged = {NULL, 0};
    image_view old, now;
    REQUIRE(view(&base, &old));
    REQUIRE(vsif_build(ctx, src, added_name ? 2 : 1, opts, 1, &merged) == TROWEL_OK);
    REQUIRE(view(&merged, &now));
    CHECK_EQ_U64(now.version, expect_version);
    CHECK_EQ_U64(now.scenes, old.scenes + (added_name ? 1 : 0));
    size_t same_index = 0;
    for (uint32_t i = 0; i < old.strings; i++)
        same_index += strcmp(pool_string(&old, i), pool_string(&now, i)) == 0;
    CHECK_EQ_U64(same_index, old.strings);
    CHECK(memcmp(old.d, now.d, 8) == 0); /* id and version */
    char edited_hash[256];
    snprintf(edited_hash, sizeof edited_hash, "%s", edited_name);
    for (char *c = edited_hash; *c; c++)
        *c = *c == '/' ? '\\' : *c;
    uint32_t edited_crc = name_crc(edited_hash);
    REQUIRE(find_crc(&old, edited_crc) != UINT32_MAX);
    size_t untouched = 0;
    for (uint32_t i = 0; i < old.scenes; i++) {
        uint32_t crc = get_u32(old.d + old.entry_off + 16 * i);
        uint32_t j = find_crc(&now, crc);
        REQUIRE(j != UINT32_MAX);
        if (crc != edited_crc)
            untouched += same_stored(&old, i, &now, j);
    }
    CHECK_EQ_U64(untouched, old.scenes - 1);
    CHECK_EQ_U64(t.notes, added_name ? 2 : 1);
    CHECK_EQ_U64(t.warnings, added_name ? 1 : 0);
    if (added_name) {
        char expect[512];
        snprintf(expect, sizeof expect, "%s: no scene of the base image %s has this name: added",
                 added_name, image);
        CHECK_STR(t.warning[0], expect);
    }
    /* The merged image verifies as the base did (tsp's 16 stale sound
     * lists are warnings, kept as stored). */
    trowel_ctx_set_warning_handler(ctx, NULL, NULL);
    CHECK(verify_bytes(&merged) == TROWEL_OK);
    free(merged.data);
    free(base.data);
    unlink(p1);
    unlink(p2);
    rmdir(dir);
    trowel_ctx_free(ctx);
}

static void test_merge_into_ez2_keeps_valves_stored_scenes_and_pool(void)
{
    if (have_file(EZ2_IMAGE))
        merge_into_real(EZ2_IMAGE, "scenes/office_wake.vcd", "scenes/brand_new.vcd", 2);
}

/* A v3 image: the untouched scenes keep their lastspeech_msecs (and their
 * stale sound lists) as stored. */
static void test_merge_into_tsp_keeps_v3_summaries_as_stored(void)
{
    if (have_file(TSP_IMAGE))
        merge_into_real(TSP_IMAGE, "scenes/narrator/con18.vcd", NULL, 3);
}

/* A v2 base written as v3: the data bytes are still copied; each summary
 * keeps its msecs and sounds and gains lastspeech_msecs from its scene
 * (which verify then accepts). */
static void test_merge_of_a_v2_base_into_v3_adds_only_lastspeech(void)
{
    if (!have_file(EZ2_IMAGE))
        return;
    trowel_ctx *ctx = trowel_ctx_new();
    const char *opts[] = {"base=" EZ2_IMAGE, "version=3"};
    bytes base = read_file(EZ2_IMAGE), merged = {NULL, 0};
    image_view old, now;
    REQUIRE(view(&base, &old));
    REQUIRE(vsif_build(ctx, NULL, 0, opts, 2, &merged) == TROWEL_OK);
    REQUIRE(view(&merged, &now));
    CHECK_EQ_U64(now.version, 3);
    REQUIRE(now.scenes == old.scenes);
    CHECK_EQ_U64(now.strings, old.strings);
    size_t same = 0, with_speech = 0;
    for (uint32_t i = 0; i < old.scenes; i++) {
        const uint8_t *eo = old.d + old.entry_off + 16 * i, *en = now.d + now.entry_off + 16 * i;
        uint32_t len = get_u32(eo + 8);
        const uint8_t *so = old.d + get_u32(eo + 12), *sn = now.d + get_u32(en + 12);
        uint32_t sounds = get_u32(so + 4);
        same += get_u32(en) == get_u32(eo) && get_u32(en + 8) == len &&
                memcmp(old.d + get_u32(eo + 4), now.d + get_u32(en + 4), len) == 0 &&
                get_u32(sn) == get_u32(so) && get_u32(sn + 8) == sounds &&
                memcmp(sn + 12, so + 8, 4 * (size_t)sounds) == 0;
        with_speech += get_u32(sn + 4) != 0;
    }
    CHECK_EQ_U64(same, old.scenes);
    CHECK(with_speech > 0);
    CHECK(verify_bytes(&merged) == TROWEL_OK);
    free(merged.data);
    free(base.data);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_merge_of_one_scene_into_an_hl2_sized_image_keeps_the_rest),
          TEST(test_merge_into_ez2_keeps_valves_stored_scenes_and_pool),
          TEST(test_merge_into_tsp_keeps_v3_summaries_as_stored),
          TEST(test_merge_of_a_v2_base_into_v3_adds_only_lastspeech))
