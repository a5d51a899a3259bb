/*
 * tres-wtd: Trespasser's wavelet terrain (.wtd), a square quad tree of
 * integer wavelet coefficients (src/codec/tres_wavelet.c) in a bit stream.
 *
 * The file is whole little-endian u32 words; bits are taken from each word
 * most significant first. Header (720 bits): u16 version 1001, u32 node
 * count, u32 vertex count, i32 root scaling coefficient, then the 76-byte
 * SMapping read 8 bits at a time: int quad rect x, y, w, h (square, a power
 * of two), float world rect x, y, w, h, quad-to-world (x scale, x offset,
 * y scale, y offset), world-to-quad (same), WorldToCoef, CoefToWorld,
 * CoefToQuad. Then the nodes in pre-order, children counter-clockwise from
 * the bottom left: a significance bit (a node whose whole branch has only
 * zero wavelets is 0 and nothing follows), the branch size in bits (this
 * node's significance bit included; 30 bits at the root, else as many as
 * the parent's branch size needs), the branch's largest |wavelet| (30 bits
 * at the root, else as many as the parent's needs), and the node's three
 * wavelets of floor(log2(max)) + 2 bits, magnitude then sign in the LSB.
 * Nodes of side 1 have no wavelets; under a significant side-2 node they
 * are one 0 bit each. Height = coefficient x CoefToWorld.
 *
 * The header's counts are what the game's tool allocated: nodes = 1 + 4 x
 * significant nodes, vertices = corners of every node kept in the tree.
 * The tool sizes branches by iterating until the root's size stops
 * changing (a child's field widths depend on its parent's size); we do the
 * same, so our files are bit for bit what it would write.
 * Facts: ../shared/formats/trespasser.md (WTD, corrections), the game's
 * WaveletDataFormat / WaveletQuadTreeTForm / BitBuffer sources.
 */
#include "wtd.h"

#include "codec/tres_wavelet.h"
#include "core/module.h"
#include "core/source.h"
#include "export/mesh.h"
#include "export/png.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WTD_VERSION 1001
#define HEADER_BITS 720
#define HEADER_BYTES 92 /* 23 words hold the 720 header bits */
#define ROOT_FIELD_BITS 30
#define MAX_LEVELS 15

static unsigned ulog2(uint64_t v)
{
    unsigned n = 0;
    while (v >>= 1)
        n++;
    return n;
}

/* ------------------------------------------------------------ bit stream */

typedef struct bit_reader {
    trowel_ctx *ctx;
    const uint8_t *data;
    uint64_t bits; /* available: 32 per whole word */
    uint64_t pos;
} bit_reader;

static trowel_status bits_read(bit_reader *b, unsigned n, uint32_t *out)
{
    if (n > b->bits - b->pos || b->pos > b->bits)
        return trowel_fail(b->ctx, TROWEL_ERR_TRUNCATED, (b->pos / 32) * 4,
                           "the bit stream runs out at bit %llu (%u more bits wanted, %llu in "
                           "the file)",
                           (unsigned long long)b->pos, n, (unsigned long long)b->bits);
    uint32_t v = 0;
    for (unsigned i = 0; i < n; i++, b->pos++) {
        const uint8_t *w = b->data + (b->pos / 32) * 4;
        uint32_t word = (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 |
                        (uint32_t)w[3] << 24;
        v = v << 1 | ((word >> (31 - b->pos % 32)) & 1);
    }
    *out = v;
    return TROWEL_OK;
}

typedef struct bit_writer {
    uint32_t *words;
    uint64_t pos;
} bit_writer;

static void bits_write(bit_writer *b, uint32_t v, unsigned n)
{
    for (unsigned i = n; i-- > 0; b->pos++)
        if ((v >> i) & 1)
            b->words[b->pos / 32] |= 1u << (31 - b->pos % 32);
}

/* Sign-magnitude with the sign after the LSB (the game's "bit
 * significance"). */
static uint32_t to_significance(int32_t v)
{
    uint32_t mag = v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
    return mag << 1 | (v < 0);
}

static int32_t from_significance(uint32_t u)
{
    int64_t mag = u >> 1;
    return (int32_t)((u & 1) ? -mag : mag);
}

/* ---------------------------------------------------------------- header */

typedef struct wtd_header {
    uint16_t version;
    uint32_t nodes, vertices;
    int32_t root;
    wtd_mapping map;
    uint32_t side; /* quad extent, checked */
} wtd_header;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void mapping_from_bytes(const uint8_t b[76], wtd_mapping *m)
{
    for (int i = 0; i < 4; i++)
        m->quad[i] = (int32_t)le32(b + 4 * i);
    float f[15];
    for (int i = 0; i < 15; i++) {
        uint32_t u = le32(b + 16 + 4 * i);
        memcpy(&f[i], &u, 4);
    }
    memcpy(m->world, f, sizeof m->world);
    memcpy(m->quad_to_world, f + 4, sizeof m->quad_to_world);
    memcpy(m->world_to_quad, f + 8, sizeof m->world_to_quad);
    m->world_to_coef = f[12];
    m->coef_to_world = f[13];
    m->coef_to_quad = f[14];
}

static void mapping_to_bytes(const wtd_mapping *m, uint8_t b[76])
{
    uint32_t u[19];
    for (int i = 0; i < 4; i++)
        u[i] = (uint32_t)m->quad[i];
    const float *groups[3] = {m->world, m->quad_to_world, m->world_to_quad};
    for (int g = 0; g < 3; g++)
        for (int i = 0; i < 4; i++)
            memcpy(&u[4 + 4 * g + i], &groups[g][i], 4);
    memcpy(&u[16], &m->world_to_coef, 4);
    memcpy(&u[17], &m->coef_to_world, 4);
    memcpy(&u[18], &m->coef_to_quad, 4);
    for (int i = 0; i < 19; i++)
        for (int k = 0; k < 4; k++)
            b[4 * i + k] = (uint8_t)(u[i] >> (8 * k));
}

static trowel_status read_header(bit_reader *b, wtd_header *h)
{
    uint32_t v[4];
    trowel_status s;
    if ((s = bits_read(b, 16, &v[0])) || (s = bits_read(b, 32, &v[1])) ||
        (s = bits_read(b, 32, &v[2])) || (s = bits_read(b, 32, &v[3])))
        return s;
    h->version = (uint16_t)v[0];
    h->nodes = v[1];
    h->vertices = v[2];
    h->root = (int32_t)v[3];
    uint8_t map[76];
    for (int i = 0; i < 76; i++) {
        uint32_t byte = 0; /* GCC -O3 cannot see bits_read sets it */
        if ((s = bits_read(b, 8, &byte)) != TROWEL_OK)
            return s;
        map[i] = (uint8_t)byte;
    }
    mapping_from_bytes(map, &h->map);
    return TROWEL_OK;
}

/* The version and a quad extent the tree can have. */
static trowel_status check_header(trowel_ctx *ctx, wtd_header *h)
{
    if (h->version != WTD_VERSION)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, 0,
                           "WTD version %u is not %u, the only one the game reads", h->version,
                           WTD_VERSION);
    const int32_t *q = h->map.quad;
    if (q[0] != 0 || q[1] != 0 || q[2] != q[3] || q[2] < 2 || (q[2] & (q[2] - 1)) != 0)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, 14,
                           "quad extent (%ld, %ld) %ldx%ld is not a square from the origin "
                           "with a power-of-two side of 2 or more",
                           (long)q[0], (long)q[1], (long)q[2], (long)q[3]);
    if ((uint32_t)q[2] > TROWEL_WAVELET_MAX_SIDE)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, 14,
                           "quad extent %ld needs %u levels; the game's trees have at most %d",
                           (long)q[2], ulog2((uint32_t)q[2]), MAX_LEVELS);
    h->side = (uint32_t)q[2];
    return TROWEL_OK;
}

