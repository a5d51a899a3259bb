/*
 * scenes.image (VSIF): every choreography scene of a Source-engine game in
 * one file, versions 2 (Source 2007/2013, HL2, TF2) and 3 (Alien Swarm,
 * Portal 2, CS:GO).
 *
 * Layout (all little-endian, offsets absolute):
 *   header   "VSIF", u32 version, u32 scene count, u32 string count,
 *            u32 entry-table offset
 *   strings  string-count u32 offsets, then the NUL-terminated pool padded
 *            to 4 bytes; BVCD string fields are i16 indices into it
 *   entries  16 bytes each {crc, data offset, data length, summary offset},
 *            sorted by unsigned CRC (the engine binary-searches them)
 *   summary  u32 msecs, [v3: u32 lastspeech_msecs], u32 n, n u32 sound
 *            string indices
 *   data     each scene's BVCD, stored raw ("bvcd") or in Valve's LZMA
 *            wrapper (src/codec/vsif_lzma.c), packed with no padding
 * Names are not stored, only the CRC-32 of "scenes\<path>.vcd" in lower
 * case; --names recovers them from candidates (a list or a VCD folder).
 * Entries are called "scenes/<path>.vcd" ('/' separated, so extraction under
 * a game folder recreates its layout) or "%08x.vcd" while unknown.
 *
 * Facts: ../shared/seeds/valve-scenes-image.txt,
 * ../shared/formats/valve-vsif-bvcd.md, Source SDK 2013 sceneimage.cpp and
 * SceneImageFile.h, the Alien Swarm SDK's choreoscene.cpp for the v3
 * lastspeech rule (learnt, not copied), the ez2 (v2) and tsp (v3) images of
 * the shared corpus. Scenes themselves are read, written and summarised by
 * choreo.h. docs/formats/vsif.md has the details and trowel's checks.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "codec/vsif_lzma.h"
#include "core/module.h"
#include "core/sink.h"
#include "format/valve/choreo.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define HEADER_SIZE 20u
#define ENTRY_SIZE 16u
#define POOL_STRING_MAX 4096 /* the tokenizer's limit is 1024; room to spare */
#define IMAGE_MAX ((uint64_t)INT32_MAX) /* the engine's offsets are int */

static const uint8_t vsif_id[4] = {'V', 'S', 'I', 'F'};
static const uint8_t bvcd_id[4] = {'b', 'v', 'c', 'd'};

typedef struct vsif_scene {
    uint32_t slot;        /* its place in the entry table */
    uint32_t crc;
    uint32_t data_offset, data_length, summary_offset;
    uint32_t msecs, lastspeech_msecs;
    uint32_t sound_count;
    uint32_t *sounds;     /* pool indices, all checked in range */
    bool compressed;
    uint32_t size;        /* BVCD bytes after decoding */
    uint32_t lzma_size;   /* compressed: the stream size in the LZMA header */
    bool summary_ok;      /* false: damaged (no sounds); data still readable */
} vsif_scene;

typedef struct vsif_image {
    uint32_t version;
    uint32_t scene_count, string_count, entry_offset; /* as the header says */
    choreo_pool *pool;   /* the strings that could be read */
    vsif_scene *scenes;  /* the scenes whose data can be found, entry order */
    uint32_t count;
    trowel_error *damage; /* what could not be read (a damaged file) */
    size_t damage_count;
} vsif_image;

typedef struct vsif_state {
    vsif_image img;
    bool raw; /* extract the stored BVCD rather than text */
} vsif_state;

/* -------------------------------------------------------------- helpers */

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void image_free(trowel_ctx *ctx, vsif_image *img)
{
    for (size_t i = 0; img->scenes && i < img->count; i++)
        trowel_mem_free(ctx, img->scenes[i].sounds);
    trowel_mem_free(ctx, img->scenes);
    trowel_mem_free(ctx, img->damage);
    choreo_pool_free(img->pool);
    memset(img, 0, sizeof *img);
}

/* Valve's name hash: CRC-32 of the name in lower case with '\' separators. */
static uint32_t name_crc(const char *name)
{
    uint32_t crc = 0;
    for (const char *p = name; *p; p++) {
        uint8_t c = (uint8_t)*p;
        if (c >= 'A' && c <= 'Z') /* ASCII only, whatever the locale */
            c = (uint8_t)(c + ('a' - 'A'));
        if (c == '/')
            c = '\\';
        crc = trowel_crc32(crc, &c, 1);
    }
    return crc;
}

/* A scene's CRC from its name. A name that is just the CRC ("%08x.vcd",
 * how trowel lists scenes whose names are unknown), alone or right under
 * scenes/, stands for that CRC, so an image extracted whole can be rebuilt
 * with every scene in place. */
static uint32_t scene_crc(const char *name)
{
    const char *base = strncasecmp(name, "scenes/", 7) == 0 ? name + 7 : name;
    size_t n = strspn(base, "0123456789abcdef");
    if (n == 8 && strcmp(base + 8, ".vcd") == 0)
        return (uint32_t)strtoul(base, NULL, 16);
    return name_crc(name);
}

static bool ends_with_vcd(const char *name)
{
    size_t n = strlen(name);
    return n >= 4 && strcasecmp(name + n - 4, ".vcd") == 0;
}

/* The scene name for a candidate path: '\' become '/', everything from the
 * first "scenes" component on, or "scenes/" prepended when there is none;
 * ".vcd" appended when missing (the engine adds it too). */
static trowel_status scene_name(trowel_ctx *ctx, const char *path, char *out, size_t cap)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "name too long: %.64s...",
                           path);
    for (char *p = tmp; *p; p++)
        if (*p == '\\')
            *p = '/';
    const char *start = NULL;
    for (const char *p = tmp; *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : p + strlen(p)) {
        if (strncasecmp(p, "scenes/", 7) == 0) {
            start = p;
            break;
        }
    }
    const char *rest = tmp;
    while (*rest == '/' || strncmp(rest, "./", 2) == 0)
        rest += *rest == '/' ? 1 : 2;
    int n = start ? snprintf(out, cap, "%s%s", start, ends_with_vcd(start) ? "" : ".vcd")
                  : snprintf(out, cap, "scenes/%s%s", rest, ends_with_vcd(rest) ? "" : ".vcd");
    if (n < 0 || (size_t)n >= cap)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "name too long: %.64s...",
                           path);
    return TROWEL_OK;
}

/* Loads [off, off + len) of the input (checked against it) into memory. */
static trowel_status load_span(trowel_reader *whole, uint64_t off, uint64_t len, uint8_t **out,
                               size_t *size)
{
    trowel_reader sub;
    trowel_status s = trowel_reader_sub(whole, off, len, &sub);
    return s != TROWEL_OK ? s : trowel_reader_load(&sub, out, size);
}

/* ------------------------------------------------------------- reading */

static int vsif_bid(trowel_reader *r)
{
    uint8_t h[HEADER_SIZE];
    if (trowel_read_bytes(r, h, sizeof h) != TROWEL_OK || memcmp(h, vsif_id, 4) != 0)
        return TROWEL_BID_NONE;
    uint32_t version = (uint32_t)h[4] | (uint32_t)h[5] << 8 | (uint32_t)h[6] << 16 |
                       (uint32_t)h[7] << 24;
    return version == 2 || version == 3 ? TROWEL_BID_STRONG : TROWEL_BID_MAGIC;
}

/* Damage is data that is missing or broken past the header: the rest of
 * the image can still be read. Running out of memory is not damage. */
static bool is_damage(trowel_status s)
{
    return s == TROWEL_ERR_TRUNCATED || s == TROWEL_ERR_CORRUPT || s == TROWEL_ERR_UNSUPPORTED;
}

/* Records the context's error as one problem of a damaged image. */
static trowel_status keep_damage(trowel_ctx *ctx, vsif_image *img)
{
    trowel_error *d = trowel_mem_realloc(ctx, img->damage,
                                         (img->damage_count + 1) * sizeof *img->damage);
    if (!d)
        return ctx->last_error.status;
    img->damage = d;
    img->damage[img->damage_count++] = ctx->last_error;
    return TROWEL_OK;
}

/* The header; what it says is checked against the file later, part by
 * part, so that a cut file still gives what it holds. */
