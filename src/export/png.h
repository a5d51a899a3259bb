/*
 * A small PNG writer over libpng for the asset converters: indexed images
 * (8 bits per pixel, a palette of up to 256 RGBA colours written as PLTE
 * plus tRNS) and RGBA images, streamed into a trowel_sink. Also a helper
 * that lays out frames of different sizes on one sheet.
 *
 * libpng reports errors by longjmp; the writer catches them, frees what it
 * allocated and returns a status, so no error leaks memory or escapes.
 */
#ifndef TROWEL_EXPORT_PNG_H
#define TROWEL_EXPORT_PNG_H

#include "core/core.h"

/* PNG allows 2^31-1; we keep far below it so row sizes never overflow. */
#define TROWEL_PNG_MAX_SIDE 65535u

typedef struct trowel_palette {
    uint8_t rgba[256][4];
    unsigned count; /* 1..256 */
} trowel_palette;

/* Writes a w x h image of palette indices (one byte per pixel, row after
 * row). Every index must be below pal->count. */
trowel_status trowel_png_write_indexed(trowel_ctx *ctx, trowel_sink *out, uint32_t w, uint32_t h,
                                       const uint8_t *pixels, const trowel_palette *pal);
/* Writes a w x h RGBA image (four bytes per pixel, row after row). */
trowel_status trowel_png_write_rgba(trowel_ctx *ctx, trowel_sink *out, uint32_t w, uint32_t h,
                                    const uint8_t *pixels);

/* Writes a w x h 16-bit grayscale image (two bytes per pixel, most
 * significant first, as PNG stores them). */
trowel_status trowel_png_write_gray16(trowel_ctx *ctx, trowel_sink *out, uint32_t w, uint32_t h,
                                      const uint8_t *samples);
/* A tEXt chunk: Latin-1 key (1 to 79 bytes) and text. */
typedef struct trowel_png_text {
    const char *key;
    const char *value;
} trowel_png_text;
#define TROWEL_PNG_MAX_TEXT 16

/* Writes a w x h grayscale image of depth 8 (a byte a pixel) or 16 (two
 * bytes, most significant first), with text_count tEXt chunks. */
trowel_status trowel_png_write_gray(trowel_ctx *ctx, trowel_sink *out, uint32_t w, uint32_t h,
                                    unsigned depth, const uint8_t *samples,
                                    const trowel_png_text *text, size_t text_count);
/* Reads an 8- or 16-bit grayscale PNG from memory into *samples (w * h
 * values, row after row, trowel_mem_alloc'ed for the caller to free);
 * *depth is 8 or 16. Other colour types are TROWEL_ERR_UNSUPPORTED. */
trowel_status trowel_png_read_gray(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                   uint32_t *w, uint32_t *h, unsigned *depth, uint16_t **samples);
/* A text chunk asked for: its text is copied into value (cut if longer;
 * "" when the PNG has no such chunk). */
typedef struct trowel_png_text_slot {
    const char *key;
    char value[256];
} trowel_png_text_slot;
/* trowel_png_read_gray, also reading the text chunks asked for. */
trowel_status trowel_png_read_gray_text(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                        uint32_t *w, uint32_t *h, unsigned *depth,
                                        uint16_t **samples, trowel_png_text_slot *want,
                                        size_t want_count);
/* Reads an indexed PNG (colour type palette, 1 to 8 bits) from memory:
 * *pixels (trowel_mem_alloc, one index a byte, row after row), its size
 * and its palette. Other PNGs are TROWEL_ERR_UNSUPPORTED ("not an indexed
 * PNG"); broken ones TROWEL_ERR_CORRUPT. name is for messages. */
trowel_status trowel_png_read_indexed(trowel_ctx *ctx, const char *name, const uint8_t *data,
                                      size_t size, uint8_t **pixels, uint32_t *w, uint32_t *h,
                                      trowel_palette *pal);
/* Reads any PNG from memory as 8-bit RGBA: *rgba (trowel_mem_alloc, 4
 * bytes a pixel, row after row; no alpha channel reads as 255). Broken
 * PNGs are TROWEL_ERR_CORRUPT. */
trowel_status trowel_png_read_rgba(trowel_ctx *ctx, const char *name, const uint8_t *data,
                                   size_t size, uint8_t **rgba, uint32_t *w, uint32_t *h);

/* A sheet: frames placed left to right in rows of `columns` cells, every
 * cell as large as the largest frame, frame i's top left corner at
 * (x[i], y[i]). */
typedef struct trowel_sheet {
    uint32_t columns, rows;
    uint32_t cell_w, cell_h;
    uint32_t width, height;
} trowel_sheet;

/* Plans the sheet for n frames of the given sizes (columns 0: about a
 * square). Refuses (LIMIT) a sheet whose sides pass TROWEL_PNG_MAX_SIDE or
 * whose pixels (bytes_per_pixel each) would pass the memory limit. */
trowel_status trowel_sheet_plan(trowel_ctx *ctx, size_t n, const uint32_t *w, const uint32_t *h,
                                uint32_t columns, size_t bytes_per_pixel, trowel_sheet *out);
/* Where cell i starts. */
void trowel_sheet_cell(const trowel_sheet *s, size_t i, uint32_t *x, uint32_t *y);
/* Copies a fw x fh frame (bpp bytes per pixel) into cell i of a sheet
 * buffer of s->width x s->height pixels. */
void trowel_sheet_blit(const trowel_sheet *s, uint8_t *sheet, size_t i, const uint8_t *frame,
                       uint32_t fw, uint32_t fh, size_t bpp);

#endif
