/*
 * SCUMM AKOS costumes (v7, v8) into the shared model (costume.h).
 *
 * 'AKOS' + BE size, then sub-blocks (tag + BE size including the 8-byte
 * header): AKHD (u16 version, u8 flags: 0x01 never mirror, 0x02 eight
 * directions; u8, u16 animations, u16 cels, u16 codec), AKPL (costume
 * palette: local colour -> room colour), RGBS (768 bytes RGB), AKSQ (the
 * command stream: a byte below 0x80 is a cel, else a big-endian word:
 * 0xC0xx commands with little-endian operands, other words cels & 0xFFF),
 * AKCH (u16 offsets per animation from the data start, 0: none; at each a
 * u16 limb mask, 0x8000 = limb 0, then per limb a mode byte: 1 clear,
 * 4 hide, 5 show, others followed by u16 start and u16 length), AKOF (per
 * cel u32 offset into AKCD, u16 offset into AKCI), AKCI (per cel u16 width,
 * height, s16 rel_x, rel_y, move_x, move_y), AKCD (the coded cels).
 * Codec 1: the COST RLE (AKPL of 16/32/64 colours: 4/3/2 count bits);
 * codec 5: row-wise BOMP (u16 row size, code n = (b >> 1) + 1, bit 0: a run
 * of the next byte, else n literals); codec 16: a bit stream of colour
 * changes. Codecs 5 and 16 hold raw room colours, 255 transparent.
 */
#include "format/scumm/costume.h"

#include <stdio.h>
#include <string.h>

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

typedef struct block {
    uint32_t at, size; /* data start and size, in the input */
    bool found;
} block;

typedef struct akos_blocks {
    block akhd, akpl, rgbs, aksq, akch, akof, akci, akcd;
} akos_blocks;

static trowel_status bad(scumm_costume *c, uint64_t at, trowel_status s, const char *what)
{
    return trowel_fail(c->ctx, s, at, "AKOS: %s", what);
}

static trowel_status find_blocks(scumm_costume *c, const uint8_t *d, akos_blocks *b)
{
    memset(b, 0, sizeof *b);
    struct { const char *tag; block *blk; } names[] = {
        {"AKHD", &b->akhd}, {"AKPL", &b->akpl}, {"RGBS", &b->rgbs}, {"AKSQ", &b->aksq},
        {"AKCH", &b->akch}, {"AKOF", &b->akof}, {"AKCI", &b->akci}, {"AKCD", &b->akcd}};
    for (uint32_t p = 8; p + 8 <= c->size;) {
        uint32_t size = be32(d + p + 4);
        if (size < 8 || size > c->size - p)
            return bad(c, p + 4, TROWEL_ERR_CORRUPT, "a block's size passes the costume");
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (memcmp(d + p, names[i].tag, 4) == 0 && !names[i].blk->found)
                *names[i].blk = (block){.at = p + 8, .size = size - 8, .found = true};
        p += size;
    }
    if (!b->akhd.found || !b->aksq.found || !b->akch.found || !b->akof.found ||
        !b->akci.found || !b->akcd.found)
        return bad(c, 8, TROWEL_ERR_CORRUPT, "a required block (AKHD, AKSQ, AKCH, AKOF, AKCI, "
                                              "AKCD) is missing");
    if (b->akhd.size < 10)
        return bad(c, b->akhd.at, TROWEL_ERR_CORRUPT, "AKHD is shorter than 10 bytes");
    return TROWEL_OK;
}

