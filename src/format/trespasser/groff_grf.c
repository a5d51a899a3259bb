/*
 * GRF worlds inside a GROFF container: the .header and .region sections,
 * objects, geometry (plain, and the optimised mesh heap the game writes
 * back), mappings and materials, turned into object placements (JSON) and
 * meshes (OBJ + MTL, binary glTF) through src/export/mesh.c.
 *
 * Sections refer to each other by section handle (the u32 at the end of
 * each section header) and to names by symbol handle. Layouts, all
 * little-endian (facts: shared/formats/trespasser.md and OpenTrespasser's
 * Lib/Groff/GroffLoader.cpp, GroffIO.cpp, GeomDBase/Mesh.hpp):
 *   .header   u32 magic 0x0ACEBABE, u32 version (11..15; bit 31: optimised)
 *   .region   u32 n, n x {u32 object section, u32 name symbol, 3 f32
 *             position, 3 f32 rotation (radians about X, then Y, then Z),
 *             f32 scale, [v12+ CHandle u32 id, u32 refcount]}, [v12+ u32
 *             attribute section]
 *   object    7 u32: name symbol, geometry, mapping, physics, AI, sound,
 *             special (sections; 0 for none)
 *   geometry  [v14+ 3 f32 pivot], u32 vertices, faces, vertex normals,
 *             [v13+ wrap], 3 u32 default colour, then vertices (3 f32),
 *             faces (3 u32), face normals, vertex normals (three per face,
 *             corner by corner), wrap points
 *   mesh heap (optimised) u32 material section, i32 uses-default, u32
 *             default colour (B,G,R,flags), 3 f32 pivot, u32 counts of
 *             points, vertices, vertex indices, wrap points, polygons; data
 *             in the order points (12 B), vertices (32 B: u32 point, 3 f32
 *             normal, 2 f32 uv, 2 u32), u32 vertex indices, polygons (40 B:
 *             u32 vertex count, u32 first index, 16 B plane, u32 surface,
 *             12 B), wrap points
 *   mapping   u32 material section, u32 uv count, u32 uv-face count, uvs (2
 *             f32), uv faces (3 u32), per uv face u32 material number
 *   material  u32 n, n texture / n opacity / n bump symbols, [v15+ n x 3
 *             u32 colour], f32 ambient, diffuse, specular, opacity, bumpiness
 * A face beyond the mapping's uv faces uses the default colour; so does
 * surface number n of a mesh heap.
 *
 * Which layout a geometry section has is decided by its size: the optimised
 * file still keeps plain geometry for objects the game does not optimise
 * (invisible ones and skinned meshes), so each section is read with the
 * layout whose sizes add up to it, the mesh heap first in optimised files.
 *
 * Output coordinates: Trespasser is Z-up; meshes are written Y-up, as glTF
 * defines and OBJ readers expect by default, through the one conversion
 * every trowel mesh uses (trowel_mesh_from_z_up: (x, y, z) -> (x, z, -y)).
 */
#include "groff.h"

#include "export/mesh.h"
#include "groff_values.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define GRF_VERSION_MIN 11
#define GRF_VERSION_MAX 15
#define GRF_OPTIMISED 0x80000000u
#define REGION_RECORD_V11 36
#define REGION_RECORD 44
#define OBJECT_SIZE 28
#define HEAP_VERTEX_SIZE 32
#define HEAP_POLYGON_SIZE 40

typedef struct grf_placement {
    uint32_t object_section, name_symbol;
    float position[3], rotation[3], scale;
    uint32_t attr_id, attr_refcount;
} grf_placement;

typedef struct grf_region {
    uint32_t version;
    bool optimised;
    grf_placement *items;
    uint32_t count;
    uint32_t attribute_section;
} grf_region;

/* The section whose handle is h, or SIZE_MAX. */
static size_t section_by_handle(const groff_state *st, uint32_t h)
{
    if (h == 0)
        return SIZE_MAX;
    /* Handles are 0x80000000 + index in every file we know: try that first. */
    uint32_t guess = h - GROFF_SECTION_HANDLE_BASE;
    if (h >= GROFF_SECTION_HANDLE_BASE && guess < st->section_count &&
        st->sections[guess].handle == h)
        return guess;
    for (size_t i = 0; i < st->section_count; i++)
        if (st->sections[i].handle == h)
            return i;
    return SIZE_MAX;
}

static const char *symbol_name(const groff_state *st, uint32_t h)
{
    const groff_symbol *s = groff_symbol_find(st, h);
    return s ? s->name : NULL;
}

static const char *section_label(const groff_state *st, size_t i)
{
    return i < st->section_count && st->sections[i].name ? st->sections[i].name : "?";
}

