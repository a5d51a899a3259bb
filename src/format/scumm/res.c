/*
 * SCUMM resource files (v5, v6, v7): the index (.000, .LA0) and the data
 * file (.001, .LA1) of a LucasArts game.
 *
 * Both are trees of blocks: a 4-character tag and a big-endian u32 size
 * that counts the 8-byte header. The data file is one LECF holding LOFF
 * (a room count byte, then room byte + LE u32 offset of that room's ROOM
 * tag) and one LFLF per room; an LFLF holds the ROOM (RMHD, palettes,
 * images, objects, boxes, local scripts) and the room's global resources
 * beside it: SCRP, SOUN, COST (v5/v6 costumes), AKOS (v7), CHAR. The index
 * is a flat run of blocks: RNAM, MAXS, then directories DROO, DSCR, DSOU,
 * DCOS, DCHR (u16 count, count room bytes, count LE u32 offsets from the
 * room's ROOM tag), DOBJ, AARY (v6), ANAM (v7). v5 and v6 XOR every byte
 * of both files with 0x69 (the xor69 input filter peels that before this
 * format bids); v7 is plain. Palettes: a v5 ROOM holds CLUT (256 RGB);
 * v6 and v7 hold PALS > WRAP > OFFS (LE u32 offsets from OFFS's data to
 * each APAL's data) + APAL blocks; the room starts with palette 0.
 *
 * Opening either file finds the other beside it through the open hook
 * (the last character of the name: 0 for the index, 1 for the data), so
 * both give the same entries; a missing partner only warns. Entries are
 * the index blocks (index/TAG.tag), LOFF, each room's ROOM and the blocks
 * beside it (roomNN/cost012.cost, numbered from the index), and the
 * ROOM's children (roomNN/room/NN-tag.tag, in order). Every entry reads
 * out decrypted.
 *
 * Facts: ../shared/formats/scumm-costumes.md ("Where costumes live"),
 * ScummVM's engines/scumm/resource.cpp (directories, LOFF, XOR), checked
 * against the ScummC-built games of the corpus.
 */
#include "scumm.h"
#include "costume.h"
#include "xor69.h"
#include "core/input.h"
#include "core/sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 8      /* deepest nesting verify walks */
#define ROOM_SLOTS 256   /* room numbers are bytes */

enum { FILE_INDEX, FILE_DATA };

/* The index directories that number resources, and the block types they
 * point at (DCOS: COST in v5/v6, AKOS in v7). */
static const struct {
    const char *dir;
    const char *tags[2];
} numbered[] = {
    {"DSCR", {"SCRP", NULL}},
    {"DSOU", {"SOUN", NULL}},
    {"DCOS", {"COST", "AKOS"}},
    {"DCHR", {"CHAR", NULL}},
};
#define NUMBERED_DIRS (sizeof numbered / sizeof numbered[0])

typedef struct res_dir {
    uint16_t count;
    uint8_t *rooms;
    uint32_t *offsets;
    uint64_t at; /* where the directory block starts in the index */
} res_dir;

typedef struct res_entry {
    int file;          /* FILE_INDEX or FILE_DATA */
    char tag[5];
    int room;          /* -1: not a room's */
    size_t room_block; /* entry index of the room's ROOM block */
    int number;        /* the index's number for it; -1: none */
} res_entry;

typedef struct res_state {
    trowel_input *files[2];  /* what each file reads through (decrypted) */
    trowel_input *owned[2];  /* the partner: its raw input and its XOR view */
    bool xored;
    bool opened_data; /* the file given is the data file (else the index) */
    res_dir dirs[NUMBERED_DIRS];
    bool has_index, has_data;
    uint64_t room_offset[ROOM_SLOTS]; /* LOFF: ROOM tag offsets; 0: none */
    uint64_t loff_at;
    res_entry *meta; /* per entry */
    size_t meta_cap;
    size_t structure_problems; /* found at open: damaged nesting */
    bool palette_said[ROOM_SLOTS]; /* convert: this room's fallback palette was named */
} res_state;

/* ------------------------------------------------------------ blocks */

typedef struct block {
    char tag[5];
    uint64_t off;  /* of the tag, in the file */
    uint64_t size; /* including the header */
} block;

static bool is_tag(const uint8_t t[4])
{
    for (int i = 0; i < 4; i++)
        if (!((t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= '0' && t[i] <= '9')))
            return false;
    return true;
}

/* Reads the block header at the cursor of r (a window over the parent's
 * contents) and checks that the block fits in it. */
static trowel_status read_block(trowel_reader *r, const char *parent, block *b)
{
    uint8_t head[8];
    uint64_t at = trowel_reader_abs(r);
    trowel_status s = trowel_read_bytes(r, head, sizeof head);
    if (s != TROWEL_OK)
        return trowel_fail(r->ctx, TROWEL_ERR_TRUNCATED, at,
                           "block header cut off inside %s", parent);
    memcpy(b->tag, head, 4);
    b->tag[4] = '\0';
    b->off = at;
    b->size = (uint64_t)head[4] << 24 | (uint64_t)head[5] << 16 | (uint64_t)head[6] << 8 | head[7];
    if (!is_tag(head))
        return trowel_fail(r->ctx, TROWEL_ERR_CORRUPT, at, "no block tag inside %s", parent);
    if (b->size < 8)
        return trowel_fail(r->ctx, TROWEL_ERR_CORRUPT, at,
                           "block %s declares %llu bytes, less than its own header", b->tag,
                           (unsigned long long)b->size);
    if (b->size - 8 > trowel_reader_remaining(r))
        return trowel_fail(r->ctx, TROWEL_ERR_CORRUPT, at,
                           "block %s (%llu bytes) runs past the end of %s at 0x%llx", b->tag,
                           (unsigned long long)b->size, parent,
                           (unsigned long long)(trowel_reader_abs(r) + trowel_reader_remaining(r)));
    return trowel_reader_skip(r, b->size - 8);
}

