/*
 * tres-pid: Trespasser's texture directory (`<level>-130.pid`) over its
 * page file (the SPZ beside it, `<level>-130.spz`, which expands to the
 * game's `.swp`; an already expanded `.swp` beside it is used too).
 *
 * PID layout (little-endian u32 unless said otherwise):
 *   header, 32 bytes: version 0x130, bump-map bit depth (16), raster table
 *   offset, raster count, palette offset (32), palette count, pageable
 *   offset, non-pageable count.
 *   palettes from the palette offset, each: u32 chunk size (16 + 4n: one
 *   spare colour), u32 colour count n, u32 hash, n colours as B, G, R,
 *   flags, 4 slack bytes; the next one starts chunk size bytes on.
 *   rasters from the raster table offset, 56 bytes each: byte size, SWP
 *   offset, width, height, stride (pixels), bits per pixel (8 or 16),
 *   constant colour, transparent, bump, occlusion (non-zero = true),
 *   palette index (0xFFFFFFFF: none), 4 pad bytes, u64 hash.
 * 8-bit rasters are paletted textures; 16-bit rasters are bump maps whose
 * pixels hold phi in bits 0-3, theta in bits 4-9 and a colour index in
 * bits 10-15. Mips go down to 8 pixels and share the low 32 bits of the
 * hash (a CRC-32 of the texture and bump names); the high bits add the
 * size and palette.
 *
 * The directory becomes entries: `index.json` (every raster's hash, size,
 * flags and palette; every palette), then per raster
 * `<low 32 bits of the hash>/<w>x<h>.png` (a mip chain shares a folder):
 * 8-bit rasters as paletted PNGs with their palette, colour 0 transparent
 * when the raster is; bump maps as their colour-index image in the same
 * form plus `<w>x<h>-angles.png`, an RGBA image with theta x 4 in red and
 * phi x 16 in green. Which colour a transparent raster drops is the game
 * renderer's convention (index 0), not a field of the file.
 * Facts: ../shared/formats/trespasser.md (PID and SWP data).
 */
#include "spz.h"
#include "core/module.h"
#include "core/sink.h"
#include "export/png.h"

#include <ctype.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#define PID_VERSION 0x130
#define PID_HEADER_SIZE 32
#define RASTER_SIZE 56
#define NO_PALETTE 0xFFFFFFFFu
#define MAX_SIDE 4096u

typedef struct pid_palette {
    uint32_t hash;
    uint32_t count;
    uint8_t rgba[256][4];
} pid_palette;

typedef struct pid_raster {
    uint32_t size, offset, width, height, stride, bits, constant;
    bool transparent, bump, occlusion;
    uint32_t palette;
    uint64_t hash;
} pid_raster;

/* What an entry is: the index, a raster's pixels or its angle map. */
enum pid_entry_kind { ENTRY_INDEX, ENTRY_IMAGE, ENTRY_ANGLES };

typedef struct pid_entry {
    enum pid_entry_kind kind;
    uint32_t raster;
} pid_entry;

typedef struct pid_state {
    uint32_t header[8];
    pid_palette *palettes;
    uint32_t palette_count;
    pid_raster *rasters;
    uint32_t raster_count;
    pid_entry *entries;
    uint8_t *swp; /* the expanded page file, loaded on first use */
    size_t swp_size;
    bool swp_tried;
    trowel_error swp_error; /* why it could not be loaded, given again each time */
    char swp_path[1024];
} pid_state;

static int pid_bid(trowel_reader *r)
{
    uint32_t h[8];
    for (int i = 0; i < 8; i++)
        if (trowel_read_u32le(r, &h[i]) != TROWEL_OK)
            return TROWEL_BID_NONE;
    if (h[0] != PID_VERSION || h[4] != PID_HEADER_SIZE)
        return TROWEL_BID_NONE;
    uint64_t end = (uint64_t)h[2] + (uint64_t)h[3] * RASTER_SIZE;
    return end <= trowel_reader_size(r) ? TROWEL_BID_STRONG : TROWEL_BID_MAGIC;
}

