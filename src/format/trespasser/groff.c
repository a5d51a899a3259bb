/*
 * GROFF: the container of Jurassic Park: Trespasser's scenes and saves
 * (.scn) and worlds (.grf).
 *
 * Layout (little-endian): a 48-byte header of 12 u32 {magic 0x0ACEBABE,
 * file size, section count, symbol count, symbol-table size, symbol-table
 * offset, timestamp, flags, version, two reserved, CRC}; then one 32-byte
 * header per section {name symbol handle, FileIO flags, data offset, size,
 * relocation offset, relocation count, user flags, section handle}; the
 * sections' bytes back to back in table order; then the symbol table:
 * entries {u32 handle, u32 length (NUL included), u32 refcount, name},
 * sorted by strcmp. The game reads all of it in that order and ignores the
 * stored offsets, so verify checks that they agree with that order.
 *
 * Entries are the sections, named by their symbols. The manifest keeps the
 * header fields, every section's handles and flags and the whole symbol
 * table (handles, refcounts, order), so extract + create --manifest gives
 * the original bytes. An SCN's "Header" section (SSaveHeader) is decoded
 * into the save_header.* info keys; GRF worlds are in groff_grf.c; the
 * lookups both use (a section by name, a symbol by handle, a section's
 * reader) in groff_sections.c.
 *
 * Facts: shared/formats/trespasser.md, OpenTrespasser's Lib/Groff/FileIO
 * and Lib/Loader/SaveFile.
 */
#include "groff.h"

#include "core/bytes.h"
#include "core/source.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAVE_HEADER_SIZE 1348
#define SAVE_GROFFS 5
#define SAVE_GROFF_LEN 256

/* ------------------------------------------------------------------- bid */

static int groff_bid(trowel_reader *r)
{
    uint32_t h[6];
    for (int i = 0; i < 6; i++)
        if (trowel_read_u32le(r, &h[i]) != TROWEL_OK)
            return TROWEL_BID_NONE;
    if (h[0] != GROFF_MAGIC)
        return TROWEL_BID_NONE;
    uint64_t size = trowel_reader_size(r);
    bool fits = h[1] == size && (uint64_t)h[5] + h[4] == size &&
                GROFF_HEADER_SIZE + (uint64_t)h[2] * GROFF_SECTION_SIZE <= size;
    return fits ? TROWEL_BID_STRONG : TROWEL_BID_MAGIC;
}

/* ------------------------------------------------------------------ open */

static trowel_status read_header(trowel_ctx *ctx, trowel_reader *r, groff_state *st)
{
    uint32_t h[12];
    for (int i = 0; i < 12; i++)
        if (trowel_read_u32le(r, &h[i]) != TROWEL_OK)
            return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, 0,
                               "the GROFF header needs 48 bytes; the file has %llu",
                               (unsigned long long)trowel_reader_size(r));
    if (h[0] != GROFF_MAGIC)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, 0, "not a GROFF file: magic 0x%08lx",
                           (unsigned long)h[0]);
    st->file_size = h[1];
    st->section_count = h[2];
    st->symbol_count = h[3];
    st->symtab_size = h[4];
    st->symtab_offset = h[5];
    st->timestamp = h[6];
    st->flags = h[7];
    st->version = h[8];
    st->reserved[0] = h[9];
    st->reserved[1] = h[10];
    st->crc = h[11];
    st->real_size = trowel_reader_size(r);
    uint64_t table_end = GROFF_HEADER_SIZE + (uint64_t)st->section_count * GROFF_SECTION_SIZE;
    if (table_end > st->real_size)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, 8,
                           "the section table of %lu sections needs %llu bytes but the file has "
                           "%llu",
                           (unsigned long)st->section_count, (unsigned long long)table_end,
                           (unsigned long long)st->real_size);
    if ((uint64_t)st->symtab_offset + st->symtab_size > st->real_size)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, 20,
                           "the symbol table (offset %lu, %lu bytes) runs past the end of the "
                           "file (%llu bytes)",
                           (unsigned long)st->symtab_offset, (unsigned long)st->symtab_size,
                           (unsigned long long)st->real_size);
    if ((uint64_t)st->symbol_count * GROFF_SYMBOL_HEAD > st->symtab_size)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, 12,
                           "%lu symbols cannot fit in a symbol table of %lu bytes",
                           (unsigned long)st->symbol_count, (unsigned long)st->symtab_size);
    return TROWEL_OK;
}


