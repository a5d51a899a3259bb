/*
 * VOL.CNF: Operation Stealth's table of which resource files live in which
 * part file ("volume") and on which disk.
 *
 * The file may start with an 8-byte field whose first 7 bytes are
 * "ABASECP", then u32BE unpacked size and u32BE packed size; the rest is
 * then one Delphine packer stream (src/codec/bytekiller.c) holding the body.
 * The body (big-endian): i16 volume count, i16 entry size (20), count
 * entries {10-byte volume name, u32 unused, i16 disk number, u32 size},
 * then for each volume a u32 byte length and a list of names, 11 or 13
 * bytes each. The width is the one that divides every list's length; when
 * both do, compressed files use 11 and plain ones 13. 11-byte names are 8
 * name characters and 3 extension characters padded with spaces and no dot
 * ("GIRL    SET" is GIRL.SET); 13-byte names are NUL-terminated.
 *
 * Facts: shared/seeds/delphine-cinematique.txt ("VOL.CNF"),
 * shared/formats/delphine-cinematique.md, and scummvm-tools' extract_cine,
 * which the tests use as a cross-check.
 *
 * Entries are the listed resource files, named VOLUME/NAME so that a name
 * listed in two volumes stays two entries and extraction writes
 * DIR/VOLUME/NAME. Their bytes come from the volume's part file BESIDE
 * VOL.CNF (same folder; the name as listed, else any case), found through
 * the context's open hook and read with the library's cine-part format; list shows sizes where the
 * volume is there. create builds VOL.CNF from part files (-O names=11|13,
 * -O compress=1, -O disk=N).
 */
#include "codec/bytekiller.h"
#include "core/bytes.h"
#include "core/module.h"
#include "core/source.h"

#include <ctype.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VOL_ENTRY_SIZE 20
#define VOL_NAME_FIELD 10
#define VOL_NAME_MAX 8 /* what extract_cine and the engine read of a volume name */
#define PACKED_HEADER 16

static const char abasecp[7] = {'A', 'B', 'A', 'S', 'E', 'C', 'P'};

typedef struct vol_volume {
    char name[VOL_NAME_FIELD + 1];
    int16_t disk;
    uint32_t size;
    size_t first, count; /* its files in the entry table */
    /* the part file beside VOL.CNF, opened on first use */
    trowel_input *in;
    trowel_archive *part;
    bool tried;
    bool warned;           /* open said it cannot be read */
    trowel_status failed;  /* why it could not be opened */
    char why[300];
} vol_volume;

typedef struct vol_state {
    vol_volume *volumes;
    size_t volume_count;
    size_t *entry_volume; /* per entry: its volume */
    char **file_names;    /* per entry: the name inside the volume */
    size_t entry_count;
    char *base;           /* VOL.CNF's input name: volumes are its siblings */
} vol_state;


static bool safe_char(uint8_t c)
{
    return c > 0x20 && c < 0x7f && !strchr("/\\:*?\"<>|", c);
}

/* An 11-byte name (8 + 3, space padded) as NAME.EXT; false if malformed. */
static bool name_from_11(const uint8_t *f, char *out)
{
    size_t n = 0;
    while (n < 8 && f[n] != ' ')
        n++;
    for (size_t i = n; i < 8; i++)
        if (f[i] != ' ')
            return false;
    size_t x = 0;
    while (x < 3 && f[8 + x] != ' ')
        x++;
    for (size_t i = x; i < 3; i++)
        if (f[8 + i] != ' ')
            return false;
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!safe_char(f[i]) || f[i] == '.')
            return false;
    for (size_t i = 0; i < x; i++)
        if (!safe_char(f[8 + i]) || f[8 + i] == '.')
            return false;
    memcpy(out, f, n);
    if (x) {
        out[n] = '.';
        memcpy(out + n + 1, f + 8, x);
        n += 1 + x;
    }
    out[n] = '\0';
    return true;
}

/* A 13-byte NUL-terminated name; false if malformed. */
static bool name_from_13(const uint8_t *f, char *out)
{
    size_t n = 0;
    while (n < 13 && f[n])
        n++;
    if (n == 0 || n == 13)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!safe_char(f[i]))
            return false;
    if ((n == 1 && f[0] == '.') || (n == 2 && f[0] == '.' && f[1] == '.'))
        return false;
    memcpy(out, f, n);
    out[n] = '\0';
    return true;
}

/* ----------------------------------------------------------- the body */

