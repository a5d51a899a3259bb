/*
 * Writing Volition packfiles (versions 1, 3, 4, 6, 10 and 17), in the four
 * data modes; the layout is the reader's (vpp.c), and what each field
 * holds is in docs/formats/vpp.md.
 *
 * Version 1 (Red Faction) is written as Volition's own packer lays it out
 * (checked byte for byte on the corpus's packfiles): the 16-byte header
 * padded with zeros to 2048, 64-byte entries {name[60], size} padded to
 * 2048, every file (the last one too) padded to 2048, the header's size
 * the whole file's. Padding is zero unless a manifest kept the bytes an
 * archive had there (Volition's packer sometimes wrote old buffer
 * contents): every version writes those back where they were.
 *
 * The directory comes before the data but holds the compressed sizes, so
 * compressed modes encode every file twice: a first pass only counts the
 * bytes each produces, the second writes them. Both passes give the same
 * bytes (zlib and liblz4 are deterministic), memory stays flat whatever
 * the sizes, and nothing is staged on disk. Raw and condensed archives take
 * one pass.
 *
 * Compressed+condensed data is one zlib stream (v17: one LZ4 frame): each
 * file and its alignment padding (none after the last) is fed, then a sync
 * flush; the stream is finished only when asked. With the game's level
 * this gives the game's bytes exactly (checked on the corpus).
 */
#include "vpp.h"

#include "codec/lz4_frame.h"
#include "codec/zlib.h"
#include "core/source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct writer {
    trowel_ctx *ctx;
    const vpp_layout *L;
    const vpp_item *items;
    size_t n;
    trowel_sink *out; /* NULL in the counting pass */
    uint64_t written;
    /* per entry: stored size (csize) */
    uint64_t *packed;
    /* names: each entry's offsets into the tables */
    uint64_t *name_off, *ext_off;
    char *names, *exts; /* the tables as written */
    size_t names_len, exts_len;
    /* v17: distinct directories */
    size_t num_paths;
    uint64_t *path_offs;
    bool pad_warned; /* a kept padding run did not fit (said once) */
} writer;

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return a <= 1 ? v : (v + a - 1) / a * a;
}

static const trowel_stream_codec *codec_of(const vpp_layout *L)
{
    return L->version == 17 ? &trowel_lz4_stream : &trowel_zlib_stream;
}

static bool solid(const vpp_layout *L)
{
    return L->compressed && L->condensed;
}

/* The alignment each file's start is rounded up to (decoded space for
 * solid data). */
static unsigned entry_alignment(const vpp_layout *L)
{
    if (L->version >= 10)
        return L->condensed ? L->alignment : 1;
    return L->condensed ? L->alignment : VPP_SECTOR;
}

vpp_layout vpp_layout_default(unsigned version)
{
    vpp_layout L = {.version = version, .alignment = 16, .level = 9, .short_name = "", .path = ""};
    return L;
}

/* ------------------------------------------------------------ out bytes */

static trowel_status emit(writer *w, const void *p, size_t n)
{
    w->written += n;
    return w->out && n ? trowel_sink_write(w->out, p, n) : TROWEL_OK;
}

static trowel_status emit_zeros(writer *w, uint64_t n)
{
    static const uint8_t zeros[4096];
    while (n) {
        size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
        trowel_status s = emit(w, zeros, k);
        if (s != TROWEL_OK)
            return s;
        n -= k;
    }
    return TROWEL_OK;
}

/* n bytes of padding of a section (VPP_PAD_ENTRY: after entry index):
 * zeros, except the bytes a manifest kept there. */
static trowel_status emit_padding(writer *w, vpp_pad_section section, size_t index, uint64_t n)
{
    const vpp_layout *L = w->L;
    const char *entry = section == VPP_PAD_ENTRY ? w->items[index].name : NULL;
    uint64_t done = 0;
    trowel_status s = TROWEL_OK;
    for (size_t k = 0; k < L->pad_count && s == TROWEL_OK; k++) {
        const vpp_pad *p = &L->pads[k];
        if (p->section != section || (entry && (!p->entry || strcmp(p->entry, entry))))
            continue;
        if (p->at < done || p->len > n || p->at > n - p->len) {
            if (w->out && !w->pad_warned) /* said once, in the pass that writes */
                trowel_warn(w->ctx, TROWEL_NO_OFFSET,
                            "the %zu padding bytes kept at %llu%s%s do not fit the %llu bytes of "
                            "padding there now: zeros are written instead",
                            p->len, (unsigned long long)p->at, entry ? " after " : "",
                            entry ? entry : "", (unsigned long long)n);
            w->pad_warned = w->pad_warned || w->out;
            continue;
        }
        if ((s = emit_zeros(w, p->at - done)) == TROWEL_OK)
            s = emit(w, p->bytes, p->len);
        done = p->at + p->len;
    }
    return s == TROWEL_OK ? emit_zeros(w, n - done) : s;
}