static int compare_handles(const void *a, const void *b)
{
    const struct groff_handle_index *x = a, *y = b;
    if (x->handle != y->handle)
        return x->handle < y->handle ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static trowel_status read_symbols(trowel_ctx *ctx, trowel_reader *file, groff_state *st)
{
    trowel_reader r;
    trowel_status s = trowel_reader_sub(file, st->symtab_offset, st->symtab_size, &r);
    if (s != TROWEL_OK)
        return s;
    size_t n = st->symbol_count;
    s = trowel_mem_new_zeroed(ctx, n ? n : 1, sizeof *st->symbols, &st->symbols);
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, n ? n : 1, sizeof *st->by_handle, &st->by_handle);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < n; i++) {
        groff_symbol *sym = &st->symbols[i];
        uint64_t at = st->symtab_offset + trowel_reader_tell(&r);
        if (trowel_read_u32le(&r, &sym->handle) != TROWEL_OK ||
            trowel_read_u32le(&r, &sym->length) != TROWEL_OK ||
            trowel_read_u32le(&r, &sym->refcount) != TROWEL_OK)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, at,
                               "symbol %zu of %zu starts past the end of the symbol table", i, n);
        if (sym->length == 0 || sym->length > trowel_reader_remaining(&r))
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, at + 4,
                               "symbol %zu's name of %lu bytes runs past the symbol table (%llu "
                               "bytes left)",
                               i, (unsigned long)sym->length,
                               (unsigned long long)trowel_reader_remaining(&r));
        uint8_t *raw;
        if ((s = trowel_mem_new(ctx, sym->length + 1u, &raw)) != TROWEL_OK)
            return s;
        if ((s = trowel_read_bytes(&r, raw, sym->length)) == TROWEL_OK) {
            raw[sym->length] = 0;
            s = trowel_mem_dup(ctx, (const char *)raw, &sym->name);
        }
        if (s != TROWEL_OK) {
            trowel_mem_free(ctx, raw);
            return s;
        }
        size_t len = strlen((const char *)raw);
        sym->odd_bytes = len + 1 != sym->length;
        if (sym->odd_bytes)
            sym->raw = raw;
        else
            trowel_mem_free(ctx, raw);
        st->by_handle[i].handle = sym->handle;
        st->by_handle[i].index = (uint32_t)i;
    }
    qsort(st->by_handle, n, sizeof *st->by_handle, compare_handles);
    return TROWEL_OK;
}

static trowel_status read_sections(trowel_archive *a, trowel_reader *r, groff_state *st)
{
    trowel_ctx *ctx = a->ctx;
    size_t n = st->section_count;
    trowel_status s = trowel_mem_new_zeroed(ctx, n ? n : 1, sizeof *st->sections, &st->sections);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < n; i++) {
        groff_section *sec = &st->sections[i];
        uint32_t f[8];
        for (int k = 0; k < 8; k++)
            if ((s = trowel_read_u32le(r, &f[k])) != TROWEL_OK)
                return s;
        sec->name_handle = f[0];
        sec->io_flags = f[1];
        sec->offset = f[2];
        sec->size = f[3];
        sec->reloc_offset = f[4];
        sec->reloc_count = f[5];
        sec->user_flags = f[6];
        sec->handle = f[7];
        if ((uint64_t)sec->offset + sec->size > st->real_size) {
            sec->damaged = true;
            trowel_warn(ctx, GROFF_HEADER_SIZE + (uint64_t)i * GROFF_SECTION_SIZE + 8,
                        "section %zu at offset %lu, %lu bytes, runs past the end of the file "
                        "(%llu bytes)",
                        i, (unsigned long)sec->offset, (unsigned long)sec->size,
                        (unsigned long long)st->real_size);
            trowel_archive_mark_damaged(a);
        }
    }
    return TROWEL_OK;
}

static const char *const user_flag_names[] = {
    "header",  "region", "object", "geometry", "mapping", "material",   "bitmap", "palette",
    "physics", "ai",     "sound",  "design",   "trigger", "attributes",
};

/* The names of the user flags set (SPECIAL is bit 31). */
static size_t user_flag_list(uint32_t flags, const char **out)
{
    size_t n = 0;
    for (size_t b = 0; b < sizeof user_flag_names / sizeof *user_flag_names; b++)
        if (flags & (1u << b))
            out[n++] = user_flag_names[b];
    if (flags & 0x80000000u)
        out[n++] = "special";
    return n;
}

/* Sections sorted by name (then index), to find repeated names without
 * comparing every pair. */
typedef struct named_index {
    const char *name;
    uint32_t index;
} named_index;

