/*
 * xor69, SCUMM's input filter (xor69.c): the test on a file's first tag
 * and the XORing input, shared by the filter and the resource format,
 * which finds its partner file (the index beside a data file, or back)
 * itself and peels it the same way.
 */
#ifndef TROWEL_SCUMM_XOR69_H
#define TROWEL_SCUMM_XOR69_H

#include "core/filter.h"

enum trowel_xor69_start { TROWEL_XOR69_NONE, TROWEL_XOR69_DATA, TROWEL_XOR69_INDEX };
/* What a file's first four bytes, XORed with 0x69, start: a data file
 * (LECF), an index (RNAM, MAXS) or neither. (The filter's bid also wants
 * the first block's size to fit the file.) */
enum trowel_xor69_start trowel_xor69_start(const uint8_t raw[4]);
/* The filter's open: an input that reads in XORed with 0x69. */
trowel_status trowel_xor69_open(trowel_ctx *ctx, trowel_input *in, trowel_input **out);

/* The filter, listed in registry.c. */
extern const trowel_filter trowel_filter_xor69;

#endif
