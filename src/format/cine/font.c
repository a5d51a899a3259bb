/*
 * cine-font: TEXTE.DAT, the font of Future Wars and Operation Stealth.
 *
 * Layout (../shared/seeds/delphine-cinematique.txt, ScummVM engines/cine
 * texte.cpp): u16BE entry size (8 in every known file), u16BE entry count,
 * then entry size x entry count bytes of glyphs, 64 bytes each: 16 x 8
 * pixels, every row one group of four big-endian plane words (four-plane
 * pixels, see cine_gfx.h). Known fonts have 78, 85, 90 or 93 glyphs; the
 * character-to-glyph table is in the game's code, not in the file. The
 * engine treats colour 0 as transparent.
 *
 * trowel lists one entry per glyph (its 64 stored bytes), converts to a PNG
 * sheet (16 glyphs per row unless -O columns=N; -O frame=N for one glyph)
 * and, with --to glyphmap, to a JSON map of where each glyph sits on that
 * sheet and how wide its ink is.
 */
#include "format/cine/cine_gfx.h"

#include <json-c/json.h>
#include <stdio.h>

#define FONT_HEADER 4
#define GLYPH_BYTES 64
#define GLYPH_W 16
#define GLYPH_H 8
#define SHEET_COLUMNS 16

typedef struct font_header {
    uint16_t entry_size, entry_count;
    uint64_t data_size;
    size_t glyphs;
} font_header;

static trowel_status read_header(trowel_reader *r, font_header *h)
{
    trowel_status s;
    if ((s = trowel_read_u16be(r, &h->entry_size)) || (s = trowel_read_u16be(r, &h->entry_count)))
        return s;
    h->data_size = (uint64_t)h->entry_size * h->entry_count;
    h->glyphs = (size_t)(h->data_size / GLYPH_BYTES);
    return TROWEL_OK;
}

static bool known_glyph_count(size_t n)
{
    return n == 78 || n == 85 || n == 90 || n == 93;
}

static int font_bid(trowel_reader *r)
{
    font_header h;
    if (cine_is_szdd(r) || read_header(r, &h) != TROWEL_OK)
        return TROWEL_BID_NONE;
    /* No magic: the sizes must account for every byte exactly. */
    if (h.entry_size == 0 || h.data_size % GLYPH_BYTES != 0 || !known_glyph_count(h.glyphs) ||
        FONT_HEADER + h.data_size != trowel_reader_size(r))
        return TROWEL_BID_NONE;
    return TROWEL_BID_WEAK + (cine_name_is(r->in, "TEXTE.DAT") ? 5 : 0);
}

static const char *variant_name(size_t glyphs)
{
    switch (glyphs) {
    case 78: return "78 glyphs (most Future Wars)";
    case 85: return "85 glyphs (German/Spanish Future Wars)";
    case 90: return "90 glyphs (most Operation Stealth)";
    case 93: return "93 glyphs (German Operation Stealth)";
    default: return "unknown";
    }
}

static trowel_status font_open(trowel_archive *a, trowel_reader *r)
{
    font_header h;
    trowel_status s = read_header(r, &h);
    if (s != TROWEL_OK)
        return trowel_fail(a->ctx, s, 0, "font header is cut short");
    if (h.data_size == 0 || h.data_size % GLYPH_BYTES != 0)
        return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, 0,
                           "%u entries of %u bytes are not whole 64-byte glyphs", h.entry_count,
                           h.entry_size);
    if (FONT_HEADER + h.data_size > trowel_reader_size(r))
        return trowel_fail(a->ctx, TROWEL_ERR_TRUNCATED, trowel_reader_size(r),
                           "%zu glyphs need %llu bytes but the file has %llu", h.glyphs,
                           (unsigned long long)(FONT_HEADER + h.data_size),
                           (unsigned long long)trowel_reader_size(r));
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", "cine-font")) ||
        (s = trowel_props_add_uint(info, "version", 0)) ||
        (s = trowel_props_add_uint(info, "entry_size", h.entry_size)) ||
        (s = trowel_props_add_uint(info, "entry_count", h.entry_count)) ||
        (s = trowel_props_add_uint(info, "glyphs", h.glyphs)) ||
        (s = trowel_props_add_str(info, "variant", variant_name(h.glyphs))) ||
        (s = trowel_props_add_uint(info, "glyph_width", GLYPH_W)) ||
        (s = trowel_props_add_uint(info, "glyph_height", GLYPH_H)) ||
        (s = trowel_props_add_uint(info, "trailing_bytes",
                                   trowel_reader_size(r) - FONT_HEADER - h.data_size)))
        return s;
    for (size_t i = 0; i < h.glyphs; i++) {
        char name[32];
        snprintf(name, sizeof name, "glyph_%03zu", i);
        trowel_entry e = {.name = name, .size = GLYPH_BYTES, .packed_size = GLYPH_BYTES,
                          .offset = FONT_HEADER + (uint64_t)i * GLYPH_BYTES, .method = "stored"};
        trowel_props *extra;
        if ((s = trowel_archive_add(a, &e, &extra)) != TROWEL_OK)
            return s;
    }
    return TROWEL_OK;
}