/* Which name width fits every list: 11, 13, or 0 for neither. Reads the
 * list lengths through r (positioned after the volume table). */
static unsigned name_width(trowel_reader *r, size_t volumes, bool compressed)
{
    bool all11 = true, all13 = true;
    for (size_t i = 0; i < volumes; i++) {
        uint32_t len;
        if (trowel_read_u32be(r, &len) != TROWEL_OK || trowel_reader_skip(r, len) != TROWEL_OK)
            return 0;
        all11 = all11 && len % 11 == 0;
        all13 = all13 && len % 13 == 0;
    }
    if (all11 && all13)
        return compressed ? 11 : 13;
    return all11 ? 11 : all13 ? 13 : 0;
}

/* Structure only (for detection): a volume table and lists that fit. */
static bool body_plausible(trowel_reader *r)
{
    uint16_t count, entry_size;
    if (trowel_read_u16be(r, &count) != TROWEL_OK || trowel_read_u16be(r, &entry_size) != TROWEL_OK ||
        count == 0 || count > 0x7fff || entry_size != VOL_ENTRY_SIZE)
        return false;
    for (uint16_t i = 0; i < count; i++) {
        uint8_t e[VOL_ENTRY_SIZE];
        if (trowel_read_bytes(r, e, sizeof e) != TROWEL_OK || !safe_char(e[0]))
            return false;
        for (size_t k = 1; k < VOL_NAME_FIELD && e[k]; k++)
            if (!safe_char(e[k]) && e[k] != ' ')
                return false;
    }
    if (name_width(r, count, false) == 0)
        return false;
    return trowel_reader_remaining(r) == 0;
}

static int vol_bid(trowel_reader *r)
{
    uint8_t magic[8];
    if (trowel_reader_size(r) >= PACKED_HEADER && trowel_read_bytes(r, magic, 8) == TROWEL_OK &&
        memcmp(magic, abasecp, sizeof abasecp) == 0) {
        uint32_t unpacked, packed;
        if (trowel_read_u32be(r, &unpacked) != TROWEL_OK || trowel_read_u32be(r, &packed) != TROWEL_OK)
            return TROWEL_BID_MAGIC;
        bool fits = (uint64_t)packed + PACKED_HEADER == trowel_reader_size(r) &&
                    packed >= TROWEL_BYTEKILLER_MIN_STREAM && packed % 4 == 0;
        return fits ? TROWEL_BID_STRONG : TROWEL_BID_MAGIC;
    }
    trowel_reader whole;
    if (trowel_reader_sub(r, 0, trowel_reader_size(r), &whole) != TROWEL_OK)
        return TROWEL_BID_NONE;
    /* No magic: every list must fit and end exactly at the file's end. */
    return body_plausible(&whole) ? TROWEL_BID_WEAK + 25 : TROWEL_BID_NONE;
}