/* Pads a section's end to a multiple of a. */
static trowel_status pad_to(writer *w, vpp_pad_section section, uint64_t a)
{
    return emit_padding(w, section, 0, align_up(w->written, a) - w->written);
}

static trowel_status copy_reader(writer *w, const trowel_reader *src)
{
    trowel_reader r = *src;
    for (;;) {
        const uint8_t *p;
        size_t got;
        trowel_status s = trowel_reader_borrow(&r, TROWEL_READER_SPAN_MAX, &p, &got);
        if (s != TROWEL_OK || got == 0)
            return s;
        if ((s = emit(w, p, got)) != TROWEL_OK)
            return s;
    }
}

/* The encoder cursor writes straight into w->out (or only counts, in the
 * counting pass); what it made is added to w->written after each call. */
static trowel_status counted(writer *w, trowel_codec_writer *cw, uint64_t before,
                             trowel_status s)
{
    w->written += trowel_codec_writer_out(cw) - before;
    return s;
}

static trowel_status code(writer *w, trowel_codec_writer *cw, const uint8_t *in, size_t n)
{
    uint64_t before = trowel_codec_writer_out(cw);
    return counted(w, cw, before, trowel_codec_writer_write(cw, in, n));
}

static trowel_status code_flush(writer *w, trowel_codec_writer *cw)
{
    uint64_t before = trowel_codec_writer_out(cw);
    return counted(w, cw, before, trowel_codec_writer_flush(cw));
}

/* Ends the stream and frees cw. */
static trowel_status code_finish(writer *w, trowel_codec_writer *cw)
{
    uint64_t before = trowel_codec_writer_out(cw), total = before;
    trowel_status s = trowel_codec_writer_finish(cw, &total);
    w->written += total - before;
    return s;
}

static trowel_status code_reader(writer *w, trowel_codec_writer *cw, const trowel_reader *src)
{
    trowel_reader r = *src;
    for (;;) {
        const uint8_t *p;
        size_t got;
        trowel_status s = trowel_reader_borrow(&r, TROWEL_READER_SPAN_MAX, &p, &got);
        if (s != TROWEL_OK || got == 0)
            return s;
        if ((s = code(w, cw, p, got)) != TROWEL_OK)
            return s;
    }
}

static trowel_status code_zeros(writer *w, trowel_codec_writer *cw, uint64_t n)
{
    static const uint8_t zeros[4096];
    while (n) {
        size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
        trowel_status s = code(w, cw, zeros, k);
        if (s != TROWEL_OK)
            return s;
        n -= k;
    }
    return TROWEL_OK;
}

static trowel_status start_coder(writer *w, trowel_codec_writer **cw, uint64_t size_hint)
{
    trowel_codec_params p = trowel_codec_params_default();
    if (w->L->version != 17)
        p.level = w->L->level;
    p.size_hint = size_hint;
    return trowel_codec_writer_open(w->ctx, codec_of(w->L), &p, w->out, cw);
}

/* ----------------------------------------------------------------- data */

static uint64_t item_size(const vpp_item *it)
{
    return it->size;
}

/* A reader over item it's bytes; *in is the input opened for it (NULL
 * when the caller's reader is used), closed by the caller. */
static trowel_status item_open(writer *w, const vpp_item *it, trowel_input **in, trowel_reader *r)
{
    *in = NULL;
    if (!it->path) {
        *r = it->data;
        return TROWEL_OK;
    }
    const trowel_source src = {it->name, it->path};
    trowel_status s = trowel_source_open(w->ctx, &src, in);
    if (s != TROWEL_OK)
        return s;
    trowel_reader_init(r, w->ctx, *in);
    if (trowel_reader_size(r) != it->size)
        return trowel_fail(w->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET,
                           "%s changed size while the archive was written (%llu bytes, then %llu)",
                           it->path, (unsigned long long)it->size,
                           (unsigned long long)trowel_reader_size(r));
    return TROWEL_OK;
}