static trowel_status read_header(trowel_reader *r, vsif_image *img)
{
    uint8_t id[4];
    trowel_status s = trowel_read_bytes(r, id, 4);
    if (s == TROWEL_OK && memcmp(id, vsif_id, 4) != 0)
        return trowel_fail(r->ctx, TROWEL_ERR_UNSUPPORTED, 0, "no VSIF id");
    if (s != TROWEL_OK || (s = trowel_read_u32le(r, &img->version)) != TROWEL_OK ||
        (s = trowel_read_u32le(r, &img->scene_count)) != TROWEL_OK ||
        (s = trowel_read_u32le(r, &img->string_count)) != TROWEL_OK ||
        (s = trowel_read_u32le(r, &img->entry_offset)) != TROWEL_OK)
        return s;
    if (img->version != 2 && img->version != 3)
        return trowel_fail(r->ctx, TROWEL_ERR_UNSUPPORTED, 4,
                           "VSIF version %lu: only 2 and 3 are known",
                           (unsigned long)img->version);
    if (img->string_count > CHOREO_POOL_MAX)
        return trowel_fail(r->ctx, TROWEL_ERR_CORRUPT, 12,
                           "%lu strings: BVCD can index at most %u",
                           (unsigned long)img->string_count, CHOREO_POOL_MAX);
    return TROWEL_OK;
}

/* String i of the table, read at the reader's cursor. */
static trowel_status read_string(trowel_reader *r, uint32_t i, char *str)
{
    uint32_t off;
    trowel_reader at;
    trowel_status s = trowel_read_u32le(r, &off);
    if (s != TROWEL_OK)
        return trowel_fail(r->ctx, TROWEL_ERR_TRUNCATED, trowel_reader_abs(r),
                           "the table of %lu string offsets runs past the end of the file",
                           (unsigned long)i + 1);
    if (off >= trowel_reader_size(r))
        return trowel_fail(r->ctx, TROWEL_ERR_TRUNCATED, trowel_reader_abs(r) - 4,
                           "string %lu starts at 0x%lx, past the end of the file",
                           (unsigned long)i, (unsigned long)off);
    if ((s = trowel_reader_sub(r, off, trowel_reader_size(r) - off, &at)) == TROWEL_OK)
        s = trowel_read_cstring(&at, str, POOL_STRING_MAX);
    return s;
}

/* The pool; on damage, the strings before the first unreadable one. */
static trowel_status read_pool(trowel_reader *r, vsif_image *img)
{
    trowel_ctx *ctx = r->ctx;
    img->pool = choreo_pool_new(ctx);
    if (!img->pool)
        return ctx->last_error.status;
    char *str = trowel_mem_alloc(ctx, POOL_STRING_MAX);
    if (!str)
        return ctx->last_error.status;
    trowel_status s = trowel_reader_seek(r, HEADER_SIZE);
    uint32_t i = 0;
    for (; s == TROWEL_OK && i < img->string_count; i++)
        if ((s = read_string(r, i, str)) == TROWEL_OK)
            s = choreo_pool_append(img->pool, str);
    trowel_mem_free(ctx, str);
    if (!is_damage(s))
        return s;
    char why[sizeof ctx->last_error.message];
    snprintf(why, sizeof why, "%s", ctx->last_error.message);
    trowel_fail(ctx, s, ctx->last_error.offset,
                "%s: only %lu of the %lu strings can be read; scenes using the others cannot",
                why, (unsigned long)choreo_pool_count(img->pool), (unsigned long)img->string_count);
    return keep_damage(ctx, img);
}

static trowel_status read_summary(trowel_reader *whole, const vsif_image *img, vsif_scene *sc)
{
    trowel_ctx *ctx = whole->ctx;
    trowel_reader r;
    uint64_t fixed = img->version == 3 ? 12 : 8;
    uint32_t strings = (uint32_t)choreo_pool_count(img->pool);
    trowel_status s = trowel_reader_sub(whole, sc->summary_offset, fixed, &r);
    if (s != TROWEL_OK)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, sc->summary_offset,
                           "the summary at 0x%lx runs past the end of the file",
                           (unsigned long)sc->summary_offset);
    uint32_t count;
    if ((s = trowel_read_u32le(&r, &sc->msecs)) != TROWEL_OK ||
        (img->version == 3 && (s = trowel_read_u32le(&r, &sc->lastspeech_msecs)) != TROWEL_OK) ||
        (s = trowel_read_u32le(&r, &count)) != TROWEL_OK)
        return s;
    uint64_t list_at = sc->summary_offset + fixed;
    if (trowel_reader_sub(whole, list_at, (uint64_t)count * 4, &r) != TROWEL_OK)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, list_at - 4,
                           "the summary's %lu sound indices run past the end of the file",
                           (unsigned long)count);
    sc->sounds = trowel_mem_calloc(ctx, count ? count : 1, sizeof *sc->sounds);
    if (!sc->sounds)
        return ctx->last_error.status;
    for (uint32_t i = 0; i < count; i++) {
        if ((s = trowel_read_u32le(&r, &sc->sounds[i])) != TROWEL_OK)
            return s;
        if (sc->sounds[i] >= strings)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, list_at + 4 * (uint64_t)i,
                               "sound string index %lu is out of range (%lu strings)",
                               (unsigned long)sc->sounds[i], (unsigned long)strings);
    }
    sc->sound_count = count;
    sc->summary_ok = true;
    return TROWEL_OK;
}

/* The data span: inside the file; "bvcd" raw or an LZMA header whose
 * stream fits in it. */
static trowel_status read_data_header(trowel_reader *whole, vsif_scene *sc)
{
    trowel_ctx *ctx = whole->ctx;
    trowel_reader r;
    if (trowel_reader_sub(whole, sc->data_offset, sc->data_length, &r) != TROWEL_OK)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, sc->data_offset,
                           "scene data at 0x%lx (%lu bytes) runs past the end of the file",
                           (unsigned long)sc->data_offset, (unsigned long)sc->data_length);
    uint8_t h[TROWEL_VSIF_LZMA_HEADER_SIZE];
    size_t n = sc->data_length < sizeof h ? sc->data_length : sizeof h;
    trowel_status s = trowel_read_bytes(&r, h, n);
    if (s != TROWEL_OK)
        return s;
    if (n >= 4 && memcmp(h, bvcd_id, 4) == 0) {
        sc->compressed = false;
        sc->size = sc->data_length;
        return TROWEL_OK;
    }
    if (!trowel_vsif_lzma_is_compressed(h, n))
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, sc->data_offset,
                           "scene data is neither \"bvcd\" nor \"LZMA\"");
    trowel_vsif_lzma_header lh;
    if ((s = trowel_vsif_lzma_parse_header(ctx, h, n < sizeof h ? n : sc->data_length,
                                           sc->data_offset, &lh)) != TROWEL_OK)
        return s;
    sc->compressed = true;
    sc->size = lh.actual_size;
    sc->lzma_size = lh.lzma_size;
    return TROWEL_OK;
}

/* Entry slot of the table: its summary (kept as damage if unreadable) and
 * its data header. Not OK: the scene's data cannot be found. */
static trowel_status read_scene(trowel_reader *r, vsif_image *img, uint32_t slot, vsif_scene *sc)
{
    trowel_ctx *ctx = r->ctx;
    memset(sc, 0, sizeof *sc);
    sc->slot = slot;
    trowel_status s = trowel_reader_seek(r, img->entry_offset + (uint64_t)slot * ENTRY_SIZE);
    if (s != TROWEL_OK || (s = trowel_read_u32le(r, &sc->crc)) != TROWEL_OK ||
        (s = trowel_read_u32le(r, &sc->data_offset)) != TROWEL_OK ||
        (s = trowel_read_u32le(r, &sc->data_length)) != TROWEL_OK ||
        (s = trowel_read_u32le(r, &sc->summary_offset)) != TROWEL_OK)
        return s;
    char name[16];
    snprintf(name, sizeof name, "%08lx.vcd", (unsigned long)sc->crc);
    trowel_set_entry(ctx, name);
    if ((s = read_data_header(r, sc)) != TROWEL_OK)
        return s; /* the scene is lost: its summary does not matter */
    s = read_summary(r, img, sc);
    if (s != TROWEL_OK) {
        trowel_mem_free(ctx, sc->sounds);
        sc->sounds = NULL;
        sc->sound_count = 0;
        if (is_damage(s))
            s = keep_damage(ctx, img);
    }
    return s;
}

/* The entries, as many as the file holds: a cut table loses the scenes
 * whose entries are missing, a scene whose data cannot be found is left
 * out; both are kept as damage. */
