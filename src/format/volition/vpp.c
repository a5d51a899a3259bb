/*
 * Volition packfiles (VPP), versions 1, 3, 4, 6, 10 and 17: Red Faction,
 * The Punisher, Saints Row 1 to 4, Red Faction Guerrilla and Armageddon,
 * Gat out of Hell, Agents of Mayhem, Saints Row (2022); little-endian PC
 * files and big-endian console ones.
 *
 * v1: a 2048-byte header {descriptor, version, files, size}, 64-byte
 * entries {char name[60], u32 size} padded to 2048, each file padded to
 * 2048. v3/v4/v6: a 2048-byte header (short name, path, flags, counts and
 * section sizes), the directory at 0x800 (v3 28-byte entries with a name
 * hash, v4 28 bytes with name and extension in two tables, v6 24 bytes),
 * then the names (and v4's extensions), each section padded to 2048, then
 * the data in one of four modes (flags bit 0 compressed, bit 1 condensed):
 *   raw:        [file + pad to 2048] x N
 *   compressed: [zlib(file) + pad to 2048] x N  (SR2 PS3: chunked deflate)
 *   condensed:  [file + pad to the alignment] x N
 *   both:       zlib([file + pad to the alignment] x N) as ONE stream,
 *               sync-flushed after each file, finished or not.
 * v10: a 0x28-byte header with a CRC of itself, 24-byte entries with their
 * own compression flag and alignment, names, data right after them. v17:
 * the same idea in 64 bits (0x78-byte header, 48-byte entries, a directory
 * table beside the names, an explicit data offset), files as LZ4 frames.
 *
 * Positions are recomputed from sizes and alignment (each file starts at
 * the next multiple of its alignment after the previous one); the stored
 * `start` is never trusted (writers disagree on it and it wraps past
 * 4 GiB), only compared by verify. The alignment of v3/v4/v6 condensed data
 * is not stored: it is the one (1, 16, 64, 2048) for which the sizes add up
 * to the header's data size. The solid stream of the "both" mode is read
 * with one forward cursor (core/stream.h) kept in the archive's state, so
 * reading every entry in order, as list/extract do, is one pass (verify
 * decodes it with its own decoder, once, to check the compressed sizes).
 *
 * Facts: ../shared/formats/volition-vpp-asm.md (with its corrections) and
 * the developer's structs in ../shared/seeds/volition-vpp-asm.txt, checked
 * on the files of the shared corpus. This file reads the header and the
 * directory, reads entries and writes the manifest; the rest is by job:
 * create's options and entry point: vpp_create.c; where an open
 * packfile's bytes are read
 * from (entry streams, the solid stream, small reads): vpp_data.c;
 * verify: vpp_verify.c; padding kept by manifests: vpp_pad.c; rebuilding
 * from a base (-O base=, delete=): vpp_base.c; writing: vpp_write.c; the
 * name hash and header checksum: vpp_hash.c.
 */
#include "vpp.h"
#include "vpp_priv.h"

#include "codec/lz4_frame.h"
#include "codec/zlib.h"
#include "core/sink.h"
#include "core/source.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VPP_MAGIC_BE 0xCE0A8951u             /* console files, read little-endian */
#define VPP_MAGIC_SWITCH_DAMAGED 0x890A0DCEu /* CE 0D 0A 89: LF turned CRLF */
#define NAME_MAX_LEN 255u

static const char *const method_names[] = {"stored", "zlib", "zlib-solid", "lz4", "zlib"};

/* One directory entry as stored. */
typedef struct vpp_raw_entry {
    uint64_t name_off, ext_off; /* ext_off: v4 extension, v17 directory */
    uint64_t start, size, csize;
    uint32_t hash;
    uint16_t flags, align;
} vpp_raw_entry;

extern const trowel_format trowel_format_vpp;

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return vpp_align_up(v, a);
}

static bool solid_mode(const vpp_header *h)
{
    return vpp_solid_mode(h);
}

static const char *mode_name(uint32_t flags)
{
    switch (flags & (VPP_FLAG_COMPRESSED | VPP_FLAG_CONDENSED)) {
    case VPP_FLAG_COMPRESSED: return "compressed";
    case VPP_FLAG_CONDENSED: return "condensed";
    case VPP_FLAG_COMPRESSED | VPP_FLAG_CONDENSED: return "compressed+condensed";
    default: return "raw";
    }
}

static trowel_status rd16(trowel_reader *r, bool be, uint16_t *v)
{
    return be ? trowel_read_u16be(r, v) : trowel_read_u16le(r, v);
}

static trowel_status rd32(trowel_reader *r, bool be, uint32_t *v)
{
    return be ? trowel_read_u32be(r, v) : trowel_read_u32le(r, v);
}