/* ------------------------------------------------------------------ tree */

/* Counts the vertices the game's tree keeps: the root's corners and the
 * 3 x 3 corners of the children of every significant node. */
typedef struct vertex_set {
    uint8_t *bits;
    uint32_t side; /* n + 1 */
    uint32_t count;
} vertex_set;

static void vertex_mark(vertex_set *v, uint32_t x, uint32_t y)
{
    size_t i = (size_t)y * v->side + x;
    if (!(v->bits[i / 8] & (1u << (i % 8)))) {
        v->bits[i / 8] |= (uint8_t)(1u << (i % 8));
        v->count++;
    }
}

static void vertex_mark_children(vertex_set *v, uint32_t x, uint32_t y, uint32_t s)
{
    if (!v->bits)
        return;
    for (uint32_t j = 0; j <= 2; j++)
        for (uint32_t i = 0; i <= 2; i++)
            vertex_mark(v, x + i * (s / 2), y + j * (s / 2));
}

static trowel_status vertex_set_init(trowel_ctx *ctx, vertex_set *v, uint32_t n)
{
    v->side = n + 1;
    v->count = 0;
    trowel_status s = trowel_mem_new_zeroed(ctx, ((size_t)v->side * v->side + 7) / 8, 1, &v->bits);
    if (s != TROWEL_OK)
        return s;
    vertex_mark(v, 0, 0);
    vertex_mark(v, n, 0);
    vertex_mark(v, n, n);
    vertex_mark(v, 0, n);
    return TROWEL_OK;
}

typedef struct tree_reader {
    bit_reader *b;
    int32_t *c;     /* the dense grid the wavelets go to, or NULL */
    wtd_tree *tree; /* the node list they go to, or NULL */
    uint32_t n;
    uint32_t significant;
    vertex_set vertices;
} tree_reader;

static trowel_status tree_push(trowel_ctx *ctx, wtd_tree *t, const wtd_node *nd)
{
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        trowel_status s = trowel_mem_resize_array(ctx, &t->nodes, cap, sizeof *t->nodes);
        if (s != TROWEL_OK)
            return s;
        t->cap = cap;
    }
    t->nodes[t->count++] = *nd;
    return TROWEL_OK;
}

static const uint32_t child_dx[4] = {0, 1, 1, 0}, child_dy[4] = {0, 0, 1, 1};

/* Reads the node of side s at (x, y); size_bits / max_bits: the field widths
 * its parent allows (0: the parent had no data, nothing to read). */
static trowel_status read_node(tree_reader *t, uint32_t x, uint32_t y, uint32_t s,
                               unsigned size_bits, unsigned max_bits)
{
    if (size_bits == 0)
        return TROWEL_OK;
    uint64_t start = t->b->pos;
    uint32_t flag = 0, branch, max, w[3]; /* flag: GCC -O3 cannot see bits_read sets it */
    trowel_status st = bits_read(t->b, 1, &flag);
    if (st != TROWEL_OK || !flag)
        return st;
    trowel_ctx *ctx = t->b->ctx;
    if (s < 2)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, (start / 32) * 4,
                           "node of side 1 at quad (%lu, %lu) claims wavelets: the tree is "
                           "deeper than its %lu-wide extent allows (bit %llu)",
                           (unsigned long)x, (unsigned long)y, (unsigned long)t->n,
                           (unsigned long long)start);
    if ((st = bits_read(t->b, size_bits, &branch)) || (st = bits_read(t->b, max_bits, &max)))
        return st;
    if (max >= 1u << ROOT_FIELD_BITS)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, (start / 32) * 4,
                           "largest wavelet %lu of the node at quad (%lu, %lu) passes 30 bits",
                           (unsigned long)max, (unsigned long)x, (unsigned long)y);
    unsigned wbits = ulog2(max) + 2;
    for (int i = 0; i < 3; i++)
        if ((st = bits_read(t->b, wbits, &w[i])) != TROWEL_OK)
            return st;
    uint32_t h = s / 2;
    if (t->c) {
        t->c[(size_t)y * t->n + x + h] = from_significance(w[0]);
        t->c[(size_t)(y + h) * t->n + x + h] = from_significance(w[1]);
        t->c[(size_t)(y + h) * t->n + x] = from_significance(w[2]);
    }
    size_t me = t->tree ? t->tree->count : 0;
    if (t->tree) {
        wtd_node nd = {x, y, s, {0}, 0};
        for (int i = 0; i < 3; i++)
            nd.w[i] = from_significance(w[i]);
        if ((st = tree_push(ctx, t->tree, &nd)) != TROWEL_OK)
            return st;
    }
    t->significant++;
    vertex_mark_children(&t->vertices, x, y, s);
    unsigned child_size_bits = ulog2(branch) + 1, child_max_bits = ulog2(max) + 1;
    for (int k = 0; k < 4; k++) {
        uint32_t before = t->significant;
        if ((st = read_node(t, x + child_dx[k] * h, y + child_dy[k] * h, h, child_size_bits,
                            child_max_bits)) != TROWEL_OK)
            return st;
        if (t->tree && t->significant != before)
            t->tree->nodes[me].kids |= (uint8_t)(1u << k);
    }
    if (t->b->pos - start != branch)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, (start / 32) * 4,
                           "the branch at quad (%lu, %lu), side %lu, declares %lu bits but "
                           "holds %llu",
                           (unsigned long)x, (unsigned long)y, (unsigned long)s,
                           (unsigned long)branch, (unsigned long long)(t->b->pos - start));
    return TROWEL_OK;
}

