/*
 * VCD: a Source engine choreography scene as Faceposer saves it (text).
 * One scene per file: actors hold channels, channels hold timed events
 * (speak, gesture, expression, flex animation, ...); some events sit at
 * the scene level. trowel parses the whole grammar (src/format/valve/
 * choreo_vcd.c), applies the engine's post-load fix-ups and reports
 * counts, the duration in ms as the engine computes it, and the sounds a
 * scenes.image summary would list. `convert --to bvcd` compiles it as
 * Valve's builder does (standalone layout: JSON string pool, then the
 * BVCD; see choreo_format.h), `--to vcd` prints it back in Faceposer's
 * layout, `--to json-full` dumps the whole scene.
 * Facts: Source SDK 2013 choreography code, ../shared/formats/
 * valve-vsif-bvcd.md, the real scenes in ../shared/corpus/valve.
 */
#include "choreo_format.h"

#include <string.h>

typedef struct vcd_priv {
    choreo_scene *scene;
    uint32_t crc; /* of the file's bytes: what a BVCD header records */
} vcd_priv;

static const char *const top_keywords[] = {"event", "actor", "mapname", "fps", "snap",
                                           "ignorephonemes", "scene_ramp", "scalesettings"};

static bool has_vcd_name(trowel_reader *r)
{
    const char *name = trowel_input_name(r->in);
    size_t n = name ? strlen(name) : 0;
    if (n < 4)
        return false;
    const char *ext = name + n - 4;
    return ext[0] == '.' && (ext[1] | 32) == 'v' && (ext[2] | 32) == 'c' && (ext[3] | 32) == 'd';
}

/* Text that starts, after blanks and comments, with a top-level keyword. */
static int vcd_bid(trowel_reader *r)
{
    uint64_t size = trowel_reader_size(r);
    size_t n = size < 4096 ? (size_t)size : 4096;
    const uint8_t *p;
    if (n == 0 || trowel_reader_peek(r, n, &p) != TROWEL_OK)
        return TROWEL_BID_NONE;
    if (memchr(p, 0, n))
        return TROWEL_BID_NONE;
    size_t i = 0;
    for (;;) {
        while (i < n && (p[i] <= 32 || p[i] >= 128))
            i++;
        if (i < n && (p[i] == ';' || p[i] == '#' || (p[i] == '/' && i + 1 < n && p[i + 1] == '/'))) {
            while (i < n && p[i] != '\n')
                i++;
            continue;
        }
        if (i + 1 < n && p[i] == '/' && p[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(p[i] == '*' && p[i + 1] == '/'))
                i++;
            i += 2;
            continue;
        }
        break;
    }
    size_t start = i;
    while (i < n && p[i] > 32 && p[i] < 128)
        i++;
    for (size_t k = 0; k < sizeof top_keywords / sizeof top_keywords[0]; k++) {
        size_t len = strlen(top_keywords[k]);
        if (i - start != len)
            continue;
        size_t j = 0;
        while (j < len && (p[start + j] | 32) == top_keywords[k][j])
            j++;
        if (j == len)
            return TROWEL_BID_MAGIC + (has_vcd_name(r) ? TROWEL_BID_WEAK : 0);
    }
    return TROWEL_BID_NONE;
}

static trowel_status vcd_open(trowel_archive *a, trowel_reader *r)
{
    vcd_priv *p;
    trowel_status st = trowel_mem_new_zeroed(a->ctx, 1, sizeof *p, &p);
    if (st != TROWEL_OK)
        return st;
    a->priv = p;
    /* the CRC of the bytes as stored, read through a copy of the reader */
    trowel_reader copy = *r;
    const uint8_t *span;
    size_t got;
    uint32_t crc = 0;
    while ((st = trowel_reader_borrow(&copy, TROWEL_READER_SPAN_MAX, &span, &got)) == TROWEL_OK && got)
        crc = trowel_crc32_update(crc, span, got);
    if (st != TROWEL_OK)
        return st;
    p->crc = crc;
    if ((st = choreo_parse_vcd(a->ctx, r, &p->scene)) != TROWEL_OK)
        return st;
    return choreo_fill_info(a, p->scene, "vcd");
}

static trowel_status vcd_convert(trowel_archive *a, const char *target, const char *const *opts,
                                 size_t nopts, trowel_sink *out)
{
    vcd_priv *p = a->priv;
    /* a text decompiled from BVCD keeps the original header's CRC */
    uint32_t crc = choreo_scene_has_source_crc(p->scene) ? choreo_scene_source_crc(p->scene) : p->crc;
    return choreo_convert(a, p->scene, crc, target, opts, nopts, out);
}

static void vcd_close(trowel_archive *a)
{
    vcd_priv *p = a->priv;
    if (!p)
        return;
    choreo_scene_free(a->ctx, p->scene);
    trowel_mem_free(a->ctx, p);
    a->priv = NULL;
}

const trowel_format trowel_format_vcd = {
    .id = "vcd",
    .family = "valve",
    .description = "Source engine choreography scene, text (Faceposer .vcd)",
    .extensions = ".vcd",
    .caps = 0,
    .create_options = "",
    .convert_targets = "vcd bvcd json-full",
    .bid = vcd_bid,
    .open = vcd_open,
    .convert = vcd_convert,
    .close = vcd_close,
};
