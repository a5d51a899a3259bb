/*
 * Volition packfiles (VPP), version 3: The Punisher, Saints Row 1, Red
 * Faction Guerrilla (.vpp_pc, .str2_pc). Read only, for now.
 *
 * A 2048-byte header block (descriptor 0x51890ACE, version, short name,
 * path, flags, counts and section sizes), the directory at 0x800 (28-byte
 * entries: name offset, sector, start, name hash, size, compressed size,
 * parent), the NUL-terminated names, each section padded to 2048, then the
 * data in one of four modes (flags bit 0 compressed, bit 1 condensed):
 *   raw:        [file + pad to 2048] x N
 *   compressed: [zlib(file) + pad to 2048] x N
 *   condensed:  [file + pad to the alignment] x N
 *   both:       zlib([file + pad to the alignment] x N) as ONE stream,
 *               sync-flushed after each file and never finished; each
 *               entry's compressed size is the stream's growth across it.
 * No padding follows the last file. The alignment of condensed data is not
 * stored: it is the one (1, 16, 64 or 2048) for which the sizes add up to
 * the header's data size. Positions are recomputed from sizes and
 * alignment; the stored `start` is never trusted (writers disagree on it
 * and it wraps past 4 GiB). The name hash is Volition's: rotate left by 6,
 * XOR the next byte of the name with only A-Z lower-cased.
 *
 * The solid stream of the last mode is read with one forward cursor
 * (codec/stream.h) kept in the archive's state, so reading every entry in
 * order, as list/verify/extract do, is one pass over the stream.
 *
 * Facts: ../shared/formats/volition-vpp-asm.md (with its corrections) and
 * the developer's structs in ../shared/seeds/volition-vpp-asm.txt, checked
 * on the Red Faction Guerrilla files of the shared corpus.
 */
#include "codec/zlib.h"
#include "core/module.h"

#include <string.h>

#define VPP_MAGIC 0x51890ACEu
#define VPP_MAGIC_BE 0xCE0A8951u        /* console files, read little-endian */
#define VPP_MAGIC_SWITCH_DAMAGED 0x890A0DCEu /* CE 0D 0A 89: LF turned CRLF */
#define SECTOR 2048u
#define V3_ENTRY_SIZE 28u
#define FLAG_COMPRESSED 1u
#define FLAG_CONDENSED 2u
#define NAME_MAX_LEN 255u

typedef struct vpp_header {
    uint32_t version, flags, num_files, file_size, dir_size, names_size;
    uint32_t data_size, compressed_size;
    char short_name[66];
    char path[257];
} vpp_header;

typedef struct vpp_entry {
    uint64_t pos;      /* raw/compressed/condensed: absolute offset; both:
                        * offset in the decoded stream */
    uint64_t packed;   /* bytes as stored (compressed: csize) */
    uint32_t hash;     /* stored name hash */
} vpp_entry;

typedef struct vpp_state {
    vpp_header h;
    uint64_t data_start;
    unsigned alignment; /* condensed modes */
    vpp_entry *ent;
    trowel_codec_stream *solid; /* both: the cursor, opened on first read */
} vpp_state;

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return a <= 1 ? v : (v + a - 1) / a * a;
}

static uint32_t name_hash(const char *name)
{
    uint32_t h = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        unsigned c = *p >= 'A' && *p <= 'Z' ? *p + 32u : *p;
        h = ((h << 6) | (h >> 26)) ^ c;
    }
    return h;
}

static const char *mode_name(uint32_t flags)
{
    switch (flags & (FLAG_COMPRESSED | FLAG_CONDENSED)) {
    case FLAG_COMPRESSED: return "compressed";
    case FLAG_CONDENSED: return "condensed";
    case FLAG_COMPRESSED | FLAG_CONDENSED: return "compressed+condensed";
    default: return "raw";
    }
}

/* ---------------------------------------------------------------- header */

