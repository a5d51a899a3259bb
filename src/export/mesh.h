/*
 * A small shared mesh model and its writers: Wavefront OBJ + MTL and binary
 * glTF 2.0 (.glb). Formats that hold geometry (Trespasser's GRF objects, its
 * WTD terrain) fill a trowel_mesh and hand it to a writer.
 *
 * The model: vertices carry a position and, when the mesh was made with
 * them, a normal and a texture coordinate (OBJ's convention: v grows
 * upwards; the glTF writer flips it). Triangles index vertices and name a
 * material. Vertices and triangles are grouped in objects, in order: a
 * triangle may only use vertices of its own object, so every object is
 * self-contained (one glTF node + mesh, one OBJ `o` group). Placing an
 * object in a level is the caller's job (it adds transformed positions).
 *
 * Every array grows through the context's memory limit.
 */
#ifndef TROWEL_EXPORT_MESH_H
#define TROWEL_EXPORT_MESH_H

#include "core/core.h"

enum {
    TROWEL_MESH_NORMALS = 1, /* vertices carry a normal */
    TROWEL_MESH_UVS = 2,     /* vertices carry a texture coordinate */
};

typedef struct trowel_mesh_material {
    char *name;
    float rgb[3];   /* diffuse colour, 0..1 */
    float opacity;  /* 0..1; below 1 the glTF material blends */
    char *texture;  /* diffuse map path as the data names it, or NULL */
} trowel_mesh_material;

typedef struct trowel_mesh_object {
    char *name;
    size_t first_vertex, vertex_count;
    size_t first_face, face_count;
} trowel_mesh_object;

typedef struct trowel_mesh {
    trowel_ctx *ctx;
    unsigned flags;
    float *positions; /* 3 per vertex */
    float *normals;   /* 3 per vertex (TROWEL_MESH_NORMALS), unit length */
    float *uvs;       /* 2 per vertex (TROWEL_MESH_UVS) */
    size_t vertex_count, vertex_cap;
    uint32_t *faces;    /* 3 vertex indices per triangle */
    uint32_t *face_mat; /* material index per triangle */
    size_t face_count, face_cap;
    trowel_mesh_material *materials;
    size_t material_count, material_cap;
    trowel_mesh_object *objects;
    size_t object_count, object_cap;
} trowel_mesh;

/* The most vertices or triangles one mesh may hold (indices are u32). */
#define TROWEL_MESH_MAX_ITEMS 0x40000000u

/* trowel's one coordinate convention for every mesh it writes (GRF worlds
 * and objects, WTD terrain): glTF 2.0's Y-up, right-handed, metres. Games
 * that are Z-up (Trespasser: X east, Y north, Z up, metres) turn their
 * points with this proper rotation, (x, y, z) -> (x, z, -y): up becomes +Y,
 * north becomes -Z, handedness and triangle winding are kept. */
void trowel_mesh_from_z_up(const float in[3], float out[3]);

void trowel_mesh_init(trowel_mesh *m, trowel_ctx *ctx, unsigned flags);
void trowel_mesh_free(trowel_mesh *m);

/* Starts a new object; vertices and triangles added after it belong to it. */
trowel_status trowel_mesh_begin_object(trowel_mesh *m, const char *name);
/* Adds a material (texture may be NULL); *index receives its number. */
trowel_status trowel_mesh_add_material(trowel_mesh *m, const char *name, const float rgb[3],
                                       float opacity, const char *texture, uint32_t *index);
/* Adds a vertex to the current object (one is started if none was). nrm
 * and uv are read only when the mesh has them; a normal is normalised, and
 * a zero one becomes +Z. Refuses non-finite numbers (CORRUPT). */
trowel_status trowel_mesh_add_vertex(trowel_mesh *m, const float pos[3], const float nrm[3],
                                     const float uv[2], uint32_t *index);
/* Adds a triangle of the current object's vertices a, b, c (absolute
 * indices as add_vertex gave them) with material mat. Refuses indices
 * outside the current object and unknown materials (CORRUPT). */
trowel_status trowel_mesh_add_triangle(trowel_mesh *m, uint32_t a, uint32_t b, uint32_t c,
                                       uint32_t mat);

/* Writes the mesh as OBJ text. mtl_name, when not NULL, is written as
 * `mtllib` and triangles name their materials with `usemtl`. */
trowel_status trowel_mesh_write_obj(const trowel_mesh *m, trowel_sink *out, const char *mtl_name);
/* Writes the materials as an MTL file (Kd, d, map_Kd). */
trowel_status trowel_mesh_write_mtl(const trowel_mesh *m, trowel_sink *out);
/* Writes the mesh as binary glTF 2.0: one node and mesh per object with
 * triangles, one primitive per material used, positions with min/max,
 * u32 indices. Texture paths go to the material's extras (not embedded). */
trowel_status trowel_mesh_write_glb(const trowel_mesh *m, trowel_sink *out);

#endif
