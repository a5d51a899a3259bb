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
 * This file lists, extracts (reading ahead on a worker, and surveying as it
 * goes when read in order) and names; vsif_verify.c verifies; vsif_image.c
 * reads the image into what they and vsif_build.c (create, merge) share
 * (vsif_image.h, and vsif_state.h for the open image).
 */
#include "format/valve/vsif_build.h"
#include "format/valve/vsif_image.h"
#include "format/valve/vsif_state.h"

#include "codec/vsif_lzma.h"
#include "core/sink.h"

#include <ctype.h>
#include <json-c/json.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Read in order, the caller surveys and converts the scenes of a gap
 * before each of the worker's batches itself (see "reading ahead" and
 * "settling" below): GAP_FIRST at first, then a step more after a batch
 * it had to wait for and a step less after one that was ready. */
enum { TEXT_BATCH_FIRST = 8, GAP_FIRST = 16, GAP_STEP = 4 };

typedef struct text_piece {
    const char *entry; /* its name, for its errors and warnings */
    uint8_t *blob; /* the compressed bytes, on the archive's context */
    size_t blob_size;
    uint8_t *text; /* the text VCD: on the worker's context, then the archive's */
    size_t text_size;
    trowel_status status;
    trowel_error error;                /* status not OK */
    size_t warnings_from, warnings_to; /* the worker's, then the batch's */
    bool handed_out;                   /* its entry was read */
    vsif_study study;                  /* the batch surveys: what its scene showed */
} text_piece;

struct text_batch {
    trowel_worker *w;
    const vsif_image *img;
    size_t first, count; /* entries [first, first + count) */
    size_t done;         /* made by the worker; the rest are the reader's */
    bool surveys;        /* its scenes are not surveyed yet: the worker does it */
    /* texts handed out before the batch started, for the worker to free
     * first (it made them: see spend_text) */
    void *spent[2 * TEXT_BATCH_MAX];
    size_t spent_count;
    atomic_bool finished; /* the worker's job returned (for the gap) */
    trowel_error *warnings; /* once taken: the worker's, on the archive's context */
    size_t warning_count;
    text_piece piece[TEXT_BATCH_MAX];
};

static trowel_status settled_all(trowel_archive *a, vsif_state *st);
static void settle_batch(trowel_archive *a, vsif_state *st, text_batch *b);

/* ------------------------------------------------------------- reading */

static int vsif_bid(trowel_reader *r)
{
    uint8_t h[VSIF_HEADER_SIZE];
    if (trowel_read_bytes(r, h, sizeof h) != TROWEL_OK || memcmp(h, vsif_id, 4) != 0)
        return TROWEL_BID_NONE;
    uint32_t version = (uint32_t)h[4] | (uint32_t)h[5] << 8 | (uint32_t)h[6] << 16 |
                       (uint32_t)h[7] << 24;
    return version == 2 || version == 3 ? TROWEL_BID_STRONG : TROWEL_BID_MAGIC;
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


/* Which rounding rule the image's summaries follow: "double", "float",
 * "either" (no scene tells them apart) or "mixed" (scenes disagree). */
static const char *summary_rule_name(const vsif_image *img)
{
    if (img->float_votes && img->double_votes)
        return "mixed";
    return img->float_votes ? "float" : img->double_votes ? "double" : "either";
}

/* The entry of scene sc; its "sounds" are the pool's strings, listed from
 * sounds (which lives as long as the archive, as the pool does). */
static trowel_status add_entry(trowel_archive *a, const vsif_image *img, const vsif_scene *sc,
                               const char **sounds)
{
    char name[VSIF_CRC_NAME_SIZE];
    vsif_crc_name(sc->crc, sc->textless, name);
    trowel_entry e = {.name = name, .size = sc->size, .packed_size = sc->data_length,
                      .offset = sc->data_offset, .method = sc->compressed ? "lzma" : "stored"};
    trowel_props *x;
    trowel_status s = trowel_archive_add(a, &e, &x);
    if (s != TROWEL_OK)
        return s;
    for (uint32_t i = 0; i < sc->sound_count; i++)
        sounds[i] = choreo_pool_get(img->pool, sc->sounds[i]);
    if ((s = trowel_props_add_hex(x, "crc", sc->crc)) == TROWEL_OK &&
        (s = trowel_props_add_bool(x, "compressed", sc->compressed)) == TROWEL_OK &&
        sc->summary_ok && /* a damaged summary shows nothing */
        (s = trowel_props_add_uint(x, "msecs", sc->msecs)) == TROWEL_OK &&
        (img->version != 3 ||
         (s = trowel_props_add_uint(x, "lastspeech_msecs", sc->lastspeech_msecs)) == TROWEL_OK))
        s = trowel_props_add_list_kept(x, "sounds", sounds, sc->sound_count);
    return s;
}

/* Every scene's entry, their sounds listed from one array of the pool's
 * strings rather than copied into each entry. */
static trowel_status add_entries(trowel_archive *a, vsif_state *st)
{
    const vsif_image *img = &st->img;
    size_t total = 0;
    for (uint32_t i = 0; i < img->count; i++)
        total += img->scenes[i].sound_count; /* each held as indices already */
    trowel_status s =
        trowel_mem_new_zeroed(a->ctx, total ? total : 1, sizeof *st->sounds, &st->sounds);
    for (uint32_t i = 0, at = 0; s == TROWEL_OK && i < img->count; i++) {
        s = add_entry(a, img, &img->scenes[i], st->sounds + at);
        at += img->scenes[i].sound_count;
    }
    return s;
}

static trowel_status vsif_open(trowel_archive *a, trowel_reader *r)
{
    vsif_state *st;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    st->next_in_turn = SIZE_MAX;
    vsif_image *img = &st->img;
    s = vsif_image_read(r, img);
    st->worker = trowel_worker_new(a->ctx);
    st->gap = GAP_FIRST;
    if (s == TROWEL_OK && !a->in_order) /* else as scenes are reached (vsif_settle) */
        s = vsif_image_survey(a->ctx, a->in, img, st->worker);
    if (s != TROWEL_OK)
        return s;
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", "vsif")) ||
        (s = trowel_props_add_uint(info, "version", img->version)) ||
        (s = trowel_props_add_uint(info, "scene_count", img->scene_count)) ||
        (s = trowel_props_add_uint(info, "string_count", img->string_count)) ||
        (s = trowel_props_add_hex(info, "entry_offset", img->entry_offset)))
        return s;
    if (s == TROWEL_OK)
        s = add_entries(a, st);
    if (s == TROWEL_OK && img->damage_count) {
        warn_damage(a->ctx, img);
        trowel_archive_mark_damaged(a);
    }
    if (s == TROWEL_OK && (!a->in_order || !a->entry_count))
        s = settled_all(a, st); /* else once the last scene is (vsif_settle) */
    return s;
}

