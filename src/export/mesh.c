/*
 * The mesh model and its OBJ, MTL and binary glTF writers (see mesh.h).
 *
 * glTF layout: one buffer (the GLB's BIN chunk). Per object: its positions,
 * then normals, then texture coordinates, then one index run per material
 * it uses; every piece is a multiple of 4 bytes, so each bufferView starts
 * aligned as glTF requires for 4-byte components. The JSON chunk is padded
 * with spaces and the BIN chunk with zeros to a multiple of 4.
 */
#include "export/mesh.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define GLB_MAGIC 0x46546C67u /* "glTF" */
#define GLB_JSON 0x4E4F534Au  /* "JSON" */
#define GLB_BIN 0x004E4942u   /* "BIN\0" */
#define GL_FLOAT 5126
#define GL_UNSIGNED_INT 5125
#define GL_ARRAY_BUFFER 34962
#define GL_ELEMENT_ARRAY_BUFFER 34963
#define GLTF_TRIANGLES 4

void trowel_mesh_from_z_up(const float in[3], float out[3])
{
    float x = in[0], y = in[1], z = in[2];
    out[0] = x;
    out[1] = z;
    out[2] = 0.0f - y; /* no negative zero */
}

void trowel_mesh_init(trowel_mesh *m, trowel_ctx *ctx, unsigned flags)
{
    memset(m, 0, sizeof *m);
    m->ctx = ctx;
    m->flags = flags;
}

void trowel_mesh_free(trowel_mesh *m)
{
    if (!m || !m->ctx)
        return;
    trowel_ctx *ctx = m->ctx;
    trowel_mem_free(ctx, m->positions);
    trowel_mem_free(ctx, m->normals);
    trowel_mem_free(ctx, m->uvs);
    trowel_mem_free(ctx, m->faces);
    trowel_mem_free(ctx, m->face_mat);
    for (size_t i = 0; i < m->material_count; i++) {
        trowel_mem_free(ctx, m->materials[i].name);
        trowel_mem_free(ctx, m->materials[i].texture);
    }
    trowel_mem_free(ctx, m->materials);
    for (size_t i = 0; i < m->object_count; i++)
        trowel_mem_free(ctx, m->objects[i].name);
    trowel_mem_free(ctx, m->objects);
    memset(m, 0, sizeof *m);
}

/* Grows *p (of *cap items of size each) to hold at least need items. */
static trowel_status grow(trowel_ctx *ctx, void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return TROWEL_OK;
    size_t n = *cap ? *cap * 2 : 64;
    while (n < need)
        n *= 2;
    trowel_status s = trowel_mem_resize_array(ctx, p, n, size);
    if (s != TROWEL_OK)
        return s;
    *cap = n;
    return TROWEL_OK;
}

/* Grows the three vertex arrays together; they share vertex_cap. */
static trowel_status grow_vertices(trowel_mesh *m)
{
    if (m->vertex_count < m->vertex_cap)
        return TROWEL_OK;
    size_t cap = m->vertex_cap, c2 = m->vertex_cap, c3 = m->vertex_cap;
    size_t need = m->vertex_count + 1;
    trowel_status s = grow(m->ctx, (void **)&m->positions, &cap, need, 3 * sizeof(float));
    if (s == TROWEL_OK && (m->flags & TROWEL_MESH_NORMALS))
        s = grow(m->ctx, (void **)&m->normals, &c2, need, 3 * sizeof(float));
    if (s == TROWEL_OK && (m->flags & TROWEL_MESH_UVS))
        s = grow(m->ctx, (void **)&m->uvs, &c3, need, 2 * sizeof(float));
    if (s == TROWEL_OK)
        m->vertex_cap = cap;
    return s;
}

static trowel_status grow_faces(trowel_mesh *m)
{
    if (m->face_count < m->face_cap)
        return TROWEL_OK;
    size_t cap = m->face_cap, c2 = m->face_cap;
    trowel_status s =
        grow(m->ctx, (void **)&m->faces, &cap, m->face_count + 1, 3 * sizeof(uint32_t));
    if (s == TROWEL_OK)
        s = grow(m->ctx, (void **)&m->face_mat, &c2, m->face_count + 1, sizeof(uint32_t));
    if (s == TROWEL_OK)
        m->face_cap = cap;
    return s;
}

