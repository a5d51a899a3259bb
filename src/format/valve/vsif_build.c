/*
 * scenes.image (VSIF) builder: `create -t vsif` from text VCDs (compiled
 * as Valve's builder does: its source order, pool order, summaries and
 * layout), from stored scenes a manifest describes (.bvcd, kept byte for
 * byte with the manifest's pool), and merges into a base image (-O base=).
 * The image and the helpers it shares with the reader are in
 * vsif_image.h (vsif_image.c); the format's facts and trowel's choices are in vsif.c and
 * docs/formats/vsif.md. Facts: Source SDK 2013 sceneimage.cpp (learnt,
 * not copied), the ez2 and tsp images of the shared corpus.
 */
#include "format/valve/vsif_build.h"
#include "format/valve/vsif_image.h"

#include "codec/vsif_lzma.h"
#include "core/sink.h"
#include "core/source.h"

#include <ctype.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
    bool float_rule;                /* summaries rounded in single precision */
    json_object *manifest;          /* NULL without one */
    bool stored_ok;                 /* the manifest's pool is loaded: .bvcd sources work */
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

/* A new, zeroed scene at the end of the builder's list. */
static trowel_status builder_add(builder *b, build_scene **out)
{
    if (b->count == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        trowel_status s = trowel_mem_resize_array(b->ctx, &b->scenes, cap, sizeof *b->scenes);
        if (s != TROWEL_OK)
            return s;
        b->cap = cap;
    }
    *out = &b->scenes[b->count++];
    memset(*out, 0, sizeof **out);
    return TROWEL_OK;
}

/* Interns the sound names (pool ids de-duplicated, as the engine does). */
static trowel_status intern_sounds(builder *b, build_scene *sc, const char *const *sounds,
                                   size_t n)
{
    trowel_status s = trowel_mem_new_zeroed(b->ctx, n ? n : 1, sizeof *sc->sounds, &sc->sounds);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        s = choreo_pool_intern(b->pool, sounds[i], &id);
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

static trowel_status store_bytes(builder *b, build_scene *sc, uint8_t *bvcd, size_t size);

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
    return s == TROWEL_OK ? store_bytes(b, sc, bvcd, size) : s;
}

/* Stores a scene's BVCD (taken over) as the compression mode asks. */
static trowel_status store_bytes(builder *b, build_scene *sc, uint8_t *bvcd, size_t size)
{
    trowel_status s;
    if (b->scene_mode == COMPRESS_NONE) {
        sc->data = bvcd;
        sc->data_size = size;
        return TROWEL_OK;
    }
    uint8_t *blob;
    size_t blob_size;
    s = b->lzma ? TROWEL_OK : trowel_vsif_lzma_encoder_new(b->ctx, &b->lzma);
    if (s == TROWEL_OK)
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
    build_scene *sc;
    trowel_status s = builder_add(b, &sc);
    if (s != TROWEL_OK || (s = trowel_mem_dup(b->ctx, name, &sc->name)) != TROWEL_OK)
        return s;
    sc->crc = vsif_scene_crc(name);
    sc->msecs = b->float_rule ? sum->msecs_float : sum->msecs;
    sc->lastspeech_msecs = b->float_rule ? sum->lastspeech_msecs_float : sum->lastspeech_msecs;
    s = intern_sounds(b, sc, sum->sounds, sum->sound_count);
    return s == TROWEL_OK ? store_scene(b, sc, scene, source_crc) : s;
}