/* ------------------------------------------------------------- the file */

typedef struct wtd_state {
    wtd_header h;
    uint64_t file_size;
} wtd_state;

static int wtd_bid(trowel_reader *r)
{
    uint8_t head[HEADER_BYTES];
    if (trowel_read_bytes(r, head, sizeof head) != TROWEL_OK)
        return TROWEL_BID_NONE;
    bit_reader b = {r->ctx, head, HEADER_BYTES * 8, 0};
    wtd_header h;
    trowel_error saved = r->ctx->last_error;
    bool ok = read_header(&b, &h) == TROWEL_OK && h.version == WTD_VERSION;
    r->ctx->last_error = saved;
    if (!ok)
        return TROWEL_BID_NONE;
    const int32_t *q = h.map.quad;
    bool square = q[0] == 0 && q[1] == 0 && q[2] == q[3] && q[2] >= 2 &&
                  (q[2] & (q[2] - 1)) == 0 && trowel_reader_size(r) % 4 == 0;
    /* 16 bits of version are a weak magic; a sane quad extent settles it. */
    return square ? TROWEL_BID_MAGIC : TROWEL_BID_WEAK;
}

static trowel_status add_float(trowel_props *p, const char *key, float v)
{
    char text[48];
    snprintf(text, sizeof text, "%.9g", (double)v);
    return trowel_props_add_str(p, key, text);
}

static trowel_status add_info(trowel_archive *a, const wtd_header *h)
{
    trowel_props *p = a->info;
    const wtd_mapping *m = &h->map;
    trowel_status s;
    if ((s = trowel_props_add_str(p, "format", "tres-wtd")) ||
        (s = trowel_props_add_uint(p, "version", h->version)) ||
        (s = trowel_props_add_uint(p, "node_count", h->nodes)) ||
        (s = trowel_props_add_uint(p, "vertex_count", h->vertices)) ||
        (s = trowel_props_add_int(p, "root_coefficient", h->root)) ||
        (s = trowel_props_add_uint(p, "extent", h->side)) ||
        (s = trowel_props_add_uint(p, "levels", ulog2(h->side))) ||
        (s = trowel_props_add_int(p, "quad_x", m->quad[0])) ||
        (s = trowel_props_add_int(p, "quad_y", m->quad[1])) ||
        (s = trowel_props_add_int(p, "quad_width", m->quad[2])) ||
        (s = trowel_props_add_int(p, "quad_height", m->quad[3])))
        return s;
    static const char *const world[4] = {"world_x", "world_y", "world_width", "world_height"};
    static const char *const q2w[4] = {"quad_to_world_x_scale", "quad_to_world_x_offset",
                                       "quad_to_world_y_scale", "quad_to_world_y_offset"};
    static const char *const w2q[4] = {"world_to_quad_x_scale", "world_to_quad_x_offset",
                                       "world_to_quad_y_scale", "world_to_quad_y_offset"};
    for (int i = 0; i < 4; i++)
        if ((s = add_float(p, world[i], m->world[i])))
            return s;
    for (int i = 0; i < 4; i++)
        if ((s = add_float(p, q2w[i], m->quad_to_world[i])))
            return s;
    for (int i = 0; i < 4; i++)
        if ((s = add_float(p, w2q[i], m->world_to_quad[i])))
            return s;
    if ((s = add_float(p, "world_to_coef", m->world_to_coef)) ||
        (s = add_float(p, "coef_to_world", m->coef_to_world)) ||
        (s = add_float(p, "coef_to_quad", m->coef_to_quad)))
        return s;
    return TROWEL_OK;
}

static trowel_status wtd_open(trowel_archive *a, trowel_reader *r)
{
    wtd_state *st;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, 1, sizeof *st, &st);
    if (s != TROWEL_OK)
        return s;
    a->priv = st;
    st->file_size = trowel_reader_size(r);
    uint8_t head[HEADER_BYTES];
    s = trowel_read_bytes(r, head, sizeof head);
    if (s != TROWEL_OK) {
        trowel_error why = a->ctx->last_error;
        return trowel_fail(a->ctx, s, why.offset, "WTD header (%d bytes) is cut short: %s",
                           HEADER_BYTES, why.message);
    }
    bit_reader b = {a->ctx, head, HEADER_BYTES * 8, 0};
    if ((s = read_header(&b, &st->h)) != TROWEL_OK || (s = check_header(a->ctx, &st->h)))
        return s;
    return add_info(a, &st->h);
}

static void wtd_close(trowel_archive *a)
{
    trowel_mem_free(a->ctx, a->priv);
}

/* Decodes the whole tree. grid (not NULL): *grid receives the side x side
 * heights (the transform inverted, trowel_mem_alloc'ed). tree (not NULL):
 * receives the significant nodes instead, for a caller that wants the
 * tree and not a dense grid. counts: the significant-node and vertex
 * counts found, or NULL. */
