/*
 * SCUMM COST costumes (v5, v6; bare v3/v4 headers): the decoder into the
 * shared model (costume.h) and the encoder behind create -t scumm-cost.
 *
 * Layout (offsets from the base; see costume.h for the sources):
 *   v6: 'COST' + BE size, then base: LE u32 size, "CO"; v5: base = block+2;
 *   bare v3/v4: base = file start (LE u32 size, "CO").
 *   base+6 animation count - 1, base+7 format (0x58..0x61, 0x80 never
 *   mirror; odd: 32 colours, even: 16; 0x60/0x61: 2 redirect bytes per
 *   picture), palette (16 or 32 room colours), u16 command offset, 16 u16
 *   limb table offsets (limb 0 first), count u16 animation offsets, then
 *   the animation definitions, commands, limb tables and pictures.
 *   Animation: u16 mask (0x8000 = limb 0), per set bit u16 start (0xFFFF:
 *   disabled) and u8 (0x80: no loop, low 7 bits: last-frame offset).
 *   Picture: u16 width, height, s16 rel_x, rel_y, move_x, move_y
 *   [, u8 redirect limb, picture], then column-major RLE (colour in the
 *   high bits, count in the low 4 or 3; count 0: the next byte counts).
 */
#include "format/scumm/costume.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static trowel_status corrupt(scumm_costume *c, uint64_t at, const char *what)
{
    return trowel_fail(c->ctx, TROWEL_ERR_CORRUPT, c->base + at, "COST: %s", what);
}

/* Finds the base and version; fills c->base, c->size, c->version. */
static trowel_status find_base(scumm_costume *c, const uint8_t *d, size_t n)
{
    if (n >= 14 && memcmp(d, "COST", 4) == 0) {
        uint32_t block = (uint32_t)d[4] << 24 | (uint32_t)d[5] << 16 | (uint32_t)d[6] << 8 | d[7];
        if (block < 16 || block > n)
            return trowel_fail(c->ctx, block > n ? TROWEL_ERR_TRUNCATED : TROWEL_ERR_CORRUPT, 4,
                               "COST: block size %lu but %zu bytes", (unsigned long)block, n);
        bool v6 = d[12] == 'C' && d[13] == 'O';
        c->version = v6 ? 6 : 5;
        c->base = v6 ? 8 : 2;
        c->size = block - c->base;
        return TROWEL_OK;
    }
    if (n >= 8 && d[4] == 'C' && d[5] == 'O') {
        c->version = 4;
        c->base = 0;
        c->size = (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n);
        return TROWEL_OK;
    }
    return trowel_fail(c->ctx, TROWEL_ERR_UNSUPPORTED, 0, "not a COST costume");
}

static trowel_status read_anims(scumm_costume *c, const uint8_t *b, uint32_t table)
{
    trowel_status s = trowel_mem_new_zeroed(c->ctx, c->anim_count, sizeof *c->anims, &c->anims);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < c->anim_count; i++) {
        uint32_t off = le16(b + table + 2 * i);
        if (off == 0)
            continue;
        scumm_anim *a = &c->anims[i];
        if ((uint64_t)off + 2 > c->size)
            return corrupt(c, table + 2 * i, "an animation offset points past the costume");
        a->present = true;
        a->offset = off;
        a->mask = le16(b + off);
        uint32_t p = off + 2;
        for (unsigned limb = 0; limb < SCUMM_LIMBS; limb++) {
            if (!(a->mask & (0x8000u >> limb)))
                continue;
            if ((uint64_t)p + 2 > c->size)
                return corrupt(c, p, "an animation definition runs past the costume");
            uint16_t start = le16(b + p);
            p += 2;
            scumm_limb_def *d = &a->limb[limb];
            if (start == 0xFFFF) {
                d->kind = SCUMM_LIMB_DISABLED;
                continue;
            }
            if ((uint64_t)p + 1 > c->size)
                return corrupt(c, p, "an animation definition runs past the costume");
            d->kind = SCUMM_LIMB_SEQUENCE;
            d->start = start;
            d->len = b[p] & 0x7F;
            d->loop = !(b[p] & 0x80);
            p++;
        }
    }
    return TROWEL_OK;
}