static trowel_status rd32to64(trowel_reader *r, bool be, uint64_t *v)
{
    uint32_t x = 0;
    trowel_status s = rd32(r, be, &x);
    *v = x;
    return s;
}

static bool known_version(uint32_t v)
{
    return v == 1 || v == 3 || v == 4 || v == 6 || v == 10 || v == 17;
}

static trowel_status rd64(trowel_reader *r, bool be, uint64_t *v)
{
    uint32_t a = 0, b = 0;
    trowel_status s = rd32(r, be, &a);
    if (s == TROWEL_OK)
        s = rd32(r, be, &b);
    *v = be ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
    return s;
}

/* ---------------------------------------------------------------- header */

static int vpp_bid(trowel_reader *r)
{
    uint32_t magic, version;
    if (trowel_read_u32le(r, &magic) != TROWEL_OK)
        return TROWEL_BID_NONE;
    if (magic == VPP_MAGIC_SWITCH_DAMAGED)
        return TROWEL_BID_MAGIC; /* open says why it cannot read it */
    if ((magic != VPP_MAGIC && magic != VPP_MAGIC_BE) ||
        rd32(r, magic == VPP_MAGIC_BE, &version) != TROWEL_OK)
        return TROWEL_BID_NONE;
    return known_version(version) ? TROWEL_BID_STRONG : TROWEL_BID_MAGIC;
}

/* Refuses what is a packfile but not one this reader knows, each with its
 * own message. */
static trowel_status check_kind(trowel_ctx *ctx, uint32_t magic, uint32_t version)
{
    if (magic == VPP_MAGIC_SWITCH_DAMAGED)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, 0,
                           "the packfile magic is damaged (CE 0D 0A 89: a line-ending "
                           "conversion turned 0A into 0D 0A)");
    if (magic != VPP_MAGIC && magic != VPP_MAGIC_BE)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, 0, "not a Volition packfile (no 0x51890ACE)");
    if (version == 2)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, 4,
                           "packfile version 2 (Summoner 2) has no known layout");
    if (!known_version(version))
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, 4,
                           "packfile version %lu is unknown (trowel reads 1, 3, 4, 6, 10 and 17)",
                           (unsigned long)version);
    return TROWEL_OK;
}

static trowel_status read_header_v1(trowel_reader *r, vpp_header *h)
{
    uint32_t size = 0;
    trowel_status s = rd32(r, h->be, &h->num_files);
    if (s == TROWEL_OK)
        s = rd32(r, h->be, &size);
    h->file_size = size;
    h->entry_size = 64;
    h->dir_size = h->num_files * 64u; /* counts are checked against the file later */
    h->dir_start = VPP_SECTOR;
    h->names_start = h->dir_start;
    h->data_start = VPP_SECTOR + align_up((uint64_t)h->num_files * 64, VPP_SECTOR);
    return s;
}

/* v3, v4 and v6: the 2048-byte header block of the developer's struct. */
static trowel_status read_header_sector(trowel_reader *r, vpp_header *h)
{
    uint32_t sector = 0, file_size = 0, data_size = 0, csize = 0;
    trowel_status s = trowel_read_fixed_string(r, 65, h->short_name, sizeof h->short_name);
    if (s == TROWEL_OK)
        s = trowel_read_fixed_string(r, 256, h->path, sizeof h->path);
    if (s == TROWEL_OK && (s = trowel_reader_seek(r, 0x14C)) == TROWEL_OK &&
        (s = rd32(r, h->be, &h->flags)) == TROWEL_OK && (s = rd32(r, h->be, &sector)) == TROWEL_OK &&
        (s = rd32(r, h->be, &h->num_files)) == TROWEL_OK &&
        (s = rd32(r, h->be, &file_size)) == TROWEL_OK &&
        (s = rd32(r, h->be, &h->dir_size)) == TROWEL_OK &&
        (s = rd32(r, h->be, &h->names_size)) == TROWEL_OK &&
        (h->version != 4 || (s = rd32(r, h->be, &h->ext_size)) == TROWEL_OK) &&
        (s = rd32(r, h->be, &data_size)) == TROWEL_OK)
        s = rd32(r, h->be, &csize);
    h->file_size = file_size;
    h->data_size = data_size;
    h->compressed_size = csize;
    h->entry_size = h->version == 6 ? 24 : 28;
    h->dir_start = VPP_SECTOR;
    h->names_start = VPP_SECTOR + align_up(h->dir_size, VPP_SECTOR);
    h->ext_start = h->names_start + align_up(h->names_size, VPP_SECTOR);
    h->data_start = h->ext_start + align_up(h->ext_size, VPP_SECTOR);
    return s;
}

