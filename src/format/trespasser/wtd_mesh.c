/*
 * The WTD terrain as a mesh the way the game builds it: from the quad
 * tree's own vertices and leaf quads, not from a dense grid, so a sparse
 * real terrain (an 8192-wide extent, 31,921 vertices) gives a mesh of
 * 31,921 vertices and memory in proportion.
 *
 * Heights come from the same synthesis as src/codec/tres_wavelet.c, run on
 * the tree's vertices only. Level by level from the root: the level's
 * significant nodes add their wavelets to their corners' update sums and
 * every touched corner takes - ((sum + 4) >> 3); at the maximum X / Y
 * border the corners of a node that subdivides are then copied from the
 * near side (the game's reflection: its RecalcDscScalingCoef duplicates
 * vertex 0 into 1 and 3 into 2 at max X, 1 into 2 and 0 into 3 at max Y);
 * then each significant node's five new vertices get their wavelet (0 for
 * a vertex no significant node owns) plus the prediction from the ends of
 * their edge or diagonal. Insignificant nodes add nothing and are not
 * subdivided, as in the game's tree, so the vertices of the tree get the
 * heights the game computes for them; inside the extent these equal the
 * dense decode's. (Facts: ../shared/formats/trespasser.md, the game's
 * WaveletQuadTreeBaseRecalc and WaveletQuadTreeBase sources.)
 *
 * Each leaf quad becomes triangles split on the diagonal the node's 0-disc
 * topology uses (1-3 in odd children, 0-2 otherwise). Where a neighbour is
 * subdivided deeper, its vertices on the shared edge are taken into the
 * quad's outline, and each half is fanned so that no triangle is
 * degenerate and no T-junction opens a crack.
 */
#include "wtd.h"

#include "codec/tres_wavelet.h"
#include "export/mesh.h"

#include <string.h>

/* ----------------------------------------------------------- vertex table */

/* Open addressing from key y * (n + 1) + x to a slot; slots hold the
 * vertex's value, its wavelet, an update sum and its number in insertion
 * order (= its mesh vertex number). */
#define EMPTY_KEY UINT32_MAX

typedef struct vertex_table {
    trowel_ctx *ctx;
    uint32_t n;
    size_t cap; /* power of two */
    uint32_t *key;
    int32_t *value, *wavelet;
    int64_t *sum;
    uint32_t *order; /* insertion number -> slot */
    size_t count;
} vertex_table;

static size_t table_hash(uint32_t k, size_t cap)
{
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (cap - 1);
}

static trowel_status table_init(vertex_table *v, trowel_ctx *ctx, uint32_t n, size_t most)
{
    memset(v, 0, sizeof *v);
    v->ctx = ctx;
    v->n = n;
    v->cap = 16;
    while (v->cap < most * 2)
        v->cap *= 2;
    trowel_status s = trowel_mem_new(ctx, v->cap * sizeof *v->key, &v->key);
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, v->cap, sizeof *v->value, &v->value);
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, v->cap, sizeof *v->wavelet, &v->wavelet);
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, v->cap, sizeof *v->sum, &v->sum);
    if (s == TROWEL_OK)
        s = trowel_mem_new(ctx, most * sizeof *v->order, &v->order);
    if (s != TROWEL_OK)
        return s;
    memset(v->key, 0xFF, v->cap * sizeof *v->key);
    return TROWEL_OK;
}

static void table_free(vertex_table *v)
{
    trowel_mem_free(v->ctx, v->key);
    trowel_mem_free(v->ctx, v->value);
    trowel_mem_free(v->ctx, v->wavelet);
    trowel_mem_free(v->ctx, v->sum);
    trowel_mem_free(v->ctx, v->order);
}

/* The slot of vertex (x, y), or SIZE_MAX when the tree has no such vertex. */
static size_t table_find(const vertex_table *v, uint32_t x, uint32_t y)
{
    uint32_t k = y * (v->n + 1) + x;
    for (size_t i = table_hash(k, v->cap);; i = (i + 1) & (v->cap - 1)) {
        if (v->key[i] == k)
            return i;
        if (v->key[i] == EMPTY_KEY)
            return SIZE_MAX;
    }
}