trowel_status trowel_mesh_begin_object(trowel_mesh *m, const char *name)
{
    trowel_status s = grow(m->ctx, (void **)&m->objects, &m->object_cap, m->object_count + 1,
                           sizeof *m->objects);
    if (s != TROWEL_OK)
        return s;
    char *copy;
    if ((s = trowel_mem_dup(m->ctx, name ? name : "", &copy)) != TROWEL_OK)
        return s;
    trowel_mesh_object *o = &m->objects[m->object_count++];
    o->name = copy;
    o->first_vertex = m->vertex_count;
    o->vertex_count = 0;
    o->first_face = m->face_count;
    o->face_count = 0;
    return TROWEL_OK;
}

trowel_status trowel_mesh_add_material(trowel_mesh *m, const char *name, const float rgb[3],
                                       float opacity, const char *texture, uint32_t *index)
{
    if (m->material_count >= TROWEL_MESH_MAX_ITEMS)
        return trowel_fail(m->ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET, "too many materials");
    trowel_status s = grow(m->ctx, (void **)&m->materials, &m->material_cap,
                           m->material_count + 1, sizeof *m->materials);
    if (s != TROWEL_OK)
        return s;
    trowel_mesh_material mat = {0};
    s = trowel_mem_dup(m->ctx, name ? name : "", &mat.name);
    if (s == TROWEL_OK && texture)
        s = trowel_mem_dup(m->ctx, texture, &mat.texture);
    if (s != TROWEL_OK) {
        trowel_mem_free(m->ctx, mat.name);
        return s;
    }
    for (int i = 0; i < 3; i++) {
        float c = isfinite(rgb[i]) ? rgb[i] : 1.0f;
        mat.rgb[i] = c < 0.0f ? 0.0f : c > 1.0f ? 1.0f : c;
    }
    mat.opacity = !isfinite(opacity) || opacity > 1.0f ? 1.0f : opacity < 0.0f ? 0.0f : opacity;
    m->materials[m->material_count] = mat;
    if (index)
        *index = (uint32_t)m->material_count;
    m->material_count++;
    return TROWEL_OK;
}

trowel_status trowel_mesh_add_vertex(trowel_mesh *m, const float pos[3], const float nrm[3],
                                     const float uv[2], uint32_t *index)
{
    if (m->object_count == 0) {
        trowel_status s = trowel_mesh_begin_object(m, "mesh");
        if (s != TROWEL_OK)
            return s;
    }
    if (m->vertex_count >= TROWEL_MESH_MAX_ITEMS)
        return trowel_fail(m->ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                           "a mesh of more than %u vertices", TROWEL_MESH_MAX_ITEMS);
    bool finite = isfinite(pos[0]) && isfinite(pos[1]) && isfinite(pos[2]);
    if (m->flags & TROWEL_MESH_NORMALS)
        finite = finite && isfinite(nrm[0]) && isfinite(nrm[1]) && isfinite(nrm[2]);
    if (m->flags & TROWEL_MESH_UVS)
        finite = finite && isfinite(uv[0]) && isfinite(uv[1]);
    if (!finite)
        return trowel_fail(m->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "vertex %zu has a coordinate that is not a finite number",
                           m->vertex_count);
    trowel_status s = grow_vertices(m);
    if (s != TROWEL_OK)
        return s;
    size_t v = m->vertex_count;
    memcpy(m->positions + 3 * v, pos, 3 * sizeof(float));
    if (m->flags & TROWEL_MESH_NORMALS) {
        double len = sqrt((double)nrm[0] * nrm[0] + (double)nrm[1] * nrm[1] +
                          (double)nrm[2] * nrm[2]);
        float *n = m->normals + 3 * v;
        if (len > 1e-12 && isfinite(len)) {
            for (int i = 0; i < 3; i++)
                n[i] = (float)(nrm[i] / len);
        } else {
            n[0] = 0.0f, n[1] = 0.0f, n[2] = 1.0f;
        }
    }
    if (m->flags & TROWEL_MESH_UVS)
        memcpy(m->uvs + 2 * v, uv, 2 * sizeof(float));
    m->vertex_count++;
    m->objects[m->object_count - 1].vertex_count++;
    if (index)
        *index = (uint32_t)v;
    return TROWEL_OK;
}