static trowel_status read_header_v10(trowel_reader *r, vpp_header *h)
{
    uint32_t file_size = 0, data_size = 0, csize = 0;
    trowel_status s;
    if ((s = rd32(r, h->be, &h->checksum)) == TROWEL_OK &&
        (s = rd32(r, h->be, &file_size)) == TROWEL_OK && (s = rd32(r, h->be, &h->flags)) == TROWEL_OK &&
        (s = rd32(r, h->be, &h->num_files)) == TROWEL_OK &&
        (s = rd32(r, h->be, &h->dir_size)) == TROWEL_OK &&
        (s = rd32(r, h->be, &h->names_size)) == TROWEL_OK &&
        (s = rd32(r, h->be, &data_size)) == TROWEL_OK)
        s = rd32(r, h->be, &csize);
    h->file_size = file_size;
    h->data_size = data_size;
    h->compressed_size = csize;
    h->entry_size = 24;
    h->dir_start = V10_HEADER;
    h->names_start = V10_HEADER + (uint64_t)h->dir_size;
    h->data_start = h->names_start + h->names_size;
    return s;
}

static trowel_status read_header_v17(trowel_reader *r, vpp_header *h)
{
    trowel_status s;
    if ((s = rd32(r, h->be, &h->checksum)) == TROWEL_OK && (s = rd32(r, h->be, &h->flags)) == TROWEL_OK &&
        (s = rd32(r, h->be, &h->num_files)) == TROWEL_OK &&
        (s = rd32(r, h->be, &h->num_paths)) == TROWEL_OK &&
        (s = rd32(r, h->be, &h->dir_size)) == TROWEL_OK &&
        (s = rd32(r, h->be, &h->names_size)) == TROWEL_OK &&
        (s = rd64(r, h->be, &h->file_size)) == TROWEL_OK &&
        (s = rd64(r, h->be, &h->data_size)) == TROWEL_OK &&
        (s = rd64(r, h->be, &h->compressed_size)) == TROWEL_OK &&
        (s = rd64(r, h->be, &h->timestamp)) == TROWEL_OK)
        s = rd64(r, h->be, &h->data_start);
    h->entry_size = 48;
    h->dir_start = V17_HEADER;
    h->names_start = V17_HEADER + (uint64_t)h->dir_size;
    return s;
}

static trowel_status read_header(trowel_ctx *ctx, trowel_reader *r, vpp_header *h)
{
    uint32_t magic;
    trowel_status s = trowel_read_u32le(r, &magic);
    h->be = magic == VPP_MAGIC_BE;
    if (s == TROWEL_OK)
        s = rd32(r, h->be, &h->version);
    if (s == TROWEL_OK)
        s = check_kind(ctx, magic, h->version);
    if (s != TROWEL_OK)
        return s;
    switch (h->version) {
    case 1: return read_header_v1(r, h);
    case 10: return read_header_v10(r, h);
    case 17: return read_header_v17(r, h);
    default: return read_header_sector(r, h);
    }
}

/* ------------------------------------------------------------ directory */

static trowel_status read_raw_entry(trowel_reader *d, const vpp_header *h, vpp_raw_entry *e)
{
    bool be = h->be;
    uint32_t skip = 0, name = 0, ext = 0;
    trowel_status s = TROWEL_OK;
    memset(e, 0, sizeof *e);
    e->csize = UINT64_MAX;
    switch (h->version) {
    case 1: /* the name (60 bytes) is read from the directory when needed */
        if ((s = trowel_reader_skip(d, 60)) == TROWEL_OK)
            s = rd32to64(d, be, &e->size);
        return s;
    case 3: /* name, sector, start, hash, size, csize, parent */
        if ((s = rd32(d, be, &name)) || (s = rd32(d, be, &skip)) || (s = rd32to64(d, be, &e->start)) ||
            (s = rd32(d, be, &e->hash)) || (s = rd32to64(d, be, &e->size)))
            return s;
        e->name_off = name;
        return rd32to64(d, be, &e->csize);
    case 4: /* name, extension, runtime, start, size, csize, parent */
        if ((s = rd32(d, be, &name)) || (s = rd32(d, be, &ext)) || (s = rd32(d, be, &skip)) ||
            (s = rd32to64(d, be, &e->start)) || (s = rd32to64(d, be, &e->size)))
            return s;
        e->name_off = name;
        e->ext_off = ext;
        return rd32to64(d, be, &e->csize);
    case 6: /* name, sector, start, size, csize, parent */
        if ((s = rd32(d, be, &name)) || (s = rd32(d, be, &skip)) || (s = rd32to64(d, be, &e->start)) ||
            (s = rd32to64(d, be, &e->size)))
            return s;
        e->name_off = name;
        return rd32to64(d, be, &e->csize);
    case 10: /* u64 name, start, size, csize, u16 flags, u16 alignment */
        if ((s = rd64(d, be, &e->name_off)) || (s = rd32to64(d, be, &e->start)) ||
            (s = rd32to64(d, be, &e->size)) || (s = rd32to64(d, be, &e->csize)) ||
            (s = rd16(d, be, &e->flags)))
            return s;
        return rd16(d, be, &e->align);
    default: /* 17: u64 name, path, start, size, csize, u16 flags, u16 alignment, u32 */
        if ((s = rd64(d, be, &e->name_off)) || (s = rd64(d, be, &e->ext_off)) ||
            (s = rd64(d, be, &e->start)) || (s = rd64(d, be, &e->size)) ||
            (s = rd64(d, be, &e->csize)) || (s = rd16(d, be, &e->flags)))
            return s;
        return rd16(d, be, &e->align);
    }
}