/* The lowest of the known structure offsets above off (or the size). */
static uint32_t next_boundary(const scumm_costume *c, uint32_t off)
{
    uint32_t bound = c->size;
    if (c->cmds_offset > off && c->cmds_offset < bound)
        bound = c->cmds_offset;
    for (unsigned l = 0; l < SCUMM_LIMBS; l++)
        if (c->limb_table[l] > off && c->limb_table[l] < bound)
            bound = c->limb_table[l];
    for (size_t i = 0; i < c->anim_count; i++)
        if (c->anims[i].present && c->anims[i].offset > off && c->anims[i].offset < bound)
            bound = c->anims[i].offset;
    return bound;
}

static trowel_status read_commands(scumm_costume *c, const uint8_t *b)
{
    uint32_t end = next_boundary(c, c->cmds_offset);
    size_t need = 0;
    for (size_t i = 0; i < c->anim_count; i++)
        for (unsigned l = 0; l < SCUMM_LIMBS; l++) {
            const scumm_limb_def *d = &c->anims[i].limb[l];
            if (d->kind == SCUMM_LIMB_SEQUENCE && (size_t)d->start + d->len + 1 > need)
                need = (size_t)d->start + d->len + 1;
        }
    size_t count = end > c->cmds_offset ? end - c->cmds_offset : 0;
    if (need > count)
        count = need;
    if (c->cmds_offset > c->size || count > c->size - c->cmds_offset)
        return corrupt(c, c->cmds_offset, "animation commands run past the costume");
    trowel_status s = trowel_mem_dup_bytes(c->ctx, b + c->cmds_offset, count, &c->cmds);
    if (s != TROWEL_OK)
        return s;
    c->cmd_count = count;
    return TROWEL_OK;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* Reads each limb table (it ends at the next structure or the first
 * picture) and collects the distinct picture offsets, sorted. */
static trowel_status read_limb_tables(scumm_costume *c, const uint8_t *b, uint32_t **offs,
                                      size_t *noffs)
{
    size_t total = 0;
    uint32_t first_pic = c->size;
    for (unsigned l = 0; l < SCUMM_LIMBS; l++) {
        uint32_t t = c->limb_table[l];
        if (t == 0)
            continue;
        if (t >= c->size)
            return corrupt(c, 10 + 2 * l, "a limb table offset points past the costume");
        uint32_t end = next_boundary(c, t);
        size_t n = 0;
        uint32_t *pics;
        size_t bytes = (end - t) / 2 * sizeof *pics + sizeof *pics;
        trowel_status s = trowel_mem_new(c->ctx, bytes, &pics);
        if (s != TROWEL_OK)
            return s;
        c->limb_pics[l] = pics;
        for (uint32_t p = t; p + 2 <= end && p < first_pic; p += 2) {
            uint32_t off = le16(b + p);
            if (off != 0 && (off < first_pic || first_pic == c->size) && off > p)
                first_pic = off < first_pic ? off : first_pic;
            if (off != 0 && (uint64_t)off + 12 > c->size)
                return corrupt(c, p, "a picture offset points past the costume");
            pics[n++] = off ? off : SCUMM_NO_PICTURE;
        }
        c->limb_pic_count[l] = n;
        total += n;
    }
    uint32_t *all;
    trowel_status s = trowel_mem_new(c->ctx, (total ? total : 1) * sizeof *all, &all);
    if (s != TROWEL_OK)
        return s;
    size_t k = 0;
    for (unsigned l = 0; l < SCUMM_LIMBS; l++)
        for (size_t i = 0; i < c->limb_pic_count[l]; i++)
            if (c->limb_pics[l][i] != SCUMM_NO_PICTURE)
                all[k++] = c->limb_pics[l][i];
    qsort(all, k, sizeof *all, cmp_u32);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || all[u - 1] != all[i])
            all[u++] = all[i];
    *offs = all;
    *noffs = u;
    return TROWEL_OK;
}