/* A reader over the contents of b (after its header). */
static trowel_status block_contents(trowel_ctx *ctx, trowel_input *in, const block *b,
                                    trowel_reader *out)
{
    trowel_reader whole;
    trowel_reader_init(&whole, ctx, in);
    return trowel_reader_sub(&whole, b->off + 8, b->size - 8, out);
}

/* ------------------------------------------------------------- bidding */

static int res_bid(trowel_reader *r)
{
    uint8_t head[8];
    if (trowel_read_bytes(r, head, sizeof head) != TROWEL_OK)
        return TROWEL_BID_NONE;
    bool data = memcmp(head, "LECF", 4) == 0;
    bool index = memcmp(head, "RNAM", 4) == 0 || memcmp(head, "MAXS", 4) == 0;
    uint32_t size = (uint32_t)head[4] << 24 | (uint32_t)head[5] << 16 | (uint32_t)head[6] << 8 |
                    head[7];
    if ((!data && !index) || size < 8 || size > trowel_reader_size(r))
        return TROWEL_BID_NONE;
    if (data && size == trowel_reader_size(r))
        return TROWEL_BID_STRONG; /* LECF spans the file */
    return TROWEL_BID_MAGIC;
}

/* ------------------------------------------------------------- entries */

static trowel_status add(trowel_archive *a, const block *b, const char *name, int file, int room,
                         size_t room_block)
{
    res_state *st = a->priv;
    if (a->entry_count == st->meta_cap) {
        size_t cap = st->meta_cap ? st->meta_cap * 2 : 64;
        trowel_status s = trowel_mem_resize_array(a->ctx, &st->meta, cap, sizeof *st->meta);
        if (s != TROWEL_OK)
            return s;
        st->meta_cap = cap;
    }
    res_entry *m = &st->meta[a->entry_count];
    memset(m, 0, sizeof *m);
    m->file = file;
    memcpy(m->tag, b->tag, 5);
    m->room = room;
    m->room_block = room_block;
    m->number = -1;
    trowel_entry e = {.name = name, .size = b->size, .packed_size = b->size, .offset = b->off};
    trowel_props *x;
    trowel_status s = trowel_archive_add(a, &e, &x);
    if (s == TROWEL_OK)
        s = trowel_props_add_str(x, "tag", b->tag);
    if (s == TROWEL_OK)
        s = trowel_props_add_str(x, "file", file == FILE_INDEX ? "index" : "data");
    if (s == TROWEL_OK && room >= 0)
        s = trowel_props_add_uint(x, "room", (uint64_t)room);
    return s;
}

static void lower_tag(const char *tag, char out[5])
{
    for (int i = 0; i < 5; i++)
        out[i] = (char)(tag[i] >= 'A' && tag[i] <= 'Z' ? tag[i] - 'A' + 'a' : tag[i]);
}

/* ---------------------------------------------------------------- index */

static trowel_status read_dir(trowel_ctx *ctx, trowel_input *in, const block *b, res_dir *d)
{
    trowel_reader r;
    trowel_status s = block_contents(ctx, in, b, &r);
    if (s == TROWEL_OK)
        s = trowel_read_u16le(&r, &d->count);
    if (s != TROWEL_OK)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, b->off, "directory %s is cut off", b->tag);
    if ((uint64_t)d->count * 5 > trowel_reader_remaining(&r))
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, b->off,
                           "directory %s lists %u resources but holds room for %llu", b->tag,
                           d->count, (unsigned long long)(trowel_reader_remaining(&r) / 5));
    d->at = b->off;
    s = trowel_mem_new(ctx, d->count ? d->count : 1, &d->rooms);
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, d->count ? d->count : 1, sizeof *d->offsets, &d->offsets);
    if (s != TROWEL_OK)
        return s;
    s = trowel_read_bytes(&r, d->rooms, d->count);
    for (uint16_t i = 0; s == TROWEL_OK && i < d->count; i++)
        s = trowel_read_u32le(&r, &d->offsets[i]);
    return s;
}

static trowel_status open_index(trowel_archive *a)
{
    res_state *st = a->priv;
    trowel_ctx *ctx = a->ctx;
    trowel_reader r;
    trowel_reader_init(&r, ctx, st->files[FILE_INDEX]);
    while (trowel_reader_remaining(&r) > 0) {
        block b;
        trowel_status s = read_block(&r, "the index", &b);
        if (s != TROWEL_OK)
            return s;
        for (size_t d = 0; d < NUMBERED_DIRS; d++)
            if (strcmp(b.tag, numbered[d].dir) == 0 && !st->dirs[d].rooms &&
                (s = read_dir(ctx, st->files[FILE_INDEX], &b, &st->dirs[d])) != TROWEL_OK)
                return s;
        char low[5], name[32];
        lower_tag(b.tag, low);
        snprintf(name, sizeof name, "index/%s.%s", low, low);
        if ((s = add(a, &b, name, FILE_INDEX, -1, SIZE_MAX)) != TROWEL_OK)
            return s;
    }
    st->has_index = true;
    return TROWEL_OK;
}

/* ----------------------------------------------------------------- data */