/* Compiles one text VCD source into the builder. */
static trowel_status add_source(builder *b, const trowel_source *src)
{
    trowel_ctx *ctx = b->ctx;
    char name[PATH_MAX];
    trowel_status s = vsif_scene_name(ctx, src->name, name, sizeof name);
    if (s != TROWEL_OK)
        return s;
    trowel_set_entry(ctx, name);
    trowel_input *in;
    if ((s = trowel_source_open(ctx, src, &in)) != TROWEL_OK)
        return s;
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    uint8_t *text = NULL;
    size_t n = 0;
    choreo_scene *scene = NULL;
    choreo_summary sum;
    memset(&sum, 0, sizeof sum);
    s = trowel_reader_load(&r, &text, &n);
    if (s == TROWEL_OK && n >= 4 && memcmp(text, bvcd_id, 4) == 0)
        s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, 0,
                        "this is a stored scene (BVCD), not text: name it .bvcd and rebuild with "
                        "the manifest its extraction wrote (extract --manifest)");
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
    trowel_status s = vsif_parse_scene(ctx, b->base_in, osc, old->pool, &scene, NULL, NULL);
    choreo_summary sum;
    memset(&sum, 0, sizeof sum);
    if (s == TROWEL_OK)
        s = choreo_summarize(ctx, scene, &sum);
    *out = b->float_rule ? sum.lastspeech_msecs_float : sum.lastspeech_msecs;
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
    build_scene *sc;
    trowel_status s = builder_add(b, &sc);
    if (s != TROWEL_OK)
        return s;
    sc->crc = osc->crc;
    sc->msecs = osc->msecs;
    sc->lastspeech_msecs = osc->lastspeech_msecs;
    sc->from_base = true;
    sc->base_offset = osc->data_offset;
    sc->data_size = osc->data_length;
    if ((s = trowel_mem_new_zeroed(ctx, osc->sound_count ? osc->sound_count : 1,
                                   sizeof *sc->sounds, &sc->sounds)) != TROWEL_OK)
        return s;
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
    uint8_t h[VSIF_HEADER_SIZE];
    memcpy(h, vsif_id, 4);
    vsif_put_u32(h + 4, b->version);
    vsif_put_u32(h + 8, (uint32_t)b->count);
    vsif_put_u32(h + 12, (uint32_t)ns);
    vsif_put_u32(h + 16, entry_start);
    trowel_status s = trowel_sink_write(out, h, sizeof h);
    uint32_t at = pool_start;
    for (size_t i = 0; s == TROWEL_OK && i < ns; i++) {
        uint8_t v[4];
        vsif_put_u32(v, at);
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
    uint64_t pool_start = VSIF_HEADER_SIZE + 4 * (uint64_t)ns;
    uint64_t entry_start = pool_start + ((pool_bytes + 3) & ~(uint64_t)3);
    uint64_t summary_at = entry_start + VSIF_ENTRY_SIZE * (uint64_t)b->count;
    uint64_t data_at = summary_at;
    for (size_t i = 0; i < b->count; i++)
        data_at += summary_size(b->version, b->scenes[i].sound_count);
    uint64_t end = data_at;
    for (size_t i = 0; i < b->count; i++)
        end += b->scenes[i].data_size;
    if (end > VSIF_IMAGE_MAX)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "the image would be %llu bytes; the engine's offsets stop at 2 GiB",
                           (unsigned long long)end);
    trowel_status s = write_head(b, (uint32_t)entry_start, (uint32_t)pool_start, out);
    for (size_t i = 0; s == TROWEL_OK && i < b->count; i++) {
        uint8_t e[VSIF_ENTRY_SIZE];
        vsif_put_u32(e, b->scenes[i].crc);
        vsif_put_u32(e + 4, (uint32_t)data_at);
        vsif_put_u32(e + 8, (uint32_t)b->scenes[i].data_size);
        vsif_put_u32(e + 12, (uint32_t)summary_at);
        s = trowel_sink_write(out, e, sizeof e);
        data_at += b->scenes[i].data_size;
        summary_at += summary_size(b->version, b->scenes[i].sound_count);
    }
    for (size_t i = 0; s == TROWEL_OK && i < b->count; i++) {
        const build_scene *sc = &b->scenes[i];
        uint8_t v[12];
        size_t n = 0;
        vsif_put_u32(v + n, sc->msecs), n += 4;
        if (b->version == 3)
            vsif_put_u32(v + n, sc->lastspeech_msecs), n += 4;
        vsif_put_u32(v + n, sc->sound_count), n += 4;
        s = trowel_sink_write(out, v, n);
        for (uint32_t j = 0; s == TROWEL_OK && j < sc->sound_count; j++) {
            vsif_put_u32(v, sc->sounds[j]);
            s = trowel_sink_write(out, v, 4);
        }
    }
    for (size_t i = 0; s == TROWEL_OK && i < b->count; i++)
        s = b->scenes[i].from_base ? copy_from_base(b, &b->scenes[i], out)
                                   : trowel_sink_write(out, b->scenes[i].data,
                                                       b->scenes[i].data_size);
    return s;
}

/* The -O values, which core has checked against vsif_options' create rows
 * (vsif.c): each is one of its row's choices. */
