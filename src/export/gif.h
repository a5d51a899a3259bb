/*
 * An animated GIF writer over giflib (GIF89a): a logical screen with a
 * global palette, frames placed on it with their own delay, transparent
 * colour, disposal and (optionally) their own palette, and the NETSCAPE2.0
 * loop extension. Everything is checked before the first byte is written.
 *
 * giflib has no custom allocators: its own small structures (the encoder
 * state, hash table and colour maps, a few KiB) come from malloc outside
 * the context's memory limit. Our row buffer goes through the limit.
 */
#ifndef TROWEL_EXPORT_GIF_H
#define TROWEL_EXPORT_GIF_H

#include "export/png.h"

enum {
    TROWEL_GIF_DISPOSE_NONE = 1,       /* leave the frame in place */
    TROWEL_GIF_DISPOSE_BACKGROUND = 2, /* clear its rectangle before the next */
    TROWEL_GIF_DISPOSE_PREVIOUS = 3    /* restore what was under it */
};

typedef struct trowel_gif_frame {
    uint32_t x, y, w, h;            /* its rectangle on the screen */
    const uint8_t *pixels;          /* w*h palette indices, row after row */
    const trowel_palette *palette;  /* its own colours, or NULL: the global ones */
    int transparent;                /* the index drawn transparent, -1: none */
    unsigned delay_cs;              /* hundredths of a second, up to 65535 */
    unsigned disposal;              /* TROWEL_GIF_DISPOSE_*, 0: unspecified */
} trowel_gif_frame;

typedef struct trowel_gif {
    uint32_t width, height;         /* the screen, each 1..65535 */
    const trowel_palette *palette;  /* global colours (alpha ignored) */
    unsigned background;            /* the screen's background index */
    long loops;                     /* 0: forever, n: n repeats, -1: no loop extension */
} trowel_gif;

/* Writes n frames (n >= 1). A frame outside the screen, an index at or past
 * its palette's count, a side past 65535 are TROWEL_ERR_USAGE. */
trowel_status trowel_gif_write(trowel_ctx *ctx, trowel_sink *out, const trowel_gif *gif,
                               const trowel_gif_frame *frames, size_t n);

#endif