/* Reads the .header section; false (nothing set) when there is none. */
static trowel_status read_grf_header(trowel_archive *a, uint32_t *version, bool *optimised,
                                     bool *present)
{
    const groff_state *st = a->priv;
    *present = false;
    size_t i = groff_section_find(st, ".header");
    if (i == SIZE_MAX)
        return TROWEL_OK;
    trowel_reader r;
    uint32_t magic, v;
    trowel_status s = groff_section_reader(a, i, &r);
    if (s == TROWEL_OK)
        s = trowel_read_u32le(&r, &magic);
    if (s == TROWEL_OK)
        s = trowel_read_u32le(&r, &v);
    if (s != TROWEL_OK)
        return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, st->sections[i].offset,
                           "the .header section is cut short (%lu bytes; it needs 8)",
                           (unsigned long)st->sections[i].size);
    if (magic != GROFF_MAGIC)
        return trowel_fail(a->ctx, TROWEL_ERR_CORRUPT, st->sections[i].offset,
                           "the .header section's magic is 0x%08lx, not 0x0ACEBABE",
                           (unsigned long)magic);
    *present = true;
    *version = v & ~GRF_OPTIMISED;
    *optimised = (v & GRF_OPTIMISED) != 0;
    return TROWEL_OK;
}

trowel_status groff_grf_info(trowel_archive *a)
{
    uint32_t version;
    bool optimised, present;
    trowel_error saved = a->ctx->last_error;
    if (read_grf_header(a, &version, &optimised, &present) != TROWEL_OK) {
        /* info still shows the container; convert reports the problem. */
        trowel_warn(a->ctx, a->ctx->last_error.offset, "%s", a->ctx->last_error.message);
        a->ctx->last_error = saved;
        return TROWEL_OK;
    }
    if (!present)
        return TROWEL_OK;
    trowel_status s;
    if ((s = trowel_props_add_str(a->info, "kind", "grf")) ||
        (s = trowel_props_add_uint(a->info, "grf.version", version)) ||
        (s = trowel_props_add_bool(a->info, "grf.optimized", optimised)))
        return s;
    return TROWEL_OK;
}

/* ------------------------------------------------------------------ region */

static trowel_status read_f32s(trowel_reader *r, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        trowel_status s = trowel_read_f32le(r, &v[i]);
        if (s != TROWEL_OK)
            return s;
    }
    return TROWEL_OK;
}

static trowel_status read_region(trowel_archive *a, grf_region *g)
{
    trowel_ctx *ctx = a->ctx;
    const groff_state *st = a->priv;
    bool present;
    memset(g, 0, sizeof *g);
    trowel_status s = read_grf_header(a, &g->version, &g->optimised, &present);
    if (s != TROWEL_OK)
        return s;
    if (!present)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "this GROFF file has no .header section: it is not a GRF world");
    if (g->version < GRF_VERSION_MIN || g->version > GRF_VERSION_MAX)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "GRF version %lu is outside the versions the game loads (11..15)",
                           (unsigned long)g->version);
    size_t ri = groff_section_find(st, ".region");
    if (ri == SIZE_MAX)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "the GRF world has no .region section");
    trowel_reader r;
    if ((s = groff_section_reader(a, ri, &r)) != TROWEL_OK ||
        (s = trowel_read_u32le(&r, &g->count)) != TROWEL_OK)
        return s;
    uint64_t record = g->version == 11 ? REGION_RECORD_V11 : REGION_RECORD;
    uint64_t need = 4 + record * g->count + (g->version >= 12 ? 4 : 0);
    if (need != st->sections[ri].size)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, st->sections[ri].offset,
                           ".region lists %lu objects (%llu bytes) but has %lu bytes",
                           (unsigned long)g->count, (unsigned long long)need,
                           (unsigned long)st->sections[ri].size);
    s = trowel_mem_new_zeroed(ctx, g->count ? g->count : 1, sizeof *g->items, &g->items);
    if (s != TROWEL_OK)
        return s;
    for (uint32_t i = 0; i < g->count && s == TROWEL_OK; i++) {
        grf_placement *p = &g->items[i];
        s = trowel_read_u32le(&r, &p->object_section);
        if (s == TROWEL_OK)
            s = trowel_read_u32le(&r, &p->name_symbol);
        if (s == TROWEL_OK)
            s = read_f32s(&r, p->position, 3);
        if (s == TROWEL_OK)
            s = read_f32s(&r, p->rotation, 3);
        if (s == TROWEL_OK)
            s = trowel_read_f32le(&r, &p->scale);
        if (s == TROWEL_OK && g->version >= 12)
            s = trowel_read_u32le(&r, &p->attr_id);
        if (s == TROWEL_OK && g->version >= 12)
            s = trowel_read_u32le(&r, &p->attr_refcount);
    }
    if (s == TROWEL_OK && g->version >= 12)
        s = trowel_read_u32le(&r, &g->attribute_section);
    return s;
}

/* ------------------------------------------------------------ value table */

/* Loads and parses the world's value table; *buf holds its bytes (the
 * table points into them). No attribute section: an empty table. */
