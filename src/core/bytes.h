/*
 * Storing integers into output buffers in a file's byte order, for writers
 * that build a header or table before sending it to a sink. (Reading goes
 * through the bounded reader, never through helpers like these.)
 */
#ifndef TROWEL_BYTES_H
#define TROWEL_BYTES_H

#include <stdint.h>

static inline void trowel_put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void trowel_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void trowel_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#endif