/* Feeds item i's bytes to the encoder cw, or copies them out when cw is
 * NULL. */
static trowel_status item_pass(writer *w, size_t i, trowel_codec_writer *cw)
{
    trowel_input *in;
    trowel_reader r;
    trowel_status s = item_open(w, &w->items[i], &in, &r);
    if (s == TROWEL_OK)
        s = cw ? code_reader(w, cw, &r) : copy_reader(w, &r);
    trowel_input_close(in);
    return s;
}

/* One file compressed on its own (compressed-only modes); packed[i] is
 * its size. */
static trowel_status write_one_compressed(writer *w, size_t i)
{
    const vpp_item *it = &w->items[i];
    uint64_t before = w->written;
    trowel_status s;
    if (it->has_stored) {
        s = copy_reader(w, &it->stored);
    } else {
        trowel_codec_writer *cw;
        if ((s = start_coder(w, &cw, item_size(it))) != TROWEL_OK)
            return s;
        s = item_pass(w, i, cw);
        if (s == TROWEL_OK)
            s = code_finish(w, cw);
        else
            trowel_codec_writer_abort(cw);
    }
    w->packed[i] = w->written - before;
    return s;
}

/* The padding after entry i (before the next, or v1's after the last). */
static trowel_status pad_entry(writer *w, size_t i, uint64_t data_start, unsigned a)
{
    uint64_t at = w->written - data_start;
    return emit_padding(w, VPP_PAD_ENTRY, i, align_up(at, a) - at);
}

static trowel_status write_separate(writer *w, uint64_t data_start)
{
    unsigned a = entry_alignment(w->L);
    for (size_t i = 0; i < w->n; i++) {
        trowel_set_entry(w->ctx, w->items[i].name);
        trowel_status s = i ? pad_entry(w, i - 1, data_start, a) : TROWEL_OK;
        if (s == TROWEL_OK && w->L->compressed)
            s = write_one_compressed(w, i);
        else if (s == TROWEL_OK) {
            s = item_pass(w, i, NULL);
            w->packed[i] = item_size(&w->items[i]);
        }
        if (s != TROWEL_OK)
            return s;
    }
    trowel_set_entry(w->ctx, NULL);
    /* Red Faction's packer pads the last file too. */
    return w->L->version == 1 && w->n ? pad_entry(w, w->n - 1, data_start, a) : TROWEL_OK;
}

/* Compressed+condensed: one stream, sync-flushed after each file. */
static trowel_status write_solid(writer *w)
{
    unsigned a = entry_alignment(w->L);
    trowel_codec_writer *cw = NULL;
    uint64_t total = 0;
    for (size_t i = 0; i < w->n; i++)
        total = align_up(total, a) + item_size(&w->items[i]);
    trowel_status s = start_coder(w, &cw, total);
    uint64_t at = 0;
    for (size_t i = 0; i < w->n && s == TROWEL_OK; i++) {
        trowel_set_entry(w->ctx, w->items[i].name);
        uint64_t before = w->written;
        s = item_pass(w, i, cw);
        at += item_size(&w->items[i]);
        if (s == TROWEL_OK && i + 1 < w->n) {
            s = code_zeros(w, cw, align_up(at, a) - at);
            at = align_up(at, a);
        }
        if (s == TROWEL_OK)
            s = code_flush(w, cw);
        w->packed[i] = w->written - before;
    }
    if (s == TROWEL_OK && (w->L->finish || w->L->version == 17)) {
        /* The end (Adler-32 / LZ4 end mark) belongs to the last entry. */
        uint64_t before = w->written;
        s = code_finish(w, cw);
        cw = NULL;
        if (w->n)
            w->packed[w->n - 1] += w->written - before;
    }
    trowel_codec_writer_abort(cw); /* an unfinished stream, by design or failure */
    trowel_set_entry(w->ctx, NULL);
    return s;
}

static trowel_status write_data(writer *w, uint64_t data_start)
{
    return solid(w->L) ? write_solid(w) : write_separate(w, data_start);
}

/* --------------------------------------------------------- name tables */

static trowel_status table_add(writer *w, char **t, size_t *len, const char *s, size_t n,
                               unsigned pad, uint64_t *off)
{
    size_t need = *len + n + 1 + pad;
    trowel_status status = trowel_mem_resize(w->ctx, t, need);
    if (status != TROWEL_OK)
        return status;
    char *grown = *t;
    *off = *len;
    memcpy(grown + *len, s, n);
    grown[*len + n] = 0;
    *len += n + 1;
    while (pad > 1 && *len % pad)
        grown[(*len)++] = 0;
    return TROWEL_OK;
}