static trowel_status read_loff(trowel_archive *a, const block *b)
{
    res_state *st = a->priv;
    trowel_reader r;
    uint8_t n;
    trowel_status s = block_contents(a->ctx, st->files[FILE_DATA], b, &r);
    if (s == TROWEL_OK)
        s = trowel_read_u8(&r, &n);
    if (s == TROWEL_OK && (uint64_t)n * 5 > trowel_reader_remaining(&r))
        return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, b->off,
                           "LOFF lists %u rooms but holds room for %llu", n,
                           (unsigned long long)(trowel_reader_remaining(&r) / 5));
    for (unsigned i = 0; s == TROWEL_OK && i < n; i++) {
        uint8_t room;
        uint32_t off;
        if ((s = trowel_read_u8(&r, &room)) == TROWEL_OK &&
            (s = trowel_read_u32le(&r, &off)) == TROWEL_OK)
            st->room_offset[room] = off;
    }
    st->loff_at = b->off;
    return s;
}

/* The number the index gives the resource at off in room, or -1. */
static int number_of(const res_state *st, const char *tag, int room, uint64_t off)
{
    if (room < 0 || !st->room_offset[room])
        return -1;
    for (size_t d = 0; d < NUMBERED_DIRS; d++) {
        if (strcmp(tag, numbered[d].tags[0]) != 0 &&
            !(numbered[d].tags[1] && strcmp(tag, numbered[d].tags[1]) == 0))
            continue;
        for (uint16_t i = 0; i < st->dirs[d].count; i++)
            if (st->dirs[d].rooms[i] == room &&
                st->room_offset[room] + st->dirs[d].offsets[i] == off)
                return i;
    }
    return -1;
}

/* A block that does not nest: warned, counted, the archive damaged. */
static void structure_problem(trowel_archive *a)
{
    res_state *st = a->priv;
    st->structure_problems++;
    trowel_warn(a->ctx, a->ctx->last_error.offset, "%s", a->ctx->last_error.message);
    trowel_archive_mark_damaged(a);
}

static trowel_status open_room(trowel_archive *a, const block *room, const char *folder,
                               int number, size_t room_entry)
{
    res_state *st = a->priv;
    trowel_reader r;
    trowel_status s = block_contents(a->ctx, st->files[FILE_DATA], room, &r);
    for (unsigned i = 0; s == TROWEL_OK && trowel_reader_remaining(&r) > 0; i++) {
        block b;
        if (read_block(&r, "ROOM", &b) != TROWEL_OK) {
            structure_problem(a);
            break;
        }
        char low[5], name[64];
        lower_tag(b.tag, low);
        snprintf(name, sizeof name, "%s/room/%02u-%s.%s", folder, i, low, low);
        s = add(a, &b, name, FILE_DATA, number, room_entry);
    }
    return s;
}

static trowel_status open_lflf(trowel_archive *a, const block *lflf, unsigned ordinal)
{
    res_state *st = a->priv;
    trowel_reader r;
    trowel_status s = block_contents(a->ctx, st->files[FILE_DATA], lflf, &r);
    int number = -1;
    char folder[32];
    snprintf(folder, sizeof folder, "lflf%02u", ordinal);
    size_t room_entry = SIZE_MAX;
    while (s == TROWEL_OK && trowel_reader_remaining(&r) > 0) {
        block b;
        if (read_block(&r, "LFLF", &b) != TROWEL_OK) {
            structure_problem(a);
            break;
        }
        char low[5], name[64];
        lower_tag(b.tag, low);
        if (strcmp(b.tag, "ROOM") == 0 && room_entry == SIZE_MAX) {
            for (int k = 0; k < ROOM_SLOTS; k++)
                if (st->room_offset[k] == b.off)
                    number = k;
            if (number >= 0)
                snprintf(folder, sizeof folder, "room%02d", number);
            room_entry = a->entry_count;
            snprintf(name, sizeof name, "%s/room.room", folder);
            if ((s = add(a, &b, name, FILE_DATA, number, room_entry)) == TROWEL_OK)
                s = open_room(a, &b, folder, number, room_entry);
            continue;
        }
        int n = number_of(st, b.tag, number, b.off);
        if (n >= 0)
            snprintf(name, sizeof name, "%s/%s%03d.%s", folder, low, n, low);
        else
            snprintf(name, sizeof name, "%s/%s-%06llx.%s", folder, low, (unsigned long long)b.off,
                     low);
        s = add(a, &b, name, FILE_DATA, number, room_entry);
        if (s == TROWEL_OK && n >= 0) /* the resource number the index gives it */
            st->meta[a->entry_count - 1].number = n;
        if (s == TROWEL_OK && n >= 0)
            s = trowel_props_add_uint(a->entry_extra[a->entry_count - 1], "number", (uint64_t)n);
    }
    return s;
}