static int vpp_bid(trowel_reader *r)
{
    uint32_t magic, version;
    if (trowel_read_u32le(r, &magic) != TROWEL_OK)
        return TROWEL_BID_NONE;
    if (magic == VPP_MAGIC_BE || magic == VPP_MAGIC_SWITCH_DAMAGED)
        return TROWEL_BID_MAGIC; /* open says why it cannot read them */
    if (magic != VPP_MAGIC || trowel_read_u32le(r, &version) != TROWEL_OK)
        return TROWEL_BID_NONE;
    return version == 3 && trowel_reader_size(r) >= SECTOR ? TROWEL_BID_STRONG : TROWEL_BID_MAGIC;
}

/* Refuses what is a packfile but not one this reader knows, each with its
 * own message. */
static trowel_status check_kind(trowel_ctx *ctx, uint32_t magic, uint32_t version)
{
    if (magic == VPP_MAGIC_BE)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, 0,
                           "big-endian (console) packfiles are not supported yet");
    if (magic == VPP_MAGIC_SWITCH_DAMAGED)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, 0,
                           "the packfile magic is damaged (CE 0D 0A 89: a line-ending "
                           "conversion turned 0A into 0D 0A)");
    if (version == 2)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, 4,
                           "packfile version 2 (Summoner 2) has no known layout");
    if (version != 3)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, 4,
                           "packfile version %lu is not supported yet (only 3)",
                           (unsigned long)version);
    return TROWEL_OK;
}

static trowel_status read_header(trowel_ctx *ctx, trowel_reader *r, vpp_header *h)
{
    uint32_t magic;
    trowel_status s = trowel_read_u32le(r, &magic);
    if (s == TROWEL_OK)
        s = trowel_read_u32le(r, &h->version);
    if (s == TROWEL_OK)
        s = check_kind(ctx, magic, h->version);
    if (s == TROWEL_OK)
        s = trowel_read_fixed_string(r, 65, h->short_name, sizeof h->short_name);
    if (s == TROWEL_OK)
        s = trowel_read_fixed_string(r, 256, h->path, sizeof h->path);
    uint32_t sector;
    if (s == TROWEL_OK && (s = trowel_reader_seek(r, 0x14C)) == TROWEL_OK &&
        (s = trowel_read_u32le(r, &h->flags)) == TROWEL_OK &&
        (s = trowel_read_u32le(r, &sector)) == TROWEL_OK &&
        (s = trowel_read_u32le(r, &h->num_files)) == TROWEL_OK &&
        (s = trowel_read_u32le(r, &h->file_size)) == TROWEL_OK &&
        (s = trowel_read_u32le(r, &h->dir_size)) == TROWEL_OK &&
        (s = trowel_read_u32le(r, &h->names_size)) == TROWEL_OK &&
        (s = trowel_read_u32le(r, &h->data_size)) == TROWEL_OK)
        s = trowel_read_u32le(r, &h->compressed_size);
    return s;
}

/* ------------------------------------------------------------ directory */

/* The name at off in the names section (names_size bytes at r's cursor
 * window), NUL-terminated within it. */
static trowel_status read_name(trowel_ctx *ctx, const trowel_reader *names, uint32_t off,
                               size_t index, char *out, size_t cap)
{
    trowel_reader r = *names;
    if (off >= trowel_reader_size(&r))
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, trowel_reader_abs(&r),
                           "entry %zu's name offset %lu is past the %llu-byte name table", index,
                           (unsigned long)off, (unsigned long long)trowel_reader_size(&r));
    trowel_status s = trowel_reader_seek(&r, off);
    if (s == TROWEL_OK)
        s = trowel_read_cstring(&r, out, cap);
    if (s != TROWEL_OK)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, names->base + off,
                           "entry %zu's name has no NUL within the name table (or passes %zu "
                           "bytes)",
                           index, cap - 1);
    if (!out[0])
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, names->base + off, "entry %zu has an empty name",
                           index);
    return TROWEL_OK;
}

