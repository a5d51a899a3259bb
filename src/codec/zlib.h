/*
 * zlib streams (RFC 1950: a 2-byte header, deflate, Adler-32) and raw
 * deflate (RFC 1951, TROWEL_CODEC_RAW), over the zlib library.
 *
 * Used by Volition packfiles: per-file zlib streams, one solid stream
 * sync-flushed after each file and never finished (compressed+condensed
 * VPP: it ends 00 00 FF FF with no Adler-32), and raw deflate chunks (SR2
 * PS3).
 *
 * Guarantees: the decoder never reads outside the input buffer it is given
 * nor writes outside the output room, whatever the input; it checks the
 * Adler-32 when the stream has one (a mismatch is CORRUPT, naming the
 * offset); an unfinished stream is accepted only by the rules of
 * core/stream.h (the expected size is met, or, size unknown, the stream
 * stops at a block boundary such as a sync flush). A preset dictionary is
 * UNSUPPORTED. Memory: zlib's own (about 7 KiB + a 32 KiB window to
 * decode; up to about 270 KiB to encode at memLevel 8), all allocated
 * through the context's limit. One input byte decodes to at most 1032
 * bytes (a 258-byte match in 2 bits), which bounds declared sizes.
 *
 * Encoder: levels 0-9 (default 6), windowBits 15, memLevel 8, default
 * strategy: the settings that reproduce Volition's streams byte for byte.
 */
#ifndef TROWEL_CODEC_ZLIB_H
#define TROWEL_CODEC_ZLIB_H

#include "core/stream.h"

extern const trowel_stream_codec trowel_zlib_stream;
extern const struct trowel_codec trowel_codec_zlib;

#endif
