/*
 * SPZ page files (spz.c), for the PID directory, which reads its sibling
 * page file whole.
 */
#ifndef TROWEL_FORMAT_SPZ_H
#define TROWEL_FORMAT_SPZ_H

#include "core/reader.h"

/* Decodes the SPZ file that file reads, from its cursor (a u32 LE size,
 * then the LZSS stream to the window's end), into out. The declared size
 * is checked against the stream first: more than it can hold is
 * TROWEL_ERR_TRUNCATED, less than it must give TROWEL_ERR_CORRUPT (offset
 * 0, both sizes named); then exactly that many bytes must come out
 * (trowel_lzss_decode). */
trowel_status trowel_spz_decode(trowel_ctx *ctx, trowel_reader *file, trowel_sink *out);

#endif