/* The CRC-32 of a scene's BVCD as extract writes it (decompressed). */
static trowel_status bvcd_crc(trowel_ctx *ctx, trowel_input *in, const vsif_scene *sc,
                              uint32_t *crc)
{
    vsif_scene_bvcd b;
    uint8_t *bytes = NULL;
    size_t n = 0;
    trowel_status s = vsif_scene_bvcd_open(ctx, in, sc, &b);
    if (s == TROWEL_OK)
        s = trowel_reader_load(&b.r, &bytes, &n);
    vsif_scene_bvcd_close(ctx, &b);
    *crc = s == TROWEL_OK ? trowel_crc32(0, bytes, n) : 0;
    trowel_mem_free(ctx, bytes);
    return s;
}

/* A scene written as stored: its summary as the image holds it, so that
 * create keeps it (faults included) as a merge keeps a base scene, and the
 * CRC of the BVCD it belongs to (an edited file gets a new summary). */
static trowel_status manifest_stored(trowel_archive *a, const vsif_scene *sc, json_object *e)
{
    const vsif_state *st = a->priv;
    uint32_t crc;
    trowel_status s = bvcd_crc(a->ctx, a->in, sc, &crc);
    if (s != TROWEL_OK)
        return s;
    char hex[9];
    snprintf(hex, sizeof hex, "%08lx", (unsigned long)crc);
    json_object_object_add(e, "bvcd", json_object_new_boolean(true));
    json_object_object_add(e, "bvcd_crc", json_object_new_string(hex));
    if (!sc->summary_ok) /* damaged: create computes one */
        return TROWEL_OK;
    json_object_object_add(e, "msecs", json_object_new_int64(sc->msecs));
    if (st->img.version == 3)
        json_object_object_add(e, "lastspeech_msecs", json_object_new_int64(sc->lastspeech_msecs));
    json_object *sounds = json_object_new_array();
    for (uint32_t i = 0; i < sc->sound_count; i++)
        json_object_array_add(sounds, json_object_new_int64(sc->sounds[i]));
    json_object_object_add(e, "sounds", sounds);
    return TROWEL_OK;
}

/* What create needs besides the names: the version and, per scene, whether
 * it was stored compressed (LZMA streams themselves cannot be reproduced:
 * Valve's encoder is not liblzma). Scenes written as stored BVCD (--raw,
 * or a scene that cannot become text) are marked "bvcd" with their summary,
 * and the image's string pool is recorded in order ("strings"): their
 * string indices point into it. A float-rule image records "summary". */
static trowel_status vsif_manifest(trowel_archive *a, json_object *m)
{
    const vsif_state *st = a->priv;
    const vsif_image *img = &st->img;
    json_object *entries;
    json_object_object_add(m, "version", json_object_new_int((int)img->version));
    if (vsif_image_uses_float(img))
        json_object_object_add(m, "summary", json_object_new_string("float"));
    if (!json_object_object_get_ex(m, "entries", &entries))
        return TROWEL_OK;
    bool any_stored = false;
    trowel_status s = TROWEL_OK;
    for (size_t i = 0; s == TROWEL_OK && i < json_object_array_length(entries) && i < img->count;
         i++) {
        json_object *e = json_object_array_get_idx(entries, i);
        char crc[9];
        snprintf(crc, sizeof crc, "%08lx", (unsigned long)img->scenes[i].crc);
        json_object_object_add(e, "crc", json_object_new_string(crc));
        json_object_object_add(e, "compressed", json_object_new_boolean(img->scenes[i].compressed));
        if (vsif_written_stored(st, i)) {
            any_stored = true;
            trowel_set_entry(a->ctx, a->entries[i].name);
            s = manifest_stored(a, &img->scenes[i], e);
        }
    }
    trowel_set_entry(a->ctx, NULL);
    if (s != TROWEL_OK || !any_stored)
        return s;
    json_object *strings = json_object_new_array();
    for (uint32_t i = 0; i < choreo_pool_count(img->pool); i++)
        json_object_array_add(strings, json_object_new_string(choreo_pool_get(img->pool, i)));
    json_object_object_add(m, "strings", strings);
    return TROWEL_OK;
}