static trowel_status font_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    uint8_t glyph[GLYPH_BYTES];
    trowel_reader r;
    trowel_reader_init(&r, a->ctx, a->in);
    trowel_status s = trowel_reader_seek(&r, a->entries[index].offset);
    if (s == TROWEL_OK)
        s = trowel_read_bytes(&r, glyph, sizeof glyph);
    return s == TROWEL_OK ? trowel_sink_write(out, glyph, sizeof glyph) : s;
}

/* --------------------------------------------------------------- convert */

static void glyph_size(trowel_archive *a, size_t i, uint32_t *w, uint32_t *h)
{
    (void)a;
    (void)i;
    *w = GLYPH_W;
    *h = GLYPH_H;
}

static trowel_status glyph_decode(trowel_archive *a, size_t i, uint8_t *px)
{
    uint8_t glyph[GLYPH_BYTES];
    trowel_reader r;
    trowel_reader_init(&r, a->ctx, a->in);
    trowel_status s = trowel_reader_seek(&r, a->entries[i].offset);
    if (s == TROWEL_OK)
        s = trowel_read_bytes(&r, glyph, sizeof glyph);
    if (s == TROWEL_OK)
        cine_decode_planar(glyph, GLYPH_H, 4, px); /* one 16-pixel group per row */
    return s;
}

/* The columns right of the last pixel that is not colour 0 are empty. */
static unsigned ink_width(const uint8_t *px)
{
    unsigned w = 0;
    for (unsigned y = 0; y < GLYPH_H; y++)
        for (unsigned x = 0; x < GLYPH_W; x++)
            if (px[y * GLYPH_W + x] && x + 1 > w)
                w = x + 1;
    return w;
}

static trowel_status write_glyphmap(trowel_archive *a, const char *const *opts, size_t nopts,
                                    trowel_sink *out)
{
    unsigned long columns = SHEET_COLUMNS;
    trowel_status s = cine_option_uint(a->ctx, opts, nopts, "columns", 4096, &columns, NULL);
    if (s == TROWEL_OK && columns == 0)
        s = trowel_fail(a->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "columns must be 1 or more");
    if (s != TROWEL_OK)
        return s;
    json_object *root = json_object_new_object();
    json_object_object_add(root, "format", json_object_new_string("cine-font"));
    json_object_object_add(root, "glyph_width", json_object_new_int(GLYPH_W));
    json_object_object_add(root, "glyph_height", json_object_new_int(GLYPH_H));
    json_object_object_add(root, "columns", json_object_new_int64((int64_t)columns));
    json_object *list = json_object_new_array();
    json_object_object_add(root, "glyphs", list);
    for (size_t i = 0; s == TROWEL_OK && i < a->entry_count; i++) {
        uint8_t px[GLYPH_W * GLYPH_H];
        if ((s = glyph_decode(a, i, px)) != TROWEL_OK)
            break;
        json_object *g = json_object_new_object();
        json_object_object_add(g, "index", json_object_new_int64((int64_t)i));
        json_object_object_add(g, "x", json_object_new_int64((int64_t)(i % columns) * GLYPH_W));
        json_object_object_add(g, "y", json_object_new_int64((int64_t)(i / columns) * GLYPH_H));
        json_object_object_add(g, "ink_width", json_object_new_int((int)ink_width(px)));
        json_object_array_add(list, g);
    }
    if (s == TROWEL_OK) {
        const char *text = trowel_json_text_utf8(root, JSON_C_TO_STRING_PRETTY |
                                                 JSON_C_TO_STRING_SPACED);
        s = trowel_sink_write(out, text, strlen(text));
        if (s == TROWEL_OK)
            s = trowel_sink_write(out, "\n", 1);
    }
    json_object_put(root);
    return s;
}

static trowel_status font_convert(trowel_archive *a, const char *target, const char *const *opts,
                                  size_t nopts, trowel_sink *out)
{
    if (strcmp(target, "glyphmap") == 0)
        return write_glyphmap(a, opts, nopts, out);
    if (strcmp(target, "png") != 0)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "cine-font converts to png, glyphmap or json, not %s", target);
    cine_frames f = {.a = a, .count = a->entry_count, .colours = 16, .transparent = 0,
                     .columns = SHEET_COLUMNS, .size = glyph_size, .decode = glyph_decode};
    return cine_convert_png(&f, opts, nopts, out);
}


static const trowel_option_info font_options[] = {
    CINE_PNG_OPTIONS,
    {"columns", "N", "glyphs per row of the map (default 16)", "glyphmap",
     .type = TROWEL_OPTION_UINT, .min = 0, .max = 4096, .def = "16"},
    {0},
};

const trowel_format trowel_format_cine_font = {
    .id = "cine-font",
    .family = "cinematique",
    .description = "Delphine Cinematique font (TEXTE.DAT): 16x8 four-plane glyphs",
    .extensions = "texte.dat",
    .caps = TROWEL_CAP_LIST,
    .create_options = "",
    .convert_targets = "png glyphmap",
    .options = font_options,
    .bid = font_bid,
    .open = font_open,
    .read_entry = font_read_entry,
    .convert = font_convert,
};