trowel_status trowel_mesh_add_triangle(trowel_mesh *m, uint32_t a, uint32_t b, uint32_t c,
                                       uint32_t mat)
{
    if (m->object_count == 0)
        return trowel_fail(m->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "a triangle before any vertex");
    trowel_mesh_object *o = &m->objects[m->object_count - 1];
    uint32_t idx[3] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (idx[i] < o->first_vertex || idx[i] >= o->first_vertex + o->vertex_count)
            return trowel_fail(m->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                               "triangle %zu of object '%s' uses vertex %lu, outside its %zu",
                               o->face_count, o->name, (unsigned long)idx[i], o->vertex_count);
    if (mat >= m->material_count)
        return trowel_fail(m->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "triangle %zu of object '%s' uses material %lu of %zu", o->face_count,
                           o->name, (unsigned long)mat, m->material_count);
    if (m->face_count >= TROWEL_MESH_MAX_ITEMS)
        return trowel_fail(m->ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                           "a mesh of more than %u triangles", TROWEL_MESH_MAX_ITEMS);
    trowel_status s = grow_faces(m);
    if (s != TROWEL_OK)
        return s;
    memcpy(m->faces + 3 * m->face_count, idx, sizeof idx);
    m->face_mat[m->face_count] = mat;
    m->face_count++;
    o->face_count++;
    return TROWEL_OK;
}

/* ---- OBJ and MTL ---------------------------------------------------------------------- */

/* A buffered text writer: lines are formatted into a fixed buffer and
 * flushed to the sink when it fills. */
typedef struct text_out {
    trowel_sink *sink;
    trowel_status status;
    size_t len;
    char buf[16384];
} text_out;

static void text_flush(text_out *t)
{
    if (t->status == TROWEL_OK && t->len)
        t->status = trowel_sink_write(t->sink, t->buf, t->len);
    t->len = 0;
}

static void text_printf(text_out *t, const char *fmt, ...) TROWEL_PRINTF(2, 3);
static void text_printf(text_out *t, const char *fmt, ...)
{
    if (t->status != TROWEL_OK)
        return;
    if (sizeof t->buf - t->len < 1024)
        text_flush(t);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n < sizeof t->buf - t->len ? (size_t)n : sizeof t->buf - t->len - 1;
}

/* A name as one OBJ/MTL token: at most 200 bytes, blanks and control
 * characters become '_', backslashes '/' (paths), empty becomes "unnamed". */
static void obj_token(char out[201], const char *in)
{
    size_t n = 0;
    for (; in && in[n] && n < 200; n++) {
        unsigned char c = (unsigned char)in[n];
        out[n] = c <= ' ' || c == 0x7F ? '_' : c == '\\' ? '/' : (char)c;
    }
    out[n] = 0;
    if (n == 0)
        strcpy(out, "unnamed");
}