/* The offset of s in a table of distinct strings, adding it if new. */
static trowel_status table_find_or_add(writer *w, char **t, size_t *len, const char *s, size_t n,
                                       uint64_t *off)
{
    for (size_t at = 0; at < *len; at += strlen(*t + at) + 1)
        if (strlen(*t + at) == n && !memcmp(*t + at, s, n)) {
            *off = at;
            return TROWEL_OK;
        }
    return table_add(w, t, len, s, n, 1, off);
}

/* The part of name a packfile of version v stores as the entry's own name
 * (*part, *len bytes): version 4 the part before the last '.' (the
 * extension goes to its own table, after part[len]), version 17 the part
 * after the last '/' (the folder goes to its own table), the others the
 * whole name. build_names writes it, and unreadable_name refuses it empty. */
static void stored_name(unsigned v, const char *name, const char **part, size_t *len)
{
    *part = name;
    if (v == 4) {
        const char *dot = strrchr(name, '.');
        *len = dot ? (size_t)(dot - name) : strlen(name);
        return;
    }
    if (v == 17) {
        const char *slash = strrchr(name, '/');
        *part = slash ? slash + 1 : name;
    }
    *len = strlen(*part);
}

static trowel_status build_names(writer *w)
{
    unsigned version = w->L->version;
    for (size_t i = 0; i < w->n; i++) {
        const char *name = w->items[i].name;
        trowel_status s;
        if (version == 4) { /* name and extension in two tables */
            const char *base;
            size_t len;
            stored_name(version, name, &base, &len);
            const char *ext = base[len] ? base + len + 1 : ""; /* after the '.' */
            s = table_add(w, &w->names, &w->names_len, base, len, 1, &w->name_off[i]);
            if (s == TROWEL_OK)
                s = table_find_or_add(w, &w->exts, &w->exts_len, ext, strlen(ext),
                                      &w->ext_off[i]);
        } else if (version == 17) { /* directory and name; directories first */
            const char *slash = strrchr(name, '/');
            s = TROWEL_OK;
            w->ext_off[i] = slash ? (uint64_t)(slash - name) : 0; /* length, for now */
        } else {
            s = table_add(w, &w->names, &w->names_len, name, strlen(name), version == 10 ? 2 : 1,
                          &w->name_off[i]);
        }
        if (s != TROWEL_OK)
            return s;
    }
    if (version != 17)
        return TROWEL_OK;
    /* v17: the distinct directories (with the game's backslashes), then the
     * names. */
    for (size_t i = 0; i < w->n; i++) {
        size_t dlen = (size_t)w->ext_off[i];
        char dir[512];
        snprintf(dir, sizeof dir, "%.*s", (int)dlen, w->items[i].name);
        for (char *p = dir; *p; p++)
            if (*p == '/')
                *p = '\\';
        size_t before = w->names_len;
        trowel_status s = table_find_or_add(w, &w->names, &w->names_len, dir, dlen, &w->ext_off[i]);
        if (s != TROWEL_OK)
            return s;
        if (w->names_len != before) {
            s = trowel_mem_resize_array(w->ctx, &w->path_offs, w->num_paths + 1,
                                        sizeof *w->path_offs);
            if (s != TROWEL_OK)
                return s;
            w->path_offs[w->num_paths++] = w->ext_off[i];
        }
    }
    for (size_t i = 0; i < w->n; i++) {
        const char *base;
        size_t len;
        stored_name(version, w->items[i].name, &base, &len);
        trowel_status s = table_add(w, &w->names, &w->names_len, base, len, 1, &w->name_off[i]);
        if (s != TROWEL_OK)
            return s;
    }
    return TROWEL_OK;
}

/* ------------------------------------------------------ header, directory */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(v >> 8 * k);
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t clamp32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

typedef struct sums {
    uint64_t *start;       /* each entry's stored start */
    uint64_t data_size;    /* decoded layout, without the last padding */
    uint64_t stored_size;  /* bytes of data as stored */
    uint64_t data_start, dir_size, file_size;
} sums;

