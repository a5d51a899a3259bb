/*
 * What the Cinematique image and font modules share (cine-font, cine-msk,
 * cine-ani, cine-set, cine-bg): name tests, the engine's 16-colour palettes,
 * the pixel layouts, and the conversion of decoded frames into one PNG frame
 * or a sheet. Static inline so each module stays one self-contained file.
 *
 * Facts (../shared/formats/delphine-cinematique.md, ScummVM engines/cine):
 *  - A palette is 16 big-endian words 0x0RGB with 3 bits per channel
 *    (R = (w >> 8) & 7); we scale a level v to v * 255 / 7.
 *  - Four-plane pixels: every 16 pixels are four big-endian words, planes 0
 *    to 3 (plane p gives bit p of the colour), leftmost pixel in the most
 *    significant bit. Eight-plane pixels are the same with eight words.
 *  - Masks: one bit per pixel, most significant bit leftmost, set = opaque.
 *  - Type 5 sprites: a 16-byte colour table, then two pixels per byte, high
 *    nibble first, each nibble an index into the table.
 */
#ifndef TROWEL_CINE_GFX_H
#define TROWEL_CINE_GFX_H

#include "core/module.h"
#include "export/image.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ names */

static inline const char *cine_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* True when the input's file name ends in ext (".MSK"), in any case. */
static inline bool cine_name_has_ext(const trowel_input *in, const char *ext)
{
    const char *name = cine_base_name(trowel_input_name(in));
    size_t n = strlen(name), e = strlen(ext);
    if (n <= e)
        return false;
    for (size_t i = 0; i < e; i++)
        if (toupper((unsigned char)name[n - e + i]) != toupper((unsigned char)ext[i]))
            return false;
    return true;
}

/* True when the input's file name is name, in any case. */
static inline bool cine_name_is(const trowel_input *in, const char *name)
{
    const char *base = cine_base_name(trowel_input_name(in));
    for (; *base && *name; base++, name++)
        if (toupper((unsigned char)*base) != toupper((unsigned char)*name))
            return false;
    return *base == *name;
}

/* SZDD files belong to the szdd format whatever their size says. */
static inline bool cine_is_szdd(trowel_reader *r)
{
    const uint8_t *p;
    if (trowel_reader_size(r) < 4 || trowel_reader_peek(r, 4, &p) != TROWEL_OK)
        return false;
    return memcmp(p, "SZDD", 4) == 0 || memcmp(p, "SZ \x88", 4) == 0;
}

/* --------------------------------------------------------------- palettes */

static inline uint8_t cine_level(unsigned v3)
{
    return (uint8_t)(v3 * 255 / 7);
}

/* 16 words 0x0RGB (32 bytes, big-endian) into an opaque palette. */
static inline void cine_palette_from_words(trowel_palette *p, const uint8_t *words)
{
    memset(p, 0, sizeof *p);
    p->count = 16;
    for (unsigned i = 0; i < 16; i++) {
        unsigned w = (unsigned)words[2 * i] << 8 | words[2 * i + 1];
        p->rgba[i][0] = cine_level((w >> 8) & 7);
        p->rgba[i][1] = cine_level((w >> 4) & 7);
        p->rgba[i][2] = cine_level(w & 7);
        p->rgba[i][3] = 255;
    }
}

static inline void cine_palette_from_rgb(trowel_palette *p, const uint8_t *rgb)
{
    trowel_palette_from_rgb(p, rgb);
}

enum {
    CINE_PI1_SIZE = 2 + 32 + 32000,
    CINE_NEO_SIZE = 128 + 32000,
    CINE_BG8_SIZE = 2 + 768 + 64000
};

/* A palette from -O palette=FILE: a bare 32-byte palette, a bare 768-byte
 * RGB palette, or a background holding one (PI1-style, NEO, type 8). */
