/*
 * What wtd.c (the file: header, bit stream, dense decode, create) shares
 * with wtd_mesh.c (the terrain as the game's quad tree builds it: only the
 * tree's own vertices, its leaf quads as triangles). Internal.
 */
#ifndef TROWEL_TRES_WTD_H
#define TROWEL_TRES_WTD_H

#include "core/core.h"

typedef struct wtd_mapping {
    int32_t quad[4];        /* x, y, w, h */
    float world[4];         /* x, y, w, h */
    float quad_to_world[4]; /* x scale, x offset, y scale, y offset */
    float world_to_quad[4];
    float world_to_coef, coef_to_world, coef_to_quad;
} wtd_mapping;

/* A significant node: side s at quad (x, y), its three wavelets (bottom
 * edge, centre, left edge) and which of its children are significant too
 * (bit k: child k, counter-clockwise from the bottom left). */
typedef struct wtd_node {
    uint32_t x, y, s;
    int32_t w[3];
    uint8_t kids;
} wtd_node;

/* The significant nodes of a tree in the file's pre-order. */
typedef struct wtd_tree {
    uint32_t n; /* quad extent */
    int32_t root;
    wtd_node *nodes;
    size_t count, cap;
} wtd_tree;

/* Writes the terrain mesh of tree t (Y-up metres, see mesh.h) as GLB or
 * OBJ: one vertex per vertex of the tree with the height the game gives
 * it, the tree's leaf quads as triangles (split on the node's diagonal;
 * a quad with deeper neighbours takes their edge vertices, no T-joints).
 * Memory grows with the tree, not with the extent. */
trowel_status trowel_wtd_tree_mesh(trowel_ctx *ctx, const wtd_tree *t, const wtd_mapping *m,
                                   bool glb, trowel_sink *out);

/* The world position of quad vertex (x, y) at coefficient height c, in
 * the game's axes (X east, Y north, Z up, metres). */
void trowel_wtd_world(const wtd_mapping *m, uint32_t x, uint32_t y, int64_t c, float out[3]);

/* ---- wtd_picture.c: a decoded dense grid c (side n, x, y < n) ---- */

/* The height at quad vertex (x, y), x, y <= n: the grid, or on the
 * maximum border the value the game derives there (see wtd_picture.c). */
int64_t trowel_wtd_height_at(const int32_t *c, uint32_t n, uint32_t x, uint32_t y);

/* How the heights of the w x h vertices from the origin go into 16 bits:
 * pixel = (height - offset) / scale, rounded. Heights within 0..65535 keep
 * offset 0 and scale 1; inexact counts the heights that lose bits. */
typedef struct wtd_range {
    int64_t lo, hi, offset, scale;
    uint64_t inexact;
} wtd_range;
void trowel_wtd_range(const int32_t *c, uint32_t n, uint32_t w, uint32_t h, wtd_range *r);

/* The 16-bit height picture, row y = quad row y, with the range, the
 * metres per unit and the file's mapping (hex) in tEXt chunks. */
trowel_status trowel_wtd_write_heights(trowel_ctx *ctx, const int32_t *c, uint32_t n,
                                       uint32_t w, uint32_t h, const wtd_range *r,
                                       double coef_to_world, const char *mapping_hex,
                                       trowel_sink *out);
/* An 8-bit hill-shaded preview, north up. */
trowel_status trowel_wtd_write_shaded(trowel_ctx *ctx, const int32_t *c, uint32_t n, uint32_t w,
                                      uint32_t h, const wtd_mapping *m, trowel_sink *out);
/* A mesh of w x h vertices `step` quad units apart, from the origin. */
trowel_status trowel_wtd_grid_mesh(trowel_ctx *ctx, const int32_t *c, uint32_t n, uint32_t w,
                                   uint32_t h, uint32_t step, const wtd_mapping *m, bool glb,
                                   trowel_sink *out);

#endif