static trowel_status read_palettes(trowel_ctx *ctx, trowel_reader *r, pid_state *st)
{
    uint32_t n = st->header[5];
    /* Each palette needs at least its 16-byte frame. */
    if ((uint64_t)n * 16 > trowel_reader_size(r))
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, 20,
                           "%lu palettes cannot fit in a %llu-byte file", (unsigned long)n,
                           (unsigned long long)trowel_reader_size(r));
    trowel_status s = trowel_mem_new_zeroed(ctx, n ? n : 1, sizeof *st->palettes, &st->palettes);
    if (s != TROWEL_OK)
        return s;
    st->palette_count = n;
    uint64_t at = st->header[4];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t size, count;
        pid_palette *p = &st->palettes[i];
        if ((s = trowel_reader_seek(r, at)) || (s = trowel_read_u32le(r, &size)) ||
            (s = trowel_read_u32le(r, &count)) || (s = trowel_read_u32le(r, &p->hash)))
            return s;
        if (count == 0 || count > 256 || size < 16 + 4 * (uint64_t)count)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, at,
                               "palette %lu: %lu colours in a %lu-byte chunk (1 to 256 "
                               "colours, 16 + 4 per colour bytes)",
                               (unsigned long)i, (unsigned long)count, (unsigned long)size);
        p->count = count;
        for (uint32_t c = 0; c < count; c++) {
            uint8_t bgrf[4];
            if ((s = trowel_read_bytes(r, bgrf, 4)) != TROWEL_OK)
                return s;
            p->rgba[c][0] = bgrf[2];
            p->rgba[c][1] = bgrf[1];
            p->rgba[c][2] = bgrf[0];
            p->rgba[c][3] = 255;
        }
        at += size;
    }
    return TROWEL_OK;
}

static trowel_status read_rasters(trowel_ctx *ctx, trowel_reader *r, pid_state *st)
{
    uint32_t n = st->header[3];
    uint64_t start = st->header[2];
    if (start > trowel_reader_size(r) ||
        (uint64_t)n * RASTER_SIZE > trowel_reader_size(r) - start)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, 8,
                           "%lu rasters of 56 bytes from 0x%llx pass the end of the %llu-byte "
                           "file",
                           (unsigned long)n, (unsigned long long)start,
                           (unsigned long long)trowel_reader_size(r));
    trowel_status s = trowel_mem_new_zeroed(ctx, n ? n : 1, sizeof *st->rasters, &st->rasters);
    if (s != TROWEL_OK)
        return s;
    st->raster_count = n;
    s = trowel_reader_seek(r, start);
    for (uint32_t i = 0; s == TROWEL_OK && i < n; i++) {
        uint32_t f[12];
        uint64_t at = trowel_reader_tell(r);
        for (int k = 0; s == TROWEL_OK && k < 12; k++)
            s = trowel_read_u32le(r, &f[k]);
        pid_raster *x = &st->rasters[i];
        if (s == TROWEL_OK)
            s = trowel_read_u64le(r, &x->hash);
        if (s != TROWEL_OK)
            return s;
        *x = (pid_raster){.size = f[0], .offset = f[1], .width = f[2], .height = f[3],
                          .stride = f[4], .bits = f[5], .constant = f[6],
                          .transparent = f[7] != 0, .bump = f[8] != 0, .occlusion = f[9] != 0,
                          .palette = f[10], .hash = x->hash};
        if ((x->bits != 8 && x->bits != 16) || x->width == 0 || x->height == 0 ||
            x->width > MAX_SIDE || x->height > MAX_SIDE || x->stride < x->width ||
            (x->palette != NO_PALETTE && x->palette >= st->palette_count))
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, at,
                               "raster %lu: %lux%lu, stride %lu, %lu bits, palette %ld is not a "
                               "texture the game draws",
                               (unsigned long)i, (unsigned long)x->width,
                               (unsigned long)x->height, (unsigned long)x->stride,
                               (unsigned long)x->bits,
                               x->palette == NO_PALETTE ? -1L : (long)x->palette);
    }
    return s;
}

/* ------------------------------------------------------------ page file */

/* The sibling page file: <base>.spz (compressed) or <base>.swp, asked for
 * through the context's open hook (trowel_open_related), so a program
 * embedding the library can serve it. */
static trowel_status find_and_load_swp(trowel_archive *a, pid_state *st);