static trowel_status parse_body(trowel_archive *a, trowel_reader *r, bool compressed,
                                unsigned *width_out)
{
    trowel_ctx *ctx = a->ctx;
    vol_state *st = a->priv;
    uint16_t count, entry_size;
    trowel_status s;
    if ((s = trowel_read_u16be(r, &count)) != TROWEL_OK ||
        (s = trowel_read_u16be(r, &entry_size)) != TROWEL_OK)
        return s;
    if (count > 0x7fff || entry_size != VOL_ENTRY_SIZE)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "VOL.CNF body: %u volumes of %u bytes each; the known layout has "
                           "20-byte entries",
                           count, entry_size);
    s = trowel_mem_new_zeroed(ctx, count ? count : 1, sizeof *st->volumes, &st->volumes);
    if (s != TROWEL_OK)
        return s;
    st->volume_count = count;
    for (size_t i = 0; i < count; i++) {
        /* {10-char name, u32 unused, i16BE disk, u32BE size} */
        uint8_t e[VOL_NAME_FIELD];
        uint16_t disk;
        vol_volume *v = &st->volumes[i];
        if ((s = trowel_read_bytes(r, e, sizeof e)) != TROWEL_OK ||
            (s = trowel_reader_skip(r, 4)) != TROWEL_OK ||
            (s = trowel_read_u16be(r, &disk)) != TROWEL_OK ||
            (s = trowel_read_u32be(r, &v->size)) != TROWEL_OK)
            return s;
        size_t n = 0;
        while (n < VOL_NAME_FIELD && e[n] && e[n] != ' ')
            n++;
        memcpy(v->name, e, n);
        v->name[n] = '\0';
        for (size_t k = 0; k < n; k++)
            if (!safe_char(e[k]))
                n = 0;
        if (n == 0 || strcmp(v->name, "..") == 0 || strcmp(v->name, ".") == 0)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                               "volume %zu has no valid name", i);
        v->disk = (int16_t)disk;
    }
    trowel_reader lists = *r;
    unsigned width = name_width(&lists, count, compressed);
    if (width == 0)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "the file lists do not fit: their lengths are not all multiples of "
                           "11 or all of 13, or they run past the end");
    *width_out = width;
    /* Count the names first, then read them. */
    size_t total = 0;
    lists = *r;
    for (size_t i = 0; i < count; i++) {
        uint32_t len;
        if ((s = trowel_read_u32be(&lists, &len)) != TROWEL_OK ||
            (s = trowel_reader_skip(&lists, len)) != TROWEL_OK)
            return s;
        total += len / width;
    }
    s = trowel_mem_new_zeroed(ctx, total ? total : 1, sizeof *st->entry_volume, &st->entry_volume);
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, total ? total : 1, sizeof(char *), &st->file_names);
    if (s != TROWEL_OK)
        return s;
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t len;
        if ((s = trowel_read_u32be(r, &len)) != TROWEL_OK)
            return s;
        st->volumes[i].first = k;
        st->volumes[i].count = len / width;
        for (size_t j = 0; j < len / width; j++, k++) {
            uint8_t f[13];
            char name[16];
            if ((s = trowel_read_bytes(r, f, width)) != TROWEL_OK)
                return s;
            bool ok = width == 11 ? name_from_11(f, name) : name_from_13(f, name);
            if (!ok)
                return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                                   "volume %s: file name %zu is not a valid %u-character name",
                                   st->volumes[i].name, j, width);
            st->entry_volume[k] = i;
            if ((s = trowel_mem_dup(ctx, name, &st->file_names[k])) != TROWEL_OK)
                return s;
            st->entry_count = k + 1;
        }
    }
    if (trowel_reader_remaining(r) != 0)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "%llu bytes follow the last file list",
                           (unsigned long long)trowel_reader_remaining(r));
    return TROWEL_OK;
}

/* ---------------------------------------------------------- volumes */

/* The warning handler while a volume opens: its warnings name it. */
typedef struct volume_warnings {
    trowel_warning_fn fn;
    void *user;
    const char *volume;
} volume_warnings;

static void warn_naming_volume(void *user, const trowel_error *w)
{
    const volume_warnings *vw = user;
    trowel_error named = *w;
    snprintf(named.message, sizeof named.message, "volume %s: %.400s", vw->volume, w->message);
    vw->fn(vw->user, &named);
}

static trowel_status open_part_naming_volume(trowel_ctx *ctx, trowel_input *in,
                                             const trowel_format *part, const char *volume,
                                             trowel_archive **out)
{
    volume_warnings vw = {ctx->warn_fn, ctx->warn_user, volume};
    if (vw.fn)
        trowel_ctx_set_warning_handler(ctx, warn_naming_volume, &vw);
    trowel_status s = trowel_archive_open(ctx, in, part, out);
    if (vw.fn)
        trowel_ctx_set_warning_handler(ctx, vw.fn, vw.user);
    return s;
}

/* Opens the volume's part file beside VOL.CNF, once; NULL part if absent. */
static trowel_status open_volume(trowel_ctx *ctx, const vol_state *st, vol_volume *v)
{
    if (v->tried)
        return v->part ? TROWEL_OK : trowel_fail(ctx, v->failed, TROWEL_NO_OFFSET, "%s", v->why);
    v->tried = true;
    v->failed = TROWEL_ERR_IO;
    snprintf(v->why, sizeof v->why, "volume %s is not beside VOL.CNF", v->name);
    const trowel_format *part = trowel_format_find("cine-part");
    trowel_input *in;
    trowel_error saved = ctx->last_error;
    if (part && trowel_open_related(ctx, st->base, v->name, &in) == TROWEL_OK) {
        trowel_archive *pa;
        trowel_status s = open_part_naming_volume(ctx, in, part, v->name, &pa);
        if (s != TROWEL_OK) {
            trowel_input_close(in);
            v->failed = s;
            snprintf(v->why, sizeof v->why, "volume %s: %.250s", v->name, ctx->last_error.message);
            return trowel_fail(ctx, s, TROWEL_NO_OFFSET, "%s", v->why);
        }
        v->in = in;
        v->part = pa;
        return TROWEL_OK;
    }
    ctx->last_error = saved;
    return trowel_fail(ctx, v->failed, TROWEL_NO_OFFSET, "%s", v->why);
}

