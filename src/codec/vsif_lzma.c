/*
 * Valve's LZMA blobs: a 17-byte header ("LZMA", u32 actual size, u32 LZMA
 * size, 5 property bytes) and a raw LZMA1 stream, decoded and encoded with
 * liblzma. Facts: ../shared/formats/valve-vsif-bvcd.md ("Compressed scene
 * data"), Source SDK 2013 tier1/lzmaDecoder.h (the header layout) and the
 * real images of the shared corpus (props 5D 00 00 00 01 and 5D 00 00 00 04,
 * no end marker). docs/formats/vsif.md describes the checks.
 *
 * Decoding stops at the declared actual size, as the engine does, so a
 * stream with or without end marker reads the same. The dictionary liblzma
 * sets up is clamped to the actual size (for a decoder used again, up to
 * 1 MiB, rounded up to a power of two so that it can keep it): a valid
 * stream cannot reach further back than what it has produced, and a blob
 * that declares a 4 GiB dictionary for 200 bytes then costs 4 KiB rather
 * than 4 GiB. liblzma allocates through the context's limit-aware
 * allocator.
 */
#include "codec/vsif_lzma.h"

#include "core/module.h"

#include <lzma.h>
#include <string.h>

#define DICT_MIN ((uint32_t)4096)
#define DICT_ROUNDED_MAX ((uint32_t)1 << 20)
#define ENC_DICT_SMALL ((uint32_t)64 * 1024)
#define ENC_DICT_MAX ((uint32_t)8 << 20) /* preset 6's dictionary */
#define STREAM_CHUNK ((size_t)64 * 1024)

static const uint8_t lzma_id[4] = {'L', 'Z', 'M', 'A'};

static uint32_t get_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32le(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ------------------------------------------------------------ allocation */

static void *lz_alloc(void *opaque, size_t nmemb, size_t size)
{
    uint64_t total;
    if (trowel_mul_overflows(nmemb, size, &total) || total > SIZE_MAX)
        return NULL;
    return trowel_mem_alloc(opaque, (size_t)total);
}

static void lz_free(void *opaque, void *p)
{
    trowel_mem_free(opaque, p);
}

/* Turns a liblzma failure into a trowel error. */
static trowel_status lz_fail(trowel_ctx *ctx, lzma_ret r, uint64_t offset, const char *doing)
{
    switch (r) {
    case LZMA_MEM_ERROR:
    case LZMA_MEMLIMIT_ERROR:
        return trowel_fail(ctx, TROWEL_ERR_LIMIT, offset,
                           "%s: liblzma needs more memory than the limit allows", doing);
    case LZMA_OPTIONS_ERROR:
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, offset, "%s: LZMA properties are invalid",
                           doing);
    case LZMA_BUF_ERROR:
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, offset,
                           "%s: the LZMA stream ends before the declared size", doing);
    default:
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, offset, "%s: the LZMA stream is corrupt (%d)",
                           doing, (int)r);
    }
}

/* ---------------------------------------------------------------- header */

bool trowel_vsif_lzma_is_compressed(const uint8_t *data, size_t n)
{
    return n >= 4 && memcmp(data, lzma_id, 4) == 0;
}

static trowel_status header_from_bytes(trowel_ctx *ctx, const uint8_t raw[17], uint64_t abs_offset,
                                       trowel_vsif_lzma_header *h)
{
    if (memcmp(raw, lzma_id, 4) != 0)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, abs_offset, "no \"LZMA\" id");
    h->actual_size = get_u32le(raw + 4);
    h->lzma_size = get_u32le(raw + 8);
    memcpy(h->props, raw + 12, 5);
    /* lc/lp/pb packed as (pb * 5 + lp) * 9 + lc: 225 values. */
    if (h->props[0] >= 9 * 5 * 5)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, abs_offset + 12,
                           "LZMA properties byte 0x%02x is out of range", h->props[0]);
    return TROWEL_OK;
}

