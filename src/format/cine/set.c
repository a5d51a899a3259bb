/*
 * cine-set: SET sprite sets of Future Wars and Operation Stealth.
 *
 * Layout (../shared/formats/delphine-cinematique.md, ScummVM engines/cine
 * anim.cpp): "SET" and one more byte, u16BE frame count at 4, then one
 * 16-byte header per frame {u32BE data offset counted from the end of the
 * headers (6 + 16 x count), u16BE width, u16BE height, u16BE type, three
 * u16 unknown}. By type:
 *   1      mask: width x height bytes, 1 bit per pixel, 8 x width pixels;
 *   4      four-plane: width x height bytes, 2 x width pixels;
 *   5      a 16-byte colour table, then width x height bytes of two pixels
 *          each (high nibble first) looked up in it, 2 x width pixels;
 *   other  eight-plane (256 colours): width x height bytes, width pixels,
 *          eight big-endian plane words per 16 pixels, run through the
 *          frame without regard to rows.
 * trowel bids MAGIC for "SET" only when every frame lies inside the file.
 * Entries are the stored frames; convert --to png gives a sheet (or -O
 * frame=N). A set mixing types is drawn with the widest colour range its
 * frames need; mask frames then show set pixels as colour 1.
 */
#include "format/cine/cine_gfx.h"

#define SET_HEADER 6
#define FRAME_HEADER 16

typedef struct set_frame {
    uint32_t offset; /* relative to the end of the headers */
    uint16_t width, height, type;
    uint16_t unknown[3];
} set_frame;

typedef struct set_state {
    size_t count;
    set_frame *frames;
    unsigned colours;
} set_state;

static trowel_status read_frame_header(trowel_reader *r, set_frame *f)
{
    trowel_status s;
    if ((s = trowel_read_u32be(r, &f->offset)) || (s = trowel_read_u16be(r, &f->width)) ||
        (s = trowel_read_u16be(r, &f->height)) || (s = trowel_read_u16be(r, &f->type)))
        return s;
    for (int i = 0; i < 3 && s == TROWEL_OK; i++)
        s = trowel_read_u16be(r, &f->unknown[i]);
    return s;
}

static uint64_t frame_bytes(const set_frame *f)
{
    return (uint64_t)f->width * f->height + (f->type == 5 ? 16 : 0);
}

static void frame_pixels(const set_frame *f, uint32_t *w, uint32_t *h)
{
    unsigned per_byte = f->type == 1 ? 8 : (f->type == 4 || f->type == 5) ? 2 : 1;
    *w = (uint32_t)f->width * per_byte;
    *h = f->height;
}

static uint64_t data_start(size_t count)
{
    return SET_HEADER + (uint64_t)count * FRAME_HEADER;
}

/* The frame's bytes lie inside the file and its layout is decodable; on
 * failure returns a status with an error set. */
static trowel_status check_frame(trowel_ctx *ctx, const set_frame *f, size_t i, size_t count,
                                 uint64_t file_size)
{
    uint64_t at = data_start(count) + f->offset, end = at + frame_bytes(f);
    uint64_t header_at = SET_HEADER + (uint64_t)i * FRAME_HEADER;
    if (end > file_size)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, header_at,
                           "frame %zu (%ux%u, type %u) needs bytes up to %llu but the file has %llu",
                           i, f->width, f->height, f->type, (unsigned long long)end,
                           (unsigned long long)file_size);
    if (f->type == 4 && f->width % 8 != 0)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, header_at,
                           "frame %zu: rows of %u bytes are not whole 16-pixel groups", i, f->width);
    if (f->type != 1 && f->type != 4 && f->type != 5 && ((uint64_t)f->width * f->height) % 16)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, header_at,
                           "frame %zu: %ux%u eight-plane pixels are not whole 16-pixel groups", i,
                           f->width, f->height);
    return TROWEL_OK;
}

static int set_bid(trowel_reader *r)
{
    uint8_t magic[4];
    uint16_t count;
    if (trowel_read_bytes(r, magic, 4) != TROWEL_OK || memcmp(magic, "SET", 3) != 0 ||
        trowel_read_u16be(r, &count) != TROWEL_OK || count == 0)
        return TROWEL_BID_NONE;
    for (size_t i = 0; i < count; i++) {
        set_frame f;
        if (read_frame_header(r, &f) != TROWEL_OK ||
            check_frame(r->ctx, &f, i, count, trowel_reader_size(r)) != TROWEL_OK)
            return TROWEL_BID_NONE;
    }
    return TROWEL_BID_MAGIC;
}