/* The page file, loaded once; a failure is remembered and given again, with
 * its real cause (missing, or damaged and why), for every later use. */
static trowel_status load_swp(trowel_archive *a, pid_state *st)
{
    if (st->swp)
        return TROWEL_OK;
    if (st->swp_tried)
        return trowel_fail(a->ctx, st->swp_error.status, st->swp_error.offset, "%s",
                           st->swp_error.message);
    st->swp_tried = true;
    trowel_status s = find_and_load_swp(a, st);
    if (s != TROWEL_OK) {
        st->swp_error = a->ctx->last_error;
        trowel_mem_free(a->ctx, st->swp);
        st->swp = NULL;
    }
    return s;
}

static trowel_status find_and_load_swp(trowel_archive *a, pid_state *st)
{
    /* The sibling is asked for by its plain name beside the PID, through
     * the open hook (an embedder may serve it); st->swp_path names it in
     * messages as a path. */
    const char *path = trowel_input_name(a->in);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    int stem = (int)(dot ? (size_t)(dot - base) : strlen(base));
    int folder = (int)(base - path);
    static const char *const exts[] = {".spz", ".SPZ", ".swp", ".SWP"};
    trowel_input *in = NULL;
    int found = -1;
    for (int i = 0; i < 4 && found < 0; i++) {
        char name[256];
        snprintf(name, sizeof name, "%.*s%s", stem, base, exts[i]);
        snprintf(st->swp_path, sizeof st->swp_path, "%.*s%s", folder, path, name);
        trowel_error saved = a->ctx->last_error;
        if (trowel_open_related(a->ctx, path, name, &in) == TROWEL_OK)
            found = i;
        a->ctx->last_error = saved;
    }
    if (found < 0) {
        snprintf(st->swp_path, sizeof st->swp_path, "%.*s%.*s.spz or .swp", folder, path, stem,
                 base);
        return trowel_fail(a->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET,
                           "no page file beside the PID (%s)", st->swp_path);
    }
    trowel_reader r;
    trowel_reader_init(&r, a->ctx, in);
    trowel_status s;
    if (found >= 2) {
        s = trowel_reader_load(&r, &st->swp, &st->swp_size);
    } else {
        trowel_sink *mem = NULL;
        s = trowel_sink_open_memory(a->ctx, &mem);
        if (s == TROWEL_OK && (s = trowel_spz_decode(a->ctx, &r, mem)) != TROWEL_OK) {
            /* its offsets count in the page file, not the PID: name it */
            trowel_error why = a->ctx->last_error;
            trowel_fail(a->ctx, s, why.offset, "%s: %s", st->swp_path, why.message);
        }
        if (s == TROWEL_OK)
            s = trowel_sink_take(mem, &st->swp, &st->swp_size);
        trowel_sink_discard(mem);
    }
    trowel_input_close(in);
    return s;
}

/* ---------------------------------------------------------------- images */

static void raster_palette(const pid_state *st, const pid_raster *x, trowel_palette *pal)
{
    memset(pal, 0, sizeof *pal);
    pal->count = 256; /* padded, so any index a file holds can be written */
    for (unsigned i = 0; i < 256; i++) {
        if (x->palette != NO_PALETTE && i < st->palettes[x->palette].count)
            memcpy(pal->rgba[i], st->palettes[x->palette].rgba[i], 4);
        else if (x->palette == NO_PALETTE) {
            uint8_t v = (uint8_t)(x->bits == 16 ? i * 4 + i / 16 : i); /* a gray ramp */
            pal->rgba[i][0] = pal->rgba[i][1] = pal->rgba[i][2] = v;
        }
        pal->rgba[i][3] = 255;
    }
    if (x->transparent)
        pal->rgba[0][3] = 0;
}

/* A bump map's 16-bit pixels (phi in bits 0-3, theta in 4-9, a colour
 * index in 10-15), little-endian: the colour indexes of one row. */
static void bump_colours_row(const uint8_t *row, uint32_t width, uint8_t *dst)
{
    for (uint32_t i = 0; i < width; i++)
        dst[i] = (uint8_t)(row[2 * i + 1] >> 2);
}

