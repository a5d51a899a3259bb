/*
 * Cinematique part files: the resource archives of Future Wars and
 * Operation Stealth (PROCS00, RSC04, SONS2, LABYBASE, ...).
 *
 * Layout (big-endian): u16 entry count, u16 entry size (0x1E), then one
 * 30-byte entry per file {14-byte NUL-terminated name, u32 offset of the
 * stored bytes in the part file, u32 packed size, u32 unpacked size, u32
 * unused}, then the data. Equal packed and unpacked sizes mean the bytes are
 * stored as they are; otherwise they are one Delphine packer stream
 * (src/codec/bytekiller.c). A packed size above the unpacked one is invalid.
 *
 * Facts: shared/seeds/delphine-cinematique.txt ("Part file format"),
 * shared/formats/delphine-cinematique.md, and how scummvm-tools'
 * extract_cine reads these files (the tests cross-check with it).
 *
 * There is no magic number, so detection rests on structure: entry size
 * 0x1E, a directory that fits, names of printable characters ending in a
 * NUL, every entry's bytes inside the file after the directory, packed
 * sizes no larger than unpacked ones. Names are checked when the file is
 * opened: a name that could climb out of an output folder refuses the file.
 */
#include "codec/bytekiller.h"
#include "core/bytes.h"
#include "core/module.h"
#include "core/source.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#define PART_ENTRY_SIZE 30
#define PART_NAME_FIELD 14
#define PART_HEADER 4

typedef struct part_entry {
    char name[PART_NAME_FIELD];
    uint8_t name_field[PART_NAME_FIELD]; /* as stored, for the manifest */
    uint32_t offset, packed, unpacked, unused;
    bool damaged; /* its data cannot be read: see check_entry_data */
} part_entry;

typedef struct part_state {
    part_entry *entries;
    size_t count;
    uint64_t dir_end, size;
} part_state;


/* A character the games use in names and that is safe as a file name. */
static bool name_char_ok(uint8_t c)
{
    if (c < 0x20 || c > 0x7e)
        return false;
    return !strchr("/\\:*?\"<>|", c);
}

/* A name field: 1..13 acceptable characters, then a NUL; not "." or "..". */
static bool name_field_ok(const uint8_t *field, size_t *len)
{
    size_t n = 0;
    while (n < PART_NAME_FIELD && field[n])
        n++;
    if (n == 0 || n == PART_NAME_FIELD)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!name_char_ok(field[i]))
            return false;
    if ((n == 1 && field[0] == '.') || (n == 2 && field[0] == '.' && field[1] == '.'))
        return false;
    if (field[0] == ' ' || field[n - 1] == ' ')
        return false;
    *len = n;
    return true;
}

/* Looser than name_field_ok, for detection: printable, NUL-terminated. A
 * name that is unsafe as a file name then gets its own message at open. */
static bool name_field_printable(const uint8_t *field)
{
    size_t n = 0;
    while (n < PART_NAME_FIELD && field[n] >= 0x20 && field[n] < 0x7f)
        n++;
    return n > 0 && n < PART_NAME_FIELD && field[n] == 0;
}

/* One 30-byte directory record: the name field as stored, then four u32BE
 * (offset, packed size, unpacked size, unused). */
static trowel_status read_entry_record(trowel_reader *r, part_entry *e)
{
    trowel_status s = trowel_read_bytes(r, e->name_field, PART_NAME_FIELD);
    if (s == TROWEL_OK && (s = trowel_read_u32be(r, &e->offset)) == TROWEL_OK &&
        (s = trowel_read_u32be(r, &e->packed)) == TROWEL_OK &&
        (s = trowel_read_u32be(r, &e->unpacked)) == TROWEL_OK)
        s = trowel_read_u32be(r, &e->unused);
    size_t n = 0;
    while (n < PART_NAME_FIELD - 1 && e->name_field[n])
        n++;
    memcpy(e->name, e->name_field, n);
    e->name[n] = '\0';
    return s;
}

/* ------------------------------------------------------------- detection */