static int compare_named(const void *a, const void *b)
{
    const named_index *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

/* repeated[i]: an earlier section has section i's name. */
static trowel_status find_repeats(trowel_ctx *ctx, const groff_state *st, bool *repeated)
{
    named_index *order;
    trowel_status s = trowel_mem_new(ctx, (st->section_count + 1u) * sizeof *order, &order);
    if (s != TROWEL_OK)
        return s;
    size_t n = 0;
    for (uint32_t i = 0; i < st->section_count; i++)
        if (st->sections[i].name)
            order[n++] = (named_index){st->sections[i].name, i};
    qsort(order, n, sizeof *order, compare_named);
    for (size_t k = 1; k < n; k++)
        repeated[order[k].index] = strcmp(order[k].name, order[k - 1].name) == 0;
    trowel_mem_free(ctx, order);
    return TROWEL_OK;
}

#define ENTRY_NAME_MAX 240 /* bytes of a symbol kept in an entry name */
#define REPEATED_NAME_MAX 200

/* An entry name for section i: its symbol, made unique with "~i" when an
 * earlier section has the same name, "section-i" when it has none. A
 * symbol longer than ENTRY_NAME_MAX bytes (REPEATED_NAME_MAX with "~i") is
 * cut; returns true when it was. */
static bool entry_name(const groff_section *sec, size_t i, bool repeated, char *out, size_t cap)
{
    if (!sec->name || !sec->name[0]) {
        snprintf(out, cap, "section-%zu", i);
        return false;
    }
    size_t len = strlen(sec->name);
    if (repeated) {
        snprintf(out, cap, "%.200s~%zu", sec->name, i);
        return len > REPEATED_NAME_MAX;
    }
    snprintf(out, cap, "%.240s", sec->name);
    return len > ENTRY_NAME_MAX;
}

/* SCN saves: the Header section's SSaveHeader as save_header.* keys. */
static trowel_status add_save_header(trowel_archive *a, groff_state *st)
{
    size_t i = groff_section_find(st, "Header");
    if (i == SIZE_MAX || st->sections[i].size != SAVE_HEADER_SIZE || st->sections[i].damaged)
        return TROWEL_OK;
    trowel_reader r;
    trowel_status s = groff_section_reader(a, i, &r);
    int32_t version, animal;
    char paths[SAVE_GROFFS][SAVE_GROFF_LEN];
    uint8_t brief;
    float time, real_time;
    if (s == TROWEL_OK)
        s = trowel_read_i32le(&r, &version);
    for (int k = 0; s == TROWEL_OK && k < SAVE_GROFFS; k++) {
        uint8_t field[SAVE_GROFF_LEN];
        s = trowel_read_bytes(&r, field, sizeof field);
        /* The game writes each path from an uncleared buffer: what
         * follows the first NUL is leftover memory. */
        size_t n = strnlen((const char *)field, sizeof field - 1);
        memcpy(paths[k], field, n);
        paths[k][n] = 0;
    }
    if (s == TROWEL_OK)
        s = trowel_read_u8(&r, &brief);
    if (s == TROWEL_OK)
        s = trowel_reader_skip(&r, 3);
    if (s == TROWEL_OK)
        s = trowel_read_f32le(&r, &time);
    if (s == TROWEL_OK)
        s = trowel_read_i32le(&r, &animal);
    if (s == TROWEL_OK)
        s = trowel_read_f32le(&r, &real_time);
    if (s != TROWEL_OK)
        return s;
    const char *list[SAVE_GROFFS];
    for (int k = 0; k < SAVE_GROFFS; k++)
        list[k] = paths[k];
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "kind", "scn")) ||
        (s = trowel_props_add_int(info, "save_header.version", version)) ||
        (s = trowel_props_add_list(info, "save_header.groff", list, SAVE_GROFFS)) ||
        (s = trowel_props_add_bool(info, "save_header.brief", brief != 0)) ||
        (s = trowel_props_add_double(info, "save_header.time", time)) ||
        (s = trowel_props_add_int(info, "save_header.animal_version", animal)) ||
        (s = trowel_props_add_double(info, "save_header.real_time", real_time)))
        return s;
    if (version < 7 || version > 22)
        trowel_warn(a->ctx, st->sections[i].offset,
                    "save version %ld is outside the versions the game knows (7..22)",
                    (long)version);
    return TROWEL_OK;
}

static trowel_status add_info(trowel_archive *a, groff_state *st)
{
    trowel_props *info = a->info;
    const char *flag_names[8];
    size_t nf = 0;
    static const char *const file_flags[] = {"references", "relocation", "sections",
                                             "symbols",    "crc",        "log"};
    for (size_t b = 0; b < 6; b++)
        if (st->flags & (1u << b))
            flag_names[nf++] = file_flags[b];
    trowel_status s;
    if ((s = trowel_props_add_str(info, "format", "groff")) ||
        (s = trowel_props_add_uint(info, "version", st->version)) ||
        (s = trowel_props_add_hex(info, "flags", st->flags)) ||
        (s = trowel_props_add_list(info, "flag_names", flag_names, nf)) ||
        (s = trowel_props_add_uint(info, "section_count", st->section_count)) ||
        (s = trowel_props_add_uint(info, "symbol_count", st->symbol_count)) ||
        (s = trowel_props_add_uint(info, "symbol_table_offset", st->symtab_offset)) ||
        (s = trowel_props_add_uint(info, "symbol_table_size", st->symtab_size)) ||
        (s = trowel_props_add_uint(info, "declared_file_size", st->file_size)) ||
        (s = trowel_props_add_uint(info, "timestamp", st->timestamp)) ||
        (s = trowel_props_add_hex(info, "crc", st->crc)))
        return s;
    if ((s = add_save_header(a, st)) != TROWEL_OK)
        return s;
    return groff_grf_info(a);
}