/* The slot of (x, y), made when new (value 0, wavelet 0). The table is
 * sized for every vertex the tree can have, so it never fills. */
static size_t table_add(vertex_table *v, uint32_t x, uint32_t y)
{
    uint32_t k = y * (v->n + 1) + x;
    size_t i = table_hash(k, v->cap);
    for (; v->key[i] != EMPTY_KEY; i = (i + 1) & (v->cap - 1))
        if (v->key[i] == k)
            return i;
    v->key[i] = k;
    v->order[v->count++] = (uint32_t)i;
    return i;
}

/* --------------------------------------------------------------- synthesis */

typedef struct synth {
    vertex_table *v;
    uint32_t n;
    const wtd_node *node;
    size_t corner[4]; /* slots of the node's corners, counter-clockwise */
} synth;

static const uint32_t corner_dx[4] = {0, 1, 1, 0}, corner_dy[4] = {0, 0, 1, 1};

static void find_corners(synth *z, const wtd_node *nd)
{
    z->node = nd;
    for (int k = 0; k < 4; k++)
        z->corner[k] = table_find(z->v, nd->x + corner_dx[k] * nd->s, nd->y + corner_dy[k] * nd->s);
}

/* Corner k's value read as the transform reads it: a corner beyond the
 * maximum border is the node's own corner on the near side. */
static int64_t reflected(const synth *z, int k)
{
    const wtd_node *nd = z->node;
    bool max_x = nd->x + nd->s >= z->n, max_y = nd->y + nd->s >= z->n;
    if (max_x && (k == 1 || k == 2))
        k = k == 1 ? 0 : 3;
    if (max_y && (k == 2 || k == 3))
        k = k == 2 ? 1 : 0;
    return z->v->value[z->corner[k]];
}

static bool odd_child(const wtd_node *nd)
{
    return ((nd->x / nd->s) ^ (nd->y / nd->s)) & 1;
}

/* What the node adds to each corner's update sum (the 0-disc weights,
 * doubled at the minimum border): the transform's own rule. */
static void contributions(const wtd_node *nd, int64_t c[4])
{
    trowel_wavelet_corner_weights(nd->w[0], nd->w[1], nd->w[2], odd_child(nd), nd->x == 0,
                                  nd->y == 0, c);
}

static trowel_status set_value(vertex_table *v, size_t slot, int64_t value)
{
    if (value < INT32_MIN || value > INT32_MAX) {
        uint32_t k = v->key[slot];
        return trowel_fail(v->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "wavelet coefficient at quad vertex (%lu, %lu) overflows 32 bits",
                           (unsigned long)(k % (v->n + 1)), (unsigned long)(k / (v->n + 1)));
    }
    v->value[slot] = (int32_t)value;
    return TROWEL_OK;
}

static int64_t predict2(int64_t a, int64_t b)
{
    return trowel_wavelet_asr(a + b + 1, 1);
}

/* The update of one level: nodes[first..last) are its significant nodes. */
static trowel_status update_level(synth *z, const wtd_node *nodes, const size_t *idx,
                                  size_t count)
{
    vertex_table *v = z->v;
    for (size_t i = 0; i < count; i++) {
        find_corners(z, &nodes[idx[i]]);
        int64_t c[4];
        contributions(z->node, c);
        for (int k = 0; k < 4; k++)
            v->sum[z->corner[k]] += c[k];
    }
    for (size_t i = 0; i < count; i++) {
        find_corners(z, &nodes[idx[i]]);
        for (int k = 0; k < 4; k++) {
            size_t slot = z->corner[k];
            int64_t sum = v->sum[slot];
            v->sum[slot] = 0; /* each corner lifts once, with its whole sum */
            uint32_t key = v->key[slot];
            bool border = key % (z->n + 1) == z->n || key / (z->n + 1) == z->n;
            trowel_status s = TROWEL_OK;
            if (!border && sum != 0)
                s = set_value(v, slot, v->value[slot] - trowel_wavelet_asr(sum + 4, 3));
            if (s != TROWEL_OK)
                return s;
        }
    }
    return TROWEL_OK;
}