/* The index of name in the volume's part file, or SIZE_MAX. */
static size_t find_in_volume(const vol_volume *v, const char *name)
{
    for (size_t i = 0; i < trowel_archive_entry_count(v->part); i++)
        if (strcmp(trowel_archive_entry(v->part, i)->name, name) == 0)
            return i;
    return SIZE_MAX;
}

/* ---------------------------------------------------------- open */

static trowel_status load_body(trowel_archive *a, trowel_reader *r, bool *compressed,
                               uint8_t **body, size_t *body_len, uint32_t *packed_size)
{
    trowel_ctx *ctx = a->ctx;
    uint8_t magic[8] = {0};
    *compressed = false;
    *body = NULL;
    if (trowel_reader_size(r) >= PACKED_HEADER) {
        trowel_reader head = *r;
        trowel_status s = trowel_read_bytes(&head, magic, 8);
        if (s != TROWEL_OK)
            return s;
        *compressed = memcmp(magic, abasecp, sizeof abasecp) == 0;
    }
    if (!*compressed)
        return trowel_reader_load(r, body, body_len);
    uint32_t unpacked, packed;
    trowel_status s;
    if ((s = trowel_reader_skip(r, 8)) != TROWEL_OK || (s = trowel_read_u32be(r, &unpacked)) != TROWEL_OK ||
        (s = trowel_read_u32be(r, &packed)) != TROWEL_OK)
        return s;
    *packed_size = packed;
    if ((uint64_t)packed + PACKED_HEADER != trowel_reader_size(r))
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, 12,
                           "header says %lu packed bytes but %llu follow it", (unsigned long)packed,
                           (unsigned long long)(trowel_reader_size(r) - PACKED_HEADER));
    trowel_sink *sink;
    if ((s = trowel_sink_open_memory(ctx, &sink)) != TROWEL_OK)
        return s;
    s = trowel_bytekiller_decode(ctx, r, unpacked, sink);
    if (s == TROWEL_OK) {
        size_t n;
        const uint8_t *d = trowel_sink_data(sink, &n);
        if ((s = trowel_mem_dup_bytes(ctx, d, n, body)) == TROWEL_OK)
            *body_len = n;
    }
    trowel_sink_discard(sink);
    return s;
}

/* Marks the archive damaged when an entry cannot be read: its volume is
 * missing or unreadable (said once per volume), the volume does not hold
 * it, or the volume's part file is itself damaged (it warned). */
static void note_unreadable(trowel_archive *a, vol_volume *v, bool present, bool absent,
                            const char *name)
{
    trowel_ctx *ctx = a->ctx;
    if (!present && !v->warned) {
        trowel_warn(ctx, TROWEL_NO_OFFSET, "%s: its files cannot be read", v->why);
        v->warned = true;
    } else if (present && absent) {
        trowel_warn(ctx, TROWEL_NO_OFFSET, "VOL.CNF lists %s in volume %s, which does not hold it",
                    name, v->name);
    }
    if (!present || absent || trowel_archive_damaged(v->part))
        trowel_archive_mark_damaged(a);
}

static trowel_status add_entries(trowel_archive *a, vol_state *st)
{
    trowel_ctx *ctx = a->ctx;
    for (size_t k = 0; k < st->entry_count; k++) {
        vol_volume *v = &st->volumes[st->entry_volume[k]];
        char name[64];
        snprintf(name, sizeof name, "%s/%s", v->name, st->file_names[k]);
        trowel_entry e = {.name = name, .method = "absent", .index = k};
        trowel_error saved = ctx->last_error;
        bool present = open_volume(ctx, st, v) == TROWEL_OK;
        ctx->last_error = saved;
        size_t at = present ? find_in_volume(v, st->file_names[k]) : SIZE_MAX;
        note_unreadable(a, v, present, at == SIZE_MAX, st->file_names[k]);
        if (at != SIZE_MAX) {
            const trowel_entry *pe = trowel_archive_entry(v->part, at);
            e.size = pe->size;
            e.packed_size = pe->packed_size;
            e.offset = pe->offset;
            e.method = pe->method;
        }
        trowel_props *extra;
        trowel_status s;
        if ((s = trowel_archive_add(a, &e, &extra)) != TROWEL_OK ||
            (s = trowel_props_add_str(extra, "volume", v->name)) != TROWEL_OK ||
            (s = trowel_props_add_int(extra, "disk", v->disk)) != TROWEL_OK ||
            (s = trowel_props_add_bool(extra, "present", at != SIZE_MAX)) != TROWEL_OK)
            return s;
    }
    return TROWEL_OK;
}

