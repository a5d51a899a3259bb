/*
 * The ASM JSON form (src/format/volition/asm_json.c) under the context's
 * memory limit: a container's aux data becomes hex in memory counted
 * against the limit, so a v11 file with 1 MiB of aux data converts within
 * a limit that has room for its 2 MiB of digits and fails with
 * TROWEL_ERR_LIMIT (nothing leaked, no half document) within one that has
 * not. The digits are exact.
 */
#include "codec_data.h"
#include "test.h"

#include "core/module.h"
#include "format/volition/asm.h"

#include <json-c/json.h>

#define AUX_SIZE ((size_t)1 << 20)

static void put_u16(uint8_t **p, uint16_t v)
{
    (*p)[0] = (uint8_t)v;
    (*p)[1] = (uint8_t)(v >> 8);
    *p += 2;
}

static void put_u32(uint8_t **p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        (*p)[i] = (uint8_t)(v >> (8 * i));
    *p += 4;
}

static void put_str(uint8_t **p, const char *s)
{
    size_t n = strlen(s);
    put_u16(p, (uint16_t)n);
    memcpy(*p, s, n);
    *p += n;
}

/* A v11 ASM: no remaps, one container of no primitives with AUX_SIZE
 * bytes of aux data (byte i = i * 7). Its length in *n. */
static uint8_t *asm_with_big_aux(size_t *n)
{
    uint8_t *file = malloc(AUX_SIZE + 64), *p = file;
    put_u32(&p, VOL_ASM_MAGIC);
    put_u16(&p, 11);
    put_u16(&p, 1);
    for (int i = 0; i < 3; i++)
        put_u32(&p, 0); /* remap tables */
    put_str(&p, "big");
    *p++ = 6;         /* type */
    put_u16(&p, 0);   /* flags */
    put_u16(&p, 0);   /* primitives */
    put_u32(&p, 0);   /* base offset */
    put_str(&p, "");  /* stub parent */
    put_u32(&p, (uint32_t)AUX_SIZE);
    for (size_t i = 0; i < AUX_SIZE; i++)
        *p++ = (uint8_t)(i * 7);
    put_u32(&p, 0); /* read size */
    *n = (size_t)(p - file);
    return file;
}

static void test_aux_hex_is_counted_against_the_limit(void)
{
    size_t n;
    uint8_t *file = asm_with_big_aux(&n);
    trowel_ctx *ctx = new_ctx();
    trowel_input *in;
    REQUIRE(trowel_input_open_memory(ctx, file, n, "big.asm_pc", &in) == TROWEL_OK);
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    vol_asm *m = NULL;
    REQUIRE(vol_asm_read(ctx, &r, &m) == TROWEL_OK);
    REQUIRE(m->container_count == 1 && m->containers[0].aux_size == AUX_SIZE);
    uint64_t in_use = trowel_ctx_mem_in_use(ctx);

    /* Room for the model, not for 2 MiB of digits. */
    trowel_ctx_set_mem_limit(ctx, in_use + AUX_SIZE);
    json_object *o = (json_object *)1;
    CHECK_EQ_U64(vol_asm_to_json(ctx, m, &o), TROWEL_ERR_LIMIT);
    CHECK(o == NULL);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), in_use);

    /* Room for them. */
    trowel_ctx_set_mem_limit(ctx, in_use + 2 * AUX_SIZE + 4096);
    REQUIRE(vol_asm_to_json(ctx, m, &o) == TROWEL_OK);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), in_use);
    json_object *containers, *aux;
    REQUIRE(json_object_object_get_ex(o, "containers", &containers));
    REQUIRE(json_object_object_get_ex(json_object_array_get_idx(containers, 0), "aux_data", &aux));
    const char *hex = json_object_get_string(aux);
    CHECK_EQ_U64(strlen(hex), 2 * AUX_SIZE);
    bool same = true;
    for (size_t i = 0; i < AUX_SIZE && same; i++) {
        char want[3];
        snprintf(want, sizeof want, "%02x", (uint8_t)(i * 7));
        same = hex[2 * i] == want[0] && hex[2 * i + 1] == want[1];
    }
    CHECK(same);

    /* And the JSON gives the file back. */
    vol_asm *back = NULL;
    trowel_ctx_set_mem_limit(ctx, TROWEL_DEFAULT_MEM_LIMIT);
    REQUIRE(vol_asm_from_json(ctx, o, &back) == TROWEL_OK);
    trowel_sink *sink;
    REQUIRE(trowel_sink_open_memory(ctx, &sink) == TROWEL_OK);
    CHECK_EQ_U64(vol_asm_write(ctx, back, sink), TROWEL_OK);
    size_t len;
    const uint8_t *bytes = trowel_sink_data(sink, &len);
    CHECK(len == n && !memcmp(bytes, file, n));
    trowel_sink_discard(sink);
    vol_asm_free(ctx, back);
    json_object_put(o);
    vol_asm_free(ctx, m);
    trowel_input_close(in);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    trowel_ctx_free(ctx);
    free(file);
}

TEST_MAIN(TEST(test_aux_hex_is_counted_against_the_limit))