trowel_status trowel_mesh_write_obj(const trowel_mesh *m, trowel_sink *out, const char *mtl_name)
{
    text_out *t;
    trowel_status s = trowel_mem_new(m->ctx, sizeof *t, &t);
    if (s != TROWEL_OK)
        return s;
    t->sink = out;
    t->status = TROWEL_OK;
    t->len = 0;
    char tok[201];
    text_printf(t, "# written by trowel\n");
    if (mtl_name) {
        obj_token(tok, mtl_name);
        text_printf(t, "mtllib %s\n", tok);
    }
    bool nrm = m->flags & TROWEL_MESH_NORMALS, uv = m->flags & TROWEL_MESH_UVS;
    for (size_t oi = 0; oi < m->object_count && t->status == TROWEL_OK; oi++) {
        const trowel_mesh_object *o = &m->objects[oi];
        obj_token(tok, o->name);
        text_printf(t, "o %s\n", tok);
        for (size_t v = o->first_vertex; v < o->first_vertex + o->vertex_count; v++) {
            const float *p = m->positions + 3 * v;
            text_printf(t, "v %.9g %.9g %.9g\n", p[0], p[1], p[2]);
        }
        for (size_t v = o->first_vertex; uv && v < o->first_vertex + o->vertex_count; v++)
            text_printf(t, "vt %.9g %.9g\n", m->uvs[2 * v], m->uvs[2 * v + 1]);
        for (size_t v = o->first_vertex; nrm && v < o->first_vertex + o->vertex_count; v++) {
            const float *n = m->normals + 3 * v;
            text_printf(t, "vn %.9g %.9g %.9g\n", n[0], n[1], n[2]);
        }
        uint32_t current = UINT32_MAX;
        for (size_t f = o->first_face; f < o->first_face + o->face_count; f++) {
            if (mtl_name && m->face_mat[f] != current) {
                current = m->face_mat[f];
                obj_token(tok, m->materials[current].name);
                text_printf(t, "usemtl %s\n", tok);
            }
            text_printf(t, "f");
            for (int k = 0; k < 3; k++) {
                unsigned long i = (unsigned long)m->faces[3 * f + k] + 1; /* OBJ counts from 1 */
                if (uv && nrm)
                    text_printf(t, " %lu/%lu/%lu", i, i, i);
                else if (uv)
                    text_printf(t, " %lu/%lu", i, i);
                else if (nrm)
                    text_printf(t, " %lu//%lu", i, i);
                else
                    text_printf(t, " %lu", i);
            }
            text_printf(t, "\n");
        }
    }
    text_flush(t);
    s = t->status;
    trowel_mem_free(m->ctx, t);
    return s;
}

trowel_status trowel_mesh_write_mtl(const trowel_mesh *m, trowel_sink *out)
{
    text_out *t;
    trowel_status s = trowel_mem_new(m->ctx, sizeof *t, &t);
    if (s != TROWEL_OK)
        return s;
    t->sink = out;
    t->status = TROWEL_OK;
    t->len = 0;
    char tok[201];
    text_printf(t, "# written by trowel\n");
    for (size_t i = 0; i < m->material_count; i++) {
        const trowel_mesh_material *mat = &m->materials[i];
        obj_token(tok, mat->name);
        text_printf(t, "\nnewmtl %s\n", tok);
        text_printf(t, "Kd %.6g %.6g %.6g\n", mat->rgb[0], mat->rgb[1], mat->rgb[2]);
        text_printf(t, "d %.6g\n", mat->opacity);
        if (mat->texture && mat->texture[0]) {
            obj_token(tok, mat->texture);
            text_printf(t, "map_Kd %s\n", tok);
        }
    }
    text_flush(t);
    s = t->status;
    trowel_mem_free(m->ctx, t);
    return s;
}

/* ---- binary glTF ------------------------------------------------------------------------ */

typedef struct glb_state {
    const trowel_mesh *m;
    json_object *accessors, *views;
    uint8_t *bin;
    size_t bin_len, bin_cap;
    uint32_t *counts; /* per material: triangles of the current object */
} glb_state;

static void put_u32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static json_object *json_floats(const float *v, int n)
{
    json_object *a = json_object_new_array();
    for (int i = 0; i < n; i++)
        json_object_array_add(a, json_object_new_double((double)v[i]));
    return a;
}

/* Appends n bytes to the BIN chunk as a new bufferView + accessor; returns
 * the accessor's index. The data is already in place at bin + offset. */
