/*
 * Valve's LZMA wrapper (scenes.image scene data, also used elsewhere in the
 * Source engine): a 17-byte header, then one raw LZMA1 stream.
 *
 *   "LZMA" | u32 LE actual (decoded) size | u32 LE lzma (stream) size |
 *   5 LZMA properties bytes (lc/lp/pb byte, u32 LE dictionary size)
 *
 * The stream usually has no end marker: a decoder stops once it has made
 * the actual size. liblzma's raw LZMA1 encoder always ends its stream with a
 * marker, which Valve's decoder (LZMA SDK) accepts; ours does too.
 *
 * Guarantees: the decoders never read past the blob they are given nor
 * produce more than the declared actual size, and refuse a declared size
 * before allocating anything for it when it passes the context's memory
 * limit or, for lzma size, the bytes present. liblzma's own allocations go
 * through the context's limit-aware allocator.
 */
#ifndef TROWEL_VSIF_LZMA_H
#define TROWEL_VSIF_LZMA_H

#include "core/reader.h"

#define TROWEL_VSIF_LZMA_HEADER_SIZE 17u

typedef struct trowel_vsif_lzma_header {
    uint32_t actual_size; /* bytes after decoding */
    uint32_t lzma_size;   /* bytes of LZMA stream after the header */
    uint8_t props[5];
} trowel_vsif_lzma_header;

/* True when data (n bytes) starts with the "LZMA" id. */
bool trowel_vsif_lzma_is_compressed(const uint8_t *data, size_t n);

/* Parses and checks the 17-byte header at the start of blob (blob_size
 * bytes present; abs_offset is blob's offset in the input, for messages):
 * the id, properties liblzma accepts, and lzma_size within the bytes present.
 * TRUNCATED when the blob is shorter than the header or the stream. */
trowel_status trowel_vsif_lzma_parse_header(trowel_ctx *ctx, const uint8_t *blob, size_t blob_size,
                                            uint64_t abs_offset, trowel_vsif_lzma_header *h);

/* Decodes a whole blob (header + stream) into a new buffer of exactly the
 * declared actual size, allocated with trowel_mem_alloc (caller frees with
 * trowel_mem_free). A stream that ends before the actual size is
 * TRUNCATED; a broken stream CORRUPT; a size past the memory limit LIMIT. */
trowel_status trowel_vsif_lzma_decode(trowel_ctx *ctx, const uint8_t *blob, size_t blob_size,
                                      uint64_t abs_offset, uint8_t **out, size_t *out_size);

/* The same for many blobs in a row on one thread (an image's scenes): one
 * decoder keeps liblzma's state and dictionary between calls instead of
 * setting them up and freeing them for each. Its memory is counted on ctx
 * until it is freed. */
typedef struct trowel_vsif_lzma_decoder trowel_vsif_lzma_decoder;
trowel_status trowel_vsif_lzma_decoder_new(trowel_ctx *ctx, trowel_vsif_lzma_decoder **out);
trowel_status trowel_vsif_lzma_decoder_run(trowel_vsif_lzma_decoder *d, const uint8_t *blob,
                                           size_t blob_size, uint64_t abs_offset, uint8_t **out,
                                           size_t *out_size);
void trowel_vsif_lzma_decoder_free(trowel_vsif_lzma_decoder *d);

/* Encodes data into a new blob (header + raw LZMA1 stream with end marker,
 * liblzma preset 6), allocated with trowel_mem_alloc. The dictionary is
 * 64 KiB for inputs up to that size, else the next power of two up to
 * 8 MiB: small enough to cost the engine's decoder little memory. Refuses
 * (UNSUPPORTED) inputs over 4 GiB. */
trowel_status trowel_vsif_lzma_encode(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                      uint8_t **out, size_t *out_size);

/* The same for many inputs in a row (an image's scenes): one encoder keeps
 * liblzma's match-finder memory between calls instead of setting it up and
 * zeroing fresh pages each time. */
typedef struct trowel_vsif_lzma_encoder trowel_vsif_lzma_encoder;
trowel_status trowel_vsif_lzma_encoder_new(trowel_ctx *ctx, trowel_vsif_lzma_encoder **out);
trowel_status trowel_vsif_lzma_encoder_run(trowel_vsif_lzma_encoder *e, const uint8_t *data,
                                           size_t size, uint8_t **out, size_t *out_size);
void trowel_vsif_lzma_encoder_free(trowel_vsif_lzma_encoder *e);

/* The codec "vsif-lzma" (struct trowel_codec is in core/module.h): streams
 * with Valve's 17-byte header, for trowel compress / decompress. */
extern const struct trowel_codec trowel_codec_vsif_lzma;

#endif
