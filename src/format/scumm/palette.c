/*
 * Palettes for SCUMM costumes: -O palette=FILE in the forms users have, a
 * test of whether a room palette shows a costume at all, and the stand-in
 * palette of a costume converted with no room palette.
 *
 * -O palette=FILE takes, by content: a room's CLUT (v5) or APAL block or
 * its whole PALS block (v6, v7: PALS > WRAP > OFFS + APAL; the first APAL
 * is the room's palette 0), as `trowel extract` writes them (8-byte block
 * header, then 768 bytes RGB); a raw 768-byte RGB palette; an indexed PNG
 * (its PLTE) or a GIF with a global colour table. The file is opened
 * through the context's open hook (trowel_open_related), like every file
 * a format names.
 *
 * Real fan games keep their costumes in a room whose palette is all zeros
 * (../shared/formats/scumm-costumes.md, "Facts from real game data"), so a
 * palette that maps every colour the costume draws to one RGB is
 * "unusable" and the caller looks for another.
 */
#include "format/scumm/costume.h"

#include "core/input.h"
#include "export/png.h"

#include <stdio.h>
#include <string.h>

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The first child block tagged tag in [at, end) of d: its data start. */
static bool find_block(const uint8_t *d, size_t at, size_t end, const char *tag, size_t *data,
                       size_t *size)
{
    while (at + 8 <= end) {
        uint32_t n = be32(d + at + 4);
        if (n < 8 || n > end - at)
            return false;
        if (memcmp(d + at, tag, 4) == 0) {
            *data = at + 8;
            *size = n - 8;
            return true;
        }
        at += n;
    }
    return false;
}

/* A PALS block (d[0..n)): WRAP's OFFS gives palette 0, else its first APAL. */
static bool from_pals(const uint8_t *d, size_t n, uint8_t rgb[768])
{
    size_t wrap, wrap_size, offs, offs_size, apal, apal_size;
    if (!find_block(d, 8, n, "WRAP", &wrap, &wrap_size))
        return false;
    if (find_block(d, wrap, wrap + wrap_size, "OFFS", &offs, &offs_size) && offs_size >= 4) {
        uint32_t first = (uint32_t)d[offs] | (uint32_t)d[offs + 1] << 8 |
                         (uint32_t)d[offs + 2] << 16 | (uint32_t)d[offs + 3] << 24;
        if ((uint64_t)offs + first + 768 <= wrap + wrap_size) {
            memcpy(rgb, d + offs + first, 768);
            return true;
        }
    }
    if (!find_block(d, wrap, wrap + wrap_size, "APAL", &apal, &apal_size) || apal_size < 768)
        return false;
    memcpy(rgb, d + apal, 768);
    return true;
}

/* A GIF's global colour table (missing entries black). */
static bool from_gif(const uint8_t *d, size_t n, uint8_t rgb[768])
{
    if (n < 13 || !(d[10] & 0x80))
        return false;
    size_t count = (size_t)2 << (d[10] & 7);
    if (13 + 3 * count > n)
        return false;
    memset(rgb, 0, 768);
    memcpy(rgb, d + 13, 3 * count);
    return true;
}

trowel_status scumm_palette_from_bytes(trowel_ctx *ctx, const char *path, const uint8_t *d,
                                        size_t n, uint8_t rgb[768], const char **kind)
{
    bool block = n >= 8 && be32(d + 4) == n;
    if (block && (memcmp(d, "CLUT", 4) == 0 || memcmp(d, "APAL", 4) == 0) && n >= 8 + 768) {
        memcpy(rgb, d + 8, 768);
        *kind = memcmp(d, "CLUT", 4) == 0 ? "a CLUT block" : "an APAL block";
        return TROWEL_OK;
    }
    if (block && memcmp(d, "PALS", 4) == 0) {
        *kind = "a PALS block";
        if (from_pals(d, n, rgb))
            return TROWEL_OK;
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "palette=%s: a PALS block without a WRAP holding a palette", path);
    }
    if (n >= 8 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0) {
        uint8_t *px = NULL;
        uint32_t w, h;
        trowel_palette pal;
        trowel_status s = trowel_png_read_indexed(ctx, path, d, n, &px, &w, &h, &pal);
        trowel_mem_free(ctx, px);
        if (s != TROWEL_OK)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                               "palette=%s: a PNG without a palette (%s)", path,
                               ctx->last_error.message);
        memset(rgb, 0, 768);
        for (unsigned i = 0; i < pal.count && i < 256; i++)
            memcpy(rgb + 3 * i, pal.rgba[i], 3);
        *kind = "a PNG's palette";
        return TROWEL_OK;
    }
    if (n >= 6 && (memcmp(d, "GIF87a", 6) == 0 || memcmp(d, "GIF89a", 6) == 0)) {
        *kind = "a GIF's colour table";
        if (from_gif(d, n, rgb))
            return TROWEL_OK;
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "palette=%s: a GIF without a global colour table", path);
    }
    if (n == 768) {
        memcpy(rgb, d, 768);
        *kind = "768 bytes of RGB";
        return TROWEL_OK;
    }
    return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                       "palette=%s: not a palette (known: a CLUT, APAL or PALS block as extract "
                       "writes it, 768 bytes of RGB, an indexed PNG, a GIF)",
                       path);
}