static void place(const writer *w, sums *S)
{
    unsigned a = entry_alignment(w->L);
    uint64_t dec = 0, phys = 0;
    for (size_t i = 0; i < w->n; i++) {
        uint64_t size = item_size(&w->items[i]);
        dec = align_up(dec, a);
        if (solid(w->L)) {
            S->start[i] = dec;
            phys += w->packed[i];
        } else {
            phys = align_up(phys, a);
            S->start[i] = phys;
            phys += w->packed[i];
        }
        dec += size;
    }
    S->data_size = dec;
    S->stored_size = w->L->version == 1 ? align_up(phys, a) : phys;
}

static uint32_t header_flags(const vpp_layout *L)
{
    uint32_t f = (L->compressed ? VPP_FLAG_COMPRESSED : 0) | (L->condensed ? VPP_FLAG_CONDENSED : 0);
    if (L->version == 10 && L->compressed)
        f |= (L->level <= 1 ? 1u : 9u) << 11; /* method: zlib fast or best */
    if (L->version == 17 && L->compressed)
        f |= 10u << 11; /* method 10: LZ4 */
    return f;
}

static uint32_t csize_field(const vpp_layout *L, const writer *w, size_t i)
{
    return L->compressed ? clamp32(w->packed[i]) : UINT32_MAX;
}

/* Version 1: {descriptor, version, files, file size} padded to 2048, then
 * {char name[60], u32 size} per file, padded to 2048. */
static trowel_status write_v1_header(writer *w, const sums *S)
{
    uint8_t h[16];
    put32(h, VPP_MAGIC);
    put32(h + 4, 1);
    put32(h + 8, (uint32_t)w->n);
    put32(h + 12, (uint32_t)S->file_size);
    trowel_status s = emit(w, h, sizeof h);
    if (s == TROWEL_OK)
        s = emit_padding(w, VPP_PAD_HEADER, 0, VPP_SECTOR - sizeof h);
    for (size_t i = 0; i < w->n && s == TROWEL_OK; i++) {
        uint8_t e[64] = {0};
        memcpy(e, w->items[i].name, strlen(w->items[i].name)); /* < 60: checked */
        put32(e + VPP_V1_NAME, (uint32_t)item_size(&w->items[i]));
        s = emit(w, e, sizeof e);
    }
    return s == TROWEL_OK ? pad_to(w, VPP_PAD_DIRECTORY, VPP_SECTOR) : s;
}

static trowel_status write_sector_header(writer *w, const sums *S)
{
    const vpp_layout *L = w->L;
    uint8_t h[VPP_SECTOR] = {0};
    put32(h, VPP_MAGIC);
    put32(h + 4, L->version);
    snprintf((char *)h + 8, 65, "%s", L->short_name ? L->short_name : "");
    snprintf((char *)h + 0x49, 256, "%s", L->path ? L->path : "");
    put32(h + 0x14C, header_flags(L));
    put32(h + 0x154, (uint32_t)w->n);
    put32(h + 0x158, clamp32(S->file_size));
    put32(h + 0x15C, (uint32_t)S->dir_size);
    put32(h + 0x160, (uint32_t)w->names_len);
    uint8_t *p = h + 0x164;
    if (L->version == 4) {
        put32(p, (uint32_t)w->exts_len);
        p += 4;
    }
    put32(p, (uint32_t)S->data_size);
    put32(p + 4, L->compressed ? (uint32_t)S->stored_size : UINT32_MAX);
    memcpy(p + 8, L->runtime, sizeof L->runtime);
    /* The fields end after the runtime bytes; the rest is padding. */
    size_t fields = (size_t)(p + 8 + sizeof L->runtime - h);
    trowel_status s = emit(w, h, fields);
    if (s == TROWEL_OK)
        s = emit_padding(w, VPP_PAD_HEADER, 0, sizeof h - fields);
    for (size_t i = 0; i < w->n && s == TROWEL_OK; i++) {
        uint8_t e[28] = {0};
        uint32_t size = (uint32_t)item_size(&w->items[i]);
        uint32_t start = (uint32_t)S->start[i]; /* wraps past 4 GiB, as the game's */
        put32(e, (uint32_t)w->name_off[i]);
        if (L->version == 3) {
            put32(e + 8, start);
            put32(e + 12, vpp_name_hash(w->items[i].name));
            put32(e + 16, size);
            put32(e + 20, csize_field(L, w, i));
        } else if (L->version == 4) {
            put32(e + 4, (uint32_t)w->ext_off[i]);
            put32(e + 12, start);
            put32(e + 16, size);
            put32(e + 20, csize_field(L, w, i));
        } else {
            put32(e + 8, start);
            put32(e + 12, size);
            put32(e + 16, csize_field(L, w, i));
        }
        s = emit(w, e, L->version == 6 ? 24 : 28);
    }
    if (s == TROWEL_OK)
        s = pad_to(w, VPP_PAD_DIRECTORY, VPP_SECTOR);
    if (s == TROWEL_OK)
        s = emit(w, w->names, w->names_len);
    if (s == TROWEL_OK)
        s = pad_to(w, VPP_PAD_NAMES, VPP_SECTOR);
    if (s == TROWEL_OK && L->version == 4 && (s = emit(w, w->exts, w->exts_len)) == TROWEL_OK)
        s = pad_to(w, VPP_PAD_EXTENSIONS, VPP_SECTOR);
    return s;
}