static trowel_status read_entries(trowel_reader *r, vsif_image *img)
{
    trowel_ctx *ctx = r->ctx;
    uint64_t size = trowel_reader_size(r);
    uint64_t room = img->entry_offset <= size ? (size - img->entry_offset) / ENTRY_SIZE : 0;
    uint32_t slots = room < img->scene_count ? (uint32_t)room : img->scene_count;
    trowel_status s = TROWEL_OK;
    if (slots < img->scene_count) {
        trowel_fail(ctx, TROWEL_ERR_TRUNCATED, 16,
                    "the table of %lu scene entries at 0x%lx runs past the end of the file: "
                    "%lu of them are lost",
                    (unsigned long)img->scene_count, (unsigned long)img->entry_offset,
                    (unsigned long)(img->scene_count - slots));
        if ((s = keep_damage(ctx, img)) != TROWEL_OK)
            return s;
    }
    img->scenes = trowel_mem_calloc(ctx, slots ? slots : 1, sizeof *img->scenes);
    if (!img->scenes)
        return ctx->last_error.status;
    for (uint32_t i = 0; s == TROWEL_OK && i < slots; i++) {
        s = read_scene(r, img, i, &img->scenes[img->count]);
        if (s == TROWEL_OK)
            img->count++;
        else if (is_damage(s))
            s = keep_damage(ctx, img);
    }
    trowel_set_entry(ctx, NULL);
    return s;
}

/* Reads header, pool, entries and summaries of the image in r; what a
 * damaged file lacks is in img->damage. */
static trowel_status image_read(trowel_reader *r, vsif_image *img)
{
    memset(img, 0, sizeof *img);
    trowel_status s = read_header(r, img);
    if (s == TROWEL_OK)
        s = read_pool(r, img);
    if (s == TROWEL_OK)
        s = read_entries(r, img);
    if (s == TROWEL_OK && img->damage_count) /* kept in img->damage */
        trowel_ctx_clear_error(r->ctx);
    return s;
}

/* Tells the warning handler about each problem of a damaged image. */
static void warn_damage(trowel_ctx *ctx, const vsif_image *img)
{
    for (size_t i = 0; i < img->damage_count; i++) {
        const trowel_error *d = &img->damage[i];
        trowel_set_entry(ctx, d->entry);
        trowel_warn(ctx, d->offset, "%s", d->message);
    }
    trowel_set_entry(ctx, NULL);
    if (img->count < img->scene_count)
        trowel_warn(ctx, TROWEL_NO_OFFSET,
                    "damaged image: %lu of its %lu scenes can be read",
                    (unsigned long)img->count, (unsigned long)img->scene_count);
}

static trowel_status add_entry(trowel_archive *a, const vsif_image *img, const vsif_scene *sc)
{
    char name[16];
    snprintf(name, sizeof name, "%08lx.vcd", (unsigned long)sc->crc);
    trowel_entry e = {.name = name, .size = sc->size, .packed_size = sc->data_length,
                      .offset = sc->data_offset, .method = sc->compressed ? "lzma" : "stored"};
    trowel_props *x = trowel_archive_add_entry(a, &e);
    if (!x)
        return a->ctx->last_error.status;
    const char **sounds = trowel_mem_calloc(a->ctx, sc->sound_count ? sc->sound_count : 1,
                                            sizeof *sounds);
    if (!sounds)
        return a->ctx->last_error.status;
    for (uint32_t i = 0; i < sc->sound_count; i++)
        sounds[i] = choreo_pool_get(img->pool, sc->sounds[i]);
    trowel_status s;
    if ((s = trowel_props_add_hex(x, "crc", sc->crc)) == TROWEL_OK &&
        (s = trowel_props_add_bool(x, "compressed", sc->compressed)) == TROWEL_OK &&
        sc->summary_ok && /* a damaged summary shows nothing */
        (s = trowel_props_add_uint(x, "msecs", sc->msecs)) == TROWEL_OK &&
        (img->version != 3 ||
         (s = trowel_props_add_uint(x, "lastspeech_msecs", sc->lastspeech_msecs)) == TROWEL_OK))
        s = trowel_props_add_list(x, "sounds", sounds, sc->sound_count);
    trowel_mem_free(a->ctx, sounds);
    return s;
}

static trowel_status vsif_open(trowel_archive *a, trowel_reader *r)
{
    vsif_state *st = trowel_mem_calloc(a->ctx, 1, sizeof *st);
    if (!st)
        return a->ctx->last_error.status;
    a->priv = st;
    vsif_image *img = &st->img;
    trowel_status s = image_read(r, img);
    if (s != TROWEL_OK)
        return s;
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", "vsif")) ||
        (s = trowel_props_add_uint(info, "version", img->version)) ||
        (s = trowel_props_add_uint(info, "scene_count", img->scene_count)) ||
        (s = trowel_props_add_uint(info, "string_count", img->string_count)) ||
        (s = trowel_props_add_hex(info, "entry_offset", img->entry_offset)))
        return s;
    for (uint32_t i = 0; s == TROWEL_OK && i < img->count; i++)
        s = add_entry(a, img, &img->scenes[i]);
    if (s == TROWEL_OK && img->damage_count) {
        warn_damage(a->ctx, img);
        trowel_archive_mark_damaged(a);
    }
    return s;
}

/* What create needs besides the names: the version and, per scene, whether
 * it was stored compressed (LZMA streams themselves cannot be reproduced:
 * Valve's encoder is not liblzma). */
static trowel_status vsif_manifest(trowel_archive *a, json_object *m)
{
    const vsif_state *st = a->priv;
    json_object *entries;
    json_object_object_add(m, "version", json_object_new_int((int)st->img.version));
    if (!json_object_object_get_ex(m, "entries", &entries))
        return TROWEL_OK;
    for (size_t i = 0; i < json_object_array_length(entries) && i < st->img.count; i++) {
        json_object *e = json_object_array_get_idx(entries, i);
        char crc[9];
        snprintf(crc, sizeof crc, "%08lx", (unsigned long)st->img.scenes[i].crc);
        json_object_object_add(e, "crc", json_object_new_string(crc));
        json_object_object_add(e, "compressed",
                               json_object_new_boolean(st->img.scenes[i].compressed));
    }
    return TROWEL_OK;
}

static void vsif_close(trowel_archive *a)
{
    vsif_state *st = a->priv;
    if (!st)
        return;
    image_free(a->ctx, &st->img);
    trowel_mem_free(a->ctx, st);
}

/* A scene's BVCD as a reader window: over the file itself for a raw scene
 * (nothing is loaded, however much its stored data holds), or over its
 * LZMA stream decoded into memory. scene_bvcd_close releases it. */
typedef struct scene_bvcd {
    trowel_reader r;
    trowel_input *mem;
    uint8_t *decoded;
} scene_bvcd;

static void scene_bvcd_close(trowel_ctx *ctx, scene_bvcd *b)
{
    trowel_input_close(b->mem);
    trowel_mem_free(ctx, b->decoded);
    memset(b, 0, sizeof *b);
}

static trowel_status scene_bvcd_open(trowel_ctx *ctx, trowel_input *in, const vsif_scene *sc,
                                     scene_bvcd *b)
{
    memset(b, 0, sizeof *b);
    trowel_reader whole;
    trowel_reader_init(&whole, ctx, in);
    if (!sc->compressed)
        return trowel_reader_sub(&whole, sc->data_offset, sc->data_length, &b->r);
    uint8_t *blob;
    size_t blob_size, size = 0;
    trowel_status s = load_span(&whole, sc->data_offset, sc->data_length, &blob, &blob_size);
    if (s != TROWEL_OK)
        return s;
    s = trowel_vsif_lzma_decode(ctx, blob, blob_size, sc->data_offset, &b->decoded, &size);
    trowel_mem_free(ctx, blob);
    if (s == TROWEL_OK)
        s = trowel_input_open_memory(ctx, b->decoded, size, "(bvcd)", &b->mem);
    if (s == TROWEL_OK)
        trowel_reader_init(&b->r, ctx, b->mem);
    else
        scene_bvcd_close(ctx, b);
    return s;
}

/* Parses the scene with the image's pool; *trailing (if wanted) counts the
 * bytes after it, which the engine never looks at. */