/* The same row as RGBA: theta x 4 in red, phi x 16 in green. */
static void bump_angles_row(const uint8_t *row, uint32_t width, uint8_t *dst)
{
    for (uint32_t i = 0; i < width; i++) {
        uint16_t v = (uint16_t)(row[2 * i] | row[2 * i + 1] << 8);
        dst[4 * i] = (uint8_t)(((v >> 4) & 0x3F) << 2);
        dst[4 * i + 1] = (uint8_t)((v & 0xF) << 4);
        dst[4 * i + 2] = 0;
        dst[4 * i + 3] = 255;
    }
}

static trowel_status write_raster(trowel_archive *a, pid_state *st, const pid_entry *e,
                                  trowel_sink *out)
{
    const pid_raster *x = &st->rasters[e->raster];
    trowel_status s = load_swp(a, st);
    if (s != TROWEL_OK)
        return s;
    size_t bpp = x->bits / 8;
    uint64_t need = ((uint64_t)x->stride * (x->height - 1) + x->width) * bpp;
    if (x->offset > st->swp_size || need > st->swp_size - x->offset)
        return trowel_fail(a->ctx, TROWEL_ERR_TRUNCATED, TROWEL_NO_OFFSET,
                           "raster %lu: %llu bytes at 0x%lx pass the %zu-byte page file",
                           (unsigned long)e->raster, (unsigned long long)need,
                           (unsigned long)x->offset, st->swp_size);
    const uint8_t *src = st->swp + x->offset;
    size_t count = (size_t)x->width * x->height;
    uint8_t *px;
    if ((s = trowel_mem_new(a->ctx, count * (e->kind == ENTRY_ANGLES ? 4 : 1), &px)) != TROWEL_OK)
        return s;
    for (uint32_t y = 0; y < x->height; y++) {
        const uint8_t *row = src + (size_t)y * x->stride * bpp;
        uint8_t *dst = px + (size_t)y * x->width * (e->kind == ENTRY_ANGLES ? 4 : 1);
        if (bpp == 1)
            memcpy(dst, row, x->width);
        else if (e->kind == ENTRY_ANGLES)
            bump_angles_row(row, x->width, dst);
        else
            bump_colours_row(row, x->width, dst);
    }
    if (e->kind == ENTRY_ANGLES) {
        s = trowel_png_write_rgba(a->ctx, out, x->width, x->height, px);
    } else {
        trowel_palette pal;
        raster_palette(st, x, &pal);
        s = trowel_png_write_indexed(a->ctx, out, x->width, x->height, px, &pal);
    }
    trowel_mem_free(a->ctx, px);
    return s;
}

static json_object *index_json(const pid_state *st)
{
    json_object *root = json_object_new_object(), *rs = json_object_new_array();
    char hex[32];
    for (uint32_t i = 0; i < st->raster_count; i++) {
        const pid_raster *x = &st->rasters[i];
        json_object *o = json_object_new_object();
        snprintf(hex, sizeof hex, "0x%016" PRIx64, x->hash);
        json_object_object_add(o, "index", json_object_new_int64(i));
        json_object_object_add(o, "hash", json_object_new_string(hex));
        snprintf(hex, sizeof hex, "%08" PRIx32, (uint32_t)x->hash);
        json_object_object_add(o, "group", json_object_new_string(hex));
        json_object_object_add(o, "width", json_object_new_int64(x->width));
        json_object_object_add(o, "height", json_object_new_int64(x->height));
        json_object_object_add(o, "bits", json_object_new_int64(x->bits));
        json_object_object_add(o, "size", json_object_new_int64(x->size));
        json_object_object_add(o, "swp_offset", json_object_new_int64(x->offset));
        json_object *flags = json_object_new_object();
        json_object_object_add(flags, "transparent", json_object_new_boolean(x->transparent));
        json_object_object_add(flags, "bump", json_object_new_boolean(x->bump));
        json_object_object_add(flags, "occlusion", json_object_new_boolean(x->occlusion));
        json_object_object_add(o, "flags", flags);
        json_object_object_add(o, "constant_colour", json_object_new_int64(x->constant));
        json_object_object_add(o, "palette", x->palette == NO_PALETTE
                                                 ? NULL
                                                 : json_object_new_int64(x->palette));
        json_object_array_add(rs, o);
    }
    json_object *ps = json_object_new_array();
    for (uint32_t i = 0; i < st->palette_count; i++) {
        json_object *o = json_object_new_object();
        snprintf(hex, sizeof hex, "0x%08" PRIx32, st->palettes[i].hash);
        json_object_object_add(o, "index", json_object_new_int64(i));
        json_object_object_add(o, "hash", json_object_new_string(hex));
        json_object_object_add(o, "colours", json_object_new_int64(st->palettes[i].count));
        json_object_array_add(ps, o);
    }
    json_object_object_add(root, "rasters", rs);
    json_object_object_add(root, "palettes", ps);
    return root;
}

