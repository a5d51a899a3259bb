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
 * Both ways stream: the writer (core/json_write.h) prints as it walks the
 * model, in json-c's pretty layout, and the reader pulls tokens from the
 * text (core/json_pull.h) straight into the model, every allocation on
 * the context; no document tree is built. Keys may come in any order;
 * unknown keys are skipped; a key given twice is refused. Reading checks
 * every field's presence, type and range and names the one that is wrong.
 */
#include "asm.h"
#include "core/json_pull.h"
#include "core/json_write.h"

#include <stdio.h>
#include <string.h>

static const char *const remap_keys[VOL_ASM_REMAPS] = {"allocators", "primitive_types",
                                                       "container_types"};

static bool v11(const vol_asm *m) { return m->version >= 11; }

/* --------------------------------------------------------------- to JSON */

/* Members with literal keys, each written at once (a large ASM's JSON has
 * a million of them). */
#define put_u(w, key, v) TROWEL_JW_MEMBER_UINT(w, key, v)
#define put_s(w, key, v) (TROWEL_JW_KEY(w, key), trowel_jw_string(w, v))

static void primitive_json(trowel_json_writer *w, const vol_asm *m, const vol_asm_primitive *p)
{
    trowel_jw_begin_object(w);
    put_s(w, "name", p->name);
    put_u(w, "type", p->type);
    put_u(w, "allocator", p->allocator);
    put_u(w, "flags", p->flags);
    put_u(w, "split_ext", p->split_ext);
    put_u(w, "cpu_size", p->cpu_size);
    put_u(w, "gpu_size", p->gpu_size);
    if (v11(m))
        put_u(w, "alloc_group", p->alloc_group);
    trowel_jw_end_object(w);
}

static void container_json(trowel_json_writer *w, const vol_asm *m, const vol_asm_container *c)
{
    trowel_jw_begin_object(w);
    put_s(w, "name", c->name);
    put_u(w, "type", c->type);
    put_u(w, "flags", c->flags);
    put_u(w, "base_offset", c->base_offset);
    if (m->version >= 12)
        put_u(w, "compression", c->compression);
    if (v11(m)) {
        put_s(w, "stub_parent", c->stub_parent);
        TROWEL_JW_KEY(w, "aux_data");
        trowel_jw_hex_string(w, c->aux, c->aux_size);
    }
    put_u(w, "read_size", c->read_size);
    TROWEL_JW_KEY(w, "sizes");
    trowel_jw_begin_array(w);
    for (uint32_t i = 0; i < c->size_count; i++)
        trowel_jw_uint(w, c->sizes[i]);
    trowel_jw_end_array(w);
    TROWEL_JW_KEY(w, "primitives");
    trowel_jw_begin_array(w);
    for (uint16_t i = 0; i < c->prim_count; i++)
        primitive_json(w, m, &c->prims[i]);
    trowel_jw_end_array(w);
    trowel_jw_end_object(w);
}

void vol_asm_write_json(const vol_asm *m, trowel_json_writer *w)
{
    trowel_jw_begin_object(w);
    put_u(w, "version", m->version);
    for (int i = 0; v11(m) && i < VOL_ASM_REMAPS; i++) {
        trowel_jw_key(w, remap_keys[i]);
        trowel_jw_begin_array(w);
        for (uint32_t k = 0; k < m->remap_count[i]; k++) {
            trowel_jw_begin_object(w);
            put_s(w, "name", m->remaps[i][k].name);
            put_u(w, "index", m->remaps[i][k].index);
            trowel_jw_end_object(w);
        }
        trowel_jw_end_array(w);
    }
    TROWEL_JW_KEY(w, "containers");
    trowel_jw_begin_array(w);
    for (uint16_t i = 0; i < m->container_count && w->s == TROWEL_OK; i++)
        container_json(w, m, &m->containers[i]);
    trowel_jw_end_array(w);
    trowel_jw_end_object(w);
}

/* ------------------------------------------------------------- from JSON */

/* The reader's state; where says where a field is, for messages:
 * "containers[2].primitives[0]". */