/* ---- reading ahead. Extracting every scene, the caller writes scenes
 * while the worker decodes and prints the next ones: after an entry is
 * read, the worker starts on a batch of the entries after it that become
 * text (their bytes are read here, as the input is this thread's), and
 * reading one of them then takes the batch and hands out
 * the text, warnings and error the worker made for it. A text depends only
 * on the scene's bytes, so a piece may be handed out whenever its entry
 * is read. Entries the worker could not do within its memory share, and
 * entries outside the batches, are done here, as without a worker. */

/* Reads the scene in b as text needs it and surveys it on the way (st):
 * one read where the survey and the text would take two. A strict read
 * stops at a string index outside the pool, where the survey reads on, so
 * a failed read is surveyed again to tell a scene that cannot become text
 * (OK, st->missing set, no scene) from one that cannot be read (the strict
 * read's error, as converting it would report). */
static trowel_status read_surveying(trowel_ctx *ctx, const vsif_image *img, const vsif_scene *sc,
                                    vsif_scene_bvcd *b, choreo_scene **scene, vsif_study *st)
{
    memset(st, 0, sizeof *st);
    choreo_bvcd_facts facts;
    uint64_t start = trowel_reader_tell(&b->r);
    trowel_status s = choreo_read_bvcd_facts(ctx, &b->r, img->pool, scene, &facts);
    if (s == TROWEL_OK || s == TROWEL_ERR_LIMIT || s == TROWEL_ERR_NOMEM) {
        if (s == TROWEL_OK)
            vsif_study_of(sc, &facts, st);
        return s;
    }
    trowel_error strict = ctx->last_error;
    if (trowel_reader_seek(&b->r, start) == TROWEL_OK &&
        choreo_survey_bvcd(ctx, &b->r, img->pool, &facts) == TROWEL_OK && facts.missing) {
        vsif_study_of(sc, &facts, st);
        trowel_ctx_clear_error(ctx);
        return TROWEL_OK;
    }
    ctx->last_error = strict;
    return strict.status;
}

static trowel_status text_batch_run(trowel_ctx *ctx, void *arg)
{
    text_batch *b = arg;
    for (size_t k = 0; k < b->spent_count; k++)
        trowel_mem_release(b->spent[k]);
    b->spent_count = 0;
    /* One LZMA decoder for the batch's scenes. (Not kept from batch to
     * batch: the worker's context must be empty between jobs.) */
    trowel_vsif_lzma_decoder *lzma = NULL;
    if (trowel_vsif_lzma_decoder_new(ctx, &lzma) != TROWEL_OK)
        trowel_ctx_clear_error(ctx); /* each scene sets one up, as on one thread */
    for (size_t k = 0; k < b->count; k++) {
        text_piece *p = &b->piece[k];
        const vsif_scene *sc = &b->img->scenes[b->first + k];
        vsif_scene_bvcd bvcd;
        choreo_scene *scene = NULL;
        trowel_sink *sink = NULL;
        p->warnings_from = trowel_worker_warnings(b->w);
        trowel_set_entry(ctx, p->entry);
        trowel_status s = vsif_scene_bvcd_from(ctx, lzma, sc, p->blob, p->blob_size, &bvcd);
        if (s == TROWEL_OK) {
            s = b->surveys ? read_surveying(ctx, b->img, sc, &bvcd, &scene, &p->study)
                           : choreo_read_bvcd(ctx, &bvcd.r, b->img->pool, &scene);
            vsif_scene_bvcd_close(ctx, &bvcd);
        }
        /* No scene (and OK): it cannot become text, and is written as
         * stored. What a scene writes before a failure (whole pieces, see
         * CHOREO_VCD_WRITE_SIZE) is kept too: one thread would have
         * written it to the caller's sink. */
        if (s == TROWEL_OK && scene && (s = trowel_sink_open_memory(ctx, &sink)) == TROWEL_OK) {
            s = choreo_write_vcd(ctx, scene, sink);
            trowel_status t = trowel_sink_take(sink, &p->text, &p->text_size);
            if (s == TROWEL_OK)
                s = t;
        }
        trowel_sink_discard(sink);
        choreo_scene_free(ctx, scene);
        p->warnings_to = trowel_worker_warnings(b->w);
        if (s == TROWEL_ERR_LIMIT || s == TROWEL_ERR_NOMEM || trowel_worker_lost_warnings(b->w)) {
            trowel_mem_free(ctx, p->text);
            p->text = NULL;
            break; /* this piece and the rest are the reader's */
        }
        p->status = s;
        if (s != TROWEL_OK)
            p->error = ctx->last_error;
        trowel_ctx_clear_error(ctx);
        b->done = k + 1;
    }
    trowel_vsif_lzma_decoder_free(lzma);
    atomic_store_explicit(&b->finished, true, memory_order_release);
    return TROWEL_OK;
}

/* Frees what is left of b's pieces (texts on ctx, or on the worker's
 * before the batch is taken) and empties it. */
static void clear_batch(trowel_ctx *ctx, trowel_ctx *texts_ctx, text_batch *b)
{
    for (size_t k = 0; k < b->count; k++) {
        trowel_mem_free(ctx, b->piece[k].blob);
        trowel_mem_free(texts_ctx, b->piece[k].text);
    }
    for (size_t k = 0; k < b->spent_count; k++) /* its job did not run */
        trowel_mem_release(b->spent[k]);
    trowel_mem_free(ctx, b->warnings);
    trowel_worker *w = b->w;
    memset(b, 0, sizeof *b);
    b->w = w;
}