static trowel_status decode(trowel_archive *a, int32_t **grid, wtd_tree *tree,
                            uint32_t counts[2])
{
    const wtd_state *st = a->priv;
    trowel_ctx *ctx = a->ctx;
    uint32_t n = st->h.side;
    if (grid)
        *grid = NULL;
    if (tree)
        *tree = (wtd_tree){.n = n, .root = st->h.root};
    trowel_reader r;
    trowel_reader_init(&r, ctx, a->in);
    uint8_t *data = NULL;
    size_t size = 0;
    trowel_status s = trowel_reader_load(&r, &data, &size);
    if (s != TROWEL_OK)
        return s;
    uint64_t cells;
    int32_t *c = NULL;
    if (!grid)
        ;
    else if (trowel_mul_overflows(n, n, &cells) || trowel_mul_overflows(cells, 4, &cells))
        s = trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET, "terrain too large");
    else
        s = trowel_mem_new_zeroed(ctx, (size_t)n * n, sizeof *c, &c);
    tree_reader t = {0};
    bit_reader b = {ctx, data, (uint64_t)(size / 4) * 32, HEADER_BITS};
    if (s == TROWEL_OK) {
        t = (tree_reader){.b = &b, .c = c, .tree = tree, .n = n};
        if (counts)
            s = vertex_set_init(ctx, &t.vertices, n);
    }
    if (s == TROWEL_OK) {
        if (c)
            c[0] = st->h.root;
        s = read_node(&t, 0, 0, n, ROOT_FIELD_BITS, ROOT_FIELD_BITS);
    }
    if (s == TROWEL_OK && c)
        s = trowel_wavelet_inverse(ctx, c, n);
    if (s == TROWEL_OK && counts) {
        counts[0] = 1 + 4 * t.significant;
        counts[1] = t.vertices.count;
    }
    trowel_mem_free(ctx, t.vertices.bits);
    trowel_mem_free(ctx, data);
    if (s != TROWEL_OK) {
        trowel_mem_free(ctx, c);
        if (tree) {
            trowel_mem_free(ctx, tree->nodes);
            tree->nodes = NULL;
        }
        return s;
    }
    if (grid)
        *grid = c;
    return TROWEL_OK;
}

static trowel_status decode_heights(trowel_archive *a, int32_t **grid, uint32_t counts[2])
{
    return decode(a, grid, NULL, counts);
}

static trowel_status wtd_verify(trowel_archive *a)
{
    const wtd_state *st = a->priv;
    int32_t *grid;
    uint32_t counts[2];
    trowel_status s = decode_heights(a, &grid, counts);
    if (s == TROWEL_ERR_LIMIT || s == TROWEL_ERR_NOMEM)
        return s;
    if (s != TROWEL_OK) {
        trowel_archive_report(a);
        return TROWEL_OK;
    }
    trowel_mem_free(a->ctx, grid);
    if (counts[0] != st->h.nodes) {
        trowel_fail(a->ctx, TROWEL_ERR_VERIFY, 2,
                    "header counts %lu nodes but the tree has %lu", (unsigned long)st->h.nodes,
                    (unsigned long)counts[0]);
        trowel_archive_report(a);
    }
    if (counts[1] != st->h.vertices) {
        trowel_fail(a->ctx, TROWEL_ERR_VERIFY, 6,
                    "header counts %lu vertices but the tree has %lu",
                    (unsigned long)st->h.vertices, (unsigned long)counts[1]);
        trowel_archive_report(a);
    }
    if (st->file_size % 4 != 0) {
        trowel_fail(a->ctx, TROWEL_ERR_VERIFY, st->file_size,
                    "file size %llu is not whole 32-bit words",
                    (unsigned long long)st->file_size);
        trowel_archive_report(a);
    }
    return TROWEL_OK;
}

/* -O options: convert's and create's; core checks them against these rows
 * first (ranges here are the widest; a terrain's own extent is checked
 * where it is known). */
static const trowel_option_info wtd_options[] = {
    {"width", "N", "vertex columns to keep, from the left (default: the whole extent and its "
                   "last column); a mesh is then a full-resolution grid", "png obj glb",
     .type = TROWEL_OPTION_UINT, .min = 1, .max = TROWEL_WAVELET_MAX_SIDE + 1},
    {"height", "N", "vertex rows to keep, from row 0 (default: the whole extent and its last "
                    "row)", "png obj glb",
     .type = TROWEL_OPTION_UINT, .min = 1, .max = TROWEL_WAVELET_MAX_SIDE + 1},
    {"grid", "N", "a mesh sampled on N x N cells (a power of two) instead of the quad tree's "
                  "own vertices and leaves", "obj glb",
     .type = TROWEL_OPTION_UINT, .min = 1, .max = TROWEL_WAVELET_MAX_SIDE},
    {"shade", "1", "an 8-bit hill-shaded preview (north up) instead of the 16-bit heights",
     "png", .type = TROWEL_OPTION_BOOL, .def = "0"},
    {"width", "W", "width of a raw 8/16-bit height map", "create", .type = TROWEL_OPTION_UINT,
     .min = 1, .max = TROWEL_WAVELET_MAX_SIDE},
    {"height", "H", "height of a raw 8/16-bit height map", "create", .type = TROWEL_OPTION_UINT,
     .min = 1, .max = TROWEL_WAVELET_MAX_SIDE},
    {"scale", "M", "metres per height unit (default 1, or a PNG's trowel:coef-to-world)",
     "create", .type = TROWEL_OPTION_REAL, .min = 0, .max = 1000000},
    {"spacing", "M", "metres between samples (default 1)", "create", .type = TROWEL_OPTION_REAL,
     .min = 0, .max = 1000000},
    {0},
};

/* --------------------------------------------------------------- convert */

/* A side given as key= (core checked it is a number of the row's range),
 * up to this terrain's limit. */