/* Column-major RLE into px (w*h pixels); reports the bytes used. */
static trowel_status decode_rle(scumm_costume *c, const uint8_t *b, uint32_t at, uint16_t w,
                                uint16_t h, uint8_t *px, uint32_t *used)
{
    unsigned shift = c->colours == 32 ? 3 : 4, mask = (1u << shift) - 1;
    size_t total = (size_t)w * h, x = 0, y = 0, done = 0;
    uint32_t p = at;
    bool overrun = false;
    while (done < total) {
        if (p >= c->size)
            return trowel_fail(c->ctx, TROWEL_ERR_TRUNCATED, c->base + p,
                               "COST: a picture's pixels run past the costume");
        unsigned colour = b[p] >> shift, run = b[p] & mask;
        p++;
        if (run == 0) {
            if (p >= c->size)
                return trowel_fail(c->ctx, TROWEL_ERR_TRUNCATED, c->base + p,
                                   "COST: a picture's pixels run past the costume");
            run = b[p++];
            if (run == 0)
                run = 256; /* the engine's byte counter wraps */
        }
        if (run > total - done) {
            overrun = true;
            run = (unsigned)(total - done);
        }
        for (unsigned i = 0; i < run; i++, done++) {
            px[y * w + x] = (uint8_t)colour;
            if (++y == h) {
                y = 0;
                x++;
            }
        }
    }
    if (overrun && c->warnings++ < 8)
        trowel_warn(c->ctx, c->base + at, "COST: a run passes the picture's %ux%u pixels; cut",
                    w, h);
    *used = p - at;
    return TROWEL_OK;
}

static uint32_t picture_index(const scumm_costume *c, uint32_t off)
{
    size_t lo = 0, hi = c->picture_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->pictures[mid].offset < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->picture_count && c->pictures[lo].offset == off ? (uint32_t)lo
                                                                  : SCUMM_NO_PICTURE;
}

static trowel_status read_pictures(scumm_costume *c, const uint8_t *b, const uint32_t *offs,
                                   size_t n)
{
    bool redirects = (c->format & 0x7E) == 0x60;
    uint32_t header = redirects ? 14 : 12;
    trowel_status s = trowel_mem_new_zeroed(c->ctx, n ? n : 1, sizeof *c->pictures, &c->pictures);
    if (s != TROWEL_OK)
        return s;
    c->picture_count = n;
    for (size_t i = 0; i < n; i++) {
        scumm_picture *p = &c->pictures[i];
        const uint8_t *h = b + offs[i];
        if ((uint64_t)offs[i] + header > c->size)
            return corrupt(c, offs[i], "a picture header runs past the costume");
        p->offset = offs[i];
        p->width = le16(h);
        p->height = le16(h + 2);
        p->rel_x = (int16_t)le16(h + 4);
        p->rel_y = (int16_t)le16(h + 6);
        p->move_x = (int16_t)le16(h + 8);
        p->move_y = (int16_t)le16(h + 10);
        p->redirect_limb = p->redirect_pic = -1;
        if (redirects && !(h[12] == 0xFF && h[13] == 0xFF)) {
            p->redirect_limb = h[12];
            p->redirect_pic = h[13];
        }
        p->data_offset = offs[i] + header;
    }
    for (size_t i = 0; i < n; i++) {
        scumm_picture *p = &c->pictures[i];
        uint32_t from = p->data_offset;
        if (p->redirect_limb >= 0) { /* pixels of another picture, this one's header */
            unsigned rl = (unsigned)p->redirect_limb, rp = (unsigned)p->redirect_pic;
            if (rl >= SCUMM_LIMBS || rp >= c->limb_pic_count[rl] ||
                c->limb_pics[rl][rp] == SCUMM_NO_PICTURE)
                return corrupt(c, p->offset + 12, "a picture redirects to a missing picture");
            from = c->limb_pics[rl][rp] + 14;
        }
        size_t pixels = (size_t)p->width * p->height;
        if (pixels / 256 > c->size) /* a byte pair draws at most 256 pixels */
            return corrupt(c, p->offset, "a picture is larger than its data could draw");
        if ((s = trowel_mem_new(c->ctx, pixels ? pixels : 1, &p->pixels)) != TROWEL_OK)
            return s;
        s = decode_rle(c, b, from, p->width, p->height, p->pixels, &p->data_size);
        if (s != TROWEL_OK)
            return s;
        if (p->redirect_limb >= 0)
            p->data_size = 0;
    }
    /* table entries now name pictures by index */
    for (unsigned l = 0; l < SCUMM_LIMBS; l++)
        for (size_t i = 0; i < c->limb_pic_count[l]; i++)
            if (c->limb_pics[l][i] != SCUMM_NO_PICTURE)
                c->limb_pics[l][i] = picture_index(c, c->limb_pics[l][i]);
    return TROWEL_OK;
}