static int part_bid(trowel_reader *r)
{
    uint16_t count, entry_size;
    if (trowel_read_u16be(r, &count) != TROWEL_OK || trowel_read_u16be(r, &entry_size) != TROWEL_OK)
        return TROWEL_BID_NONE;
    uint64_t size = trowel_reader_size(r);
    uint64_t dir_end = PART_HEADER + (uint64_t)count * PART_ENTRY_SIZE;
    if (entry_size != PART_ENTRY_SIZE || count == 0 || dir_end > size)
        return TROWEL_BID_NONE;
    bool consistent = true, first_at_dir_end = false;
    for (uint16_t i = 0; i < count; i++) {
        part_entry e;
        if (read_entry_record(r, &e) != TROWEL_OK || !name_field_printable(e.name_field))
            return TROWEL_BID_NONE;
        if (i == 0)
            first_at_dir_end = e.offset == dir_end;
        if (e.packed > e.unpacked || (e.packed && e.offset < dir_end) ||
            (uint64_t)e.offset + e.packed > size ||
            (e.packed != e.unpacked && (e.packed < TROWEL_BYTEKILLER_MIN_STREAM || e.packed % 4)))
            consistent = false;
    }
    /* No magic, but every field of every entry agrees with the file: more
     * than a weak guess, less than a magic number. A directory of good
     * names whose first entry starts right after it (32 bits that random
     * data matches once in 4 billion) but with other fields broken is a
     * damaged part file: a weak bid, so that opening it names the fault. */
    if (consistent)
        return TROWEL_BID_WEAK + 30;
    return first_at_dir_end ? TROWEL_BID_WEAK : TROWEL_BID_NONE;
}

/* ---------------------------------------------------------------- reading */

static const char *entry_method(const part_entry *e)
{
    return e->packed == e->unpacked ? "stored" : "bytekiller";
}

/* The name: one that could not be a file name refuses the whole file. */
static trowel_status check_entry_name(trowel_ctx *ctx, const part_entry *e, size_t i)
{
    uint64_t at = PART_HEADER + (uint64_t)i * PART_ENTRY_SIZE;
    size_t len;
    if (!name_field_ok(e->name_field, &len)) {
        char shown[64];
        size_t n = 0;
        for (size_t k = 0; k < PART_NAME_FIELD && e->name_field[k] && n + 5 < sizeof shown; k++) {
            uint8_t c = e->name_field[k];
            n += (size_t)snprintf(shown + n, sizeof shown - n, c >= 0x20 && c < 0x7f ? "%c" : "\\x%02x", c);
        }
        shown[n] = '\0';
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, at,
                           "entry %zu: name \"%s\" is not a valid part-file name (1 to 13 "
                           "printable characters ending in a NUL, no path separators, not . or ..)",
                           i, shown);
    }
    return TROWEL_OK;
}

/* Where the entry's data lies and how big it is: a fault here (a file cut
 * short, a corrupt record) spoils this entry only. */
static trowel_status check_entry_data(trowel_ctx *ctx, const part_entry *e, size_t i,
                                      uint64_t dir_end, uint64_t size)
{
    uint64_t at = PART_HEADER + (uint64_t)i * PART_ENTRY_SIZE;
    if ((uint64_t)e->offset + e->packed > size)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, at + 14,
                           "entry %zu (%s): %lu bytes at offset %lu run past the end of the "
                           "%llu-byte file",
                           i, e->name, (unsigned long)e->packed, (unsigned long)e->offset,
                           (unsigned long long)size);
    if (e->offset < dir_end && e->packed > 0)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, at + 14,
                           "entry %zu (%s): offset %lu lies inside the directory (which ends at "
                           "%llu)",
                           i, e->name, (unsigned long)e->offset, (unsigned long long)dir_end);
    if (e->packed > e->unpacked)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, at + 18,
                           "entry %zu (%s): packed size %lu is larger than the unpacked size %lu",
                           i, e->name, (unsigned long)e->packed, (unsigned long)e->unpacked);
    return TROWEL_OK;
}

static trowel_status add_info(trowel_archive *a, const part_state *st, uint64_t dir_end,
                              uint64_t size)
{
    uint64_t packed = 0, unpacked = 0;
    size_t stored = 0;
    for (size_t i = 0; i < st->count; i++) {
        packed += st->entries[i].packed;
        unpacked += st->entries[i].unpacked;
        stored += st->entries[i].packed == st->entries[i].unpacked;
    }
    trowel_status s;
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", "cine-part")) ||
        (s = trowel_props_add_uint(info, "version", 0)) ||
        (s = trowel_props_add_uint(info, "entry_size", PART_ENTRY_SIZE)) ||
        (s = trowel_props_add_uint(info, "directory_size", dir_end)) ||
        (s = trowel_props_add_uint(info, "file_size", size)) ||
        (s = trowel_props_add_uint(info, "packed_total", packed)) ||
        (s = trowel_props_add_uint(info, "unpacked_total", unpacked)) ||
        (s = trowel_props_add_uint(info, "stored_entries", stored)))
        return s;
    return TROWEL_OK;
}