static trowel_status option_side(trowel_ctx *ctx, const trowel_option_values *o,
                                 const char *key, uint32_t limit, uint32_t *out)
{
    if (!trowel_option_given(o, key))
        return TROWEL_OK;
    uint64_t x = trowel_option_uint(o, key);
    if (x == 0 || x > limit)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "%s= takes a number from 1 to %lu, not '%llu'", key,
                           (unsigned long)limit, (unsigned long long)x);
    *out = (uint32_t)x;
    return TROWEL_OK;
}

/* The file's SMapping as 152 hex digits, for the PNG's text chunk. */
static void mapping_hex(const wtd_mapping *m, char hex[153])
{
    uint8_t bytes[76];
    mapping_to_bytes(m, bytes);
    for (int i = 0; i < 76; i++)
        snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
}

static trowel_status write_png(trowel_archive *a, const int32_t *c, uint32_t w, uint32_t h,
                               bool shade, trowel_sink *out)
{
    const wtd_state *st = a->priv;
    uint32_t n = st->h.side;
    if (shade)
        return trowel_wtd_write_shaded(a->ctx, c, n, w, h, &st->h.map, out);
    wtd_range r;
    trowel_wtd_range(c, n, w, h, &r);
    if (r.scale > 1)
        trowel_warn(a->ctx, TROWEL_NO_OFFSET,
                    "heights run from %lld to %lld, more than 16 bits apart: the PNG holds "
                    "(height - offset) / scale with offset %lld and scale %lld (in its text "
                    "chunks); %llu of the heights are rounded",
                    (long long)r.lo, (long long)r.hi, (long long)r.offset, (long long)r.scale,
                    (unsigned long long)r.inexact);
    char hex[153];
    mapping_hex(&st->h.map, hex);
    return trowel_wtd_write_heights(a->ctx, c, n, w, h, &r, st->h.map.coef_to_world, hex, out);
}

/* The mesh from the quad tree (the default) or, with grid=N or a crop,
 * sampled on a grid. */
static trowel_status write_tree_mesh(trowel_archive *a, bool glb, trowel_sink *out)
{
    const wtd_state *st = a->priv;
    wtd_tree tree;
    trowel_status s = decode(a, NULL, &tree, NULL);
    if (s != TROWEL_OK)
        return s;
    s = trowel_wtd_tree_mesh(a->ctx, &tree, &st->h.map, glb, out);
    trowel_mem_free(a->ctx, tree.nodes);
    return s;
}

static trowel_status wtd_convert(trowel_archive *a, const char *target, const char *const *opts,
                                 size_t nopts, trowel_sink *out)
{
    const wtd_state *st = a->priv;
    uint32_t n = st->h.side, w = n + 1, h = n + 1, grid = 0;
    bool shade = false;
    trowel_status s;
    bool png = strcmp(target, "png") == 0, obj = strcmp(target, "obj") == 0,
         glb = strcmp(target, "glb") == 0;
    if (!png && !obj && !glb)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "tres-wtd converts to png, obj, glb or json, not %s", target);
    trowel_option_values o = trowel_option_values_of(wtd_options, target, opts, nopts);
    if ((s = option_side(a->ctx, &o, "width", n + 1, &w)) ||
        (s = option_side(a->ctx, &o, "height", n + 1, &h)) ||
        (s = option_side(a->ctx, &o, "grid", n, &grid)))
        return s;
    shade = trowel_option_bool(&o, "shade");
    bool cropped = trowel_option_given(&o, "width") || trowel_option_given(&o, "height");
    if (grid && (grid & (grid - 1)))
        return trowel_fail(a->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "grid= takes a power of two up to the extent %lu, not %lu",
                           (unsigned long)n, (unsigned long)grid);
    if (grid && cropped)
        return trowel_fail(a->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "grid= samples the whole extent; width= and height= crop at full "
                           "resolution: give one or the other");
    if (!png && !grid && !cropped)
        return write_tree_mesh(a, glb, out);
    int32_t *c;
    if ((s = decode_heights(a, &c, NULL)) != TROWEL_OK)
        return s;
    if (png)
        s = write_png(a, c, w, h, shade, out);
    else if (grid)
        s = trowel_wtd_grid_mesh(a->ctx, c, n, grid + 1, grid + 1, n / grid, &st->h.map, glb,
                                 out);
    else
        s = trowel_wtd_grid_mesh(a->ctx, c, n, w, h, 1, &st->h.map, glb, out);
    trowel_mem_free(a->ctx, c);
    return s;
}

/* convert --to json: the heights' range and how the PNG maps it. */
static trowel_status wtd_convert_json(trowel_archive *a, struct json_object *doc)
{
    const wtd_state *st = a->priv;
    uint32_t n = st->h.side;
    int32_t *c;
    trowel_status s = decode_heights(a, &c, NULL);
    if (s != TROWEL_OK)
        return s;
    wtd_range r;
    trowel_wtd_range(c, n, n + 1, n + 1, &r);
    trowel_mem_free(a->ctx, c);
    json_object *heights = json_object_new_object();
    if (!heights)
        return trowel_fail(a->ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "out of memory");
    json_object_object_add(heights, "min", json_object_new_int64(r.lo));
    json_object_object_add(heights, "max", json_object_new_int64(r.hi));
    json_object_object_add(heights, "min_metres",
                           json_object_new_double((double)r.lo * st->h.map.coef_to_world));
    json_object_object_add(heights, "max_metres",
                           json_object_new_double((double)r.hi * st->h.map.coef_to_world));
    json_object_object_add(heights, "png_offset", json_object_new_int64(r.offset));
    json_object_object_add(heights, "png_scale", json_object_new_int64(r.scale));
    json_object_object_add(heights, "png_exact", json_object_new_boolean(r.inexact == 0));
    json_object_object_add(doc, "heights", heights);
    return TROWEL_OK;
}

/* ---------------------------------------------------------------- create */

/* The height map a source holds: a grayscale PNG, or raw 8/16-bit LE
 * samples with width= and height=. A PNG that trowel wrote also says how
 * its samples map to heights and carries the terrain's SMapping. */