typedef struct json_in {
    trowel_ctx *ctx;
    trowel_json_pull p;
    trowel_jp_token tok; /* the value just pulled */
    vol_asm *m;
    bool version_known;
    char where[96];
    long prim; /* the primitive being read (after where), or -1: the
                * message is made only on an error */
} json_in;

static trowel_status bad(json_in *j, const char *key, const char *what)
{
    char prim[48] = "";
    if (j->prim >= 0)
        snprintf(prim, sizeof prim, ".primitives[%ld]", j->prim);
    return trowel_fail(j->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET, "asm JSON: %s%s%s%s %s",
                       j->where, prim, *j->where ? "." : "", key, what);
}

static trowel_status pulled(json_in *j)
{
    j->tok = trowel_jp_next(&j->p);
    return j->tok == TROWEL_JP_ERROR ? trowel_jp_status(&j->p) : TROWEL_OK;
}

/* The value just pulled as a whole number of 0 to max. */
static trowel_status get_uint(json_in *j, const char *key, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    int kind = j->tok == TROWEL_JP_NUMBER ? trowel_jp_uint(&j->p, &v) : TROWEL_JP_FRACTION;
    if (kind == TROWEL_JP_FRACTION)
        return bad(j, key, "is missing or not a whole number");
    if (kind == TROWEL_JP_NEGATIVE || v > max) {
        char msg[64];
        snprintf(msg, sizeof msg, "must be 0 to %llu", (unsigned long long)max);
        return bad(j, key, msg);
    }
    *out = v;
    return TROWEL_OK;
}

#define GET(j, key, max, dst)                                                                    \
    do {                                                                                         \
        uint64_t v_ = 0; /* GCC -O3 cannot see get_uint sets it */                               \
        trowel_status s_ = get_uint(j, key, max, &v_);                                           \
        if (s_ != TROWEL_OK)                                                                     \
            return s_;                                                                           \
        dst = v_; /* in range: checked against max */                                            \
    } while (0)

/* The value just pulled as a name: printable ASCII, at most 65535 bytes. */
static trowel_status get_string(json_in *j, const char *key, char **out)
{
    if (j->tok != TROWEL_JP_STRING)
        return bad(j, key, "is missing or not a string");
    const char *s = j->p.str;
    size_t n = j->p.str_len;
    if (n > UINT16_MAX)
        return bad(j, key, "is longer than 65535 bytes");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7F)
            return bad(j, key, "holds a character that is not printable ASCII");
    return trowel_mem_dup_bytes(j->ctx, s, n + 1, out);
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static trowel_status get_hex(json_in *j, const char *key, vol_asm_container *c)
{
    if (j->tok != TROWEL_JP_STRING)
        return bad(j, key, "is missing or not a string");
    const char *s = j->p.str;
    size_t n = j->p.str_len;
    if (n % 2 || n / 2 > INT32_MAX)
        return bad(j, key, "must be an even number of hex digits");
    trowel_status st = trowel_mem_new(j->ctx, n / 2 ? n / 2 : 1, &c->aux);
    if (st != TROWEL_OK)
        return st;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return bad(j, key, "must be hex digits");
        c->aux[i] = (uint8_t)(hi << 4 | lo);
    }
    c->aux_size = (uint32_t)(n / 2);
    return TROWEL_OK;
}

/* The index of key in keys (n of them), or -1. */
static int key_index(const char *const *keys, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (keys[i][0] == key[0] && strcmp(keys[i], key) == 0)
            return i;
    return -1;
}

/* A key already seen in this object. */
static trowel_status twice(json_in *j, const char *key) { return bad(j, key, "is given twice"); }

/* Grows an array of items (item bytes each) to hold one more than *count,
 * zeroing the new room; max is the most items it may hold. */
static trowel_status grow(json_in *j, void **items, size_t *cap, size_t count, size_t item,
                          size_t max, const char *key)
{
    if (count < *cap)
        return TROWEL_OK;
    if (count >= max)
        return bad(j, key, "has too many items");
    size_t want = *cap ? *cap * 2 : 16;
    if (want > max)
        want = max;
    trowel_status s = trowel_mem_resize_array(j->ctx, items, want, item);
    if (s != TROWEL_OK)
        return s;
    memset((char *)*items + *cap * item, 0, (want - *cap) * item);
    *cap = want;
    return TROWEL_OK;
}