/* Border copies, then the five new vertices of every node of the level. */
static trowel_status predict_level(synth *z, const wtd_node *nodes, const size_t *idx,
                                   size_t count)
{
    vertex_table *v = z->v;
    for (size_t i = 0; i < count; i++) {
        find_corners(z, &nodes[idx[i]]);
        for (int k = 0; k < 4; k++)
            v->value[z->corner[k]] = (int32_t)reflected(z, k);
    }
    for (size_t i = 0; i < count; i++) {
        const wtd_node *nd = &nodes[idx[i]];
        find_corners(z, nd);
        int64_t r[4];
        for (int k = 0; k < 4; k++)
            r[k] = reflected(z, k);
        uint32_t h = nd->s / 2, x = nd->x, y = nd->y;
        struct {
            uint32_t x, y;
            int64_t p;
        } made[5] = {
            {x + h, y, predict2(r[0], r[1])},
            {x + nd->s, y + h, predict2(r[1], r[2])},
            {x + h, y + nd->s, predict2(r[3], r[2])},
            {x, y + h, predict2(r[0], r[3])},
            {x + h, y + h, odd_child(nd) ? predict2(r[1], r[3]) : predict2(r[0], r[2])},
        };
        for (int k = 0; k < 5; k++) {
            size_t slot = table_find(v, made[k].x, made[k].y);
            trowel_status s = set_value(v, slot, made[k].p + v->wavelet[slot]);
            if (s != TROWEL_OK)
                return s;
        }
    }
    return TROWEL_OK;
}

/* Every vertex of the tree, with its wavelet, in the order the game makes
 * them: the root's corners, then each significant node's five new ones. */
static void add_vertices(vertex_table *v, const wtd_tree *t)
{
    uint32_t n = t->n;
    for (int k = 0; k < 4; k++)
        v->value[table_add(v, corner_dx[k] * n, corner_dy[k] * n)] = t->root;
    for (size_t i = 0; i < t->count; i++) {
        const wtd_node *nd = &t->nodes[i];
        uint32_t h = nd->s / 2, x = nd->x, y = nd->y;
        table_add(v, x + h, y);
        table_add(v, x + nd->s, y + h);
        table_add(v, x + h, y + nd->s);
        table_add(v, x, y + h);
        table_add(v, x + h, y + h);
        v->wavelet[table_find(v, x + h, y)] = nd->w[0];
        v->wavelet[table_find(v, x + h, y + h)] = nd->w[1];
        v->wavelet[table_find(v, x, y + h)] = nd->w[2];
    }
}

/* Runs the synthesis; idx receives the nodes sorted by level, root first. */
static trowel_status synthesise(trowel_ctx *ctx, vertex_table *v, const wtd_tree *t)
{
    add_vertices(v, t);
    if (t->count == 0)
        return TROWEL_OK;
    size_t *idx;
    trowel_status s = trowel_mem_new(ctx, t->count * sizeof *idx, &idx);
    if (s != TROWEL_OK)
        return s;
    /* Counting sort by side, largest first: level L holds side n >> L. */
    size_t start[17] = {0};
    for (size_t i = 0; i < t->count; i++) {
        unsigned level = 0;
        while ((t->n >> level) > t->nodes[i].s)
            level++;
        start[level + 1]++;
    }
    for (int l = 1; l < 17; l++)
        start[l] += start[l - 1];
    size_t fill[17];
    memcpy(fill, start, sizeof fill);
    for (size_t i = 0; i < t->count; i++) {
        unsigned level = 0;
        while ((t->n >> level) > t->nodes[i].s)
            level++;
        idx[fill[level]++] = i;
    }
    synth z = {.v = v, .n = t->n};
    s = TROWEL_OK;
    for (int l = 0; l < 16 && s == TROWEL_OK; l++) {
        size_t count = start[l + 1] - start[l];
        if (count == 0)
            continue;
        s = update_level(&z, t->nodes, idx + start[l], count);
        if (s == TROWEL_OK)
            s = predict_level(&z, t->nodes, idx + start[l], count);
    }
    trowel_mem_free(ctx, idx);
    return s;
}