/* A batch whose job was lost to a fork: what it made is a copy caught
 * part-way, neither used nor freed. */
static void forget_texts(text_batch *b)
{
    for (size_t k = 0; k < b->count; k++)
        b->piece[k].text = NULL;
    b->done = 0;
    b->spent_count = 0;
}

/* A text handed out goes to the worker, to be freed at the start of its
 * next batch: it allocated the text, and freeing it here waits on its
 * heap's lock while it allocates (a tenth of the reading thread's own
 * work, extracting TF2's scenes). Freed here when there is no room. */
static void spend_text(trowel_archive *a, vsif_state *st, uint8_t *text)
{
    if (text && st->ahead && st->spent_count < sizeof st->spent / sizeof *st->spent)
        st->spent[st->spent_count++] = text;
    else
        trowel_mem_free(a->ctx, text);
}

/* Frees the texts handed out since the worker's last batch started. */
static void free_spent(trowel_archive *a, vsif_state *st)
{
    for (size_t k = 0; k < st->spent_count; k++)
        trowel_mem_free(a->ctx, st->spent[k]);
    st->spent_count = 0;
}

/* Waits for the worker's batch and forgets it. */
static void drop_ahead(trowel_archive *a, vsif_state *st)
{
    if (!st->worker || !trowel_worker_busy(st->worker))
        return;
    if (!trowel_worker_wait(st->worker))
        forget_texts(st->ahead);
    clear_batch(a->ctx, trowel_worker_ctx(st->worker), st->ahead);
    st->batch_size = TEXT_BATCH_FIRST;
}

/* Drops what the batches hold (entries are renamed, or become text
 * differently); reading ahead starts again from the next entry read. */
static void forget_batches(trowel_archive *a, vsif_state *st)
{
    drop_ahead(a, st);
    if (st->ready)
        clear_batch(a->ctx, a->ctx, st->ready);
}

/* Starts the worker on entries from index on, when it is idle and they
 * are worth it. */
static void start_ahead(trowel_archive *a, vsif_state *st, size_t index)
{
    text_batch *b = st->ahead;
    b->img = &st->img;
    b->first = index;
    b->surveys = index >= a->settled; /* read in order: nothing of it is yet */
    atomic_init(&b->finished, false);
    st->bookkeeping = true;
    trowel_error before = a->ctx->last_error;
    while (b->count < st->batch_size && index + b->count < a->entry_count) {
        size_t i = index + b->count;
        text_piece *p = &b->piece[b->count];
        if (vsif_written_stored(st, i) ||
            vsif_scene_fetch(a->ctx, a->in, &st->img.scenes[i], &p->blob, &p->blob_size) !=
                TROWEL_OK)
            break; /* reading it here will say why */
        p->entry = a->entries[i].name;
        b->count++;
    }
    a->ctx->last_error = before;
    st->bookkeeping = false;
    for (size_t k = 0; k < st->spent_count; k++) /* no longer this thread's */
        b->spent[k] = trowel_mem_disown(a->ctx, st->spent[k]);
    b->spent_count = st->spent_count;
    st->spent_count = 0;
    if (!b->count || !trowel_worker_start(st->worker, text_batch_run, b, a->entries[index].name))
        clear_batch(a->ctx, a->ctx, b);
}

/* Takes the worker's batch as the ready one: its texts onto the archive's
 * context (as far as its limit allows: the rest are done here), its
 * warnings copied. */
static void take_ahead(trowel_archive *a, vsif_state *st)
{
    text_batch *b = st->ahead;
    if (a->in_order) /* share the work so that neither thread waits for the other */
        st->gap = atomic_load_explicit(&b->finished, memory_order_acquire)
                      ? (st->gap > GAP_STEP ? st->gap - GAP_STEP : 0)
                      : (st->gap + GAP_STEP < TEXT_BATCH_MAX ? st->gap + GAP_STEP : TEXT_BATCH_MAX);
    if (!trowel_worker_wait(st->worker))
        forget_texts(b);
    trowel_ctx *wctx = trowel_worker_ctx(st->worker);
    st->bookkeeping = true;
    clear_batch(a->ctx, a->ctx, st->ready);
    st->ahead = st->ready;
    st->ready = b;
    trowel_error before = a->ctx->last_error;
    size_t warnings = b->done ? b->piece[b->done - 1].warnings_to : 0;
    if (warnings && trowel_mem_dup_bytes(a->ctx, trowel_worker_warning_list(st->worker),
                                         warnings * sizeof *b->warnings, &b->warnings) != TROWEL_OK)
        b->done = 0;
    b->warning_count = b->done ? warnings : 0;
    for (size_t k = 0; k < b->count; k++) {
        text_piece *p = &b->piece[k];
        trowel_mem_free(a->ctx, p->blob);
        p->blob = NULL;
        if (k < b->done && !trowel_mem_take_over(wctx, a->ctx, p->text))
            b->done = k;
        if (k >= b->done) {
            trowel_mem_free(wctx, p->text);
            p->text = NULL;
        }
    }
    a->ctx->last_error = before;
    if (b->surveys) /* still bookkeeping: a rename refused is not a give-way */
        settle_batch(a, st, b);
    st->bookkeeping = false;
    if (st->batch_size < TEXT_BATCH_MAX)
        st->batch_size *= 2;
}

/* The piece for entry index, when a batch has it and it was not handed
 * out yet: the worker's batch is taken when index is in it, and dropped
 * when reading goes elsewhere. NULL: read the entry here. */
