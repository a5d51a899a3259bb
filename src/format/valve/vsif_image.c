/*
 * scenes.image (VSIF): the image as stored, read into a vsif_image that the
 * reader (vsif.c: list, extract, verify, --names) and the builder
 * (vsif_build.c: create, merge onto a base) both work from: the header,
 * the string pool (offsets, then NUL-terminated strings), the 16-byte entry
 * table and each scene's summary, with what a damaged file lacks kept as
 * damage rather than refused; each scene's BVCD, raw or in Valve's LZMA
 * wrapper; which summary rounding rule the image follows; and the names
 * both halves hash: Valve's CRC-32 of "scenes\<path>.vcd" in lower case.
 *
 * Facts: ../shared/seeds/valve-scenes-image.txt,
 * ../shared/formats/valve-vsif-bvcd.md, Source SDK 2013 sceneimage.cpp and
 * SceneImageFile.h (learnt, not copied), the ez2 (v2) and tsp (v3) images
 * of the shared corpus; the layout is drawn in vsif.c, the details and
 * trowel's checks are in docs/formats/vsif.md.
 */
#include "format/valve/vsif_image.h"

#include "codec/vsif_lzma.h"
#include "core/bytes.h"
#include "core/input.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define POOL_STRING_MAX 4096 /* the tokenizer's limit is 1024; room to spare */

/* ---------------------------------------------------------------- names */

void vsif_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void vsif_image_free(trowel_ctx *ctx, vsif_image *img)
{
    for (size_t i = 0; img->scenes && i < img->count; i++) {
        trowel_mem_free(ctx, img->scenes[i].sounds);
        trowel_mem_free(ctx, img->scenes[i].decoded);
    }
    trowel_mem_free(ctx, img->scenes);
    trowel_mem_free(ctx, img->damage);
    choreo_pool_free(img->pool);
    memset(img, 0, sizeof *img);
}

/* Valve's name hash: CRC-32 of the name in lower case with '\' separators. */
uint32_t vsif_name_crc(const char *name)
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
uint32_t vsif_scene_crc(const char *name)
{
    const char *base = strncasecmp(name, "scenes/", 7) == 0 ? name + 7 : name;
    size_t n = strspn(base, "0123456789abcdef");
    if (n == 8 && strcmp(base + 8, ".vcd") == 0)
        return (uint32_t)strtoul(base, NULL, 16);
    return vsif_name_crc(name);
}

bool vsif_ends_with_vcd(const char *name)
{
    size_t n = strlen(name);
    return n >= 4 && strcasecmp(name + n - 4, ".vcd") == 0;
}

bool vsif_ends_with_bvcd(const char *name)
{
    size_t n = strlen(name);
    return n >= 5 && strcasecmp(name + n - 5, ".bvcd") == 0;
}

/* By hand rather than with snprintf: every scene is named at every open,
 * and snprintf was a tenth of reading the table of TF2's 5,099 scenes. */
void vsif_crc_name(uint32_t crc, bool stored, char *out)
{
    uint8_t be[4];
    for (int i = 0; i < 4; i++)
        be[i] = (uint8_t)(crc >> (24 - 8 * i));
    trowel_hex_encode(be, sizeof be, out);
    memcpy(out + 8, stored ? ".bvcd" : ".vcd", stored ? 6 : 5);
}

/* name with the extension of a scene written as text (.vcd) or as stored
 * (.bvcd); the rest, case included, is kept. */
void vsif_with_scene_extension(const char *name, bool stored, char *out, size_t cap)
{
    size_t n = strlen(name);
    if (stored && vsif_ends_with_vcd(name))
        snprintf(out, cap, "%.*s.bvcd", (int)(n - 4), name);
    else if (!stored && vsif_ends_with_bvcd(name))
        snprintf(out, cap, "%.*s.vcd", (int)(n - 5), name);
    else
        snprintf(out, cap, "%s", name);
}