static trowel_status write_index(trowel_archive *a, const pid_state *st, trowel_sink *out)
{
    json_object *j = index_json(st);
    const char *text = trowel_json_text_utf8(j, JSON_C_TO_STRING_PRETTY |
                                             JSON_C_TO_STRING_NOSLASHESCAPE);
    trowel_status s = text ? trowel_sink_write(out, text, strlen(text))
                           : trowel_fail(a->ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET,
                                         "json-c: out of memory");
    if (s == TROWEL_OK)
        s = trowel_sink_write(out, "\n", 1);
    json_object_put(j);
    return s;
}

static trowel_status produce(trowel_archive *a, size_t index, trowel_sink *out)
{
    pid_state *st = a->priv;
    const pid_entry *e = &st->entries[index];
    return e->kind == ENTRY_INDEX ? write_index(a, st, out) : write_raster(a, st, e, out);
}

/* ------------------------------------------------------------------ open */

/* The entry's size: produced once into a null sink (it is deterministic).
 * A raster that cannot be produced (no page file, cut off) gets size 0 and
 * marks the archive damaged; reading it then fails with the reason. */
static trowel_status add_entry(trowel_archive *a, size_t index, const char *name)
{
    trowel_sink *null;
    trowel_status s = trowel_sink_open_null(a->ctx, &null);
    if (s != TROWEL_OK)
        return s;
    trowel_error saved = a->ctx->last_error;
    pid_state *ps = a->priv;
    /* Without a page file no picture can be made: said once at open, and
     * again by each picture asked for; not tried (and warned) per entry. */
    bool pageless = ps->entries[index].kind != ENTRY_INDEX && ps->swp_tried && !ps->swp;
    s = pageless ? TROWEL_OK : produce(a, index, null);
    uint64_t size = trowel_sink_written(null);
    trowel_sink_discard(null);
    if (s == TROWEL_ERR_LIMIT || s == TROWEL_ERR_NOMEM)
        return s;
    if (s != TROWEL_OK) {
        trowel_warn(a->ctx, a->ctx->last_error.offset, "%s: %s", name,
                    a->ctx->last_error.message);
        trowel_archive_mark_damaged(a);
        size = 0;
    }
    a->ctx->last_error = saved;
    const pid_state *st = a->priv;
    const pid_entry *e = &st->entries[index];
    trowel_entry te = {.name = name, .size = size, .packed_size = 0, .offset = 0,
                       .method = e->kind == ENTRY_INDEX ? "json" : "png"};
    if (e->kind != ENTRY_INDEX) {
        te.packed_size = st->rasters[e->raster].size;
        te.offset = st->rasters[e->raster].offset;
    }
    trowel_props *x;
    if ((s = trowel_archive_add(a, &te, &x)) != TROWEL_OK)
        return s;
    if (e->kind != ENTRY_INDEX) {
        char hex[24];
        snprintf(hex, sizeof hex, "0x%016" PRIx64, st->rasters[e->raster].hash);
        if ((s = trowel_props_add_str(x, "hash", hex)) ||
            (s = trowel_props_add_uint(x, "raster", e->raster)))
            return s;
    }
    return TROWEL_OK;
}

/* A raster's file name; a second raster of the same size in the same
 * group gets its index appended. */