typedef struct height_map {
    uint32_t w, h;
    uint16_t *v;
    int64_t offset, scale; /* height = offset + scale x sample */
    double coef_to_world;  /* 0: not given */
    int64_t extent;        /* 0: not given; else the map holds extent + 1 vertices a side */
    bool has_mapping;
    wtd_mapping map;
} height_map;

static trowel_status text_integer(trowel_ctx *ctx, const trowel_png_text_slot *t, int64_t lo,
                                  int64_t *out)
{
    if (!t->value[0])
        return TROWEL_OK;
    char *end;
    long long v = strtoll(t->value, &end, 10);
    if (end == t->value || *end || v < lo || v > INT32_MAX)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "the PNG's text chunk %s is '%s', not a whole number from %lld to %d",
                           t->key, t->value, (long long)lo, INT32_MAX);
    *out = v;
    return TROWEL_OK;
}

/* Reads what trowel's own height PNG says about itself (see wtd_picture.c). */
static trowel_status png_height_texts(trowel_ctx *ctx, trowel_png_text_slot t[5], height_map *m)
{
    m->offset = 0;
    m->scale = 1;
    trowel_status s;
    if ((s = text_integer(ctx, &t[0], INT32_MIN, &m->offset)) ||
        (s = text_integer(ctx, &t[1], 1, &m->scale)) ||
        (s = text_integer(ctx, &t[4], 2, &m->extent)))
        return s;
    if (t[2].value[0]) {
        char *end;
        m->coef_to_world = strtod(t[2].value, &end);
        if (end == t[2].value || *end || !(m->coef_to_world > 0) || m->coef_to_world > 1e6)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                               "the PNG's text chunk %s is '%s', not a positive number",
                               t[2].key, t[2].value);
    }
    if (t[3].value[0]) {
        uint8_t bytes[76];
        bool ok = strlen(t[3].value) == 152;
        for (int i = 0; ok && i < 76; i++) {
            unsigned byte;
            ok = sscanf(t[3].value + 2 * i, "%2x", &byte) == 1;
            bytes[i] = (uint8_t)byte;
        }
        if (!ok)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                               "the PNG's text chunk %s is not 76 bytes in hex", t[3].key);
        mapping_from_bytes(bytes, &m->map);
        m->has_mapping = true;
    }
    return TROWEL_OK;
}

static trowel_status load_heights(trowel_ctx *ctx, const trowel_create_params *p,
                                  height_map *m)
{
    uint32_t w = 0, h = 0;
    trowel_status s;
    trowel_option_values o =
        trowel_option_values_of(wtd_options, "create", p->options, p->option_count);
    if ((s = option_side(ctx, &o, "width", TROWEL_WAVELET_MAX_SIDE, &w)) ||
        (s = option_side(ctx, &o, "height", TROWEL_WAVELET_MAX_SIDE, &h)))
        return s;
    trowel_set_entry(ctx, p->sources[0].name);
    uint8_t *data = NULL;
    size_t size = 0;
    if ((s = trowel_source_load(ctx, &p->sources[0], &data, &size)) != TROWEL_OK)
        return s;
    unsigned depth;
    if (size >= 8 && memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0) {
        trowel_png_text_slot t[5] = {{"trowel:height-offset", ""},
                                      {"trowel:height-scale", ""},
                                      {"trowel:coef-to-world", ""},
                                      {"trowel:tres-wtd-mapping", ""},
                                      {"trowel:tres-wtd-extent", ""}};
        s = trowel_png_read_gray_text(ctx, data, size, &m->w, &m->h, &depth, &m->v, t, 5);
        if (s == TROWEL_OK)
            s = png_height_texts(ctx, t, m);
    } else if (!w || !h) {
        s = trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                        "a raw height map needs -O width=W -O height=H");
    } else if ((uint64_t)w * h != size && (uint64_t)w * h * 2 != size) {
        s = trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                        "%zu bytes are neither %lu 8-bit nor 16-bit samples", size,
                        (unsigned long)w * h);
    } else if ((s = trowel_mem_new(ctx, (size_t)w * h * 2, &m->v)) == TROWEL_OK) {
        bool wide = (uint64_t)w * h * 2 == size;
        for (size_t i = 0; i < (size_t)w * h; i++)
            m->v[i] = wide ? (uint16_t)(data[2 * i] | data[2 * i + 1] << 8) : data[i];
        m->w = w;
        m->h = h;
    }
    trowel_mem_free(ctx, data);
    if (s == TROWEL_OK && (m->w > TROWEL_WAVELET_MAX_SIDE + 1 || m->h > TROWEL_WAVELET_MAX_SIDE + 1 ||
                           (m->w > TROWEL_WAVELET_MAX_SIDE && m->w != m->h))) {
        trowel_mem_free(ctx, m->v);
        m->v = NULL;
        s = trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                        "a %lux%lu height map needs more than %d levels",
                        (unsigned long)m->w, (unsigned long)m->h, MAX_LEVELS);
    }
    return s;
}

/* Per internal node (side >= 2), level by level from the root, row-major
 * within a level: the branch's largest |wavelet| and its encoded size. */
typedef struct tree_sizes {
    const int32_t *c;
    uint32_t n;
    unsigned levels;
    uint32_t *max;
    uint32_t *size;
    uint32_t significant;
} tree_sizes;

static size_t node_index(unsigned d, uint32_t i, uint32_t j)
{
    return (((size_t)1 << (2 * d)) - 1) / 3 + ((size_t)j << d) + i;
}

static uint32_t abs32(int32_t v)
{
    return v < 0 ? (uint32_t)0 - (uint32_t)v : (uint32_t)v;
}