static trowel_status add_entry(trowel_archive *a, const groff_state *st, size_t i,
                              const char *name)
{
    const groff_section *sec = &st->sections[i];
    trowel_entry e = {.name = name, .size = sec->size, .packed_size = sec->size,
                      .offset = sec->offset, .method = "stored", .flags = sec->user_flags,
                      .index = i};
    trowel_props *extra;
    trowel_status s = trowel_archive_add(a, &e, &extra);
    if (s != TROWEL_OK)
        return s;
    const char *names[16];
    size_t nf = user_flag_list(sec->user_flags, names);
    if ((s = trowel_props_add_hex(extra, "flags", sec->user_flags)) ||
        (s = trowel_props_add_list(extra, "flag_names", names, nf)) ||
        (s = trowel_props_add_hex(extra, "handle", sec->handle)) ||
        (s = trowel_props_add_hex(extra, "symbol_handle", sec->name_handle)))
        return s;
    if (sec->io_flags && (s = trowel_props_add_hex(extra, "io_flags", sec->io_flags)))
        return s;
    return TROWEL_OK;
}

typedef char entry_name_buf[256];

/* Names cut to ENTRY_NAME_MAX bytes are said once; two that become equal
 * after the cut would extract onto each other, so such a file is refused. */
static trowel_status check_cut_names(trowel_archive *a, const groff_state *st,
                                     entry_name_buf *names, size_t cut, size_t first_cut)
{
    if (cut == 0)
        return TROWEL_OK;
    named_index *order;
    trowel_status s = trowel_mem_new(a->ctx, (st->section_count + 1u) * sizeof *order, &order);
    if (s != TROWEL_OK)
        return s;
    for (uint32_t i = 0; i < st->section_count; i++)
        order[i] = (named_index){names[i], i};
    qsort(order, st->section_count, sizeof *order, compare_named);
    for (size_t k = 1; k < st->section_count; k++)
        if (strcmp(order[k].name, order[k - 1].name) == 0) {
            size_t x = order[k - 1].index, y = order[k].index;
            trowel_mem_free(a->ctx, order);
            return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, st->sections[y].offset,
                               "sections %zu and %zu have names that are the same in their "
                               "first %d bytes: cut to entry names they would collide ('%.60s...')",
                               x, y, ENTRY_NAME_MAX, names[x]);
        }
    trowel_mem_free(a->ctx, order);
    trowel_warn(a->ctx, TROWEL_NO_OFFSET,
                "section names longer than %d bytes are cut in entry names (%zu of them, the "
                "first section %zu); the manifest keeps the whole symbol",
                ENTRY_NAME_MAX, cut, first_cut);
    return TROWEL_OK;
}

static trowel_status add_entries(trowel_archive *a, groff_state *st)
{
    bool *repeated;
    entry_name_buf *names = NULL;
    trowel_status s =
        trowel_mem_new_zeroed(a->ctx, st->section_count + 1u, sizeof *repeated, &repeated);
    if (s == TROWEL_OK)
        s = trowel_mem_new(a->ctx, (st->section_count + 1u) * sizeof *names, &names);
    if (s == TROWEL_OK)
        s = find_repeats(a->ctx, st, repeated);
    size_t cut = 0, first_cut = 0;
    for (size_t i = 0; s == TROWEL_OK && i < st->section_count; i++)
        if (entry_name(&st->sections[i], i, repeated[i], names[i], sizeof names[i]) && !cut++)
            first_cut = i;
    if (s == TROWEL_OK)
        s = check_cut_names(a, st, names, cut, first_cut);
    for (size_t i = 0; s == TROWEL_OK && i < st->section_count; i++)
        s = add_entry(a, st, i, names[i]);
    trowel_mem_free(a->ctx, names);
    trowel_mem_free(a->ctx, repeated);
    return s;
}

static void groff_close(trowel_archive *a)
{
    groff_state *st = a->priv;
    if (!st)
        return;
    for (size_t i = 0; st->symbols && i < st->symbol_count; i++) {
        trowel_mem_free(a->ctx, st->symbols[i].name);
        trowel_mem_free(a->ctx, st->symbols[i].raw);
    }
    trowel_mem_free(a->ctx, st->symbols);
    trowel_mem_free(a->ctx, st->by_handle);
    trowel_mem_free(a->ctx, st->sections);
    trowel_mem_free(a->ctx, st);
    a->priv = NULL;
}

