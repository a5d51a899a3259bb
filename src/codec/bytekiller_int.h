/*
 * What the two halves of the Delphine packer share: the decoder
 * (bytekiller.c) and the encoder (bytekiller_encode.c). The stream and
 * its commands are described at the top of bytekiller.c.
 */
#ifndef TROWEL_BYTEKILLER_INT_H
#define TROWEL_BYTEKILLER_INT_H

#include <stdint.h>

enum {
    BK_WINDOW = 4095,   /* the longest offset (12 bits) */
    BK_MAX_COPY = 256,
    BK_MAX_RUN = 264,
    BK_SHORT_RUN = 8,
    BK_TREE_DEPTH = 64,  /* tree nodes examined per position */
    BK_NICE = 64,        /* the tree orders positions by this many bytes */
    BK_ROOT_BITS = 16,   /* 65536 trees */
    BK_MAX_THREADS = 16,
    BK_RING = 512,       /* the parse's window tables */
    BK_COPY_LEVELS = 8   /* long-copy windows of up to 255 (copy_minima_add) */
};

#if defined(__GNUC__)
#define BK_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define BK_ALWAYS_INLINE static inline
#endif

/* rev8[b]: b with its 8 bits in reverse order. */
#define BK_R2(n) n, n + 2 * 64, n + 1 * 64, n + 3 * 64
#define BK_R4(n) BK_R2(n), BK_R2(n + 2 * 16), BK_R2(n + 1 * 16), BK_R2(n + 3 * 16)
#define BK_R6(n) BK_R4(n), BK_R4(n + 2 * 4), BK_R4(n + 1 * 4), BK_R4(n + 3 * 4)
static const uint8_t rev8[256] = {BK_R6(0), BK_R6(2), BK_R6(1), BK_R6(3)};

#endif