static trowel_status part_open(trowel_archive *a, trowel_reader *r)
{
    trowel_ctx *ctx = a->ctx;
    uint16_t count, entry_size;
    trowel_status s;
    if ((s = trowel_read_u16be(r, &count)) != TROWEL_OK ||
        (s = trowel_read_u16be(r, &entry_size)) != TROWEL_OK)
        return trowel_fail(ctx, s, 0, "part file header is cut short");
    if (entry_size != PART_ENTRY_SIZE)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, 2,
                           "entry size is %u; part files have 30-byte entries", entry_size);
    uint64_t size = trowel_reader_size(r);
    uint64_t dir_end = PART_HEADER + (uint64_t)count * PART_ENTRY_SIZE;
    if (dir_end > size)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, 0,
                           "directory of %u entries needs %llu bytes but the file has %llu",
                           count, (unsigned long long)dir_end, (unsigned long long)size);
    part_state *st;
    s = trowel_mem_new_zeroed(ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    s = trowel_mem_new_zeroed(ctx, count ? count : 1, sizeof *st->entries, &st->entries);
    if (s != TROWEL_OK)
        return s;
    st->count = count;
    st->dir_end = dir_end;
    st->size = size;
    for (size_t i = 0; i < count; i++) {
        part_entry *e = &st->entries[i];
        if ((s = read_entry_record(r, e)) != TROWEL_OK ||
            (s = check_entry_name(ctx, e, i)) != TROWEL_OK)
            return s;
        trowel_error saved = ctx->last_error;
        if (check_entry_data(ctx, e, i, dir_end, size) != TROWEL_OK) {
            /* The rest of the file may be fine: list it all, read what can be. */
            e->damaged = true;
            trowel_warn(ctx, ctx->last_error.offset, "%s", ctx->last_error.message);
            trowel_archive_mark_damaged(a);
        }
        ctx->last_error = saved;
    }
    if ((s = add_info(a, st, dir_end, size)) != TROWEL_OK)
        return s;
    for (size_t i = 0; i < count; i++) {
        const part_entry *pe = &st->entries[i];
        trowel_entry e = {.name = pe->name, .size = pe->unpacked, .packed_size = pe->packed,
                          .offset = pe->offset, .method = entry_method(pe), .index = i};
        trowel_props *extra;
        if ((s = trowel_archive_add(a, &e, &extra)) != TROWEL_OK)
            return s;
        if (pe->unused && (s = trowel_props_add_hex(extra, "unused", pe->unused)) != TROWEL_OK)
            return s;
    }
    return TROWEL_OK;
}

static trowel_status part_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    const part_state *st = a->priv;
    const part_entry *e = &st->entries[index];
    if (e->damaged)
        return check_entry_data(a->ctx, e, index, st->dir_end, st->size);
    trowel_reader whole, data;
    trowel_reader_init(&whole, a->ctx, a->in);
    trowel_status s = trowel_reader_sub(&whole, e->offset, e->packed, &data);
    if (s != TROWEL_OK)
        return s;
    if (e->packed == e->unpacked)
        return trowel_reader_copy_to(&data, out);
    return trowel_bytekiller_decode(a->ctx, &data, e->unpacked, out);
}

/* Checks beyond decoding every entry: names unique, stored bytes of
 * different entries not overlapping. */
static trowel_status part_verify(trowel_archive *a)
{
    const part_state *st = a->priv;
    trowel_ctx *ctx = a->ctx;
    for (size_t i = 0; i < st->count; i++) {
        const part_entry *e = &st->entries[i];
        for (size_t j = 0; j < i; j++) {
            const part_entry *f = &st->entries[j];
            if (strcmp(e->name, f->name) == 0) {
                trowel_fail(ctx, TROWEL_ERR_VERIFY, PART_HEADER + (uint64_t)i * PART_ENTRY_SIZE,
                            "entry %zu repeats the name %s of entry %zu", i, e->name, j);
                trowel_archive_report(a);
            }
            uint64_t e_end = (uint64_t)e->offset + e->packed, f_end = (uint64_t)f->offset + f->packed;
            if (e->packed && f->packed && e->offset < f_end && f->offset < e_end) {
                trowel_fail(ctx, TROWEL_ERR_VERIFY, e->offset,
                            "entry %zu (%s) shares stored bytes with entry %zu (%s)", i, e->name,
                            j, f->name);
                trowel_archive_report(a);
            }
        }
    }
    return TROWEL_OK;
}