static inline trowel_status cine_palette_from_file(trowel_ctx *ctx, const char *path,
                                                   trowel_palette *p)
{
    trowel_input *in;
    trowel_status s = trowel_open_related(ctx, NULL, path, &in); /* through the open hook */
    if (s != TROWEL_OK) /* the message must blame the palette, not the input */
        return trowel_fail(ctx, s, TROWEL_NO_OFFSET, "palette=%s: %s", path,
                           ctx->last_error.message);
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    uint64_t size = trowel_reader_size(&r);
    uint8_t buf[768];
    uint16_t type = 0;
    if (size >= 2)
        s = trowel_read_u16be(&r, &type);
    if (s == TROWEL_OK && size == 32) {
        s = trowel_reader_seek(&r, 0);
        if (s == TROWEL_OK && (s = trowel_read_bytes(&r, buf, 32)) == TROWEL_OK)
            cine_palette_from_words(p, buf);
    } else if (s == TROWEL_OK && size == 768) {
        s = trowel_reader_seek(&r, 0);
        if (s == TROWEL_OK && (s = trowel_read_bytes(&r, buf, 768)) == TROWEL_OK)
            cine_palette_from_rgb(p, buf);
    } else if (s == TROWEL_OK && type == 8 && size >= CINE_BG8_SIZE) {
        if ((s = trowel_read_bytes(&r, buf, 768)) == TROWEL_OK)
            cine_palette_from_rgb(p, buf);
    } else if (s == TROWEL_OK && size == CINE_NEO_SIZE) {
        s = trowel_reader_seek(&r, 4);
        if (s == TROWEL_OK && (s = trowel_read_bytes(&r, buf, 32)) == TROWEL_OK)
            cine_palette_from_words(p, buf);
    } else if (s == TROWEL_OK && size >= CINE_PI1_SIZE) {
        if ((s = trowel_read_bytes(&r, buf, 32)) == TROWEL_OK)
            cine_palette_from_words(p, buf);
    } else if (s == TROWEL_OK) {
        trowel_input_close(in);
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "palette=%s: not a palette (32 or 768 bytes) or a background holding "
                           "one",
                           path);
    }
    trowel_input_close(in);
    if (s != TROWEL_OK) /* a read error is the palette's, and its offset not the input's */
        return trowel_fail(ctx, s, TROWEL_NO_OFFSET, "palette=%s: %s", path,
                           ctx->last_error.message);
    return s;
}

/* ----------------------------------------------------------------- pixels */

/* groups of 16 pixels, each 2*planes bytes (planes big-endian words). */
static inline void cine_decode_planar(const uint8_t *src, size_t groups, unsigned planes,
                                      uint8_t *dst)
{
    for (size_t g = 0; g < groups; g++, src += 2 * planes) {
        for (unsigned bit = 0; bit < 16; bit++) {
            unsigned colour = 0;
            for (unsigned pl = 0; pl < planes; pl++) {
                unsigned word = (unsigned)src[2 * pl] << 8 | src[2 * pl + 1];
                colour |= ((word >> (15 - bit)) & 1u) << pl;
            }
            *dst++ = (uint8_t)colour;
        }
    }
}

/* n bytes of mask into 8n pixels: 1 where the bit is set (opaque). */
static inline void cine_decode_mask(const uint8_t *src, size_t n, uint8_t *dst)
{
    for (size_t i = 0; i < n; i++)
        for (unsigned bit = 0; bit < 8; bit++)
            *dst++ = (uint8_t)((src[i] >> (7 - bit)) & 1u);
}

/* n bytes of nibbles into 2n pixels through a 16-entry table. */
static inline void cine_decode_nibbles(const uint8_t *table, const uint8_t *src, size_t n,
                                       uint8_t *dst)
{
    for (size_t i = 0; i < n; i++) {
        *dst++ = table[src[i] >> 4];
        *dst++ = table[src[i] & 15];
    }
}