static text_piece *piece_for(trowel_archive *a, vsif_state *st, size_t index)
{
    if (!st->ahead)
        return NULL;
    if (trowel_worker_busy(st->worker)) {
        /* read in order, the gap before the worker's batch is this thread's */
        size_t end = a->in_order ? st->ahead->first - st->ready->first : st->ready->count;
        if (index - st->ahead->first < st->ahead->count)
            take_ahead(a, st);
        else if (index - st->ready->first >= end)
            drop_ahead(a, st);
    }
    text_batch *r = st->ready;
    if (index - r->first >= r->done || r->piece[index - r->first].handed_out)
        return NULL;
    return &r->piece[index - r->first];
}

/* Entry index from its piece: the worker's warnings and error for it, on
 * this thread, and its text, written in the pieces one thread writes
 * (CHOREO_VCD_WRITE_SIZE). The piece is taken whole first: writing may make the batches
 * give way (give_way). */
static trowel_status hand_out(trowel_archive *a, vsif_state *st, text_piece *p,
                              trowel_sink *out)
{
    const text_batch *r = st->ready;
    trowel_pass_warnings(a->ctx, r->warnings, r->warning_count, p->warnings_from, p->warnings_to);
    trowel_status status = p->status;
    if (status != TROWEL_OK)
        a->ctx->last_error = p->error;
    uint8_t *text = p->text;
    size_t size = p->text_size;
    p->text = NULL;
    p->handed_out = true;
    trowel_status s = TROWEL_OK;
    for (size_t at = 0; s == TROWEL_OK && at < size; at += CHOREO_VCD_WRITE_SIZE)
        s = trowel_sink_write(out, text + at,
                              size - at < CHOREO_VCD_WRITE_SIZE ? size - at : CHOREO_VCD_WRITE_SIZE);
    spend_text(a, st, text);
    return s != TROWEL_OK ? s : status;
}

/* The context's reclaim function while this archive reads ahead: the
 * worker's batch is waited for and dropped, the ready one freed, and no
 * more is read ahead, so that the caller's own work is admitted or refused
 * by the memory limit as without a worker. Its own bookkeeping (reading a
 * batch's bytes, taking it) just fails instead. */
static void give_way(void *user)
{
    trowel_archive *a = user;
    vsif_state *st = a->priv;
    if (st->bookkeeping)
        return;
    st->gave_way = true;
    if (!st->ahead)
        return;
    forget_batches(a, st);
    free_spent(a, st);
    trowel_mem_free(a->ctx, st->ready);
    trowel_mem_free(a->ctx, st->ahead);
    st->ahead = st->ready = NULL;
}

/* Makes the two batches when the worker is first wanted; false when it
 * cannot be used now. */
static bool have_batches(trowel_archive *a, vsif_state *st)
{
    if (st->ahead)
        return true;
    if (!st->worker || st->gave_way || !trowel_worker_has_room(st->worker))
        return false;
    if (!st->reclaims) { /* one archive of a context reads ahead at a time */
        if (a->ctx->reclaim_fn)
            return false;
        trowel_mem_set_reclaim(a->ctx, give_way, a);
        st->reclaims = true;
    }
    trowel_error before = a->ctx->last_error;
    st->bookkeeping = true;
    bool made = trowel_mem_new_zeroed(a->ctx, 1, sizeof *st->ahead, &st->ahead) == TROWEL_OK &&
                trowel_mem_new_zeroed(a->ctx, 1, sizeof *st->ready, &st->ready) == TROWEL_OK;
    st->bookkeeping = false;
    if (!made) {
        trowel_mem_free(a->ctx, st->ahead);
        st->ahead = NULL;
        a->ctx->last_error = before;
        return false;
    }
    st->ahead->w = st->ready->w = st->worker;
    st->batch_size = TEXT_BATCH_FIRST;
    return true;
}

/* Starts the worker after entry index was read, on the entries after it
 * that the ready batch does not hold: once entries are read one after the
 * other (a reader that jumps about gets no work done it does not ask
 * for). */
static void keep_ahead(trowel_archive *a, vsif_state *st, size_t index)
{
    bool in_turn = st->next_in_turn == index; /* the one before was read last */
    st->next_in_turn = index + 1;
    if (!in_turn || !have_batches(a, st) || trowel_worker_busy(st->worker))
        return;
    size_t next = index + 1;
    const text_batch *r = st->ready;
    if (next - r->first < r->count)
        next = r->first + r->count;
    if (a->in_order)
        next += a->entry_count - next < st->gap ? a->entry_count - next : st->gap;
    start_ahead(a, st, next);
}

/* ---- settling. Opened in order (extract), the image is not surveyed in
 * open: each scene is surveyed when its entry is first asked for, so that
 * surveying overlaps the caller's writing of the scenes before it. The
 * worker surveys the scenes of its batches as it makes their text, in one
 * read (read_surveying), and this thread those of the gaps between. What
 * each scene shows is applied in scene order, as the full survey applies
 * it, so names, info and manifest end the same. */

/* A scene that cannot become text is named as stored (.bvcd). Should the
 * new name not fit in memory, the scene is not marked either, and the
 * status says so: reading it must then fail, rather than write stored
 * bytes under a text's name. */
static trowel_status settle_name(trowel_archive *a, vsif_state *st, size_t index)
{
    vsif_scene *sc = &st->img.scenes[index];
    if (!sc->textless)
        return TROWEL_OK;
    char name[VSIF_CRC_NAME_SIZE];
    vsif_crc_name(sc->crc, true, name);
    trowel_status s = trowel_archive_rename_entry(a, index, name);
    if (s != TROWEL_OK)
        sc->textless = false;
    return s;
}