static trowel_status parse_scene(trowel_ctx *ctx, trowel_input *in, const vsif_scene *sc,
                                 const choreo_pool *pool, choreo_scene **out,
                                 uint64_t *bvcd_size, uint64_t *trailing)
{
    scene_bvcd b;
    trowel_status s = scene_bvcd_open(ctx, in, sc, &b);
    if (s != TROWEL_OK)
        return s;
    s = choreo_read_bvcd(ctx, &b.r, pool, out);
    if (bvcd_size)
        *bvcd_size = trowel_reader_size(&b.r);
    if (trailing)
        *trailing = s == TROWEL_OK ? trowel_reader_remaining(&b.r) : 0;
    scene_bvcd_close(ctx, &b);
    return s;
}

static trowel_status vsif_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    const vsif_state *st = a->priv;
    const vsif_scene *sc = &st->img.scenes[index];
    if (st->raw) {
        scene_bvcd b;
        trowel_status s = scene_bvcd_open(a->ctx, a->in, sc, &b);
        if (s == TROWEL_OK)
            s = trowel_reader_copy_to(&b.r, out);
        scene_bvcd_close(a->ctx, &b);
        return s;
    }
    choreo_scene *scene = NULL;
    trowel_status s = parse_scene(a->ctx, a->in, sc, st->img.pool, &scene, NULL, NULL);
    if (s == TROWEL_OK)
        s = choreo_write_vcd(a->ctx, scene, out);
    choreo_scene_free(a->ctx, scene);
    return s;
}

/* Scenes are written as text VCDs unless raw=1: their size is known only
 * once written. */
static bool vsif_entry_size_exact(const trowel_archive *a, size_t index)
{
    (void)index;
    const vsif_state *st = a->priv;
    return st->raw;
}

static trowel_status vsif_set_options(trowel_archive *a, const char *const *opts, size_t n)
{
    vsif_state *st = a->priv; /* keys checked against vsif_options */
    const char *raw = trowel_options_get(opts, n, "raw");
    if (raw) {
        if (strcmp(raw, "1") != 0 && strcmp(raw, "0") != 0)
            return trowel_fail(a->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "raw= takes 0 or 1, not '%s'", raw);
        st->raw = raw[0] == '1';
    }
    return TROWEL_OK;
}

/* --------------------------------------------------------------- verify */

/* Sound lists compared as the engine builds them: de-duplicated through a
 * case-insensitive pool, so the first spelling of each sound counts. */
static bool same_sounds(const vsif_image *img, const vsif_scene *sc, const choreo_summary *sum)
{
    size_t k = 0;
    for (size_t i = 0; i < sum->sound_count; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcasecmp(sum->sounds[i], sum->sounds[j]) == 0;
        if (seen)
            continue;
        if (k >= sc->sound_count ||
            strcasecmp(sum->sounds[i], choreo_pool_get(img->pool, sc->sounds[k])) != 0)
            return false;
        k++;
    }
    return k == sc->sound_count;
}

/* True when every sound the scene uses is in the stored list, in order,
 * whatever else the list holds. */
static bool lists_every_sound(const vsif_image *img, const vsif_scene *sc,
                              const choreo_summary *sum)
{
    uint32_t k = 0;
    for (size_t i = 0; i < sum->sound_count; i++) {
        while (k < sc->sound_count &&
               strcasecmp(sum->sounds[i], choreo_pool_get(img->pool, sc->sounds[k])) != 0)
            k++;
        if (k == sc->sound_count)
            return false;
    }
    return true;
}

/* Appends s to buf as list text ("a, b"), cut short with "..." if full. */
static void append_sound(char *buf, size_t cap, const char *s)
{
    size_t n = strlen(buf);
    if (n + 4 >= cap)
        return;
    int w = snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", s);
    if (w < 0 || (size_t)w >= cap - n)
        memcpy(buf + cap - 4, "...", 4);
}

/* The stored and the recomputed sound lists, for a message. */
static void describe_sounds(const vsif_image *img, const vsif_scene *sc,
                            const choreo_summary *sum, char *stored, char *scene, size_t cap)
{
    stored[0] = scene[0] = '\0';
    for (uint32_t i = 0; i < sc->sound_count; i++)
        append_sound(stored, cap, choreo_pool_get(img->pool, sc->sounds[i]));
    for (size_t i = 0; i < sum->sound_count; i++)
        append_sound(scene, cap, sum->sounds[i]);
}

/* The stored summary against the one recomputed from the scene. */
static void verify_summary(trowel_archive *a, const vsif_image *img, const vsif_scene *sc,
                           const choreo_scene *scene, const choreo_summary *sum)
{
    if (sum->msecs != sc->msecs)
        trowel_archive_reportf(a, sc->summary_offset, "summary says %lu ms, the scene lasts %lu ms",
                               (unsigned long)sc->msecs, (unsigned long)sum->msecs);
    /* The stored value came from the text the scene was compiled from,
     * whose event order BVCD does not keep entirely (actor-less events). */
    if (img->version == 3 && !choreo_lastspeech_possible(scene, sc->lastspeech_msecs))
        trowel_archive_reportf(a, sc->summary_offset + 4,
                               "summary says the last speech ends at %lu ms, the scene says %lu ms",
                               (unsigned long)sc->lastspeech_msecs,
                               (unsigned long)sum->lastspeech_msecs);
    if (!same_sounds(img, sc, sum)) {
        char stored[160], scene_sounds[160];
        describe_sounds(img, sc, sum, stored, scene_sounds, sizeof stored);
        /* Real v3 images carry sounds a scene no longer uses: Valve's
         * in-place update adds sounds without clearing the old list. The
         * engine only precaches more than it needs, so that is worth a
         * warning; a sound the scene uses but the summary lacks is not. */
        if (lists_every_sound(img, sc, sum))
            trowel_warn(a->ctx, sc->summary_offset,
                        "summary lists sounds [%s] but the scene uses only [%s] "
                        "(left over from an in-place update; harmless)",
                        stored, scene_sounds);
        else
            trowel_archive_reportf(a, sc->summary_offset,
                                   "summary lists sounds [%s], the scene has [%s]", stored,
                                   scene_sounds);
    }
}

/* Bytes after the scene's BVCD inside its stored data (or inside what its
 * LZMA stream decodes to): the engine never reads them; Valve's builder
 * writes none. */
static void report_trailing(trowel_archive *a, const vsif_scene *sc, uint64_t bvcd_size,
                            uint64_t trailing)
{
    uint64_t scene_bytes = bvcd_size - trailing;
    if (sc->compressed)
        trowel_archive_reportf(
            a, sc->data_offset + 4,
            "%llu bytes follow the scene's BVCD (%llu bytes) in its decompressed data",
            (unsigned long long)trailing, (unsigned long long)scene_bytes);
    else
        trowel_archive_reportf(a, sc->data_offset + scene_bytes,
                               "%llu bytes follow the scene's BVCD (%llu bytes) in its stored data",
                               (unsigned long long)trailing, (unsigned long long)scene_bytes);
}

/* One scene, decoded once: its stream, its BVCD, the text VCD extract would
 * write (unless extracting raw) and its summary. */
static trowel_status vsif_verify_entry(trowel_archive *a, size_t index)
{
    const vsif_state *st = a->priv;
    const vsif_image *img = &st->img;
    const vsif_scene *sc = &img->scenes[index];
    uint64_t size = 0;
    choreo_scene *scene = NULL;
    choreo_summary sum;
    memset(&sum, 0, sizeof sum);
    trowel_sink *null = NULL;
    uint64_t trailing = 0;
    trowel_status s = parse_scene(a->ctx, a->in, sc, img->pool, &scene, &size, &trailing);
    if (s == TROWEL_OK && trailing)
        report_trailing(a, sc, size, trailing);
    if (s == TROWEL_OK && !st->raw && (s = trowel_sink_open_null(a->ctx, &null)) == TROWEL_OK)
        s = choreo_write_vcd(a->ctx, scene, null);
    if (s == TROWEL_OK)
        s = choreo_summarize(a->ctx, scene, &sum);
    if (s == TROWEL_OK && sc->summary_ok) /* else reported as damage */
        verify_summary(a, img, sc, scene, &sum);
    else
        trowel_archive_report(a);
    if (null)
        trowel_sink_discard(null);
    choreo_summary_free(a->ctx, &sum);
    choreo_scene_free(a->ctx, scene);
    return TROWEL_OK;
}

