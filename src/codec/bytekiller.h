/*
 * The Delphine packer (Bytekiller 1.3 family) used by the Cinematique engine
 * (Future Wars, Operation Stealth, Cruise for a Corpse) in part files and in
 * compressed VOL.CNF.
 *
 * A stream is a whole number of big-endian 32-bit words: the packed data
 * words, then the XOR of all data words, then the unpacked length. Decoding
 * starts at the end: the last data word is read first (it holds 0..31 bits
 * under a marker bit, all other words hold 32), bits are taken least
 * significant first, and the output is produced from its last byte back to
 * its first. docs/formats/bytekiller.md has the commands and every check.
 */
#ifndef TROWEL_BYTEKILLER_H
#define TROWEL_BYTEKILLER_H

#include "core/reader.h"

/* The smallest stream: one data word, the checksum and the length. */
#define TROWEL_BYTEKILLER_MIN_STREAM 12u

/* The unpacked length a stream declares (its last word), or
 * TROWEL_ERR_CORRUPT if it is not a whole number of words of at least 12
 * bytes. base: absolute offset of src[0], for messages. */
trowel_status trowel_bytekiller_length(trowel_ctx *ctx, const uint8_t *src, size_t n,
                                       uint64_t base, uint32_t *length);

/* Decodes the stream src[0..n) into dst, which has room for exactly dst_len
 * bytes: the stream's length field must equal dst_len. Checks, each with its
 * own message: word structure, length field, XOR checksum, every command
 * inside the output, every back-reference inside what is already decoded,
 * the input not running out, and no whole data word left unread. Never
 * reads outside src or writes outside dst. */
trowel_status trowel_bytekiller_decode_mem(trowel_ctx *ctx, const uint8_t *src, size_t n,
                                           uint64_t base, uint8_t *dst, size_t dst_len);

/* Whether a well-formed stream also decodes in place, with the packed
 * bytes at the start of the output buffer (out_len bytes), as
 * extract_cine does for VOL.CNF and as Bytekiller decrunchers are meant
 * to: no output byte lands on a data word not yet read. False for any
 * stream that does not decode. Leaves the context's last error as it was. */
bool trowel_bytekiller_in_place_safe(trowel_ctx *ctx, const uint8_t *src, size_t n,
                                     size_t out_len);

/* Loads the rest of r's window, decodes it into a buffer taken from the
 * memory limit and writes it to out; a memory sink that is empty and has
 * room reserved for the whole output (trowel_sink_reserve) is decoded into
 * directly, with no second buffer. expected_size: the size a container
 * declares, or TROWEL_SIZE_UNKNOWN to take the stream's own length field. */
trowel_status trowel_bytekiller_decode(trowel_ctx *ctx, trowel_reader *r, uint64_t expected_size,
                                       trowel_sink *out);

/* The same with the decoder built for any processor of the architecture,
 * where trowel_bytekiller_decode may pick a build for the processor it
 * runs on (BMI2 on x86-64): for tests, which compare the two. */
trowel_status trowel_bytekiller_decode_portable(trowel_ctx *ctx, trowel_reader *r,
                                                uint64_t expected_size, trowel_sink *out);

/* Packs data[0..size) with an optimal parse over the exact bit costs of the
 * six commands. *out (trowel_mem_alloc, free with trowel_mem_free) receives
 * *out_len bytes. Deterministic: the same input always gives the same bytes.
 * Sizes above UINT32_MAX are refused (the length field has 32 bits). */
trowel_status trowel_bytekiller_encode(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                       uint8_t **out, size_t *out_len);

/* The raw-stream codec "bytekiller" (struct trowel_codec is in core/module.h). */
extern const struct trowel_codec trowel_codec_bytekiller;

#endif