static trowel_status expect_array(json_in *j, const char *key)
{
    return j->tok == TROWEL_JP_ARRAY ? TROWEL_OK : bad(j, key, "is missing or not an array");
}

enum { P_NAME, P_TYPE, P_ALLOCATOR, P_FLAGS, P_SPLIT_EXT, P_CPU, P_GPU, P_GROUP, P_KEYS };
static const char *const prim_keys[P_KEYS] = {"name",      "type",     "allocator",
                                              "flags",     "split_ext", "cpu_size",
                                              "gpu_size",  "alloc_group"};

static trowel_status primitive_field(json_in *j, int k, vol_asm_primitive *p)
{
    const char *key = prim_keys[k];
    switch (k) {
    case P_NAME: return get_string(j, key, &p->name);
    case P_TYPE: GET(j, key, UINT8_MAX, p->type); break;
    case P_ALLOCATOR: GET(j, key, UINT8_MAX, p->allocator); break;
    case P_FLAGS: GET(j, key, UINT8_MAX, p->flags); break;
    case P_SPLIT_EXT: GET(j, key, UINT8_MAX, p->split_ext); break;
    case P_CPU: GET(j, key, UINT32_MAX, p->cpu_size); break;
    case P_GPU: GET(j, key, UINT32_MAX, p->gpu_size); break;
    default: GET(j, key, UINT8_MAX, p->alloc_group); break;
    }
    return TROWEL_OK;
}

/* The first of the keys (n of them, those of seen set) that is missing:
 * named with the message of its kind. */
static trowel_status missing(json_in *j, const char *const *keys, int n, unsigned seen,
                             unsigned needed, unsigned strings, unsigned arrays)
{
    for (int i = 0; i < n; i++)
        if ((needed >> i & 1) && !(seen >> i & 1))
            return bad(j, keys[i], strings >> i & 1  ? "is missing or not a string"
                                   : arrays >> i & 1 ? "is missing or not an array"
                                                     : "is missing or not a whole number");
    return TROWEL_OK;
}

static trowel_status primitive_from(json_in *j, vol_asm_primitive *p)
{
    if (j->tok != TROWEL_JP_OBJECT)
        return bad(j, "name", "is missing or not a string"); /* as an object without it */
    unsigned seen = 0;
    trowel_status s = TROWEL_OK;
    while (s == TROWEL_OK && (j->tok = trowel_jp_next(&j->p)) == TROWEL_JP_KEY) {
        int k = key_index(prim_keys, P_KEYS, j->p.str);
        if (k >= 0 && (seen >> k & 1))
            return twice(j, prim_keys[k]);
        if ((s = pulled(j)) != TROWEL_OK)
            return s;
        if (k < 0 || (k == P_GROUP && !v11(j->m))) {
            s = trowel_jp_skip(&j->p, j->tok);
            continue;
        }
        seen |= 1u << k;
        s = primitive_field(j, k, p);
    }
    if (s != TROWEL_OK || j->tok == TROWEL_JP_ERROR)
        return s != TROWEL_OK ? s : trowel_jp_status(&j->p);
    unsigned needed = v11(j->m) ? (1u << P_KEYS) - 1 : (1u << P_GROUP) - 1;
    return missing(j, prim_keys, P_KEYS, seen, needed, 1u << P_NAME, 0);
}

static trowel_status sizes_from(json_in *j, vol_asm_container *c)
{
    trowel_status s = expect_array(j, "sizes");
    size_t cap = 0;
    while (s == TROWEL_OK && (s = pulled(j)) == TROWEL_OK && j->tok != TROWEL_JP_ARRAY_END) {
        uint64_t v = 0;
        if (j->tok != TROWEL_JP_NUMBER || trowel_jp_uint(&j->p, &v) != TROWEL_JP_WHOLE ||
            v > UINT32_MAX)
            return bad(j, "sizes", "must hold whole numbers of 0 to 4294967295");
        void *items = c->sizes;
        if ((s = grow(j, &items, &cap, c->size_count, sizeof *c->sizes, UINT32_MAX / 8, "sizes")))
            return s;
        c->sizes = items;
        c->sizes[c->size_count++] = (uint32_t)v;
    }
    return s;
}

