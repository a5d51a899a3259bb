/*
 * Input filters and the detection that peels them (see filter.h).
 *
 * xor69: SCUMM v5/v6 index and data files (and v4 .LEC) are XORed with
 *   0x69 over every byte; v7/v8 are plain. The filter bids only when the
 *   first eight bytes, XORed, are a SCUMM file's first block: the tag that
 *   starts a data file (LECF) or an index (RNAM, MAXS) and a big-endian
 *   size that fits the file. It reads through a virtual input that XORs
 *   as it reads (input.c), so nothing is copied whole.
 * szdd: MS COMPRESS.EXE's wrapper (Trespasser's .grf worlds). Peeling means
 *   decoding: the szdd format (src/format/trespasser/szdd.c) reads its one
 *   entry into counted memory, so its header checks and the LZSS codec are
 *   the ones `trowel extract` uses. An SZDD file whose content no format
 *   recognises stays the szdd archive it always was. Because a trial peel
 *   decodes the whole file, the filter bids only when the file's name, or
 *   the name its header restores (WORLD.GR_ with 'f': WORLD.GRF), has the
 *   extension of another format, or when the input has no file name
 *   (standard input): decoding a large SZDD of plain data twice, once to
 *   find nothing inside, took longer than extracting it.
 */
#include "filter.h"
#include "input.h"

#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- xor69 */

enum trowel_xor69_start trowel_xor69_start(const uint8_t raw[4])
{
    uint8_t tag[4];
    for (size_t i = 0; i < sizeof tag; i++)
        tag[i] = raw[i] ^ 0x69;
    if (memcmp(tag, "LECF", 4) == 0)
        return TROWEL_XOR69_DATA;
    if (memcmp(tag, "RNAM", 4) == 0 || memcmp(tag, "MAXS", 4) == 0)
        return TROWEL_XOR69_INDEX;
    return TROWEL_XOR69_NONE;
}

static int xor69_bid(trowel_reader *r)
{
    uint8_t head[8];
    if (trowel_read_bytes(r, head, sizeof head) != TROWEL_OK)
        return TROWEL_BID_NONE;
    for (size_t i = 4; i < sizeof head; i++)
        head[i] ^= 0x69;
    uint32_t size = (uint32_t)head[4] << 24 | (uint32_t)head[5] << 16 | (uint32_t)head[6] << 8 |
                    head[7];
    if (trowel_xor69_start(head) == TROWEL_XOR69_NONE || size < 8 ||
        size > trowel_reader_size(r))
        return TROWEL_BID_NONE;
    return TROWEL_BID_MAGIC;
}

trowel_status trowel_xor69_open(trowel_ctx *ctx, trowel_input *in, trowel_input **out)
{
    return trowel_input_open_xor(ctx, in, 0x69, out);
}

static const trowel_filter filter_xor69 = {
    .id = "xor69",
    .description = "every byte XORed with 0x69 (SCUMM v5/v6 index and data files)",
    .bid = xor69_bid,
    .open = trowel_xor69_open,
};

/* ----------------------------------------------------------------- szdd */

extern const trowel_format trowel_format_szdd;

/* Whether some format other than szdd is found under names ending in ext
 * (".grf"): its extension words, compared without case. */
static bool other_format_ext(const char *ext)
{
    size_t len = strlen(ext);
    for (size_t i = 0; i < trowel_formats_len; i++) {
        const char *w = trowel_formats[i]->extensions;
        if (trowel_formats[i] == &trowel_format_szdd)
            continue;
        while (*w) {
            size_t n = strcspn(w, " ");
            if (n == len && strncasecmp(w, ext, n) == 0)
                return true;
            w += n;
            w += strspn(w, " ");
        }
    }
    return false;
}

/* The file's name, or the name its header restores, promises a format
 * inside (see the top of this file). missing: the header's character for
 * a trailing '_', 0 for none. */
static bool szdd_name_promises_content(const trowel_input *in, uint8_t missing)
{
    if (in->name_is_label || in->fd < 0)
        return true; /* standard input or memory: no name to go by */
    const char *base = strrchr(in->name, '/');
    const char *dot = strrchr(base ? base + 1 : in->name, '.');
    if (!dot || strlen(dot) > 15)
        return false;
    char ext[16];
    strcpy(ext, dot);
    size_t len = strlen(ext);
    if (other_format_ext(ext))
        return true;
    if (len < 2 || ext[len - 1] != '_' || missing < 0x21 || missing > 0x7E)
        return false;
    ext[len - 1] = (char)missing;
    return other_format_ext(ext);
}

static int szdd_filter_bid(trowel_reader *r)
{
    trowel_reader head = *r;
    int bid = trowel_format_szdd.bid(r);
    uint8_t magic_and_mode[10];
    if (bid <= 0 || trowel_read_bytes(&head, magic_and_mode, sizeof magic_and_mode) != TROWEL_OK)
        return TROWEL_BID_NONE;
    /* The missing character follows 'A' in the normal header; the QBasic
     * variant has none (its byte 9 is part of the size). */
    uint8_t missing = magic_and_mode[8] == 'A' ? magic_and_mode[9] : 0;
    return szdd_name_promises_content(r->in, missing) ? bid : TROWEL_BID_NONE;
}