/* The NUL-terminated string at off of a table (what names it in messages). */
static trowel_status read_table_string(trowel_ctx *ctx, const trowel_reader *table, uint64_t off,
                                       size_t index, const char *what, char *out, size_t cap)
{
    trowel_reader r = *table;
    if (off >= trowel_reader_size(&r))
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, trowel_reader_abs(&r),
                           "entry %zu's %s offset %llu is past the %llu-byte %s table", index,
                           what, (unsigned long long)off,
                           (unsigned long long)trowel_reader_size(&r), what);
    trowel_status s = trowel_reader_seek(&r, off);
    if (s == TROWEL_OK)
        s = trowel_read_cstring(&r, out, cap);
    if (s != TROWEL_OK)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, table->base + off,
                           "entry %zu's %s has no NUL within the %s table (or passes %zu bytes)",
                           index, what, what, cap - 1);
    return TROWEL_OK;
}

/* The entry's full name: v4 joins name and extension, v17 directory and
 * name (with '/', whatever the game's separator). */
static trowel_status entry_name(trowel_ctx *ctx, const vpp_header *h, const vpp_raw_entry *e,
                                const trowel_reader *names, const trowel_reader *exts,
                                size_t index, char *out, size_t cap)
{
    char first[NAME_MAX_LEN + 1], second[NAME_MAX_LEN + 1];
    trowel_status s = TROWEL_OK;
    /* Where the name is, for messages. */
    uint64_t at = names->base + (h->version == 1 ? 64 * (uint64_t)index : e->name_off);
    if (h->version == 1) { /* names: the directory; the name field of entry index */
        trowel_reader r = *names;
        if ((s = trowel_reader_seek(&r, 64 * (uint64_t)index)) == TROWEL_OK)
            s = trowel_read_fixed_string(&r, VPP_V1_NAME, first, sizeof first);
    } else
        s = read_table_string(ctx, names, e->name_off, index, "name", first, sizeof first);
    second[0] = 0;
    if (s == TROWEL_OK && h->version == 4)
        s = read_table_string(ctx, exts, e->ext_off, index, "extension", second, sizeof second);
    if (s == TROWEL_OK && h->version == 17)
        s = read_table_string(ctx, names, e->ext_off, index, "directory", second, sizeof second);
    if (s != TROWEL_OK)
        return s;
    int n;
    if (h->version == 4)
        n = snprintf(out, cap, second[0] ? "%s.%s" : "%s", first, second);
    else if (h->version == 17 && second[0]) {
        for (char *p = second; *p; p++)
            if (*p == '\\')
                *p = '/';
        size_t len = strlen(second);
        n = snprintf(out, cap, second[len - 1] == '/' ? "%s%s" : "%s/%s", second, first);
    } else
        n = snprintf(out, cap, "%s", first);
    if (!first[0])
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, at, "entry %zu has an empty name", index);
    if (n < 0 || (size_t)n >= cap)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, at, "entry %zu's name passes %zu bytes", index,
                           cap - 1);
    return TROWEL_OK;
}

/* v3/v4/v6 condensed: the alignment for which the sizes add up to
 * data_size (modulo 2^32: the field wraps past 4 GiB). */
static trowel_status find_alignment(trowel_archive *a, const vpp_raw_entry *re, vpp_state *st)
{
    static const unsigned candidates[] = {16, 64, 1, VPP_SECTOR};
    for (size_t c = 0; c < sizeof candidates / sizeof candidates[0]; c++) {
        uint64_t total = 0;
        for (size_t i = 0; i < st->h.num_files; i++)
            total = (i + 1 < st->h.num_files ? align_up(total + re[i].size, candidates[c])
                                             : total + re[i].size);
        if ((uint32_t)total == (uint32_t)st->h.data_size) {
            st->alignment = candidates[c];
            return TROWEL_OK;
        }
    }
    return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, 0x164,
                       "the entry sizes add up to the data size %llu under no alignment "
                       "(1, 16, 64, 2048)",
                       (unsigned long long)st->h.data_size);
}