static int glb_accessor(glb_state *g, size_t offset, size_t bytes, size_t count, int component,
                        const char *type, int target, const float *min, const float *max, int dims)
{
    json_object *view = json_object_new_object();
    json_object_object_add(view, "buffer", json_object_new_int(0));
    json_object_object_add(view, "byteOffset", json_object_new_int64((int64_t)offset));
    json_object_object_add(view, "byteLength", json_object_new_int64((int64_t)bytes));
    json_object_object_add(view, "target", json_object_new_int(target));
    json_object_array_add(g->views, view);
    json_object *acc = json_object_new_object();
    json_object_object_add(acc, "bufferView",
                           json_object_new_int((int)json_object_array_length(g->views) - 1));
    json_object_object_add(acc, "componentType", json_object_new_int(component));
    json_object_object_add(acc, "count", json_object_new_int64((int64_t)count));
    json_object_object_add(acc, "type", json_object_new_string(type));
    if (min && max) {
        json_object_object_add(acc, "min", json_floats(min, dims));
        json_object_object_add(acc, "max", json_floats(max, dims));
    }
    json_object_array_add(g->accessors, acc);
    return (int)json_object_array_length(g->accessors) - 1;
}

/* Copies floats for vertices [first, first+n) of a per-vertex array of dims
 * components into the BIN chunk (flipping v for texture coordinates). */
static size_t glb_put_floats(glb_state *g, const float *src, size_t first, size_t n, int dims,
                             bool flip_v)
{
    size_t at = g->bin_len;
    float *dst = (float *)(void *)(g->bin + at);
    memcpy(dst, src + (size_t)dims * first, n * (size_t)dims * sizeof(float));
    if (flip_v)
        for (size_t i = 0; i < n; i++)
            dst[2 * i + 1] = 1.0f - dst[2 * i + 1];
    g->bin_len += n * (size_t)dims * sizeof(float);
    return at;
}

static void bounds(const float *p, size_t n, float min[3], float max[3])
{
    for (int k = 0; k < 3; k++)
        min[k] = max[k] = p[k];
    for (size_t i = 1; i < n; i++)
        for (int k = 0; k < 3; k++) {
            float v = p[3 * i + k];
            min[k] = v < min[k] ? v : min[k];
            max[k] = v > max[k] ? v : max[k];
        }
}

/* One object: its vertex accessors, one primitive per material used. */
static json_object *glb_object_mesh(glb_state *g, const trowel_mesh_object *o)
{
    const trowel_mesh *m = g->m;
    json_object *attrs = json_object_new_object();
    float min[3], max[3];
    bounds(m->positions + 3 * o->first_vertex, o->vertex_count, min, max);
    size_t at = glb_put_floats(g, m->positions, o->first_vertex, o->vertex_count, 3, false);
    json_object_object_add(attrs, "POSITION",
                           json_object_new_int(glb_accessor(g, at, 12 * o->vertex_count,
                                                            o->vertex_count, GL_FLOAT, "VEC3",
                                                            GL_ARRAY_BUFFER, min, max, 3)));
    if (m->flags & TROWEL_MESH_NORMALS) {
        at = glb_put_floats(g, m->normals, o->first_vertex, o->vertex_count, 3, false);
        json_object_object_add(attrs, "NORMAL",
                               json_object_new_int(glb_accessor(g, at, 12 * o->vertex_count,
                                                                o->vertex_count, GL_FLOAT, "VEC3",
                                                                GL_ARRAY_BUFFER, NULL, NULL, 0)));
    }
    if (m->flags & TROWEL_MESH_UVS) {
        at = glb_put_floats(g, m->uvs, o->first_vertex, o->vertex_count, 2, true);
        json_object_object_add(attrs, "TEXCOORD_0",
                               json_object_new_int(glb_accessor(g, at, 8 * o->vertex_count,
                                                                o->vertex_count, GL_FLOAT, "VEC2",
                                                                GL_ARRAY_BUFFER, NULL, NULL, 0)));
    }
    memset(g->counts, 0, m->material_count * sizeof *g->counts);
    for (size_t f = o->first_face; f < o->first_face + o->face_count; f++)
        g->counts[m->face_mat[f]]++;
    json_object *prims = json_object_new_array();
    for (size_t mat = 0; mat < m->material_count; mat++) {
        if (!g->counts[mat])
            continue;
        size_t start = g->bin_len;
        uint32_t *idx = (uint32_t *)(void *)(g->bin + start);
        size_t k = 0;
        for (size_t f = o->first_face; f < o->first_face + o->face_count; f++)
            if (m->face_mat[f] == mat)
                for (int j = 0; j < 3; j++)
                    idx[k++] = (uint32_t)(m->faces[3 * f + j] - o->first_vertex);
        g->bin_len += 4 * k;
        json_object *prim = json_object_new_object();
        json_object_object_add(prim, "attributes", json_object_get(attrs));
        json_object_object_add(prim, "indices",
                               json_object_new_int(glb_accessor(g, start, 4 * k, k,
                                                                GL_UNSIGNED_INT, "SCALAR",
                                                                GL_ELEMENT_ARRAY_BUFFER, NULL,
                                                                NULL, 0)));
        json_object_object_add(prim, "material", json_object_new_int((int)mat));
        json_object_object_add(prim, "mode", json_object_new_int(GLTF_TRIANGLES));
        json_object_array_add(prims, prim);
    }
    json_object_put(attrs);
    json_object *mesh = json_object_new_object();
    json_object_object_add(mesh, "name", json_object_new_string(o->name));
    json_object_object_add(mesh, "primitives", prims);
    return mesh;
}

