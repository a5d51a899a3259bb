/*
 * scenes.image verify: beyond reading every scene (which the archive layer
 * does), each scene's summary against what the engine would compute from
 * it (its length by either rounding rule, its sound list) and the bytes a
 * scene's BVCD holds after its end. Facts as in vsif.c; the summary rules
 * are docs/formats/vsif.md's.
 */
#include "format/valve/vsif_state.h"

#include "codec/vsif_lzma.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

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
    if (sc->msecs != sum->msecs && sc->msecs != sum->msecs_float) /* either rule */
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
trowel_status vsif_verify_entry(trowel_archive *a, size_t index)
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
    trowel_status s = vsif_parse_scene(a->ctx, a->in, sc, img->pool, &scene, &size, &trailing);
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

trowel_status vsif_verify(trowel_archive *a)
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
        uint64_t at = img->entry_offset + (uint64_t)sc->slot * VSIF_ENTRY_SIZE;
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