static trowel_status groff_open(trowel_archive *a, trowel_reader *r)
{
    trowel_ctx *ctx = a->ctx;
    groff_state *st;
    trowel_status s = trowel_mem_new_zeroed(ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    s = read_header(ctx, r, st);
    if (s == TROWEL_OK)
        s = read_sections(a, r, st);
    if (s == TROWEL_OK)
        s = read_symbols(ctx, r, st);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < st->section_count; i++) {
        const groff_symbol *sym = groff_symbol_find(st, st->sections[i].name_handle);
        st->sections[i].name = sym ? sym->name : NULL;
    }
    if ((s = add_info(a, st)) != TROWEL_OK)
        return s;
    return add_entries(a, st);
}

static trowel_status groff_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    trowel_reader r;
    trowel_status s = groff_section_reader(a, index, &r);
    return s == TROWEL_OK ? trowel_reader_copy_to(&r, out) : s;
}

/* ---------------------------------------------------------------- verify */

static trowel_status groff_verify(trowel_archive *a)
{
    const groff_state *st = a->priv;
    uint64_t at = GROFF_HEADER_SIZE + (uint64_t)st->section_count * GROFF_SECTION_SIZE;
    for (size_t i = 0; i < st->section_count; i++) {
        const groff_section *sec = &st->sections[i];
        uint64_t head = GROFF_HEADER_SIZE + (uint64_t)i * GROFF_SECTION_SIZE;
        if (sec->offset != at)
            trowel_archive_reportf(
                a, head + 8,
                "section %zu (%s) is stored at offset %lu, but the game reads it at %llu "
                "(sections follow the table back to back, in table order)",
                i, sec->name ? sec->name : "?", (unsigned long)sec->offset, (unsigned long long)at);
        if (!sec->name)
            trowel_archive_reportf(a, head,
                                   "section %zu names symbol 0x%08lx, which the symbol table lacks",
                                   i, (unsigned long)sec->name_handle);
        if (sec->reloc_count)
            trowel_archive_reportf(a, head + 20,
                                   "section %zu has %lu relocations; the game writes none", i,
                                   (unsigned long)sec->reloc_count);
        at += sec->size;
    }
    if (st->symtab_offset != at)
        trowel_archive_reportf(
            a, 20, "the symbol table is stored at offset %lu, but the game reads it at %llu",
            (unsigned long)st->symtab_offset, (unsigned long long)at);
    uint64_t end = (uint64_t)st->symtab_offset + st->symtab_size;
    if (st->file_size != end)
        trowel_archive_reportf(a, 4,
                               "the header's file size %lu is not the symbol table's end %llu",
                               (unsigned long)st->file_size, (unsigned long long)end);
    if (st->real_size != end)
        trowel_archive_reportf(a, 4, "the file has %llu bytes; its symbol table ends at %llu",
                               (unsigned long long)st->real_size, (unsigned long long)end);
    uint64_t used = 0;
    for (size_t i = 0; i < st->symbol_count; i++) {
        const groff_symbol *sym = &st->symbols[i];
        used += GROFF_SYMBOL_HEAD + (uint64_t)sym->length;
        if (sym->handle == 0)
            trowel_archive_reportf(a, st->symtab_offset, "symbol %zu (%s) has handle 0", i,
                                   sym->name);
        if (i && strcmp(st->symbols[i - 1].name, sym->name) >= 0)
            trowel_archive_reportf(a, st->symtab_offset,
                                   "symbol %zu (%s) is out of strcmp order after %s", i, sym->name,
                                   st->symbols[i - 1].name);
        if (sym->odd_bytes)
            trowel_archive_reportf(a, st->symtab_offset,
                                   "symbol %zu (%s) has %lu name bytes, not %zu", i, sym->name,
                                   (unsigned long)sym->length, strlen(sym->name) + 1);
    }
    for (size_t i = 1; i < st->symbol_count; i++)
        if (st->by_handle[i].handle == st->by_handle[i - 1].handle)
            trowel_archive_reportf(
                a, st->symtab_offset, "symbols %s and %s share the handle 0x%08lx",
                st->symbols[st->by_handle[i - 1].index].name,
                st->symbols[st->by_handle[i].index].name, (unsigned long)st->by_handle[i].handle);
    if (used != st->symtab_size)
        trowel_archive_reportf(a, st->symtab_offset,
                               "the %lu symbols take %llu bytes of a %lu-byte table",
                               (unsigned long)st->symbol_count, (unsigned long long)used,
                               (unsigned long)st->symtab_size);
    return TROWEL_OK;
}

/* -------------------------------------------------------------- manifest */

