/*
 * The JSON form of an ASM model (asm.h): the "asm" object that `convert
 * --to json` adds and `create -t asm --manifest` reads back. Every stored
 * field is there, so JSON -> ASM gives the file's bytes back:
 *   {"version": 5|11|12,
 *    "allocators"/"primitive_types"/"container_types": [{"name", "index"}]
 *                                                         (v11/v12),
 *    "containers": [{"name", "type", "flags", "base_offset",
 *                    "compression" (v12), "stub_parent", "aux_data" (hex;
 *                    both v11/v12), "read_size", "sizes": [..],
 *                    "primitives": [{"name", "type", "allocator", "flags",
 *                                    "split_ext", "cpu_size", "gpu_size",
 *                                    "alloc_group" (v11/v12)}]}]}
 * Reading checks every field's presence, type and range and names the one
 * that is wrong.
 */
#include "asm.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

static const char *const remap_keys[VOL_ASM_REMAPS] = {"allocators", "primitive_types",
                                                       "container_types"};

static bool v11(const vol_asm *m) { return m->version >= 11; }

static void add_u(json_object *o, const char *key, uint64_t v)
{
    json_object_object_add(o, key, json_object_new_uint64(v));
}

static json_object *primitive_json(const vol_asm *m, const vol_asm_primitive *p)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(p->name));
    add_u(o, "type", p->type);
    add_u(o, "allocator", p->allocator);
    add_u(o, "flags", p->flags);
    add_u(o, "split_ext", p->split_ext);
    add_u(o, "cpu_size", p->cpu_size);
    add_u(o, "gpu_size", p->gpu_size);
    if (v11(m))
        add_u(o, "alloc_group", p->alloc_group);
    return o;
}

/* aux as hex digits, in memory counted against the context's limit (aux
 * may be as large as the file). */
static trowel_status add_hex(trowel_ctx *ctx, json_object *o, const char *key,
                             const uint8_t *data, uint32_t n)
{
    static const char digits[] = "0123456789abcdef";
    char *hex = trowel_mem_alloc(ctx, (size_t)n * 2 + 1);
    if (!hex)
        return ctx->last_error.status;
    for (uint32_t i = 0; i < n; i++) {
        hex[2 * i] = digits[data[i] >> 4];
        hex[2 * i + 1] = digits[data[i] & 15];
    }
    hex[(size_t)n * 2] = '\0';
    json_object_object_add(o, key, json_object_new_string(hex));
    trowel_mem_free(ctx, hex);
    return TROWEL_OK;
}

static trowel_status container_json(trowel_ctx *ctx, const vol_asm *m,
                                    const vol_asm_container *c, json_object *o)
{
    json_object_object_add(o, "name", json_object_new_string(c->name));
    add_u(o, "type", c->type);
    add_u(o, "flags", c->flags);
    add_u(o, "base_offset", c->base_offset);
    if (m->version >= 12)
        add_u(o, "compression", c->compression);
    if (v11(m)) {
        json_object_object_add(o, "stub_parent", json_object_new_string(c->stub_parent));
        trowel_status s = add_hex(ctx, o, "aux_data", c->aux, c->aux_size);
        if (s != TROWEL_OK)
            return s;
    }
    add_u(o, "read_size", c->read_size);
    json_object *sizes = json_object_new_array();
    for (uint32_t i = 0; i < c->size_count; i++)
        json_object_array_add(sizes, json_object_new_uint64(c->sizes[i]));
    json_object_object_add(o, "sizes", sizes);
    json_object *prims = json_object_new_array();
    for (uint16_t i = 0; i < c->prim_count; i++)
        json_object_array_add(prims, primitive_json(m, &c->prims[i]));
    json_object_object_add(o, "primitives", prims);
    return TROWEL_OK;
}

trowel_status vol_asm_to_json(trowel_ctx *ctx, const vol_asm *m, json_object **out)
{
    json_object *o = json_object_new_object();
    add_u(o, "version", m->version);
    for (int i = 0; v11(m) && i < VOL_ASM_REMAPS; i++) {
        json_object *arr = json_object_new_array();
        for (uint32_t k = 0; k < m->remap_count[i]; k++) {
            json_object *r = json_object_new_object();
            json_object_object_add(r, "name", json_object_new_string(m->remaps[i][k].name));
            add_u(r, "index", m->remaps[i][k].index);
            json_object_array_add(arr, r);
        }
        json_object_object_add(o, remap_keys[i], arr);
    }
    json_object *arr = json_object_new_array();
    json_object_object_add(o, "containers", arr);
    trowel_status s = TROWEL_OK;
    for (uint16_t i = 0; i < m->container_count && s == TROWEL_OK; i++) {
        json_object *c = json_object_new_object();
        json_object_array_add(arr, c);
        s = container_json(ctx, m, &m->containers[i], c);
    }
    if (s != TROWEL_OK) {
        json_object_put(o);
        o = NULL;
    }
    *out = o;
    return s;
}

