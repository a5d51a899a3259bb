/*
 * GRF worlds assembled byte by byte here (src/format/trespasser/groff_grf.c):
 * a version-13 optimised world with one mesh-heap object whose one polygon
 * is a pentagon, converted to OBJ with the vertices, fan triangles and
 * default colour worked out by hand below; and hostile variants (a polygon
 * running past the vertex indices, a geometry section of no known size, a
 * .region whose count does not match its size, a version outside 11..15).
 */
#include "test.h"

#include "core/module.h"

/* A little-endian byte buffer. */
typedef struct out {
    uint8_t b[2048];
    size_t n;
} out;

static void u32(out *o, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        o->b[o->n++] = (uint8_t)(v >> (8 * i));
}

static void f32(out *o, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u32(o, u);
}

static void bytes_(out *o, const void *p, size_t n)
{
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

/* The world's sections: .header, .region, Penta (object), Penta-mesh. */
enum { S_HEADER, S_REGION, S_OBJECT, S_MESH, S_COUNT };
static const char *const names[S_COUNT] = {".header", ".region", "Penta", "Penta-mesh"};
/* Symbols sorted by strcmp: ".header" ".region" "Penta" "Penta-mesh". */
static const uint32_t symbol_handle[S_COUNT] = {0x100, 0x110, 0x120, 0x130};

typedef struct world {
    uint32_t version;         /* .header version word */
    uint32_t region_count;    /* as stored */
    uint32_t first_index;     /* the polygon's first vertex index */
    bool cut_mesh;            /* drop the mesh's last 4 bytes */
} world;

static size_t build(const world *w, uint8_t *file)
{
    out sec[S_COUNT] = {0};
    u32(&sec[S_HEADER], 0x0ACEBABE);
    u32(&sec[S_HEADER], w->version);
    /* .region (v12+): one record of 44 bytes and the attribute section. */
    u32(&sec[S_REGION], w->region_count);
    u32(&sec[S_REGION], 0x80000000u + S_OBJECT);
    u32(&sec[S_REGION], symbol_handle[S_OBJECT]);
    for (int i = 0; i < 6; i++)
        f32(&sec[S_REGION], 0);
    f32(&sec[S_REGION], 1);
    u32(&sec[S_REGION], 0), u32(&sec[S_REGION], 0), u32(&sec[S_REGION], 0);
    /* object: name, geometry = the mesh, no mapping, physics, AI, sound, special */
    u32(&sec[S_OBJECT], symbol_handle[S_OBJECT]);
    u32(&sec[S_OBJECT], 0x80000000u + S_MESH);
    for (int i = 0; i < 5; i++)
        u32(&sec[S_OBJECT], 0);
    /* mesh heap: no material, uses default, colour B=0x33 G=0x66 R=0x99,
     * pivot, counts: 5 points, 5 vertices, 5 indices, 0 wrap, 1 polygon */
    out *m = &sec[S_MESH];
    u32(m, 0), u32(m, 1), u32(m, 0x00996633u);
    f32(m, 0), f32(m, 0), f32(m, 0);
    u32(m, 5), u32(m, 5), u32(m, 5), u32(m, 0), u32(m, 1);
    static const float pts[5][3] = {{0, 0, 0}, {2, 0, 0}, {3, 1, 0}, {1, 2, 0}, {-1, 1, 0}};
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 3; k++)
            f32(m, pts[i][k]);
    for (uint32_t i = 0; i < 5; i++) { /* vertex i uses point 4 - i */
        u32(m, 4 - i);
        f32(m, 0), f32(m, 0), f32(m, 1);
        f32(m, 0.25f * (float)i), f32(m, 0.5f);
        u32(m, 0), u32(m, 0);
    }
    for (uint32_t i = 0; i < 5; i++) /* indices 0..4 -> vertices 4..0 */
        u32(m, 4 - i);
    u32(m, 5), u32(m, w->first_index); /* the pentagon */
    f32(m, 0), f32(m, 0), f32(m, 1), f32(m, 0);
    u32(m, 0); /* surface 0 of no material: the default colour */
    u32(m, 0), u32(m, 0), u32(m, 0);
    if (w->cut_mesh)
        m->n -= 4;
    /* the container */
    out f = {0};
    uint32_t data = 48 + 32 * S_COUNT, at = data, symtab = 0;
    for (int i = 0; i < S_COUNT; i++)
        at += (uint32_t)sec[i].n;
    for (int i = 0; i < S_COUNT; i++)
        symtab += 12 + (uint32_t)strlen(names[i]) + 1;
    uint32_t header[12] = {0x0ACEBABE, at + symtab, S_COUNT, S_COUNT, symtab, at,
                           0,          0x0C,         10,      0,       0,      0};
    for (int i = 0; i < 12; i++)
        u32(&f, header[i]);
    at = data;
    for (int i = 0; i < S_COUNT; i++) {
        uint32_t h[8] = {symbol_handle[i], 0, at, (uint32_t)sec[i].n,
                         0, 0, 0, 0x80000000u + (uint32_t)i};
        for (int k = 0; k < 8; k++)
            u32(&f, h[k]);
        at += (uint32_t)sec[i].n;
    }
    for (int i = 0; i < S_COUNT; i++)
        bytes_(&f, sec[i].b, sec[i].n);
    for (int i = 0; i < S_COUNT; i++) {
        u32(&f, symbol_handle[i]);
        u32(&f, (uint32_t)strlen(names[i]) + 1);
        u32(&f, 1);
        bytes_(&f, names[i], strlen(names[i]) + 1);
    }
    memcpy(file, f.b, f.n);
    return f.n;
}