static trowel_status groff_manifest(trowel_archive *a, json_object *m)
{
    const groff_state *st = a->priv;
    json_object *entries;
    if (!json_object_object_get_ex(m, "entries", &entries))
        return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET, "manifest has no entries");
    json_object *h = json_object_new_object();
    json_object_object_add(h, "timestamp", json_object_new_int64(st->timestamp));
    json_object_object_add(h, "flags", json_object_new_int64(st->flags));
    json_object_object_add(h, "version", json_object_new_int64(st->version));
    json_object_object_add(h, "reserved0", json_object_new_int64(st->reserved[0]));
    json_object_object_add(h, "reserved1", json_object_new_int64(st->reserved[1]));
    json_object_object_add(h, "crc", json_object_new_int64(st->crc));
    json_object_object_add(m, "groff_header", h);
    for (size_t i = 0; i < st->section_count; i++) {
        const groff_section *sec = &st->sections[i];
        json_object *o = json_object_array_get_idx(entries, i);
        json_object_object_add(o, "symbol", json_object_new_string(sec->name ? sec->name : ""));
        json_object_object_add(o, "symbol_handle", json_object_new_int64(sec->name_handle));
        json_object_object_add(o, "section_handle", json_object_new_int64(sec->handle));
        json_object_object_add(o, "user_flags", json_object_new_int64(sec->user_flags));
        json_object_object_add(o, "io_flags", json_object_new_int64(sec->io_flags));
        json_object_object_add(o, "reloc_offset", json_object_new_int64(sec->reloc_offset));
        json_object_object_add(o, "reloc_count", json_object_new_int64(sec->reloc_count));
    }
    json_object *syms = json_object_new_array();
    for (size_t i = 0; i < st->symbol_count; i++) {
        const groff_symbol *sym = &st->symbols[i];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(sym->name));
        json_object_object_add(o, "handle", json_object_new_int64(sym->handle));
        json_object_object_add(o, "refcount", json_object_new_int64(sym->refcount));
        if (sym->odd_bytes) {
            char *hex;
            trowel_status s = trowel_mem_new(a->ctx, 2 * (size_t)sym->length + 1, &hex);
            if (s != TROWEL_OK) {
                json_object_put(o);
                json_object_put(syms);
                return s;
            }
            trowel_hex_encode(sym->raw, sym->length, hex);
            json_object_object_add(o, "bytes", json_object_new_string(hex));
            trowel_mem_free(a->ctx, hex);
        }
        json_object_array_add(syms, o);
    }
    json_object_object_add(m, "symbols", syms);
    return TROWEL_OK;
}

/* ---------------------------------------------------------------- create */

typedef struct new_symbol {
    const char *name;
    uint32_t handle, refcount, length;
    uint8_t *bytes; /* length bytes, owned */
} new_symbol;

typedef struct new_groff {
    uint32_t header[12];
    size_t section_count;
    uint32_t (*sections)[8];
    uint8_t **data;
    new_symbol *symbols;
    size_t symbol_count;
} new_groff;

static uint32_t json_u32(json_object *o, const char *key, uint32_t fallback)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v))
        return fallback;
    return (uint32_t)json_object_get_int64(v);
}

static int compare_new_symbols(const void *a, const void *b)
{
    return strcmp(((const new_symbol *)a)->name, ((const new_symbol *)b)->name);
}

static trowel_status add_symbol(trowel_ctx *ctx, new_groff *g, const char *name, uint32_t handle,
                                uint32_t refcount, const char *hex)
{
    new_symbol *sym = &g->symbols[g->symbol_count];
    size_t len = strlen(name) + 1;
    if (hex)
        len = strlen(hex) / 2;
    if (len == 0 || len > 0xFFFF)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "symbol '%.100s' is empty or too long", name);
    trowel_status s = trowel_mem_new_zeroed(ctx, 1, len, &sym->bytes);
    if (s != TROWEL_OK)
        return s;
    g->symbol_count++;
    if (hex && !trowel_hex_decode(hex, sym->bytes, len))
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "manifest bytes of symbol '%.100s' are not hex digits", name);
    if (!hex)
        memcpy(sym->bytes, name, len);
    sym->name = (const char *)sym->bytes;
    sym->handle = handle;
    sym->refcount = refcount;
    sym->length = (uint32_t)len;
    return TROWEL_OK;
}

/* The symbol table: the manifest's, else one symbol per distinct section
 * name, sorted by strcmp, handles numbered in that order. */