static void compute_max(tree_sizes *t)
{
    for (unsigned d = t->levels; d-- > 0;) {
        uint32_t m = 1u << d, s = t->n >> d, h = s / 2;
        for (uint32_t j = 0; j < m; j++)
            for (uint32_t i = 0; i < m; i++) {
                uint32_t x = i * s, y = j * s, best = 0;
                uint32_t w[3] = {abs32(t->c[(size_t)y * t->n + x + h]),
                                 abs32(t->c[(size_t)(y + h) * t->n + x + h]),
                                 abs32(t->c[(size_t)(y + h) * t->n + x])};
                for (int k = 0; k < 3; k++)
                    best = w[k] > best ? w[k] : best;
                for (int k = 0; d + 1 < t->levels && k < 4; k++) {
                    uint32_t cm = t->max[node_index(d + 1, 2 * i + child_dx[k], 2 * j + child_dy[k])];
                    best = cm > best ? cm : best;
                }
                t->max[node_index(d, i, j)] = best;
            }
    }
}

/* One bottom-up pass of the game's branch sizing: children first, each
 * sized against its parent's size from the previous pass. */
static void size_branch(tree_sizes *t, unsigned d, uint32_t i, uint32_t j, const uint32_t *parent)
{
    size_t me = node_index(d, i, j);
    uint32_t max = t->max[me];
    uint64_t bits = 1;
    if (max != 0) {
        for (int k = 0; d + 1 < t->levels && k < 4; k++)
            size_branch(t, d + 1, 2 * i + child_dx[k], 2 * j + child_dy[k], &t->size[me]);
        if (parent)
            bits += ulog2(*parent) + 1 + ulog2(t->max[node_index(d - 1, i / 2, j / 2)]) + 1;
        else
            bits += 2 * ROOT_FIELD_BITS;
        bits += 3 * (ulog2(max) + 2);
        if (d + 1 < t->levels)
            for (int k = 0; k < 4; k++)
                bits += t->size[node_index(d + 1, 2 * i + child_dx[k], 2 * j + child_dy[k])];
        else
            bits += 4; /* four childless nodes of side 1: one 0 bit each */
    }
    t->size[me] = bits > UINT32_MAX ? UINT32_MAX : (uint32_t)bits;
}

static void write_branch(const tree_sizes *t, bit_writer *b, unsigned d, uint32_t i, uint32_t j,
                         vertex_set *v, uint32_t *significant)
{
    size_t me = node_index(d, i, j);
    uint32_t max = t->max[me];
    bits_write(b, max != 0, 1);
    if (max == 0)
        return;
    (*significant)++;
    uint32_t s = t->n >> d, h = s / 2, x = i * s, y = j * s;
    vertex_mark_children(v, x, y, s);
    if (d == 0) {
        bits_write(b, t->size[me], ROOT_FIELD_BITS);
        bits_write(b, max, ROOT_FIELD_BITS);
    } else {
        size_t parent = node_index(d - 1, i / 2, j / 2);
        bits_write(b, t->size[me], ulog2(t->size[parent]) + 1);
        bits_write(b, max, ulog2(t->max[parent]) + 1);
    }
    unsigned wbits = ulog2(max) + 2;
    bits_write(b, to_significance(t->c[(size_t)y * t->n + x + h]), wbits);
    bits_write(b, to_significance(t->c[(size_t)(y + h) * t->n + x + h]), wbits);
    bits_write(b, to_significance(t->c[(size_t)(y + h) * t->n + x]), wbits);
    for (int k = 0; k < 4; k++) {
        if (d + 1 < t->levels)
            write_branch(t, b, d + 1, 2 * i + child_dx[k], 2 * j + child_dy[k], v, significant);
        else
            bits_write(b, 0, 1);
    }
}

/* A length in metres: core has checked it is a number from 0 to 1e6; the
 * mapping divides by it, so 0 is refused here. */
static trowel_status option_metres(trowel_ctx *ctx, const trowel_create_params *p,
                                   const char *key, float *out)
{
    trowel_option_values o =
        trowel_option_values_of(wtd_options, "create", p->options, p->option_count);
    if (!trowel_option_given(&o, key))
        return TROWEL_OK;
    double x = trowel_option_real(&o, key);
    if (!(x > 0))
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "%s= takes a positive number of metres, not '%s'", key,
                           trowel_option_str(&o, key));
    *out = (float)x;
    return TROWEL_OK;
}

/* The game's SMapping for a square of n quad units, `spacing` metres
 * apart, heights `scale` metres per unit, with its origin at 0. */
static void make_mapping(uint32_t n, float spacing, float scale, wtd_mapping *m)
{
    memset(m, 0, sizeof *m);
    m->quad[2] = m->quad[3] = (int32_t)n;
    m->world[2] = m->world[3] = (float)n * spacing;
    m->quad_to_world[0] = m->quad_to_world[2] = spacing;
    m->world_to_quad[0] = m->world_to_quad[2] = 1.0f / spacing;
    m->world_to_coef = 1.0f / scale;
    m->coef_to_world = scale;
    m->coef_to_quad = scale / spacing;
}