/* Converts to target; returns the status and the text in buf. */
static trowel_status convert(const world *w, const char *target, char *buf, size_t cap,
                             char *message, size_t mcap)
{
    uint8_t file[4096];
    size_t n = build(w, file);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    trowel_sink *sink = NULL;
    buf[0] = 0;
    trowel_status s = trowel_input_open_memory(ctx, file, n, "penta.grf", &in);
    if (s == TROWEL_OK)
        s = trowel_archive_open(ctx, in, trowel_format_find("groff"), &a);
    if (s == TROWEL_OK)
        s = trowel_sink_open_memory(ctx, &sink);
    if (s == TROWEL_OK) {
        s = trowel_convert(ctx, a, target, NULL, 0, sink);
        size_t len;
        const uint8_t *d = trowel_sink_data(sink, &len);
        snprintf(buf, cap, "%.*s", (int)len, (const char *)d);
        trowel_sink_discard(sink);
    }
    snprintf(message, mcap, "%s", trowel_ctx_last_error(ctx)->message);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return s;
}

static const world good = {13u | 0x80000000u, 1, 0, false};

static void test_pentagon_to_obj(void)
{
    char text[4096], msg[512];
    REQUIRE(convert(&good, "obj", text, sizeof text, msg, sizeof msg) == TROWEL_OK);
    /* Heap vertex i is point 4 - i: (-1,1,0) (1,2,0) (3,1,0) (2,0,0) (0,0,0);
     * Y-up (x, z, -y). The polygon's indices 0..4 name vertices 4..0, so
     * its corners are mesh vertices 5 4 3 2 1 (OBJ numbers); the fan:
     * (5 4 3) (5 3 2) (5 2 1). uv of vertex i: (i/4, 0.5). */
    CHECK_STR(text, "# written by trowel\n"
                    "mtllib penta.mtl\n"
                    "o Penta\n"
                    "v -1 0 -1\nv 1 0 -2\nv 3 0 -1\nv 2 0 0\nv 0 0 0\n"
                    "vt 0 0.5\nvt 0.25 0.5\nvt 0.5 0.5\nvt 0.75 0.5\nvt 1 0.5\n"
                    "vn 0 1 0\nvn 0 1 0\nvn 0 1 0\nvn 0 1 0\nvn 0 1 0\n"
                    "usemtl Penta-default\n"
                    "f 5/5/5 4/4/4 3/3/3\nf 5/5/5 3/3/3 2/2/2\nf 5/5/5 2/2/2 1/1/1\n");
    REQUIRE(convert(&good, "mtl", text, sizeof text, msg, sizeof msg) == TROWEL_OK);
    /* R 0x99 = 153/255 = 0.6, G 0x66 = 0.4, B 0x33 = 0.2 */
    CHECK_STR(text, "# written by trowel\n\nnewmtl Penta-default\nKd 0.6 0.4 0.2\nd 1\n");
}

static void test_hostile_worlds(void)
{
    char text[4096], msg[512];
    world w = good;
    w.first_index = 3; /* 5 vertices from index 3 of 5 */
    CHECK(convert(&w, "obj", text, sizeof text, msg, sizeof msg) == TROWEL_ERR_CORRUPT);
    CHECK_STR(msg, "object Penta: polygon 0 has 5 vertices from index 3 of 5");

    w = good;
    w.cut_mesh = true;
    CHECK(convert(&w, "glb", text, sizeof text, msg, sizeof msg) == TROWEL_ERR_CORRUPT);
    /* 44 + 5 * 12 + 5 * 32 + 5 * 4 + 40 = 324 bytes, cut to 320; read as
     * plain v13 geometry its first words are counts 0, 1, 0x996633, 0. */
    CHECK_STR(msg, "object Penta: geometry section Penta-mesh (320 bytes) fits neither the "
                   "plain layout (0 vertices, 1 faces, 10053171 normals, 0 wrap points) nor a "
                   "mesh heap");

    w = good;
    w.region_count = 0x10000000;
    CHECK(convert(&w, "placements", text, sizeof text, msg, sizeof msg) == TROWEL_ERR_CORRUPT);
    CHECK_STR(msg, ".region lists 268435456 objects (11811160072 bytes) but has 52 bytes");

    w = good;
    w.version = 16;
    CHECK(convert(&w, "obj", text, sizeof text, msg, sizeof msg) == TROWEL_ERR_UNSUPPORTED);
    CHECK_STR(msg, "GRF version 16 is outside the versions the game loads (11..15)");
}

TEST_MAIN(TEST(test_pentagon_to_obj), TEST(test_hostile_worlds))