trowel_status trowel_vsif_lzma_parse_header(trowel_ctx *ctx, const uint8_t *blob, size_t blob_size,
                                            uint64_t abs_offset, trowel_vsif_lzma_header *h)
{
    if (blob_size < TROWEL_VSIF_LZMA_HEADER_SIZE)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, abs_offset,
                           "%zu bytes cannot hold the 17-byte LZMA header", blob_size);
    trowel_status s = header_from_bytes(ctx, blob, abs_offset, h);
    if (s != TROWEL_OK)
        return s;
    if (h->lzma_size > blob_size - TROWEL_VSIF_LZMA_HEADER_SIZE)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, abs_offset + 8,
                           "LZMA header declares a %lu-byte stream but only %zu bytes follow",
                           (unsigned long)h->lzma_size, blob_size - TROWEL_VSIF_LZMA_HEADER_SIZE);
    return TROWEL_OK;
}

/* --------------------------------------------------------------- decoder */

/* Sets up a raw LZMA1 decoder for h on strm (allocator al). held: NULL
 * for a decoder of its own; for one kept for many blobs, the memory
 * liblzma holds for it (counted on the context already), which a decoder
 * set up again reuses where it can. */
static trowel_status decoder_init(trowel_ctx *ctx, const trowel_vsif_lzma_header *h,
                                  const lzma_allocator *al, lzma_stream *strm, uint64_t abs_offset,
                                  uint64_t *held)
{
    lzma_filter f[2] = {{LZMA_FILTER_LZMA1, NULL}, {LZMA_VLI_UNKNOWN, NULL}};
    lzma_ret r = lzma_properties_decode(&f[0], al, h->props, sizeof h->props);
    if (r != LZMA_OK)
        return lz_fail(ctx, r, abs_offset + 12, "reading the LZMA properties");
    lzma_options_lzma *opt = f[0].options;
    uint32_t want = h->actual_size < DICT_MIN ? DICT_MIN : h->actual_size;
    /* Kept, up to 1 MiB a power of two: the decoder keeps its dictionary
     * when the next blob asks for the same size, as most of an image's
     * scenes do. */
    if (held && want <= DICT_ROUNDED_MAX)
        for (want = DICT_MIN; want < h->actual_size;)
            want <<= 1;
    if (opt->dict_size > want)
        opt->dict_size = want;
    /* What it holds is counted already, and liblzma frees before it
     * allocates anew. */
    uint64_t need = lzma_raw_decoder_memusage(f), had = held ? *held : 0;
    trowel_status s = trowel_mem_check(ctx, need > had ? need - had : 0, "the LZMA decoder");
    if (s == TROWEL_OK && held)
        *held = need > had ? need : had;
    if (s == TROWEL_OK) {
        strm->allocator = al;
        r = lzma_raw_decoder(strm, f);
        if (r != LZMA_OK)
            s = lz_fail(ctx, r, abs_offset, "starting the LZMA decoder");
    }
    lz_free(ctx, opt);
    return s;
}

/* The status for a decoder that stopped (r) with `left` bytes still due. */
static trowel_status decode_shortfall(trowel_ctx *ctx, lzma_ret r, const trowel_vsif_lzma_header *h,
                                      uint64_t left, uint64_t offset)
{
    if (r == LZMA_STREAM_END || r == LZMA_BUF_ERROR || r == LZMA_OK)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, offset,
                           "the LZMA stream ends after %llu of the %lu bytes declared",
                           (unsigned long long)(h->actual_size - left),
                           (unsigned long)h->actual_size);
    return lz_fail(ctx, r, offset, "decoding");
}

/* Decodes a whole blob with strm (set up anew for it, keeping its memory
 * if it was used before): the work of trowel_vsif_lzma_decode. */