static trowel_status vol_open(trowel_archive *a, trowel_reader *r)
{
    trowel_ctx *ctx = a->ctx;
    vol_state *st;
    trowel_status s = trowel_mem_new_zeroed(ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    if ((s = trowel_mem_dup(ctx, trowel_input_name(a->in), &st->base)) != TROWEL_OK)
        return s;
    bool compressed;
    uint8_t *body;
    size_t body_len = 0;
    uint32_t packed = 0;
    s = load_body(a, r, &compressed, &body, &body_len, &packed);
    if (s != TROWEL_OK)
        return s;
    trowel_input *mem;
    unsigned width = 0;
    s = trowel_input_open_memory(ctx, body, body_len, "VOL.CNF body", &mem);
    if (s == TROWEL_OK) {
        trowel_reader br;
        trowel_reader_init(&br, ctx, mem);
        s = parse_body(a, &br, compressed, &width);
        trowel_input_close(mem);
    }
    trowel_mem_free(ctx, body);
    if (s != TROWEL_OK)
        return s;
    const char **vnames;
    s = trowel_mem_new_zeroed(ctx, st->volume_count + 1, sizeof *vnames, &vnames);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < st->volume_count; i++)
        vnames[i] = st->volumes[i].name;
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", "cine-volcnf")) ||
        (s = trowel_props_add_uint(info, "version", 0)) ||
        (s = trowel_props_add_bool(info, "compressed", compressed)) ||
        (compressed && (s = trowel_props_add_uint(info, "body_size", body_len))) ||
        (compressed && (s = trowel_props_add_uint(info, "packed_size", packed))) ||
        (s = trowel_props_add_uint(info, "name_width", width)) ||
        (s = trowel_props_add_uint(info, "volume_count", st->volume_count)) ||
        (s = trowel_props_add_list(info, "volumes", vnames, st->volume_count))) {
        trowel_mem_free(ctx, vnames);
        return s;
    }
    trowel_mem_free(ctx, vnames);
    return add_entries(a, st);
}

static trowel_status vol_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    vol_state *st = a->priv;
    trowel_ctx *ctx = a->ctx;
    vol_volume *v = &st->volumes[st->entry_volume[index]];
    const char *name = st->file_names[index];
    trowel_status s = open_volume(ctx, st, v);
    if (s != TROWEL_OK)
        return s;
    size_t at = find_in_volume(v, name);
    if (at == SIZE_MAX)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "VOL.CNF lists %s in volume %s, which does not hold it", name, v->name);
    s = trowel_archive_read_entry(v->part, at, out);
    trowel_set_entry(ctx, a->entries[index].name);
    if (s != TROWEL_OK)
        return trowel_fail(ctx, s, ctx->last_error.offset, "volume %s: %s", v->name,
                           ctx->last_error.message);
    return TROWEL_OK;
}

static void vol_close(trowel_archive *a)
{
    vol_state *st = a->priv;
    if (!st)
        return;
    for (size_t i = 0; i < st->volume_count; i++) {
        if (st->volumes[i].part)
            trowel_archive_close(st->volumes[i].part);
        if (st->volumes[i].in)
            trowel_input_close(st->volumes[i].in);
    }
    for (size_t k = 0; k < st->entry_count; k++)
        trowel_mem_free(a->ctx, st->file_names[k]);
    trowel_mem_free(a->ctx, st->file_names);
    trowel_mem_free(a->ctx, st->entry_volume);
    trowel_mem_free(a->ctx, st->volumes);
    trowel_mem_free(a->ctx, st->base);
    trowel_mem_free(a->ctx, st);
}

/* ---------------------------------------------------------- create */