trowel_status scumm_palette_load(trowel_ctx *ctx, const char *path, uint8_t rgb[768],
                                 const char **kind)
{
    trowel_input *in;
    trowel_status s = trowel_open_related(ctx, NULL, path, &in); /* through the open hook */
    if (s != TROWEL_OK) /* the message must blame the palette, not the input */
        return trowel_fail(ctx, s, TROWEL_NO_OFFSET, "palette=%s: %s", path,
                           ctx->last_error.message);
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    uint8_t *d = NULL;
    size_t n = 0;
    if (trowel_reader_size(&r) > (16u << 20))
        s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                        "palette=%s: %llu bytes is too large for a palette file", path,
                        (unsigned long long)trowel_reader_size(&r));
    else
        s = trowel_reader_load(&r, &d, &n);
    trowel_input_close(in);
    if (s == TROWEL_OK)
        s = scumm_palette_from_bytes(ctx, path, d, n, rgb, kind);
    trowel_mem_free(ctx, d);
    return s;
}

bool scumm_palette_usable(const scumm_costume *c, const uint8_t rgb[768])
{
    const uint8_t *first = NULL;
    unsigned from = c->raw_colours ? 0 : 1, to = c->raw_colours ? 255 : c->colours;
    for (unsigned i = from; i < to; i++) {
        const uint8_t *p = rgb + 3 * (c->raw_colours ? i : c->palette[i]);
        if (!first)
            first = p;
        else if (memcmp(first, p, 3) != 0)
            return true;
    }
    return false;
}

/* Colours that can be told apart: the 16 EGA colours, then 16 more of
 * other hues (for 32-colour costumes), then a 6x6x6 cube and a grey ramp. */
static void distinct_colour(unsigned i, uint8_t out[3])
{
    static const uint8_t first32[32][3] = {
        {0, 0, 0},       {0, 0, 170},     {0, 170, 0},     {0, 170, 170},
        {170, 0, 0},     {170, 0, 170},   {170, 85, 0},    {170, 170, 170},
        {85, 85, 85},    {85, 85, 255},   {85, 255, 85},   {85, 255, 255},
        {255, 85, 85},   {255, 85, 255},  {255, 255, 85},  {255, 255, 255},
        {255, 170, 0},   {0, 85, 170},    {170, 255, 0},   {255, 0, 128},
        {128, 64, 0},    {0, 128, 64},    {64, 0, 128},    {255, 200, 150},
        {128, 128, 0},   {0, 128, 128},   {128, 0, 64},    {200, 200, 255},
        {64, 64, 64},    {192, 128, 64},  {64, 192, 128},  {128, 64, 192}};
    if (i < 32) {
        memcpy(out, first32[i], 3);
    } else if (i < 32 + 216) {
        unsigned k = i - 32;
        out[0] = (uint8_t)(k / 36 * 51);
        out[1] = (uint8_t)(k / 6 % 6 * 51);
        out[2] = (uint8_t)(k % 6 * 51);
    } else {
        memset(out, (int)(32 + (i - 248) * 28), 3);
    }
}

void scumm_standalone_palette(const scumm_costume *c, trowel_palette *pal)
{
    memset(pal, 0, sizeof *pal);
    pal->count = c->colours;
    for (unsigned i = 0; i < c->colours; i++) {
        distinct_colour(i, pal->rgba[i]);
        pal->rgba[i][3] = 255;
    }
    pal->rgba[c->raw_colours ? 255 : 0][3] = 0;
}