static trowel_status decode_blob(trowel_ctx *ctx, const lzma_allocator *al, lzma_stream *strm,
                                 uint64_t *held, const uint8_t *blob, size_t blob_size,
                                 uint64_t abs_offset, uint8_t **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    trowel_vsif_lzma_header h;
    trowel_status s = trowel_vsif_lzma_parse_header(ctx, blob, blob_size, abs_offset, &h);
    if (s != TROWEL_OK)
        return s;
    /* Refused before anything is set up for it. */
    if ((s = trowel_mem_check(ctx, h.actual_size, "the declared LZMA size")) != TROWEL_OK)
        return s;
    uint8_t *buf = trowel_mem_alloc(ctx, h.actual_size ? h.actual_size : 1);
    if (!buf)
        return ctx->last_error.status;
    s = decoder_init(ctx, &h, al, strm, abs_offset, held);
    if (s == TROWEL_OK) {
        strm->next_in = blob + TROWEL_VSIF_LZMA_HEADER_SIZE;
        strm->avail_in = h.lzma_size;
        strm->next_out = buf;
        strm->avail_out = h.actual_size;
        lzma_ret r = LZMA_OK;
        while (strm->avail_out > 0 && r == LZMA_OK)
            r = lzma_code(strm, LZMA_RUN);
        if (strm->avail_out > 0) /* (setting a stream up resets its counts) */
            s = decode_shortfall(ctx, r, &h, strm->avail_out,
                                 abs_offset + TROWEL_VSIF_LZMA_HEADER_SIZE + strm->total_in);
    }
    if (s != TROWEL_OK) {
        trowel_mem_free(ctx, buf);
        return s;
    }
    *out = buf;
    *out_size = h.actual_size;
    return TROWEL_OK;
}

trowel_status trowel_vsif_lzma_decode(trowel_ctx *ctx, const uint8_t *blob, size_t blob_size,
                                      uint64_t abs_offset, uint8_t **out, size_t *out_size)
{
    const lzma_allocator al = {lz_alloc, lz_free, ctx};
    lzma_stream strm = LZMA_STREAM_INIT;
    trowel_status s =
        decode_blob(ctx, &al, &strm, NULL, blob, blob_size, abs_offset, out, out_size);
    lzma_end(&strm);
    return s;
}

struct trowel_vsif_lzma_decoder {
    trowel_ctx *ctx;
    lzma_allocator al;
    lzma_stream strm;
    uint64_t held; /* liblzma's memory for it (decoder_init) */
};

trowel_status trowel_vsif_lzma_decoder_new(trowel_ctx *ctx, trowel_vsif_lzma_decoder **out)
{
    *out = trowel_mem_calloc(ctx, 1, sizeof **out);
    if (!*out)
        return ctx->last_error.status;
    (*out)->ctx = ctx;
    (*out)->al = (lzma_allocator){lz_alloc, lz_free, ctx};
    (*out)->strm = (lzma_stream)LZMA_STREAM_INIT;
    return TROWEL_OK;
}

trowel_status trowel_vsif_lzma_decoder_run(trowel_vsif_lzma_decoder *d, const uint8_t *blob,
                                           size_t blob_size, uint64_t abs_offset, uint8_t **out,
                                           size_t *out_size)
{
    trowel_status s = decode_blob(d->ctx, &d->al, &d->strm, &d->held, blob, blob_size,
                                  abs_offset, out, out_size);
    if (s != TROWEL_OK) { /* nothing of a failed decode is carried to the next */
        lzma_end(&d->strm);
        d->strm = (lzma_stream)LZMA_STREAM_INIT;
        d->held = 0;
    }
    return s;
}

void trowel_vsif_lzma_decoder_free(trowel_vsif_lzma_decoder *d)
{
    if (!d)
        return;
    lzma_end(&d->strm);
    trowel_mem_free(d->ctx, d);
}

/* Streams the rest of r (a header then the stream) into out, a chunk at a
 * time, so memory stays bounded whatever the declared size. */