static trowel_status parse_create_options(trowel_ctx *ctx, const trowel_create_params *p,
                                          builder *b, bool *version_given)
{
    (void)ctx;
    const char *v = trowel_options_get(p->options, p->option_count, "compress");
    b->compress = !v || strcmp(v, "auto") == 0 ? COMPRESS_AUTO
                  : strcmp(v, "lzma") == 0    ? COMPRESS_LZMA
                                              : COMPRESS_NONE;
    v = trowel_options_get(p->options, p->option_count, "version");
    *version_given = v != NULL;
    b->version = v ? (uint32_t)(v[0] - '0') : 2;
    v = trowel_options_get(p->options, p->option_count, "summary");
    b->float_rule = v && strcmp(v, "float") == 0;
    return TROWEL_OK;
}

/* Whether a source is a scene: a text .vcd, or a stored .bvcd when the
 * manifest's pool (which its string indices point into) is loaded. */
static bool is_scene_source(const char *name, bool stored_ok)
{
    return vsif_ends_with_vcd(name) || (stored_ok && vsif_ends_with_bvcd(name));
}

/* The scene name of a source (a .bvcd stands for its .vcd). */
static trowel_status source_scene_name(trowel_ctx *ctx, const char *source, char *out, size_t cap)
{
    char vcd[PATH_MAX];
    vsif_with_scene_extension(source, false, vcd, sizeof vcd);
    return vsif_scene_name(ctx, vcd, out, cap);
}

/* The CRCs of the scene sources (others are skipped); two sources with the
 * same scene name are refused. */
static trowel_status source_crcs(trowel_ctx *ctx, const trowel_create_params *p, bool stored_ok,
                                 uint32_t *crcs, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < p->source_count; i++) {
        if (!is_scene_source(p->sources[i].name, stored_ok))
            continue;
        char name[PATH_MAX];
        trowel_status s = source_scene_name(ctx, p->sources[i].name, name, sizeof name);
        if (s != TROWEL_OK)
            return s;
        uint32_t crc = vsif_scene_crc(name);
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
        if (!vsif_ends_with_vcd(p->sources[i].name))
            continue;
        char name[PATH_MAX];
        trowel_status s = vsif_scene_name(ctx, p->sources[i].name, name, sizeof name);
        if (s != TROWEL_OK)
            return s;
        uint32_t crc = vsif_scene_crc(name);
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
    s = vsif_image_read(&r, &old);
    if (s == TROWEL_OK)
        s = vsif_image_survey(ctx, b->base_in, &old, NULL);
    if (s == TROWEL_OK && !version_given)
        b->version = old.version;
    if (s == TROWEL_OK && !trowel_options_get(p->options, p->option_count, "summary"))
        b->float_rule = vsif_image_uses_float(&old); /* the base's rule */
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
    vsif_image_free(ctx, &old);
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

/* The manifest's entry for a source, by name (entries are usually in
 * source order, so index i is tried first); NULL when it has none. */
static json_object *manifest_entry(json_object *manifest, size_t i, const char *name)
{
    json_object *entries, *e, *v;
    if (!manifest || !json_object_object_get_ex(manifest, "entries", &entries) ||
        !json_object_is_type(entries, json_type_array))
        return NULL;
    size_t n = json_object_array_length(entries);
    for (size_t k = 0; k <= n; k++) {
        size_t j = k == 0 ? i : k - 1;
        if (j < n && (e = json_object_array_get_idx(entries, j)) &&
            json_object_object_get_ex(e, "name", &v) && json_object_get_string(v) &&
            strcmp(json_object_get_string(v), name) == 0)
            return e;
    }
    return NULL;
}

/* The manifest's "compressed" flag for a source. */
static compress_mode manifest_mode(json_object *entry, compress_mode fallback)
{
    json_object *v;
    if (!entry || !json_object_object_get_ex(entry, "compressed", &v))
        return fallback;
    return json_object_get_boolean(v) ? COMPRESS_LZMA : COMPRESS_NONE;
}

/* The manifest's summary rule ("summary": "float"), unless -O summary=
 * was given. */
static trowel_status manifest_rule(trowel_ctx *ctx, const trowel_create_params *p,
                                   json_object *manifest, builder *b)
{
    json_object *v;
    if (!manifest || trowel_options_get(p->options, p->option_count, "summary") ||
        !json_object_object_get_ex(manifest, "summary", &v))
        return TROWEL_OK;
    const char *rule = json_object_get_string(v);
    if (!rule || (strcmp(rule, "float") != 0 && strcmp(rule, "double") != 0))
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "the manifest's summary rule '%s' is not float or double",
                           rule ? rule : "");
    b->float_rule = strcmp(rule, "float") == 0;
    return TROWEL_OK;
}

