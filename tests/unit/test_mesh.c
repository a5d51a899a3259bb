/*
 * Tests of the shared mesh model and its writers (src/export/mesh.c): the
 * exact OBJ and MTL text of a small hand-made mesh, the GLB container
 * (header, chunk sizes and alignment), the glTF JSON (accessor counts,
 * position min/max, primitives per material) and the BIN chunk's numbers
 * (positions as given, texture v flipped, indices rebased per object), the
 * model's refusals, and Khronos' glTF validator (tests/tools/gltf_validate.js)
 * finding no error in the GLB.
 */
#include "files.h"
#include "test.h"

#include "export/mesh.h"

#include <json-c/json.h>
#include <unistd.h>

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A unit square (two triangles, materials "red" and "tex") as object
 * "square", then a one-triangle object "tri" with material "red". */
static trowel_status build_sample(trowel_mesh *m)
{
    static const float pos[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0.5f}};
    static const float uv[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 0.25f}};
    static const float up[3] = {0, 0, 2}; /* normalised to (0,0,1) */
    static const float red[3] = {1, 0, 0}, white[3] = {1, 1, 1};
    uint32_t mred, mtex, v[4];
    trowel_status s = trowel_mesh_add_material(m, "red", red, 1.0f, NULL, &mred);
    if (s == TROWEL_OK)
        s = trowel_mesh_add_material(m, "tex", white, 0.5f, "Maps\\Rock One.bmp", &mtex);
    if (s == TROWEL_OK)
        s = trowel_mesh_begin_object(m, "square");
    for (int i = 0; i < 4 && s == TROWEL_OK; i++)
        s = trowel_mesh_add_vertex(m, pos[i], up, uv[i], &v[i]);
    if (s == TROWEL_OK)
        s = trowel_mesh_add_triangle(m, v[0], v[1], v[2], mred);
    if (s == TROWEL_OK)
        s = trowel_mesh_add_triangle(m, v[0], v[2], v[3], mtex);
    if (s == TROWEL_OK)
        s = trowel_mesh_begin_object(m, "tri");
    static const float tpos[3][3] = {{2, 0, 0}, {3, 0, -1}, {2, 1, 0}};
    for (int i = 0; i < 3 && s == TROWEL_OK; i++)
        s = trowel_mesh_add_vertex(m, tpos[i], up, uv[i], &v[i]);
    if (s == TROWEL_OK)
        s = trowel_mesh_add_triangle(m, v[0], v[1], v[2], mred);
    return s;
}

static char *sink_text(trowel_sink *sink)
{
    size_t n;
    const uint8_t *d = trowel_sink_data(sink, &n);
    char *t = malloc(n + 1);
    memcpy(t, d, n);
    t[n] = 0;
    return t;
}