/* A survey that ran out of memory (the only way it fails): the scenes it
 * could not read are left for reading them to report. Said once. */
static void survey_fell_short(trowel_archive *a, vsif_state *st, size_t index)
{
    if (!st->survey_short) {
        trowel_set_entry(a->ctx, a->entries[index].name);
        trowel_warn(a->ctx, TROWEL_NO_OFFSET,
                    "out of memory surveying the scenes from this one on: a scene among them "
                    "whose strings lie outside the pool fails instead of being written as "
                    "stored, and the summary rule comes from the scenes surveyed");
        trowel_set_entry(a->ctx, NULL);
    }
    st->survey_short = true;
}

/* Every scene is surveyed (in open, or as the last is reached): the info
 * gets the summary rule, its last key. */
static trowel_status settled_all(trowel_archive *a, vsif_state *st)
{
    a->settled = a->entry_count;
    return trowel_props_add_str(a->info, "summary_precision", summary_rule_name(&st->img));
}

/* Applies what the worker's batch b (just taken, and still in the taking:
 * nothing here may make the batches give way) learnt of its scenes, when
 * it starts at the first scene not settled. A scene that cannot become
 * text but could not be renamed gets the rename's error as its piece's:
 * its piece holds no text. */
static void settle_batch(trowel_archive *a, vsif_state *st, text_batch *b)
{
    if (b->first != a->settled)
        return;
    trowel_error before = a->ctx->last_error;
    for (size_t k = 0; k < b->done; k++) {
        size_t index = b->first + k;
        text_piece *p = &b->piece[k];
        vsif_study study = p->study; /* no decoded bytes: nothing is freed */
        trowel_status s = study.parsed ? TROWEL_OK : p->status;
        if (vsif_apply_study(a->ctx, a->ctx, &st->img, &st->img.scenes[index], &study, s) !=
            TROWEL_OK)
            break; /* out of memory: the scene is surveyed again here */
        trowel_status named = settle_name(a, st, index);
        if (named != TROWEL_OK) {
            p->status = named;
            p->error = a->ctx->last_error;
        }
        a->settled = index + 1;
    }
    a->ctx->last_error = before;
}

/* Surveys scene index on this thread by reading it in full, as making its
 * text does (read_surveying), and keeps the model for reading the entry,
 * next: decoded and parsed once, not twice. False when that read runs out
 * of memory; the survey, which builds no model, then reads the scene. */
static bool settle_reading(trowel_archive *a, vsif_state *st, size_t index)
{
    vsif_scene *sc = &st->img.scenes[index];
    vsif_scene_bvcd b;
    choreo_scene *scene = NULL;
    vsif_study study;
    memset(&study, 0, sizeof study);
    choreo_scene_free(a->ctx, st->held); /* an entry settled and not read */
    st->held = NULL;
    trowel_status s = vsif_scene_bvcd_open(a->ctx, a->in, sc, &b);
    if (s == TROWEL_OK) {
        s = read_surveying(a->ctx, &st->img, sc, &b, &scene, &study);
        vsif_scene_bvcd_close(a->ctx, &b);
    }
    if (s == TROWEL_ERR_LIMIT || s == TROWEL_ERR_NOMEM)
        return false;
    vsif_apply_study(a->ctx, a->ctx, &st->img, sc, &study, s); /* OK: s is neither */
    st->held = scene;
    st->held_index = index;
    return true;
}

/* The scene settle_reading kept for entry index, if it is that one. */
static choreo_scene *take_held(trowel_archive *a, vsif_state *st, size_t index)
{
    choreo_scene *scene = st->held;
    st->held = NULL;
    if (scene && st->held_index != index) {
        choreo_scene_free(a->ctx, scene);
        scene = NULL;
    }
    return scene;
}

/* Surveys scene index on this thread. */
static void settle_here(trowel_archive *a, vsif_state *st, size_t index)
{
    trowel_error before = a->ctx->last_error;
    /* (raw= is set only once every scene is settled: core settles first) */
    if (!st->survey_short && !settle_reading(a, st, index) &&
        vsif_survey_scene(a->ctx, a->in, &st->img, &st->img.scenes[index]) != TROWEL_OK)
        survey_fell_short(a, st, index);
    a->ctx->last_error = before;
    settle_name(a, st, index);
    a->settled = index + 1;
}

/* Surveys every scene from index on, with the worker's help, for a caller
 * that wants them all (info, names, manifest) rather than the next. */
static void settle_rest(trowel_archive *a, vsif_state *st, size_t index)
{
    drop_ahead(a, st); /* the worker is the survey's now */
    trowel_error before = a->ctx->last_error;
    if (vsif_image_survey_from(a->ctx, a->in, &st->img, st->worker, (uint32_t)index) !=
        TROWEL_OK)
        survey_fell_short(a, st, index);
    a->ctx->last_error = before;
    for (size_t i = index; i < a->entry_count; i++)
        settle_name(a, st, i);
    a->settled = a->entry_count;
}

/* Settles entries up to count. Asked for all that are left (info, names,
 * a manifest), or for names far ahead of what is read (a caller choosing
 * entries by PATTERN, or finding their files there already), it surveys
 * every scene left at once, with the worker, as open would: scenes that
 * are not read gain nothing from waiting. */
