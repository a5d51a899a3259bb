/*
 * BVCD: a compiled Source engine choreography scene (version 4), standing
 * alone. The engine only keeps BVCDs inside scenes.image, where their i16
 * string indices point into the image's pool; alone, a BVCD needs its
 * strings beside it. trowel's standalone layout is srctools' test layout:
 * the pool as a JSON list of strings, immediately followed by the BVCD
 * (`["some loop", "0.000000", ...]bvcd\x04...`). A bare BVCD (as
 * `extract --raw` from an image gives) is recognised but cannot be decoded
 * without its image: open says so.
 * Decoding and the layout: src/format/valve/choreo_bvcd.c; facts from
 * Source SDK 2013 and ../shared/formats/valve-vsif-bvcd.md.
 */
#include "choreo_format.h"

#include <json-c/json.h>
#include <string.h>

typedef struct bvcd_priv {
    choreo_scene *scene;
} bvcd_priv;

static int bvcd_bid(trowel_reader *r)
{
    uint64_t size = trowel_reader_size(r);
    size_t n = size < 65536 ? (size_t)size : 65536;
    const uint8_t *p;
    if (n < 5 || trowel_reader_peek(r, n, &p) != TROWEL_OK)
        return TROWEL_BID_NONE;
    if (memcmp(p, "bvcd\x04", 5) == 0)
        return TROWEL_BID_MAGIC;
    if (p[0] != '[')
        return TROWEL_BID_NONE;
    for (size_t i = 1; i + 5 <= n; i++)
        if (memcmp(p + i, "]bvcd", 5) == 0)
            return TROWEL_BID_STRONG;
    return TROWEL_BID_NONE;
}

/* The JSON pool at the start of data: *used is its length. */
static trowel_status read_pool(trowel_ctx *ctx, const uint8_t *data, size_t size, choreo_pool *pool,
                               size_t *used)
{
    if (size > INT32_MAX)
        return trowel_fail(ctx, TROWEL_ERR_LIMIT, 0, "string table too large");
    json_tokener *tok = json_tokener_new();
    if (!tok)
        return trowel_fail(ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "out of memory");
    json_object *list = json_tokener_parse_ex(tok, (const char *)data, (int)size);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    trowel_status st = TROWEL_OK;
    if (!list || !json_object_is_type(list, json_type_array)) {
        st = trowel_fail(ctx, TROWEL_ERR_CORRUPT, 0, "the string table is not a JSON list");
    } else {
        size_t n = json_object_array_length(list);
        for (size_t i = 0; i < n && st == TROWEL_OK; i++) {
            json_object *item = json_object_array_get_idx(list, i);
            if (!json_object_is_type(item, json_type_string))
                st = trowel_fail(ctx, TROWEL_ERR_CORRUPT, 0, "string table item %zu is not a string", i);
            else
                st = choreo_pool_append(pool, json_object_get_string(item));
        }
    }
    json_object_put(list);
    *used = end;
    return st;
}

static trowel_status bvcd_open(trowel_archive *a, trowel_reader *r)
{
    trowel_ctx *ctx = a->ctx;
    bvcd_priv *p;
    trowel_status st = trowel_mem_new_zeroed(ctx, 1, sizeof *p, &p);
    if (st != TROWEL_OK)
        return st;
    a->priv = p;
    uint8_t head[5];
    if ((st = trowel_read_bytes(r, head, sizeof head)) != TROWEL_OK)
        return st;
    if (memcmp(head, "bvcd", 4) == 0)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, 0,
                           "a bare BVCD: its strings live in the scenes.image it came from (decode it "
                           "through the image, or give it a JSON string table in front)");
    if ((st = trowel_reader_seek(r, 0)) != TROWEL_OK)
        return st;
    uint8_t *data = NULL;
    size_t size = 0;
    if ((st = trowel_reader_load(r, &data, &size)) != TROWEL_OK)
        return st;
    choreo_pool *pool;
    size_t used = 0;
    if ((st = choreo_pool_new(ctx, &pool)) == TROWEL_OK)
        st = read_pool(ctx, data, size, pool, &used);
    trowel_mem_free(ctx, data);
    trowel_reader bin;
    if (st == TROWEL_OK && (st = trowel_reader_sub(r, used, trowel_reader_size(r) - used, &bin)) == TROWEL_OK)
        st = choreo_read_bvcd(ctx, &bin, pool, &p->scene);
    size_t nstrings = choreo_pool_count(pool);
    choreo_pool_free(pool);
    if (st == TROWEL_OK)
        st = choreo_fill_info(a, p->scene, "bvcd");
    if (st == TROWEL_OK)
        st = trowel_props_add_uint(a->info, "strings", nstrings);
    return st;
}

static trowel_status bvcd_convert(trowel_archive *a, const char *target, const char *const *opts,
                                  size_t nopts, trowel_sink *out)
{
    bvcd_priv *p = a->priv;
    return choreo_convert(a, p->scene, choreo_scene_source_crc(p->scene), target, opts, nopts, out);
}

static void bvcd_close(trowel_archive *a)
{
    bvcd_priv *p = a->priv;
    if (!p)
        return;
    choreo_scene_free(a->ctx, p->scene);
    trowel_mem_free(a->ctx, p);
    a->priv = NULL;
}

const trowel_format trowel_format_bvcd = {
    .id = "bvcd",
    .family = "valve",
    .description = "Source engine compiled choreography scene (BVCD v4, with a JSON string table)",
    .extensions = ".bvcd",
    .caps = 0,
    .create_options = "",
    .convert_targets = "vcd bvcd json-full",
    .bid = bvcd_bid,
    .open = bvcd_open,
    .convert = bvcd_convert,
    .close = bvcd_close,
};