static trowel_status vsif_verify(trowel_archive *a)
{
    const vsif_state *st = a->priv;
    const vsif_image *img = &st->img;
    for (size_t i = 0; i < img->damage_count; i++) {
        const trowel_error *d = &img->damage[i];
        trowel_set_entry(a->ctx, d->entry);
        trowel_fail(a->ctx, d->status, d->offset, "%s", d->message);
        trowel_archive_report(a);
    }
    for (uint32_t i = 0; i < img->count; i++) {
        const vsif_scene *sc = &img->scenes[i];
        trowel_set_entry(a->ctx, a->entries[i].name);
        uint64_t at = img->entry_offset + (uint64_t)sc->slot * ENTRY_SIZE;
        if (i > 0 && sc->crc <= img->scenes[i - 1].crc)
            trowel_archive_reportf(
                a, at,
                "entries are not sorted by CRC (%08lx after %08lx): the engine's binary "
                "search will miss scenes",
                (unsigned long)sc->crc, (unsigned long)img->scenes[i - 1].crc);
        if (sc->compressed && (uint64_t)sc->lzma_size + TROWEL_VSIF_LZMA_HEADER_SIZE !=
                                  sc->data_length)
            trowel_archive_reportf(
                a, sc->data_offset + 8,
                "LZMA stream of %lu bytes + 17-byte header does not fill the %lu-byte entry",
                (unsigned long)sc->lzma_size, (unsigned long)sc->data_length);
    }
    trowel_set_entry(a->ctx, NULL);
    return TROWEL_OK;
}

/* ---------------------------------------------------------------- names */

typedef struct crc_slot {
    uint32_t crc;
    size_t index;
} crc_slot;

static int by_crc(const void *x, const void *y)
{
    const crc_slot *a = x, *b = y;
    return a->crc < b->crc ? -1 : a->crc > b->crc;
}

typedef struct namer {
    trowel_archive *a;
    crc_slot *slots;
    size_t count;
} namer;

/* Renames the entry whose CRC matches the candidate, if any. */
static trowel_status offer_name(namer *nm, const char *candidate)
{
    char name[PATH_MAX];
    trowel_status s = scene_name(nm->a->ctx, candidate, name, sizeof name);
    if (s != TROWEL_OK)
        return s;
    crc_slot key = {name_crc(name), 0};
    const crc_slot *hit = bsearch(&key, nm->slots, nm->count, sizeof key, by_crc);
    if (!hit)
        return TROWEL_OK;
    /* Entries with the same CRC (a broken image) are neighbours: name all. */
    while (hit > nm->slots && hit[-1].crc == key.crc)
        hit--;
    for (; hit < nm->slots + nm->count && hit->crc == key.crc; hit++)
        if ((s = trowel_archive_rename_entry(nm->a, hit->index, name)) != TROWEL_OK)
            return s;
    return TROWEL_OK;
}

static trowel_status names_from_list(namer *nm, const char *path)
{
    trowel_ctx *ctx = nm->a->ctx;
    trowel_input *in;
    trowel_status s = trowel_open_related(ctx, NULL, path, &in); /* through the open hook */
    if (s != TROWEL_OK)
        return s;
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    uint8_t *text;
    size_t n;
    s = trowel_reader_load(&r, &text, &n);
    trowel_input_close(in);
    if (s != TROWEL_OK)
        return s;
    size_t i = 0;
    while (s == TROWEL_OK && i < n) {
        size_t end = i;
        while (end < n && text[end] != '\n' && text[end] != '\r')
            end++;
        size_t b = i, e = end;
        while (b < e && isspace(text[b]))
            b++;
        while (e > b && isspace(text[e - 1]))
            e--;
        if (e > b && text[b] != '#' && e - b < PATH_MAX - 16) {
            char line[PATH_MAX];
            memcpy(line, text + b, e - b);
            line[e - b] = '\0';
            if (!memchr(line, '\0', e - b))
                s = offer_name(nm, line);
        }
        i = end + 1;
    }
    trowel_mem_free(ctx, text);
    return s;
}

/* Offers every .vcd file under fs (depth-limited), named prefix/child. */
static trowel_status scan_folder(namer *nm, const char *fs, const char *prefix, int depth)
{
    if (depth > 64)
        return TROWEL_OK;
    DIR *d = opendir(fs);
    if (!d)
        return trowel_fail(nm->a->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot open folder %s: %s",
                           fs, strerror(errno));
    trowel_status s = TROWEL_OK;
    struct dirent *de;
    while (s == TROWEL_OK && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char child[PATH_MAX], name[PATH_MAX];
        if (snprintf(child, sizeof child, "%s/%s", fs, de->d_name) >= (int)sizeof child ||
            snprintf(name, sizeof name, "%s/%s", prefix, de->d_name) >= (int)sizeof name)
            continue;
        struct stat sb;
        if (lstat(child, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode))
            s = scan_folder(nm, child, name, depth + 1);
        else if (ends_with_vcd(de->d_name))
            s = offer_name(nm, name);
    }
    closedir(d);
    return s;
}

/* A folder: if it holds "scenes", that is scanned; otherwise the folder is
 * taken to be (inside) the scenes folder: names start at its last "scenes"
 * component, or with "scenes/" when it has none. */
static trowel_status names_from_folder(namer *nm, const char *path)
{
    char real[PATH_MAX], sub[PATH_MAX + 8];
    if (!realpath(path, real))
        return trowel_fail(nm->a->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "%s: %s", path,
                           strerror(errno));
    DIR *d = opendir(real);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            struct stat sb;
            if (strcasecmp(de->d_name, "scenes") != 0 ||
                snprintf(sub, sizeof sub, "%s/%s", real, de->d_name) >= (int)sizeof sub)
                continue;
            if (stat(sub, &sb) == 0 && S_ISDIR(sb.st_mode)) {
                char prefix[8];
                memcpy(prefix, de->d_name, 7); /* "scenes" in its own case */
                closedir(d);
                return scan_folder(nm, sub, prefix, 0);
            }
        }
        closedir(d);
    }
    const char *last = NULL;
    for (const char *p = real; (p = strchr(p, '/')) != NULL; p++)
        if (strncasecmp(p + 1, "scenes", 6) == 0 && (p[7] == '/' || p[7] == '\0'))
            last = p + 1;
    return scan_folder(nm, real, last ? last : "scenes", 0);
}

static trowel_status vsif_set_names(trowel_archive *a, const char *path)
{
    namer nm = {a, NULL, a->entry_count};
    const vsif_state *st = a->priv;
    nm.slots = trowel_mem_calloc(a->ctx, nm.count ? nm.count : 1, sizeof *nm.slots);
    if (!nm.slots)
        return a->ctx->last_error.status;
    for (size_t i = 0; i < nm.count; i++)
        nm.slots[i] = (crc_slot){st->img.scenes[i].crc, i};
    qsort(nm.slots, nm.count, sizeof *nm.slots, by_crc);
    struct stat sb;
    trowel_status s;
    if (stat(path, &sb) != 0)
        s = trowel_fail(a->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "%s: %s", path, strerror(errno));
    else if (S_ISDIR(sb.st_mode))
        s = names_from_folder(&nm, path);
    else
        s = names_from_list(&nm, path);
    trowel_mem_free(a->ctx, nm.slots);
    return s;
}

/* -------------------------------------------------------------- building */

typedef struct build_scene {
    char *name;          /* NULL for scenes kept from a base image */
    uint32_t crc;
    uint32_t msecs, lastspeech_msecs;
    uint32_t *sounds;
    uint32_t sound_count;
    uint8_t *data;       /* as stored: raw BVCD or LZMA blob; NULL from_base */
    size_t data_size;
    bool from_base;      /* data_size bytes at base_offset of the base image */
    uint64_t base_offset;
} build_scene;

typedef enum compress_mode { COMPRESS_AUTO, COMPRESS_LZMA, COMPRESS_NONE } compress_mode;

typedef struct builder {
    trowel_ctx *ctx;
    uint32_t version;
    compress_mode compress;
    compress_mode scene_mode;       /* this scene's: compress, or the manifest's */
    trowel_vsif_lzma_encoder *lzma; /* made on first use */
    choreo_pool *pool;
    build_scene *scenes;
    size_t count, cap;
    trowel_input *base_in; /* -O base=: open until the image is written */
} builder;

static void builder_free(builder *b)
{
    for (size_t i = 0; i < b->count; i++) {
        trowel_mem_free(b->ctx, b->scenes[i].name);
        trowel_mem_free(b->ctx, b->scenes[i].sounds);
        trowel_mem_free(b->ctx, b->scenes[i].data);
    }
    trowel_mem_free(b->ctx, b->scenes);
    trowel_vsif_lzma_encoder_free(b->lzma);
    choreo_pool_free(b->pool);
    trowel_input_close(b->base_in);
}