static void test_obj_and_mtl_text(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_mesh m;
    trowel_mesh_init(&m, ctx, TROWEL_MESH_NORMALS | TROWEL_MESH_UVS);
    REQUIRE(build_sample(&m) == TROWEL_OK);
    trowel_sink *obj, *mtl;
    REQUIRE(trowel_sink_open_memory(ctx, &obj) == TROWEL_OK);
    REQUIRE(trowel_sink_open_memory(ctx, &mtl) == TROWEL_OK);
    CHECK(trowel_mesh_write_obj(&m, obj, "sample.mtl") == TROWEL_OK);
    CHECK(trowel_mesh_write_mtl(&m, mtl) == TROWEL_OK);
    char *o = sink_text(obj), *t = sink_text(mtl);
    CHECK_STR(o, "# written by trowel\n"
                 "mtllib sample.mtl\n"
                 "o square\n"
                 "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0.5\n"
                 "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 0.25\n"
                 "vn 0 0 1\nvn 0 0 1\nvn 0 0 1\nvn 0 0 1\n"
                 "usemtl red\nf 1/1/1 2/2/2 3/3/3\n"
                 "usemtl tex\nf 1/1/1 3/3/3 4/4/4\n"
                 "o tri\n"
                 "v 2 0 0\nv 3 0 -1\nv 2 1 0\n"
                 "vt 0 0\nvt 1 0\nvt 1 1\n"
                 "vn 0 0 1\nvn 0 0 1\nvn 0 0 1\n"
                 "usemtl red\nf 5/5/5 6/6/6 7/7/7\n");
    CHECK_STR(t, "# written by trowel\n"
                 "\nnewmtl red\nKd 1 0 0\nd 1\n"
                 "\nnewmtl tex\nKd 1 1 1\nd 0.5\nmap_Kd Maps/Rock_One.bmp\n");
    free(o);
    free(t);
    trowel_sink_discard(obj);
    trowel_sink_discard(mtl);
    trowel_mesh_free(&m);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

static void test_obj_without_normals_or_uvs(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_mesh m;
    trowel_mesh_init(&m, ctx, 0);
    static const float p[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    static const float grey[3] = {0.5f, 0.5f, 0.5f};
    uint32_t v[3], mat;
    REQUIRE(trowel_mesh_add_material(&m, "grey", grey, 1, NULL, &mat) == TROWEL_OK);
    for (int i = 0; i < 3; i++)
        REQUIRE(trowel_mesh_add_vertex(&m, p[i], NULL, NULL, &v[i]) == TROWEL_OK);
    REQUIRE(trowel_mesh_add_triangle(&m, v[0], v[1], v[2], mat) == TROWEL_OK);
    trowel_sink *obj;
    REQUIRE(trowel_sink_open_memory(ctx, &obj) == TROWEL_OK);
    CHECK(trowel_mesh_write_obj(&m, obj, NULL) == TROWEL_OK);
    char *o = sink_text(obj);
    CHECK_STR(o, "# written by trowel\no mesh\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    free(o);
    trowel_sink_discard(obj);
    trowel_mesh_free(&m);
    trowel_ctx_free(ctx);
}

static bytes write_glb(trowel_ctx *ctx, const trowel_mesh *m)
{
    bytes b = {NULL, 0};
    trowel_sink *sink;
    if (trowel_sink_open_memory(ctx, &sink) != TROWEL_OK)
        return b;
    if (trowel_mesh_write_glb(m, sink) == TROWEL_OK) {
        const uint8_t *d = trowel_sink_data(sink, &b.size);
        b.data = malloc(b.size + 1);
        memcpy(b.data, d, b.size);
    }
    trowel_sink_discard(sink);
    return b;
}

static float bin_float(const uint8_t *bin, size_t off)
{
    uint32_t u = le32(bin + off);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static int json_int_at(json_object *arr, size_t i, const char *key)
{
    json_object *v = NULL;
    json_object_object_get_ex(json_object_array_get_idx(arr, i), key, &v);
    return v ? json_object_get_int(v) : -1;
}

static void test_glb_layout(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_mesh m;
    trowel_mesh_init(&m, ctx, TROWEL_MESH_NORMALS | TROWEL_MESH_UVS);
    REQUIRE(build_sample(&m) == TROWEL_OK);
    bytes g = write_glb(ctx, &m);
    REQUIRE(g.data && g.size >= 28);
    CHECK_EQ_U64(le32(g.data), 0x46546C67u); /* "glTF" */
    CHECK_EQ_U64(le32(g.data + 4), 2);
    CHECK_EQ_U64(le32(g.data + 8), g.size);
    uint32_t json_len = le32(g.data + 12);
    CHECK_EQ_U64(json_len % 4, 0);
    CHECK(memcmp(g.data + 16, "JSON", 4) == 0);
    REQUIRE(20 + (size_t)json_len + 8 <= g.size);
    const uint8_t *binh = g.data + 20 + json_len;
    uint32_t bin_len = le32(binh);
    CHECK(memcmp(binh + 4, "BIN\0", 4) == 0);
    /* Square: 4 vertices x 32 bytes + 2 index runs of 12; tri: 3 x 32 + 12. */
    CHECK_EQ_U64(bin_len, 4 * 32 + 12 + 12 + 3 * 32 + 12);
    CHECK_EQ_U64(g.size, 20 + (size_t)json_len + 8 + bin_len);
    const uint8_t *bin = binh + 8;

    char *text = malloc(json_len + 1);
    memcpy(text, g.data + 20, json_len);
    text[json_len] = 0;
    json_object *root = json_tokener_parse(text);
    free(text);
    REQUIRE(root);
    json_object *acc, *meshes, *views, *mats;
    REQUIRE(json_object_object_get_ex(root, "accessors", &acc));
    REQUIRE(json_object_object_get_ex(root, "meshes", &meshes));
    REQUIRE(json_object_object_get_ex(root, "bufferViews", &views));
    REQUIRE(json_object_object_get_ex(root, "materials", &mats));
    /* square: POSITION, NORMAL, TEXCOORD_0, indices(red), indices(tex); tri: 4 more. */
    CHECK_EQ_U64(json_object_array_length(acc), 9);
    CHECK_EQ_U64(json_object_array_length(views), 9);
    CHECK_EQ_U64(json_object_array_length(meshes), 2);
    CHECK_EQ_U64(json_object_array_length(mats), 2);
    CHECK_EQ_U64(json_int_at(acc, 0, "count"), 4);
    CHECK_EQ_U64(json_int_at(acc, 3, "count"), 3);
    CHECK_EQ_U64(json_int_at(acc, 4, "count"), 3);
    CHECK_EQ_U64(json_int_at(acc, 3, "componentType"), 5125);
    json_object *min = NULL, *max = NULL;
    json_object_object_get_ex(json_object_array_get_idx(acc, 5), "min", &min);
    json_object_object_get_ex(json_object_array_get_idx(acc, 5), "max", &max);
    REQUIRE(min && max);
    CHECK(json_object_get_double(json_object_array_get_idx(min, 0)) == 2.0);
    CHECK(json_object_get_double(json_object_array_get_idx(min, 2)) == -1.0);
    CHECK(json_object_get_double(json_object_array_get_idx(max, 0)) == 3.0);
    CHECK(json_object_get_double(json_object_array_get_idx(max, 1)) == 1.0);
    /* Every bufferView starts 4-aligned, in order, inside the buffer. */
    for (size_t i = 0; i < json_object_array_length(views); i++) {
        CHECK_EQ_U64(json_int_at(views, i, "byteOffset") % 4, 0);
        CHECK(json_int_at(views, i, "byteOffset") + json_int_at(views, i, "byteLength") <=
              (int)bin_len);
    }
    /* Square positions first; vertex 3 is (0, 1, 0.5). */
    CHECK(bin_float(bin, 36) == 0.0f && bin_float(bin, 40) == 1.0f &&
          bin_float(bin, 44) == 0.5f);
    /* Texture v flipped: vertex 3's (0, 0.25) is stored as (0, 0.75). */
    int uv_view = json_int_at(views, 2, "byteOffset");
    CHECK(bin_float(bin, (size_t)uv_view + 24) == 0.0f);
    CHECK(bin_float(bin, (size_t)uv_view + 28) == 0.75f);
    /* The tri's indices are rebased on its own vertices: 0 1 2. */
    int tri_idx = json_int_at(views, 8, "byteOffset");
    CHECK_EQ_U64(le32(bin + tri_idx), 0);
    CHECK_EQ_U64(le32(bin + tri_idx + 4), 1);
    CHECK_EQ_U64(le32(bin + tri_idx + 8), 2);
    /* The square's second primitive (material tex) is 0 2 3. */
    int sq_tex = json_int_at(views, 4, "byteOffset");
    CHECK_EQ_U64(le32(bin + sq_tex + 4), 2);
    CHECK_EQ_U64(le32(bin + sq_tex + 8), 3);
    json_object_put(root);
    free(g.data);
    trowel_mesh_free(&m);
    trowel_ctx_free(ctx);
}

static void test_refusals(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_mesh m;
    trowel_mesh_init(&m, ctx, TROWEL_MESH_NORMALS);
    static const float p[3] = {0, 0, 0}, n[3] = {0, 0, 0}, white[3] = {1, 1, 1};
    float bad[3] = {0, 0, 0};
    bad[1] = 1.0f / (float)(ctx->mem_in_use); /* +inf without a constant the compiler folds */
    uint32_t v, mat;
    CHECK(trowel_mesh_add_triangle(&m, 0, 0, 0, 0) == TROWEL_ERR_CORRUPT);
    CHECK(trowel_mesh_add_vertex(&m, bad, n, NULL, &v) == TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "vertex 0 has a coordinate that is not a finite number");
    REQUIRE(trowel_mesh_add_vertex(&m, p, n, NULL, &v) == TROWEL_OK);
    CHECK(m.normals[2] == 1.0f); /* a zero normal becomes +Z */
    CHECK(trowel_mesh_add_triangle(&m, v, v, v, 0) == TROWEL_ERR_CORRUPT); /* no material */
    REQUIRE(trowel_mesh_add_material(&m, "m", white, 1, NULL, &mat) == TROWEL_OK);
    REQUIRE(trowel_mesh_begin_object(&m, "second") == TROWEL_OK);
    CHECK(trowel_mesh_add_triangle(&m, v, v, v, mat) == TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "triangle 0 of object 'second' uses vertex 0, outside its 0");
    trowel_mesh_free(&m);
    /* The memory limit holds for the arrays. */
    trowel_ctx_set_mem_limit(ctx, 4096);
    trowel_mesh_init(&m, ctx, TROWEL_MESH_NORMALS | TROWEL_MESH_UVS);
    trowel_status s = TROWEL_OK;
    for (int i = 0; i < 1000 && s == TROWEL_OK; i++)
        s = trowel_mesh_add_vertex(&m, p, n, p, &v);
    CHECK(s == TROWEL_ERR_LIMIT);
    trowel_mesh_free(&m);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

/* Runs tests/tools/gltf_validate.js: 0 no errors, 1 errors, 2 not installed. */
static int validate_glb(const char *path, char *report, size_t cap)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "node '%s/tests/tools/gltf_validate.js' '%s' 2>&1",
             TROWEL_SOURCE_DIR, path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 2;
    size_t n = fread(report, 1, cap - 1, p);
    report[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static void test_glb_passes_khronos_validator(void)
{
    if (system("node --version >/dev/null 2>&1") != 0)
        SKIP("node is not installed (scripts/deps.sh test)");
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_mesh m;
    trowel_mesh_init(&m, ctx, TROWEL_MESH_NORMALS | TROWEL_MESH_UVS);
    REQUIRE(build_sample(&m) == TROWEL_OK);
    bytes g = write_glb(ctx, &m);
    trowel_mesh_free(&m);
    /* A mesh without normals and UVs, and an empty one, are valid too. */
    trowel_mesh_init(&m, ctx, 0);
    static const float p[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, w[3] = {1, 1, 1};
    uint32_t v[3], mat;
    trowel_mesh_add_material(&m, "m", w, 1, NULL, &mat);
    for (int i = 0; i < 3; i++)
        trowel_mesh_add_vertex(&m, p[i], NULL, NULL, &v[i]);
    trowel_mesh_add_triangle(&m, v[0], v[1], v[2], mat);
    bytes plain = write_glb(ctx, &m);
    trowel_mesh_free(&m);
    trowel_mesh_init(&m, ctx, 0);
    bytes empty = write_glb(ctx, &m);
    trowel_mesh_free(&m);
    trowel_ctx_free(ctx);
    REQUIRE(g.data && plain.data && empty.data);
    char *dir = make_temp_dir();
    REQUIRE(dir);
    const bytes *files[3] = {&g, &plain, &empty};
    for (int i = 0; i < 3; i++) {
        char path[256], report[4096];
        snprintf(path, sizeof path, "%s/m%d.glb", dir, i);
        FILE *f = fopen(path, "wb");
        REQUIRE(f);
        fwrite(files[i]->data, 1, files[i]->size, f);
        fclose(f);
        int rc = validate_glb(path, report, sizeof report);
        if (rc == 2) {
            test_skip("gltf-validator is not installed (scripts/deps.sh test)");
            break;
        }
        if (rc != 0)
            fprintf(stderr, "  validator on mesh %d: %s", i, report);
        CHECK_EQ_U64(rc, 0);
        CHECK(strncmp(report, "errors 0 ", 9) == 0);
    }
    remove_tree(dir);
    free(g.data);
    free(plain.data);
    free(empty.data);
}

TEST_MAIN(TEST(test_obj_and_mtl_text), TEST(test_obj_without_normals_or_uvs),
          TEST(test_glb_layout), TEST(test_refusals), TEST(test_glb_passes_khronos_validator))