/* ------------------------------------------------------------- from JSON */

/* Where a field is, for messages: "containers[2].primitives[0]". */
typedef struct json_in {
    trowel_ctx *ctx;
    char where[96];
} json_in;

static trowel_status bad(json_in *j, const char *key, const char *what)
{
    return trowel_fail(j->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET, "asm JSON: %s%s%s %s",
                       j->where, *j->where ? "." : "", key, what);
}

static trowel_status get_uint(json_in *j, json_object *o, const char *key, uint64_t max,
                              uint64_t *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return bad(j, key, "is missing or not a whole number");
    int64_t i = json_object_get_int64(v);
    uint64_t u = json_object_get_uint64(v);
    if (i < 0 || u > max) {
        char msg[64];
        snprintf(msg, sizeof msg, "must be 0 to %llu", (unsigned long long)max);
        return bad(j, key, msg);
    }
    *out = u;
    return TROWEL_OK;
}

#define GET(j, o, key, max, dst)                                                                 \
    do {                                                                                         \
        uint64_t v_;                                                                             \
        trowel_status s_ = get_uint(j, o, key, max, &v_);                                        \
        if (s_ != TROWEL_OK)                                                                     \
            return s_;                                                                           \
        dst = v_; /* in range: checked against max */                                            \
    } while (0)

static trowel_status get_string(json_in *j, json_object *o, const char *key, char **out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return bad(j, key, "is missing or not a string");
    const char *s = json_object_get_string(v);
    size_t n = strlen(s);
    if (n > UINT16_MAX)
        return bad(j, key, "is longer than 65535 bytes");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7F)
            return bad(j, key, "holds a character that is not printable ASCII");
    *out = trowel_mem_strdup(j->ctx, s);
    return *out ? TROWEL_OK : j->ctx->last_error.status;
}

static trowel_status get_array(json_in *j, json_object *o, const char *key, size_t max,
                               json_object **arr, size_t *n)
{
    if (!json_object_object_get_ex(o, key, arr) || !json_object_is_type(*arr, json_type_array))
        return bad(j, key, "is missing or not an array");
    *n = json_object_array_length(*arr);
    if (*n > max)
        return bad(j, key, "has too many items");
    return TROWEL_OK;
}

static trowel_status get_hex(json_in *j, json_object *o, const char *key, vol_asm_container *c)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return bad(j, key, "is missing or not a string");
    const char *s = json_object_get_string(v);
    size_t n = strlen(s);
    if (n % 2 || n / 2 > INT32_MAX)
        return bad(j, key, "must be an even number of hex digits");
    c->aux = trowel_mem_alloc(j->ctx, n / 2 ? n / 2 : 1);
    if (!c->aux)
        return j->ctx->last_error.status;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned byte;
        char pair[3] = {s[2 * i], s[2 * i + 1], 0};
        if (!strchr("0123456789abcdefABCDEF", pair[0]) || !strchr("0123456789abcdefABCDEF", pair[1]) ||
            sscanf(pair, "%2x", &byte) != 1)
            return bad(j, key, "must be hex digits");
        c->aux[i] = (uint8_t)byte;
    }
    c->aux_size = (uint32_t)(n / 2);
    return TROWEL_OK;
}

static trowel_status primitive_from(json_in *j, const vol_asm *m, json_object *o,
                                    vol_asm_primitive *p)
{
    trowel_status s = get_string(j, o, "name", &p->name);
    if (s != TROWEL_OK)
        return s;
    GET(j, o, "type", UINT8_MAX, p->type);
    GET(j, o, "allocator", UINT8_MAX, p->allocator);
    GET(j, o, "flags", UINT8_MAX, p->flags);
    GET(j, o, "split_ext", UINT8_MAX, p->split_ext);
    GET(j, o, "cpu_size", UINT32_MAX, p->cpu_size);
    GET(j, o, "gpu_size", UINT32_MAX, p->gpu_size);
    if (v11(m))
        GET(j, o, "alloc_group", UINT8_MAX, p->alloc_group);
    return TROWEL_OK;
}

static trowel_status container_fields(json_in *j, const vol_asm *m, json_object *o,
                                      vol_asm_container *c)
{
    trowel_status s = get_string(j, o, "name", &c->name);
    if (s != TROWEL_OK)
        return s;
    GET(j, o, "type", UINT8_MAX, c->type);
    GET(j, o, "flags", UINT16_MAX, c->flags);
    GET(j, o, "base_offset", UINT32_MAX, c->base_offset);
    if (m->version >= 12)
        GET(j, o, "compression", UINT8_MAX, c->compression);
    if (v11(m) && ((s = get_string(j, o, "stub_parent", &c->stub_parent)) ||
                   (s = get_hex(j, o, "aux_data", c))))
        return s;
    GET(j, o, "read_size", UINT32_MAX, c->read_size);
    return TROWEL_OK;
}

