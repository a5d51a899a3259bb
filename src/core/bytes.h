/*
 * Storing integers into output buffers in a file's byte order, for writers
 * that build a header or table before sending it to a sink (reading goes
 * through the bounded reader, never through helpers like these); and raw
 * byte fields as hex text, for manifests and JSON, and back.
 */
#ifndef TROWEL_BYTES_H
#define TROWEL_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* Puts s after the at characters of text in out (cap bytes), cut to fit
 * as snprintf cuts it (room stays for a NUL, which is not written), and
 * returns the new length. s may lie in out. */
static inline size_t trowel_text_put_cut(char *out, size_t cap, size_t at, const char *s)
{
    size_t k = strnlen(s, cap - 1 - at);
    memmove(out + at, s, k);
    return at + k;
}

/* p[0, n) as 2n lower-case hex digits and a NUL into out (2n + 1 bytes). */
static inline void trowel_hex_encode(const uint8_t *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

/* Exactly 2n hex digits (as sscanf's %2x reads a pair) into out[0, n);
 * false for NULL, another length or a pair that does not read. */
static inline bool trowel_hex_decode(const char *hex, uint8_t *out, size_t n)
{
    if (!hex || strlen(hex) != 2 * n)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return false;
        out[i] = (uint8_t)v;
    }
    return true;
}

#endif