static trowel_status load_values(trowel_archive *a, const grf_region *g, grf_values *t,
                                 uint8_t **buf)
{
    const groff_state *st = a->priv;
    memset(t, 0, sizeof *t);
    *buf = NULL;
    size_t i = section_by_handle(st, g->attribute_section);
    if (i == SIZE_MAX)
        return TROWEL_OK;
    trowel_reader r;
    size_t size;
    trowel_status s = groff_section_reader(a, i, &r);
    if (s == TROWEL_OK)
        s = trowel_reader_load(&r, buf, &size);
    if (s == TROWEL_OK)
        s = grf_values_read(a->ctx, *buf, size, st->sections[i].offset, t);
    return s;
}

static trowel_status write_values(trowel_archive *a, const grf_region *g, trowel_sink *out)
{
    grf_values t;
    uint8_t *buf;
    trowel_status s = load_values(a, g, &t, &buf);
    if (s == TROWEL_OK && !t.ctx)
        s = trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                        "this GRF world has no value table (attribute section)");
    if (s == TROWEL_OK) {
        json_object *root = grf_values_json(&t);
        const char *text = trowel_json_text_utf8(
            root,
            JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
        s = trowel_sink_write(out, text, strlen(text));
        if (s == TROWEL_OK)
            s = trowel_sink_write(out, "\n", 1);
        json_object_put(root);
    }
    grf_values_free(&t);
    trowel_mem_free(a->ctx, buf);
    return s;
}

/* ------------------------------------------------------------- placements */

static json_object *json_vec3(const float *v)
{
    json_object *a = json_object_new_array();
    for (int i = 0; i < 3; i++)
        json_object_array_add(a, json_object_new_double(isfinite(v[i]) ? v[i] : 0.0));
    return a;
}

static json_object *json_section(const groff_state *st, uint32_t handle)
{
    size_t i = section_by_handle(st, handle);
    return i == SIZE_MAX ? NULL : json_object_new_string(section_label(st, i));
}

static trowel_status write_placements(trowel_archive *a, const grf_region *g, trowel_sink *out)
{
    const groff_state *st = a->priv;
    grf_values values;
    uint8_t *values_buf;
    trowel_error saved = a->ctx->last_error;
    if (load_values(a, g, &values, &values_buf) != TROWEL_OK) {
        /* The placements stand without classes. */
        trowel_warn(a->ctx, a->ctx->last_error.offset, "no classes: %s",
                    a->ctx->last_error.message);
        a->ctx->last_error = saved;
    }
    json_object *root = json_object_new_object();
    json_object_object_add(root, "grf_version", json_object_new_int64(g->version));
    json_object_object_add(root, "optimized", json_object_new_boolean(g->optimised));
    if (g->attribute_section)
        json_object_object_add(root, "attribute_section",
                               json_section(st, g->attribute_section));
    json_object *objects = json_object_new_array();
    for (uint32_t i = 0; i < g->count; i++) {
        const grf_placement *p = &g->items[i];
        json_object *o = json_object_new_object();
        const char *name = symbol_name(st, p->name_symbol);
        json_object_object_add(o, "name", name ? json_object_new_string(name) : NULL);
        json_object_object_add(o, "object_section", json_section(st, p->object_section));
        const char *cls = values.ctx && p->attr_id ? grf_values_class(&values, p->attr_id) : NULL;
        if (cls)
            json_object_object_add(o, "class", json_object_new_string(cls));
        json_object_object_add(o, "position", json_vec3(p->position));
        json_object_object_add(o, "rotation", json_vec3(p->rotation));
        json_object_object_add(o, "scale",
                               json_object_new_double(isfinite(p->scale) ? p->scale : 0.0));
        if (g->version >= 12) {
            json_object *h = json_object_new_object();
            json_object_object_add(h, "id", json_object_new_int64(p->attr_id));
            json_object_object_add(h, "refcount", json_object_new_int64(p->attr_refcount));
            json_object_object_add(o, "attribute_handle", h);
        }
        json_object_array_add(objects, o);
    }
    json_object_object_add(root, "objects", objects);
    const char *text = trowel_json_text_utf8(
        root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    trowel_status s = trowel_sink_write(out, text, strlen(text));
    if (s == TROWEL_OK)
        s = trowel_sink_write(out, "\n", 1);
    json_object_put(root);
    grf_values_free(&values);
    trowel_mem_free(a->ctx, values_buf);
    return s;
}

/* ------------------------------------------------------------------ meshes */

/* Where an object goes: the placement, or none (its own coordinates). */
typedef struct placement_xf {
    float m[3][3]; /* rotation, row vectors: v' = v * m */
    float scale;
    float t[3];
} placement_xf;

static void rotation_about(int axis, float angle, float m[3][3])
{
    float c = cosf(angle), s = sinf(angle);
    memset(m, 0, 9 * sizeof(float));
    int a = (axis + 1) % 3, b = (axis + 2) % 3;
    m[axis][axis] = 1;
    m[a][a] = c;
    m[a][b] = s;
    m[b][a] = -s;
    m[b][b] = c;
}

static void mat_mul(float x[3][3], float y[3][3], float out[3][3])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[i][j] = x[i][0] * y[0][j] + x[i][1] * y[1][j] + x[i][2] * y[2][j];
}

