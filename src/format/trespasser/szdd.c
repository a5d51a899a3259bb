/*
 * SZDD: the single-file wrapper written by MS COMPRESS.EXE (and read by
 * Windows' LZOpenFile, which is how Trespasser opens its .GRF worlds).
 *
 * Two headers exist:
 *   normal: "SZDD" 88 F0 27 33, method 'A', the name's missing last
 *           character (0 if unknown), u32 LE uncompressed length; 14 bytes.
 *   QBasic: "SZ " 88 F0 27 33 D1, u32 LE uncompressed length; 12 bytes.
 * Then one LZSS stream (src/codec/lzss.c) to the end of the file.
 *
 * COMPRESS.EXE names its output after the input with the last character
 * replaced by '_' (DEFAULT.PAL -> DEFAULT.PA_) and records that character,
 * in lower case, in the header. We restore it in the case of the rest of the
 * name. Debian's mscompress appends '_' instead and records 0; a name ending
 * in '_' with no recorded character therefore loses its '_'.
 * Facts: ../shared/formats/trespasser.md, the real files in the corpus.
 */
#include "codec/lzss.h"
#include "core/module.h"
#include "core/source.h"

#include <ctype.h>
#include <stdio.h>
#include <json-c/json.h>
#include <string.h>

#define NORMAL_HEADER_SIZE 14
#define QBASIC_HEADER_SIZE 12

static const uint8_t normal_magic[8] = {'S', 'Z', 'D', 'D', 0x88, 0xF0, 0x27, 0x33};
static const uint8_t qbasic_magic[8] = {'S', 'Z', ' ', 0x88, 0xF0, 0x27, 0x33, 0xD1};

enum szdd_variant { SZDD_NORMAL, SZDD_QBASIC };

typedef struct szdd_header {
    enum szdd_variant variant;
    uint8_t method;       /* normal: 'A' is the only one known */
    uint8_t missing_char; /* normal: 0 when unknown */
    uint32_t length;      /* uncompressed */
    uint64_t header_size;
} szdd_header;

static const trowel_lzss_params *variant_params(enum szdd_variant v)
{
    return v == SZDD_QBASIC ? &trowel_lzss_qbasic : &trowel_lzss_szdd;
}

static const char *variant_name(enum szdd_variant v)
{
    return v == SZDD_QBASIC ? "qbasic" : "normal";
}

/* Reads either header; TROWEL_ERR_UNSUPPORTED when the magic is neither. */
static trowel_status read_header(trowel_reader *r, szdd_header *h)
{
    uint8_t magic[8];
    trowel_status s = trowel_read_bytes(r, magic, sizeof magic);
    if (s != TROWEL_OK)
        return s;
    memset(h, 0, sizeof *h);
    if (memcmp(magic, normal_magic, 8) == 0) {
        h->variant = SZDD_NORMAL;
        h->header_size = NORMAL_HEADER_SIZE;
        if ((s = trowel_read_u8(r, &h->method)) != TROWEL_OK ||
            (s = trowel_read_u8(r, &h->missing_char)) != TROWEL_OK)
            return s;
    } else if (memcmp(magic, qbasic_magic, 8) == 0) {
        h->variant = SZDD_QBASIC;
        h->header_size = QBASIC_HEADER_SIZE;
        h->method = 'A';
    } else {
        return trowel_fail(r->ctx, TROWEL_ERR_UNSUPPORTED, 0, "no SZDD signature");
    }
    return trowel_read_u32le(r, &h->length);
}

static int szdd_bid(trowel_reader *r)
{
    szdd_header h;
    if (read_header(r, &h) != TROWEL_OK)
        return TROWEL_BID_NONE;
    /* The magic is eight bytes: strong evidence alone; a plausible length
     * for the stream that follows settles it. */
    uint64_t stream = trowel_reader_remaining(r);
    return h.length <= trowel_lzss_max_output(stream) ? TROWEL_BID_STRONG : TROWEL_BID_MAGIC;
}

/* ---------------------------------------------------------------- names */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Upper if the name's letters are all upper case, lower if all lower,
 * else the character as recorded. */
static char match_case(const char *name, size_t len, char c)
{
    bool upper = false, lower = false;
    for (size_t i = 0; i < len; i++) {
        upper = upper || isupper((unsigned char)name[i]);
        lower = lower || islower((unsigned char)name[i]);
    }
    if (upper && !lower)
        return (char)toupper((unsigned char)c);
    if (lower && !upper)
        return (char)tolower((unsigned char)c);
    return c;
}

/* The original name from the compressed file's name and the header. A
 * stream (standard input) has no file name to start from: its one entry is
 * called STREAM_ENTRY_NAME, as msexpand would have nothing better either. */
