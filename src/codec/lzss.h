/*
 * The 4 KiB-window LZSS of MS COMPRESS.EXE (SZDD), QBasic's variant and
 * Trespasser's SPZ. One bitstream, three set-ups: the initial window fill
 * byte and the ring position the first output byte lands at.
 *
 * Stream: a flag byte, then eight items, flag bits taken LSB first.
 * Flag 1: one literal byte. Flag 0: two bytes b0 b1 naming a ring position
 * p = b0 | (b1 & 0xF0) << 4 and a length (b1 & 0x0F) + 3, i.e. 3..18.
 */
#ifndef TROWEL_LZSS_H
#define TROWEL_LZSS_H

#include "core/reader.h"

typedef struct trowel_lzss_params {
    uint8_t fill;   /* initial content of every window byte */
    uint16_t start; /* ring position of the first output byte */
} trowel_lzss_params;

extern const trowel_lzss_params trowel_lzss_szdd;   /* ' ', 4080 */
extern const trowel_lzss_params trowel_lzss_qbasic; /* ' ', 4078 */
extern const trowel_lzss_params trowel_lzss_spz;    /* 0,   4078 */

/* Decodes the stream in r (cursor to window end) into out.
 * expected_size == TROWEL_SIZE_UNKNOWN: decode until the input ends; a flag
 * byte whose items are missing at the very end is fine, a match cut after
 * its first byte is TROWEL_ERR_TRUNCATED.
 * Otherwise exactly expected_size bytes must come out: a stream that ends
 * early is TROWEL_ERR_TRUNCATED (offset: where the input ends); a match
 * that would run past expected_size, or any input left after the last byte
 * beyond padding, is TROWEL_ERR_CORRUPT. Padding is nothing, or one flag
 * byte when the last byte ended a full group of eight items. (The 7 real
 * SZDD files of the corpus end exactly on their last item.) Never writes
 * more than expected_size bytes into out. Memory use is bounded (about
 * 330 KiB), whatever the sizes. */
trowel_status trowel_lzss_decode(trowel_ctx *ctx, const trowel_lzss_params *p, trowel_reader *r,
                                 uint64_t expected_size, trowel_sink *out);

/* Encodes data with an optimal parse (fewest output bits: exact longest
 * matches, then the cheapest path), in blocks of up to 1 MiB with the window
 * carried across. Empty input gives an empty stream; the stream ends right
 * after its last item (unused flag bits are 0). Memory: about 9 MiB for
 * inputs of 1 MiB and more, less for smaller ones. */
trowel_status trowel_lzss_encode(trowel_ctx *ctx, const trowel_lzss_params *p,
                                 const uint8_t *data, size_t size, trowel_sink *out);

/* Encodes the rest of r's window (loaded in blocks, not all at once). */
trowel_status trowel_lzss_encode_reader(trowel_ctx *ctx, const trowel_lzss_params *p,
                                        trowel_reader *r, trowel_sink *out);

/* The largest output a stream of n bytes can decode to (for sanity checks
 * of declared sizes): eight 18-byte matches per 17 input bytes. */
uint64_t trowel_lzss_max_output(uint64_t n);

/* The raw-stream codecs (struct trowel_codec is in core/module.h):
 * "szdd" uses the SZDD set-up, "spz" the SPZ one; neither has a header. */
extern const struct trowel_codec trowel_codec_szdd;
extern const struct trowel_codec trowel_codec_spz;

#endif