static trowel_status primitives_from(json_in *j, vol_asm_container *c)
{
    trowel_status s = expect_array(j, "primitives");
    size_t cap = 0, max = v11(j->m) ? INT16_MAX : UINT16_MAX;
    while (s == TROWEL_OK && (s = pulled(j)) == TROWEL_OK && j->tok != TROWEL_JP_ARRAY_END) {
        void *items = c->prims;
        if ((s = grow(j, &items, &cap, c->prim_count, sizeof *c->prims, max, "primitives")))
            break;
        c->prims = items;
        j->prim = c->prim_count++;
        s = primitive_from(j, &c->prims[c->prim_count - 1]);
        j->prim = -1;
    }
    return s;
}

enum { C_NAME, C_TYPE, C_FLAGS, C_BASE, C_COMPRESSION, C_STUB, C_AUX, C_READ, C_SIZES, C_PRIMS,
       C_KEYS };
static const char *const container_keys[C_KEYS] = {
    "name",     "type",      "flags", "base_offset", "compression", "stub_parent",
    "aux_data", "read_size", "sizes", "primitives"};

static trowel_status container_field(json_in *j, int k, vol_asm_container *c)
{
    const char *key = container_keys[k];
    switch (k) {
    case C_NAME: return get_string(j, key, &c->name);
    case C_TYPE: GET(j, key, UINT8_MAX, c->type); break;
    case C_FLAGS: GET(j, key, UINT16_MAX, c->flags); break;
    case C_BASE: GET(j, key, UINT32_MAX, c->base_offset); break;
    case C_COMPRESSION: GET(j, key, UINT8_MAX, c->compression); break;
    case C_STUB: return get_string(j, key, &c->stub_parent);
    case C_AUX: return get_hex(j, key, c);
    case C_READ: GET(j, key, UINT32_MAX, c->read_size); break;
    case C_SIZES: return sizes_from(j, c);
    default: return primitives_from(j, c);
    }
    return TROWEL_OK;
}

/* Which container keys a version has. */
static bool container_has(const vol_asm *m, int k)
{
    if (k == C_COMPRESSION)
        return m->version >= 12;
    return k == C_STUB || k == C_AUX ? v11(m) : true;
}

static trowel_status container_from(json_in *j, vol_asm_container *c)
{
    if (j->tok != TROWEL_JP_OBJECT)
        return bad(j, "name", "is missing or not a string");
    unsigned seen = 0, needed = 0;
    trowel_status s = TROWEL_OK;
    while (s == TROWEL_OK && (j->tok = trowel_jp_next(&j->p)) == TROWEL_JP_KEY) {
        int k = key_index(container_keys, C_KEYS, j->p.str);
        if (k >= 0 && (seen >> k & 1))
            return twice(j, container_keys[k]);
        if ((s = pulled(j)) != TROWEL_OK)
            return s;
        if (k < 0 || !container_has(j->m, k)) {
            s = trowel_jp_skip(&j->p, j->tok);
            continue;
        }
        seen |= 1u << k;
        s = container_field(j, k, c);
    }
    if (s != TROWEL_OK || j->tok == TROWEL_JP_ERROR)
        return s != TROWEL_OK ? s : trowel_jp_status(&j->p);
    for (int k = 0; k < C_KEYS; k++)
        needed |= container_has(j->m, k) ? 1u << k : 0;
    return missing(j, container_keys, C_KEYS, seen, needed,
                   1u << C_NAME | 1u << C_STUB | 1u << C_AUX, 1u << C_SIZES | 1u << C_PRIMS);
}

static trowel_status containers_from(json_in *j)
{
    vol_asm *m = j->m;
    trowel_status s = expect_array(j, "containers");
    size_t cap = 0;
    while (s == TROWEL_OK && (s = pulled(j)) == TROWEL_OK && j->tok != TROWEL_JP_ARRAY_END) {
        void *items = m->containers;
        if ((s = grow(j, &items, &cap, m->container_count, sizeof *m->containers, UINT16_MAX,
                      "containers")))
            break;
        m->containers = items;
        snprintf(j->where, sizeof j->where, "containers[%u]", (unsigned)m->container_count);
        m->container_count++;
        s = container_from(j, &m->containers[m->container_count - 1]);
    }
    if (s == TROWEL_OK)
        j->where[0] = '\0';
    return s;
}