/* The wrapped file, decoded by the szdd format into memory the input owns. */
static trowel_status szdd_filter_open(trowel_ctx *ctx, trowel_input *in, trowel_input **out)
{
    *out = NULL;
    trowel_archive *a;
    trowel_status s = trowel_archive_open_as(ctx, in, &trowel_format_szdd, &a);
    if (s != TROWEL_OK)
        return s;
    uint8_t *data = NULL;
    size_t size = 0;
    if (trowel_archive_entry_count(a) != 1)
        s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET, "SZDD file without content");
    else
        s = trowel_archive_entry_bytes(a, 0, false, &data, &size);
    trowel_archive_close(a);
    if (s != TROWEL_OK)
        return s;
    return trowel_input_adopt_memory(ctx, data, size, trowel_input_name(in), out);
}

static const trowel_filter filter_szdd = {
    .id = "szdd",
    .description = "MS COMPRESS.EXE (SZDD) wrapper around a file trowel knows",
    .bid = szdd_filter_bid,
    .open = szdd_filter_open,
};

const trowel_filter *const trowel_filters[] = {&filter_xor69, &filter_szdd};
const size_t trowel_filters_len = sizeof trowel_filters / sizeof trowel_filters[0];

/* ------------------------------------------------------------ detection */

/* The best format bid on in (want: only want's), 0 when none. */
static int best_format(trowel_ctx *ctx, trowel_input *in, const trowel_format *want,
                       const trowel_format **fmt)
{
    *fmt = NULL;
    int best = 0;
    trowel_input_begin_detection(in);
    for (size_t i = 0; i < trowel_formats_len; i++) {
        if (want && trowel_formats[i] != want)
            continue;
        trowel_reader r;
        trowel_reader_init(&r, ctx, in);
        int b = trowel_formats[i]->bid(&r);
        if (b > best) {
            best = b;
            *fmt = trowel_formats[i];
        }
    }
    trowel_ctx_clear_error(ctx); /* bids may have left read errors behind */
    trowel_input_end_detection(in);
    return best;
}

/* Tries each filter on in; on success c holds the chain from depth on.
 * A trial open runs without warnings or progress: only a kept chain counts. */
static bool peel(trowel_ctx *ctx, trowel_input *in, const trowel_format *want, size_t depth,
                 trowel_chain *c)
{
    if (depth >= TROWEL_FILTER_DEPTH)
        return false;
    for (size_t i = 0; i < trowel_filters_len; i++) {
        const trowel_filter *f = trowel_filters[i];
        trowel_reader r;
        trowel_reader_init(&r, ctx, in);
        trowel_input_begin_detection(in);
        bool bids = f->bid(&r) > 0;
        trowel_input_end_detection(in);
        trowel_ctx_clear_error(ctx);
        if (!bids)
            continue;
        trowel_warning_fn warn = ctx->warn_fn;
        trowel_progress_fn progress = ctx->progress_fn;
        ctx->warn_fn = NULL;
        ctx->progress_fn = NULL;
        trowel_input *peeled = NULL;
        trowel_status s = f->open(ctx, in, &peeled);
        ctx->warn_fn = warn;
        ctx->progress_fn = progress;
        trowel_ctx_clear_error(ctx);
        trowel_set_entry(ctx, NULL); /* a trial read may have named its entry */
        if (s != TROWEL_OK)
            continue;
        c->filters[depth] = f;
        c->inputs[depth] = peeled;
        if (peel(ctx, peeled, want, depth + 1, c))
            return true;
        const trowel_format *fmt;
        int bid = best_format(ctx, peeled, want, &fmt);
        if (fmt && (want ? bid > 0 : bid >= TROWEL_BID_MAGIC)) {
            c->count = depth + 1;
            c->fmt = fmt;
            return true;
        }
        trowel_input_close(peeled);
        c->inputs[depth] = NULL;
    }
    return false;
}

trowel_status trowel_detect_chain(trowel_ctx *ctx, trowel_input *in, const trowel_format *want,
                                  trowel_chain *out)
{
    memset(out, 0, sizeof *out);
    if (peel(ctx, in, want, 0, out))
        return TROWEL_OK;
    memset(out, 0, sizeof *out);
    if (want) {
        out->fmt = want;
        return TROWEL_OK;
    }
    best_format(ctx, in, NULL, &out->fmt);
    if (!out->fmt)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "not a format trowel knows (see 'trowel formats')");
    return TROWEL_OK;
}

void trowel_chain_close(trowel_chain *c)
{
    for (size_t i = c->count; i-- > 0;) {
        trowel_input_close(c->inputs[i]);
        c->inputs[i] = NULL;
    }
    c->count = 0;
}
