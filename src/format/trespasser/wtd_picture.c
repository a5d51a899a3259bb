/*
 * Pictures and grid meshes of a decoded WTD terrain (the dense grid from
 * wtd.c): the heights as a 16-bit PNG that keeps the terrain's real range,
 * an 8-bit hill-shaded preview a person can look at, and a mesh sampled on
 * a regular grid.
 *
 * The dense grid holds the quad vertices x, y < extent. The vertices of the
 * maximum border (x or y = extent) carry no data in the file; the game
 * gives them the values of the near side when it subdivides a border node
 * (its RecalcDscScalingCoef copies vertex 0 to 1 and 3 to 2 at max X, 1 to
 * 2 and 0 to 3 at max Y). With every node subdivided, as a dense grid is,
 * that makes (extent, y) = (extent - 2, y) for even y and the prediction
 * from (extent - 2, y +- 1) for odd y, and the same for the top row:
 * trowel_wtd_height_at gives them, so pictures and grids include the last
 * row and column.
 */
#include "wtd.h"

#include "codec/tres_wavelet.h"
#include "export/mesh.h"
#include "export/png.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int64_t predict2(int64_t a, int64_t b)
{
    return trowel_wavelet_asr(a + b + 1, 1);
}

int64_t trowel_wtd_height_at(const int32_t *c, uint32_t n, uint32_t x, uint32_t y)
{
    if (x < n && y < n)
        return c[(size_t)y * n + x];
    if (x >= n && y >= n)
        return c[(size_t)(n - 2) * n + n - 2];
    if (x >= n) {
        if (y % 2 == 0)
            return c[(size_t)y * n + n - 2];
        int64_t below = c[(size_t)(y - 1) * n + n - 2];
        int64_t above = y + 1 < n ? c[(size_t)(y + 1) * n + n - 2] : below;
        return predict2(below, above);
    }
    if (x % 2 == 0)
        return c[(size_t)(n - 2) * n + x];
    int64_t left = c[(size_t)(n - 2) * n + x - 1];
    int64_t right = x + 1 < n ? c[(size_t)(n - 2) * n + x + 1] : left;
    return predict2(left, right);
}

void trowel_wtd_range(const int32_t *c, uint32_t n, uint32_t w, uint32_t h, wtd_range *r)
{
    r->lo = INT64_MAX;
    r->hi = INT64_MIN;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            int64_t v = trowel_wtd_height_at(c, n, x, y);
            r->lo = v < r->lo ? v : r->lo;
            r->hi = v > r->hi ? v : r->hi;
        }
    /* Heights that fit 16 unsigned bits keep their values; others are
     * shifted by the lowest and, when they span more than 16 bits, divided
     * by the smallest whole step that fits them. */
    r->offset = r->lo >= 0 && r->hi <= 65535 ? 0 : r->lo;
    r->scale = 1;
    if (r->hi - r->lo > 65535)
        r->scale = (r->hi - r->lo + 65534) / 65535;
    r->inexact = 0;
    if (r->scale > 1)
        for (uint32_t y = 0; y < h; y++)
            for (uint32_t x = 0; x < w; x++)
                r->inexact += (trowel_wtd_height_at(c, n, x, y) - r->offset) % r->scale != 0;
}

trowel_status trowel_wtd_write_heights(trowel_ctx *ctx, const int32_t *c, uint32_t n,
                                       uint32_t w, uint32_t h, const wtd_range *r,
                                       double coef_to_world, const char *mapping_hex,
                                       trowel_sink *out)
{
    uint8_t *px;
    trowel_status s = trowel_mem_new(ctx, (size_t)w * h * 2, &px);
    if (s != TROWEL_OK)
        return s;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            int64_t v = trowel_wtd_height_at(c, n, x, y) - r->offset;
            uint16_t p = (uint16_t)((v + r->scale / 2) / r->scale);
            px[((size_t)y * w + x) * 2] = (uint8_t)(p >> 8);
            px[((size_t)y * w + x) * 2 + 1] = (uint8_t)p;
        }
    char offset[24], scale[24], metres[32], extent[16];
    snprintf(offset, sizeof offset, "%lld", (long long)r->offset);
    snprintf(scale, sizeof scale, "%lld", (long long)r->scale);
    snprintf(metres, sizeof metres, "%.9g", coef_to_world);
    snprintf(extent, sizeof extent, "%lu", (unsigned long)n);
    const trowel_png_text text[] = {
        {"Description", "Trespasser WTD terrain heights, row y = quad row y (north down). "
                        "Height units = trowel:height-offset + trowel:height-scale x pixel; "
                        "metres = height units x trowel:coef-to-world."},
        {"trowel:height-offset", offset},
        {"trowel:height-scale", scale},
        {"trowel:coef-to-world", metres},
        {"trowel:tres-wtd-extent", extent},
        {"trowel:tres-wtd-mapping", mapping_hex},
    };
    s = trowel_png_write_gray(ctx, out, w, h, 16, px, text, 6);
    trowel_mem_free(ctx, px);
    return s;
}