static build_scene *builder_add(builder *b)
{
    if (b->count == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        build_scene *p = trowel_mem_realloc(b->ctx, b->scenes, cap * sizeof *p);
        if (!p)
            return NULL;
        b->scenes = p;
        b->cap = cap;
    }
    build_scene *sc = &b->scenes[b->count++];
    memset(sc, 0, sizeof *sc);
    return sc;
}

/* Interns the sound names (pool ids de-duplicated, as the engine does). */
static trowel_status intern_sounds(builder *b, build_scene *sc, const char *const *sounds,
                                   size_t n)
{
    sc->sounds = trowel_mem_calloc(b->ctx, n ? n : 1, sizeof *sc->sounds);
    if (!sc->sounds)
        return b->ctx->last_error.status;
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        trowel_status s = choreo_pool_intern(b->pool, sounds[i], &id);
        if (s != TROWEL_OK)
            return s;
        bool seen = false;
        for (uint32_t j = 0; j < sc->sound_count && !seen; j++)
            seen = sc->sounds[j] == id;
        if (!seen)
            sc->sounds[sc->sound_count++] = id;
    }
    return TROWEL_OK;
}

/* Writes the scene as BVCD with the builder's pool and stores it as the
 * compression mode asks: LZMA kept only when smaller in auto mode. */
static trowel_status store_scene(builder *b, build_scene *sc, const choreo_scene *scene,
                                 uint32_t source_crc)
{
    trowel_sink *mem;
    trowel_status s = trowel_sink_open_memory(b->ctx, &mem);
    if (s != TROWEL_OK)
        return s;
    uint8_t *bvcd = NULL;
    size_t size = 0;
    s = choreo_write_bvcd(b->ctx, scene, b->pool, source_crc, mem);
    if (s == TROWEL_OK)
        s = trowel_sink_take(mem, &bvcd, &size);
    trowel_sink_discard(mem);
    if (s != TROWEL_OK)
        return s;
    if (b->scene_mode == COMPRESS_NONE) {
        sc->data = bvcd;
        sc->data_size = size;
        return TROWEL_OK;
    }
    uint8_t *blob;
    size_t blob_size;
    if (!b->lzma && !(b->lzma = trowel_vsif_lzma_encoder_new(b->ctx))) {
        trowel_mem_free(b->ctx, bvcd);
        return b->ctx->last_error.status;
    }
    s = trowel_vsif_lzma_encoder_run(b->lzma, bvcd, size, &blob, &blob_size);
    if (s != TROWEL_OK) {
        trowel_mem_free(b->ctx, bvcd);
        return s;
    }
    if (b->scene_mode == COMPRESS_AUTO && blob_size >= size) {
        trowel_mem_free(b->ctx, blob);
        sc->data = bvcd;
        sc->data_size = size;
    } else {
        trowel_mem_free(b->ctx, bvcd);
        sc->data = blob;
        sc->data_size = blob_size;
    }
    return TROWEL_OK;
}

/* Valve's builders hash the .vcd as checked out on Windows: the CRC-32 of
 * its bytes with every bare LF counted as CR LF (checked on the ez2 image:
 * the corpus VCDs have LF ends, their BVCDs carry the CRLF CRC). */
static uint32_t crlf_crc(const uint8_t *p, size_t n)
{
    static const uint8_t cr = '\r';
    uint32_t crc = 0;
    size_t run = 0; /* start of bytes not yet hashed */
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\n' || (i > 0 && p[i - 1] == '\r'))
            continue;
        crc = trowel_crc32(crc, p + run, i - run);
        crc = trowel_crc32(crc, &cr, 1);
        run = i;
    }
    return trowel_crc32(crc, p + run, n - run);
}

/* A new scene from a parsed source: summary, pool (sounds first), data. */
static trowel_status compile_into(builder *b, const char *name, const choreo_scene *scene,
                                  const choreo_summary *sum, uint32_t source_crc)
{
    build_scene *sc = builder_add(b);
    if (!sc)
        return b->ctx->last_error.status;
    sc->name = trowel_mem_strdup(b->ctx, name);
    if (!sc->name)
        return b->ctx->last_error.status;
    sc->crc = scene_crc(name);
    sc->msecs = sum->msecs;
    sc->lastspeech_msecs = sum->lastspeech_msecs;
    trowel_status s = intern_sounds(b, sc, sum->sounds, sum->sound_count);
    return s == TROWEL_OK ? store_scene(b, sc, scene, source_crc) : s;
}

/* Compiles one text VCD source into the builder. */
static trowel_status add_source(builder *b, const trowel_source *src)
{
    trowel_ctx *ctx = b->ctx;
    char name[PATH_MAX];
    trowel_status s = scene_name(ctx, src->name, name, sizeof name);
    if (s != TROWEL_OK)
        return s;
    trowel_set_entry(ctx, name);
    trowel_input *in;
    if ((s = trowel_input_open_file(ctx, src->path, &in)) != TROWEL_OK)
        return s;
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    uint8_t *text = NULL;
    size_t n = 0;
    choreo_scene *scene = NULL;
    choreo_summary sum;
    memset(&sum, 0, sizeof sum);
    s = trowel_reader_load(&r, &text, &n);
    if (s == TROWEL_OK) {
        trowel_reader_init(&r, ctx, in);
        s = choreo_parse_vcd(ctx, &r, &scene);
    }
    trowel_input_close(in);
    if (s == TROWEL_OK)
        s = choreo_summarize(ctx, scene, &sum);
    if (s == TROWEL_OK)
        s = compile_into(b, name, scene, &sum,
                         choreo_scene_has_source_crc(scene) ? choreo_scene_source_crc(scene)
                                                            : crlf_crc(text, n));
    choreo_summary_free(ctx, &sum);
    choreo_scene_free(ctx, scene);
    trowel_mem_free(ctx, text);
    return s;
}

/* Lastspeech for a scene kept from a v2 base in a v3 image: computed from
 * the scene (decoded only for this). */
static trowel_status base_lastspeech(builder *b, const vsif_image *old, const vsif_scene *osc,
                                     uint32_t *out)
{
    trowel_ctx *ctx = b->ctx;
    choreo_scene *scene = NULL;
    trowel_status s = parse_scene(ctx, b->base_in, osc, old->pool, &scene, NULL, NULL);
    choreo_summary sum;
    memset(&sum, 0, sizeof sum);
    if (s == TROWEL_OK)
        s = choreo_summarize(ctx, scene, &sum);
    *out = sum.lastspeech_msecs;
    choreo_summary_free(ctx, &sum);
    choreo_scene_free(ctx, scene);
    return s;
}

/* Keeps one scene of the base image as it is: its stored bytes (copied from
 * the base when the image is written, compressed or not) and its summary,
 * whose sound indices stay valid because the base's pool is kept in order.
 * Only lastspeech is computed, for a v2 base written as v3. */
static trowel_status keep_base_scene(builder *b, const vsif_image *old, const vsif_scene *osc)
{
    trowel_ctx *ctx = b->ctx;
    char label[16];
    snprintf(label, sizeof label, "%08lx.vcd", (unsigned long)osc->crc);
    trowel_set_entry(ctx, label);
    build_scene *sc = builder_add(b);
    if (!sc)
        return ctx->last_error.status;
    sc->crc = osc->crc;
    sc->msecs = osc->msecs;
    sc->lastspeech_msecs = osc->lastspeech_msecs;
    sc->from_base = true;
    sc->base_offset = osc->data_offset;
    sc->data_size = osc->data_length;
    sc->sounds = trowel_mem_calloc(ctx, osc->sound_count ? osc->sound_count : 1,
                                   sizeof *sc->sounds);
    if (!sc->sounds)
        return ctx->last_error.status;
    memcpy(sc->sounds, osc->sounds, osc->sound_count * sizeof *sc->sounds);
    sc->sound_count = osc->sound_count;
    if (old->version != 3 && b->version == 3)
        return base_lastspeech(b, old, osc, &sc->lastspeech_msecs);
    return TROWEL_OK;
}

static int by_build_crc(const void *x, const void *y)
{
    const build_scene *a = x, *b = y;
    return a->crc < b->crc ? -1 : a->crc > b->crc;
}

static uint32_t summary_size(uint32_t version, uint32_t sounds)
{
    return (version == 3 ? 12u : 8u) + 4u * sounds;
}

