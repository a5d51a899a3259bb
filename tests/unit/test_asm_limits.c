/*
 * The ASM JSON form (src/format/volition/asm_json.c) under the context's
 * memory limit: a container's aux data (1 MiB, v11) streams out as 2 MiB
 * of exact hex digits without any memory beyond the model; reading them
 * back counts the string and the aux bytes, so a limit without room for
 * them fails with TROWEL_ERR_LIMIT (nothing leaked, no model) and one with
 * room gives the file's bytes back.
 */
#include "codec_data.h"
#include "test.h"

#include "core/json_write.h"
#include "core/module.h"
#include "format/volition/asm.h"

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

/* The model written as JSON by the streaming writer: the whole text in
 * *len bytes (malloc'ed). */
static char *model_json(trowel_ctx *ctx, const vol_asm *m, trowel_status *st, size_t *len)
{
    trowel_sink *sink = NULL;
    *st = trowel_sink_open_memory(ctx, &sink);
    if (*st != TROWEL_OK)
        return NULL;
    trowel_json_writer *w = malloc(sizeof *w);
    trowel_jw_init(w, sink);
    trowel_jw_begin_object(w);
    trowel_jw_key(w, "format");
    trowel_jw_string(w, "asm");
    trowel_jw_key(w, "asm");
    vol_asm_write_json(m, w);
    trowel_jw_end_object(w);
    *st = trowel_jw_finish(w, ctx);
    free(w);
    const uint8_t *d = trowel_sink_data(sink, len);
    char *text = *st == TROWEL_OK ? strndup((const char *)d, *len) : NULL;
    trowel_sink_discard(sink);
    return text;
}

static void test_aux_hex_streams_and_reads_back_within_the_limit(void)
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

    /* The digits stream out: to a null sink, no memory beyond the model. */
    trowel_sink *null_sink;
    trowel_ctx_set_mem_limit(ctx, TROWEL_DEFAULT_MEM_LIMIT);
    REQUIRE(trowel_sink_open_null(ctx, &null_sink) == TROWEL_OK);
    uint64_t with_sink = trowel_ctx_mem_in_use(ctx);
    trowel_ctx_set_mem_limit(ctx, with_sink);
    trowel_json_writer *w = malloc(sizeof *w);
    trowel_jw_init(w, null_sink);
    vol_asm_write_json(m, w);
    CHECK_EQ_U64(trowel_jw_finish(w, ctx), TROWEL_OK);
    CHECK_EQ_U64(trowel_sink_written(null_sink), 2 * AUX_SIZE + 338); /* + keys, fields, indents */
    free(w);
    trowel_sink_discard(null_sink);
    trowel_ctx_set_mem_limit(ctx, TROWEL_DEFAULT_MEM_LIMIT);

    trowel_status st;
    size_t len;
    char *text = model_json(ctx, m, &st, &len);
    REQUIRE(st == TROWEL_OK && text);
    const char *hex = strstr(text, "\"aux_data\": \"");
    REQUIRE(hex);
    hex += strlen("\"aux_data\": \"");
    bool same = strlen(hex) > 2 * AUX_SIZE && hex[2 * AUX_SIZE] == '"';
    for (size_t i = 0; i < AUX_SIZE && same; i++) {
        char want[3];
        snprintf(want, sizeof want, "%02x", (uint8_t)(i * 7));
        same = hex[2 * i] == want[0] && hex[2 * i + 1] == want[1];
    }
    CHECK(same);

    /* Reading it back: the 2 MiB string and the 1 MiB of aux data are
     * counted, so a limit without room for them fails cleanly... */
    vol_asm *back = (vol_asm *)1;
    trowel_ctx_set_mem_limit(ctx, in_use + AUX_SIZE);
    CHECK_EQ_U64(vol_asm_read_json(ctx, text, len, &back), TROWEL_ERR_LIMIT);
    CHECK(back == NULL);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), in_use);

    /* ...and one with room gives the file back. */
    trowel_ctx_set_mem_limit(ctx, in_use + 8 * AUX_SIZE);
    REQUIRE(vol_asm_read_json(ctx, text, len, &back) == TROWEL_OK);
    trowel_ctx_set_mem_limit(ctx, TROWEL_DEFAULT_MEM_LIMIT);
    trowel_sink *sink;
    REQUIRE(trowel_sink_open_memory(ctx, &sink) == TROWEL_OK);
    CHECK_EQ_U64(vol_asm_write(ctx, back, sink), TROWEL_OK);
    const uint8_t *bytes = trowel_sink_data(sink, &len);
    CHECK(len == n && !memcmp(bytes, file, n));
    trowel_sink_discard(sink);
    vol_asm_free(ctx, back);
    free(text);
    vol_asm_free(ctx, m);
    trowel_input_close(in);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    trowel_ctx_free(ctx);
    free(file);
}

TEST_MAIN(TEST(test_aux_hex_streams_and_reads_back_within_the_limit))