#define STREAM_ENTRY_NAME "stdin"
static void restore_name(const char *file_name, uint8_t missing, char *out, size_t cap)
{
    if (!file_name) {
        snprintf(out, cap, "%s", STREAM_ENTRY_NAME);
        return;
    }
    snprintf(out, cap, "%s", base_name(file_name));
    size_t n = strlen(out);
    if (n == 0 || out[n - 1] != '_')
        return;
    bool printable = missing > 0x20 && missing < 0x7f && missing != '/' && missing != '\\';
    if (printable)
        out[n - 1] = match_case(out, n - 1, (char)missing);
    else if (n > 1)
        out[n - 1] = '\0';
}

/* --------------------------------------------------------------- reading */

typedef struct szdd_state {
    szdd_header h;
} szdd_state;

/* A stream too short for the length the header declares: the file was cut
 * (or the length is corrupt). Sets the error and returns its status. */
static trowel_status check_stream_length(trowel_ctx *ctx, const szdd_header *h, uint64_t stream)
{
    uint64_t most = trowel_lzss_max_output(stream);
    if (h->length <= most)
        return TROWEL_OK;
    return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, h->header_size,
                       "header declares %lu bytes but the %llu-byte stream can hold at most "
                       "%llu: the file is truncated or the length is corrupt",
                       (unsigned long)h->length, (unsigned long long)stream,
                       (unsigned long long)most);
}

static trowel_status szdd_open(trowel_archive *a, trowel_reader *r)
{
    szdd_state *st;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    s = read_header(r, &st->h);
    if (s != TROWEL_OK && s != TROWEL_ERR_UNSUPPORTED) {
        /* Reword the reader's error; it must be copied out before the
         * context's error is rewritten. */
        trowel_error why = a->ctx->last_error;
        return trowel_fail(a->ctx, s, why.offset, "SZDD header is cut short: %s", why.message);
    }
    if (s != TROWEL_OK)
        return s;
    const szdd_header *h = &st->h;
    if (h->method != 'A')
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, 8,
                           "compression method 0x%02x is not 'A' (LZSS), the only one known",
                           h->method);
    char name[512];
    restore_name(trowel_input_file_name(a->in), h->missing_char, name, sizeof name);
    char missing[2] = {(char)(h->missing_char >= 0x20 && h->missing_char < 0x7f ? h->missing_char : 0), 0};
    uint64_t packed = trowel_reader_size(r) - h->header_size;

    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", "szdd")) ||
        (s = trowel_props_add_uint(info, "version", 0)) ||
        (s = trowel_props_add_str(info, "variant", variant_name(h->variant))) ||
        (s = trowel_props_add_str(info, "method", "lzss")) ||
        (s = trowel_props_add_str(info, "original_name", name)) ||
        (s = trowel_props_add_str(info, "missing_char", missing)) ||
        (s = trowel_props_add_uint(info, "uncompressed_size", h->length)) ||
        (s = trowel_props_add_uint(info, "compressed_size", packed)) ||
        (s = trowel_props_add_uint(info, "header_size", h->header_size)))
        return s;
    trowel_entry e = {.name = name, .size = h->length, .packed_size = packed,
                      .offset = h->header_size, .method = "lzss"};
    trowel_props *extra;
    if ((s = trowel_archive_add(a, &e, &extra)) != TROWEL_OK)
        return s;
    trowel_error saved = a->ctx->last_error;
    if (check_stream_length(a->ctx, h, packed) != TROWEL_OK) {
        /* The header reads: show it, and let reading the entry fail. */
        trowel_warn(a->ctx, a->ctx->last_error.offset, "%s", a->ctx->last_error.message);
        trowel_archive_mark_damaged(a);
    }
    a->ctx->last_error = saved;
    return TROWEL_OK;
}

static trowel_status szdd_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    (void)index;
    const szdd_state *st = a->priv;
    trowel_reader whole, stream;
    trowel_reader_init(&whole, a->ctx, a->in);
    trowel_status s = trowel_reader_sub(&whole, st->h.header_size,
                                        trowel_reader_size(&whole) - st->h.header_size, &stream);
    if (s != TROWEL_OK)
        return s;
    if ((s = check_stream_length(a->ctx, &st->h, trowel_reader_size(&stream))) != TROWEL_OK)
        return s;
    return trowel_lzss_decode(a->ctx, variant_params(st->h.variant), &stream, st->h.length, out);
}

static trowel_status szdd_manifest(trowel_archive *a, json_object *m)
{
    const szdd_state *st = a->priv;
    char missing[2] = {(char)st->h.missing_char, 0};
    json_object_object_add(m, "variant", json_object_new_string(variant_name(st->h.variant)));
    json_object_object_add(m, "missing_char", json_object_new_string(missing));
    json_object_object_add(m, "name", json_object_new_string(a->entries[0].name));
    return TROWEL_OK;
}

