/*
 * xor69, the input filter of SCUMM v5/v6 index and data files (and v4
 * .LEC), which are XORed with 0x69 over every byte; v7/v8 are plain. The
 * filter bids only when the first eight bytes, XORed, are a SCUMM file's
 * first block: the tag that starts a data file (LECF) or an index (RNAM,
 * MAXS) and a big-endian size that fits the file. It reads through a
 * virtual input that XORs as it reads (core/input.c), so nothing is
 * copied whole. The resource format (res.c) uses the same test and input
 * to open a partner file (docs/formats/scumm-res.md).
 */
#include "xor69.h"

#include "core/input.h"

#include <string.h>

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

const trowel_filter trowel_filter_xor69 = {
    .id = "xor69",
    .description = "every byte XORed with 0x69 (SCUMM v5/v6 index and data files)",
    .bid = xor69_bid,
    .open = trowel_xor69_open,
};