static trowel_status open_data(trowel_archive *a)
{
    res_state *st = a->priv;
    trowel_ctx *ctx = a->ctx;
    trowel_reader whole;
    trowel_reader_init(&whole, ctx, st->files[FILE_DATA]);
    uint8_t head[8];
    trowel_status s = trowel_read_bytes(&whole, head, sizeof head);
    if (s != TROWEL_OK)
        return s;
    if (memcmp(head, "LECF", 4) != 0)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, 0, "the data file does not start with LECF");
    uint64_t size = (uint64_t)head[4] << 24 | (uint64_t)head[5] << 16 | (uint64_t)head[6] << 8 |
                    head[7];
    uint64_t file = trowel_reader_size(&whole);
    if (size < 8 || size > file) { /* cut (or lying): read what is there */
        trowel_fail(ctx, TROWEL_ERR_TRUNCATED, 0,
                    "LECF declares %llu bytes but the data file has %llu",
                    (unsigned long long)size, (unsigned long long)file);
        structure_problem(a);
        size = file;
    }
    block lecf = {"LECF", 0, size};
    trowel_reader r;
    if ((s = block_contents(ctx, st->files[FILE_DATA], &lecf, &r)) != TROWEL_OK)
        return s;
    st->has_data = true;
    unsigned ordinal = 0;
    while (trowel_reader_remaining(&r) > 0) {
        block b;
        if (read_block(&r, "LECF", &b) != TROWEL_OK) {
            structure_problem(a);
            break;
        }
        if (strcmp(b.tag, "LOFF") == 0) {
            if ((s = read_loff(a, &b)) != TROWEL_OK ||
                (s = add(a, &b, "loff.loff", FILE_DATA, -1, SIZE_MAX)) != TROWEL_OK)
                return s;
        } else if (strcmp(b.tag, "LFLF") == 0) {
            if ((s = open_lflf(a, &b, ordinal++)) != TROWEL_OK)
                return s;
        } else {
            char low[5], name[48];
            lower_tag(b.tag, low);
            snprintf(name, sizeof name, "%s-%06llx.%s", low, (unsigned long long)b.off, low);
            if ((s = add(a, &b, name, FILE_DATA, -1, SIZE_MAX)) != TROWEL_OK)
                return s;
        }
    }
    return TROWEL_OK;
}

/* ------------------------------------------------------------- partner */

/* The partner's name: the last character 0 (index) <-> 1 (data). */
static bool partner_name(const char *path, bool want_data, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(base);
    if (n == 0 || n >= cap || base[n - 1] != (want_data ? '0' : '1'))
        return false;
    memcpy(out, base, n + 1);
    out[n - 1] = want_data ? '1' : '0';
    return true;
}

/* Opens the partner file through the open hook, decrypting it when its
 * first tag is XORed; false (with a warning) when it is not there. */
static bool open_partner(trowel_archive *a, int which)
{
    res_state *st = a->priv;
    trowel_ctx *ctx = a->ctx;
    char name[256];
    if (!partner_name(trowel_input_name(a->in), which == FILE_DATA, name, sizeof name))
        return false;
    trowel_input *raw;
    if (trowel_open_related(ctx, trowel_input_name(a->in), name, &raw) != TROWEL_OK) {
        trowel_warn(ctx, TROWEL_NO_OFFSET, "%s: %s", which == FILE_DATA ? "no data file" : "no index",
                    ctx->last_error.message);
        trowel_ctx_clear_error(ctx);
        return false;
    }
    st->owned[0] = raw;
    trowel_reader r;
    trowel_reader_init(&r, ctx, raw);
    uint8_t tag[4] = {0};
    (void)trowel_read_bytes(&r, tag, 4);
    trowel_ctx_clear_error(ctx);
    if (trowel_xor69_start(tag) == (which == FILE_DATA ? TROWEL_XOR69_DATA : TROWEL_XOR69_INDEX)) {
        if (trowel_xor69_open(ctx, raw, &st->owned[1]) != TROWEL_OK)
            return false;
        st->files[which] = st->owned[1];
        st->xored = true;
    } else {
        st->files[which] = raw;
    }
    return true;
}

/* ---------------------------------------------------------------- open */

/* Whether an entry tagged tag was found (in the file given by file, or
 * either file when file < 0), and the size of the first. */
static bool has_tag(const trowel_archive *a, const char *tag, int file, uint64_t *size)
{
    const res_state *st = a->priv;
    for (size_t i = 0; i < a->entry_count; i++)
        if (strcmp(st->meta[i].tag, tag) == 0 && (file < 0 || st->meta[i].file == file)) {
            if (size)
                *size = a->entries[i].size;
            return true;
        }
    return false;
}

/* The SCUMM version, from the blocks: costumes (AKOS: v7; COST: v5/v6,
 * told apart by the room palettes, CLUT or PALS), else MAXS's size (v7's
 * starts with version strings), else the index (ANAM: v7, AARY: v6), and
 * only then the XOR (v5/v6 XOR, v7 does not; an unXORed v6 game exists,
 * so it is the last word). why says what told it. */
static unsigned infer_version(trowel_archive *a, char *why, size_t cap)
{
    const res_state *st = a->priv;
    uint64_t maxs = 0;
    bool akos = has_tag(a, "AKOS", FILE_DATA, NULL), cost = has_tag(a, "COST", FILE_DATA, NULL);
    bool pals = has_tag(a, "PALS", FILE_DATA, NULL), clut = has_tag(a, "CLUT", FILE_DATA, NULL);
    bool has_maxs = has_tag(a, "MAXS", FILE_INDEX, &maxs);
    unsigned v;
    if (akos && !cost) {
        v = 7;
        snprintf(why, cap, "AKOS costumes");
    } else if (cost && !akos && (pals || clut) && !(pals && clut)) {
        v = pals ? 6 : 5;
        snprintf(why, cap, "COST costumes, %s palettes", pals ? "PALS" : "CLUT");
    } else if (has_maxs && maxs >= 8 + 100) {
        v = 7;
        snprintf(why, cap, "MAXS of %llu bytes (with version strings)", (unsigned long long)maxs);
    } else if (has_tag(a, "ANAM", FILE_INDEX, NULL)) {
        v = 7;
        snprintf(why, cap, "ANAM in the index");
    } else if (has_tag(a, "AARY", FILE_INDEX, NULL) || pals) {
        v = 6;
        snprintf(why, cap, "%s", pals ? "PALS palettes" : "AARY in the index");
    } else if (clut) {
        v = 5;
        snprintf(why, cap, "CLUT palettes");
    } else {
        v = st->xored ? 6 : 7;
        snprintf(why, cap, "only the XOR (%s): no costumes, palettes or index to tell",
                 st->xored ? "XORed: v5 or v6" : "not XORed");
    }
    if (v == 7 && st->xored)
        trowel_warn(a->ctx, TROWEL_NO_OFFSET, "the files are XORed with 0x69, which v7 games are "
                                              "not, yet %s say v7", why);
    return v;
}