/* The game's presence: rotate about X, then Y, then Z, scale, translate. */
static void placement_transform(const grf_placement *p, placement_xf *xf)
{
    float rx[3][3], ry[3][3], rz[3][3], t[3][3];
    rotation_about(0, p->rotation[0], rx);
    rotation_about(1, p->rotation[1], ry);
    rotation_about(2, p->rotation[2], rz);
    mat_mul(rx, ry, t);
    mat_mul(t, rz, xf->m);
    xf->scale = p->scale;
    memcpy(xf->t, p->position, sizeof xf->t);
}

static void identity_transform(placement_xf *xf)
{
    memset(xf, 0, sizeof *xf);
    xf->m[0][0] = xf->m[1][1] = xf->m[2][2] = 1;
    xf->scale = 1;
}

/* Applies xf, then turns Z-up into Y-up. */
static void place_point(const placement_xf *xf, const float in[3], float out[3], bool is_normal)
{
    float v[3];
    for (int j = 0; j < 3; j++) {
        v[j] = in[0] * xf->m[0][j] + in[1] * xf->m[1][j] + in[2] * xf->m[2][j];
        if (!is_normal)
            v[j] = v[j] * xf->scale + xf->t[j];
    }
    trowel_mesh_from_z_up(v, out);
}

/* One object's source data, loaded. */
typedef struct grf_material {
    uint32_t count;
    uint32_t *texture; /* symbol handles */
    uint32_t (*colour)[3];
    float opacity;
    size_t section;
} grf_material;

typedef struct mesh_job {
    trowel_archive *a;
    const groff_state *st;
    uint32_t version;
    bool optimised;
    trowel_mesh *mesh;
    const char *object_name;
    placement_xf xf;
} mesh_job;

static trowel_status object_fail(const mesh_job *j, size_t section, const char *what)
{
    return trowel_fail(j->a->ctx, TROWEL_ERR_CORRUPT, j->st->sections[section].offset,
                       "object %s: %s section %s: %s", j->object_name, what,
                       section_label(j->st, section), j->a->ctx->last_error.message);
}

static void free_material(trowel_ctx *ctx, grf_material *m)
{
    trowel_mem_free(ctx, m->texture);
    trowel_mem_free(ctx, m->colour);
    memset(m, 0, sizeof *m);
}

static trowel_status read_material(const mesh_job *j, uint32_t handle, grf_material *m)
{
    trowel_ctx *ctx = j->a->ctx;
    memset(m, 0, sizeof *m);
    m->opacity = 1;
    m->section = section_by_handle(j->st, handle);
    if (handle == 0 || m->section == SIZE_MAX)
        return TROWEL_OK; /* no material: everything in the default colour */
    trowel_reader r;
    trowel_status s = groff_section_reader(j->a, m->section, &r);
    if (s == TROWEL_OK)
        s = trowel_read_u32le(&r, &m->count);
    uint64_t per = 12 + (j->version >= 15 ? 12 : 0);
    if (s == TROWEL_OK && (uint64_t)m->count * per + 20 > trowel_reader_remaining(&r))
        s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                        "%lu materials do not fit in %llu bytes", (unsigned long)m->count,
                        (unsigned long long)trowel_reader_remaining(&r));
    if (s == TROWEL_OK) {
        s = trowel_mem_new_zeroed(ctx, m->count + 1u, sizeof *m->texture, &m->texture);
        if (s == TROWEL_OK)
            s = trowel_mem_new_zeroed(ctx, m->count + 1u, sizeof *m->colour, &m->colour);
        if (s != TROWEL_OK)
            return s;
    }
    for (uint32_t i = 0; s == TROWEL_OK && i < m->count; i++)
        s = trowel_read_u32le(&r, &m->texture[i]);
    if (s == TROWEL_OK)
        s = trowel_reader_skip(&r, 8ull * m->count); /* opacity and bump maps */
    for (uint32_t i = 0; s == TROWEL_OK && i < m->count; i++) {
        m->colour[i][0] = m->colour[i][1] = m->colour[i][2] = 255;
        for (int k = 0; s == TROWEL_OK && j->version >= 15 && k < 3; k++)
            s = trowel_read_u32le(&r, &m->colour[i][k]);
    }
    float terms[5];
    if (s == TROWEL_OK)
        s = read_f32s(&r, terms, 5);
    if (s == TROWEL_OK)
        m->opacity = terms[3];
    if (s != TROWEL_OK)
        return object_fail(j, m->section, "material");
    return TROWEL_OK;
}