static trowel_status decode(scumm_costume *c, const uint8_t *d, size_t n)
{
    trowel_status s = find_base(c, d, n);
    if (s != TROWEL_OK)
        return s;
    const uint8_t *b = d + c->base;
    if (c->size < 8)
        return corrupt(c, 0, "the header is cut short");
    /* The seed: "size: 32le, can be 0 (see num anim) ... if(size)
     * num_anim++". LucasArts' own v6 costumes often store 0, and then the
     * table has exactly b[6] offsets: the next slot is the first
     * animation's limb mask. (v5's base lies inside the block header, whose
     * bytes are never all zero.) */
    uint32_t size_field = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                          (uint32_t)b[3] << 24;
    c->size_field = size_field;
    c->anim_count = (size_t)b[6] + (size_field != 0);
    c->format = b[7];
    unsigned f = c->format & 0x7F;
    if (f < 0x58 || f > 0x61 || (f > 0x59 && f < 0x60))
        return trowel_fail(c->ctx, TROWEL_ERR_UNSUPPORTED, c->base + 7,
                           "COST: format 0x%02x (known: 0x58-0x59, 0x60-0x61)", c->format);
    c->colours = (f & 1) ? 32 : 16;
    c->never_mirror = c->format & 0x80;
    c->directions = 4;
    c->codec = 1;
    uint32_t table = 8 + c->colours;
    uint64_t header_end = (uint64_t)table + 2 + 2 * SCUMM_LIMBS + 2 * c->anim_count;
    if (header_end > c->size)
        return trowel_fail(c->ctx, TROWEL_ERR_TRUNCATED, c->base + c->size,
                           "COST: the header needs %llu bytes but the costume has %lu",
                           (unsigned long long)header_end, (unsigned long)c->size);
    memcpy(c->palette, b + 8, c->colours);
    c->cmds_offset = le16(b + table);
    for (unsigned l = 0; l < SCUMM_LIMBS; l++)
        c->limb_table[l] = le16(b + table + 2 + 2 * l);
    uint32_t *offs = NULL;
    size_t noffs = 0;
    if ((s = read_anims(c, b, table + 2 + 2 * SCUMM_LIMBS)) == TROWEL_OK &&
        (s = read_commands(c, b)) == TROWEL_OK &&
        (s = read_limb_tables(c, b, &offs, &noffs)) == TROWEL_OK)
        s = read_pictures(c, b, offs, noffs);
    trowel_mem_free(c->ctx, offs);
    return s;
}

trowel_status scumm_cost_decode(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                scumm_costume *c)
{
    return scumm_costume_decode_with(ctx, data, size, c, decode);
}

/* ---------------------------------------------------------------- bid */

static int cost_bid(trowel_reader *r)
{
    const uint8_t *p;
    if (trowel_reader_size(r) < 16 || trowel_reader_peek(r, 16, &p) != TROWEL_OK)
        return TROWEL_BID_NONE;
    if (memcmp(p, "COST", 4) != 0)
        return TROWEL_BID_NONE;
    uint32_t block = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
    unsigned f = (p[12] == 'C' && p[13] == 'O' ? p[15] : p[9]) & 0x7F;
    bool known = f == 0x58 || f == 0x59 || f == 0x60 || f == 0x61;
    return known && block <= trowel_reader_size(r) ? TROWEL_BID_STRONG : TROWEL_BID_MAGIC;
}

static trowel_status cost_open(trowel_archive *a, trowel_reader *r)
{
    return scumm_costume_open(a, r, scumm_cost_decode);
}

/* ---------------------------------------------------------------- create */

#include "create_cost.inc"

static const trowel_option_info cost_options[] = {SCUMM_COSTUME_OPTIONS, {0}};

const trowel_format trowel_format_scumm_cost = {
    .id = "scumm-cost",
    .family = "scumm",
    .description = "LucasArts SCUMM v5/v6 costume (COST: pictures, limbs, animations)",
    .extensions = ".cost",
    .caps = TROWEL_CAP_LIST | TROWEL_CAP_CONVERT | TROWEL_CAP_CREATE,
    .create_options = "DIR: a folder as convert --to png writes it (costume.json + pictures)",
    .convert_targets = "png gif",
    .options = cost_options,
    .bid = cost_bid,
    .open = cost_open,
    .read_entry = scumm_costume_read_entry,
    .convert_json = scumm_costume_structure,
    .folder_targets = "png gif",
    .convert_folder = scumm_costume_convert_folder,
    .create = scumm_cost_create,
    .close = scumm_costume_close,
};