/* The method and alignment of entry e (v10/v17 keep them per entry). */
static void entry_method(const vpp_state *st, const vpp_raw_entry *e, uint8_t *method,
                         uint64_t *align)
{
    const vpp_header *h = &st->h;
    if (solid_mode(h)) {
        *method = M_SOLID;
        *align = h->version >= 10 ? e->align : st->alignment;
    } else if (h->version >= 10) {
        bool packed = (e->flags & 1) && e->csize != UINT64_MAX;
        *method = packed ? (h->version == 17 ? M_LZ4 : M_ZLIB) : M_STORED;
        *align = e->align;
    } else if (h->flags & VPP_FLAG_COMPRESSED) {
        *method = h->be ? M_CONSOLE : M_ZLIB;
        *align = VPP_SECTOR;
    } else {
        *method = M_STORED;
        *align = (h->flags & VPP_FLAG_CONDENSED) ? st->alignment : VPP_SECTOR;
    }
}

/* Where each entry's bytes are, from sizes, methods and alignment. */
static void place_entries(vpp_state *st, const vpp_raw_entry *re)
{
    uint64_t at = 0; /* data-relative (solid: decoded) offset of the next file */
    for (size_t i = 0; i < st->h.num_files; i++) {
        vpp_entry *e = &st->ent[i];
        uint64_t align;
        entry_method(st, &re[i], &e->method, &align);
        at = align_up(at, align);
        e->placed = at;
        e->start = re[i].start;
        e->hash = re[i].hash;
        e->packed = e->method == M_STORED ? re[i].size : re[i].csize;
        if (e->method == M_SOLID) {
            e->pos = at;
            at += re[i].size;
        } else {
            e->pos = st->h.data_start + at;
            at += e->packed;
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
        (s = trowel_props_add_str(info, "byte_order", h->be ? "big-endian" : "little-endian")) ||
        (s = trowel_props_add_str(info, "mode", mode_name(h->flags))) ||
        (s = trowel_props_add_hex(info, "flags", h->flags)))
        return s;
    if (h->version >= 3 && h->version <= 6 &&
        ((s = trowel_props_add_str(info, "short_name", h->short_name)) ||
         (s = trowel_props_add_str(info, "path", h->path))))
        return s;
    if (h->version >= 10 && (s = trowel_props_add_hex(info, "header_checksum", h->checksum)))
        return s;
    if (h->version == 17 && ((s = trowel_props_add_uint(info, "paths", h->num_paths)) ||
                             (s = trowel_props_add_uint(info, "timestamp", h->timestamp))))
        return s;
    if ((s = trowel_props_add_uint(info, "files", h->num_files)) ||
        (s = trowel_props_add_uint(info, "file_size", h->file_size)) ||
        (s = trowel_props_add_uint(info, "data_start", h->data_start)))
        return s;
    if (h->version != 1 && (s = trowel_props_add_uint(info, "data_size", h->data_size)))
        return s;
    if (h->flags & VPP_FLAG_COMPRESSED)
        s = trowel_props_add_uint(info, "compressed_size", h->compressed_size);
    if (s == TROWEL_OK && (h->flags & VPP_FLAG_CONDENSED) && h->version < 10)
        s = trowel_props_add_uint(info, "alignment", st->alignment);
    if (s == TROWEL_OK && st->level)
        s = trowel_props_add_uint(info, "zlib_level", (uint64_t)st->level);
    return s;
}

static trowel_status add_entries(trowel_archive *a, const trowel_reader *names,
                                 const trowel_reader *exts, const vpp_raw_entry *re, vpp_state *st)
{
    uint64_t solid_at = st->h.data_start;
    for (size_t i = 0; i < st->h.num_files; i++) {
        char name[NAME_MAX_LEN + 1];
        trowel_status s = entry_name(a->ctx, &st->h, &re[i], names, exts, i, name, sizeof name);
        if (s != TROWEL_OK)
            return s;
        const vpp_entry *v = &st->ent[i];
        bool solid = v->method == M_SOLID;
        trowel_entry e = {.name = name, .size = re[i].size, .packed_size = v->packed,
                          .offset = solid ? solid_at : v->pos, .method = method_names[v->method],
                          .index = i};
        solid_at += v->packed;
        trowel_props *extra;
        if ((s = trowel_archive_add(a, &e, &extra)) != TROWEL_OK)
            return s;
        if (st->h.version == 3 && (s = trowel_props_add_hex(extra, "hash", v->hash)) != TROWEL_OK)
            return s;
        if (st->h.version >= 10 && (s = trowel_props_add_uint(extra, "alignment", re[i].align)))
            return s;
    }
    return TROWEL_OK;
}

static trowel_status read_directory(trowel_archive *a, const trowel_reader *dir, vpp_raw_entry *re,
                                    vpp_state *st)
{
    trowel_reader d = *dir;
    for (size_t i = 0; i < st->h.num_files; i++) {
        uint64_t record = trowel_reader_abs(&d) - trowel_reader_tell(&d) +
                          (uint64_t)i * st->h.entry_size;
        trowel_status s = trowel_reader_seek(&d, (uint64_t)i * st->h.entry_size);
        if (s == TROWEL_OK)
            s = read_raw_entry(&d, &st->h, &re[i]);
        if (s != TROWEL_OK)
            return s;
        if (re[i].csize == UINT64_MAX && st->h.version < 17)
            re[i].csize = UINT32_MAX; /* 32-bit fields kept as they were */
        if (re[i].size == UINT64_MAX && st->h.version < 17)
            re[i].size = UINT32_MAX;
        /* 2^64 - 1 is no file's size, and it is the library's "size not
         * known", which would let the entry decode to any length. */
        if (re[i].size == TROWEL_SIZE_UNKNOWN)
            return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, record,
                               "entry %zu's size is 2^64 - 1, which no file has", i);
        if (st->h.version >= 10 && re[i].align > 1 && (re[i].align & (re[i].align - 1)))
            return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, trowel_reader_abs(&d) - 4,
                               "entry %zu's alignment %u is not a power of two", i,
                               (unsigned)re[i].align);
    }
    (void)a;
    return TROWEL_OK;
}