/* --------------------------------------------------------------- the mesh */

typedef struct chain {
    trowel_ctx *ctx;
    uint32_t *at; /* mesh vertex numbers */
    size_t count, cap;
} chain;

static trowel_status chain_push(chain *c, uint32_t vertex)
{
    if (c->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        trowel_status s = trowel_mem_resize_array(c->ctx, &c->at, cap, sizeof *c->at);
        if (s != TROWEL_OK)
            return s;
        c->cap = cap;
    }
    c->at[c->count++] = vertex;
    return TROWEL_OK;
}

typedef struct mesher {
    vertex_table *v;
    uint32_t *number; /* slot -> mesh vertex number */
    trowel_mesh *mesh;
    uint32_t mat;
} mesher;

/* Appends the tree's vertices strictly between (ax, ay) and (bx, by), in
 * order: a deeper neighbour's vertex on an edge always comes with the
 * edge's midpoint, so halving finds them all. */
static trowel_status edge_inner(const mesher *ms, chain *c, uint32_t ax, uint32_t ay,
                                uint32_t bx, uint32_t by)
{
    uint32_t dx = bx > ax ? bx - ax : ax - bx, dy = by > ay ? by - ay : ay - by;
    if (dx + dy < 2)
        return TROWEL_OK;
    uint32_t mx = (ax + bx) / 2, my = (ay + by) / 2;
    size_t slot = table_find(ms->v, mx, my);
    if (slot == SIZE_MAX)
        return TROWEL_OK;
    trowel_status s = edge_inner(ms, c, ax, ay, mx, my);
    if (s == TROWEL_OK)
        s = chain_push(c, ms->number[slot]);
    if (s == TROWEL_OK)
        s = edge_inner(ms, c, mx, my, bx, by);
    return s;
}

/* One half of a quad: the triangle a, b, c (counter-clockwise) whose edges
 * a-b and b-c may carry extra vertices (e1: a..b, e2: b..c, both ends
 * included); a-c is the quad's diagonal and has none. The apex e2[1] sees
 * every piece of a-b, and a sees every piece of e2 after it. */
static trowel_status fan_half(const mesher *ms, const uint32_t *e1, size_t n1, const uint32_t *e2,
                              size_t n2)
{
    trowel_status s = TROWEL_OK;
    uint32_t apex = e2[1];
    for (size_t i = 0; s == TROWEL_OK && i + 1 < n1; i++)
        s = trowel_mesh_add_triangle(ms->mesh, e1[i], e1[i + 1], apex, ms->mat);
    for (size_t j = 1; s == TROWEL_OK && j + 1 < n2; j++)
        s = trowel_mesh_add_triangle(ms->mesh, e1[0], e2[j], e2[j + 1], ms->mat);
    return s;
}

/* The leaf quad of side s at (x, y) as triangles. */
static trowel_status leaf_quad(const mesher *ms, chain sides[4], uint32_t x, uint32_t y,
                               uint32_t s, bool odd)
{
    uint32_t cx[4], cy[4];
    for (int k = 0; k < 4; k++) {
        cx[k] = x + corner_dx[k] * s;
        cy[k] = y + corner_dy[k] * s;
    }
    trowel_status st = TROWEL_OK;
    for (int k = 0; k < 4 && st == TROWEL_OK; k++) {
        chain *c = &sides[k];
        int next = (k + 1) % 4;
        c->count = 0;
        st = chain_push(c, ms->number[table_find(ms->v, cx[k], cy[k])]);
        if (st == TROWEL_OK)
            st = edge_inner(ms, c, cx[k], cy[k], cx[next], cy[next]);
        if (st == TROWEL_OK)
            st = chain_push(c, ms->number[table_find(ms->v, cx[next], cy[next])]);
    }
    /* Split on 0-2 (halves 0,1,2 and 2,3,0) or on 1-3 (1,2,3 and 3,0,1). */
    int first = odd ? 1 : 0;
    for (int half = 0; half < 2 && st == TROWEL_OK; half++) {
        const chain *e1 = &sides[(first + 2 * half) % 4], *e2 = &sides[(first + 2 * half + 1) % 4];
        st = fan_half(ms, e1->at, e1->count, e2->at, e2->count);
    }
    return st;
}