static json_object *glb_material(const trowel_mesh_material *mat)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(mat->name));
    json_object *pbr = json_object_new_object();
    float rgba[4] = {mat->rgb[0], mat->rgb[1], mat->rgb[2], mat->opacity};
    json_object_object_add(pbr, "baseColorFactor", json_floats(rgba, 4));
    json_object_object_add(pbr, "metallicFactor", json_object_new_double(0.0));
    json_object_object_add(pbr, "roughnessFactor", json_object_new_double(1.0));
    json_object_object_add(o, "pbrMetallicRoughness", pbr);
    if (mat->opacity < 1.0f)
        json_object_object_add(o, "alphaMode", json_object_new_string("BLEND"));
    json_object_object_add(o, "doubleSided", json_object_new_boolean(1));
    if (mat->texture && mat->texture[0]) {
        json_object *extras = json_object_new_object();
        json_object_object_add(extras, "texture", json_object_new_string(mat->texture));
        json_object_object_add(o, "extras", extras);
    }
    return o;
}

/* Bytes the BIN chunk needs, or false if that passes 4 GiB (GLB's limit). */
static bool glb_bin_size(const trowel_mesh *m, uint64_t *size)
{
    uint64_t per_vertex = 12;
    if (m->flags & TROWEL_MESH_NORMALS)
        per_vertex += 12;
    if (m->flags & TROWEL_MESH_UVS)
        per_vertex += 8;
    uint64_t n = 0;
    for (size_t i = 0; i < m->object_count; i++)
        if (m->objects[i].face_count)
            n += per_vertex * m->objects[i].vertex_count;
    n += 12 * (uint64_t)m->face_count;
    *size = n;
    return n < UINT32_MAX - 4096;
}

static trowel_status glb_write_file(const glb_state *g, json_object *root, trowel_sink *out)
{
    const char *text = trowel_json_text_utf8(root, JSON_C_TO_STRING_PLAIN |
                                             JSON_C_TO_STRING_NOSLASHESCAPE);
    size_t json_len = strlen(text), json_pad = (4 - json_len % 4) % 4;
    size_t bin_pad = (4 - g->bin_len % 4) % 4;
    uint64_t total = 12 + 8 + json_len + json_pad + (g->bin_len ? 8 + g->bin_len + bin_pad : 0);
    if (total > UINT32_MAX)
        return trowel_fail(g->m->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "the glTF file would pass 4 GiB");
    uint8_t h[20];
    put_u32le(h, GLB_MAGIC);
    put_u32le(h + 4, 2);
    put_u32le(h + 8, (uint32_t)total);
    put_u32le(h + 12, (uint32_t)(json_len + json_pad));
    put_u32le(h + 16, GLB_JSON);
    static const char spaces[4] = {' ', ' ', ' ', ' '};
    static const uint8_t zeros[4] = {0};
    trowel_status s = trowel_sink_write(out, h, sizeof h);
    if (s == TROWEL_OK)
        s = trowel_sink_write(out, text, json_len);
    if (s == TROWEL_OK)
        s = trowel_sink_write(out, spaces, json_pad);
    if (s == TROWEL_OK && g->bin_len) {
        put_u32le(h, (uint32_t)(g->bin_len + bin_pad));
        put_u32le(h + 4, GLB_BIN);
        s = trowel_sink_write(out, h, 8);
        if (s == TROWEL_OK)
            s = trowel_sink_write(out, g->bin, g->bin_len);
        if (s == TROWEL_OK)
            s = trowel_sink_write(out, zeros, bin_pad);
    }
    return s;
}