/* Fails for entry i, whose stored bytes (at `at`) pass the end of the file. */
static trowel_status cut_entry(trowel_archive *a, const vpp_state *st, size_t i, uint64_t at)
{
    return trowel_fail(a->ctx, TROWEL_ERR_TRUNCATED,
                       st->h.dir_start + (uint64_t)i * st->h.entry_size,
                       "entry %zu (%s): %llu bytes at offset %llu run past the end of the "
                       "%llu-byte file",
                       i, a->entries[i].name, (unsigned long long)st->ent[i].packed,
                       (unsigned long long)at, (unsigned long long)vpp_file_size(a));
}

/* A packfile cut short (or whose entries point past its end) opens with
 * every entry listed: each entry whose stored bytes are not all there is
 * named in a warning and fails when read, and the archive is damaged.
 * Entries of a solid stream are read through the one cursor, which stops
 * where the stream does; they are only named here. A cut that spares
 * every entry (the last padding) still shows in the header's file size. */
static void note_damage(trowel_archive *a, vpp_state *st)
{
    uint64_t size = vpp_file_size(a), solid_at = st->h.data_start;
    bool damaged = false;
    for (size_t i = 0; i < a->entry_count; i++) {
        vpp_entry *e = &st->ent[i];
        uint64_t at = e->method == M_SOLID ? solid_at : e->pos;
        solid_at += e->packed;
        if (at <= size && e->packed <= size - at)
            continue;
        e->cut = e->method != M_SOLID;
        trowel_error saved = a->ctx->last_error;
        cut_entry(a, st, i, at);
        trowel_warn(a->ctx, a->ctx->last_error.offset, "%s", a->ctx->last_error.message);
        a->ctx->last_error = saved;
        damaged = true;
    }
    bool wraps = st->h.version < 17 && st->h.file_size == UINT32_MAX;
    if (!damaged && !wraps && st->h.file_size > size) {
        trowel_warn(a->ctx, vpp_file_size_offset(&st->h),
                    "the packfile is cut short: the header gives %llu bytes, the file has %llu",
                    (unsigned long long)st->h.file_size, (unsigned long long)size);
        damaged = true;
    }
    if (damaged)
        trowel_archive_mark_damaged(a);
}

/* The zlib level the archive was written with, from the first stream's
 * header (FLEVEL: 0 fastest .. 3 best), for info and the manifest. */
static int guess_level(trowel_archive *a, const vpp_state *st)
{
    for (size_t i = 0; i < st->h.num_files; i++) {
        const vpp_entry *e = &st->ent[i];
        if (e->method != M_ZLIB && e->method != M_SOLID && e->method != M_CONSOLE)
            continue;
        uint8_t hdr[2];
        uint64_t at = e->method == M_SOLID ? st->h.data_start : e->pos;
        if (!vpp_read_at(a, at, hdr, 2))
            return 0;
        if ((hdr[0] & 0x0F) != 8 || (hdr[0] << 8 | hdr[1]) % 31)
            return 0;
        static const int levels[] = {1, 5, 6, 9};
        return levels[hdr[1] >> 6];
    }
    return 0;
}

