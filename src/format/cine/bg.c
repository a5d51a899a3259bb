/*
 * cine-bg: full-screen 320 x 200 backgrounds of Future Wars and Operation
 * Stealth (../shared/formats/delphine-cinematique.md, ScummVM engines/cine
 * bg.cpp). Three layouts:
 *   type 8:  u16BE 8, 768 bytes of RGB palette (256 colours), then 64000
 *            bytes of one-byte pixels (Operation Stealth's 256-colour scenes);
 *   PI1:     u16BE resolution (0), 16 palette words 0x0RGB, then 32000 bytes
 *            of four-plane pixels (Atari ST Degas layout);
 *   NEO:     a 128-byte NEOchrome header (palette words at offset 4), then
 *            32000 bytes of four-plane pixels. The engine itself takes the
 *            palette of .NEO backgrounds from a separate file; trowel uses
 *            the header's unless -O palette=FILE is given.
 * No magic: trowel bids only for the exact sizes (2+768+64000 with type 8,
 * 2+32+32000 with resolution 0, 128+32000 with flag and resolution 0), with
 * palette words that fit 0x0RGB, more when the name agrees.
 * convert --to png writes the picture with its palette; nothing is
 * transparent unless -O transparent=N asks.
 */
#include "format/cine/cine_gfx.h"

#define BG_W 320
#define BG_H 200
#define PLANAR_BYTES 32000
#define CHUNKY_BYTES 64000

enum bg_variant { BG_TYPE8, BG_PI1, BG_NEO };

typedef struct bg_state {
    enum bg_variant variant;
    uint64_t pixels_at, palette_at;
    trowel_palette pal;
} bg_state;

static const char *variant_name(enum bg_variant v)
{
    return v == BG_TYPE8 ? "type8" : v == BG_PI1 ? "pi1" : "neo";
}

/* Palette words are 0x0RGB: a top nibble set means this is no palette. */
static bool palette_words_plausible(trowel_reader *r, uint64_t at)
{
    const uint8_t *p;
    if (trowel_reader_seek(r, at) != TROWEL_OK || trowel_reader_peek(r, 32, &p) != TROWEL_OK)
        return false;
    for (unsigned i = 0; i < 16; i++)
        if (p[2 * i] & 0xf0)
            return false;
    return true;
}

static int bg_bid(trowel_reader *r)
{
    uint16_t type, resolution;
    if (cine_is_szdd(r) || trowel_read_u16be(r, &type) != TROWEL_OK ||
        trowel_read_u16be(r, &resolution) != TROWEL_OK)
        return TROWEL_BID_NONE;
    uint64_t size = trowel_reader_size(r);
    int name = cine_name_has_ext(r->in, ".PI1") ? 5 : 0;
    if (size == CINE_BG8_SIZE && type == 8)
        return TROWEL_BID_WEAK + name;
    if (size == CINE_PI1_SIZE && type == 0 && palette_words_plausible(r, 2))
        return TROWEL_BID_WEAK + name;
    /* NEOchrome: flag word 0, resolution 0 (low), then the palette. */
    if (size == CINE_NEO_SIZE && type == 0 && resolution == 0 && palette_words_plausible(r, 4))
        return TROWEL_BID_WEAK + (cine_name_has_ext(r->in, ".NEO") ? 5 : 0);
    return TROWEL_BID_NONE;
}

static trowel_status choose_variant(trowel_archive *a, trowel_reader *r, uint16_t type,
                                    bg_state *st)
{
    uint64_t size = trowel_reader_size(r), need;
    if (type == 8) {
        st->variant = BG_TYPE8;
        st->palette_at = 2;
        st->pixels_at = 2 + 768;
        need = CINE_BG8_SIZE;
    } else if (size == CINE_NEO_SIZE || cine_name_has_ext(a->in, ".NEO")) {
        st->variant = BG_NEO;
        st->palette_at = 4;
        st->pixels_at = 128;
        need = CINE_NEO_SIZE;
    } else {
        st->variant = BG_PI1;
        st->palette_at = 2;
        st->pixels_at = 2 + 32;
        need = CINE_PI1_SIZE;
    }
    if (size < need)
        return trowel_fail(a->ctx, TROWEL_ERR_TRUNCATED, size,
                           "a %s background needs %llu bytes but the file has %llu",
                           variant_name(st->variant), (unsigned long long)need,
                           (unsigned long long)size);
    return TROWEL_OK;
}