/* The alignment for which the condensed sizes add up to data_size. */
static trowel_status find_alignment(trowel_archive *a, const uint32_t *sizes, vpp_state *st)
{
    static const unsigned candidates[] = {16, 64, 1, SECTOR};
    for (size_t c = 0; c < sizeof candidates / sizeof candidates[0]; c++) {
        uint64_t total = 0;
        for (size_t i = 0; i < st->h.num_files; i++)
            total += i + 1 < st->h.num_files ? align_up(sizes[i], candidates[c]) : sizes[i];
        if (total == st->h.data_size) {
            st->alignment = candidates[c];
            return TROWEL_OK;
        }
    }
    return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, 0x164,
                       "the entry sizes add up to the data size %lu under no alignment "
                       "(1, 16, 64, 2048)",
                       (unsigned long)st->h.data_size);
}

/* Where each entry's bytes are, from sizes and the mode. */
static void place_entries(vpp_state *st, const uint32_t *sizes, const uint32_t *csizes)
{
    uint64_t at = 0;
    for (size_t i = 0; i < st->h.num_files; i++) {
        vpp_entry *e = &st->ent[i];
        switch (st->h.flags & (FLAG_COMPRESSED | FLAG_CONDENSED)) {
        case 0:
            e->pos = st->data_start + at;
            e->packed = sizes[i];
            at = align_up(at + sizes[i], SECTOR);
            break;
        case FLAG_COMPRESSED:
            e->pos = st->data_start + at;
            e->packed = csizes[i];
            at = align_up(at + csizes[i], SECTOR);
            break;
        case FLAG_CONDENSED:
            e->pos = st->data_start + at;
            e->packed = sizes[i];
            at = align_up(at + sizes[i], st->alignment);
            break;
        default: /* both: offsets in the decoded stream */
            e->pos = at;
            e->packed = csizes[i];
            at = align_up(at + sizes[i], st->alignment);
            break;
        }
    }
}

static trowel_status add_info(trowel_archive *a, const vpp_state *st)
{
    const vpp_header *h = &st->h;
    trowel_props *info = a->info;
    trowel_status s;
    if ((s = trowel_props_add_str(info, "format", "vpp")) ||
        (s = trowel_props_add_uint(info, "version", h->version)) ||
        (s = trowel_props_add_str(info, "mode", mode_name(h->flags))) ||
        (s = trowel_props_add_hex(info, "flags", h->flags)) ||
        (s = trowel_props_add_str(info, "short_name", h->short_name)) ||
        (s = trowel_props_add_str(info, "path", h->path)) ||
        (s = trowel_props_add_uint(info, "files", h->num_files)) ||
        (s = trowel_props_add_uint(info, "file_size", h->file_size)) ||
        (s = trowel_props_add_uint(info, "data_start", st->data_start)) ||
        (s = trowel_props_add_uint(info, "data_size", h->data_size)))
        return s;
    if (h->flags & FLAG_COMPRESSED)
        s = trowel_props_add_uint(info, "compressed_size", h->compressed_size);
    if (s == TROWEL_OK && (h->flags & FLAG_CONDENSED))
        s = trowel_props_add_uint(info, "alignment", st->alignment);
    return s;
}

static trowel_status add_entries(trowel_archive *a, const trowel_reader *names, const uint32_t *sizes,
                                 vpp_state *st)
{
    static const char *const methods[] = {"stored", "zlib", "stored", "zlib-solid"};
    const char *method = methods[st->h.flags & 3];
    uint64_t solid_at = st->data_start;
    trowel_reader dir;
    trowel_reader_init(&dir, a->ctx, a->in);
    for (size_t i = 0; i < st->h.num_files; i++) {
        uint32_t name_off;
        trowel_status s = trowel_reader_seek(&dir, SECTOR + V3_ENTRY_SIZE * (uint64_t)i);
        if (s == TROWEL_OK)
            s = trowel_read_u32le(&dir, &name_off);
        char name[NAME_MAX_LEN + 1];
        if (s == TROWEL_OK)
            s = read_name(a->ctx, names, name_off, i, name, sizeof name);
        if (s != TROWEL_OK)
            return s;
        const vpp_entry *v = &st->ent[i];
        bool solid = (st->h.flags & 3) == 3;
        trowel_entry e = {.name = name, .size = sizes[i], .packed_size = v->packed,
                          .offset = solid ? solid_at : v->pos, .method = method, .index = i};
        solid_at += v->packed;
        trowel_props *extra = trowel_archive_add_entry(a, &e);
        if (!extra)
            return a->ctx->last_error.status;
        if ((s = trowel_props_add_hex(extra, "hash", v->hash)) != TROWEL_OK)
            return s;
    }
    return TROWEL_OK;
}