/* Header, string table and pool, padded to 4 bytes. */
static trowel_status write_head(builder *b, uint32_t entry_start, uint32_t pool_start,
                                trowel_sink *out)
{
    size_t ns = choreo_pool_count(b->pool);
    uint8_t h[HEADER_SIZE];
    memcpy(h, vsif_id, 4);
    put_u32(h + 4, b->version);
    put_u32(h + 8, (uint32_t)b->count);
    put_u32(h + 12, (uint32_t)ns);
    put_u32(h + 16, entry_start);
    trowel_status s = trowel_sink_write(out, h, sizeof h);
    uint32_t at = pool_start;
    for (size_t i = 0; s == TROWEL_OK && i < ns; i++) {
        uint8_t v[4];
        put_u32(v, at);
        s = trowel_sink_write(out, v, 4);
        at += (uint32_t)strlen(choreo_pool_get(b->pool, (uint32_t)i)) + 1;
    }
    for (size_t i = 0; s == TROWEL_OK && i < ns; i++) {
        const char *str = choreo_pool_get(b->pool, (uint32_t)i);
        s = trowel_sink_write(out, str, strlen(str) + 1);
    }
    static const uint8_t pad[4];
    if (s == TROWEL_OK && (at & 3))
        s = trowel_sink_write(out, pad, 4 - (at & 3));
    return s;
}

/* A kept scene's stored bytes, copied from the base image unchanged. */
static trowel_status copy_from_base(builder *b, const build_scene *sc, trowel_sink *out)
{
    trowel_reader whole, r;
    trowel_reader_init(&whole, b->ctx, b->base_in);
    trowel_status s = trowel_reader_sub(&whole, sc->base_offset, sc->data_size, &r);
    return s == TROWEL_OK ? trowel_reader_copy_to(&r, out) : s;
}

/* Lays the sorted scenes out as the engine's builder does: header, string
 * table, pool, entries, summaries, data. */
static trowel_status write_image(builder *b, trowel_sink *out)
{
    trowel_ctx *ctx = b->ctx;
    qsort(b->scenes, b->count, sizeof *b->scenes, by_build_crc);
    for (size_t i = 1; i < b->count; i++)
        if (b->scenes[i].crc == b->scenes[i - 1].crc)
            return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                               "two scenes hash to %08lx (%s, %s): the engine could find only one",
                               (unsigned long)b->scenes[i].crc,
                               b->scenes[i - 1].name ? b->scenes[i - 1].name : "(base)",
                               b->scenes[i].name ? b->scenes[i].name : "(base)");
    uint64_t pool_bytes = 0;
    size_t ns = choreo_pool_count(b->pool);
    for (size_t i = 0; i < ns; i++)
        pool_bytes += strlen(choreo_pool_get(b->pool, (uint32_t)i)) + 1;
    uint64_t pool_start = HEADER_SIZE + 4 * (uint64_t)ns;
    uint64_t entry_start = pool_start + ((pool_bytes + 3) & ~(uint64_t)3);
    uint64_t summary_at = entry_start + ENTRY_SIZE * (uint64_t)b->count;
    uint64_t data_at = summary_at;
    for (size_t i = 0; i < b->count; i++)
        data_at += summary_size(b->version, b->scenes[i].sound_count);
    uint64_t end = data_at;
    for (size_t i = 0; i < b->count; i++)
        end += b->scenes[i].data_size;
    if (end > IMAGE_MAX)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "the image would be %llu bytes; the engine's offsets stop at 2 GiB",
                           (unsigned long long)end);
    trowel_status s = write_head(b, (uint32_t)entry_start, (uint32_t)pool_start, out);
    for (size_t i = 0; s == TROWEL_OK && i < b->count; i++) {
        uint8_t e[ENTRY_SIZE];
        put_u32(e, b->scenes[i].crc);
        put_u32(e + 4, (uint32_t)data_at);
        put_u32(e + 8, (uint32_t)b->scenes[i].data_size);
        put_u32(e + 12, (uint32_t)summary_at);
        s = trowel_sink_write(out, e, sizeof e);
        data_at += b->scenes[i].data_size;
        summary_at += summary_size(b->version, b->scenes[i].sound_count);
    }
    for (size_t i = 0; s == TROWEL_OK && i < b->count; i++) {
        const build_scene *sc = &b->scenes[i];
        uint8_t v[12];
        size_t n = 0;
        put_u32(v + n, sc->msecs), n += 4;
        if (b->version == 3)
            put_u32(v + n, sc->lastspeech_msecs), n += 4;
        put_u32(v + n, sc->sound_count), n += 4;
        s = trowel_sink_write(out, v, n);
        for (uint32_t j = 0; s == TROWEL_OK && j < sc->sound_count; j++) {
            put_u32(v, sc->sounds[j]);
            s = trowel_sink_write(out, v, 4);
        }
    }
    for (size_t i = 0; s == TROWEL_OK && i < b->count; i++)
        s = b->scenes[i].from_base ? copy_from_base(b, &b->scenes[i], out)
                                   : trowel_sink_write(out, b->scenes[i].data,
                                                       b->scenes[i].data_size);
    return s;
}

static const char *const create_keys[] = {"compress", "version", "base", NULL};

static trowel_status parse_create_options(trowel_ctx *ctx, const trowel_create_params *p,
                                          builder *b, bool *version_given)
{
    trowel_status s = trowel_options_check(ctx, p->options, p->option_count, create_keys);
    if (s != TROWEL_OK)
        return s;
    const char *v = trowel_options_get(p->options, p->option_count, "compress");
    if (!v || strcmp(v, "auto") == 0)
        b->compress = COMPRESS_AUTO;
    else if (strcmp(v, "lzma") == 0)
        b->compress = COMPRESS_LZMA;
    else if (strcmp(v, "none") == 0)
        b->compress = COMPRESS_NONE;
    else
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "compress must be auto, lzma or none, not '%s'", v);
    v = trowel_options_get(p->options, p->option_count, "version");
    *version_given = v != NULL;
    b->version = 2;
    if (v && strcmp(v, "2") != 0 && strcmp(v, "3") != 0)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "version must be 2 or 3, not '%s'", v);
    if (v)
        b->version = (uint32_t)(v[0] - '0');
    return TROWEL_OK;
}

/* The CRCs of the .vcd sources (others are skipped); two sources with the
 * same scene name are refused. */
static trowel_status source_crcs(trowel_ctx *ctx, const trowel_create_params *p, uint32_t *crcs,
                                 size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < p->source_count; i++) {
        if (!ends_with_vcd(p->sources[i].name))
            continue;
        char name[PATH_MAX];
        trowel_status s = scene_name(ctx, p->sources[i].name, name, sizeof name);
        if (s != TROWEL_OK)
            return s;
        uint32_t crc = scene_crc(name);
        for (size_t j = 0; j < *n; j++)
            if (crcs[j] == crc)
                return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                                   "%s: another source has the same scene name (CRC %08lx)",
                                   p->sources[i].name, (unsigned long)crc);
        crcs[(*n)++] = crc;
    }
    return TROWEL_OK;
}

static bool base_has(const vsif_image *old, uint32_t crc)
{
    for (uint32_t i = 0; i < old->count; i++)
        if (old->scenes[i].crc == crc)
            return true;
    return false;
}

/* Says, for each .vcd source, whether it replaces a scene of the base (a
 * note, for -v) or adds one (a note, and a warning: a name that matches
 * nothing in the base is often a misspelt one). */
static trowel_status tell_sources(trowel_ctx *ctx, const trowel_create_params *p,
                                  const vsif_image *old, const char *path)
{
    for (size_t i = 0; i < p->source_count; i++) {
        if (!ends_with_vcd(p->sources[i].name))
            continue;
        char name[PATH_MAX];
        trowel_status s = scene_name(ctx, p->sources[i].name, name, sizeof name);
        if (s != TROWEL_OK)
            return s;
        uint32_t crc = scene_crc(name);
        trowel_set_entry(ctx, name);
        if (base_has(old, crc)) {
            trowel_note(ctx, "replaces scene %08lx of the base image", (unsigned long)crc);
            continue;
        }
        trowel_note(ctx, "added as a new scene (%08lx)", (unsigned long)crc);
        trowel_warn(ctx, TROWEL_NO_OFFSET, "no scene of the base image %s has this name: added",
                    path);
    }
    trowel_set_entry(ctx, NULL);
    return TROWEL_OK;
}