static trowel_status remap_from(json_in *j, vol_asm_remap *r)
{
    if (j->tok != TROWEL_JP_OBJECT)
        return bad(j, "name", "is missing or not a string");
    static const char *const keys[] = {"name", "index"};
    unsigned seen = 0;
    trowel_status s = TROWEL_OK;
    while (s == TROWEL_OK && (j->tok = trowel_jp_next(&j->p)) == TROWEL_JP_KEY) {
        int k = key_index(keys, 2, j->p.str);
        if (k >= 0 && (seen >> k & 1))
            return twice(j, keys[k]);
        if ((s = pulled(j)) != TROWEL_OK)
            return s;
        if (k < 0) {
            s = trowel_jp_skip(&j->p, j->tok);
            continue;
        }
        seen |= 1u << k;
        if (k == 0)
            s = get_string(j, "name", &r->name);
        else
            GET(j, "index", UINT8_MAX, r->index);
    }
    if (s != TROWEL_OK || j->tok == TROWEL_JP_ERROR)
        return s != TROWEL_OK ? s : trowel_jp_status(&j->p);
    return missing(j, keys, 2, seen, 3, 1, 0);
}

static trowel_status remaps_from(json_in *j, int which)
{
    vol_asm *m = j->m;
    trowel_status s = expect_array(j, remap_keys[which]);
    size_t cap = 0;
    while (s == TROWEL_OK && (s = pulled(j)) == TROWEL_OK && j->tok != TROWEL_JP_ARRAY_END) {
        void *items = m->remaps[which];
        if ((s = grow(j, &items, &cap, m->remap_count[which], sizeof(vol_asm_remap), INT32_MAX,
                      remap_keys[which])))
            break;
        m->remaps[which] = items;
        snprintf(j->where, sizeof j->where, "%s[%u]", remap_keys[which],
                 (unsigned)m->remap_count[which]);
        m->remap_count[which]++;
        s = remap_from(j, &m->remaps[which][m->remap_count[which] - 1]);
    }
    if (s == TROWEL_OK)
        j->where[0] = '\0';
    return s;
}

/* The version, when a key that depends on it comes first: read ahead on a
 * copy of the reader (its own string buffer) to the object's "version". */
static trowel_status version_ahead(json_in *j)
{
    json_in ahead = *j;
    ahead.p.str = NULL;
    ahead.p.str_cap = ahead.p.str_len = 0;
    trowel_status s = pulled(&ahead);
    if (s == TROWEL_OK)
        s = trowel_jp_skip(&ahead.p, ahead.tok);
    bool found = false;
    while (s == TROWEL_OK && !found && (ahead.tok = trowel_jp_next(&ahead.p)) == TROWEL_JP_KEY) {
        found = strcmp(ahead.p.str, "version") == 0;
        if ((s = pulled(&ahead)) == TROWEL_OK && !found)
            s = trowel_jp_skip(&ahead.p, ahead.tok);
    }
    if (s == TROWEL_OK && ahead.tok == TROWEL_JP_ERROR)
        s = trowel_jp_status(&ahead.p);
    if (s == TROWEL_OK && !found)
        s = bad(j, "version", "is missing or not a whole number");
    uint64_t version = 0;
    if (s == TROWEL_OK && (s = get_uint(&ahead, "version", UINT16_MAX, &version)) == TROWEL_OK)
        j->m->version = (uint16_t)version;
    trowel_jp_free(&ahead.p);
    return s;
}

enum { M_VERSION, M_ALLOCATORS, M_PRIMITIVE_TYPES, M_CONTAINER_TYPES, M_CONTAINERS, M_KEYS };
static const char *const model_keys[M_KEYS] = {"version", "allocators", "primitive_types",
                                               "container_types", "containers"};

static trowel_status check_version(json_in *j)
{
    j->version_known = true;
    if (j->m->version != 5 && j->m->version != 11 && j->m->version != 12)
        return bad(j, "version", "must be 5, 11 or 12");
    return TROWEL_OK;
}