/* Reads the directory's sizes and hashes into st (and sizes/csizes). */
static trowel_status read_directory(trowel_archive *a, uint32_t *sizes, uint32_t *csizes,
                                    vpp_state *st)
{
    trowel_reader dir;
    trowel_reader_init(&dir, a->ctx, a->in);
    for (size_t i = 0; i < st->h.num_files; i++) {
        uint32_t f[7];
        trowel_status s = trowel_reader_seek(&dir, SECTOR + V3_ENTRY_SIZE * (uint64_t)i);
        for (int k = 0; k < 7 && s == TROWEL_OK; k++)
            s = trowel_read_u32le(&dir, &f[k]);
        if (s != TROWEL_OK)
            return s;
        st->ent[i].hash = f[3];
        sizes[i] = f[4];
        csizes[i] = f[5];
    }
    return TROWEL_OK;
}

static trowel_status vpp_open(trowel_archive *a, trowel_reader *r)
{
    trowel_ctx *ctx = a->ctx;
    vpp_state *st = trowel_mem_calloc(ctx, 1, sizeof *st);
    if (!st)
        return ctx->last_error.status;
    a->priv = st;
    trowel_status s = read_header(ctx, r, &st->h);
    if (s != TROWEL_OK)
        return s;
    const vpp_header *h = &st->h;
    uint64_t dir_bytes = (uint64_t)h->num_files * V3_ENTRY_SIZE;
    if (dir_bytes > h->dir_size)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, 0x154,
                           "%lu files need %llu directory bytes, the header gives %lu",
                           (unsigned long)h->num_files, (unsigned long long)dir_bytes,
                           (unsigned long)h->dir_size);
    uint64_t names_start = SECTOR + align_up(h->dir_size, SECTOR);
    st->data_start = names_start + align_up(h->names_size, SECTOR);
    /* The directory and names must be present before anything is made of
     * their counts. */
    trowel_reader names, dir;
    if ((s = trowel_reader_sub(r, SECTOR, dir_bytes, &dir)) != TROWEL_OK ||
        (s = trowel_reader_sub(r, names_start, h->names_size, &names)) != TROWEL_OK)
        return s;
    size_t n = h->num_files;
    uint32_t *sizes = trowel_mem_calloc(ctx, n ? n : 1, 2 * sizeof *sizes);
    st->ent = trowel_mem_calloc(ctx, n ? n : 1, sizeof *st->ent);
    if (!sizes || !st->ent) {
        trowel_mem_free(ctx, sizes);
        return ctx->last_error.status;
    }
    uint32_t *csizes = sizes + n;
    s = read_directory(a, sizes, csizes, st);
    if (s == TROWEL_OK && (h->flags & FLAG_CONDENSED) && n)
        s = find_alignment(a, sizes, st);
    if (s == TROWEL_OK) {
        place_entries(st, sizes, csizes);
        s = add_info(a, st);
    }
    if (s == TROWEL_OK)
        s = add_entries(a, &names, sizes, st);
    trowel_mem_free(ctx, sizes);
    return s;
}

/* --------------------------------------------------------------- reading */

static trowel_status copy_span(trowel_reader *src, trowel_sink *out)
{
    for (;;) {
        const uint8_t *p;
        size_t got;
        trowel_status s = trowel_reader_borrow(src, (size_t)1 << 16, &p, &got);
        if (s != TROWEL_OK || got == 0)
            return s;
        if ((s = trowel_sink_write(out, p, got)) != TROWEL_OK)
            return s;
    }
}

static trowel_status open_solid(trowel_archive *a, vpp_state *st)
{
    trowel_reader whole, stream;
    trowel_reader_init(&whole, a->ctx, a->in);
    /* A stream cut short still gives the entries before the cut; the one
     * it cuts fails with the offset where the file ends. */
    uint64_t len = st->h.compressed_size, size = trowel_reader_size(&whole);
    if (st->data_start < size && len > size - st->data_start)
        len = size - st->data_start;
    trowel_status s = trowel_reader_sub(&whole, st->data_start, len, &stream);
    if (s != TROWEL_OK)
        return s;
    return trowel_codec_stream_open(a->ctx, &trowel_zlib_stream, NULL, &stream, &st->solid);
}