static trowel_status res_open(trowel_archive *a, trowel_reader *r)
{
    trowel_ctx *ctx = a->ctx;
    res_state *st;
    trowel_status s = trowel_mem_new_zeroed(ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    uint8_t tag[4];
    s = trowel_read_bytes(r, tag, 4);
    if (s != TROWEL_OK)
        return s;
    bool is_data = memcmp(tag, "LECF", 4) == 0;
    /* Were we given decrypted bytes? The raw file then starts otherwise. */
    trowel_reader raw;
    trowel_reader_init(&raw, ctx, a->raw_in ? a->raw_in : a->in);
    uint8_t raw_tag[4] = {0};
    (void)trowel_read_bytes(&raw, raw_tag, 4);
    trowel_ctx_clear_error(ctx);
    st->xored = memcmp(raw_tag, tag, 4) != 0;
    st->files[is_data ? FILE_DATA : FILE_INDEX] = a->in;
    st->opened_data = is_data;
    bool partner = open_partner(a, is_data ? FILE_INDEX : FILE_DATA);
    if (partner || !is_data)
        s = open_index(a);
    if (s == TROWEL_OK && (partner || is_data))
        s = open_data(a);
    if (s != TROWEL_OK)
        return s;
    char why[160];
    unsigned version = infer_version(a, why, sizeof why);
    if ((s = trowel_props_add_str(a->info, "format", "scumm-res")) != TROWEL_OK ||
        (s = trowel_props_add_uint(a->info, "version", version)) != TROWEL_OK ||
        (s = trowel_props_add_str(a->info, "version_from", why)) != TROWEL_OK ||
        (s = trowel_props_add_str(a->info, "opened", is_data ? "data" : "index")) != TROWEL_OK ||
        (s = trowel_props_add_bool(a->info, "xor69", st->xored)) != TROWEL_OK ||
        (s = trowel_props_add_bool(a->info, "index_found", st->has_index)) != TROWEL_OK ||
        (s = trowel_props_add_bool(a->info, "data_found", st->has_data)) != TROWEL_OK)
        return s;
    unsigned rooms = 0;
    for (int k = 0; k < ROOM_SLOTS; k++)
        rooms += st->room_offset[k] != 0;
    if ((s = trowel_props_add_uint(a->info, "rooms", rooms)) != TROWEL_OK)
        return s;
    for (size_t d = 0; d < NUMBERED_DIRS; d++) {
        char key[16];
        lower_tag(numbered[d].dir, key);
        if (st->dirs[d].rooms &&
            (s = trowel_props_add_uint(a->info, key, st->dirs[d].count)) != TROWEL_OK)
            return s;
    }
    return TROWEL_OK;
}

static void res_close(trowel_archive *a)
{
    res_state *st = a->priv;
    if (!st)
        return;
    for (size_t d = 0; d < NUMBERED_DIRS; d++) {
        trowel_mem_free(a->ctx, st->dirs[d].rooms);
        trowel_mem_free(a->ctx, st->dirs[d].offsets);
    }
    trowel_input_close(st->owned[1]);
    trowel_input_close(st->owned[0]);
    trowel_mem_free(a->ctx, st->meta);
    trowel_mem_free(a->ctx, st);
}

static trowel_status res_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    res_state *st = a->priv;
    const trowel_entry *e = &a->entries[index];
    trowel_reader whole, r;
    trowel_reader_init(&whole, a->ctx, st->files[st->meta[index].file]);
    trowel_status s = trowel_reader_sub(&whole, e->offset, e->size, &r);
    return s == TROWEL_OK ? trowel_reader_copy_to(&r, out) : s;
}

/* -------------------------------------------------------------- verify */

static bool is_container(const char *tag)
{
    static const char *const containers[] = {"LECF", "LFLF", "ROOM", "RMIM", "OBIM", "PALS", "WRAP"};
    for (size_t i = 0; i < sizeof containers / sizeof containers[0]; i++)
        if (strcmp(tag, containers[i]) == 0)
            return true;
    /* IM00..IM0F (room and object images) hold SMAP and ZPnn */
    return tag[0] == 'I' && tag[1] == 'M' && tag[2] >= '0' && tag[2] <= '9' && tag[3] >= '0' &&
           tag[3] <= '9';
}

/* Walks every block under r (the contents of parent) to MAX_DEPTH. */
static void verify_nesting(trowel_archive *a, trowel_input *in, trowel_reader *r,
                           const char *parent, unsigned depth)
{
    while (trowel_reader_remaining(r) > 0) {
        block b;
        if (read_block(r, parent, &b) != TROWEL_OK) {
            trowel_archive_report(a);
            return;
        }
        trowel_reader inner;
        if (is_container(b.tag) && depth < MAX_DEPTH &&
            block_contents(a->ctx, in, &b, &inner) == TROWEL_OK)
            verify_nesting(a, in, &inner, b.tag, depth + 1);
    }
}