/* -O options (create's): core checks them against these rows first. */
static const trowel_option_info vol_options[] = {
    {.key = "names", .value = "11|13",
     .help = "width of the file names (default 13, 11 with compress=1)", .targets = "create",
     .type = TROWEL_OPTION_CHOICE},
    {.key = "compress", .value = "0|1",
     .help = "pack the body behind an ABASECP header (default 0)", .targets = "create",
     .type = TROWEL_OPTION_BOOL, .def = "0"},
    {.key = "disk", .value = "N", .help = "disk number recorded for every volume (default 1)",
     .targets = "create", .type = TROWEL_OPTION_UINT, .min = 0, .max = 32767, .def = "1"},
    {0},
};

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* NAME.EXT as 8 + 3 space-padded bytes; false if it does not fit. */
static bool name_to_11(const char *name, uint8_t *f)
{
    const char *dot = strchr(name, '.');
    size_t n = dot ? (size_t)(dot - name) : strlen(name);
    size_t x = dot ? strlen(dot + 1) : 0;
    if (n == 0 || n > 8 || x > 3 || (dot && (x == 0 || strchr(dot + 1, '.'))) || strchr(name, ' '))
        return false;
    memset(f, ' ', 11);
    memcpy(f, name, n);
    if (x)
        memcpy(f + 8, dot + 1, x);
    return true;
}

typedef struct out_buf {
    uint8_t *p;
    size_t len, cap;
} out_buf;

static trowel_status out_put(trowel_ctx *ctx, out_buf *b, const void *d, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n)
            cap *= 2;
        trowel_status s = trowel_mem_resize(ctx, &b->p, cap);
        if (s != TROWEL_OK)
            return s;
        b->cap = cap;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
    return TROWEL_OK;
}

/* Appends one volume's name list (u32 length, then the names). */
static trowel_status add_list(trowel_ctx *ctx, out_buf *lists, trowel_archive *pa,
                              unsigned width, const char *volume)
{
    size_t n = trowel_archive_entry_count(pa);
    uint8_t len[4];
    trowel_put_be32(len, (uint32_t)(n * width));
    trowel_status s = out_put(ctx, lists, len, 4);
    for (size_t i = 0; s == TROWEL_OK && i < n; i++) {
        const char *name = trowel_archive_entry(pa, i)->name;
        uint8_t f[13] = {0};
        if (width == 11 ? !name_to_11(name, f) : strlen(name) > 12)
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "volume %s: %s does not fit a %u-character name", volume, name,
                               width);
        if (width == 13)
            memcpy(f, name, strlen(name));
        s = out_put(ctx, lists, f, width);
    }
    return s;
}

static trowel_status build_body(trowel_ctx *ctx, const trowel_create_params *p, unsigned width,
                                int disk, out_buf *body)
{
    out_buf lists = {0};
    uint8_t head[4];
    trowel_put_be16(head, (unsigned)p->source_count);
    trowel_put_be16(head + 2, VOL_ENTRY_SIZE);
    trowel_status s = out_put(ctx, body, head, 4);
    const trowel_format *part = trowel_format_find("cine-part");
    for (size_t i = 0; s == TROWEL_OK && i < p->source_count; i++) {
        const char *vname = base_name(p->sources[i].name);
        trowel_set_entry(ctx, vname);
        if (strlen(vname) == 0 || strlen(vname) > VOL_NAME_MAX || strchr(vname, ' ')) {
            s = trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                            "volume name \"%s\" must have 1 to 8 characters", vname);
            break;
        }
        trowel_input *in;
        trowel_archive *pa;
        if ((s = trowel_source_open(ctx, &p->sources[i], &in)) != TROWEL_OK)
            break;
        s = trowel_archive_open(ctx, in, part, &pa);
        if (s == TROWEL_OK) {
            uint8_t e[VOL_ENTRY_SIZE] = {0};
            memcpy(e, vname, strlen(vname));
            trowel_put_be16(e + 14, (unsigned)(uint16_t)disk);
            trowel_put_be32(e + 16, (uint32_t)trowel_input_size(in));
            s = out_put(ctx, body, e, sizeof e);
            if (s == TROWEL_OK)
                s = add_list(ctx, &lists, pa, width, vname);
            trowel_archive_close(pa);
        } else {
            s = trowel_fail(ctx, s, TROWEL_NO_OFFSET, "%s is not a part file: %s", vname,
                            ctx->last_error.message);
        }
        trowel_input_close(in);
    }
    if (s == TROWEL_OK)
        s = out_put(ctx, body, lists.p, lists.len);
    trowel_mem_free(ctx, lists.p);
    return s;
}

