/*
 * A PCM WAV writer for the sound converters: 8-bit mono samples, written as
 * WAV's unsigned 8-bit PCM, into a trowel_sink.
 */
#ifndef TROWEL_EXPORT_WAV_H
#define TROWEL_EXPORT_WAV_H

#include "core/core.h"

#define TROWEL_WAV_HEADER_SIZE 44

/* Writes a canonical 44-byte RIFF/WAVE header for n bytes of 8-bit mono
 * PCM at rate samples per second, then the samples. Signed input (-128 to
 * 127, as Amiga samples are) is converted by flipping the top bit; unsigned
 * input is copied. Refuses rates outside 1..1000000 (USAGE) and data that
 * does not fit in a RIFF size (UNSUPPORTED). */
trowel_status trowel_wav_write_u8(trowel_ctx *ctx, trowel_sink *out, const uint8_t *samples,
                                  size_t n, uint32_t rate, bool is_signed);

/* The same for a reader's window, streamed (no copy of the whole sound). */
struct trowel_reader;
trowel_status trowel_wav_write_reader(trowel_ctx *ctx, trowel_sink *out, struct trowel_reader *r,
                                      uint32_t rate, bool is_signed);

#endif