/* The entry of the data file at off, or SIZE_MAX. */
static size_t data_entry_at(const trowel_archive *a, uint64_t off)
{
    const res_state *st = a->priv;
    for (size_t i = 0; i < a->entry_count; i++)
        if (st->meta[i].file == FILE_DATA && a->entries[i].offset == off)
            return i;
    return SIZE_MAX;
}

static void verify_index(trowel_archive *a)
{
    res_state *st = a->priv;
    trowel_ctx *ctx = a->ctx;
    for (int k = 0; k < ROOM_SLOTS; k++) {
        size_t e = st->room_offset[k] ? data_entry_at(a, st->room_offset[k]) : SIZE_MAX;
        if (st->room_offset[k] && (e == SIZE_MAX || strcmp(st->meta[e].tag, "ROOM") != 0)) {
            trowel_fail(ctx, TROWEL_ERR_VERIFY, st->loff_at,
                        "LOFF puts room %d at 0x%llx, where no ROOM block starts", k,
                        (unsigned long long)st->room_offset[k]);
            trowel_archive_report(a);
        }
    }
    for (size_t d = 0; d < NUMBERED_DIRS; d++) {
        const res_dir *dir = &st->dirs[d];
        for (uint16_t i = 0; i < dir->count; i++) {
            int room = dir->rooms[i];
            if (room == 0 && dir->offsets[i] == 0)
                continue; /* an unused number */
            if (!st->room_offset[room]) {
                trowel_fail(ctx, TROWEL_ERR_VERIFY, dir->at,
                            "%s: resource %u is in room %d, which LOFF does not list",
                            numbered[d].dir, i, room);
                trowel_archive_report(a);
                continue;
            }
            uint64_t off = st->room_offset[room] + dir->offsets[i];
            size_t e = data_entry_at(a, off);
            const char *tag = e == SIZE_MAX ? NULL : st->meta[e].tag;
            bool right = tag && (strcmp(tag, numbered[d].tags[0]) == 0 ||
                                 (numbered[d].tags[1] && strcmp(tag, numbered[d].tags[1]) == 0));
            if (!right) {
                trowel_fail(ctx, TROWEL_ERR_VERIFY, dir->at,
                            "%s: resource %u points at 0x%llx in room %d, where %s%s starts, "
                            "not %s%s%s",
                            numbered[d].dir, i, (unsigned long long)off, room,
                            tag ? "block " : "no block", tag ? tag : "", numbered[d].tags[0],
                            numbered[d].tags[1] ? " or " : "",
                            numbered[d].tags[1] ? numbered[d].tags[1] : "");
                trowel_archive_report(a);
            }
        }
    }
}

static trowel_status res_verify(trowel_archive *a)
{
    res_state *st = a->priv;
    for (int f = 0; f < 2; f++) {
        if (!st->files[f])
            continue;
        trowel_reader r;
        trowel_reader_init(&r, a->ctx, st->files[f]);
        verify_nesting(a, st->files[f], &r, f == FILE_DATA ? "the data file" : "the index", 0);
    }
    if (st->has_index && st->has_data)
        verify_index(a);
    return TROWEL_OK;
}

/* ------------------------------------------------------------- palette */

/* The child of parent (contents in r) tagged tag, as a block. */
static bool find_child(trowel_reader r, const char *tag, block *out)
{
    while (trowel_reader_remaining(&r) > 0) {
        if (read_block(&r, "a block", out) != TROWEL_OK)
            return false;
        if (strcmp(out->tag, tag) == 0)
            return true;
    }
    return false;
}

trowel_status trowel_scumm_room_palette(trowel_archive *a, size_t index, uint8_t rgb[768])
{
    trowel_ctx *ctx = a->ctx;
    if (a->fmt != &trowel_format_scumm_res)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "a room palette comes from a scumm-res archive, not %s", a->fmt->id);
    res_state *st = a->priv;
    if (index >= a->entry_count || st->meta[index].file != FILE_DATA ||
        st->meta[index].room_block >= a->entry_count)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "entry %zu is not in a room",
                           index);
    const trowel_entry *re = &a->entries[st->meta[index].room_block];
    block room = {"ROOM", re->offset, re->size}, b;
    trowel_input *in = st->files[FILE_DATA];
    trowel_reader r;
    trowel_status s = block_contents(ctx, in, &room, &r);
    if (s != TROWEL_OK)
        return s;
    if (find_child(r, "CLUT", &b) && b.size >= 8 + 768) { /* v5 */
        if ((s = block_contents(ctx, in, &b, &r)) == TROWEL_OK)
            s = trowel_read_bytes(&r, rgb, 768);
        return s;
    }
    trowel_ctx_clear_error(ctx);
    block pals, wrap, offs;
    trowel_reader pr, wr, or;
    uint32_t first;
    if (!find_child(r, "PALS", &pals) || block_contents(ctx, in, &pals, &pr) != TROWEL_OK ||
        !find_child(pr, "WRAP", &wrap) || block_contents(ctx, in, &wrap, &wr) != TROWEL_OK ||
        !find_child(wr, "OFFS", &offs) || block_contents(ctx, in, &offs, &or) != TROWEL_OK ||
        trowel_read_u32le(&or, &first) != TROWEL_OK)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, room.off,
                           "room at 0x%llx has no palette (no CLUT, no PALS/WRAP/OFFS)",
                           (unsigned long long)room.off);
    /* OFFS's entries count from its data; the palette must lie in WRAP. */
    uint64_t at = offs.off + 8 + first, wrap_end = wrap.off + wrap.size;
    if (at < offs.off + 8 || at + 768 > wrap_end)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, offs.off,
                           "OFFS puts palette 0 at 0x%llx, outside its WRAP block",
                           (unsigned long long)at);
    trowel_reader whole, pal;
    trowel_reader_init(&whole, ctx, in);
    s = trowel_reader_sub(&whole, at, 768, &pal);
    if (s == TROWEL_OK)
        s = trowel_read_bytes(&pal, rgb, 768);
    return s;
}