static trowel_status container_from(json_in *j, const vol_asm *m, json_object *o,
                                    vol_asm_container *c)
{
    trowel_status s = container_fields(j, m, o, c);
    json_object *arr;
    size_t n;
    if (s != TROWEL_OK || (s = get_array(j, o, "sizes", UINT32_MAX / 8, &arr, &n)) != TROWEL_OK)
        return s;
    c->sizes = trowel_mem_calloc(j->ctx, n ? n : 1, sizeof *c->sizes);
    if (!c->sizes)
        return j->ctx->last_error.status;
    c->size_count = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        json_object *v = json_object_array_get_idx(arr, i);
        int64_t iv = json_object_get_int64(v);
        if (!json_object_is_type(v, json_type_int) || iv < 0 || json_object_get_uint64(v) > UINT32_MAX)
            return bad(j, "sizes", "must hold whole numbers of 0 to 4294967295");
        c->sizes[i] = (uint32_t)iv;
    }
    size_t max_prims = v11(m) ? INT16_MAX : UINT16_MAX;
    if ((s = get_array(j, o, "primitives", max_prims, &arr, &n)) != TROWEL_OK)
        return s;
    c->prims = trowel_mem_calloc(j->ctx, n ? n : 1, sizeof *c->prims);
    if (!c->prims)
        return j->ctx->last_error.status;
    size_t len = strlen(j->where);
    for (size_t i = 0; i < n && s == TROWEL_OK; i++) {
        snprintf(j->where + len, sizeof j->where - len, ".primitives[%zu]", i);
        c->prim_count = (uint16_t)(i + 1);
        s = primitive_from(j, m, json_object_array_get_idx(arr, i), &c->prims[i]);
    }
    j->where[len] = '\0';
    return s;
}

static trowel_status remaps_from(json_in *j, vol_asm *m, json_object *o, int which)
{
    json_object *arr;
    size_t n;
    trowel_status s = get_array(j, o, remap_keys[which], INT32_MAX, &arr, &n);
    if (s != TROWEL_OK)
        return s;
    m->remaps[which] = trowel_mem_calloc(j->ctx, n ? n : 1, sizeof(vol_asm_remap));
    if (!m->remaps[which])
        return j->ctx->last_error.status;
    for (size_t i = 0; i < n && s == TROWEL_OK; i++) {
        json_object *r = json_object_array_get_idx(arr, i);
        snprintf(j->where, sizeof j->where, "%s[%zu]", remap_keys[which], i);
        m->remap_count[which] = (uint32_t)(i + 1);
        uint64_t index = 0;
        s = get_string(j, r, "name", &m->remaps[which][i].name);
        if (s == TROWEL_OK)
            s = get_uint(j, r, "index", UINT8_MAX, &index);
        m->remaps[which][i].index = (uint8_t)index;
    }
    j->where[0] = '\0';
    return s;
}

static trowel_status model_from(json_in *j, json_object *o, vol_asm *m)
{
    if (!json_object_is_type(o, json_type_object))
        return bad(j, "asm", "is not an object");
    GET(j, o, "version", UINT16_MAX, m->version);
    if (m->version != 5 && m->version != 11 && m->version != 12)
        return bad(j, "version", "must be 5, 11 or 12");
    trowel_status s = TROWEL_OK;
    for (int i = 0; v11(m) && i < VOL_ASM_REMAPS && s == TROWEL_OK; i++)
        s = remaps_from(j, m, o, i);
    json_object *arr;
    size_t n;
    if (s != TROWEL_OK || (s = get_array(j, o, "containers", UINT16_MAX, &arr, &n)) != TROWEL_OK)
        return s;
    m->containers = trowel_mem_calloc(j->ctx, n ? n : 1, sizeof *m->containers);
    if (!m->containers)
        return j->ctx->last_error.status;
    for (size_t i = 0; i < n && s == TROWEL_OK; i++) {
        snprintf(j->where, sizeof j->where, "containers[%zu]", i);
        m->container_count = (uint16_t)(i + 1);
        s = container_from(j, m, json_object_array_get_idx(arr, i), &m->containers[i]);
    }
    return s;
}

trowel_status vol_asm_from_json(trowel_ctx *ctx, json_object *o, vol_asm **out)
{
    *out = NULL;
    vol_asm *m = trowel_mem_calloc(ctx, 1, sizeof *m);
    if (!m)
        return ctx->last_error.status;
    json_in j = {ctx, ""};
    trowel_status s = model_from(&j, o, m);
    if (s != TROWEL_OK) {
        vol_asm_free(ctx, m);
        return s;
    }
    *out = m;
    return TROWEL_OK;
}