static trowel_status vpp_open(trowel_archive *a, trowel_reader *r)
{
    trowel_ctx *ctx = a->ctx;
    vpp_state *st;
    trowel_status s = trowel_mem_new_zeroed(ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    s = read_header(ctx, r, &st->h);
    if (s != TROWEL_OK)
        return s;
    const vpp_header *h = &st->h;
    uint64_t dir_bytes = (uint64_t)h->num_files * h->entry_size;
    if (h->version != 1 && dir_bytes > h->dir_size)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, h->version >= 10 ? 0x14 : 0x154,
                           "%lu files need %llu directory bytes, the header gives %lu",
                           (unsigned long)h->num_files, (unsigned long long)dir_bytes,
                           (unsigned long)h->dir_size);
    /* The directory and name tables must be present before anything is
     * made of their counts. */
    uint64_t tables_end = h->version == 1 ? h->dir_start + dir_bytes
                                          : (h->version == 4 ? h->ext_start + h->ext_size
                                                             : h->names_start + h->names_size);
    if (tables_end > trowel_reader_size(r))
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, trowel_reader_size(r),
                           "the packfile is cut short: its directory and names (%lu files) end "
                           "at %llu, the file at %llu",
                           (unsigned long)h->num_files, (unsigned long long)tables_end,
                           (unsigned long long)trowel_reader_size(r));
    trowel_reader names, dir, exts;
    if ((s = trowel_reader_sub(r, h->dir_start, dir_bytes, &dir)) != TROWEL_OK ||
        (s = trowel_reader_sub(r, h->names_start, h->version == 1 ? dir_bytes : h->names_size,
                               &names)) != TROWEL_OK ||
        (s = trowel_reader_sub(r, h->ext_start, h->ext_size, &exts)) != TROWEL_OK)
        return s;
    size_t n = h->num_files;
    vpp_raw_entry *re;
    if ((s = trowel_mem_new_zeroed(ctx, n ? n : 1, sizeof *st->ent, &st->ent)) != TROWEL_OK ||
        (s = trowel_mem_new_zeroed(ctx, n ? n : 1, sizeof *re, &re)) != TROWEL_OK)
        return s;
    s = read_directory(a, &dir, re, st);
    if (s == TROWEL_OK && (h->flags & VPP_FLAG_CONDENSED) && h->version < 10 && n)
        s = find_alignment(a, re, st);
    if (s == TROWEL_OK) {
        place_entries(st, re);
        st->level = guess_level(a, st);
        s = add_info(a, st);
    }
    if (s == TROWEL_OK)
        s = add_entries(a, &names, &exts, re, st);
    if (s == TROWEL_OK)
        note_damage(a, st);
    trowel_mem_free(ctx, re);
    return s;
}

/* --------------------------------------------------------------- reading */

/* SR2 PS3: the file in chunks of {u16 csize, u16 0, u32 usize} + raw
 * deflate, big-endian. */
static trowel_status read_chunked(trowel_archive *a, trowel_reader *span, uint64_t size,
                                  trowel_sink *out)
{
    trowel_codec_params raw = trowel_codec_params_default();
    raw.flags = TROWEL_CODEC_RAW;
    uint64_t done = 0;
    while (done < size) {
        uint16_t csize, zero;
        uint32_t usize;
        trowel_status s;
        uint64_t at = trowel_reader_abs(span);
        if ((s = trowel_read_u16be(span, &csize)) || (s = trowel_read_u16be(span, &zero)) ||
            (s = trowel_read_u32be(span, &usize)))
            return s;
        if (usize == 0 || usize > size - done)
            return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, at,
                               "a chunk of %lu bytes passes the entry's %llu", (unsigned long)usize,
                               (unsigned long long)size);
        trowel_reader chunk;
        if ((s = trowel_reader_sub(span, trowel_reader_tell(span), csize, &chunk)) ||
            (s = trowel_reader_skip(span, csize)) ||
            (s = trowel_codec_decode_reader(a->ctx, &trowel_zlib_stream, &raw, &chunk, usize, out)))
            return s;
        done += usize;
    }
    return TROWEL_OK;
}