static trowel_status read_chores(scumm_costume *c, const uint8_t *d, const block *ch)
{
    trowel_status s = trowel_mem_new_zeroed(c->ctx, c->anim_count ? c->anim_count : 1,
                                            sizeof *c->anims, &c->anims);
    if (s != TROWEL_OK)
        return s;
    if ((uint64_t)c->anim_count * 2 > ch->size)
        return bad(c, ch->at, TROWEL_ERR_CORRUPT, "AKCH is too short for its offset table");
    for (size_t i = 0; i < c->anim_count; i++) {
        uint32_t off = le16(d + ch->at + 2 * i);
        if (off == 0)
            continue;
        scumm_anim *a = &c->anims[i];
        uint32_t p = off;
        if ((uint64_t)p + 2 > ch->size)
            return bad(c, ch->at + 2 * i, TROWEL_ERR_CORRUPT, "an AKCH offset passes AKCH");
        a->present = true;
        a->offset = off;
        a->mask = le16(d + ch->at + p);
        p += 2;
        for (unsigned limb = 0; limb < SCUMM_LIMBS; limb++) {
            if (!(a->mask & (0x8000u >> limb)))
                continue;
            if (p + 1 > ch->size)
                return bad(c, ch->at + p, TROWEL_ERR_CORRUPT, "an AKCH definition passes AKCH");
            scumm_limb_def *l = &a->limb[limb];
            l->mode = d[ch->at + p++];
            if (l->mode == 1 || l->mode == 4 || l->mode == 5) {
                l->kind = l->mode == 1 ? SCUMM_LIMB_DISABLED
                                       : l->mode == 4 ? SCUMM_LIMB_HIDE : SCUMM_LIMB_SHOW;
                continue;
            }
            if (p + 4 > ch->size)
                return bad(c, ch->at + p, TROWEL_ERR_CORRUPT, "an AKCH definition passes AKCH");
            l->kind = SCUMM_LIMB_SEQUENCE;
            l->start = le16(d + ch->at + p);
            l->len = le16(d + ch->at + p + 2);
            l->loop = l->mode == 2 || l->mode == 6;
            p += 4;
            if ((uint32_t)l->start >= c->cmd_count && c->warnings++ < 8)
                trowel_warn(c->ctx, ch->at + p - 4,
                            "AKOS: animation %zu limb %u starts at %u, outside AKSQ (%zu bytes)",
                            i, limb, l->start, c->cmd_count);
        }
    }
    return TROWEL_OK;
}

/* Codec 1: column-major RLE, like COST. */
static trowel_status codec1(scumm_costume *c, const uint8_t *src, size_t n, scumm_picture *p,
                            unsigned shift)
{
    unsigned mask = (1u << shift) - 1;
    size_t total = (size_t)p->width * p->height, done = 0, x = 0, y = 0, at = 0;
    while (done < total) {
        if (at >= n)
            return bad(c, p->data_offset + at, TROWEL_ERR_TRUNCATED, "a cel's pixels pass AKCD");
        unsigned colour = src[at] >> shift, run = src[at] & mask;
        at++;
        if (run == 0) {
            if (at >= n)
                return bad(c, p->data_offset + at, TROWEL_ERR_TRUNCATED,
                           "a cel's pixels pass AKCD");
            run = src[at++];
            if (run == 0)
                run = 256;
        }
        if (run > total - done) {
            if (c->warnings++ < 8)
                trowel_warn(c->ctx, p->data_offset, "AKOS: a run passes the cel's %ux%u pixels",
                            p->width, p->height);
            run = (unsigned)(total - done);
        }
        for (unsigned i = 0; i < run; i++, done++) {
            p->pixels[y * p->width + x] = (uint8_t)colour;
            if (++y == p->height) {
                y = 0;
                x++;
            }
        }
    }
    p->data_size = (uint32_t)at;
    return TROWEL_OK;
}

/* Codec 5: row-wise BOMP. */
static trowel_status codec5(scumm_costume *c, const uint8_t *src, size_t n, scumm_picture *p)
{
    size_t at = 0;
    for (uint32_t row = 0; row < p->height; row++) {
        if (at + 2 > n)
            return bad(c, p->data_offset + at, TROWEL_ERR_TRUNCATED, "a cel's rows pass AKCD");
        size_t len = le16(src + at), end = at + 2 + len;
        at += 2;
        if (end > n)
            return bad(c, p->data_offset + at, TROWEL_ERR_TRUNCATED, "a cel's rows pass AKCD");
        uint8_t *out = p->pixels + (size_t)row * p->width;
        memset(out, 255, p->width);
        size_t x = 0;
        while (at < end && x < p->width) {
            unsigned code = src[at++], count = (code >> 1) + 1;
            if (code & 1) {
                if (at >= end)
                    break;
                uint8_t v = src[at++];
                for (unsigned i = 0; i < count && x < p->width; i++)
                    out[x++] = v;
            } else {
                for (unsigned i = 0; i < count && x < p->width && at < end; i++)
                    out[x++] = src[at++];
            }
        }
        at = end;
    }
    p->data_size = (uint32_t)at;
    return TROWEL_OK;
}

typedef struct bits {
    const uint8_t *src;
    size_t n, at, over;
    uint32_t buf;
    unsigned count;
} bits;

