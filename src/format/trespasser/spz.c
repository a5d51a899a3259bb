/*
 * SPZ: Trespasser's compressed texture page file (`<level>-130.spz`, the
 * game expands it to a `.swp` swap file that the PID directory indexes).
 *
 * Layout: u32 LE uncompressed size, then one LZSS stream to the end of the
 * file: the SZDD bit stream (src/codec/lzss.c) with the window zero-filled
 * and the first byte landing at ring position 4078 (0xFEE), the set-up of
 * Haruhiko Okumura's original LZSS.C that the game's tool was built from.
 * There is no magic number, so detection needs the `.spz` name and a size
 * the stream could really produce.
 * Facts: ../shared/formats/trespasser.md (SZDD and SPZ; corrections).
 */
#include "spz.h"
#include "codec/lzss.h"
#include "core/module.h"
#include "core/source.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define SPZ_HEADER_SIZE 4

static bool has_spz_name(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n < 4)
        return false;
    const char *ext = name + n - 4;
    return ext[0] == '.' && tolower((unsigned char)ext[1]) == 's' &&
           tolower((unsigned char)ext[2]) == 'p' && tolower((unsigned char)ext[3]) == 'z';
}

/* The fewest bytes a stream of n input bytes decodes to: every item a
 * literal (nine bits of input per output byte), less a trailing flag byte. */
static uint64_t least_output(uint64_t n)
{
    return n < 2 ? 0 : (n - 2) * 8 / 9;
}

static bool plausible_size(uint32_t size, uint64_t stream)
{
    return size <= trowel_lzss_max_output(stream) && size >= least_output(stream);
}

static int spz_bid(trowel_reader *r)
{
    if (!has_spz_name(trowel_input_name(r->in)))
        return TROWEL_BID_NONE;
    uint32_t size;
    if (trowel_read_u32le(r, &size) != TROWEL_OK)
        return TROWEL_BID_NONE;
    /* No magic: the name and a size the stream can hold are all we have. */
    return plausible_size(size, trowel_reader_remaining(r)) ? TROWEL_BID_WEAK + 20
                                                            : TROWEL_BID_NONE;
}

typedef struct spz_state {
    uint32_t size;
} spz_state;

/* The expanded file's name: the SPZ's with `.swp` for `.spz`. */
static void swap_name(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, cap, "%s", slash ? slash + 1 : path);
    size_t n = strlen(out);
    if (has_spz_name(out))
        memcpy(out + n - 3, isupper((unsigned char)out[n - 3]) ? "SWP" : "swp", 3);
    else if (n + 4 < cap)
        strcat(out, ".swp");
}

static trowel_status check_size(trowel_ctx *ctx, uint32_t size, uint64_t stream)
{
    if (size > trowel_lzss_max_output(stream))
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, 0,
                           "SPZ header declares %lu bytes but the %llu-byte stream can hold at "
                           "most %llu: the file is truncated or the size is corrupt",
                           (unsigned long)size, (unsigned long long)stream,
                           (unsigned long long)trowel_lzss_max_output(stream));
    if (size < least_output(stream))
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, 0,
                           "SPZ header declares %lu bytes but the %llu-byte stream holds at "
                           "least %llu",
                           (unsigned long)size, (unsigned long long)stream,
                           (unsigned long long)least_output(stream));
    return TROWEL_OK;
}

static trowel_status spz_open(trowel_archive *a, trowel_reader *r)
{
    spz_state *st;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    s = trowel_read_u32le(r, &st->size);
    if (s != TROWEL_OK) {
        trowel_error why = a->ctx->last_error;
        return trowel_fail(a->ctx, s, why.offset, "SPZ header is cut short: %s", why.message);
    }
    uint64_t packed = trowel_reader_size(r) - SPZ_HEADER_SIZE;
    char name[512];
    swap_name(trowel_input_name(a->in), name, sizeof name);
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", "spz")) ||
        (s = trowel_props_add_uint(info, "version", 0)) ||
        (s = trowel_props_add_str(info, "method", "lzss")) ||
        (s = trowel_props_add_uint(info, "uncompressed_size", st->size)) ||
        (s = trowel_props_add_uint(info, "compressed_size", packed)))
        return s;
    trowel_entry e = {.name = name, .size = st->size, .packed_size = packed,
                      .offset = SPZ_HEADER_SIZE, .method = "lzss"};
    trowel_props *extra;
    if ((s = trowel_archive_add(a, &e, &extra)) != TROWEL_OK)
        return s;
    trowel_error saved = a->ctx->last_error;
    if (check_size(a->ctx, st->size, packed) != TROWEL_OK) {
        trowel_warn(a->ctx, 0, "%s", a->ctx->last_error.message);
        trowel_archive_mark_damaged(a);
    }
    a->ctx->last_error = saved;
    return TROWEL_OK;
}

trowel_status trowel_spz_decode(trowel_ctx *ctx, trowel_reader *file, trowel_sink *out)
{
    uint32_t size;
    trowel_reader stream;
    trowel_status s = trowel_read_u32le(file, &size);
    if (s == TROWEL_OK)
        s = trowel_reader_rest(file, &stream);
    if (s == TROWEL_OK)
        s = check_size(ctx, size, trowel_reader_size(&stream));
    if (s == TROWEL_OK)
        s = trowel_lzss_decode(ctx, &trowel_lzss_spz, &stream, size, out);
    return s;
}

static trowel_status spz_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    (void)index;
    trowel_reader whole;
    trowel_reader_init(&whole, a->ctx, a->in);
    return trowel_spz_decode(a->ctx, &whole, out);
}

static void spz_close(trowel_archive *a)
{
    trowel_mem_free(a->ctx, a->priv);
}

static trowel_status spz_create(trowel_ctx *ctx, const trowel_create_params *p,
                                struct json_object *manifest, trowel_sink *out)
{
    (void)manifest;
    trowel_status s = TROWEL_OK; /* it takes no options: core refused any given */
    if (p->source_count != 1)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "an SPZ file holds exactly one file (%zu given)", p->source_count);
    trowel_set_entry(ctx, p->sources[0].name);
    trowel_input *in;
    if ((s = trowel_source_open(ctx, &p->sources[0], &in)) != TROWEL_OK)
        return s;
    uint64_t size = trowel_input_size(in);
    if (size > UINT32_MAX) {
        trowel_input_close(in);
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "SPZ records sizes in 32 bits: %llu bytes is too large",
                           (unsigned long long)size);
    }
    uint8_t header[SPZ_HEADER_SIZE];
    for (int i = 0; i < 4; i++)
        header[i] = (uint8_t)(size >> (8 * i));
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    s = trowel_sink_write(out, header, sizeof header);
    if (s == TROWEL_OK)
        s = trowel_lzss_encode_reader(ctx, &trowel_lzss_spz, &r, out);
    trowel_input_close(in);
    return s;
}

const trowel_format trowel_format_spz = {
    .id = "spz",
    .family = "trespasser",
    .description = "Trespasser compressed texture pages (SPZ: u32 size + LZSS, zero window)",
    .extensions = ".spz",
    .caps = TROWEL_CAP_LIST,
    .create_options = "",
    .convert_targets = "",
    .bid = spz_bid,
    .open = spz_open,
    .read_entry = spz_read_entry,
    .create = spz_create,
    .close = spz_close,
};