/* The manifest's string pool ("strings", recorded when it holds stored
 * scenes): loaded in order, as it was, so that their indices stay valid. */
static trowel_status manifest_pool(trowel_ctx *ctx, json_object *manifest, builder *b)
{
    json_object *strings;
    if (!manifest || !json_object_object_get_ex(manifest, "strings", &strings))
        return TROWEL_OK;
    if (!json_object_is_type(strings, json_type_array))
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "the manifest's strings are not a list");
    size_t n = json_object_array_length(strings);
    for (size_t i = 0; i < n; i++) {
        json_object *v = json_object_array_get_idx(strings, i);
        if (!json_object_is_type(v, json_type_string))
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                               "the manifest's string %zu is not a string", i);
        trowel_status s = choreo_pool_append(b->pool, json_object_get_string(v));
        if (s != TROWEL_OK)
            return s;
    }
    b->stored_ok = true;
    return TROWEL_OK;
}

/* A stored scene's summary as the manifest recorded it, when the file is
 * the one extracted (same CRC-32) and every sound index is in the pool. */
static bool recorded_summary(builder *b, json_object *entry, uint32_t crc, build_scene *sc)
{
    json_object *v, *sounds;
    char hex[9];
    snprintf(hex, sizeof hex, "%08lx", (unsigned long)crc);
    if (!entry || !json_object_object_get_ex(entry, "bvcd_crc", &v) ||
        !json_object_get_string(v) || strcmp(json_object_get_string(v), hex) != 0 ||
        !json_object_object_get_ex(entry, "msecs", &v) ||
        !json_object_object_get_ex(entry, "sounds", &sounds) ||
        !json_object_is_type(sounds, json_type_array))
        return false;
    sc->msecs = (uint32_t)json_object_get_int64(v);
    if (b->version == 3) {
        if (!json_object_object_get_ex(entry, "lastspeech_msecs", &v))
            return false; /* a v2 scene in a v3 image: computed */
        sc->lastspeech_msecs = (uint32_t)json_object_get_int64(v);
    }
    size_t n = json_object_array_length(sounds);
    sc->sounds = trowel_mem_calloc(b->ctx, n ? n : 1, sizeof *sc->sounds);
    if (!sc->sounds)
        return false;
    for (size_t i = 0; i < n; i++) {
        int64_t id = json_object_get_int64(json_object_array_get_idx(sounds, i));
        if (id < 0 || (uint64_t)id >= choreo_pool_count(b->pool)) {
            trowel_mem_free(b->ctx, sc->sounds);
            sc->sounds = NULL;
            return false;
        }
        sc->sounds[i] = (uint32_t)id;
    }
    sc->sound_count = (uint32_t)n;
    return true;
}

/* A stored scene's summary computed from it (read with the pool). */
static trowel_status computed_summary(builder *b, const uint8_t *bvcd, size_t n, build_scene *sc)
{
    trowel_ctx *ctx = b->ctx;
    trowel_input *in;
    choreo_scene *scene = NULL;
    choreo_summary sum;
    memset(&sum, 0, sizeof sum);
    trowel_status s = trowel_input_open_memory(ctx, bvcd, n, "(bvcd)", &in);
    if (s != TROWEL_OK)
        return s;
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    s = choreo_read_bvcd(ctx, &r, b->pool, &scene);
    trowel_input_close(in);
    if (s == TROWEL_OK)
        s = choreo_summarize(ctx, scene, &sum);
    if (s == TROWEL_OK) {
        sc->msecs = b->float_rule ? sum.msecs_float : sum.msecs;
        sc->lastspeech_msecs = b->float_rule ? sum.lastspeech_msecs_float : sum.lastspeech_msecs;
        s = intern_sounds(b, sc, sum.sounds, sum.sound_count);
    }
    choreo_summary_free(ctx, &sum);
    choreo_scene_free(ctx, scene);
    return s;
}

/* A scene extracted as stored (.bvcd, its strings indices into the
 * manifest's pool): its bytes are kept exactly; its summary is the one the
 * manifest recorded while the file is unchanged, else computed from it. */
