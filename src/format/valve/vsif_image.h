/*
 * scenes.image (VSIF): what the reader (vsif.c) and the builder
 * (vsif_build.c) share, defined in vsif_image.c: the image as read, its
 * scenes, and the helpers both need (names and CRCs, reading a scene's
 * BVCD). Both use it; it uses neither. Layout and sources: see vsif.c and
 * docs/formats/vsif.md.
 */
#ifndef TROWEL_VALVE_VSIF_IMAGE_H
#define TROWEL_VALVE_VSIF_IMAGE_H

#include "codec/vsif_lzma.h"
#include "core/module.h"
#include "core/worker.h"
#include "format/valve/choreo.h"

#include <stdbool.h>
#include <stdint.h>

#define VSIF_HEADER_SIZE 20u
#define VSIF_ENTRY_SIZE 16u
#define VSIF_IMAGE_MAX ((uint64_t)INT32_MAX) /* the engine's offsets are int */

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
    bool textless;        /* string indices outside the pool: kept as stored */
    int bad_index;        /* textless: the first such index */
    /* compressed: the BVCD the survey decoded, kept (within the image's
     * budget) so that reading the scene does not decode it again; NULL:
     * decode it when asked. */
    uint8_t *decoded;
    uint32_t decoded_size;
} vsif_scene;

typedef struct vsif_image {
    uint32_t version;
    uint32_t scene_count, string_count, entry_offset; /* as the header says */
    choreo_pool *pool;   /* the strings that could be read */
    vsif_scene *scenes;  /* the scenes whose data can be found, entry order */
    uint32_t count;
    trowel_error *damage; /* what could not be read (a damaged file) */
    size_t damage_count;
    /* Scenes whose summary fits only one rounding rule (see choreo_summary):
     * which rule the image's builder followed. Counted by vsif_image_survey. */
    uint32_t float_votes, double_votes;
    uint64_t decoded_kept; /* bytes of the scenes' `decoded` (survey) */
} vsif_image;

/* A scene's BVCD as a reader window (vsif_scene_bvcd_open). */
typedef struct vsif_scene_bvcd {
    trowel_reader r;
    trowel_input *mem;
    uint8_t *decoded;
} vsif_scene_bvcd;

void vsif_put_u32(uint8_t *p, uint32_t v);

/* Names: ".vcd" / ".bvcd" endings (any case); a name with the extension
 * of a scene written as text or as stored; the scene name of a candidate
 * path; the CRC of a scene name (a "%08x.vcd" name stands for that CRC). */
bool vsif_ends_with_vcd(const char *name);
bool vsif_ends_with_bvcd(const char *name);
void vsif_with_scene_extension(const char *name, bool stored, char *out, size_t cap);
trowel_status vsif_scene_name(trowel_ctx *ctx, const char *path, char *out, size_t cap);
/* The name of a scene known only by its CRC: "%08x.vcd", or ".bvcd" when
 * stored (out holds VSIF_CRC_NAME_SIZE bytes). */
enum { VSIF_CRC_NAME_SIZE = 16 };
void vsif_crc_name(uint32_t crc, bool stored, char *out);
uint32_t vsif_scene_crc(const char *name);
/* Valve's hash of a scene name, whatever it looks like. */
uint32_t vsif_name_crc(const char *name);

/* Reads header, pool, entries and summaries of the image in r; what a
 * damaged file lacks is in img->damage. vsif_image_free releases it. */
trowel_status vsif_image_read(trowel_reader *r, vsif_image *img);
void vsif_image_free(trowel_ctx *ctx, vsif_image *img);
/* The most bytes of decoded BVCDs an open image keeps (and never more
 * than a sixteenth of the memory limit). */
#define VSIF_DECODED_BUDGET_MAX ((uint64_t)64 << 20)
/* Reads every scene once: marks those that cannot become text, counts
 * which summary rounding rule the image follows, and keeps the decoded
 * BVCDs of compressed scenes within the budget above: each decode costs
 * liblzma a stream set-up, a fifth of the time to extract a scene as text.
 * w (NULL: none) shares the work: the image ends the same. */