static trowel_status encode(trowel_ctx *ctx, int32_t *c, uint32_t n, const wtd_mapping *map,
                            trowel_sink *out)
{
    trowel_status s = trowel_wavelet_forward(ctx, c, n);
    if (s != TROWEL_OK)
        return s;
    tree_sizes t = {.c = c, .n = n, .levels = ulog2(n)};
    size_t internal = node_index(t.levels, 0, 0);
    vertex_set v = {0};
    uint32_t *words = NULL;
    s = trowel_mem_new(ctx, internal * sizeof *t.max, &t.max);
    if (s == TROWEL_OK)
        s = trowel_mem_new(ctx, internal * sizeof *t.size, &t.size);
    if (s != TROWEL_OK)
        goto done;
    compute_max(&t);
    for (size_t i = 0; i < internal; i++)
        t.size[i] = INT32_MAX; /* the tool's starting guess */
    uint32_t before;
    do {
        before = t.size[0];
        size_branch(&t, 0, 0, 0, NULL);
    } while (before != t.size[0]);
    if (t.size[0] >= 1u << ROOT_FIELD_BITS || t.max[0] >= 1u << ROOT_FIELD_BITS) {
        s = trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                        "the terrain needs %lu bits: past the format's 30-bit branch size",
                        (unsigned long)t.size[0]);
        goto done;
    }
    uint64_t bits = HEADER_BITS + (uint64_t)t.size[0];
    size_t nwords = (size_t)((bits + 31) / 32);
    if ((s = vertex_set_init(ctx, &v, n)) != TROWEL_OK)
        goto done;
    if ((s = trowel_mem_new_zeroed(ctx, nwords, sizeof *words, &words)) != TROWEL_OK)
        goto done;
    /* The tree first (it counts the vertices), then the header in front. */
    bit_writer b = {words, HEADER_BITS};
    uint32_t significant = 0;
    write_branch(&t, &b, 0, 0, 0, &v, &significant);
    bit_writer hb = {words, 0};
    bits_write(&hb, WTD_VERSION, 16);
    bits_write(&hb, 1 + 4 * significant, 32);
    bits_write(&hb, v.count, 32);
    bits_write(&hb, (uint32_t)c[0], 32);
    uint8_t mb[76];
    mapping_to_bytes(map, mb);
    for (int i = 0; i < 76; i++)
        bits_write(&hb, mb[i], 8);
    uint8_t *bytes = (uint8_t *)words;
    for (size_t i = 0; i < nwords; i++) {
        uint32_t w = words[i];
        bytes[4 * i] = (uint8_t)w;
        bytes[4 * i + 1] = (uint8_t)(w >> 8);
        bytes[4 * i + 2] = (uint8_t)(w >> 16);
        bytes[4 * i + 3] = (uint8_t)(w >> 24);
    }
    s = trowel_sink_write(out, bytes, nwords * 4);
done:
    trowel_mem_free(ctx, words);
    trowel_mem_free(ctx, v.bits);
    trowel_mem_free(ctx, t.size);
    trowel_mem_free(ctx, t.max);
    return s;
}

static trowel_status wtd_create(trowel_ctx *ctx, const trowel_create_params *p,
                                struct json_object *manifest, trowel_sink *out)
{
    (void)manifest;
    trowel_status s;
    if (p->source_count != 1)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "a WTD terrain is made from exactly one height map (%zu given)",
                           p->source_count);
    float scale = 1.0f, spacing = 1.0f;
    if ((s = option_metres(ctx, p, "scale", &scale)) ||
        (s = option_metres(ctx, p, "spacing", &spacing)))
        return s;
    height_map m = {.scale = 1};
    if ((s = load_heights(ctx, p, &m)) != TROWEL_OK)
        return s;
    /* trowel's own PNG of an extent n holds n + 1 vertices a side, the
     * last row and column being the maximum border, which the format
     * derives and does not store: it is left out. Other maps grow to the
     * next power of two. */
    uint32_t n = 2;
    bool bordered = m.w == m.h && m.w >= 3 && ((m.w - 1) & (m.w - 2)) == 0;
    if (bordered && m.extent == (int64_t)m.w - 1) {
        n = m.w - 1;
    } else {
        while (n < m.w || n < m.h)
            n *= 2;
        if (bordered && m.w > 3)
            trowel_warn(ctx, TROWEL_NO_OFFSET,
                        "a %lux%lu map makes an extent of %lu; if it is trowel's picture of "
                        "an extent of %lu whose text chunks were lost, cut its last row and "
                        "column first",
                        (unsigned long)m.w, (unsigned long)m.h, (unsigned long)n,
                        (unsigned long)(m.w - 1));
    }
    int32_t *c;
    s = trowel_mem_new(ctx, (size_t)n * n * sizeof *c, &c);
    if (s != TROWEL_OK) {
        trowel_mem_free(ctx, m.v);
        return s;
    }
    /* Samples beyond the map repeat its last row and column. */
    for (uint32_t y = 0; y < n && s == TROWEL_OK; y++)
        for (uint32_t x = 0; x < n; x++) {
            int64_t v = m.offset +
                        m.scale * m.v[(size_t)(y < m.h ? y : m.h - 1) * m.w + (x < m.w ? x : m.w - 1)];
            if (v < INT32_MIN || v > INT32_MAX) {
                s = trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                                "height %lld at (%lu, %lu) does not fit 32 bits", (long long)v,
                                (unsigned long)x, (unsigned long)y);
                break;
            }
            c[(size_t)y * n + x] = (int32_t)v;
        }
    trowel_mem_free(ctx, m.v);
    if (s != TROWEL_OK) {
        trowel_mem_free(ctx, c);
        return s;
    }
    bool options = trowel_options_get(p->options, p->option_count, "scale") ||
                   trowel_options_get(p->options, p->option_count, "spacing");
    if (m.coef_to_world > 0 && !trowel_options_get(p->options, p->option_count, "scale"))
        scale = (float)m.coef_to_world;
    wtd_mapping map;
    make_mapping(n, spacing, scale, &map);
    if (m.has_mapping && !options) {
        if (m.map.quad[2] == (int32_t)n && m.map.quad[3] == (int32_t)n)
            map = m.map; /* the terrain's own, so its bits come back */
        else
            trowel_warn(ctx, TROWEL_NO_OFFSET,
                        "the PNG's mapping is for an extent of %ld, this map makes %lu: the "
                        "mapping is rebuilt from scale= and spacing=",
                        (long)m.map.quad[2], (unsigned long)n);
    }
    s = encode(ctx, c, n, &map, out);
    trowel_mem_free(ctx, c);
    return s;
}

const trowel_format trowel_format_tres_wtd = {
    .id = "tres-wtd",
    .family = "trespasser",
    .description = "Trespasser wavelet terrain (WTD quad tree)",
    .extensions = ".wtd",
    .caps = TROWEL_CAP_VERIFY, /* verify decodes the whole tree */
    .create_options = "a PNG's trowel:height-offset/-scale, trowel:tres-wtd-extent and "
                      "-mapping text chunks (trowel's own pictures) are read back",
    .convert_targets = "png obj glb",
    .options = wtd_options,
    .bid = wtd_bid,
    .open = wtd_open,
    .verify = wtd_verify,
    .convert = wtd_convert,
    .convert_json = wtd_convert_json,
    .create = wtd_create,
    .close = wtd_close,
};