static void vsif_settle(trowel_archive *a, size_t count)
{
    vsif_state *st = a->priv;
    enum { MANY = 128, UNREAD = 64 };
    while (a->settled < count) {
        size_t index = a->settled;
        if (st->ahead && trowel_worker_busy(st->worker) &&
            index - st->ahead->first < st->ahead->count) {
            take_ahead(a, st); /* settles what the worker surveyed */
            if (a->settled > index)
                continue;
        }
        bool rest = (count == a->entry_count && count - index > MANY) ||
                    index >= st->read_to + UNREAD;
        if (rest && !st->survey_short)
            settle_rest(a, st, index);
        else
            settle_here(a, st, index);
    }
    trowel_error before = a->ctx->last_error;
    /* out of memory: the info goes without it (every other key stands) */
    if (a->settled == a->entry_count)
        (void)settled_all(a, st);
    a->ctx->last_error = before;
}

static void vsif_close(trowel_archive *a)
{
    vsif_state *st = a->priv;
    if (!st)
        return;
    st->bookkeeping = false;
    give_way(a); /* waits for the worker and frees the batches */
    if (st->reclaims)
        trowel_mem_set_reclaim(a->ctx, NULL, NULL);
    trowel_worker_free(st->worker);
    choreo_scene_free(a->ctx, st->held);
    trowel_mem_free(a->ctx, st->sounds);
    vsif_image_free(a->ctx, &st->img);
    trowel_mem_free(a->ctx, st);
}

static trowel_status read_scene(trowel_archive *a, vsif_state *st, size_t index,
                                trowel_sink *out)
{
    const vsif_scene *sc = &st->img.scenes[index];
    if (vsif_written_stored(st, index)) {
        if (sc->textless && !st->raw) {
            trowel_set_entry(a->ctx, a->entries[index].name);
            trowel_warn(a->ctx, sc->data_offset,
                        "string index %d is outside the pool of %lu strings, so the scene "
                        "cannot become text: written as stored (BVCD), every byte kept",
                        sc->bad_index, (unsigned long)choreo_pool_count(st->img.pool));
            trowel_set_entry(a->ctx, NULL);
        }
        vsif_scene_bvcd b;
        trowel_status s = vsif_scene_bvcd_open(a->ctx, a->in, sc, &b);
        if (s == TROWEL_OK)
            s = trowel_reader_copy_to(&b.r, out);
        vsif_scene_bvcd_close(a->ctx, &b);
        return s;
    }
    text_piece *piece = piece_for(a, st, index);
    keep_ahead(a, st, index);
    choreo_scene *scene = take_held(a, st, index);
    if (piece) {
        choreo_scene_free(a->ctx, scene);
        return hand_out(a, st, piece, out);
    }
    trowel_status s =
        scene ? TROWEL_OK : vsif_parse_scene(a->ctx, a->in, sc, st->img.pool, &scene, NULL, NULL);
    if (s == TROWEL_OK)
        s = choreo_write_vcd(a->ctx, scene, out);
    choreo_scene_free(a->ctx, scene);
    return s;
}

/* Read in order, a scene is read once: the BVCD its survey kept goes once
 * it is, so that what is in use does not depend on which thread surveyed
 * which scene (the worker keeps none). */
static trowel_status vsif_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    vsif_state *st = a->priv;
    trowel_status s = read_scene(a, st, index, out);
    if (index >= st->read_to)
        st->read_to = index + 1;
    if (a->in_order)
        vsif_scene_forget_decoded(a->ctx, &st->img, &st->img.scenes[index]);
    return s;
}

/* Scenes are written as text VCDs unless stored: their size is known only
 * once written. */
static bool vsif_entry_size_exact(const trowel_archive *a, size_t index)
{
    return vsif_written_stored(a->priv, index);
}

/* Entry index named name, with the extension of how it is written. */
static trowel_status name_entry(trowel_archive *a, size_t index, const char *name)
{
    char fixed[PATH_MAX];
    vsif_with_scene_extension(name, vsif_written_stored(a->priv, index), fixed, sizeof fixed);
    return trowel_archive_rename_entry(a, index, fixed);
}