static trowel_status read_palette(trowel_reader *r, bg_state *st)
{
    uint8_t buf[768];
    trowel_status s = trowel_reader_seek(r, st->palette_at);
    if (s == TROWEL_OK)
        s = trowel_read_bytes(r, buf, st->variant == BG_TYPE8 ? 768 : 32);
    if (s == TROWEL_OK && st->variant == BG_TYPE8)
        cine_palette_from_rgb(&st->pal, buf);
    else if (s == TROWEL_OK)
        cine_palette_from_words(&st->pal, buf);
    return s;
}

static trowel_status add_info(trowel_archive *a, const bg_state *st, uint16_t type)
{
    char text[16][8];
    const char *words[16];
    for (unsigned i = 0; i < 16 && st->variant != BG_TYPE8; i++) {
        const uint8_t *c = st->pal.rgba[i];
        snprintf(text[i], sizeof text[i], "#%02x%02x%02x", c[0], c[1], c[2]);
        words[i] = text[i];
    }
    trowel_props *info = a->info;
    trowel_status s;
    if ((s = trowel_props_add_str(info, "format", "cine-bg")) ||
        (s = trowel_props_add_uint(info, "version", 0)) ||
        (s = trowel_props_add_str(info, "variant", variant_name(st->variant))) ||
        (s = trowel_props_add_uint(info, "type", type)) ||
        (s = trowel_props_add_uint(info, "width", BG_W)) ||
        (s = trowel_props_add_uint(info, "height", BG_H)) ||
        (s = trowel_props_add_uint(info, "colours", st->pal.count)))
        return s;
    if (st->variant != BG_TYPE8)
        return trowel_props_add_list(info, "palette", words, 16);
    return TROWEL_OK;
}

static trowel_status bg_open(trowel_archive *a, trowel_reader *r)
{
    bg_state *st;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    uint16_t type;
    s = trowel_read_u16be(r, &type);
    if (s != TROWEL_OK)
        return trowel_fail(a->ctx, s, 0, "the background is empty");
    if ((s = choose_variant(a, r, type, st)) || (s = read_palette(r, st)))
        return s;
    return add_info(a, st, type);
}

static void bg_close(trowel_archive *a)
{
    trowel_mem_free(a->ctx, a->priv);
}

static void bg_size(trowel_archive *a, size_t i, uint32_t *w, uint32_t *h)
{
    (void)a;
    (void)i;
    *w = BG_W;
    *h = BG_H;
}

static trowel_status bg_decode(trowel_archive *a, size_t i, uint8_t *px)
{
    (void)i;
    const bg_state *st = a->priv;
    bool chunky = st->variant == BG_TYPE8;
    uint8_t *raw;
    trowel_status s = cine_load(a, st->pixels_at, chunky ? CHUNKY_BYTES : PLANAR_BYTES, &raw);
    if (s != TROWEL_OK)
        return s;
    if (chunky)
        memcpy(px, raw, CHUNKY_BYTES);
    else
        cine_decode_planar(raw, PLANAR_BYTES / 8, 4, px);
    trowel_mem_free(a->ctx, raw);
    return TROWEL_OK;
}

static trowel_status bg_convert(trowel_archive *a, const char *target, const char *const *opts,
                                size_t nopts, trowel_sink *out)
{
    const bg_state *st = a->priv;
    if (strcmp(target, "png") != 0)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "cine-bg converts to png or json, not %s", target);
    cine_frames f = {.a = a, .count = 1, .colours = st->pal.count, .transparent = -1,
                     .own = &st->pal, .size = bg_size, .decode = bg_decode};
    return cine_convert_png(&f, opts, nopts, out);
}


static const trowel_option_info bg_options[] = {CINE_PNG_OPTIONS, {0}};

const trowel_format trowel_format_cine_bg = {
    .id = "cine-bg",
    .family = "cinematique",
    .description = "Delphine Cinematique background (type 8 256-colour, PI1, NEO)",
    .extensions = ".pi1 .neo",
    .caps = 0,
    .create_options = "",
    .convert_targets = "png",
    .options = bg_options,
    .bid = bg_bid,
    .open = bg_open,
    .convert = bg_convert,
    .close = bg_close,
};