static unsigned take(bits *b, unsigned k)
{
    unsigned v = b->buf & ((1u << k) - 1);
    b->buf >>= k;
    b->count -= k;
    if (b->count <= 8) {
        uint32_t next = 0;
        if (b->at < b->n)
            next = b->src[b->at];
        else
            b->over++;
        b->at++;
        b->buf |= next << b->count;
        b->count += 8;
    }
    return v;
}

/* Codec 16: a bit stream of colour changes, row-major. */
static trowel_status codec16(scumm_costume *c, const uint8_t *src, size_t n, scumm_picture *p)
{
    if (n < 4)
        return bad(c, p->data_offset, TROWEL_ERR_TRUNCATED, "a codec 16 cel is cut short");
    unsigned bpp = src[0];
    if (bpp == 0 || bpp > 8)
        return bad(c, p->data_offset, TROWEL_ERR_CORRUPT, "a codec 16 cel has a bad bit depth");
    uint8_t colour = src[1];
    bits b = {.src = src, .n = n, .at = 4, .buf = le16(src + 2), .count = 16};
    size_t total = (size_t)p->width * p->height;
    int repeat = 0;
    for (size_t i = 0; i < total; i++) {
        p->pixels[i] = colour;
        if (repeat > 0) {
            repeat--;
        } else if (take(&b, 1)) {
            if (take(&b, 1)) {
                unsigned delta = take(&b, 3);
                if (delta != 4)
                    colour = (uint8_t)(colour + delta - 4);
                else
                    repeat = (int)take(&b, 8) - 1;
            } else {
                colour = (uint8_t)take(&b, bpp);
            }
        }
        if (b.over > 2)
            return bad(c, p->data_offset + n, TROWEL_ERR_TRUNCATED,
                       "a codec 16 cel's bits pass AKCD");
    }
    p->data_size = (uint32_t)(b.at > n ? n : b.at);
    return TROWEL_OK;
}

static trowel_status read_cels(scumm_costume *c, const uint8_t *d, const akos_blocks *b,
                               unsigned cels)
{
    if ((uint64_t)cels * 6 > b->akof.size)
        return bad(c, b->akof.at, TROWEL_ERR_CORRUPT, "AKOF is too short for the cel count");
    trowel_status s = trowel_mem_new_zeroed(c->ctx, cels ? cels : 1, sizeof *c->pictures,
                                            &c->pictures);
    if (s != TROWEL_OK)
        return s;
    c->picture_count = cels;
    unsigned shift = c->colours <= 16 ? 4 : c->colours <= 32 ? 3 : 2;
    for (unsigned i = 0; i < cels; i++) {
        scumm_picture *p = &c->pictures[i];
        const uint8_t *of = d + b->akof.at + 6 * i;
        uint32_t cd = (uint32_t)of[0] | (uint32_t)of[1] << 8 | (uint32_t)of[2] << 16 |
                      (uint32_t)of[3] << 24;
        uint32_t ci = le16(of + 4);
        if ((uint64_t)ci + 12 > b->akci.size)
            return bad(c, b->akof.at + 6 * i + 4, TROWEL_ERR_CORRUPT,
                       "an AKCI offset passes AKCI");
        if (cd >= b->akcd.size)
            return bad(c, b->akof.at + 6 * i, TROWEL_ERR_CORRUPT, "an AKCD offset passes AKCD");
        const uint8_t *h = d + b->akci.at + ci;
        p->offset = i;
        p->width = le16(h);
        p->height = le16(h + 2);
        p->rel_x = (int16_t)le16(h + 4);
        p->rel_y = (int16_t)le16(h + 6);
        p->move_x = (int16_t)le16(h + 8);
        p->move_y = (int16_t)le16(h + 10);
        p->redirect_limb = p->redirect_pic = -1;
        p->data_offset = b->akcd.at + cd;
        size_t pixels = (size_t)p->width * p->height, avail = b->akcd.size - cd;
        if (pixels / 256 > avail + 16) /* no codec draws more than 256 pixels a bit */
            return bad(c, p->data_offset, TROWEL_ERR_CORRUPT,
                       "a cel is larger than its data could draw");
        if ((s = trowel_mem_new(c->ctx, pixels ? pixels : 1, &p->pixels)) != TROWEL_OK)
            return s;
        const uint8_t *src = d + p->data_offset;
        s = c->codec == 1 ? codec1(c, src, avail, p, shift)
            : c->codec == 5 ? codec5(c, src, avail, p)
                            : codec16(c, src, avail, p);
        if (s != TROWEL_OK)
            return s;
    }
    return TROWEL_OK;
}

