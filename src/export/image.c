/*
 * The shared image exporter (see image.h): palettes, one frame or a sheet
 * of frames as indexed PNG, the sheet's JSON atlas.
 */
#include "export/image.h"

#include "core/module.h"
#include "core/reader.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

void trowel_palette_from_rgb(trowel_palette *p, const uint8_t *rgb)
{
    memset(p, 0, sizeof *p);
    p->count = 256;
    for (unsigned i = 0; i < 256; i++) {
        memcpy(p->rgba[i], rgb + 3 * i, 3);
        p->rgba[i][3] = 255;
    }
}

void trowel_palette_grey(trowel_palette *p, unsigned count)
{
    memset(p, 0, sizeof *p);
    p->count = count;
    for (unsigned i = 0; i < count; i++) {
        uint8_t g = (uint8_t)(count > 1 ? i * 255 / (count - 1) : 0);
        p->rgba[i][0] = p->rgba[i][1] = p->rgba[i][2] = g;
        p->rgba[i][3] = 255;
    }
}

trowel_status trowel_palette_load_rgb768(trowel_ctx *ctx, const char *path, trowel_palette *p)
{
    trowel_input *in;
    trowel_status s = trowel_open_related(ctx, NULL, path, &in); /* the open hook */
    if (s != TROWEL_OK) /* the message must blame the palette, not the input */
        return trowel_fail(ctx, s, TROWEL_NO_OFFSET, "palette=%s: %s", path,
                           ctx->last_error.message);
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    uint8_t rgb[768];
    if (trowel_reader_size(&r) != sizeof rgb) {
        trowel_input_close(in);
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "palette=%s: not a palette (768 bytes: 256 RGB triplets)", path);
    }
    s = trowel_read_bytes(&r, rgb, sizeof rgb);
    trowel_input_close(in);
    if (s != TROWEL_OK)
        return trowel_fail(ctx, s, TROWEL_NO_OFFSET, "palette=%s: %s", path,
                           ctx->last_error.message);
    trowel_palette_from_rgb(p, rgb);
    return TROWEL_OK;
}

trowel_status trowel_image_option_uint(trowel_ctx *ctx, const char *const *opts, size_t nopts,
                                       const char *key, unsigned long max, unsigned long *v,
                                       bool *given)
{
    /* the format's rows (TROWEL_IMAGE_PNG_OPTIONS, SCUMM_COSTUME_OPTIONS)
     * made it a number from 0 to their max, which max repeats */
    trowel_option_values o = trowel_option_values_of(NULL, NULL, opts, nopts);
    if (given)
        *given = trowel_option_given(&o, key);
    if (!trowel_option_given(&o, key))
        return TROWEL_OK;
    uint64_t n = trowel_option_uint(&o, key);
    if (n > max)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "%s=%llu: expected a number from 0 to %lu", key, (unsigned long long)n,
                           max);
    *v = (unsigned long)n;
    return TROWEL_OK;
}

/* An option naming one of count things of the file (frame=N, transparent=N):
 * not a number is a usage error; a number past what this file holds is bad
 * input for it (exit 1), not a bad command line. thing is singular. */
static trowel_status option_index(trowel_ctx *ctx, const char *const *opts, size_t nopts,
                                  const char *key, unsigned long count, const char *thing,
                                  unsigned long *v, bool *given)
{
    /* core has checked the value against the row (a number; for
     * transparent=, or "none", which the caller takes first) */
    trowel_option_values o = trowel_option_values_of(NULL, NULL, opts, nopts);
    if (given)
        *given = trowel_option_given(&o, key);
    if (!trowel_option_given(&o, key))
        return TROWEL_OK;
    uint64_t n = trowel_option_uint(&o, key);
    if (n >= count)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "%s=%llu: this file has %lu %s%s (0 to %lu)", key,
                           (unsigned long long)n, count, thing, count == 1 ? "" : "s",
                           count - 1);
    *v = (unsigned long)n;
    return TROWEL_OK;
}

trowel_status trowel_image_palette(const trowel_frames *f, const char *const *opts, size_t nopts,
                                   trowel_palette *pal)
{
    trowel_ctx *ctx = f->ctx;
    const char *file = trowel_options_get(opts, nopts, "palette");
    trowel_status s = TROWEL_OK;
    if (f->colours == 2) {
        if (file || trowel_options_get(opts, nopts, "transparent"))
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "masks have no colours: palette= and transparent= do not apply");
        memset(pal, 0, sizeof *pal);
        pal->count = 2;
        memset(pal->rgba[1], 255, 4); /* set bits: opaque white; clear: transparent */
        return TROWEL_OK;
    }
    if (file)
        s = (f->load ? f->load : trowel_palette_load_rgb768)(ctx, file, pal);
    else if (f->own)
        *pal = *f->own;
    else
        trowel_palette_grey(pal, f->colours);
    if (s != TROWEL_OK)
        return s;
    if (pal->count < f->colours)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "palette=%s has %u colours; these pixels need %u", file ? file : "",
                           pal->count, f->colours);
    pal->count = f->colours; /* a 256-colour file for a 16-colour image: first 16 */
    const char *t = trowel_options_get(opts, nopts, "transparent");
    long transparent = f->transparent;
    if (t && strcmp(t, "none") == 0) {
        transparent = -1;
    } else if (t) {
        unsigned long v = 0;
        if ((s = option_index(ctx, opts, nopts, "transparent", f->colours, "colour", &v, NULL)))
            return s;
        transparent = (long)v;
    }
    if (transparent >= 0)
        pal->rgba[transparent][3] = 0;
    return TROWEL_OK;
}