static trowel_status add_stored_source(builder *b, const trowel_source *src, json_object *entry)
{
    trowel_ctx *ctx = b->ctx;
    char name[PATH_MAX];
    trowel_status s = source_scene_name(ctx, src->name, name, sizeof name);
    if (s != TROWEL_OK)
        return s;
    trowel_set_entry(ctx, src->name);
    uint8_t *bvcd = NULL;
    size_t n = 0;
    s = trowel_source_load(ctx, src, &bvcd, &n);
    if (s == TROWEL_OK && (n < 4 || !bvcd || memcmp(bvcd, bvcd_id, 4) != 0))
        s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, 0, "not a BVCD (no \"bvcd\" signature)");
    build_scene *sc = NULL;
    if (s == TROWEL_OK && (s = builder_add(b, &sc)) == TROWEL_OK)
        s = trowel_mem_dup(ctx, name, &sc->name);
    if (s == TROWEL_OK && sc) {
        sc->crc = vsif_scene_crc(name);
        if (!recorded_summary(b, entry, trowel_crc32(0, bvcd, n), sc))
            s = computed_summary(b, bvcd, n, sc);
    }
    if (s != TROWEL_OK || !sc) {
        trowel_mem_free(ctx, bvcd);
        return s;
    }
    return store_bytes(b, sc, bvcd, n);
}

/* .bvcd sources without the manifest's pool cannot be rebuilt: one warning
 * for all of them. */
static void warn_stored_skipped(trowel_ctx *ctx, const trowel_create_params *p)
{
    size_t n = 0;
    const char *first = NULL;
    for (size_t i = 0; i < p->source_count; i++)
        if (vsif_ends_with_bvcd(p->sources[i].name) && n++ == 0)
            first = p->sources[i].name;
    if (n)
        trowel_warn(ctx, TROWEL_NO_OFFSET,
                    "%zu stored scene%s (.bvcd, first %s) skipped: their strings are indices "
                    "into the pool of the image they came from; rebuild with the manifest "
                    "their extraction wrote (create --manifest)",
                    n, n == 1 ? "" : "s", first);
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

trowel_status vsif_create(trowel_ctx *ctx, const trowel_create_params *p,
                                 json_object *manifest, trowel_sink *out)
{
    builder b = {.ctx = ctx};
    bool version_given = false;
    trowel_status s = parse_create_options(ctx, p, &b, &version_given);
    if (s == TROWEL_OK)
        s = manifest_version(ctx, manifest, &b, &version_given);
    if (s == TROWEL_OK)
        s = manifest_rule(ctx, p, manifest, &b);
    if (s != TROWEL_OK)
        return s;
    b.manifest = manifest;
    b.scene_mode = b.compress;
    if ((s = choreo_pool_new(ctx, &b.pool)) == TROWEL_OK)
        s = manifest_pool(ctx, manifest, &b);
    const char *base = trowel_options_get(p->options, p->option_count, "base");
    if (s == TROWEL_OK && base && b.stored_ok)
        s = trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                        "a manifest with stored scenes (.bvcd) brings its own string pool: "
                        "it cannot be merged into a base image");
    if (s == TROWEL_OK && !b.stored_ok)
        warn_stored_skipped(ctx, p);
    uint32_t *crcs = NULL;
    size_t ncrcs = 0;
    if (s == TROWEL_OK &&
        (s = trowel_mem_new_zeroed(ctx, p->source_count + 1, sizeof *crcs, &crcs)) == TROWEL_OK)
        s = source_crcs(ctx, p, b.stored_ok, crcs, &ncrcs);
    if (s == TROWEL_OK && base)
        s = add_base(&b, p, base, crcs, ncrcs, version_given);
    const trowel_source **order = NULL;
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, ncrcs + 1, sizeof *order, &order);
    for (size_t i = 0, k = 0; s == TROWEL_OK && i < p->source_count; i++)
        if (is_scene_source(p->sources[i].name, b.stored_ok))
            order[k++] = &p->sources[i];
    if (s == TROWEL_OK)
        qsort(order, ncrcs, sizeof *order, valve_order);
    /* -O compress= overrides the manifest's per-scene choice. */
    bool per_scene = manifest && !trowel_options_get(p->options, p->option_count, "compress");
    for (size_t i = 0; s == TROWEL_OK && i < ncrcs; i++) {
        json_object *entry =
            manifest_entry(manifest, (size_t)(order[i] - p->sources), order[i]->name);
        b.scene_mode = per_scene ? manifest_mode(entry, b.compress) : b.compress;
        s = vsif_ends_with_bvcd(order[i]->name) ? add_stored_source(&b, order[i], entry)
                                           : add_source(&b, order[i]);
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
