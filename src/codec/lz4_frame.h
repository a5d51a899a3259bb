/*
 * LZ4 frames (the LZ4 frame format: magic 04 22 4D 18, a descriptor,
 * blocks, an end mark, an optional content checksum) over liblz4's LZ4F
 * API, in the streaming form of core/stream.h.
 *
 * Used by Volition packfiles v17 (Agents of Mayhem, Saints Row 2022): each
 * file is one frame with linked blocks.
 *
 * Guarantees: the decoder never reads outside the input buffer it is given
 * nor writes outside the output room (liblz4 promises the same of its
 * decoder); it decodes linked and independent blocks, checks block and
 * content checksums and the declared content size when the frame has them
 * (a mismatch is CORRUPT, naming the offset); a frame without its end mark
 * is TRUNCATED. One frame per stream: bytes after it are refused by the
 * whole-call decoder. Memory: liblz4's context and block buffers (up to
 * about 8 MiB for 4 MiB blocks), allocated through the context's limit
 * (LZ4F_CustomMem, liblz4 >= 1.9.4). One input byte decodes to at most 255
 * bytes, which bounds declared sizes.
 *
 * Encoder: levels 1-12 (1 fast, 3 and up LZ4HC; default 1), 64 KiB linked
 * blocks (each block may match into the one before, so small blocks cost
 * almost no ratio, and memory stays small: about 260 KiB to decode such
 * frames, 280 KiB to encode, 520 KiB with LZ4HC) and a content checksum;
 * the content size is recorded when the caller knows it (size_hint), and
 * the input must then be exactly that long.
 */
#ifndef TROWEL_CODEC_LZ4_FRAME_H
#define TROWEL_CODEC_LZ4_FRAME_H

#include "core/stream.h"

extern const trowel_stream_codec trowel_lz4_stream;
extern const struct trowel_codec trowel_codec_lz4;

#endif