static trowel_status vsif_set_options(trowel_archive *a, const char *const *opts, size_t n)
{
    vsif_state *st = a->priv; /* keys checked against vsif_options */
    forget_batches(a, st); /* which entries become text depends on raw= */
    const char *raw = trowel_options_get(opts, n, "raw");
    if (raw) {
        if (strcmp(raw, "1") != 0 && strcmp(raw, "0") != 0)
            return trowel_fail(a->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "raw= takes 0 or 1, not '%s'", raw);
        st->raw = raw[0] == '1';
    }
    trowel_status s = TROWEL_OK;
    for (size_t i = 0; s == TROWEL_OK && i < a->entry_count; i++) {
        char name[PATH_MAX]; /* a copy: renaming replaces the entry's own */
        snprintf(name, sizeof name, "%s", a->entries[i].name);
        s = name_entry(a, i, name);
    }
    return s;
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
    trowel_status s = vsif_scene_name(nm->a->ctx, candidate, name, sizeof name);
    if (s != TROWEL_OK)
        return s;
    crc_slot key = {vsif_name_crc(name), 0};
    const crc_slot *hit = bsearch(&key, nm->slots, nm->count, sizeof key, by_crc);
    if (!hit)
        return TROWEL_OK;
    /* Entries with the same CRC (a broken image) are neighbours: name all. */
    while (hit > nm->slots && hit[-1].crc == key.crc)
        hit--;
    for (; hit < nm->slots + nm->count && hit->crc == key.crc; hit++)
        if ((s = name_entry(nm->a, hit->index, name)) != TROWEL_OK)
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

static trowel_status scan_folder(namer *nm, const char *fs, const char *prefix, int depth);

/* A folder being scanned: its name for the io hooks, the scene-name prefix
 * of what it holds ("scenes/npc"), and the first failure met in it. */
typedef struct folder_scan {
    namer *nm;
    const char *fs, *prefix;
    int depth;
    trowel_status status;
} folder_scan;

/* One name of a scanned folder: a subfolder is scanned in turn, a .vcd
 * file offered (a link counts as a file: it is never followed). */
static bool scan_child(void *user, const char *child_name, bool is_folder)
{
    folder_scan *f = user;
    char child[PATH_MAX], name[PATH_MAX];
    if (snprintf(child, sizeof child, "%s/%s", f->fs, child_name) >= (int)sizeof child ||
        snprintf(name, sizeof name, "%s/%s", f->prefix, child_name) >= (int)sizeof name)
        return true;
    if (is_folder)
        f->status = scan_folder(f->nm, child, name, f->depth + 1);
    else if (vsif_ends_with_vcd(child_name))
        f->status = offer_name(f->nm, name);
    return f->status == TROWEL_OK;
}

/* Offers every .vcd file under fs (depth-limited), named prefix/child. */
static trowel_status scan_folder(namer *nm, const char *fs, const char *prefix, int depth)
{
    if (depth > 64)
        return TROWEL_OK;
    folder_scan f = {nm, fs, prefix, depth, TROWEL_OK};
    trowel_status s = trowel_list_related_no_links(nm->a->ctx, NULL, fs, scan_child, &f);
    return s != TROWEL_OK ? s : f.status;
}

/* Looks for a subfolder called "scenes" in any case (a link to one
 * counts): its name as spelt there. */
static bool find_scenes(void *user, const char *name, bool is_folder)
{
    char *found = user;
    if (!is_folder || strcasecmp(name, "scenes") != 0)
        return true;
    memcpy(found, name, 7);
    return false;
}

/* A folder (full: its canonical name, trowel_locate_related): if it holds
 * "scenes", that is scanned; otherwise the folder is taken to be (inside)
 * the scenes folder: names start at its last "scenes" component, or with
 * "scenes/" when it has none. A folder that cannot be listed is said by
 * the scan of it. */
static trowel_status names_from_folder(namer *nm, const char *full)
{
    char scenes[8] = "", sub[PATH_MAX + 8];
    if (trowel_list_related(nm->a->ctx, NULL, full, find_scenes, scenes) == TROWEL_OK &&
        scenes[0] && snprintf(sub, sizeof sub, "%s/%s", full, scenes) < (int)sizeof sub)
        return scan_folder(nm, sub, scenes, 0);
    const char *last = NULL;
    for (const char *p = full; (p = strchr(p, '/')) != NULL; p++)
        if (strncasecmp(p + 1, "scenes", 6) == 0 && (p[7] == '/' || p[7] == '\0'))
            last = p + 1;
    return scan_folder(nm, full, last ? last : "scenes", 0);
}

/* --names PATH: a folder scanned for .vcd files or a list of names, both
 * through the io hooks. */
static trowel_status vsif_set_names(trowel_archive *a, const char *path)
{
    vsif_state *st = a->priv;
    forget_batches(a, st); /* their errors and warnings name the entries */
    namer nm = {a, NULL, a->entry_count};
    trowel_status s = trowel_mem_new_zeroed(a->ctx, nm.count ? nm.count : 1, sizeof *nm.slots,
                                            &nm.slots);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < nm.count; i++)
        nm.slots[i] = (crc_slot){st->img.scenes[i].crc, i};
    qsort(nm.slots, nm.count, sizeof *nm.slots, by_crc);
    char full[PATH_MAX];
    bool is_folder;
    s = trowel_locate_related(a->ctx, NULL, path, full, sizeof full, &is_folder);
    if (s == TROWEL_OK)
        s = is_folder ? names_from_folder(&nm, full) : names_from_list(&nm, path);
    trowel_mem_free(a->ctx, nm.slots);
    return s;
}

static const trowel_option_info vsif_options[] = {
    {"raw", "0|1", "1: extract scenes as stored (BVCD, named .bvcd), not as text VCD (as --raw)",
     NULL, .type = TROWEL_OPTION_BOOL, .def = "0"},
    {"version", "2|3", "image version (default 2, or the base image's)", "create",
     .type = TROWEL_OPTION_CHOICE},
    {"compress", "auto|lzma|none", "LZMA per scene, kept only when smaller (default auto)",
     "create", .type = TROWEL_OPTION_CHOICE},
    {"summary", "double|float",
     "round scene lengths in double (default) or single precision (an L4D2-branch rule; "
     "default: the base's or manifest's)", "create", .type = TROWEL_OPTION_CHOICE},
    {"base", "IMAGE", "start from IMAGE; sources add or replace scenes, the rest are kept as "
                      "stored (bytes, summaries, string pool order)", "create",
     .type = TROWEL_OPTION_STRING},
    {0},
};

const trowel_format trowel_format_vsif = {
    .id = "vsif",
    .family = "valve",
    .description = "Valve scenes.image (VSIF v2/v3): compiled choreography scenes",
    .extensions = ".image",
    .caps = TROWEL_CAP_LIST | TROWEL_CAP_MANIFEST,
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
    .settle = vsif_settle,
    .close = vsif_close,
};