static void raster_name(const pid_state *st, uint32_t i, bool angles, char *out, size_t cap)
{
    const pid_raster *x = &st->rasters[i];
    bool twin = false;
    for (uint32_t k = 0; k < i; k++)
        twin = twin || ((uint32_t)st->rasters[k].hash == (uint32_t)x->hash &&
                        st->rasters[k].width == x->width && st->rasters[k].height == x->height);
    char suffix[24] = "";
    if (twin)
        snprintf(suffix, sizeof suffix, "-%" PRIu32, i);
    snprintf(out, cap, "%08" PRIx32 "/%" PRIu32 "x%" PRIu32 "%s%s.png", (uint32_t)x->hash,
             x->width, x->height, suffix, angles ? "-angles" : "");
}

static trowel_status pid_open(trowel_archive *a, trowel_reader *r)
{
    pid_state *st;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    for (int i = 0; i < 8 && s == TROWEL_OK; i++)
        s = trowel_read_u32le(r, &st->header[i]);
    if (s != TROWEL_OK) {
        trowel_error why = a->ctx->last_error;
        return trowel_fail(a->ctx, s, why.offset, "PID header is cut short: %s", why.message);
    }
    if (st->header[0] != PID_VERSION)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, 0,
                           "PID version 0x%lx is not 0x130", (unsigned long)st->header[0]);
    if ((s = read_palettes(a->ctx, r, st)) || (s = read_rasters(a->ctx, r, st)))
        return s;
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", "tres-pid")) ||
        (s = trowel_props_add_hex(info, "version", st->header[0])) ||
        (s = trowel_props_add_uint(info, "bump_bits", st->header[1])) ||
        (s = trowel_props_add_uint(info, "rasters", st->raster_count)) ||
        (s = trowel_props_add_uint(info, "palettes", st->palette_count)) ||
        (s = trowel_props_add_hex(info, "pageable_offset", st->header[6])) ||
        (s = trowel_props_add_uint(info, "non_pageable_count", st->header[7])))
        return s;
    size_t n = 1;
    for (uint32_t i = 0; i < st->raster_count; i++)
        n += st->rasters[i].bits == 16 ? 2 : 1;
    if ((s = trowel_mem_new_zeroed(a->ctx, n, sizeof *st->entries, &st->entries)) != TROWEL_OK)
        return s;
    size_t k = 0;
    st->entries[k++] = (pid_entry){ENTRY_INDEX, 0};
    for (uint32_t i = 0; i < st->raster_count; i++) {
        st->entries[k++] = (pid_entry){ENTRY_IMAGE, i};
        if (st->rasters[i].bits == 16)
            st->entries[k++] = (pid_entry){ENTRY_ANGLES, i};
    }
    if ((s = add_entry(a, 0, "index.json")) != TROWEL_OK)
        return s;
    if (n > 1) {
        trowel_error saved = a->ctx->last_error;
        s = load_swp(a, st);
        if (s == TROWEL_ERR_LIMIT || s == TROWEL_ERR_NOMEM)
            return s;
        if (s != TROWEL_OK)
            trowel_warn(a->ctx, st->swp_error.offset,
                        "%s: none of the %zu pictures can be made (listed with size 0); "
                        "index.json can",
                        st->swp_error.message, n - 1);
        a->ctx->last_error = saved;
    }
    for (size_t e = 1; e < n; e++) {
        char name[96];
        raster_name(st, st->entries[e].raster, st->entries[e].kind == ENTRY_ANGLES, name,
                    sizeof name);
        if ((s = add_entry(a, e, name)) != TROWEL_OK)
            return s;
    }
    return TROWEL_OK;
}

static trowel_status pid_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    return produce(a, index, out);
}

static void pid_close(trowel_archive *a)
{
    pid_state *st = a->priv;
    if (!st)
        return;
    trowel_mem_free(a->ctx, st->swp);
    trowel_mem_free(a->ctx, st->entries);
    trowel_mem_free(a->ctx, st->rasters);
    trowel_mem_free(a->ctx, st->palettes);
    trowel_mem_free(a->ctx, st);
}

const trowel_format trowel_format_tres_pid = {
    .id = "tres-pid",
    .family = "trespasser",
    .description = "Trespasser texture directory (PID) over its SPZ/SWP page file",
    .extensions = ".pid",
    .caps = TROWEL_CAP_LIST,
    .create_options = "",
    .convert_targets = "",
    .bid = pid_bid,
    .open = pid_open,
    .read_entry = pid_read_entry,
    .close = pid_close,
};
