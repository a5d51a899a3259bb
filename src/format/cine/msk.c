/*
 * cine-msk: MSK masks of Future Wars and Operation Stealth.
 *
 * The 0x16-byte ANI/MSK header (see cine_gfx.h; ../shared/formats/
 * delphine-cinematique.md, ScummVM engines/cine anim.cpp) gives the row
 * width in bytes, the height and the frame count; each frame is width x
 * height bytes at one bit per pixel, most significant bit leftmost, a set
 * bit opaque. A frame is therefore 8 x width pixels wide.
 *
 * There is no magic: trowel claims a file only when it is named *.MSK and
 * its header accounts for every byte (ANI files share the header, and only
 * the name tells them apart). Entries are the stored frames; convert --to
 * png gives a sheet or, with -O frame=N, one frame, set pixels opaque white
 * and clear ones transparent.
 */
#include "format/cine/cine_gfx.h"

typedef struct msk_state {
    cine_anim_header h;
} msk_state;

static int msk_bid(trowel_reader *r)
{
    cine_anim_header h;
    if (cine_is_szdd(r) || !cine_name_has_ext(r->in, ".MSK") || cine_anim_read(r, &h) != TROWEL_OK)
        return TROWEL_BID_NONE;
    return cine_anim_fits_exactly(r, &h) ? TROWEL_BID_WEAK + 5 : TROWEL_BID_NONE;
}

static trowel_status msk_open(trowel_archive *a, trowel_reader *r)
{
    msk_state *st;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    return cine_anim_open(a, r, "cine-msk", 8, &st->h);
}

static void msk_close(trowel_archive *a)
{
    trowel_mem_free(a->ctx, a->priv);
}

static void frame_size(trowel_archive *a, size_t i, uint32_t *w, uint32_t *h)
{
    (void)i;
    const msk_state *st = a->priv;
    *w = (uint32_t)st->h.row_bytes * 8;
    *h = (uint32_t)st->h.height;
}

static trowel_status frame_decode(trowel_archive *a, size_t i, uint8_t *px)
{
    uint8_t *raw;
    trowel_status s = cine_load(a, a->entries[i].offset, a->entries[i].packed_size, &raw);
    if (s == TROWEL_OK)
        cine_decode_mask(raw, (size_t)a->entries[i].packed_size, px);
    trowel_mem_free(a->ctx, raw);
    return s;
}

static trowel_status msk_convert(trowel_archive *a, const char *target, const char *const *opts,
                                 size_t nopts, trowel_sink *out)
{
    if (strcmp(target, "png") != 0)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "cine-msk converts to png or json, not %s", target);
    cine_frames f = {.a = a, .count = a->entry_count, .colours = 2, .transparent = -1,
                     .size = frame_size, .decode = frame_decode};
    return cine_convert_png(&f, opts, nopts, out);
}


static const trowel_option_info msk_options[] = {CINE_PNG_OPTIONS, {0}};

const trowel_format trowel_format_cine_msk = {
    .id = "cine-msk",
    .family = "cinematique",
    .description = "Delphine Cinematique mask frames (.MSK, 1 bit per pixel)",
    .extensions = ".msk",
    .caps = TROWEL_CAP_LIST,
    .create_options = "",
    .convert_targets = "png",
    .options = msk_options,
    .bid = msk_bid,
    .open = msk_open,
    .read_entry = cine_copy_entry,
    .convert = msk_convert,
    .close = msk_close,
};
