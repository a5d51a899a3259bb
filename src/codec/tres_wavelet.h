/*
 * Trespasser's terrain wavelet: the integer "0-disc" 2D variant of the
 * Cohen-Daubechies-Feauveau 2-2 (5/3) biorthogonal wavelet, by lifting, on
 * a square quad tree whose side N is a power of two (the .wtd terrain,
 * src/format/trespasser/wtd.c, stores its coefficients).
 *
 * Coefficients live in place in an N x N grid, c[y * N + x] for quad
 * vertex (x, y) (y up, as the game numbers corners counter-clockwise from
 * the bottom left). After the forward transform (0, 0) holds the root
 * scaling coefficient and every other vertex the wavelet of the node whose
 * edge or centre it halves: a node of side s at (x, y) keeps wavelet 0 at
 * (x+s/2, y), wavelet 1 at its centre and wavelet 2 at (x, y+s/2).
 *
 * Both directions follow the game's analysis exactly (facts:
 * ../shared/formats/trespasser.md, corrections): predict (a+b+1)>>1 with
 * corners reflected at the maximum X/Y border, wavelet 1 from corners 1+3
 * in nodes that are odd children (0+2 otherwise and in the root), update
 * corner += (sum+4)>>3 where the sum collects every contribution of the
 * level at that corner first (contributions doubled at the minimum
 * border). The inverse undoes the update with the same summed value and
 * then the prediction, so integers come back exactly. The vertices of the
 * maximum border (x = N or y = N) carry no data and are never stored.
 */
#ifndef TROWEL_TRES_WAVELET_H
#define TROWEL_TRES_WAVELET_H

#include "core/core.h"

/* The largest side: 15 levels of subdivision. */
#define TROWEL_WAVELET_MAX_SIDE 32768u

/* Arithmetic shift right (floor division by 2^k), defined for negatives. */
static inline int64_t trowel_wavelet_asr(int64_t v, unsigned k)
{
    return v >= 0 ? v >> k : -((-v - 1) >> k) - 1;
}

/* Analysis of grid c (side n, a power of two >= 2), in place. Fails
 * (TROWEL_ERR_CORRUPT) only if a coefficient leaves the int32 range, which
 * heights of 16 bits never do. */
trowel_status trowel_wavelet_forward(trowel_ctx *ctx, int32_t *c, uint32_t n);

/* Synthesis: the exact inverse of trowel_wavelet_forward. Coefficients read
 * from a file can be anything: a value that would leave the int32 range is
 * TROWEL_ERR_CORRUPT, never undefined behaviour. */
trowel_status trowel_wavelet_inverse(trowel_ctx *ctx, int32_t *c, uint32_t n);

/* What a node whose wavelets are w0 (x + h, y), w1 (x + h, y + h) and w2
 * (x, y + h) adds to the update sums of its corners c[0..3], counter-
 * clockwise from (x, y): the 0-disc weights along the node's diagonal (1-3
 * when diag, else 0-2), doubled by reflection at the minimum X (min_x) and
 * Y (min_y) border. One rule for the transform and the mesh builder. */
void trowel_wavelet_corner_weights(int64_t w0, int64_t w1, int64_t w2, bool diag, bool min_x,
                                   bool min_y, int64_t c[4]);

#endif