/* Adds the mesh material for surface k of m (k == count: the default colour). */
static trowel_status add_surface(const mesh_job *j, const grf_material *m, uint32_t k,
                                 const uint32_t default_rgb[3], uint32_t *index)
{
    char name[300];
    float rgb[3];
    const char *texture = NULL;
    if (k < m->count) {
        snprintf(name, sizeof name, "%s-%lu", section_label(j->st, m->section),
                 (unsigned long)k);
        for (int c = 0; c < 3; c++)
            rgb[c] = (float)(m->colour[k][c] > 255 ? 255 : m->colour[k][c]) / 255.0f;
        texture = symbol_name(j->st, m->texture[k]);
    } else {
        snprintf(name, sizeof name, "%s-default", j->object_name);
        for (int c = 0; c < 3; c++)
            rgb[c] = (float)(default_rgb[c] > 255 ? 255 : default_rgb[c]) / 255.0f;
    }
    /* Opacity 0 in the data means "not set" as often as "invisible". */
    float opacity = m->opacity > 0 && k < m->count ? m->opacity : 1.0f;
    if (texture && !texture[0])
        texture = NULL;
    return trowel_mesh_add_material(j->mesh, name, rgb, opacity, texture, index);
}

/* Per object: mesh material index for each surface, made on first use. */
typedef struct surface_map {
    uint32_t *index; /* count + 1 entries, UINT32_MAX until used */
    uint32_t count;
} surface_map;

static trowel_status surface_index(const mesh_job *j, const grf_material *m, surface_map *sm,
                                   uint32_t k, const uint32_t default_rgb[3], uint32_t *out)
{
    if (k > m->count)
        k = m->count; /* out of range: the default colour, as the game's last surface */
    if (sm->index[k] == UINT32_MAX) {
        trowel_status s = add_surface(j, m, k, default_rgb, &sm->index[k]);
        if (s != TROWEL_OK)
            return s;
    }
    *out = sm->index[k];
    return TROWEL_OK;
}

static trowel_status new_surface_map(trowel_ctx *ctx, const grf_material *m, surface_map *sm)
{
    sm->count = m->count;
    trowel_status s = trowel_mem_new(ctx, ((size_t)m->count + 1) * sizeof *sm->index, &sm->index);
    if (s != TROWEL_OK)
        return s;
    for (uint32_t i = 0; i <= m->count; i++)
        sm->index[i] = UINT32_MAX;
    return TROWEL_OK;
}

/* Loads n items of size bytes from r (checked against what is left). */
static trowel_status load_array(trowel_ctx *ctx, trowel_reader *r, uint64_t n, size_t size,
                                uint8_t **out)
{
    *out = NULL;
    if (n * size > trowel_reader_remaining(r))
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, trowel_reader_abs(r),
                           "%llu items of %zu bytes run past the section's end",
                           (unsigned long long)n, size);
    trowel_status s = trowel_mem_new(ctx, n * size + 1, out);
    if (s != TROWEL_OK)
        return s;
    return trowel_read_bytes(r, *out, (size_t)(n * size));
}