static trowel_status plan_symbols(trowel_ctx *ctx, const trowel_create_params *p,
                                  json_object *manifest, new_groff *g)
{
    json_object *syms = NULL;
    if (manifest && json_object_object_get_ex(manifest, "symbols", &syms) &&
        json_object_is_type(syms, json_type_array)) {
        size_t n = json_object_array_length(syms);
        trowel_status s = trowel_mem_new_zeroed(ctx, n ? n : 1, sizeof *g->symbols, &g->symbols);
        if (s != TROWEL_OK)
            return s;
        for (size_t i = 0; i < n; i++) {
            json_object *o = json_object_array_get_idx(syms, i), *v;
            const char *name =
                json_object_object_get_ex(o, "name", &v) ? json_object_get_string(v) : NULL;
            const char *hex =
                json_object_object_get_ex(o, "bytes", &v) ? json_object_get_string(v) : NULL;
            if (!name)
                return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                                   "manifest symbol %zu has no name", i);
            s = add_symbol(ctx, g, name, json_u32(o, "handle", 0), json_u32(o, "refcount", 1),
                           hex);
            if (s != TROWEL_OK)
                return s;
        }
        return TROWEL_OK;
    }
    trowel_status s = trowel_mem_new_zeroed(ctx, p->source_count ? p->source_count : 1,
                                            sizeof *g->symbols, &g->symbols);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < p->source_count; i++) {
        bool seen = false;
        for (size_t j = 0; j < g->symbol_count && !seen; j++)
            seen = strcmp(g->symbols[j].name, p->sources[i].name) == 0;
        if (seen)
            continue;
        if ((s = add_symbol(ctx, g, p->sources[i].name, 0, 1, NULL)) != TROWEL_OK)
            return s;
    }
    qsort(g->symbols, g->symbol_count, sizeof *g->symbols, compare_new_symbols);
    for (size_t i = 0; i < g->symbol_count; i++)
        g->symbols[i].handle = 0x1000u + 0x10u * (uint32_t)i; /* opaque, unique, non-zero */
    return TROWEL_OK;
}

static const new_symbol *symbol_named(const new_groff *g, const char *name)
{
    for (size_t i = 0; i < g->symbol_count; i++)
        if (strcmp(g->symbols[i].name, name) == 0)
            return &g->symbols[i];
    return NULL;
}

/* Section flags made without a manifest: the SCN Header is SPECIAL. */
static uint32_t default_user_flags(const char *name)
{
    return strcmp(name, "Header") == 0 ? 0x80000000u : 0;
}

static trowel_status load_source(trowel_ctx *ctx, const trowel_source *src, uint8_t **data,
                                 uint32_t *size)
{
    trowel_input *in;
    trowel_status s = trowel_source_open(ctx, src, &in);
    if (s != TROWEL_OK)
        return s;
    size_t n = 0;
    if (trowel_input_size(in) > UINT32_MAX - 4096) {
        s = trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                        "GROFF sizes have 32 bits: %s is too large", src->name);
    } else {
        trowel_reader r;
        trowel_reader_init(&r, ctx, in);
        s = trowel_reader_load(&r, data, &n);
    }
    trowel_input_close(in);
    *size = (uint32_t)n;
    return s;
}

static trowel_status plan_sections(trowel_ctx *ctx, const trowel_create_params *p,
                                   json_object *manifest, new_groff *g)
{
    json_object *entries = NULL;
    if (manifest)
        json_object_object_get_ex(manifest, "entries", &entries);
    uint64_t at = GROFF_HEADER_SIZE + (uint64_t)p->source_count * GROFF_SECTION_SIZE;
    for (size_t i = 0; i < p->source_count; i++) {
        const trowel_source *src = &p->sources[i];
        json_object *rec = entries && i < json_object_array_length(entries)
                               ? json_object_array_get_idx(entries, i)
                               : NULL;
        json_object *v;
        const char *sym_name = rec && json_object_object_get_ex(rec, "symbol", &v)
                                   ? json_object_get_string(v)
                                   : src->name;
        const new_symbol *sym = symbol_named(g, sym_name);
        if (!sym)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                               "section %zu's name '%.100s' is not in the manifest's symbols", i,
                               sym_name);
        trowel_set_entry(ctx, src->name);
        uint32_t size;
        trowel_status s = load_source(ctx, src, &g->data[i], &size);
        if (s != TROWEL_OK)
            return s;
        uint32_t *h = g->sections[i];
        h[0] = json_u32(rec, "symbol_handle", sym->handle);
        h[1] = json_u32(rec, "io_flags", 0);
        h[2] = (uint32_t)at;
        h[3] = size;
        h[4] = json_u32(rec, "reloc_offset", 0);
        h[5] = json_u32(rec, "reloc_count", 0);
        h[6] = json_u32(rec, "user_flags", default_user_flags(sym_name));
        h[7] = json_u32(rec, "section_handle", GROFF_SECTION_HANDLE_BASE + (uint32_t)i);
        at += size;
        if (at > UINT32_MAX - 4096)
            return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                               "the sections pass 4 GiB: GROFF offsets have 32 bits");
        trowel_progress(ctx, i + 1, p->source_count);
    }
    trowel_set_entry(ctx, NULL);
    uint64_t symtab = 0;
    for (size_t i = 0; i < g->symbol_count; i++)
        symtab += GROFF_SYMBOL_HEAD + (uint64_t)g->symbols[i].length;
    if (at + symtab > UINT32_MAX)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "the file would pass 4 GiB: GROFF sizes have 32 bits");
    json_object *head = NULL;
    if (manifest)
        json_object_object_get_ex(manifest, "groff_header", &head);
    uint32_t *h = g->header;
    h[0] = GROFF_MAGIC;
    h[1] = (uint32_t)(at + symtab);
    h[2] = (uint32_t)p->source_count;
    h[3] = (uint32_t)g->symbol_count;
    h[4] = (uint32_t)symtab;
    h[5] = (uint32_t)at;
    h[6] = json_u32(head, "timestamp", 0);
    h[7] = json_u32(head, "flags", (p->source_count ? GROFF_HAS_SECTIONS : 0) |
                                       (g->symbol_count ? GROFF_HAS_SYMBOLS : 0));
    h[8] = json_u32(head, "version", GROFF_VERSION);
    h[9] = json_u32(head, "reserved0", 0);
    h[10] = json_u32(head, "reserved1", 0);
    h[11] = json_u32(head, "crc", 0);
    return TROWEL_OK;
}