/* ------------------------------------------------------------- convert */

static bool is_costume(const res_state *st, size_t i)
{
    return st->meta[i].file == FILE_DATA &&
           (strcmp(st->meta[i].tag, "COST") == 0 || strcmp(st->meta[i].tag, "AKOS") == 0);
}

/* Does costume entry i pass -O costume=N (number >= 0) / entry=NAME? */
static bool wanted(const trowel_archive *a, size_t i, long number, const char *name)
{
    const res_state *st = a->priv;
    return (!name || strcmp(a->entries[i].name, name) == 0) &&
           (number < 0 || st->meta[i].number == number);
}

/* The entry index of room's ROOM block, or SIZE_MAX. */
static size_t room_entry(const trowel_archive *a, int room)
{
    const res_state *st = a->priv;
    for (size_t i = 0; i < a->entry_count; i++)
        if (st->meta[i].room == room && st->meta[i].room_block == i)
            return i;
    return SIZE_MAX;
}

/* Room room's palette, quietly: false when it has none. */
static bool try_room_palette(trowel_archive *a, int room, uint8_t rgb[768])
{
    size_t e = room_entry(a, room);
    if (e == SIZE_MAX)
        return false;
    trowel_error saved = a->ctx->last_error;
    bool ok = trowel_scumm_room_palette(a, e, rgb) == TROWEL_OK;
    a->ctx->last_error = saved;
    return ok;
}

/* The room palette for costume c of entry i (see the format notes):
 * -O room=N, else its own room's when it shows the costume, else the
 * first room's that does (said once per room), else none (rgb NULL: the
 * stand-in). from says whose, for costume.json. */
static trowel_status pick_palette(trowel_archive *a, size_t i, const scumm_costume *c,
                                  long chosen, uint8_t rgb[768], bool *found, char *from,
                                  size_t cap)
{
    res_state *st = a->priv;
    int own = st->meta[i].room;
    *found = false;
    if (chosen >= 0) {
        if (!try_room_palette(a, (int)chosen, rgb))
            return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                               "room=%ld: no such room, or it has no palette", chosen);
        snprintf(from, cap, "room %ld (-O room=%ld)", chosen, chosen);
        *found = true;
        return TROWEL_OK;
    }
    bool has_own = own >= 0 && try_room_palette(a, own, rgb);
    if (has_own && scumm_palette_usable(c, rgb)) {
        snprintf(from, cap, "room %d (the costume's own)", own);
        *found = true;
        return TROWEL_OK;
    }
    for (int k = 0; k < ROOM_SLOTS; k++) {
        if (k == own || !st->room_offset[k] || !try_room_palette(a, k, rgb) ||
            !scumm_palette_usable(c, rgb))
            continue;
        if (own < 0)
            snprintf(from, cap, "room %d (its own room has no number in LOFF)", k);
        else
            snprintf(from, cap, "room %d (room %d's palette %s)", k, own,
                     has_own ? "draws it in one colour" : "is missing");
        if (own >= 0 && own < ROOM_SLOTS && !st->palette_said[own]) {
            st->palette_said[own] = true;
            trowel_warn(a->ctx, TROWEL_NO_OFFSET,
                        "room %d's palette %s; its costumes use room %d's (-O room=N or -O "
                        "palette=FILE picks another)",
                        own, has_own ? "draws them in one colour" : "is missing", k);
        }
        *found = true;
        return TROWEL_OK;
    }
    return TROWEL_OK; /* no room shows it: the converter's stand-in, warned there */
}

/* Reads costume entry i and writes it into its folder (the entry name
 * without its extension: room06/cost002/...) with a room palette. */
static trowel_status convert_one(trowel_archive *a, size_t i, long room, const char *target,
                                 const char *const *opts, size_t nopts, trowel_outdir *dir)
{
    trowel_ctx *ctx = a->ctx;
    trowel_sink *sink;
    trowel_status s = trowel_sink_open_memory(ctx, &sink);
    if (s != TROWEL_OK)
        return s;
    scumm_costume c;
    if ((s = res_read_entry(a, i, sink)) == TROWEL_OK) {
        size_t n;
        const uint8_t *data = trowel_sink_data(sink, &n);
        bool akos = n >= 4 && memcmp(data, "AKOS", 4) == 0; /* else a COST block */
        s = akos ? scumm_akos_decode(ctx, data, n, &c) : scumm_cost_decode(ctx, data, n, &c);
    }
    trowel_sink_discard(sink);
    if (s != TROWEL_OK)
        return s;
    char folder[256], from[160] = "";
    snprintf(folder, sizeof folder, "%s", a->entries[i].name);
    char *dot = strrchr(folder, '.');
    if (dot)
        *dot = '\0';
    c.folder = folder;
    uint8_t rgb[768];
    bool found = false;
    if (!trowel_options_get(opts, nopts, "palette"))
        s = pick_palette(a, i, &c, room, rgb, &found, from, sizeof from);
    if (s == TROWEL_OK)
        s = scumm_costume_convert(&c, found ? rgb : NULL, from, target, opts, nopts, dir);
    scumm_costume_free(&c);
    return s;
}