/* The height in metres at a vertex, clamped to the picture. */
static double metres_at(const int32_t *c, uint32_t n, int64_t x, int64_t y, uint32_t w,
                        uint32_t h, double coef_to_world)
{
    x = x < 0 ? 0 : x >= (int64_t)w ? (int64_t)w - 1 : x;
    y = y < 0 ? 0 : y >= (int64_t)h ? (int64_t)h - 1 : y;
    return (double)trowel_wtd_height_at(c, n, (uint32_t)x, (uint32_t)y) * coef_to_world;
}

trowel_status trowel_wtd_write_shaded(trowel_ctx *ctx, const int32_t *c, uint32_t n, uint32_t w,
                                      uint32_t h, const wtd_mapping *m, trowel_sink *out)
{
    wtd_range r;
    trowel_wtd_range(c, n, w, h, &r);
    uint8_t *px;
    trowel_status s = trowel_mem_new(ctx, (size_t)w * h, &px);
    if (s != TROWEL_OK)
        return s;
    double k = m->coef_to_world, dx = fabs(m->quad_to_world[0]), dy = fabs(m->quad_to_world[2]);
    dx = dx > 0 && isfinite(dx) ? dx : 1;
    dy = dy > 0 && isfinite(dy) ? dy : 1;
    k = isfinite(k) ? k : 1;
    /* Light from the north-west, 45 degrees up (X east, Y north, Z up). */
    const double light[3] = {-0.5, 0.5, 0.70710678};
    double span = (double)(r.hi - r.lo);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            double gx = (metres_at(c, n, (int64_t)x + 1, y, w, h, k) -
                         metres_at(c, n, (int64_t)x - 1, y, w, h, k)) / (2 * dx);
            double gy = (metres_at(c, n, x, (int64_t)y + 1, w, h, k) -
                         metres_at(c, n, x, (int64_t)y - 1, w, h, k)) / (2 * dy);
            double len = sqrt(gx * gx + gy * gy + 1);
            double lit = (-gx * light[0] - gy * light[1] + light[2]) / len;
            double height = span > 0 ? (double)(trowel_wtd_height_at(c, n, x, y) - r.lo) / span : 0.5;
            double v = 255 * (0.75 * (lit > 0 ? lit : 0) + 0.25 * height);
            if (!isfinite(v))
                v = 0; /* absurd scales in a hostile header */
            /* North up, as maps are read: row 0 is the northern edge. */
            px[(size_t)(h - 1 - y) * w + x] = (uint8_t)(v > 255 ? 255 : v < 0 ? 0 : v + 0.5);
        }
    const trowel_png_text text[] = {
        {"Description", "Trespasser WTD terrain, hill-shaded preview (north up, light from "
                        "the north-west); not heights: convert without -O shade=1 for those."},
    };
    s = trowel_png_write_gray(ctx, out, w, h, 8, px, text, 1);
    trowel_mem_free(ctx, px);
    return s;
}

trowel_status trowel_wtd_grid_mesh(trowel_ctx *ctx, const int32_t *c, uint32_t n, uint32_t w,
                                   uint32_t h, uint32_t step, const wtd_mapping *m, bool glb,
                                   trowel_sink *out)
{
    trowel_mesh mesh;
    trowel_mesh_init(&mesh, ctx, 0);
    static const float grey[3] = {0.5f, 0.5f, 0.5f};
    uint32_t mat, first = 0;
    trowel_status s = trowel_mesh_add_material(&mesh, "terrain", grey, 1.0f, NULL, &mat);
    if (s == TROWEL_OK)
        s = trowel_mesh_begin_object(&mesh, "terrain");
    for (uint32_t j = 0; s == TROWEL_OK && j < h; j++)
        for (uint32_t i = 0; s == TROWEL_OK && i < w; i++) {
            uint32_t x = i * step, y = j * step;
            float game[3], pos[3];
            trowel_wtd_world(m, x, y, trowel_wtd_height_at(c, n, x, y), game);
            trowel_mesh_from_z_up(game, pos);
            uint32_t index;
            s = trowel_mesh_add_vertex(&mesh, pos, NULL, NULL, &index);
            if (i == 0 && j == 0)
                first = index;
        }
    /* Counter-clockwise seen from above, split on the diagonal the quad
     * tree uses for a cell in that position. */
    for (uint32_t j = 0; s == TROWEL_OK && j + 1 < h; j++)
        for (uint32_t i = 0; s == TROWEL_OK && i + 1 < w; i++) {
            uint32_t v0 = first + j * w + i, v1 = v0 + 1, v3 = v0 + w, v2 = v3 + 1;
            if ((i ^ j) & 1) {
                s = trowel_mesh_add_triangle(&mesh, v0, v1, v3, mat);
                if (s == TROWEL_OK)
                    s = trowel_mesh_add_triangle(&mesh, v1, v2, v3, mat);
            } else {
                s = trowel_mesh_add_triangle(&mesh, v0, v1, v2, mat);
                if (s == TROWEL_OK)
                    s = trowel_mesh_add_triangle(&mesh, v0, v2, v3, mat);
            }
        }
    if (s == TROWEL_OK)
        s = glb ? trowel_mesh_write_glb(&mesh, out) : trowel_mesh_write_obj(&mesh, out, NULL);
    trowel_mesh_free(&mesh);
    return s;
}