static trowel_status write_v10_header(writer *w, const sums *S)
{
    const vpp_layout *L = w->L;
    uint8_t h[0x28] = {0};
    put32(h, VPP_MAGIC);
    put32(h + 4, 10);
    put32(h + 0x0C, clamp32(S->file_size));
    put32(h + 0x10, header_flags(L));
    put32(h + 0x14, (uint32_t)w->n);
    put32(h + 0x18, (uint32_t)S->dir_size);
    put32(h + 0x1C, (uint32_t)w->names_len);
    put32(h + 0x20, (uint32_t)S->data_size);
    put32(h + 0x24, L->compressed ? (uint32_t)S->stored_size : UINT32_MAX);
    put32(h + 8, vpp_header_crc(h + 12, sizeof h - 12));
    trowel_status s = emit(w, h, sizeof h);
    for (size_t i = 0; i < w->n && s == TROWEL_OK; i++) {
        uint8_t e[24] = {0};
        put64(e, w->name_off[i]);
        put32(e + 8, (uint32_t)S->start[i]);
        put32(e + 12, (uint32_t)item_size(&w->items[i]));
        put32(e + 16, csize_field(L, w, i));
        put16(e + 20, L->compressed && !L->condensed ? 1 : 0);
        put16(e + 22, (uint16_t)entry_alignment(L));
        s = emit(w, e, sizeof e);
    }
    if (s == TROWEL_OK)
        s = emit(w, w->names, w->names_len);
    return s;
}

static trowel_status write_v17_header(writer *w, const sums *S)
{
    const vpp_layout *L = w->L;
    uint8_t h[0x78] = {0};
    put32(h, VPP_MAGIC);
    put32(h + 4, 17);
    put32(h + 0x0C, header_flags(L));
    put32(h + 0x10, (uint32_t)w->n);
    put32(h + 0x14, (uint32_t)w->num_paths);
    put32(h + 0x18, (uint32_t)S->dir_size);
    put32(h + 0x1C, (uint32_t)w->names_len);
    put64(h + 0x20, S->file_size);
    put64(h + 0x28, S->data_size);
    put64(h + 0x30, L->compressed ? S->stored_size : UINT64_MAX);
    put64(h + 0x38, L->timestamp);
    put64(h + 0x40, S->data_start);
    put32(h + 8, vpp_header_crc(h + 12, sizeof h - 12));
    trowel_status s = emit(w, h, sizeof h);
    for (size_t i = 0; i < w->n && s == TROWEL_OK; i++) {
        uint8_t e[48] = {0};
        put64(e, w->name_off[i]);
        put64(e + 8, w->ext_off[i]);
        put64(e + 16, S->start[i]);
        put64(e + 24, item_size(&w->items[i]));
        put64(e + 32, L->compressed ? w->packed[i] : UINT64_MAX);
        put16(e + 40, L->compressed && !L->condensed ? 1 : 0);
        put16(e + 42, (uint16_t)entry_alignment(L));
        s = emit(w, e, sizeof e);
    }
    for (size_t i = 0; i < w->num_paths && s == TROWEL_OK; i++) {
        uint8_t p[8];
        put64(p, w->path_offs[i]);
        s = emit(w, p, sizeof p);
    }
    if (s == TROWEL_OK)
        s = emit(w, w->names, w->names_len);
    if (s == TROWEL_OK)
        s = pad_to(w, VPP_PAD_NAMES, VPP_SECTOR);
    return s;
}

/* Where the data starts and the directory's size, before anything is
 * written. */