#define SHOWN_FAILURES 5 /* costumes named as warnings; the rest as notes (-v) */
#define STR_(x) #x
#define STR(x) STR_(x)

/* A costume that cannot be converted because of its own bytes: the game's
 * other costumes still can. */
static bool costume_damage(trowel_status s)
{
    return s == TROWEL_ERR_CORRUPT || s == TROWEL_ERR_TRUNCATED || s == TROWEL_ERR_UNSUPPORTED ||
           s == TROWEL_ERR_LIMIT;
}

/* Names costume i and why it failed (the error the context holds): the
 * first SHOWN_FAILURES as warnings, the rest as notes, shown with -v. The
 * decoders count offsets from the costume block; this gives them in the
 * data file. */
static void report_bad_costume(trowel_archive *a, size_t i, size_t nth)
{
    const res_state *st = a->priv;
    trowel_error e = a->ctx->last_error;
    trowel_ctx_clear_error(a->ctx);
    uint64_t at = e.offset == TROWEL_NO_OFFSET ? e.offset : a->entries[i].offset + e.offset;
    if (nth <= SHOWN_FAILURES && st->opened_data)
        trowel_warn(a->ctx, at, "%s", e.message);
    else if (nth <= SHOWN_FAILURES && at == TROWEL_NO_OFFSET)
        trowel_warn(a->ctx, TROWEL_NO_OFFSET, "%s", e.message);
    else if (nth <= SHOWN_FAILURES)
        trowel_warn(a->ctx, TROWEL_NO_OFFSET, "%s (offset 0x%llx of the data file)", e.message,
                    (unsigned long long)at);
    else if (at == TROWEL_NO_OFFSET)
        trowel_note(a->ctx, "%s", e.message);
    else
        trowel_note(a->ctx, "%s (offset 0x%llx of the data file)", e.message,
                    (unsigned long long)at);
}

static const trowel_option_info res_options[] = {
    {"costume", "N", "convert only costume N (its number in the index, as in cost002)", "png gif",
     .type = TROWEL_OPTION_UINT, .min = 0, .max = UINT16_MAX},
    {"entry", "NAME", "convert only the costume entry NAME (e.g. room06/cost002.cost)", "png gif",
     .type = TROWEL_OPTION_STRING},
    {"room", "N", "colours from room N's palette (default: the costume's room, or else the "
                  "first room whose palette shows it)", "png gif",
     .type = TROWEL_OPTION_UINT, .min = 0, .max = ROOM_SLOTS - 1},
    SCUMM_COSTUME_OPTIONS,
    {0}};

static trowel_status res_convert_folder(trowel_archive *a, const char *target,
                                        const char *const *opts, size_t nopts, trowel_outdir *dir)
{
    const res_state *st = a->priv;
    /* core has checked costume= and room= against the rows: numbers in range */
    trowel_option_values o = trowel_option_values_of(res_options, target, opts, nopts);
    const char *name = trowel_option_str(&o, "entry");
    long number = trowel_option_given(&o, "costume") ? (long)trowel_option_uint(&o, "costume") : -1;
    long room = trowel_option_given(&o, "room") ? (long)trowel_option_uint(&o, "room") : -1;
    if (room >= 0 && trowel_option_given(&o, "palette"))
        return trowel_fail(a->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "room=%ld and palette=FILE both choose the palette: give one", room);
    size_t tried = 0, failed = 0;
    for (size_t i = 0; i < a->entry_count; i++) {
        if (!is_costume(st, i) || !wanted(a, i, number, name))
            continue;
        tried++;
        trowel_set_entry(a->ctx, a->entries[i].name); /* errors name the costume */
        trowel_status s = convert_one(a, i, room, target, opts, nopts, dir);
        if (s != TROWEL_OK && !costume_damage(s)) {
            trowel_set_entry(a->ctx, NULL);
            return s; /* the output, memory or an option: no use going on */
        }
        if (s != TROWEL_OK)
            report_bad_costume(a, i, ++failed);
        trowel_set_entry(a->ctx, NULL);
    }
    if (failed > 0)
        return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "%zu of %zu costumes could not be converted (%s); the other %zu were "
                           "written",
                           failed, tried,
                           failed > SHOWN_FAILURES ? "the first " STR(SHOWN_FAILURES)
                                                     " are above; -v lists all"
                                                   : "see above",
                           tried - failed);
    if (tried > 0)
        return TROWEL_OK;
    if (number >= 0)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "no costume number %ld in this game (see trowel list)", number);
    if (name)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "no costume named %s in this game (see trowel list)", name);
    return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                       "no costumes (COST or AKOS blocks) in this game%s",
                       st->has_data ? "" : ": its data file was not found");
}


/* ---------------------------------------------------------------- table */

const trowel_format trowel_format_scumm_res = {
    .id = "scumm-res",
    .family = "scumm",
    .description = "SCUMM v5/v6/v7 resource files: index (.000, .LA0) and data (.001, .LA1)",
    .extensions = ".000 .001 .la0 .la1",
    .caps = TROWEL_CAP_LIST,
    .create_options = "",
    .convert_targets = "png gif",
    .options = res_options,
    .folder_targets = "png gif",
    .convert_folder = res_convert_folder,
    .bid = res_bid,
    .open = res_open,
    .read_entry = res_read_entry,
    .verify = res_verify,
    .close = res_close,
};