static float f32_at(const uint8_t *p)
{
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t u32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The plain layout's size for these counts. */
static uint64_t plain_size(uint32_t version, const uint32_t c[4])
{
    uint64_t n = (version >= 14 ? 12 : 0) + 12 + (version >= 13 ? 4 : 0) + 12;
    return n + 12ull * c[0] + 24ull * c[1] + 12ull * c[2] + 12ull * c[3];
}

static uint64_t heap_size(const uint32_t c[5])
{
    return 44 + 12ull * c[0] + 32ull * c[1] + 4ull * c[2] + 12ull * c[3] + 40ull * c[4];
}

/* Adds one corner vertex (position index, normal, uv) of the current object. */
static trowel_status add_corner(const mesh_job *j, const float pos[3], const float nrm[3],
                                const float uv[2], uint32_t *index)
{
    float p[3], n[3];
    place_point(&j->xf, pos, p, false);
    place_point(&j->xf, nrm, n, true);
    return trowel_mesh_add_vertex(j->mesh, p, n, uv, index);
}

typedef struct plain_mapping {
    uint32_t uv_count, face_count;
    uint8_t *uvs, *faces, *materials;
    uint32_t material_handle;
} plain_mapping;

static trowel_status read_mapping(const mesh_job *j, uint32_t handle, plain_mapping *mp)
{
    trowel_ctx *ctx = j->a->ctx;
    memset(mp, 0, sizeof *mp);
    size_t i = section_by_handle(j->st, handle);
    if (i == SIZE_MAX)
        return TROWEL_OK;
    trowel_reader r;
    trowel_status s = groff_section_reader(j->a, i, &r);
    if (s == TROWEL_OK)
        s = trowel_read_u32le(&r, &mp->material_handle);
    if (s == TROWEL_OK && trowel_reader_remaining(&r) == 0)
        return TROWEL_OK; /* an optimised file keeps only the material */
    if (s == TROWEL_OK)
        s = trowel_read_u32le(&r, &mp->uv_count);
    if (s == TROWEL_OK)
        s = trowel_read_u32le(&r, &mp->face_count);
    if (s == TROWEL_OK)
        s = load_array(ctx, &r, mp->uv_count, 8, &mp->uvs);
    if (s == TROWEL_OK)
        s = load_array(ctx, &r, mp->face_count, 12, &mp->faces);
    if (s == TROWEL_OK)
        s = load_array(ctx, &r, mp->face_count, 4, &mp->materials);
    if (s != TROWEL_OK)
        return object_fail(j, i, "mapping");
    return TROWEL_OK;
}

static void free_mapping(trowel_ctx *ctx, plain_mapping *mp)
{
    trowel_mem_free(ctx, mp->uvs);
    trowel_mem_free(ctx, mp->faces);
    trowel_mem_free(ctx, mp->materials);
}

/* Plain geometry: every face corner becomes a vertex (normals and uvs are
 * per corner in the data). */
static trowel_status build_plain(const mesh_job *j, size_t gi, trowel_reader *r,
                                 const uint32_t c[4], const uint32_t default_rgb[3],
                                 uint32_t mapping_handle)
{
    trowel_ctx *ctx = j->a->ctx;
    uint8_t *verts = NULL, *faces = NULL, *fnorm = NULL, *vnorm = NULL;
    plain_mapping mp = {0};
    grf_material mat = {0};
    surface_map sm = {0};
    trowel_status s = load_array(ctx, r, c[0], 12, &verts);
    if (s == TROWEL_OK)
        s = load_array(ctx, r, c[1], 12, &faces);
    if (s == TROWEL_OK)
        s = load_array(ctx, r, c[1], 12, &fnorm);
    if (s == TROWEL_OK)
        s = load_array(ctx, r, c[2], 12, &vnorm);
    if (s != TROWEL_OK)
        s = object_fail(j, gi, "geometry");
    if (s == TROWEL_OK)
        s = read_mapping(j, mapping_handle, &mp);
    if (s == TROWEL_OK)
        s = read_material(j, mp.material_handle, &mat);
    if (s == TROWEL_OK)
        s = new_surface_map(ctx, &mat, &sm);
    for (uint32_t f = 0; s == TROWEL_OK && f < c[1]; f++) {
        uint32_t corner[3];
        for (int k = 0; s == TROWEL_OK && k < 3; k++) {
            uint32_t v = u32_at(faces + 12 * f + 4 * k);
            if (v >= c[0]) {
                s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, j->st->sections[gi].offset,
                                "object %s: face %lu uses vertex %lu of %lu", j->object_name,
                                (unsigned long)f, (unsigned long)v, (unsigned long)c[0]);
                break;
            }
            float pos[3], nrm[3], uv[2] = {0, 0};
            const uint8_t *n = c[2] >= 3ull * c[1] ? vnorm + 12 * (3 * f + k) : fnorm + 12 * f;
            for (int d = 0; d < 3; d++) {
                pos[d] = f32_at(verts + 12 * v + 4 * d);
                nrm[d] = f32_at(n + 4 * d);
            }
            if (f < mp.face_count && mp.uv_count) {
                uint32_t t = u32_at(mp.faces + 12 * f + 4 * k);
                if (t >= mp.uv_count) {
                    s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, j->st->sections[gi].offset,
                                    "object %s: uv face %lu uses uv %lu of %lu", j->object_name,
                                    (unsigned long)f, (unsigned long)t,
                                    (unsigned long)mp.uv_count);
                    break;
                }
                uv[0] = f32_at(mp.uvs + 8 * t);
                uv[1] = f32_at(mp.uvs + 8 * t + 4);
            }
            s = add_corner(j, pos, nrm, uv, &corner[k]);
        }
        uint32_t surface = f < mp.face_count ? u32_at(mp.materials + 4 * f) : mat.count, mi = 0;
        if (s == TROWEL_OK)
            s = surface_index(j, &mat, &sm, surface, default_rgb, &mi);
        if (s == TROWEL_OK)
            s = trowel_mesh_add_triangle(j->mesh, corner[0], corner[1], corner[2], mi);
    }
    trowel_mem_free(ctx, verts);
    trowel_mem_free(ctx, faces);
    trowel_mem_free(ctx, fnorm);
    trowel_mem_free(ctx, vnorm);
    trowel_mem_free(ctx, sm.index);
    free_mapping(ctx, &mp);
    free_material(ctx, &mat);
    return s;
}