static trowel_status model_field(json_in *j, int k)
{
    trowel_status s = TROWEL_OK;
    if (k == M_VERSION) {
        if (!j->version_known) {
            GET(j, "version", UINT16_MAX, j->m->version);
            return check_version(j);
        }
        return trowel_jp_skip(&j->p, j->tok); /* read ahead already */
    }
    if (!v11(j->m) && k != M_CONTAINERS)
        return trowel_jp_skip(&j->p, j->tok);
    if (k == M_CONTAINERS)
        s = containers_from(j);
    else
        s = remaps_from(j, k - M_ALLOCATORS);
    return s;
}

static trowel_status model_from(json_in *j)
{
    if (j->tok != TROWEL_JP_OBJECT)
        return bad(j, "asm", "is not an object");
    unsigned seen = 0;
    trowel_status s = TROWEL_OK;
    while (s == TROWEL_OK && (j->tok = trowel_jp_next(&j->p)) == TROWEL_JP_KEY) {
        int k = key_index(model_keys, M_KEYS, j->p.str);
        if (k >= 0 && (seen >> k & 1))
            return twice(j, model_keys[k]);
        if (k > M_VERSION && !j->version_known &&
            ((s = version_ahead(j)) != TROWEL_OK || (s = check_version(j)) != TROWEL_OK))
            return s;
        if ((s = pulled(j)) != TROWEL_OK)
            return s;
        if (k < 0) {
            s = trowel_jp_skip(&j->p, j->tok);
            continue;
        }
        seen |= 1u << k;
        s = model_field(j, k);
    }
    if (s != TROWEL_OK || j->tok == TROWEL_JP_ERROR)
        return s != TROWEL_OK ? s : trowel_jp_status(&j->p);
    unsigned needed = 1u << M_VERSION | 1u << M_CONTAINERS;
    if (v11(j->m))
        needed |= 1u << M_ALLOCATORS | 1u << M_PRIMITIVE_TYPES | 1u << M_CONTAINER_TYPES;
    return missing(j, model_keys, M_KEYS, seen, needed, 0, ~1u);
}

/* The document: an object whose "asm" member is read, the rest checked
 * as JSON and skipped. */
static trowel_status document_from(json_in *j, bool *found)
{
    trowel_status s = pulled(j);
    if (s == TROWEL_OK && j->tok != TROWEL_JP_OBJECT)
        return trowel_fail(j->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                           "asm JSON: the document is not an object");
    while (s == TROWEL_OK && (j->tok = trowel_jp_next(&j->p)) == TROWEL_JP_KEY) {
        bool is_asm = strcmp(j->p.str, "asm") == 0;
        if (is_asm && *found)
            return twice(j, "asm");
        if ((s = pulled(j)) != TROWEL_OK)
            return s;
        if (is_asm) {
            *found = true;
            s = model_from(j);
        } else {
            s = trowel_jp_skip(&j->p, j->tok);
        }
    }
    if (s == TROWEL_OK && j->tok == TROWEL_JP_ERROR)
        s = trowel_jp_status(&j->p);
    if (s == TROWEL_OK && trowel_jp_next(&j->p) != TROWEL_JP_END)
        s = trowel_jp_status(&j->p); /* only an error follows the document's value */
    return s;
}

trowel_status vol_asm_read_json(trowel_ctx *ctx, const char *text, size_t len, vol_asm **out)
{
    *out = NULL;
    vol_asm *m;
    trowel_status s = trowel_mem_new_zeroed(ctx, 1, sizeof *m, &m);
    if (s != TROWEL_OK)
        return s;
    json_in j = {.ctx = ctx, .m = m, .prim = -1};
    trowel_jp_init(&j.p, ctx, "asm JSON", text, len);
    bool found = false;
    s = document_from(&j, &found);
    trowel_jp_free(&j.p);
    if (s == TROWEL_OK && !found)
        s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                        "an ASM is built from its JSON: give --manifest X.json made by "
                        "'trowel convert --to json X.asm_pc'");
    if (s != TROWEL_OK) {
        vol_asm_free(ctx, m);
        return s;
    }
    *out = m;
    return TROWEL_OK;
}