trowel_status trowel_mesh_write_glb(const trowel_mesh *m, trowel_sink *out)
{
    trowel_ctx *ctx = m->ctx;
    uint64_t bin_size;
    if (!glb_bin_size(m, &bin_size))
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "the glTF buffer would pass 4 GiB");
    glb_state g = {.m = m};
    trowel_status s = trowel_mem_new(ctx, (size_t)bin_size + 4, &g.bin);
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, m->material_count + 1, sizeof *g.counts, &g.counts);
    if (s != TROWEL_OK) {
        trowel_mem_free(ctx, g.bin);
        return s;
    }
    json_object *root = json_object_new_object();
    json_object *asset = json_object_new_object();
    json_object_object_add(asset, "version", json_object_new_string("2.0"));
    json_object_object_add(asset, "generator", json_object_new_string("trowel"));
    json_object_object_add(root, "asset", asset);
    g.accessors = json_object_new_array();
    g.views = json_object_new_array();
    json_object *nodes = json_object_new_array(), *meshes = json_object_new_array();
    json_object *scene_nodes = json_object_new_array();
    for (size_t i = 0; i < m->object_count; i++) {
        const trowel_mesh_object *o = &m->objects[i];
        if (!o->face_count)
            continue; /* glTF has no use for a mesh without triangles */
        json_object_array_add(meshes, glb_object_mesh(&g, o));
        json_object *node = json_object_new_object();
        json_object_object_add(node, "name", json_object_new_string(o->name));
        json_object_object_add(node, "mesh",
                               json_object_new_int((int)json_object_array_length(meshes) - 1));
        json_object_array_add(nodes, node);
        json_object_array_add(scene_nodes,
                              json_object_new_int((int)json_object_array_length(nodes) - 1));
    }
    json_object_object_add(root, "scene", json_object_new_int(0));
    json_object *scene = json_object_new_object();
    if (json_object_array_length(scene_nodes))
        json_object_object_add(scene, "nodes", scene_nodes);
    else
        json_object_put(scene_nodes);
    json_object *scenes = json_object_new_array();
    json_object_array_add(scenes, scene);
    json_object_object_add(root, "scenes", scenes);
    /* glTF forbids empty top-level arrays: leave out what has nothing. */
    if (json_object_array_length(nodes)) {
        json_object_object_add(root, "nodes", nodes);
        json_object_object_add(root, "meshes", meshes);
        json_object_object_add(root, "accessors", g.accessors);
        json_object_object_add(root, "bufferViews", g.views);
        json_object *buffer = json_object_new_object();
        json_object_object_add(buffer, "byteLength", json_object_new_int64((int64_t)g.bin_len));
        json_object *buffers = json_object_new_array();
        json_object_array_add(buffers, buffer);
        json_object_object_add(root, "buffers", buffers);
    } else {
        json_object_put(nodes);
        json_object_put(meshes);
        json_object_put(g.accessors);
        json_object_put(g.views);
    }
    if (m->material_count) {
        json_object *mats = json_object_new_array();
        for (size_t i = 0; i < m->material_count; i++)
            json_object_array_add(mats, glb_material(&m->materials[i]));
        json_object_object_add(root, "materials", mats);
    }
    s = glb_write_file(&g, root, out);
    json_object_put(root);
    trowel_mem_free(ctx, g.bin);
    trowel_mem_free(ctx, g.counts);
    return s;
}