/* -O base=IMAGE: the base's pool, in its order (new strings are appended
 * after it), and every scene no source replaces, kept as stored. The base
 * stays open until the image is written. */
static trowel_status add_base(builder *b, const trowel_create_params *p, const char *path,
                              const uint32_t *crcs, size_t ncrcs, bool version_given)
{
    trowel_ctx *ctx = b->ctx;
    trowel_status s = trowel_open_related(ctx, NULL, path, &b->base_in); /* the open hook */
    if (s != TROWEL_OK)
        return s;
    trowel_reader r;
    trowel_reader_init(&r, ctx, b->base_in);
    vsif_image old;
    s = image_read(&r, &old);
    if (s == TROWEL_OK && !version_given)
        b->version = old.version;
    for (uint32_t i = 0; s == TROWEL_OK && i < choreo_pool_count(old.pool); i++)
        s = choreo_pool_append(b->pool, choreo_pool_get(old.pool, i));
    if (s == TROWEL_OK && old.damage_count) /* kept scenes would be lost */
        s = trowel_fail(ctx, old.damage[0].status, old.damage[0].offset, "it is damaged: %s%s%s",
                        old.damage[0].entry, old.damage[0].entry[0] ? ": " : "",
                        old.damage[0].message);
    for (uint32_t i = 0; s == TROWEL_OK && i < old.count; i++) {
        bool gone = false;
        for (size_t j = 0; j < ncrcs && !gone; j++)
            gone = crcs[j] == old.scenes[i].crc;
        if (!gone)
            s = keep_base_scene(b, &old, &old.scenes[i]);
    }
    if (s == TROWEL_OK)
        s = tell_sources(ctx, p, &old, path);
    if (s != TROWEL_OK && ctx->last_error.message[0]) {
        char msg[sizeof ctx->last_error.message];
        snprintf(msg, sizeof msg, "%s", ctx->last_error.message);
        s = trowel_fail(ctx, s, ctx->last_error.offset, "base image %s: %s", path, msg);
    }
    image_free(ctx, &old);
    return s;
}

/* Valve's builder visits a folder's subfolders before its files, and names
 * in upper-case order (as NTFS lists them: '_' after the letters). Taking
 * the sources in that order gives the same pool, string for string, as
 * Valve's image (checked on ez2: all 505 strings). */
static int valve_order(const void *x, const void *y)
{
    const char *a = (*(const trowel_source *const *)x)->name;
    const char *b = (*(const trowel_source *const *)y)->name;
    for (;;) {
        size_t la = strcspn(a, "/\\"), lb = strcspn(b, "/\\");
        bool dir_a = a[la] != '\0', dir_b = b[lb] != '\0';
        if (dir_a != dir_b)
            return dir_a ? -1 : 1;
        for (size_t i = 0; i < la && i < lb; i++) {
            int ca = toupper((unsigned char)a[i]), cb = toupper((unsigned char)b[i]);
            if (ca != cb)
                return ca - cb;
        }
        if (la != lb)
            return la < lb ? -1 : 1;
        if (!dir_a)
            return 0;
        a += la + 1;
        b += lb + 1;
    }
}

/* The manifest's "compressed" flag for a source, by name (entries are
 * usually in source order, so index i is tried first). */
static compress_mode manifest_mode(json_object *manifest, size_t i, const char *name,
                                   compress_mode fallback)
{
    json_object *entries, *e, *v;
    if (!manifest || !json_object_object_get_ex(manifest, "entries", &entries) ||
        !json_object_is_type(entries, json_type_array))
        return fallback;
    size_t n = json_object_array_length(entries);
    for (size_t k = 0; k <= n; k++) {
        size_t j = k == 0 ? i : k - 1;
        if (j >= n || !(e = json_object_array_get_idx(entries, j)) ||
            !json_object_object_get_ex(e, "name", &v) || !json_object_get_string(v) ||
            strcmp(json_object_get_string(v), name) != 0)
            continue;
        if (!json_object_object_get_ex(e, "compressed", &v))
            return fallback;
        return json_object_get_boolean(v) ? COMPRESS_LZMA : COMPRESS_NONE;
    }
    return fallback;
}

/* The manifest's image version, unless -O version= was given. */
static trowel_status manifest_version(trowel_ctx *ctx, json_object *manifest, builder *b,
                                      bool *version_given)
{
    json_object *v;
    if (!manifest || *version_given || !json_object_object_get_ex(manifest, "version", &v))
        return TROWEL_OK;
    int version = json_object_get_int(v);
    if (version != 2 && version != 3)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "the manifest's version %d is not 2 or 3", version);
    b->version = (uint32_t)version;
    *version_given = true;
    return TROWEL_OK;
}

static trowel_status vsif_create(trowel_ctx *ctx, const trowel_create_params *p,
                                 json_object *manifest, trowel_sink *out)
{
    builder b = {.ctx = ctx};
    bool version_given;
    trowel_status s = parse_create_options(ctx, p, &b, &version_given);
    if (s == TROWEL_OK)
        s = manifest_version(ctx, manifest, &b, &version_given);
    if (s != TROWEL_OK)
        return s;
    b.scene_mode = b.compress;
    b.pool = choreo_pool_new(ctx);
    uint32_t *crcs = b.pool ? trowel_mem_calloc(ctx, p->source_count + 1, sizeof *crcs) : NULL;
    size_t ncrcs = 0;
    s = crcs ? source_crcs(ctx, p, crcs, &ncrcs) : ctx->last_error.status;
    const char *base = trowel_options_get(p->options, p->option_count, "base");
    if (s == TROWEL_OK && base)
        s = add_base(&b, p, base, crcs, ncrcs, version_given);
    const trowel_source **order =
        s == TROWEL_OK ? trowel_mem_calloc(ctx, ncrcs + 1, sizeof *order) : NULL;
    if (s == TROWEL_OK && !order)
        s = ctx->last_error.status;
    for (size_t i = 0, k = 0; s == TROWEL_OK && i < p->source_count; i++)
        if (ends_with_vcd(p->sources[i].name))
            order[k++] = &p->sources[i];
    if (s == TROWEL_OK)
        qsort(order, ncrcs, sizeof *order, valve_order);
    /* -O compress= overrides the manifest's per-scene choice. */
    bool per_scene = manifest && !trowel_options_get(p->options, p->option_count, "compress");
    for (size_t i = 0; s == TROWEL_OK && i < ncrcs; i++) {
        b.scene_mode = per_scene ? manifest_mode(manifest, (size_t)(order[i] - p->sources),
                                                 order[i]->name, b.compress)
                                 : b.compress;
        s = add_source(&b, order[i]);
        trowel_progress(ctx, i + 1, ncrcs);
    }
    trowel_mem_free(ctx, (void *)order);
    if (s == TROWEL_OK)
        trowel_set_entry(ctx, NULL);
    if (s == TROWEL_OK && b.count == 0)
        s = trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                        "no .vcd files among the sources (and no base image)");
    if (s == TROWEL_OK)
        s = write_image(&b, out);
    trowel_mem_free(ctx, crcs);
    builder_free(&b);
    return s;
}


static const trowel_option_info vsif_options[] = {
    {"raw", "0|1", "1: extract scenes as stored (BVCD), not as text VCD (as --raw)", NULL},
    {NULL, NULL, NULL, NULL},
};

const trowel_format trowel_format_vsif = {
    .id = "vsif",
    .family = "valve",
    .description = "Valve scenes.image (VSIF v2/v3): compiled choreography scenes",
    .extensions = ".image",
    .caps = TROWEL_CAP_LIST | TROWEL_CAP_MANIFEST,
    .create_options =
        "version=2|3: image version (default 2, or the base image's)\n"
        "compress=auto|lzma|none: LZMA per scene, kept only when smaller (default auto)\n"
        "base=IMAGE: start from IMAGE; sources add or replace scenes, the rest are kept as "
        "stored (bytes, summaries, string pool order)",
    .convert_targets = "",
    .options = vsif_options,
    .bid = vsif_bid,
    .open = vsif_open,
    .read_entry = vsif_read_entry,
    .verify = vsif_verify,
    .verify_entry = vsif_verify_entry,
    .manifest = vsif_manifest,
    .create = vsif_create,
    .set_names = vsif_set_names,
    .set_options = vsif_set_options,
    .entry_size_exact = vsif_entry_size_exact,
    .close = vsif_close,
};