/* The optimised mesh heap: polygons of vertex indices, fanned into triangles. */
static trowel_status build_heap(const mesh_job *j, size_t gi, trowel_reader *r,
                                uint32_t material_handle, const uint32_t c[5],
                                uint32_t colour)
{
    trowel_ctx *ctx = j->a->ctx;
    uint8_t *points = NULL, *verts = NULL, *idx = NULL, *polys = NULL;
    grf_material mat = {0};
    surface_map sm = {0};
    uint32_t *placed = NULL;
    uint32_t default_rgb[3] = {(colour >> 16) & 255, (colour >> 8) & 255, colour & 255};
    trowel_status s = load_array(ctx, r, c[0], 12, &points);
    if (s == TROWEL_OK)
        s = load_array(ctx, r, c[1], HEAP_VERTEX_SIZE, &verts);
    if (s == TROWEL_OK)
        s = load_array(ctx, r, c[2], 4, &idx);
    if (s == TROWEL_OK)
        s = load_array(ctx, r, c[4], HEAP_POLYGON_SIZE, &polys);
    if (s != TROWEL_OK)
        s = object_fail(j, gi, "mesh heap");
    if (s == TROWEL_OK)
        s = read_material(j, material_handle, &mat);
    if (s == TROWEL_OK)
        s = new_surface_map(ctx, &mat, &sm);
    if (s == TROWEL_OK)
        s = trowel_mem_new(ctx, ((size_t)c[1] + 1) * sizeof *placed, &placed);
    /* The heap's vertices become mesh vertices once each. */
    for (uint32_t v = 0; s == TROWEL_OK && v < c[1]; v++) {
        const uint8_t *mv = verts + HEAP_VERTEX_SIZE * v;
        uint32_t point = u32_at(mv);
        if (point >= c[0]) {
            s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, j->st->sections[gi].offset,
                            "object %s: mesh vertex %lu uses point %lu of %lu", j->object_name,
                            (unsigned long)v, (unsigned long)point, (unsigned long)c[0]);
            break;
        }
        float pos[3], nrm[3], uv[2] = {f32_at(mv + 16), f32_at(mv + 20)};
        for (int d = 0; d < 3; d++) {
            pos[d] = f32_at(points + 12 * point + 4 * d);
            nrm[d] = f32_at(mv + 4 + 4 * d);
        }
        s = add_corner(j, pos, nrm, uv, &placed[v]);
    }
    for (uint32_t p = 0; s == TROWEL_OK && p < c[4]; p++) {
        const uint8_t *mp = polys + HEAP_POLYGON_SIZE * p;
        uint32_t n = u32_at(mp), first = u32_at(mp + 4), surface = u32_at(mp + 24), mi = 0;
        if (n < 3 || first > c[2] || n > c[2] - first) {
            s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, j->st->sections[gi].offset,
                            "object %s: polygon %lu has %lu vertices from index %lu of %lu",
                            j->object_name, (unsigned long)p, (unsigned long)n,
                            (unsigned long)first, (unsigned long)c[2]);
            break;
        }
        s = surface_index(j, &mat, &sm, surface, default_rgb, &mi);
        uint32_t corner[3];
        for (uint32_t k = 0; s == TROWEL_OK && k < n; k++) {
            uint32_t v = u32_at(idx + 4 * (first + k));
            if (v >= c[1]) {
                s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, j->st->sections[gi].offset,
                                "object %s: polygon %lu uses vertex %lu of %lu", j->object_name,
                                (unsigned long)p, (unsigned long)v, (unsigned long)c[1]);
                break;
            }
            if (k == 0)
                corner[0] = placed[v];
            else if (k == 1)
                corner[2] = placed[v];
            else {
                corner[1] = corner[2];
                corner[2] = placed[v];
                s = trowel_mesh_add_triangle(j->mesh, corner[0], corner[1], corner[2], mi);
            }
        }
    }
    trowel_mem_free(ctx, points);
    trowel_mem_free(ctx, verts);
    trowel_mem_free(ctx, idx);
    trowel_mem_free(ctx, polys);
    trowel_mem_free(ctx, placed);
    trowel_mem_free(ctx, sm.index);
    free_material(ctx, &mat);
    return s;
}

/* Reads the geometry section gi in whichever layout its size fits. */
static trowel_status build_geometry(const mesh_job *j, size_t gi, uint32_t mapping_handle)
{
    trowel_ctx *ctx = j->a->ctx;
    uint64_t size = j->st->sections[gi].size;
    trowel_reader r, probe;
    trowel_status s = groff_section_reader(j->a, gi, &r);
    if (s != TROWEL_OK)
        return s;
    /* The mesh heap's header: 5 u32 + pivot, then the five counts. */
    uint32_t h[11];
    bool heap = false;
    probe = r;
    if (j->optimised && size >= 44) {
        for (int k = 0; k < 11; k++)
            trowel_read_u32le(&probe, &h[k]);
        heap = heap_size(h + 6) == size;
    }
    if (heap) {
        trowel_reader_skip(&r, 44);
        return build_heap(j, gi, &r, h[0], h + 6, h[2]);
    }
    if (j->version >= 14)
        s = trowel_reader_skip(&r, 12); /* pivot */
    uint32_t c[4] = {0, 0, 0, 0}, rgb[3];
    for (int k = 0; s == TROWEL_OK && k < (j->version >= 13 ? 4 : 3); k++)
        s = trowel_read_u32le(&r, &c[k]);
    for (int k = 0; s == TROWEL_OK && k < 3; k++)
        s = trowel_read_u32le(&r, &rgb[k]);
    if (s != TROWEL_OK || plain_size(j->version, c) != size)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, j->st->sections[gi].offset,
                           "object %s: geometry section %s (%llu bytes) fits neither the plain "
                           "layout (%lu vertices, %lu faces, %lu normals, %lu wrap points) nor "
                           "a mesh heap",
                           j->object_name, section_label(j->st, gi), (unsigned long long)size,
                           (unsigned long)c[0], (unsigned long)c[1], (unsigned long)c[2],
                           (unsigned long)c[3]);
    return build_plain(j, gi, &r, c, rgb, mapping_handle);
}