/* Volumes are named after their file's last part: a/PART01 and b/PART01
 * would be one name twice. Refused, or with keep_last the later kept: *kept
 * is p with those sources only (*sources the caller frees). */
static trowel_status unique_volumes(trowel_ctx *ctx, const trowel_create_params *p,
                                    trowel_create_params *kept, trowel_source **sources)
{
    *kept = *p;
    size_t n = p->source_count;
    const char **stored;
    bool *keep = NULL;
    *sources = NULL;
    trowel_status s = trowel_mem_new_zeroed(ctx, n, sizeof *stored, &stored);
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, n, sizeof *keep, &keep);
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, n, sizeof **sources, sources);
    for (size_t i = 0; s == TROWEL_OK && i < n; i++)
        stored[i] = base_name(p->sources[i].name);
    if (s == TROWEL_OK)
        s = trowel_create_unique_names(ctx, p, stored, keep);
    kept->source_count = 0;
    for (size_t i = 0; s == TROWEL_OK && i < n; i++)
        if (keep[i])
            (*sources)[kept->source_count++] = p->sources[i];
    kept->sources = *sources;
    trowel_mem_free(ctx, stored);
    trowel_mem_free(ctx, keep);
    return s;
}

static trowel_status vol_create(trowel_ctx *ctx, const trowel_create_params *p,
                                json_object *manifest, trowel_sink *out)
{
    (void)manifest;
    trowel_option_values o =
        trowel_option_values_of(vol_options, "create", p->options, p->option_count);
    bool packed = trowel_option_bool(&o, "compress");
    unsigned width = trowel_option_given(&o, "names") ? (unsigned)trowel_option_uint(&o, "names")
                                                      : packed ? 11 : 13;
    int disk = (int)trowel_option_uint(&o, "disk");
    trowel_status s;
    if (p->source_count == 0 || p->source_count > 0x7fff)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "VOL.CNF needs 1 to 32767 part files (%zu given)", p->source_count);
    trowel_create_params kept;
    trowel_source *kept_sources = NULL;
    s = unique_volumes(ctx, p, &kept, &kept_sources);
    out_buf body = {0};
    if (s == TROWEL_OK)
        s = build_body(ctx, &kept, width, disk, &body);
    trowel_mem_free(ctx, kept_sources);
    if (s == TROWEL_OK)
        trowel_set_entry(ctx, NULL);
    if (s == TROWEL_OK && !packed) {
        s = trowel_sink_write(out, body.p, body.len);
    } else if (s == TROWEL_OK) {
        uint8_t *stream;
        size_t stream_len;
        s = trowel_bytekiller_encode(ctx, body.p, body.len, &stream, &stream_len);
        if (s == TROWEL_OK && (stream_len >= body.len ||
                               !trowel_bytekiller_in_place_safe(ctx, stream, stream_len, body.len))) {
            /* extract_cine unpacks VOL.CNF in place, packed bytes at the
             * start of the output buffer: a stream that would overwrite
             * words it has not read yet (or does not shrink) is no use. */
            trowel_mem_free(ctx, stream);
            s = trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                            "the %zu-byte table does not pack into a stream that unpacks in "
                            "place, as readers of VOL.CNF do; write it plain (compress=0)",
                            body.len);
        }
        if (s == TROWEL_OK) {
            uint8_t head[PACKED_HEADER] = {0};
            memcpy(head, abasecp, sizeof abasecp);
            trowel_put_be32(head + 8, (uint32_t)body.len);
            trowel_put_be32(head + 12, (uint32_t)stream_len);
            s = trowel_sink_write(out, head, sizeof head);
            if (s == TROWEL_OK)
                s = trowel_sink_write(out, stream, stream_len);
            trowel_mem_free(ctx, stream);
        }
    }
    trowel_mem_free(ctx, body.p);
    return s;
}

const trowel_format trowel_format_cine_volcnf = {
    .id = "cine-volcnf",
    .family = "cinematique",
    .description = "Operation Stealth VOL.CNF: which part file holds which resource (plain or "
                   "ABASECP-packed); extracts the volumes beside it",
    .extensions = ".cnf",
    .caps = TROWEL_CAP_LIST | TROWEL_CAP_CREATE | TROWEL_CAP_VERIFY,
    .options = vol_options,
    .convert_targets = "",
    .bid = vol_bid,
    .open = vol_open,
    .read_entry = vol_read_entry,
    .create = vol_create,
    .close = vol_close,
};
