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

#include <ctype.h>
#include <string.h>

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

/* Whether name is one a format's word names ("." words: an extension,
 * others a whole name; case ignored). wild_last: name's last character
 * stands for any (an SZDD name whose missing character is unknown). */
static bool word_names(const char *word, size_t n, const char *name, bool wild_last)
{
    size_t len = strlen(name);
    if (n == 0 || word[0] == '*' || len < n || (word[0] != '.' && len != n))
        return false;
    const char *tail = name + len - n;
    for (size_t k = 0; k < n; k++)
        if (!(wild_last && k == n - 1) &&
            tolower((unsigned char)tail[k]) != tolower((unsigned char)word[k]))
            return false;
    return true;
}

/* Whether some format other than szdd is found under this name. */
static bool other_format_named(const char *name, bool wild_last)
{
    for (size_t i = 0; i < trowel_formats_len; i++) {
        if (trowel_formats[i] == &trowel_format_szdd)
            continue;
        for (const char *w = trowel_formats[i]->extensions; *w;) {
            size_t n = strcspn(w, " ");
            if (word_names(w, n, name, wild_last))
                return true;
            w += n;
            w += strspn(w, " ");
        }
    }
    return false;
}

/* The file's name, or the name its header restores, promises a format
 * inside (see the top of this file): WORLD.GRF, WORLD.GR_ with missing
 * character 'f', or WORLD.GR_ without one (QBasic variant, or none
 * recorded: any last character). */
static bool szdd_worth_peeling(trowel_reader *r)
{
    const trowel_input *in = r->in;
    if (in->name_is_label || !trowel_input_is_file(in))
        return true; /* standard input or memory: no name to go by */
    uint8_t head[10];
    trowel_reader h = *r;
    if (trowel_read_bytes(&h, head, sizeof head) != TROWEL_OK)
        return false;
    /* Only the normal header ("SZDD" 88 F0 27 33 'A' c) records one. */
    bool normal = memcmp(head, "SZDD\x88\xf0\x27\x33", 8) == 0 && head[8] == 'A';
    uint8_t missing = normal && head[9] > 0x20 && head[9] < 0x7F ? head[9] : 0;
    const char *slash = strrchr(in->name, '/');
    const char *base = slash ? slash + 1 : in->name;
    size_t len = strlen(base);
    if (other_format_named(base, false))
        return true;
    if (len < 2 || base[len - 1] != '_' || len > 255)
        return false;
    char restored[256];
    memcpy(restored, base, len + 1);
    if (!missing)
        return other_format_named(restored, true);
    restored[len - 1] = (char)missing;
    return other_format_named(restored, false);
}

static int szdd_filter_bid(trowel_reader *r)
{
    return trowel_format_szdd.bid(r);
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
    .worth_peeling = szdd_worth_peeling,
    .open = szdd_filter_open,
};

const trowel_filter *const trowel_filters[] = {&filter_xor69, &filter_szdd};
const size_t trowel_filters_len = sizeof trowel_filters / sizeof trowel_filters[0];

/* ------------------------------------------------------------ detection */

int trowel_best_format(trowel_ctx *ctx, trowel_input *in, const trowel_format *want,
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
        if (bids && !want && f->worth_peeling) {
            trowel_reader_init(&r, ctx, in);
            bids = f->worth_peeling(&r);
        }
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
        int bid = trowel_best_format(ctx, peeled, want, &fmt);
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
    trowel_best_format(ctx, in, NULL, &out->fmt);
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