static trowel_status decode_reader(trowel_ctx *ctx, trowel_reader *r, uint64_t expected_size,
                                   trowel_sink *out)
{
    uint64_t start = trowel_reader_abs(r);
    uint8_t raw[TROWEL_VSIF_LZMA_HEADER_SIZE];
    trowel_status s = trowel_read_bytes(r, raw, sizeof raw);
    trowel_vsif_lzma_header h;
    if (s == TROWEL_OK)
        s = header_from_bytes(ctx, raw, start, &h);
    if (s != TROWEL_OK)
        return s;
    if (h.lzma_size > trowel_reader_remaining(r))
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, start + 8,
                           "LZMA header declares a %lu-byte stream but only %llu bytes follow",
                           (unsigned long)h.lzma_size,
                           (unsigned long long)trowel_reader_remaining(r));
    if (expected_size != TROWEL_SIZE_UNKNOWN && expected_size != h.actual_size)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, start + 4,
                           "LZMA header declares %lu bytes, %llu expected",
                           (unsigned long)h.actual_size, (unsigned long long)expected_size);
    trowel_reader stream;
    if ((s = trowel_reader_sub(r, trowel_reader_tell(r), h.lzma_size, &stream)) != TROWEL_OK)
        return s;
    uint8_t *chunk = trowel_mem_alloc(ctx, STREAM_CHUNK);
    if (!chunk)
        return ctx->last_error.status;
    const lzma_allocator al = {lz_alloc, lz_free, ctx};
    lzma_stream strm = LZMA_STREAM_INIT;
    s = decoder_init(ctx, &h, &al, &strm, start, NULL);
    uint64_t left = h.actual_size;
    lzma_ret lr = LZMA_OK;
    while (s == TROWEL_OK && left > 0 && lr == LZMA_OK) {
        if (strm.avail_in == 0) {
            size_t got = 0;
            s = trowel_reader_borrow(&stream, STREAM_CHUNK, &strm.next_in, &got);
            strm.avail_in = got;
            if (s != TROWEL_OK)
                break;
        }
        strm.next_out = chunk;
        strm.avail_out = left < STREAM_CHUNK ? (size_t)left : STREAM_CHUNK;
        lr = lzma_code(&strm, LZMA_RUN);
        size_t made = (size_t)(strm.next_out - chunk);
        left -= made;
        if (made)
            s = trowel_sink_write(out, chunk, made);
        trowel_progress(ctx, h.actual_size - left, h.actual_size);
    }
    if (s == TROWEL_OK && left > 0)
        s = decode_shortfall(ctx, lr, &h, left, start + sizeof raw + strm.total_in);
    lzma_end(&strm);
    trowel_mem_free(ctx, chunk);
    return s;
}

/* --------------------------------------------------------------- encoder */

struct trowel_vsif_lzma_encoder {
    trowel_ctx *ctx;
    lzma_allocator al;
    lzma_stream strm;
    bool started;
};

/* Scenes are small: one 64 KiB class for all of them lets liblzma keep its
 * match-finder memory from one scene to the next (it re-allocates when the
 * dictionary changes); larger inputs get a power of two up to preset 6's. */
static uint32_t encoder_dict_size(size_t size)
{
    uint32_t d = ENC_DICT_SMALL;
    while (d < size && d < ENC_DICT_MAX)
        d <<= 1;
    return d;
}

trowel_status trowel_vsif_lzma_encoder_new(trowel_ctx *ctx, trowel_vsif_lzma_encoder **out)
{
    trowel_status s = trowel_mem_new_zeroed(ctx, 1, sizeof **out, out);
    if (s != TROWEL_OK)
        return s;
    trowel_vsif_lzma_encoder *e = *out;
    e->ctx = ctx;
    e->al = (lzma_allocator){lz_alloc, lz_free, ctx};
    e->strm = (lzma_stream)LZMA_STREAM_INIT;
    e->strm.allocator = &e->al;
    return TROWEL_OK;
}

void trowel_vsif_lzma_encoder_free(trowel_vsif_lzma_encoder *e)
{
    if (!e)
        return;
    if (e->started)
        lzma_end(&e->strm);
    trowel_mem_free(e->ctx, e);
}

/* Runs the stream over data into buf (cap bytes from offset 17), growing
 * it when incompressible data needs more room. */
static trowel_status encoder_pump(trowel_vsif_lzma_encoder *e, const uint8_t *data, size_t size,
                                  uint8_t **buf, size_t *cap)
{
    trowel_ctx *ctx = e->ctx;
    lzma_stream *strm = &e->strm;
    strm->next_in = data;
    strm->avail_in = size;
    strm->next_out = *buf + TROWEL_VSIF_LZMA_HEADER_SIZE;
    strm->avail_out = *cap - TROWEL_VSIF_LZMA_HEADER_SIZE;
    lzma_ret r;
    while ((r = lzma_code(strm, LZMA_FINISH)) == LZMA_OK) {
        if (strm->avail_out > 0)
            continue;
        size_t used = (size_t)(strm->next_out - *buf);
        uint8_t *grown = trowel_mem_realloc(ctx, *buf, *cap * 2);
        if (!grown)
            return ctx->last_error.status;
        *buf = grown;
        strm->next_out = *buf + used;
        strm->avail_out = *cap;
        *cap *= 2;
    }
    if (r != LZMA_STREAM_END)
        return lz_fail(ctx, r, TROWEL_NO_OFFSET, "encoding");
    if (strm->total_out > UINT32_MAX)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "the LZMA stream passes 4 GiB");
    return TROWEL_OK;
}

