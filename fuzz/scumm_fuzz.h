/* What the SCUMM costume fuzz targets share: decode, then walk everything a
 * conversion walks (limb sequences, the AKSQ disassembly, every picture as
 * PNG into a null sink), under a small memory limit. */
#ifndef TROWEL_SCUMM_FUZZ_H
#define TROWEL_SCUMM_FUZZ_H

#include "core/core.h"
#include "export/png.h"
#include "format/scumm/costume.h"

#include <json-c/json.h>
#include <trowel/trowel.h>

static void scumm_fuzz_walk(scumm_costume *c)
{
    static scumm_step steps[SCUMM_MAX_FRAMES];
    for (size_t i = 0; i < c->anim_count; i++)
        for (unsigned l = 0; l < SCUMM_LIMBS; l++) {
            bool loops;
            scumm_limb_steps(c, &c->anims[i], l, steps, SCUMM_MAX_FRAMES, &loops);
        }
    json_object_put(scumm_aksq_disassemble(c));
    uint8_t rgb[768];
    for (unsigned i = 0; i < 768; i++)
        rgb[i] = (uint8_t)(i * 7);
    trowel_palette pal;
    scumm_costume_palette(c, rgb, &pal);
    if (!scumm_palette_usable(c, rgb))
        scumm_standalone_palette(c, &pal);
    for (size_t i = 0; i < c->picture_count && i < 8; i++) {
        const scumm_picture *p = &c->pictures[i];
        trowel_sink *out;
        if (p->width == 0 || p->height == 0 || trowel_sink_open_null(c->ctx, &out) != TROWEL_OK)
            continue;
        bool fits = true;
        for (size_t k = 0; k < (size_t)p->width * p->height; k++)
            fits &= p->pixels[k] < pal.count;
        if (fits && trowel_png_write_indexed(c->ctx, out, p->width, p->height, p->pixels, &pal) ==
                        TROWEL_OK)
            trowel_sink_finish(out);
        else
            trowel_sink_discard(out);
    }
}

static void scumm_fuzz_run(const uint8_t *data, size_t size, bool akos)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    scumm_costume c;
    if ((akos ? scumm_akos_decode : scumm_cost_decode)(ctx, data, size, &c) == TROWEL_OK) {
        scumm_fuzz_walk(&c);
        scumm_costume_free(&c);
    }
    trowel_ctx_free(ctx);
}

#endif