/* One placed object: its object section, then its geometry. */
static trowel_status build_object(mesh_job *j, const grf_placement *p)
{
    trowel_ctx *ctx = j->a->ctx;
    size_t oi = section_by_handle(j->st, p->object_section);
    if (oi == SIZE_MAX)
        return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "object %s names section 0x%08lx, which the file lacks",
                           j->object_name, (unsigned long)p->object_section);
    trowel_reader r;
    uint32_t o[7];
    trowel_status s = groff_section_reader(j->a, oi, &r);
    for (int k = 0; s == TROWEL_OK && k < 7; k++)
        s = trowel_read_u32le(&r, &o[k]);
    if (s != TROWEL_OK)
        return object_fail(j, oi, "object");
    size_t gi = section_by_handle(j->st, o[1]);
    if (gi == SIZE_MAX)
        return TROWEL_OK; /* no geometry (a trigger, a sound, a marker) */
    if ((s = trowel_mesh_begin_object(j->mesh, j->object_name)) != TROWEL_OK)
        return s;
    return build_geometry(j, gi, o[2]);
}

static trowel_status build_mesh(trowel_archive *a, const grf_region *g, const char *only,
                                trowel_mesh *mesh)
{
    mesh_job j = {.a = a, .st = a->priv, .version = g->version, .optimised = g->optimised,
                  .mesh = mesh};
    bool found = false;
    trowel_status s = TROWEL_OK;
    for (uint32_t i = 0; s == TROWEL_OK && i < g->count; i++) {
        const grf_placement *p = &g->items[i];
        const char *name = symbol_name(j.st, p->name_symbol);
        char fallback[32];
        if (!name) {
            snprintf(fallback, sizeof fallback, "object-%lu", (unsigned long)i);
            name = fallback;
        }
        if (only && strcmp(only, name) != 0)
            continue;
        found = true;
        j.object_name = name;
        if (only)
            identity_transform(&j.xf);
        else
            placement_transform(p, &j.xf);
        trowel_set_entry(a->ctx, name);
        s = build_object(&j, p);
        trowel_progress(a->ctx, i + 1, g->count);
    }
    trowel_set_entry(a->ctx, NULL);
    if (s == TROWEL_OK && only && !found)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "no object named '%s' in .region", only);
    return s;
}

/* The MTL name an OBJ refers to: -O mtl=, else the input's name with .mtl. */
static void mtl_name_for(trowel_archive *a, const char *const *opts, size_t n, char *out,
                         size_t cap)
{
    const char *given = trowel_options_get(opts, n, "mtl");
    if (given) {
        snprintf(out, cap, "%s", given);
        return;
    }
    const char *path = trowel_input_name(a->in);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    int len = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    if (len == 0 || strcmp(base, "-") == 0)
        snprintf(out, cap, "world.mtl");
    else
        snprintf(out, cap, "%.*s.mtl", len > 200 ? 200 : len, base);
}

trowel_status groff_grf_convert(trowel_archive *a, const char *target, const char *const *opts,
                                size_t nopts, trowel_sink *out)
{
    bool placements = strcmp(target, "placements") == 0, values = strcmp(target, "values") == 0;
    bool obj = strcmp(target, "obj") == 0, mtl = strcmp(target, "mtl") == 0;
    bool glb = strcmp(target, "glb") == 0;
    if (!placements && !values && !obj && !mtl && !glb)
        return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "groff converts to json, placements, values, obj, mtl or glb, not %s",
                           target);
    grf_region g;
    trowel_status s = read_region(a, &g);
    if (s == TROWEL_OK && placements)
        s = write_placements(a, &g, out);
    if (s == TROWEL_OK && values)
        s = write_values(a, &g, out);
    if (s == TROWEL_OK && !placements && !values) {
        trowel_mesh mesh;
        trowel_mesh_init(&mesh, a->ctx, TROWEL_MESH_NORMALS | TROWEL_MESH_UVS);
        s = build_mesh(a, &g, trowel_options_get(opts, nopts, "object"), &mesh);
        if (s == TROWEL_OK && glb)
            s = trowel_mesh_write_glb(&mesh, out);
        if (s == TROWEL_OK && mtl)
            s = trowel_mesh_write_mtl(&mesh, out);
        if (s == TROWEL_OK && obj) {
            char name[256];
            mtl_name_for(a, opts, nopts, name, sizeof name);
            s = trowel_mesh_write_obj(&mesh, out, name);
        }
        trowel_mesh_free(&mesh);
    }
    trowel_mem_free(a->ctx, g.items);
    return s;
}