/* Loads len bytes at off of the input into a new buffer (memory limit). */
static inline trowel_status cine_load(trowel_archive *a, uint64_t off, uint64_t len,
                                      uint8_t **out)
{
    *out = NULL;
    trowel_reader whole, part;
    trowel_reader_init(&whole, a->ctx, a->in);
    trowel_status s = trowel_reader_sub(&whole, off, len, &part);
    size_t got;
    if (s == TROWEL_OK)
        s = trowel_reader_load(&part, out, &got);
    return s;
}

/* --------------------------------------------------------- to PNG frames */

/* A format's frames, as the PNG conversion sees them (the shared exporter,
 * export/image.h, does the work; these callbacks take the archive). */
typedef struct cine_frames {
    trowel_archive *a;
    size_t count;
    unsigned colours;        /* 2 (masks), 16 or 256 */
    int transparent;         /* default transparent colour, -1: none */
    uint32_t columns;        /* default sheet columns, 0: about square */
    const trowel_palette *own; /* the file's palette, or NULL */
    void (*size)(trowel_archive *a, size_t i, uint32_t *w, uint32_t *h);
    /* decodes frame i into px (w*h indices, below colours) */
    trowel_status (*decode)(trowel_archive *a, size_t i, uint8_t *px);
} cine_frames;

/* The png target's options, rows of each image format's option table. */
#define CINE_PNG_OPTIONS                                                                    \
    TROWEL_IMAGE_PNG_OPTIONS(                                                               \
        "colours from FILE (a 32- or 768-byte palette, or a background holding one)")

static inline trowel_status cine_option_uint(trowel_ctx *ctx, const char *const *opts,
                                             size_t nopts, const char *key, unsigned long max,
                                             unsigned long *v, bool *given)
{
    return trowel_image_option_uint(ctx, opts, nopts, key, max, v, given);
}

static inline void cine_frames_size(const void *user, size_t i, uint32_t *w, uint32_t *h)
{
    const cine_frames *f = user;
    f->size(f->a, i, w, h);
}

static inline trowel_status cine_frames_decode(const void *user, size_t i, uint8_t *px)
{
    const cine_frames *f = user;
    return f->decode(f->a, i, px);
}

/* convert --to png: -O frame=N for one frame, else a sheet (-O columns=N). */
static inline trowel_status cine_convert_png(const cine_frames *f, const char *const *opts,
                                             size_t nopts, trowel_sink *out)
{
    trowel_frames tf = {.ctx = f->a->ctx, .user = f, .count = f->count,
                        .colours = f->colours, .transparent = f->transparent,
                        .columns = f->columns, .own = f->own, .load = cine_palette_from_file,
                        .size = cine_frames_size, .decode = cine_frames_decode};
    return trowel_image_convert_png(&tf, opts, nopts, out);
}

/* ------------------------------------------------- ANI/MSK frame header */

#define CINE_ANIM_HEADER 0x16

/* The 0x16-byte header of ANI and MSK files: a 4-byte id, i16BE frame
 * width in bytes per row, i16BE height, 6 unknown bytes, i16BE frame count
 * at 0x0E, 4 unknown bytes, u16BE at 0x14. Frames of width x height bytes
 * follow one after another. */
typedef struct cine_anim_header {
    uint8_t id[4];
    int16_t row_bytes, height, frames;
    uint16_t field_14;
    uint64_t frame_bytes, data_bytes; /* valid when the counts are positive */
} cine_anim_header;

static inline trowel_status cine_anim_read(trowel_reader *r, cine_anim_header *h)
{
    uint16_t w, ht, n;
    trowel_status s;
    memset(h, 0, sizeof *h);
    if ((s = trowel_read_bytes(r, h->id, 4)) || (s = trowel_read_u16be(r, &w)) ||
        (s = trowel_read_u16be(r, &ht)) || (s = trowel_reader_skip(r, 6)) ||
        (s = trowel_read_u16be(r, &n)) || (s = trowel_reader_skip(r, 4)) ||
        (s = trowel_read_u16be(r, &h->field_14)))
        return s;
    h->row_bytes = (int16_t)w;
    h->height = (int16_t)ht;
    h->frames = (int16_t)n;
    if (h->row_bytes > 0 && h->height > 0 && h->frames > 0) {
        h->frame_bytes = (uint64_t)h->row_bytes * (uint64_t)h->height;
        h->data_bytes = h->frame_bytes * (uint64_t)h->frames;
    }
    return TROWEL_OK;
}

