/*
 * The Delphine packer's decoder writing straight into a memory sink that
 * has room reserved for the whole output (what trowel_archive_read_entry_data,
 * and so trowel mount's cache, gives it): the same bytes, in the sink's
 * own buffer, within a memory limit that leaves no room for a second copy
 * of the output (a sink without the reservation is refused under the same
 * limit); a damaged stream leaves the sink empty.
 */
#include "codec/bytekiller.h"
#include "core/core.h"
#include "core/sink.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

enum { TEXT_LEN = 300000, SLACK = 64 * 1024 };

/* Text-like bytes that pack well but not trivially. */
static uint8_t *make_text(size_t n)
{
    static const char *const words[] = {"cinematique ", "delphine ", "packer ", "future ",
                                        "wars ",        "stream ",   "backward "};
    uint8_t *t = malloc(n);
    uint32_t x = 12345;
    for (size_t i = 0; t && i < n;) {
        x = x * 1103515245u + 12345u;
        const char *w = words[(x >> 16) % 7];
        for (size_t k = 0; w[k] && i < n; k++)
            t[i++] = (uint8_t)w[k];
    }
    return t;
}

typedef struct packed {
    trowel_ctx *ctx;
    uint8_t *text, *stream;
    size_t stream_len;
} packed;

static bool pack(packed *p)
{
    memset(p, 0, sizeof *p);
    p->ctx = trowel_ctx_new();
    p->text = make_text(TEXT_LEN);
    return p->ctx && p->text &&
           trowel_bytekiller_encode(p->ctx, p->text, TEXT_LEN, &p->stream, &p->stream_len) ==
               TROWEL_OK;
}

static void unpack(packed *p)
{
    trowel_mem_free(p->ctx, p->stream);
    free(p->text);
    trowel_ctx_free(p->ctx);
}

/* Decodes p's stream into sink (reserved for the whole output or not)
 * under a limit of what is in use now plus the packed stream and SLACK. */
static trowel_status decode_tight(packed *p, trowel_sink *sink)
{
    trowel_input *in;
    trowel_status s = trowel_input_open_memory(p->ctx, p->stream, p->stream_len, "stream", &in);
    if (s != TROWEL_OK)
        return s;
    trowel_ctx_set_mem_limit(p->ctx, trowel_ctx_mem_in_use(p->ctx) + p->stream_len + SLACK);
    s = trowel_codec_decompress(p->ctx, trowel_codec_find("bytekiller"), in, TEXT_LEN, sink);
    trowel_ctx_set_mem_limit(p->ctx, 0);
    trowel_input_close(in);
    return s;
}

static void test_bytekiller_decodes_into_a_reserved_memory_sink(void)
{
    packed p;
    REQUIRE(pack(&p));
    REQUIRE(p.stream_len < TEXT_LEN / 2);
    trowel_sink *sink;
    REQUIRE(trowel_sink_open_memory(p.ctx, &sink) == TROWEL_OK);
    REQUIRE(trowel_sink_reserve(sink, TEXT_LEN) == TROWEL_OK);
    size_t len;
    const uint8_t *buffer = trowel_sink_data(sink, &len);
    CHECK_EQ_U64(len, 0);
    CHECK(decode_tight(&p, sink) == TROWEL_OK);
    const uint8_t *data = trowel_sink_data(sink, &len);
    CHECK_EQ_U64(len, TEXT_LEN);
    CHECK_EQ_U64(trowel_sink_written(sink), TEXT_LEN);
    CHECK(data == buffer); /* the reserved buffer itself, not a copy */
    CHECK(data && memcmp(data, p.text, TEXT_LEN) == 0);
    trowel_sink_discard(sink);
    unpack(&p);
}

static void test_bytekiller_unreserved_sink_needs_a_second_buffer(void)
{
    packed p;
    REQUIRE(pack(&p));
    trowel_sink *sink;
    REQUIRE(trowel_sink_open_memory(p.ctx, &sink) == TROWEL_OK);
    /* The same room as above, but nothing reserved: the output has to be
     * decoded into a buffer of its own, which the limit refuses. */
    CHECK(decode_tight(&p, sink) == TROWEL_ERR_LIMIT);
    trowel_sink_discard(sink);
    unpack(&p);
}

static void test_bytekiller_damaged_stream_leaves_the_reserved_sink_empty(void)
{
    packed p;
    REQUIRE(pack(&p));
    p.stream[p.stream_len / 2] ^= 0x10; /* the checksum no longer matches */
    trowel_sink *sink;
    REQUIRE(trowel_sink_open_memory(p.ctx, &sink) == TROWEL_OK);
    REQUIRE(trowel_sink_reserve(sink, TEXT_LEN) == TROWEL_OK);
    CHECK(decode_tight(&p, sink) == TROWEL_ERR_CORRUPT);
    size_t len;
    trowel_sink_data(sink, &len);
    CHECK_EQ_U64(len, 0);
    CHECK_EQ_U64(trowel_sink_written(sink), 0);
    trowel_sink_discard(sink);
    unpack(&p);
}

TEST_MAIN(TEST(test_bytekiller_decodes_into_a_reserved_memory_sink),
          TEST(test_bytekiller_unreserved_sink_needs_a_second_buffer),
          TEST(test_bytekiller_damaged_stream_leaves_the_reserved_sink_empty))
