/*
 * cine-ani: ANI (and ANM) animations of Future Wars and Operation Stealth.
 *
 * The 0x16-byte ANI/MSK header (see cine_gfx.h; ../shared/formats/
 * delphine-cinematique.md, ScummVM engines/cine anim.cpp) gives the row
 * width in bytes, the height and the frame count; each frame is width x
 * height bytes of four-plane pixels (every 16 pixels four big-endian plane
 * words), so a frame is 2 x width pixels wide. Widths that are not a
 * multiple of 8 bytes would split a 16-pixel group across rows; no game
 * file has one, and trowel refuses them.
 *
 * No magic: trowel bids only when the header accounts for every byte (more
 * when the name ends in .ANI or .ANM). The engine draws colour 0 as
 * transparent (a few files use another colour: -O transparent=N|none).
 * Palettes live elsewhere (-O palette=FILE); otherwise colours are grey.
 */
#include "format/cine/cine_gfx.h"

typedef struct ani_state {
    cine_anim_header h;
} ani_state;

static int ani_bid(trowel_reader *r)
{
    cine_anim_header h;
    if (cine_is_szdd(r) || cine_anim_read(r, &h) != TROWEL_OK || !cine_anim_fits_exactly(r, &h) ||
        h.row_bytes % 8 != 0)
        return TROWEL_BID_NONE;
    if (cine_name_has_ext(r->in, ".ANI") || cine_name_has_ext(r->in, ".ANM"))
        return TROWEL_BID_WEAK + 5;
    /* MSK files share the header: their name must claim them. */
    return cine_name_has_ext(r->in, ".MSK") ? TROWEL_BID_NONE : TROWEL_BID_WEAK;
}

static trowel_status ani_open(trowel_archive *a, trowel_reader *r)
{
    ani_state *st;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    s = cine_anim_open(a, r, "cine-ani", 2, &st->h);
    if (s == TROWEL_OK && st->h.row_bytes % 8 != 0)
        s = trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, 4,
                        "rows of %d bytes are not whole 16-pixel groups (8 bytes each)",
                        st->h.row_bytes);
    return s;
}

static void ani_close(trowel_archive *a)
{
    trowel_mem_free(a->ctx, a->priv);
}

static void frame_size(trowel_archive *a, size_t i, uint32_t *w, uint32_t *h)
{
    (void)i;
    const ani_state *st = a->priv;
    *w = (uint32_t)st->h.row_bytes * 2;
    *h = (uint32_t)st->h.height;
}

static trowel_status frame_decode(trowel_archive *a, size_t i, uint8_t *px)
{
    uint8_t *raw;
    trowel_status s = cine_load(a, a->entries[i].offset, a->entries[i].packed_size, &raw);
    if (s == TROWEL_OK)
        cine_decode_planar(raw, (size_t)a->entries[i].packed_size / 8, 4, px);
    trowel_mem_free(a->ctx, raw);
    return s;
}

static trowel_status ani_convert(trowel_archive *a, const char *target, const char *const *opts,
                                 size_t nopts, trowel_sink *out)
{
    if (strcmp(target, "png") != 0)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "cine-ani converts to png or json, not %s", target);
    cine_frames f = {.a = a, .count = a->entry_count, .colours = 16, .transparent = 0,
                     .size = frame_size, .decode = frame_decode};
    return cine_convert_png(&f, opts, nopts, out);
}


static const trowel_option_info ani_options[] = {CINE_PNG_OPTIONS, {0}};

const trowel_format trowel_format_cine_ani = {
    .id = "cine-ani",
    .family = "cinematique",
    .description = "Delphine Cinematique animation frames (.ANI, four-plane 16 colours)",
    .extensions = ".ani .anm",
    .caps = TROWEL_CAP_LIST,
    .create_options = "",
    .convert_targets = "png",
    .options = ani_options,
    .bid = ani_bid,
    .open = ani_open,
    .read_entry = cine_copy_entry,
    .convert = ani_convert,
    .close = ani_close,
};