static trowel_status add_leaves(const mesher *ms, const wtd_tree *t)
{
    chain sides[4];
    for (int k = 0; k < 4; k++)
        sides[k] = (chain){.ctx = ms->v->ctx};
    trowel_status s = TROWEL_OK;
    if (t->count == 0)
        s = leaf_quad(ms, sides, 0, 0, t->n, false);
    for (size_t i = 0; s == TROWEL_OK && i < t->count; i++) {
        const wtd_node *nd = &t->nodes[i];
        uint32_t h = nd->s / 2;
        for (int k = 0; s == TROWEL_OK && k < 4; k++)
            if (!(nd->kids & (1u << k))) {
                uint32_t x = nd->x + corner_dx[k] * h, y = nd->y + corner_dy[k] * h;
                s = leaf_quad(ms, sides, x, y, h, k & 1);
            }
    }
    for (int k = 0; k < 4; k++)
        trowel_mem_free(ms->v->ctx, sides[k].at);
    return s;
}

void trowel_wtd_world(const wtd_mapping *m, uint32_t x, uint32_t y, int64_t c, float out[3])
{
    out[0] = (float)x * m->quad_to_world[0] + m->quad_to_world[1];
    out[1] = (float)y * m->quad_to_world[2] + m->quad_to_world[3];
    out[2] = (float)c * m->coef_to_world;
}

trowel_status trowel_wtd_tree_mesh(trowel_ctx *ctx, const wtd_tree *t, const wtd_mapping *m,
                                   bool glb, trowel_sink *out)
{
    vertex_table v;
    size_t most = 4 + 5 * t->count;
    trowel_status s = table_init(&v, ctx, t->n, most);
    if (s == TROWEL_OK)
        s = synthesise(ctx, &v, t);
    uint32_t *number = NULL;
    if (s == TROWEL_OK)
        s = trowel_mem_new(ctx, v.cap * sizeof *number, &number);
    trowel_mesh mesh;
    trowel_mesh_init(&mesh, ctx, 0);
    static const float grey[3] = {0.5f, 0.5f, 0.5f};
    mesher ms = {&v, number, &mesh, 0};
    if (s == TROWEL_OK)
        s = trowel_mesh_add_material(&mesh, "terrain", grey, 1.0f, NULL, &ms.mat);
    if (s == TROWEL_OK)
        s = trowel_mesh_begin_object(&mesh, "terrain");
    for (size_t i = 0; s == TROWEL_OK && i < v.count; i++) {
        size_t slot = v.order[i];
        uint32_t k = v.key[slot];
        float game[3], pos[3];
        trowel_wtd_world(m, k % (t->n + 1), k / (t->n + 1), v.value[slot], game);
        trowel_mesh_from_z_up(game, pos);
        s = trowel_mesh_add_vertex(&mesh, pos, NULL, NULL, &number[slot]);
    }
    if (s == TROWEL_OK)
        s = add_leaves(&ms, t);
    if (s == TROWEL_OK)
        s = glb ? trowel_mesh_write_glb(&mesh, out) : trowel_mesh_write_obj(&mesh, out, NULL);
    trowel_mesh_free(&mesh);
    trowel_mem_free(ctx, number);
    table_free(&v);
    return s;
}