trowel_status trowel_vsif_lzma_encoder_run(trowel_vsif_lzma_encoder *e, const uint8_t *data,
                                           size_t size, uint8_t **out, size_t *out_size)
{
    trowel_ctx *ctx = e->ctx;
    *out = NULL;
    *out_size = 0;
    if (size > UINT32_MAX)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "Valve's LZMA header records sizes in 32 bits: %zu bytes is too many",
                           size);
    lzma_options_lzma opt;
    if (lzma_lzma_preset(&opt, 6))
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "liblzma has no preset 6");
    opt.dict_size = encoder_dict_size(size);
    lzma_filter f[2] = {{LZMA_FILTER_LZMA1, &opt}, {LZMA_VLI_UNKNOWN, NULL}};
    uint8_t props[5];
    if (lzma_properties_encode(&f[0], props) != LZMA_OK)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "liblzma cannot encode LZMA1 properties");
    trowel_status s = trowel_mem_check(ctx, lzma_raw_encoder_memusage(f), "the LZMA encoder");
    if (s != TROWEL_OK)
        return s;
    /* Re-initialising the same stream reuses liblzma's buffers. */
    lzma_ret r = lzma_raw_encoder(&e->strm, f);
    if (r != LZMA_OK)
        return lz_fail(ctx, r, TROWEL_NO_OFFSET, "starting the LZMA encoder");
    e->started = true;
    /* Incompressible data grows by a little over 1/64; room for that. */
    size_t cap = TROWEL_VSIF_LZMA_HEADER_SIZE + size + size / 32 + 256;
    uint8_t *buf = trowel_mem_alloc(ctx, cap);
    if (!buf)
        return ctx->last_error.status;
    if ((s = encoder_pump(e, data, size, &buf, &cap)) != TROWEL_OK) {
        trowel_mem_free(ctx, buf);
        return s;
    }
    memcpy(buf, lzma_id, 4);
    put_u32le(buf + 4, (uint32_t)size);
    put_u32le(buf + 8, (uint32_t)e->strm.total_out);
    memcpy(buf + 12, props, 5);
    *out = buf;
    *out_size = TROWEL_VSIF_LZMA_HEADER_SIZE + (size_t)e->strm.total_out;
    return TROWEL_OK;
}

trowel_status trowel_vsif_lzma_encode(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                      uint8_t **out, size_t *out_size)
{
    *out = NULL;
    *out_size = 0;
    trowel_vsif_lzma_encoder *e;
    trowel_status s = trowel_vsif_lzma_encoder_new(ctx, &e);
    if (s != TROWEL_OK)
        return s;
    s = trowel_vsif_lzma_encoder_run(e, data, size, out, out_size);
    trowel_vsif_lzma_encoder_free(e);
    return s;
}

/* ----------------------------------------------------------------- codec */

static trowel_status codec_compress(trowel_ctx *ctx, trowel_reader *in, trowel_sink *out)
{
    return trowel_codec_compress_whole(ctx, in, out, trowel_vsif_lzma_encode);
}

static trowel_status codec_decompress(trowel_ctx *ctx, trowel_reader *in, uint64_t expected_size,
                                      trowel_sink *out)
{
    return decode_reader(ctx, in, expected_size, out);
}

const struct trowel_codec trowel_codec_vsif_lzma = {
    "vsif-lzma",
    "Valve's LZMA (scenes.image): 17-byte header (\"LZMA\", sizes, properties) + raw LZMA1",
    codec_compress,
    codec_decompress,
    NULL,
};
