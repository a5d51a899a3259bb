/*
 * The terrain wavelet of Trespasser's .wtd files (see tres_wavelet.h).
 *
 * The game analyses level by level (node sides 2, 4, ..., N), visiting a
 * level's nodes in Morton order (children 0, 1, 3, 2) and lifting each
 * node's base vertex as soon as the node is done. In that order every
 * prediction still sees unlifted corners and every lift sees all of its
 * level's contributions, so it equals "predict the whole level, then update
 * the whole level", which is what this file does, with each corner's sum
 * gathered from the (up to) four nodes that touch it.
 */
#include "codec/tres_wavelet.h"

typedef struct level {
    int32_t *c;
    uint32_t n; /* grid side */
    uint32_t s; /* node side at this level */
} level;

static inline int64_t at(const level *L, uint32_t x, uint32_t y)
{
    return L->c[(size_t)y * L->n + x];
}

static inline int64_t predict(int64_t sum)
{
    return trowel_wavelet_asr(sum + 1, 1);
}

static inline int64_t lift(int64_t sum)
{
    return trowel_wavelet_asr(sum + 4, 3);
}

/* Corner k's scaling value of node (x, y), reflected at the maximum border:
 * a corner beyond it reads the node's own corner on the near side. */
static int64_t corner(const level *L, uint32_t x, uint32_t y, int k)
{
    bool right = (k == 1 || k == 2) && x + L->s < L->n;
    bool up = (k == 2 || k == 3) && y + L->s < L->n;
    return at(L, x + (right ? L->s : 0), y + (up ? L->s : 0));
}

/* A node that is an odd child (1 bottom right, 3 top left) predicts its
 * centre from corners 1 and 3; the root and even children from 0 and 2. */
static bool diagonal_1_3(const level *L, uint32_t x, uint32_t y)
{
    return ((x / L->s) ^ (y / L->s)) & 1;
}

/* The three predictions of node (x, y): wavelet 0 (bottom edge), 1 (centre),
 * 2 (left edge). */
static void predictions(const level *L, uint32_t x, uint32_t y, int64_t p[3])
{
    int64_t r0 = corner(L, x, y, 0), r1 = corner(L, x, y, 1);
    int64_t r2 = corner(L, x, y, 2), r3 = corner(L, x, y, 3);
    p[0] = predict(r0 + r1);
    p[1] = diagonal_1_3(L, x, y) ? predict(r1 + r3) : predict(r0 + r2);
    p[2] = predict(r0 + r3);
}

/* What node (x, y) adds to the update sum of its corner k. */
static int64_t contribution(const level *L, uint32_t x, uint32_t y, int k)
{
    uint32_t h = L->s / 2;
    int64_t c[4];
    trowel_wavelet_corner_weights(at(L, x + h, y), at(L, x + h, y + h), at(L, x, y + h),
                                  diagonal_1_3(L, x, y), x == 0, y == 0, c);
    return c[k];
}

void trowel_wavelet_corner_weights(int64_t w0, int64_t w1, int64_t w2, bool diag, bool min_x,
                                   bool min_y, int64_t c[4])
{
    c[0] = w0 + w2;
    c[1] = w0;
    c[2] = 0;
    c[3] = w2;
    if (diag) {
        c[1] += w1;
        c[3] += w1;
    } else {
        c[0] += w1;
        c[2] += w1;
    }
    /* Reflection at the minimum border doubles what the mirrored node
     * would have added. */
    if (min_x) {
        c[0] += w0;
        c[diag ? 3 : 0] += w1;
    }
    if (min_y) {
        c[0] += w2;
        c[diag ? 1 : 0] += w1;
    }
    if (min_x && min_y)
        c[0] += w1;
}

/* The whole update sum at vertex (x, y) of the level. */
static int64_t update_sum(const level *L, uint32_t x, uint32_t y)
{
    int64_t sum = contribution(L, x, y, 0);
    if (x >= L->s)
        sum += contribution(L, x - L->s, y, 1);
    if (x >= L->s && y >= L->s)
        sum += contribution(L, x - L->s, y - L->s, 2);
    if (y >= L->s)
        sum += contribution(L, x, y - L->s, 3);
    return sum;
}

static trowel_status store(trowel_ctx *ctx, level *L, uint32_t x, uint32_t y, int64_t v)
{
    if (v < INT32_MIN || v > INT32_MAX)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "wavelet coefficient at quad vertex (%lu, %lu) overflows 32 bits",
                           (unsigned long)x, (unsigned long)y);
    L->c[(size_t)y * L->n + x] = (int32_t)v;
    return TROWEL_OK;
}

static trowel_status predict_level(trowel_ctx *ctx, level *L, int sign)
{
    uint32_t h = L->s / 2;
    for (uint32_t y = 0; y < L->n; y += L->s)
        for (uint32_t x = 0; x < L->n; x += L->s) {
            int64_t p[3];
            predictions(L, x, y, p);
            trowel_status s;
            if ((s = store(ctx, L, x + h, y, at(L, x + h, y) + sign * p[0])) ||
                (s = store(ctx, L, x + h, y + h, at(L, x + h, y + h) + sign * p[1])) ||
                (s = store(ctx, L, x, y + h, at(L, x, y + h) + sign * p[2])))
                return s;
        }
    return TROWEL_OK;
}

static trowel_status update_level(trowel_ctx *ctx, level *L, int sign)
{
    for (uint32_t y = 0; y < L->n; y += L->s)
        for (uint32_t x = 0; x < L->n; x += L->s) {
            trowel_status s = store(ctx, L, x, y, at(L, x, y) + sign * lift(update_sum(L, x, y)));
            if (s != TROWEL_OK)
                return s;
        }
    return TROWEL_OK;
}

trowel_status trowel_wavelet_forward(trowel_ctx *ctx, int32_t *c, uint32_t n)
{
    for (uint32_t s = 2; s <= n; s *= 2) {
        level L = {c, n, s};
        trowel_status st = predict_level(ctx, &L, -1);
        if (st == TROWEL_OK)
            st = update_level(ctx, &L, +1);
        if (st != TROWEL_OK)
            return st;
    }
    return TROWEL_OK;
}

trowel_status trowel_wavelet_inverse(trowel_ctx *ctx, int32_t *c, uint32_t n)
{
    for (uint32_t s = n; s >= 2; s /= 2) {
        level L = {c, n, s};
        trowel_status st = update_level(ctx, &L, -1);
        if (st == TROWEL_OK)
            st = predict_level(ctx, &L, +1);
        if (st != TROWEL_OK)
            return st;
    }
    return TROWEL_OK;
}