trowel_status vsif_image_survey(trowel_ctx *ctx, trowel_input *in, vsif_image *img,
                                trowel_worker *w);
/* The same from scene first on (the scenes before it surveyed already). */
trowel_status vsif_image_survey_from(trowel_ctx *ctx, trowel_input *in, vsif_image *img,
                                     trowel_worker *w, uint32_t first);

/* The survey of one scene, for an image surveyed as its scenes are read
 * (an archive opened in order). */
trowel_status vsif_survey_scene(trowel_ctx *ctx, trowel_input *in, vsif_image *img,
                                vsif_scene *sc);
/* What the survey learns from one scene, on whichever context read it:
 * this thread's, or a worker's. */
typedef struct vsif_study {
    bool parsed;      /* false: the scene is left for extract and verify */
    uint8_t *decoded; /* the BVCD decoded, on the context that read it; or NULL */
    uint32_t decoded_size;
    size_t missing;   /* string indices outside the pool, the first of them */
    int first;
    bool summarized;  /* the summary, as double and as float arithmetic gives it */
    uint32_t msecs, msecs_float, lastspeech, lastspeech_float;
} vsif_study;
/* Frees the decoded BVCD the survey kept for sc (when it kept one). */
void vsif_scene_forget_decoded(trowel_ctx *ctx, vsif_image *img, vsif_scene *sc);
/* The study of a scene read in full (facts from a survey, or noted by
 * choreo_read_bvcd_facts), without its decoded bytes. */
void vsif_study_of(const vsif_scene *sc, const choreo_bvcd_facts *facts, vsif_study *st);
/* What the study of sc (status s: not OK when the scene could not be read)
 * means for the image: sc's textless and bad index, the summary votes, the
 * decoded BVCD kept (or freed on from). Not OK (out of memory) ends a
 * survey. */
trowel_status vsif_apply_study(trowel_ctx *ctx, trowel_ctx *from, vsif_image *img, vsif_scene *sc,
                               vsif_study *st, trowel_status s);
/* The rule most scenes follow (single precision), false when none tells. */
bool vsif_image_uses_float(const vsif_image *img);

/* A scene's BVCD: a window over the file (raw) or over its decoded LZMA
 * stream; closed with vsif_scene_bvcd_close. */
trowel_status vsif_scene_bvcd_open(trowel_ctx *ctx, trowel_input *in, const vsif_scene *sc,
                                   vsif_scene_bvcd *b);
void vsif_scene_bvcd_close(trowel_ctx *ctx, vsif_scene_bvcd *b);
/* The two halves of vsif_scene_bvcd_open, for a second thread to do the
 * second: fetch reads the scene's bytes from the input (*blob on ctx;
 * NULL when the survey kept the scene decoded), _from decodes them (or
 * wraps the kept BVCD, or the stored BVCD at its offsets in the file) on
 * any context, the input untouched; with lzma (a decoder of ctx's thread,
 * or NULL for one of its own) when the scene is compressed. */
trowel_status vsif_scene_fetch(trowel_ctx *ctx, trowel_input *in, const vsif_scene *sc,
                               uint8_t **blob, size_t *blob_size);
trowel_status vsif_scene_bvcd_from(trowel_ctx *ctx, trowel_vsif_lzma_decoder *lzma,
                                   const vsif_scene *sc, const uint8_t *blob, size_t blob_size,
                                   vsif_scene_bvcd *b);
/* Parses the scene with pool; *bvcd_size and *trailing (when wanted) give
 * the BVCD's size and the bytes after the scene in it. */
trowel_status vsif_parse_scene(trowel_ctx *ctx, trowel_input *in, const vsif_scene *sc,
                               const choreo_pool *pool, choreo_scene **out, uint64_t *bvcd_size,
                               uint64_t *trailing);

#endif