static void header_sizes(const writer *w, sums *S)
{
    switch (w->L->version) {
    case 1:
        S->dir_size = 64 * (uint64_t)w->n;
        S->data_start = VPP_SECTOR + align_up(S->dir_size, VPP_SECTOR);
        break;
    case 10:
        S->dir_size = 24 * (uint64_t)w->n;
        S->data_start = 0x28 + S->dir_size + w->names_len;
        break;
    case 17:
        S->dir_size = 48 * (uint64_t)w->n + 8 * (uint64_t)w->num_paths;
        S->data_start = align_up(0x78 + S->dir_size + w->names_len, VPP_SECTOR);
        break;
    default:
        S->dir_size = (w->L->version == 6 ? 24 : 28) * (uint64_t)w->n;
        S->data_start = VPP_SECTOR + align_up(S->dir_size, VPP_SECTOR) +
                        align_up(w->names_len, VPP_SECTOR) +
                        (w->L->version == 4 ? align_up(w->exts_len, VPP_SECTOR) : 0);
        break;
    }
}

/* Names compared as the games look them up: A-Z as a-z. */
static int name_cmp(const void *p, const void *q)
{
    const char *x = *(const char *const *)p, *y = *(const char *const *)q;
    for (;; x++, y++) {
        unsigned cx = (unsigned char)*x, cy = (unsigned char)*y;
        cx += cx >= 'A' && cx <= 'Z' ? 32u : 0u;
        cy += cy >= 'A' && cy <= 'Z' ? 32u : 0u;
        if (cx != cy || !cx)
            return (int)cx - (int)cy;
    }
}

/* Two files of one name (case aside): the game would find only one. */
static trowel_status check_unique_names(trowel_ctx *ctx, const vpp_item *items, size_t n)
{
    if (n < 2)
        return TROWEL_OK;
    const char **names;
    trowel_status s = trowel_mem_new_zeroed(ctx, n, sizeof *names, &names);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < n; i++)
        names[i] = items[i].name;
    qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 1; i < n && s == TROWEL_OK; i++) {
        if (name_cmp(&names[i - 1], &names[i]))
            continue;
        bool exact = !strcmp(names[i - 1], names[i]);
        s = trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                        "two files would be stored as '%s'%s%s%s: the game finds only one",
                        names[i - 1], exact ? "" : " and '", exact ? "" : names[i],
                        exact ? "" : "' (case aside)");
    }
    trowel_mem_free(ctx, names);
    return s;
}

/* Red Faction's packfiles: stored files only, names of at most 59 bytes
 * (the 60-byte field keeps its NUL), at most 65,536 files. */
static trowel_status check_v1(trowel_ctx *ctx, const vpp_layout *L, const vpp_item *items,
                              size_t n)
{
    if (L->compressed || L->condensed)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "version 1 (Red Faction) packfiles are neither compressed nor condensed");
    if (L->big_endian)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "writing big-endian (console) packfiles is not supported");
    if (n > VPP_V1_MAX_FILES)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "%zu files: a version 1 packfile holds at most %u", n, VPP_V1_MAX_FILES);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(items[i].name);
        if (len == 0 || len >= VPP_V1_NAME || strchr(items[i].name, '/'))
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "'%s' cannot be stored: version 1 names are 1 to %u bytes without "
                               "'/'",
                               items[i].name, VPP_V1_NAME - 1);
        if (items[i].size > UINT32_MAX)
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "%s: %llu bytes do not fit a version 1 packfile (4 GiB at most)",
                               items[i].name, (unsigned long long)items[i].size);
    }
    return TROWEL_OK;
}

/* Why name cannot be read back from a packfile of version v (the reader
 * refuses an entry with an empty name), or NULL: the part it stores as the
 * entry's own name (stored_name) must not be empty. */
static const char *unreadable_name(unsigned v, const char *name)
{
    const char *part;
    size_t len;
    stored_name(v, name, &part, &len);
    if (len > 0)
        return NULL;
    if (v == 4)
        return "a version 4 packfile keeps the part before the last '.' apart, and it "
               "cannot be empty";
    if (v == 17)
        return "a version 17 packfile keeps the part after the last '/' apart, and it "
               "cannot be empty";
    return NULL; /* an empty name is refused before, for every version */
}