static trowel_status vpp_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    vpp_state *st = a->priv;
    const vpp_entry *v = &st->ent[index];
    if (v->cut)
        return cut_entry(a, st, index, v->pos);
    uint64_t size = a->entries[index].size;
    trowel_reader whole, span;
    trowel_reader_init(&whole, a->ctx, a->in);
    trowel_status s;
    if (v->method == M_SOLID) {
        if (!st->solid && (s = vpp_open_solid(a, st, &st->solid)) != TROWEL_OK)
            return s;
        if ((s = trowel_codec_stream_seek(st->solid, v->pos)) != TROWEL_OK)
            return s;
        return trowel_codec_stream_read(st->solid, size, out);
    }
    if ((s = trowel_reader_sub(&whole, v->pos, v->packed, &span)) != TROWEL_OK)
        return s;
    switch (v->method) {
    case M_ZLIB:
        return trowel_codec_decode_reader(a->ctx, &trowel_zlib_stream, NULL, &span, size, out);
    case M_LZ4:
        return trowel_codec_decode_reader(a->ctx, &trowel_lz4_stream, NULL, &span, size, out);
    case M_CONSOLE:
        if (vpp_looks_like_zlib(&span))
            return trowel_codec_decode_reader(a->ctx, &trowel_zlib_stream, NULL, &span, size, out);
        return read_chunked(a, &span, size, out);
    default:
        return trowel_reader_copy_to(&span, out);
    }
}

/* ------------------------------------------------------------- manifest */

static trowel_status vpp_manifest(trowel_archive *a, json_object *m)
{
    const vpp_state *st = a->priv;
    const vpp_header *h = &st->h;
    json_object_object_add(m, "version", json_object_new_int64(h->version));
    json_object_object_add(m, "compressed", json_object_new_boolean(h->flags & VPP_FLAG_COMPRESSED));
    json_object_object_add(m, "condensed", json_object_new_boolean(h->flags & VPP_FLAG_CONDENSED));
    if (h->be)
        json_object_object_add(m, "big_endian", json_object_new_boolean(true));
    if ((h->flags & VPP_FLAG_CONDENSED) && h->version < 10)
        json_object_object_add(m, "alignment", json_object_new_int64(st->alignment));
    else if (h->version >= 10 && a->entry_count)
        json_object_object_add(m, "alignment", json_object_new_int64(
            (int64_t)(st->h.flags & VPP_FLAG_CONDENSED ? 16 : 1)));
    if (st->level)
        json_object_object_add(m, "level", json_object_new_int64(st->level));
    if (solid_mode(h) && a->entry_count) {
        /* Finished streams (peers' repacks) end in an Adler-32; the
         * game's stop at the last sync flush. */
        json_object_object_add(m, "finished",
                               json_object_new_boolean(!vpp_stream_unfinished(a, h)));
    }
    if (h->version >= 3 && h->version <= 6) {
        json_object_object_add(m, "short_name", json_object_new_string(h->short_name));
        json_object_object_add(m, "path", json_object_new_string(h->path));
    }
    if (h->version >= 3 && h->version <= 6) {
        /* The runtime pointers the game left in the header, for an exact
         * rebuild. */
        uint8_t raw[20];
        char hex[41];
        if (vpp_read_at(a, h->version == 4 ? 0x170 : 0x16C, raw, sizeof raw)) {
            for (size_t i = 0; i < sizeof raw; i++)
                snprintf(hex + 2 * i, 3, "%02x", raw[i]);
            json_object_object_add(m, "runtime", json_object_new_string(hex));
        }
    }
    if (h->version == 17)
        json_object_object_add(m, "timestamp", json_object_new_int64((int64_t)h->timestamp));
    return vpp_manifest_padding(a, m);
}

static void vpp_close(trowel_archive *a)
{
    vpp_state *st = a->priv;
    if (!st)
        return;
    trowel_codec_stream_close(st->solid);
    vpp_verify_close(a, st);
    trowel_mem_free(a->ctx, st->ent);
    trowel_mem_free(a->ctx, st);
}

const trowel_format trowel_format_vpp = {
    .id = "vpp",
    .stored_entries_in_input = true,
    .family = "volition",
    .description = "Volition packfile (VPP) v1, v3, v4, v6, v10, v17: Red Faction, Saints Row 1-4 "
                   "and 2022, RF Guerrilla and Armageddon, Agents of Mayhem; raw, compressed, "
                   "condensed, compressed+condensed, LZ4 (v17), big-endian console files",
    .extensions = ".vpp .vpp_pc .str2_pc .vpp_xbox2 .vpp_ps3 .str2_xbox2 .str2_ps3",
    .caps = TROWEL_CAP_LIST | TROWEL_CAP_VERIFY | TROWEL_CAP_CREATE | TROWEL_CAP_MANIFEST,
    .options = vpp_options,
    .convert_targets = "",
    .bid = vpp_bid,
    .open = vpp_open,
    .read_entry = vpp_read_entry,
    .entry_cursor = vpp_entry_cursor,
    .verify = vpp_verify,
    .verify_entry = vpp_verify_entry,
    .manifest = vpp_manifest,
    .create = vpp_create,
    .close = vpp_close,
};