trowel_status trowel_image_png_one(const trowel_frames *f, size_t i, const trowel_palette *pal,
                                   trowel_sink *out)
{
    trowel_ctx *ctx = f->ctx;
    uint32_t w, h;
    f->size(f->user, i, &w, &h);
    if (w == 0 || h == 0)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "frame %zu is empty (%lux%lu)", i, (unsigned long)w, (unsigned long)h);
    /* Refuse what PNG cannot hold before spending memory on it. */
    if (w > TROWEL_PNG_MAX_SIDE || h > TROWEL_PNG_MAX_SIDE)
        return trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                           "frame %zu is %lux%lu pixels; PNG sides stop at %u here", i,
                           (unsigned long)w, (unsigned long)h, TROWEL_PNG_MAX_SIDE);
    uint8_t *px;
    trowel_status s = trowel_mem_new(ctx, (size_t)w * h, &px);
    if (s != TROWEL_OK)
        return s;
    s = f->decode(f->user, i, px);
    if (s == TROWEL_OK)
        s = trowel_png_write_indexed(ctx, out, w, h, px, pal);
    trowel_mem_free(ctx, px);
    return s;
}

/* The colour sheet gaps take (see trowel_image_png_sheet). */
static uint8_t sheet_fill(trowel_palette *pal, long transparent_index)
{
    if (pal->count < 256) {
        memset(pal->rgba[pal->count], 0, 4);
        return (uint8_t)pal->count++;
    }
    return (uint8_t)(transparent_index >= 0 ? transparent_index : 0);
}

trowel_status trowel_image_png_sheet(const trowel_frames *f, uint32_t columns,
                                     trowel_palette *pal, trowel_sink *out, trowel_sheet *plan)
{
    trowel_ctx *ctx = f->ctx;
    uint32_t *ws;
    trowel_status s = trowel_mem_new_zeroed(ctx, f->count ? f->count : 1, 2 * sizeof *ws, &ws);
    if (s != TROWEL_OK)
        return s;
    uint32_t *hs = ws + f->count;
    for (size_t i = 0; i < f->count; i++)
        f->size(f->user, i, &ws[i], &hs[i]);
    trowel_sheet sh;
    uint8_t *sheet = NULL, *px = NULL;
    s = trowel_sheet_plan(ctx, f->count, ws, hs, columns, 1, &sh);
    if (s == TROWEL_OK)
        s = trowel_mem_new(ctx, (size_t)sh.width * sh.height, &sheet);
    if (s == TROWEL_OK)
        s = trowel_mem_new(ctx, (size_t)sh.cell_w * sh.cell_h, &px);
    if (s == TROWEL_OK) {
        long clear = -1;
        for (unsigned c = 0; c < pal->count && clear < 0; c++)
            clear = pal->rgba[c][3] == 0 ? (long)c : -1;
        memset(sheet, sheet_fill(pal, clear), (size_t)sh.width * sh.height);
    }
    for (size_t i = 0; s == TROWEL_OK && i < f->count; i++) {
        if (ws[i] == 0 || hs[i] == 0)
            continue;
        if ((s = f->decode(f->user, i, px)) == TROWEL_OK)
            trowel_sheet_blit(&sh, sheet, i, px, ws[i], hs[i], 1);
    }
    if (s == TROWEL_OK)
        s = trowel_png_write_indexed(ctx, out, sh.width, sh.height, sheet, pal);
    if (s == TROWEL_OK && plan)
        *plan = sh;
    trowel_mem_free(ctx, px);
    trowel_mem_free(ctx, sheet);
    trowel_mem_free(ctx, ws);
    return s;
}

trowel_status trowel_image_convert_png(const trowel_frames *f, const char *const *opts,
                                       size_t nopts, trowel_sink *out)
{
    trowel_ctx *ctx = f->ctx;
    trowel_status s;
    if (f->count == 0)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET, "no frames to convert");
    trowel_palette pal;
    if ((s = trowel_image_palette(f, opts, nopts, &pal)) != TROWEL_OK)
        return s;
    unsigned long frame = 0, columns = f->columns;
    bool one = false;
    if ((s = option_index(ctx, opts, nopts, "frame", f->count, "frame", &frame, &one)) ||
        (s = trowel_image_option_uint(ctx, opts, nopts, "columns", 4096, &columns, NULL)))
        return s;
    /* A single frame needs no sheet (nor its extra gap colour). */
    return one || f->count == 1 ? trowel_image_png_one(f, frame, &pal, out)
                                : trowel_image_png_sheet(f, (uint32_t)columns, &pal, out, NULL);
}

trowel_status trowel_image_atlas(const trowel_frames *f, const trowel_sheet *plan,
                                 struct json_object **out)
{
    json_object *arr = json_object_new_array();
    if (!arr)
        return trowel_fail(f->ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "out of memory");
    for (size_t i = 0; i < f->count; i++) {
        uint32_t x, y, w, h;
        f->size(f->user, i, &w, &h);
        trowel_sheet_cell(plan, i, &x, &y);
        json_object *o = json_object_new_object();
        if (!o || json_object_array_add(arr, o) != 0) {
            json_object_put(o);
            json_object_put(arr);
            return trowel_fail(f->ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "out of memory");
        }
        json_object_object_add(o, "x", json_object_new_int64(x));
        json_object_object_add(o, "y", json_object_new_int64(y));
        json_object_object_add(o, "w", json_object_new_int64(w));
        json_object_object_add(o, "h", json_object_new_int64(h));
    }
    *out = arr;
    return TROWEL_OK;
}