/* --------------------------------------------------------------- manifest */

/* Whether the stored bytes follow the directory in directory order with no
 * gap, as trowel writes them. */
static bool sequential_layout(const part_state *st)
{
    uint64_t at = PART_HEADER + (uint64_t)st->count * PART_ENTRY_SIZE;
    for (size_t i = 0; i < st->count; i++) {
        if (st->entries[i].offset != at)
            return false;
        at += st->entries[i].packed;
    }
    return true;
}

static trowel_status part_manifest(trowel_archive *a, json_object *m)
{
    const part_state *st = a->priv;
    json_object *entries;
    if (!json_object_object_get_ex(m, "entries", &entries))
        return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET, "manifest has no entries");
    json_object_object_add(m, "layout",
                           json_object_new_string(sequential_layout(st) ? "sequential" : "other"));
    for (size_t i = 0; i < st->count; i++) {
        const part_entry *e = &st->entries[i];
        json_object *o = json_object_array_get_idx(entries, i);
        json_object_object_add(o, "stored", json_object_new_boolean(e->packed == e->unpacked));
        size_t n = strlen(e->name);
        bool pad_zero = true;
        for (size_t k = n; k < PART_NAME_FIELD; k++)
            pad_zero = pad_zero && e->name_field[k] == 0;
        if (!pad_zero) {
            char hex[2 * PART_NAME_FIELD + 1];
            trowel_hex_encode(e->name_field, PART_NAME_FIELD, hex);
            json_object_object_add(o, "name_field", json_object_new_string(hex));
        }
        if (e->unused)
            json_object_object_add(o, "unused", json_object_new_int64(e->unused));
    }
    return TROWEL_OK;
}

static void part_close(trowel_archive *a)
{
    part_state *st = a->priv;
    if (!st)
        return;
    trowel_mem_free(a->ctx, st->entries);
    trowel_mem_free(a->ctx, st);
}

/* ---------------------------------------------------------------- creating */

/* -O options (create's): core checks them against these rows first. */
static const trowel_option_info part_options[] = {
    {.key = "method", .value = "auto|stored",
     .help = "pack entries where that shrinks them (default), or store every entry as it is",
     .targets = "create", .type = TROWEL_OPTION_CHOICE, .def = "auto"},
    {0},
};

typedef struct new_entry {
    uint8_t field[PART_NAME_FIELD];
    uint8_t *bytes; /* what goes into the file */
    uint32_t packed, unpacked, unused;
} new_entry;

/* The manifest's record for entry i, or NULL. */
static json_object *manifest_entry(json_object *manifest, size_t i)
{
    json_object *entries;
    if (!manifest || !json_object_object_get_ex(manifest, "entries", &entries) ||
        !json_object_is_type(entries, json_type_array) || i >= json_object_array_length(entries))
        return NULL;
    return json_object_array_get_idx(entries, i);
}

/* Reads one source and packs it (or keeps it as it is). */
static trowel_status build_entry(trowel_ctx *ctx, const trowel_source *src, json_object *rec,
                                 bool never_pack, new_entry *ne)
{
    size_t len = strlen(src->name);
    memset(ne->field, 0, sizeof ne->field);
    if (len < PART_NAME_FIELD)
        memcpy(ne->field, src->name, len);
    json_object *v;
    if (rec && json_object_object_get_ex(rec, "name_field", &v)) {
        uint8_t field[PART_NAME_FIELD];
        if (!trowel_hex_decode(json_object_get_string(v), field, sizeof field) ||
            memcmp(field, src->name, len < sizeof field ? len : sizeof field) != 0)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                               "manifest name_field of %s is not 28 hex digits holding the name",
                               src->name);
        memcpy(ne->field, field, sizeof field);
    }
    size_t name_len;
    if (len >= PART_NAME_FIELD || !name_field_ok(ne->field, &name_len) || name_len != len)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "\"%s\" cannot be stored in a part file: names are 1 to 13 printable "
                           "characters without path separators",
                           src->name);
    ne->unused = 0;
    if (rec && json_object_object_get_ex(rec, "unused", &v))
        ne->unused = (uint32_t)json_object_get_int64(v);
    bool stored = never_pack;
    if (rec && json_object_object_get_ex(rec, "stored", &v) && json_object_get_boolean(v))
        stored = true;

    trowel_input *in;
    trowel_status s = trowel_source_open(ctx, src, &in);
    if (s != TROWEL_OK)
        return s;
    uint8_t *data = NULL;
    size_t size = 0;
    if (trowel_input_size(in) > UINT32_MAX) {
        s = trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                        "part files record sizes in 32 bits: %s is too large", src->name);
    } else {
        trowel_reader r;
        trowel_reader_init(&r, ctx, in);
        s = trowel_reader_load(&r, &data, &size);
    }
    trowel_input_close(in);
    if (s != TROWEL_OK)
        return s;
    ne->unpacked = (uint32_t)size;
    ne->bytes = data;
    ne->packed = (uint32_t)size;
    if (stored || size == 0)
        return TROWEL_OK;
    uint8_t *packed;
    size_t packed_len;
    if ((s = trowel_bytekiller_encode(ctx, data, size, &packed, &packed_len)) != TROWEL_OK)
        return s;
    if (packed_len < size && trowel_bytekiller_in_place_safe(ctx, packed, packed_len, size)) {
        /* Packing shrank it, and the stream also unpacks in place (the
         * way Bytekiller decrunchers work): keep the packed bytes. */
        trowel_mem_free(ctx, data);
        ne->bytes = packed;
        ne->packed = (uint32_t)packed_len;
    } else {
        trowel_mem_free(ctx, packed);
    }
    return TROWEL_OK;
}