static trowel_status vpp_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    vpp_state *st = a->priv;
    const vpp_entry *v = &st->ent[index];
    uint64_t size = a->entries[index].size;
    trowel_reader whole, span;
    trowel_reader_init(&whole, a->ctx, a->in);
    trowel_status s;
    switch (st->h.flags & 3) {
    case FLAG_COMPRESSED:
        if ((s = trowel_reader_sub(&whole, v->pos, v->packed, &span)) != TROWEL_OK)
            return s;
        return trowel_codec_decode_reader(a->ctx, &trowel_zlib_stream, NULL, &span, size, out);
    case FLAG_COMPRESSED | FLAG_CONDENSED:
        if (!st->solid && (s = open_solid(a, st)) != TROWEL_OK)
            return s;
        if ((s = trowel_codec_stream_seek(st->solid, v->pos)) != TROWEL_OK)
            return s;
        return trowel_codec_stream_read(st->solid, size, out);
    default:
        if ((s = trowel_reader_sub(&whole, v->pos, size, &span)) != TROWEL_OK)
            return s;
        return copy_span(&span, out);
    }
}

/* ---------------------------------------------------------------- verify */

static trowel_status vpp_verify(trowel_archive *a)
{
    vpp_state *st = a->priv;
    trowel_ctx *ctx = a->ctx;
    for (size_t i = 0; i < a->entry_count; i++) {
        uint32_t want = name_hash(a->entries[i].name);
        if (want != st->ent[i].hash) {
            trowel_set_entry(ctx, a->entries[i].name);
            trowel_fail(ctx, TROWEL_ERR_VERIFY, SECTOR + V3_ENTRY_SIZE * (uint64_t)i + 12,
                        "name hash 0x%08lx does not match the name's 0x%08lx",
                        (unsigned long)st->ent[i].hash, (unsigned long)want);
            trowel_archive_report(a);
            trowel_set_entry(ctx, NULL);
        }
    }
    uint64_t real = trowel_input_size(a->in);
    if (st->h.file_size != 0xFFFFFFFFu && st->h.file_size != real) {
        trowel_fail(ctx, TROWEL_ERR_VERIFY, 0x158, "the header gives a file size of %lu, the file has %llu bytes",
                    (unsigned long)st->h.file_size, (unsigned long long)real);
        trowel_archive_report(a);
    }
    if ((st->h.flags & 3) == 3 && a->entry_count) {
        /* Every entry has been read: the stream must hold nothing more. */
        trowel_status s = st->solid ? TROWEL_OK : open_solid(a, st);
        if (s == TROWEL_OK)
            s = trowel_codec_stream_seek(st->solid, st->h.data_size);
        if (s == TROWEL_OK)
            s = trowel_codec_stream_finish(st->solid);
        if (s != TROWEL_OK)
            trowel_archive_report(a);
    }
    return TROWEL_OK;
}

static void vpp_close(trowel_archive *a)
{
    vpp_state *st = a->priv;
    if (!st)
        return;
    trowel_codec_stream_close(st->solid);
    trowel_mem_free(a->ctx, st->ent);
    trowel_mem_free(a->ctx, st);
}

const trowel_format trowel_format_vpp = {
    .id = "vpp",
    .family = "volition",
    .description = "Volition packfile (VPP) v3: Red Faction Guerrilla, Saints Row 1, The Punisher; "
                   "raw, compressed, condensed, compressed+condensed",
    .extensions = ".vpp .vpp_pc .str2_pc",
    .caps = TROWEL_CAP_LIST | TROWEL_CAP_VERIFY,
    .create_options = "",
    .convert_targets = "",
    .bid = vpp_bid,
    .open = vpp_open,
    .read_entry = vpp_read_entry,
    .verify = vpp_verify,
    .close = vpp_close,
};
