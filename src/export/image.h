/*
 * The image exporter every family shares: a format describes its frames
 * (count, colours, the transparent colour, its own palette, a size and a
 * decode callback) and the exporter turns them into PNG: one frame, or a
 * sheet of all of them; the palette comes from -O palette=FILE, the file's
 * own, or a grey ramp, with -O transparent=N|none on top. A JSON atlas
 * tells where each frame of a sheet sits.
 */
#ifndef TROWEL_EXPORT_IMAGE_H
#define TROWEL_EXPORT_IMAGE_H

#include "export/png.h"

struct json_object;

/* Loads -O palette=FILE; the format decides which file forms it accepts. */
typedef trowel_status (*trowel_palette_loader)(trowel_ctx *ctx, const char *path,
                                               trowel_palette *p);

/* A format's frames, as the exporter sees them. */
typedef struct trowel_frames {
    trowel_ctx *ctx;
    const void *user;           /* handed to size and decode */
    size_t count;
    unsigned colours;           /* 2 (masks: black/white), 16, 32 ... 256 */
    int transparent;            /* default transparent colour, -1: none */
    uint32_t columns;           /* default sheet columns, 0: about square */
    const trowel_palette *own;  /* the file's palette, or NULL */
    trowel_palette_loader load; /* palette=FILE; NULL: a 768-byte RGB file */
    void (*size)(const void *user, size_t i, uint32_t *w, uint32_t *h);
    /* decodes frame i into px (w*h indices, below colours) */
    trowel_status (*decode)(const void *user, size_t i, uint8_t *px);
} trowel_frames;

/* 256 RGB triplets (768 bytes) into an opaque palette. */
void trowel_palette_from_rgb(trowel_palette *p, const uint8_t *rgb);
/* A grey ramp from black (0) to white (count - 1), opaque. */
void trowel_palette_grey(trowel_palette *p, unsigned count);
/* palette=FILE as a bare 768-byte RGB file (256 colours). */
trowel_status trowel_palette_load_rgb768(trowel_ctx *ctx, const char *path, trowel_palette *p);

/* An unsigned number option within [0, max]; absent leaves *v alone. */
trowel_status trowel_image_option_uint(trowel_ctx *ctx, const char *const *opts, size_t nopts,
                                       const char *key, unsigned long max, unsigned long *v,
                                       bool *given);

/* The palette the frames get: masks black/white; else palette=FILE, the
 * frames' own, or grey; then the transparent colour's alpha set to 0. */
trowel_status trowel_image_palette(const trowel_frames *f, const char *const *opts, size_t nopts,
                                   trowel_palette *pal);

/* Frame i as one indexed PNG. */
trowel_status trowel_image_png_one(const trowel_frames *f, size_t i, const trowel_palette *pal,
                                   trowel_sink *out);

/* Every frame on one sheet (gaps take a fully transparent colour: an extra
 * palette entry when there is room, else the transparent one, else 0).
 * pal may grow by that entry. When plan is not NULL it receives the layout
 * (for an atlas). */
trowel_status trowel_image_png_sheet(const trowel_frames *f, uint32_t columns,
                                     trowel_palette *pal, trowel_sink *out, trowel_sheet *plan);

/* convert --to png: -O frame=N for one frame, else a sheet (-O columns=N). */
trowel_status trowel_image_convert_png(const trowel_frames *f, const char *const *opts,
                                       size_t nopts, trowel_sink *out);

/* The atlas of a sheet: a JSON array, one {"x","y","w","h"} per frame. */
trowel_status trowel_image_atlas(const trowel_frames *f, const trowel_sheet *plan,
                                 struct json_object **out);

/* The png target's options, rows of each image format's option table. */
#define TROWEL_IMAGE_PNG_OPTIONS(palette_help)                                               \
    {"frame", "N", "one frame (from 0) instead of a sheet of them all", "png",                \
     .type = TROWEL_OPTION_UINT},                                                            \
    {"palette", "FILE", palette_help, "png", .type = TROWEL_OPTION_STRING},                   \
    {"transparent", "N|none", "the colour index drawn transparent (none: every colour opaque)", \
     "png", .type = TROWEL_OPTION_UINT, .choices = "none"},                                   \
    {"columns", "N", "frames per row of the sheet (default: about square)", "png",            \
     .type = TROWEL_OPTION_UINT, .min = 0, .max = 4096}

#endif