static trowel_status write_part(trowel_ctx *ctx, const new_entry *ne, size_t n, trowel_sink *out)
{
    uint8_t head[PART_HEADER] = {(uint8_t)(n >> 8), (uint8_t)n, 0, PART_ENTRY_SIZE};
    trowel_status s = trowel_sink_write(out, head, sizeof head);
    uint64_t at = PART_HEADER + (uint64_t)n * PART_ENTRY_SIZE;
    for (size_t i = 0; s == TROWEL_OK && i < n; i++) {
        if (at > UINT32_MAX)
            return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                               "the entries pass 4 GiB: part-file offsets have 32 bits");
        uint8_t raw[PART_ENTRY_SIZE];
        memcpy(raw, ne[i].field, PART_NAME_FIELD);
        trowel_put_be32(raw + 14, (uint32_t)at);
        trowel_put_be32(raw + 18, ne[i].packed);
        trowel_put_be32(raw + 22, ne[i].unpacked);
        trowel_put_be32(raw + 26, ne[i].unused);
        s = trowel_sink_write(out, raw, sizeof raw);
        at += ne[i].packed;
    }
    for (size_t i = 0; s == TROWEL_OK && i < n; i++)
        if (ne[i].packed)
            s = trowel_sink_write(out, ne[i].bytes, ne[i].packed);
    return s;
}

static trowel_status part_create(trowel_ctx *ctx, const trowel_create_params *p,
                                 json_object *manifest, trowel_sink *out)
{
    trowel_status s = TROWEL_OK;
    trowel_option_values o =
        trowel_option_values_of(part_options, "create", p->options, p->option_count);
    if (p->source_count > 0xFFFF)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "a part file holds at most 65535 entries (%zu given)", p->source_count);
    new_entry *ne;
    s = trowel_mem_new_zeroed(ctx, p->source_count ? p->source_count : 1, sizeof *ne, &ne);
    if (s != TROWEL_OK)
        return s;
    bool never_pack = strcmp(trowel_option_str(&o, "method"), "stored") == 0;
    for (size_t i = 0; s == TROWEL_OK && i < p->source_count; i++) {
        trowel_set_entry(ctx, p->sources[i].name);
        s = build_entry(ctx, &p->sources[i], manifest_entry(manifest, i), never_pack, &ne[i]);
        trowel_progress(ctx, i + 1, p->source_count);
    }
    if (s == TROWEL_OK) {
        trowel_set_entry(ctx, NULL);
        s = write_part(ctx, ne, p->source_count, out);
    }
    for (size_t i = 0; i < p->source_count; i++)
        trowel_mem_free(ctx, ne[i].bytes);
    trowel_mem_free(ctx, ne);
    return s;
}

const trowel_format trowel_format_cine_part = {
    .id = "cine-part",
    .stored_entries_in_input = true,
    .family = "cinematique",
    .description = "Delphine Cinematique part file (Future Wars, Operation Stealth resources)",
    .extensions = "",
    .caps = TROWEL_CAP_LIST | TROWEL_CAP_CREATE | TROWEL_CAP_VERIFY | TROWEL_CAP_MANIFEST,
    .options = part_options,
    .convert_targets = "",
    .bid = part_bid,
    .open = part_open,
    .read_entry = part_read_entry,
    .verify = part_verify,
    .manifest = part_manifest,
    .create = part_create,
    .close = part_close,
};