static void szdd_close(trowel_archive *a)
{
    trowel_mem_free(a->ctx, a->priv);
}

/* -------------------------------------------------------------- creating */

/* -O options (create's): core checks them against these rows first. */
static const trowel_option_info szdd_options[] = {
    {.key = "variant", .value = "normal|qbasic", .help = "header kind (default normal)",
     .targets = "create", .type = TROWEL_OPTION_CHOICE},
    {.key = "missing", .value = "C|none",
     .help = "the name's last character to record (default: the source name's, in lower case)",
     .targets = "create"},
    {0},
};

/* The settings for a new file: options override the manifest, which
 * overrides what the source's name suggests. */
static trowel_status creation_settings(trowel_ctx *ctx, const trowel_create_params *p,
                                       json_object *manifest, szdd_header *h)
{
    memset(h, 0, sizeof *h);
    h->method = 'A';
    const char *name = base_name(p->sources[0].name);
    size_t n = strlen(name);
    /* COMPRESS.EXE records the replaced character in lower case. */
    h->missing_char = n ? (uint8_t)tolower((unsigned char)name[n - 1]) : 0;

    json_object *v;
    const char *variant = NULL, *missing = NULL;
    if (manifest && json_object_object_get_ex(manifest, "variant", &v))
        variant = json_object_get_string(v);
    if (manifest && json_object_object_get_ex(manifest, "missing_char", &v)) {
        missing = json_object_get_string(v);
        h->missing_char = missing ? (uint8_t)missing[0] : 0;
    }
    const char *opt = trowel_options_get(p->options, p->option_count, "variant");
    variant = opt ? opt : variant;
    opt = trowel_options_get(p->options, p->option_count, "missing");
    if (opt) {
        if (strcmp(opt, "none") == 0)
            h->missing_char = 0;
        else if (strlen(opt) == 1)
            h->missing_char = (uint8_t)opt[0];
        else
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "missing= takes one character or 'none'");
    }
    if (!variant || strcmp(variant, "normal") == 0)
        h->variant = SZDD_NORMAL;
    else if (strcmp(variant, "qbasic") == 0)
        h->variant = SZDD_QBASIC;
    else
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "variant must be normal or qbasic, not '%s'", variant);
    return TROWEL_OK;
}

static trowel_status write_header(trowel_sink *out, const szdd_header *h)
{
    uint8_t buf[NORMAL_HEADER_SIZE];
    size_t n = 0;
    if (h->variant == SZDD_NORMAL) {
        memcpy(buf, normal_magic, 8);
        buf[8] = h->method;
        buf[9] = h->missing_char;
        n = 10;
    } else {
        memcpy(buf, qbasic_magic, 8);
        n = 8;
    }
    for (int i = 0; i < 4; i++)
        buf[n++] = (uint8_t)(h->length >> (8 * i));
    return trowel_sink_write(out, buf, n);
}

static trowel_status szdd_create(trowel_ctx *ctx, const trowel_create_params *p,
                                 json_object *manifest, trowel_sink *out)
{
    if (p->source_count != 1)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "an SZDD file holds exactly one file (%zu given)", p->source_count);
    szdd_header h;
    trowel_status s;
    if ((s = creation_settings(ctx, p, manifest, &h)) != TROWEL_OK)
        return s;
    trowel_set_entry(ctx, p->sources[0].name);
    trowel_input *in;
    if ((s = trowel_source_open(ctx, &p->sources[0], &in)) != TROWEL_OK)
        return s;
    if (trowel_input_size(in) > UINT32_MAX) {
        trowel_input_close(in);
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "SZDD records sizes in 32 bits: %llu bytes is too large",
                           (unsigned long long)trowel_input_size(in));
    }
    h.length = (uint32_t)trowel_input_size(in);
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    s = write_header(out, &h);
    if (s == TROWEL_OK)
        s = trowel_lzss_encode_reader(ctx, variant_params(h.variant), &r, out);
    trowel_input_close(in);
    return s;
}

const trowel_format trowel_format_szdd = {
    .id = "szdd",
    .family = "trespasser",
    .description = "MS COMPRESS.EXE single-file archive (SZDD, incl. QBasic variant)",
    .extensions = "*_ .grf",
    .caps = TROWEL_CAP_LIST | TROWEL_CAP_MANIFEST,
    .options = szdd_options,
    .convert_targets = "",
    .bid = szdd_bid,
    .open = szdd_open,
    .read_entry = szdd_read_entry,
    .manifest = szdd_manifest,
    .create = szdd_create,
    .close = szdd_close,
};