/* True when the header's frames fill the file exactly. */
static inline bool cine_anim_fits_exactly(trowel_reader *r, const cine_anim_header *h)
{
    return h->data_bytes > 0 && CINE_ANIM_HEADER + h->data_bytes == trowel_reader_size(r);
}

/* open: checks the counts against the file, adds info and one entry per
 * frame (its stored bytes). pixels_per_byte: 8 for masks, 2 for ANI. */
static inline trowel_status cine_anim_open(trowel_archive *a, trowel_reader *r, const char *id,
                                           unsigned pixels_per_byte, cine_anim_header *h)
{
    trowel_status s = cine_anim_read(r, h);
    if (s != TROWEL_OK)
        return trowel_fail(a->ctx, s, trowel_reader_size(r), "the 22-byte header is cut short");
    if (h->row_bytes <= 0 || h->height <= 0 || h->frames <= 0)
        return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, 4,
                           "width %d bytes, height %d, %d frames: each must be positive",
                           h->row_bytes, h->height, h->frames);
    if (CINE_ANIM_HEADER + h->data_bytes > trowel_reader_size(r))
        return trowel_fail(a->ctx, TROWEL_ERR_TRUNCATED, trowel_reader_size(r),
                           "%d frames of %llu bytes need %llu bytes but the file has %llu",
                           h->frames, (unsigned long long)h->frame_bytes,
                           (unsigned long long)(CINE_ANIM_HEADER + h->data_bytes),
                           (unsigned long long)trowel_reader_size(r));
    char idtext[9];
    for (unsigned i = 0; i < 4; i++)
        snprintf(idtext + 2 * i, 3, "%02x", h->id[i]);
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", id)) ||
        (s = trowel_props_add_uint(info, "version", 0)) ||
        (s = trowel_props_add_str(info, "id", idtext)) ||
        (s = trowel_props_add_uint(info, "row_bytes", (uint64_t)h->row_bytes)) ||
        (s = trowel_props_add_uint(info, "width", (uint64_t)h->row_bytes * pixels_per_byte)) ||
        (s = trowel_props_add_uint(info, "height", (uint64_t)h->height)) ||
        (s = trowel_props_add_uint(info, "frames", (uint64_t)h->frames)) ||
        (s = trowel_props_add_hex(info, "field_14", h->field_14)) ||
        (s = trowel_props_add_uint(info, "trailing_bytes",
                                   trowel_reader_size(r) - CINE_ANIM_HEADER - h->data_bytes)))
        return s;
    for (int i = 0; i < h->frames; i++) {
        char name[32];
        snprintf(name, sizeof name, "frame_%03d", i);
        trowel_entry e = {.name = name, .size = h->frame_bytes, .packed_size = h->frame_bytes,
                          .offset = CINE_ANIM_HEADER + (uint64_t)i * h->frame_bytes,
                          .method = "stored"};
        trowel_props *extra;
        if ((s = trowel_archive_add(a, &e, &extra)) != TROWEL_OK)
            return s;
    }
    return TROWEL_OK;
}

/* read_entry for formats whose entries are stored bytes. */
static inline trowel_status cine_copy_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    trowel_reader whole, part;
    trowel_reader_init(&whole, a->ctx, a->in);
    trowel_status s = trowel_reader_sub(&whole, a->entries[index].offset,
                                        a->entries[index].packed_size, &part);
    return s == TROWEL_OK ? trowel_reader_copy_to(&part, out) : s;
}

#endif