static trowel_status add_entries(trowel_archive *a, const set_state *st)
{
    for (size_t i = 0; i < st->count; i++) {
        const set_frame *f = &st->frames[i];
        char name[32];
        uint32_t w, h;
        frame_pixels(f, &w, &h);
        snprintf(name, sizeof name, "frame_%03zu", i);
        trowel_entry e = {.name = name, .size = frame_bytes(f), .packed_size = frame_bytes(f),
                          .offset = data_start(st->count) + f->offset, .method = "stored"};
        trowel_props *x;
        trowel_status s;
        if ((s = trowel_archive_add(a, &e, &x)) != TROWEL_OK ||
            (s = trowel_props_add_uint(x, "width", w)) != TROWEL_OK ||
            (s = trowel_props_add_uint(x, "height", h)) != TROWEL_OK ||
            (s = trowel_props_add_uint(x, "type", f->type)) != TROWEL_OK)
            return s;
    }
    return TROWEL_OK;
}

static trowel_status set_open(trowel_archive *a, trowel_reader *r)
{
    set_state *st;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    uint8_t magic[4];
    uint16_t count;
    if ((s = trowel_read_bytes(r, magic, 4)) || (s = trowel_read_u16be(r, &count)))
        return trowel_fail(a->ctx, s, trowel_reader_size(r), "the SET header is cut short");
    if (memcmp(magic, "SET", 3) != 0)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, 0, "no SET signature");
    if (data_start(count) > trowel_reader_size(r))
        return trowel_fail(a->ctx, TROWEL_ERR_TRUNCATED, trowel_reader_size(r),
                           "%u frame headers need %llu bytes but the file has %llu", count,
                           (unsigned long long)data_start(count),
                           (unsigned long long)trowel_reader_size(r));
    s = trowel_mem_new_zeroed(a->ctx, count ? count : 1, sizeof *st->frames, &st->frames);
    if (s != TROWEL_OK)
        return s;
    st->count = count;
    st->colours = 2;
    for (size_t i = 0; i < count; i++) {
        set_frame *f = &st->frames[i];
        if ((s = read_frame_header(r, f)) ||
            (s = check_frame(a->ctx, f, i, count, trowel_reader_size(r))))
            return s;
        unsigned need = f->type == 1 ? 2 : (f->type == 4 || f->type == 5) ? 16 : 256;
        st->colours = need > st->colours ? need : st->colours;
    }
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", "cine-set")) ||
        (s = trowel_props_add_uint(info, "version", 0)) ||
        (s = trowel_props_add_uint(info, "frames", count)) ||
        (s = trowel_props_add_uint(info, "colours", st->colours)))
        return s;
    return add_entries(a, st);
}

static void set_close(trowel_archive *a)
{
    set_state *st = a->priv;
    if (st)
        trowel_mem_free(a->ctx, st->frames);
    trowel_mem_free(a->ctx, st);
}

static void set_size(trowel_archive *a, size_t i, uint32_t *w, uint32_t *h)
{
    const set_state *st = a->priv;
    frame_pixels(&st->frames[i], w, h);
}

static trowel_status set_decode(trowel_archive *a, size_t i, uint8_t *px)
{
    const set_state *st = a->priv;
    const set_frame *f = &st->frames[i];
    uint8_t *raw;
    uint64_t n = frame_bytes(f);
    trowel_status s = cine_load(a, a->entries[i].offset, n, &raw);
    if (s != TROWEL_OK)
        return s;
    if (f->type == 1)
        cine_decode_mask(raw, (size_t)n, px);
    else if (f->type == 4)
        cine_decode_planar(raw, (size_t)n / 8, 4, px);
    else if (f->type == 5)
        cine_decode_nibbles(raw, raw + 16, (size_t)n - 16, px);
    else
        cine_decode_planar(raw, (size_t)n / 16, 8, px);
    trowel_mem_free(a->ctx, raw);
    /* A type-5 table may name colours past a 16-colour palette. */
    for (size_t k = 0; f->type == 5 && st->colours == 16 && k < (size_t)(n - 16) * 2; k++)
        px[k] &= 15;
    return TROWEL_OK;
}

static trowel_status set_convert(trowel_archive *a, const char *target, const char *const *opts,
                                 size_t nopts, trowel_sink *out)
{
    const set_state *st = a->priv;
    if (strcmp(target, "png") != 0)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "cine-set converts to png or json, not %s", target);
    cine_frames f = {.a = a, .count = a->entry_count, .colours = st->colours,
                     .transparent = st->colours == 2 ? -1 : 0, .size = set_size,
                     .decode = set_decode};
    return cine_convert_png(&f, opts, nopts, out);
}


static const trowel_option_info set_options[] = {CINE_PNG_OPTIONS, {0}};

const trowel_format trowel_format_cine_set = {
    .id = "cine-set",
    .family = "cinematique",
    .description = "Delphine Cinematique sprite set (.SET: mask, 4-plane, table, 8-plane frames)",
    .extensions = ".set",
    .caps = TROWEL_CAP_LIST,
    .create_options = "",
    .convert_targets = "png",
    .options = set_options,
    .bid = set_bid,
    .open = set_open,
    .read_entry = cine_copy_entry,
    .convert = set_convert,
    .close = set_close,
};