static trowel_status check_layout(trowel_ctx *ctx, const vpp_layout *L, const vpp_item *items,
                                  size_t n)
{
    if (L->version != 1 && L->version != 3 && L->version != 4 && L->version != 6 &&
        L->version != 10 && L->version != 17)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "trowel writes packfile versions 1, 3, 4, 6, 10 and 17, not %u",
                           L->version);
    trowel_status s = check_unique_names(ctx, items, n);
    if (s != TROWEL_OK)
        return s;
    if (L->version == 1)
        return check_v1(ctx, L, items, n);
    if (L->big_endian)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "writing big-endian (console) packfiles is not supported");
    if (L->condensed && L->alignment != 1 && L->alignment != 16 && L->alignment != 64 &&
        L->alignment != VPP_SECTOR)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "align must be 1, 16, 64 or 2048 (not %u)", L->alignment);
    bool wide = L->version == 17;
    for (size_t i = 0; i < n; i++) {
        uint64_t size = items[i].size;
        size_t len = strlen(items[i].name);
        if (!wide && size > UINT32_MAX)
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "%s: %llu bytes do not fit a version %u packfile (4 GiB at most "
                               "a file)",
                               items[i].name, (unsigned long long)size, L->version);
        if (len == 0 || len > 255 || (L->version < 17 && strchr(items[i].name, '/')))
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "'%s' cannot be stored: names are 1 to 255 bytes%s", items[i].name,
                               L->version < 17 ? " without '/' (only version 17 keeps folders)" : "");
        const char *why = unreadable_name(L->version, items[i].name);
        if (why)
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "'%s' cannot be stored: %s", items[i].name, why);
    }
    if (n > UINT32_MAX / 48)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "too many files (%zu)", n);
    return TROWEL_OK;
}

static void writer_free(writer *w)
{
    trowel_mem_free(w->ctx, w->packed);
    trowel_mem_free(w->ctx, w->name_off);
    trowel_mem_free(w->ctx, w->names);
    trowel_mem_free(w->ctx, w->exts);
    trowel_mem_free(w->ctx, w->path_offs);
}

trowel_status vpp_write(trowel_ctx *ctx, const vpp_layout *L, const vpp_item *items, size_t n,
                        trowel_sink *out, vpp_written *res)
{
    trowel_status s = check_layout(ctx, L, items, n);
    if (s != TROWEL_OK)
        return s;
    writer w = {.ctx = ctx, .L = L, .items = items, .n = n};
    size_t slots = n ? n : 1;
    if ((s = trowel_mem_new_zeroed(ctx, slots, sizeof *w.packed, &w.packed)) != TROWEL_OK ||
        (s = trowel_mem_new_zeroed(ctx, 3 * slots, sizeof *w.name_off, &w.name_off)) !=
            TROWEL_OK) {
        writer_free(&w);
        return s;
    }
    w.ext_off = w.name_off + slots;
    sums S = {.start = w.name_off + 2 * slots};
    s = build_names(&w);
    if (s == TROWEL_OK && L->compressed)
        s = write_data(&w, 0); /* counting pass: fills w.packed */
    else
        for (size_t i = 0; i < n; i++)
            w.packed[i] = item_size(&items[i]);
    if (s == TROWEL_OK) {
        header_sizes(&w, &S);
        place(&w, &S);
        S.file_size = S.data_start + S.stored_size;
        if (L->version == 1 && S.file_size > UINT32_MAX)
            s = trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                            "the packfile would take %llu bytes: version 1 holds 4 GiB at most",
                            (unsigned long long)S.file_size);
    }
    if (s == TROWEL_OK) {
        w.out = out;
        w.written = 0;
        s = L->version == 1    ? write_v1_header(&w, &S)
            : L->version == 10 ? write_v10_header(&w, &S)
            : L->version == 17 ? write_v17_header(&w, &S)
                               : write_sector_header(&w, &S);
    }
    if (s == TROWEL_OK && w.written != S.data_start)
        s = trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET,
                        "the header took %llu bytes, %llu were planned",
                        (unsigned long long)w.written, (unsigned long long)S.data_start);
    if (s == TROWEL_OK)
        s = write_data(&w, S.data_start);
    if (s == TROWEL_OK && w.written != S.file_size)
        s = trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET,
                        "the archive took %llu bytes, %llu were planned (a source changed "
                        "while it was read?)",
                        (unsigned long long)w.written, (unsigned long long)S.file_size);
    if (s == TROWEL_OK && res) {
        res->data_start = S.data_start;
        res->data_size = S.data_size;
        res->compressed_size = S.stored_size;
        res->file_size = S.file_size;
        if (res->packed && n)
            memcpy(res->packed, w.packed, n * sizeof *w.packed);
    }
    writer_free(&w);
    return s;
}