static trowel_status decode(scumm_costume *c, const uint8_t *d, size_t n)
{
    if (n < 8 || memcmp(d, "AKOS", 4) != 0)
        return trowel_fail(c->ctx, TROWEL_ERR_UNSUPPORTED, 0, "not an AKOS costume");
    uint32_t size = be32(d + 4);
    if (size < 8 || size > n)
        return trowel_fail(c->ctx, size > n ? TROWEL_ERR_TRUNCATED : TROWEL_ERR_CORRUPT, 4,
                           "AKOS: block size %lu but %zu bytes", (unsigned long)size, n);
    c->akos = true;
    c->base = 0;
    c->size = size;
    akos_blocks b;
    trowel_status s = find_blocks(c, d, &b);
    if (s != TROWEL_OK)
        return s;
    const uint8_t *h = d + b.akhd.at;
    c->version = le16(h);
    c->flags = h[2];
    c->anim_count = le16(h + 4);
    unsigned cels = le16(h + 6);
    c->codec = le16(h + 8);
    c->never_mirror = c->flags & 0x01;
    c->directions = (c->flags & 0x02) ? 8 : 4;
    if (c->codec != 1 && c->codec != 5 && c->codec != 16)
        return trowel_fail(c->ctx, TROWEL_ERR_UNSUPPORTED, b.akhd.at + 8,
                           "AKOS: codec %u (known: 1, 5, 16)", c->codec);
    if (c->codec == 1) {
        if (!b.akpl.found || b.akpl.size == 0 || b.akpl.size > 64)
            return bad(c, b.akhd.at, TROWEL_ERR_CORRUPT,
                       "codec 1 needs an AKPL of 1 to 64 colours");
        c->colours = b.akpl.size <= 16 ? 16 : b.akpl.size <= 32 ? 32 : 64;
        memcpy(c->palette, d + b.akpl.at, b.akpl.size);
    } else {
        c->colours = 256;
        c->raw_colours = true;
        for (unsigned i = 0; i < 256; i++)
            c->palette[i] = (uint8_t)i;
    }
    if (b.rgbs.found && b.rgbs.size >= 3) { /* the seed: "a list of 8 bits triplets" */
        c->has_rgbs = true;
        memcpy(c->rgbs, d + b.rgbs.at, b.rgbs.size < 768 ? b.rgbs.size / 3 * 3 : 768);
    }
    c->cmd_count = b.aksq.size;
    c->cmds_offset = b.aksq.at;
    s = trowel_mem_dup_bytes(c->ctx, d + b.aksq.at, c->cmd_count, &c->cmds);
    if (s != TROWEL_OK)
        return s;
    if ((s = read_chores(c, d, &b.akch)) != TROWEL_OK)
        return s;
    return read_cels(c, d, &b, cels);
}

trowel_status scumm_akos_decode(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                scumm_costume *c)
{
    return scumm_costume_decode_with(ctx, data, size, c, decode);
}

static int akos_bid(trowel_reader *r)
{
    const uint8_t *p;
    if (trowel_reader_size(r) < 16 || trowel_reader_peek(r, 16, &p) != TROWEL_OK)
        return TROWEL_BID_NONE;
    if (memcmp(p, "AKOS", 4) != 0)
        return TROWEL_BID_NONE;
    return memcmp(p + 8, "AKHD", 4) == 0 && be32(p + 4) <= trowel_reader_size(r)
               ? TROWEL_BID_STRONG
               : TROWEL_BID_MAGIC;
}

static trowel_status akos_open(trowel_archive *a, trowel_reader *r)
{
    return scumm_costume_open(a, r, scumm_akos_decode);
}

static const trowel_option_info akos_options[] = {SCUMM_COSTUME_OPTIONS, {0}};

const trowel_format trowel_format_scumm_akos = {
    .id = "scumm-akos",
    .family = "scumm",
    .description = "LucasArts SCUMM v7/v8 costume (AKOS: cels, chores, AKSQ sequences)",
    .extensions = ".akos",
    .caps = TROWEL_CAP_LIST | TROWEL_CAP_CONVERT,
    .create_options = "",
    .convert_targets = "png gif",
    .options = akos_options,
    .bid = akos_bid,
    .open = akos_open,
    .read_entry = scumm_costume_read_entry,
    .convert_json = scumm_costume_structure,
    .folder_targets = "png gif",
    .convert_folder = scumm_costume_convert_folder,
    .close = scumm_costume_close,
};