/* The scene name for a candidate path: '\' become '/', everything from the
 * first "scenes" component on, or "scenes/" prepended when there is none;
 * ".vcd" appended when missing (the engine adds it too). */
trowel_status vsif_scene_name(trowel_ctx *ctx, const char *path, char *out, size_t cap)
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
    int n = start ? snprintf(out, cap, "%s%s", start, vsif_ends_with_vcd(start) ? "" : ".vcd")
                  : snprintf(out, cap, "scenes/%s%s", rest, vsif_ends_with_vcd(rest) ? "" : ".vcd");
    if (n < 0 || (size_t)n >= cap)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "name too long: %.64s...",
                           path);
    return TROWEL_OK;
}

/* A reader over the scene's bytes as they lie in input in, at in's
 * offsets. */
static trowel_status scene_window(trowel_ctx *ctx, trowel_input *in, const vsif_scene *sc,
                                  trowel_reader *out)
{
    trowel_reader whole;
    trowel_reader_init(&whole, ctx, in);
    return trowel_reader_sub(&whole, sc->data_offset, sc->data_length, out);
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
    trowel_status s = trowel_mem_resize_array(ctx, &img->damage, img->damage_count + 1,
                                              sizeof *img->damage);
    if (s != TROWEL_OK)
        return s;
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
    char *str;
    trowel_status s = choreo_pool_new(ctx, &img->pool);
    if (s != TROWEL_OK || (s = trowel_mem_new(ctx, POOL_STRING_MAX, &str)) != TROWEL_OK)
        return s;
    s = trowel_reader_seek(r, VSIF_HEADER_SIZE);
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
    if ((s = trowel_mem_new_zeroed(ctx, count ? count : 1, sizeof *sc->sounds, &sc->sounds)) !=
        TROWEL_OK)
        return s;
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
    trowel_status s = trowel_reader_seek(r, img->entry_offset + (uint64_t)slot * VSIF_ENTRY_SIZE);
    if (s != TROWEL_OK || (s = trowel_read_u32le(r, &sc->crc)) != TROWEL_OK ||
        (s = trowel_read_u32le(r, &sc->data_offset)) != TROWEL_OK ||
        (s = trowel_read_u32le(r, &sc->data_length)) != TROWEL_OK ||
        (s = trowel_read_u32le(r, &sc->summary_offset)) != TROWEL_OK)
        return s;
    char name[VSIF_CRC_NAME_SIZE];
    vsif_crc_name(sc->crc, false, name);
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
    uint64_t room = img->entry_offset <= size ? (size - img->entry_offset) / VSIF_ENTRY_SIZE : 0;
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
    if ((s = trowel_mem_new_zeroed(ctx, slots ? slots : 1, sizeof *img->scenes, &img->scenes)) !=
        TROWEL_OK)
        return s;
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
trowel_status vsif_image_read(trowel_reader *r, vsif_image *img)
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

void vsif_scene_bvcd_close(trowel_ctx *ctx, vsif_scene_bvcd *b)
{
    trowel_input_close(b->mem);
    trowel_mem_free(ctx, b->decoded);
    memset(b, 0, sizeof *b);
}

trowel_status vsif_scene_fetch(trowel_ctx *ctx, trowel_input *in, const vsif_scene *sc,
                               uint8_t **blob, size_t *blob_size)
{
    *blob = NULL;
    *blob_size = 0;
    if (sc->decoded)
        return TROWEL_OK;
    trowel_reader r;
    trowel_status s = scene_window(ctx, in, sc, &r);
    return s != TROWEL_OK ? s : trowel_reader_load(&r, blob, blob_size);
}

trowel_status vsif_scene_bvcd_from(trowel_ctx *ctx, trowel_vsif_lzma_decoder *lzma,
                                   const vsif_scene *sc, const uint8_t *blob, size_t blob_size,
                                   vsif_scene_bvcd *b)
{
    memset(b, 0, sizeof *b);
    if (!sc->compressed) {
        /* The BVCD as it lies in the file, at the file's offsets (as a
         * window over the file would give them). */
        trowel_status s =
            trowel_input_open_memory_at(ctx, blob, blob_size, sc->data_offset, "(bvcd)", &b->mem);
        if (s != TROWEL_OK)
            return s;
        s = scene_window(ctx, b->mem, sc, &b->r);
        if (s != TROWEL_OK)
            vsif_scene_bvcd_close(ctx, b);
        return s;
    }
    const uint8_t *bvcd = sc->decoded; /* the survey's (the image owns it) */
    size_t size = sc->decoded_size;
    if (!bvcd) {
        trowel_status s =
            lzma ? trowel_vsif_lzma_decoder_run(lzma, blob, blob_size, sc->data_offset,
                                                &b->decoded, &size)
                 : trowel_vsif_lzma_decode(ctx, blob, blob_size, sc->data_offset, &b->decoded,
                                           &size);
        if (s != TROWEL_OK)
            return s;
        bvcd = b->decoded;
    }
    trowel_status s = trowel_input_open_memory(ctx, bvcd, size, "(bvcd)", &b->mem);
    if (s == TROWEL_OK)
        trowel_reader_init(&b->r, ctx, b->mem);
    else
        vsif_scene_bvcd_close(ctx, b);
    return s;
}

trowel_status vsif_scene_bvcd_open(trowel_ctx *ctx, trowel_input *in, const vsif_scene *sc,
                                     vsif_scene_bvcd *b)
{
    memset(b, 0, sizeof *b);
    if (!sc->compressed) /* a window over the file */
        return scene_window(ctx, in, sc, &b->r);
    uint8_t *blob;
    size_t blob_size;
    trowel_status s = vsif_scene_fetch(ctx, in, sc, &blob, &blob_size);
    if (s == TROWEL_OK)
        s = vsif_scene_bvcd_from(ctx, NULL, sc, blob, blob_size, b);
    trowel_mem_free(ctx, blob);
    return s;
}

/* Parses the scene with the image's pool; *trailing (if wanted) counts the
 * bytes after it, which the engine never looks at. */
trowel_status vsif_parse_scene(trowel_ctx *ctx, trowel_input *in, const vsif_scene *sc,
                                 const choreo_pool *pool, choreo_scene **out,
                                 uint64_t *bvcd_size, uint64_t *trailing)
{
    vsif_scene_bvcd b;
    trowel_status s = vsif_scene_bvcd_open(ctx, in, sc, &b);
    if (s != TROWEL_OK)
        return s;
    s = choreo_read_bvcd(ctx, &b.r, pool, out);
    if (bvcd_size)
        *bvcd_size = trowel_reader_size(&b.r);
    if (trailing)
        *trailing = s == TROWEL_OK ? trowel_reader_remaining(&b.r) : 0;
    vsif_scene_bvcd_close(ctx, &b);
    return s;
}

/* One summary value against the two rules: a vote when only one fits. */
static void count_vote(vsif_image *img, uint32_t stored, uint32_t by_double, uint32_t by_float)
{
    if (by_double == by_float)
        return;
    if (stored == by_float)
        img->float_votes++;
    else if (stored == by_double)
        img->double_votes++;
}

/* The rule to keep when building from (or on) this image: the one most of
 * its scenes follow, double when none tells. */
bool vsif_image_uses_float(const vsif_image *img)
{
    return img->float_votes > img->double_votes;
}

void vsif_scene_forget_decoded(trowel_ctx *ctx, vsif_image *img, vsif_scene *sc)
{
    if (!sc->decoded)
        return;
    img->decoded_kept -= sc->decoded_size;
    trowel_mem_free(ctx, sc->decoded);
    sc->decoded = NULL;
    sc->decoded_size = 0;
}

void vsif_study_of(const vsif_scene *sc, const choreo_bvcd_facts *facts, vsif_study *st)
{
    memset(st, 0, sizeof *st);
    st->parsed = true;
    st->missing = facts->missing;
    st->first = facts->first_missing;
    if (sc->summary_ok) {
        st->summarized = true;
        st->msecs = choreo_msecs(facts->stop_time, false);
        st->msecs_float = choreo_msecs(facts->stop_time, true);
        st->lastspeech = choreo_msecs(facts->last_speech_time, false);
        st->lastspeech_float = choreo_msecs(facts->last_speech_time, true);
    }
}

/* Reads the scene in b (choreo_survey_bvcd: no model is built) and works
 * out its summary's times. Not OK: the scene could not be read
 * (st->parsed is false). */
static trowel_status study_scene(trowel_ctx *ctx, const vsif_image *img, const vsif_scene *sc,
                                 vsif_scene_bvcd *b, vsif_study *st)
{
    memset(st, 0, sizeof *st);
    choreo_bvcd_facts facts;
    trowel_status s = choreo_survey_bvcd(ctx, &b->r, img->pool, &facts);
    if (s != TROWEL_OK)
        return s;
    vsif_study_of(sc, &facts, st);
    uint64_t size = trowel_reader_size(&b->r);
    if (b->decoded && size <= UINT32_MAX) {
        st->decoded = b->decoded;
        st->decoded_size = (uint32_t)size;
        b->decoded = NULL;
    }
    return TROWEL_OK;
}

/* Hands the decoded BVCD of st (on from) to sc when the budget allows
 * (and, from a worker, ctx's limit takes it); else frees it. */
static void keep_decoded(trowel_ctx *ctx, trowel_ctx *from, vsif_image *img, vsif_scene *sc,
                         vsif_study *st)
{
    uint64_t budget = trowel_ctx_mem_limit(ctx) / 16;
    if (budget > VSIF_DECODED_BUDGET_MAX)
        budget = VSIF_DECODED_BUDGET_MAX;
    uint64_t size = st->decoded_size;
    if (st->decoded && img->decoded_kept + size <= budget &&
        (from == ctx || trowel_mem_take_over(from, ctx, st->decoded))) {
        sc->decoded = st->decoded;
        sc->decoded_size = st->decoded_size;
        img->decoded_kept += size;
    } else {
        trowel_mem_free(from, st->decoded);
    }
    st->decoded = NULL;
}

trowel_status vsif_apply_study(trowel_ctx *ctx, trowel_ctx *from, vsif_image *img, vsif_scene *sc,
                               vsif_study *st, trowel_status s)
{
    if (!st->parsed) {
        if (s == TROWEL_ERR_NOMEM)
            return s;
        trowel_ctx_clear_error(ctx);
        return TROWEL_OK;
    }
    keep_decoded(ctx, from, img, sc, st);
    sc->textless = st->missing > 0;
    sc->bad_index = st->first;
    if (st->summarized) {
        count_vote(img, sc->msecs, st->msecs, st->msecs_float);
        if (img->version == 3)
            count_vote(img, sc->lastspeech_msecs, st->lastspeech, st->lastspeech_float);
    }
    return TROWEL_OK; /* a scene read in full ends nothing */
}

trowel_status vsif_survey_scene(trowel_ctx *ctx, trowel_input *in, vsif_image *img,
                                vsif_scene *sc)
{
    vsif_scene_bvcd b;
    vsif_study st;
    memset(&st, 0, sizeof st);
    trowel_status s = vsif_scene_bvcd_open(ctx, in, sc, &b);
    if (s == TROWEL_OK) {
        s = study_scene(ctx, img, sc, &b, &st);
        vsif_scene_bvcd_close(ctx, &b);
    }
    return vsif_apply_study(ctx, ctx, img, sc, &st, s);
}

/* Scenes surveyed by the worker while this thread surveys the batch before
 * them. Their bytes are read here (the input is this thread's); the worker
 * decodes (when compressed), parses and times them in order and stops at
 * the first it cannot finish within its memory share. */
enum { SURVEY_BATCH = 64 };

typedef struct survey_piece {
    uint8_t *blob; /* on the survey's context */
    size_t blob_size;
    vsif_study st;
    trowel_status status;
    size_t warnings_from, warnings_to; /* of the worker's */
} survey_piece;

typedef struct survey_batch {
    trowel_worker *w;
    const vsif_image *img;
    uint32_t first, count; /* scenes [first, first + count) */
    uint32_t done;         /* the worker's: surveyed in full */
    survey_piece piece[SURVEY_BATCH];
} survey_batch;

/* Whether a piece's status means the worker cannot go on and this thread
 * must do the piece: out of the worker's memory share. */
static bool beyond_share(trowel_status s)
{
    return s == TROWEL_ERR_LIMIT || s == TROWEL_ERR_NOMEM;
}

static trowel_status survey_batch_run(trowel_ctx *ctx, void *arg)
{
    survey_batch *b = arg;
    for (uint32_t k = 0; k < b->count; k++) {
        survey_piece *p = &b->piece[k];
        const vsif_scene *sc = &b->img->scenes[b->first + k];
        p->warnings_from = trowel_worker_warnings(b->w);
        vsif_scene_bvcd bvcd;
        memset(&p->st, 0, sizeof p->st);
        p->status = vsif_scene_bvcd_from(ctx, NULL, sc, p->blob, p->blob_size, &bvcd);
        if (p->status == TROWEL_OK) {
            p->status = study_scene(ctx, b->img, sc, &bvcd, &p->st);
            vsif_scene_bvcd_close(ctx, &bvcd);
        }
        p->warnings_to = trowel_worker_warnings(b->w);
        if (beyond_share(p->status) || trowel_worker_lost_warnings(b->w)) {
            trowel_mem_free(ctx, p->st.decoded);
            p->st.decoded = NULL;
            return TROWEL_OK;
        }
        b->done = k + 1;
        trowel_ctx_clear_error(ctx);
    }
    return TROWEL_OK;
}

/* Frees what b holds: the bytes read for it, and (finished: the worker's
 * job ran to its end here, not in a parent that forked) what the worker
 * decoded and nobody took; b is then empty. */
static void drop_survey_batch(trowel_ctx *ctx, survey_batch *b, bool finished)
{
    for (uint32_t k = 0; k < b->count; k++) {
        trowel_mem_free(ctx, b->piece[k].blob);
        if (finished)
            trowel_mem_free(trowel_worker_ctx(b->w), b->piece[k].st.decoded);
    }
    b->count = b->done = 0;
}

/* Reads the bytes of scenes [first, end) (as far as they are readable)
 * and starts the worker on them; false when it does not
 * start (nothing is then left to free). */
static bool survey_ahead(trowel_ctx *ctx, trowel_input *in, const vsif_image *img,
                         trowel_worker *w, survey_batch *b, uint32_t first, uint32_t end)
{
    memset(b, 0, sizeof *b);
    b->w = w;
    b->img = img;
    b->first = first;
    trowel_error before = ctx->last_error;
    while (first + b->count < end) {
        survey_piece *p = &b->piece[b->count];
        const vsif_scene *sc = &img->scenes[first + b->count];
        if (vsif_scene_fetch(ctx, in, sc, &p->blob, &p->blob_size) != TROWEL_OK)
            break; /* surveying it here will say why */
        b->count++;
    }
    ctx->last_error = before;
    if (b->count && trowel_worker_start(w, survey_batch_run, b, ctx->entry))
        return true;
    drop_survey_batch(ctx, b, false);
    return false;
}

/* Waits for the worker's batch and, when this thread's own scenes went
 * well (s), applies what it surveyed in scene order. Returns the survey's
 * status; *done says how many scenes of the batch are surveyed. */
static trowel_status survey_behind(trowel_ctx *ctx, vsif_image *img, survey_batch *b,
                                   trowel_status s, uint32_t *done)
{
    *done = 0;
    bool finished = trowel_worker_wait(b->w); /* false: lost to a fork */
    for (uint32_t k = 0; finished && s == TROWEL_OK && k < b->done; k++) {
        survey_piece *p = &b->piece[k];
        trowel_worker_pass_warnings(b->w, ctx, p->warnings_from, p->warnings_to);
        s = vsif_apply_study(ctx, trowel_worker_ctx(b->w), img, &img->scenes[b->first + k],
                             &p->st, p->status);
        *done = k + 1;
    }
    drop_survey_batch(ctx, b, finished); /* what was not applied */
    return s;
}

/* A survey that hands batches to a worker. When this thread's own work
 * would pass the memory limit, the worker's batch in flight gives way
 * (survey_give_way): it is waited for and dropped, with the bytes read for
 * it, and this thread surveys those scenes itself, as without a worker;
 * no batch is handed out after. */
typedef struct survey_run {
    trowel_ctx *ctx;
    survey_batch *b;
    bool given_way;
    void (*prev_fn)(void *user); /* what was set before the survey */
    void *prev_user;
} survey_run;

static void survey_give_way(void *user)
{
    survey_run *run = user;
    survey_batch *b = run->b;
    run->given_way = true;
    if (trowel_worker_busy(b->w))
        drop_survey_batch(run->ctx, b, trowel_worker_wait(b->w));
    if (run->prev_fn)
        run->prev_fn(run->prev_user);
}

/* Reads every scene once when the image is opened, for two things only
 * the scenes can tell: a scene whose string indices fall outside the pool
 * cannot become text (it is then extracted as stored, named .bvcd), and a
 * scene whose summary fits only one rounding rule tells which rule the
 * image's builder followed. A scene that cannot be read at all is left for
 * extract and verify to report, as before. The decoded BVCDs stay with
 * the image (keep_decoded), so that reading a scene does not decode it
 * again. With a worker, batches go in pairs: the worker does the second
 * while this thread does the first, and the outcomes are applied in scene
 * order, so the image (and every warning and error) ends the same either
 * way. */
trowel_status vsif_image_survey(trowel_ctx *ctx, trowel_input *in, vsif_image *img,
                                trowel_worker *w)
{
    return vsif_image_survey_from(ctx, in, img, w, 0);
}

trowel_status vsif_image_survey_from(trowel_ctx *ctx, trowel_input *in, vsif_image *img,
                                     trowel_worker *w, uint32_t first_scene)
{
    survey_run run = {ctx, NULL, false, ctx->reclaim_fn, ctx->reclaim_user};
    trowel_error before = ctx->last_error;
    if (w && img->count - first_scene > SURVEY_BATCH &&
        trowel_mem_new(ctx, sizeof *run.b, &run.b) != TROWEL_OK)
        ctx->last_error = before; /* then this thread does it all */
    survey_batch *b = run.b;
    if (b)
        trowel_mem_set_reclaim(ctx, survey_give_way, &run);
    trowel_status s = TROWEL_OK;
    for (uint32_t i = first_scene; s == TROWEL_OK && i < img->count;) {
        uint32_t mine = img->count - i < SURVEY_BATCH ? img->count - i : SURVEY_BATCH;
        uint32_t first = i + mine;
        uint32_t end = img->count - first < SURVEY_BATCH ? img->count : first + SURVEY_BATCH;
        bool ahead = b && !run.given_way && first < end &&
                     survey_ahead(ctx, in, img, w, b, first, end);
        for (uint32_t k = 0; s == TROWEL_OK && k < mine; k++)
            s = vsif_survey_scene(ctx, in, img, &img->scenes[i + k]);
        i += mine;
        if (ahead) {
            uint32_t done;
            s = survey_behind(ctx, img, b, s, &done);
            i += done;
        }
    }
    if (b)
        trowel_mem_set_reclaim(ctx, run.prev_fn, run.prev_user);
    trowel_mem_free(ctx, b);
    return s;
}