static trowel_status write_groff(const new_groff *g, trowel_sink *out)
{
    uint8_t b[GROFF_HEADER_SIZE];
    for (int k = 0; k < 12; k++)
        trowel_put_le32(b + 4 * k, g->header[k]);
    trowel_status s = trowel_sink_write(out, b, GROFF_HEADER_SIZE);
    for (size_t i = 0; s == TROWEL_OK && i < g->section_count; i++) {
        for (int k = 0; k < 8; k++)
            trowel_put_le32(b + 4 * k, g->sections[i][k]);
        s = trowel_sink_write(out, b, GROFF_SECTION_SIZE);
    }
    for (size_t i = 0; s == TROWEL_OK && i < g->section_count; i++)
        s = trowel_sink_write(out, g->data[i], g->sections[i][3]);
    for (size_t i = 0; s == TROWEL_OK && i < g->symbol_count; i++) {
        const new_symbol *sym = &g->symbols[i];
        trowel_put_le32(b, sym->handle);
        trowel_put_le32(b + 4, sym->length);
        trowel_put_le32(b + 8, sym->refcount);
        s = trowel_sink_write(out, b, GROFF_SYMBOL_HEAD);
        if (s == TROWEL_OK)
            s = trowel_sink_write(out, sym->bytes, sym->length);
    }
    return s;
}

static trowel_status groff_create(trowel_ctx *ctx, const trowel_create_params *p,
                                  json_object *manifest, trowel_sink *out)
{
    trowel_status s = TROWEL_OK; /* it takes no options: core refused any given */
    if (p->source_count > 0x7FFFFFF)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "too many sections");
    new_groff g = {.section_count = p->source_count};
    size_t n = p->source_count ? p->source_count : 1;
    s = trowel_mem_new_zeroed(ctx, n, sizeof *g.sections, &g.sections);
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, n, sizeof *g.data, &g.data);
    if (s == TROWEL_OK)
        s = plan_symbols(ctx, p, manifest, &g);
    if (s == TROWEL_OK)
        s = plan_sections(ctx, p, manifest, &g);
    if (s == TROWEL_OK)
        s = write_groff(&g, out);
    for (size_t i = 0; g.data && i < p->source_count; i++)
        trowel_mem_free(ctx, g.data[i]);
    for (size_t i = 0; g.symbols && i < g.symbol_count; i++)
        trowel_mem_free(ctx, g.symbols[i].bytes);
    trowel_mem_free(ctx, g.symbols);
    trowel_mem_free(ctx, g.data);
    trowel_mem_free(ctx, g.sections);
    return s;
}

static const trowel_option_info groff_options[] = {
    {"object", "NAME", "only this object (its name in .region), in its own coordinates",
     "obj glb mtl", .type = TROWEL_OPTION_STRING},
    {"mtl", "NAME", "the material library the OBJ names (default: the input's name + .mtl)",
     "obj", .type = TROWEL_OPTION_STRING},
    {0},
};

const trowel_format trowel_format_groff = {
    .id = "groff",
    .stored_entries_in_input = true,
    .family = "trespasser",
    .description = "Trespasser GROFF container (.scn scenes and saves, .grf worlds)",
    .extensions = ".scn .grf",
    .caps = TROWEL_CAP_INFO | TROWEL_CAP_LIST | TROWEL_CAP_CREATE | TROWEL_CAP_VERIFY |
            TROWEL_CAP_CONVERT | TROWEL_CAP_MANIFEST,
    .create_options = "",
    .convert_targets = "placements values obj mtl glb",
    .options = groff_options,
    .bid = groff_bid,
    .open = groff_open,
    .read_entry = groff_read_entry,
    .verify = groff_verify,
    .manifest = groff_manifest,
    .create = groff_create,
    .convert = groff_grf_convert,
    .close = groff_close,
};
