/*
 * A small SCUMM v6 COST block for unit tests: 16 colours, one animation
 * (limb 0 plays picture 0, looping) and one 4x4 picture whose RLE gives
 * colour 1 for its first two columns and colour 2 for the other two.
 */
#ifndef TROWEL_TEST_COST_SAMPLE_H
#define TROWEL_TEST_COST_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Writes the block into out (256 bytes) and returns its size. */
static inline size_t make_cost(uint8_t out[256])
{
    static const uint8_t rle[] = {0x18, 0x28}; /* colour 1 eight times, colour 2 eight times */
    memset(out, 0, 256);
    size_t base = 8, p = base + 8 + 16;
    memcpy(out, "COST", 4);
    memcpy(out + base + 4, "CO", 2);
    out[base + 7] = 0x58;
    size_t table = p - base;
    size_t anim = table + 2 + 32 + 2, cmds = anim + 5, limb = cmds + 1, pic = limb + 2;
    out[p] = (uint8_t)cmds;
    out[p + 2] = (uint8_t)limb;
    out[p + 34] = (uint8_t)anim;
    uint8_t *a = out + base + anim;
    a[1] = 0x80;
    out[base + limb] = (uint8_t)pic;
    uint8_t *h12 = out + base + pic;
    h12[0] = 4, h12[2] = 4;
    memcpy(h12 + 12, rle, sizeof rle);
    size_t total = base + pic + 12 + sizeof rle;
    out[7] = (uint8_t)total;
    out[base] = (uint8_t)(total - 8);
    return total;
}

#endif
