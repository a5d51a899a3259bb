/*
 * The packfile versions beyond v3 (src/format/volition/vpp.c and
 * vpp_write.c): the v10/v17 header checksum is the one the Saints Row
 * (2022) corpus headers carry; an SR2 PS3 archive (big-endian v4, files in
 * chunks of raw deflate) reads back; vpp_write, the internal entry point the
 * ASM updater calls, writes from readers as well as from files, v4's
 * extension table is de-duplicated, and a damaged v10 checksum is reported
 * by verify.
 */
#include "codec_data.h"
#include "files.h"
#include "test.h"

#include "core/module.h"
#include "format/volition/vpp.h"

#define ZLIB_CONST
#include <zlib.h>

#define SR2022 TROWEL_CORPUS_DIR "/volition/sr2022/"

static void count_problem(void *user, const trowel_error *e)
{
    (void)e;
    (*(int *)user)++;
}

static void test_header_crc_matches_the_corpus(void)
{
    static const char *const names[] = {SR2022 "test_header.vpp_pc", SR2022 "test_header.str2_pc"};
    for (size_t k = 0; k < 2; k++) {
        FILE *f = fopen(names[k], "rb");
        if (!f)
            SKIP("no SR2022 corpus headers");
        uint8_t h[0x78];
        REQUIRE(fread(h, 1, sizeof h, f) == sizeof h);
        fclose(f);
        uint32_t stored = (uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 |
                          (uint32_t)h[11] << 24;
        CHECK_EQ_U64(vpp_header_crc(h + 12, sizeof h - 12), stored);
    }
}

static void be32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/* Raw deflate of n bytes into out (cap bytes); the length. */
static size_t raw_deflate(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (z_const Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    size_t len = cap - z.avail_out;
    deflateEnd(&z);
    return len;
}

static void test_sr2_ps3_chunked_deflate_reads_back(void)
{
    buf big = make_binary(150000), small = make_binary(100);
    const buf *files[] = {&big, &small};
    static const char exts[] = "cpeg_ps3\0"; /* both share one extension */
    size_t cap = 1 << 20;
    uint8_t *a = calloc(1, cap);
    memcpy(a, "\x51\x89\x0a\xce", 4); /* big-endian magic */
    be32(a + 4, 4);
    be32(a + 0x14C, 1); /* compressed */
    be32(a + 0x154, 2);
    be32(a + 0x15C, 56);
    be32(a + 0x160, 13);          /* "terrain\0tiny\0" */
    be32(a + 0x164, sizeof exts - 1);
    memcpy(a + 0x1000, "terrain\0tiny\0", 13);
    memcpy(a + 0x1800, exts, sizeof exts - 1);
    size_t at = 0x2000, data_start = at;
    for (size_t i = 0; i < 2; i++) {
        uint8_t *e = a + 0x800 + 28 * i;
        be32(e, i ? 8 : 0);
        be32(e + 4, 0);
        be32(e + 16, (uint32_t)files[i]->len);
        size_t begin = at;
        for (size_t done = 0; done < files[i]->len; done += 65536) {
            size_t piece = files[i]->len - done < 65536 ? files[i]->len - done : 65536;
            size_t c = raw_deflate(files[i]->data + done, piece, a + at + 8, cap - at - 8);
            a[at] = (uint8_t)(c >> 8);
            a[at + 1] = (uint8_t)c;
            be32(a + at + 4, (uint32_t)piece);
            at += 8 + c;
        }
        be32(e + 20, (uint32_t)(at - begin));
        if (i == 0)
            at = data_start + (at - data_start + 2047) / 2048 * 2048;
    }
    be32(a + 0x158, (uint32_t)at);
    trowel_ctx *ctx = new_ctx();
    trowel_input *in;
    trowel_archive *ar = NULL;
    REQUIRE(trowel_input_open_memory(ctx, a, at, "t.vpp_ps3", &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &ar) == TROWEL_OK);
    REQUIRE(trowel_archive_entry_count(ar) == 2);
    CHECK_STR(trowel_archive_entry(ar, 0)->name, "terrain.cpeg_ps3");
    CHECK_STR(trowel_archive_entry(ar, 1)->name, "tiny.cpeg_ps3");
    for (size_t i = 0; i < 2; i++) {
        trowel_sink *s;
        REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
        CHECK_EQ_U64(trowel_archive_read_entry(ar, i, s), TROWEL_OK);
        size_t n;
        const uint8_t *d = trowel_sink_data(s, &n);
        CHECK(n == files[i]->len && memcmp(d, files[i]->data, n) == 0);
        trowel_sink_discard(s);
    }
    trowel_archive_close(ar);
    trowel_input_close(in);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
    free(a);
    buf_free(&big);
    buf_free(&small);
}

/* vpp_write from readers over memory (as the ASM updater calls it) into a
 * memory buffer (malloc'd, *n bytes). */
static uint8_t *write_from_memory(const vpp_layout *L, const buf *files, const char *const *names,
                                  size_t count, size_t *n)
{
    trowel_ctx *ctx = new_ctx();
    trowel_input *ins[8];
    vpp_item items[8];
    memset(items, 0, sizeof items);
    for (size_t i = 0; i < count; i++) {
        if (trowel_input_open_memory(ctx, files[i].data, files[i].len, names[i], &ins[i]) !=
            TROWEL_OK)
            exit(2);
        trowel_reader_init(&items[i].data, ctx, ins[i]);
        items[i].name = names[i];
        items[i].size = files[i].len;
    }
    trowel_sink *s;
    if (trowel_sink_open_memory(ctx, &s) != TROWEL_OK)
        exit(2);
    trowel_status st = vpp_write(ctx, L, items, count, s, NULL);
    CHECK_EQ_U64(st, TROWEL_OK);
    const uint8_t *d = trowel_sink_data(s, n);
    uint8_t *copy = malloc(*n + 1);
    if (!copy)
        exit(2);
    memcpy(copy, d, *n);
    trowel_sink_discard(s);
    for (size_t i = 0; i < count; i++)
        trowel_input_close(ins[i]);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
    return copy;
}

static void test_v4_extension_table_is_shared(void)
{
    buf files[3] = {make_binary(3000), make_binary(10), make_binary(0)};
    static const char *const names[] = {"a.xtbl", "b.xtbl", "c.peg_pc"};
    vpp_layout L = vpp_layout_default(4);
    L.compressed = true;
    size_t n;
    uint8_t *a = write_from_memory(&L, files, names, 3, &n);
    /* ext_size at 0x164: "xtbl\0peg_pc\0" */
    CHECK_EQ_U64(a[0x164], 12);
    trowel_ctx *ctx = new_ctx();
    trowel_input *in;
    trowel_archive *ar;
    REQUIRE(trowel_input_open_memory(ctx, a, n, "t.vpp_pc", &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &ar) == TROWEL_OK);
    for (size_t i = 0; i < 3; i++) {
        CHECK_STR(trowel_archive_entry(ar, i)->name, names[i]);
        trowel_sink *s;
        REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
        CHECK_EQ_U64(trowel_archive_read_entry(ar, i, s), TROWEL_OK);
        size_t got;
        const uint8_t *d = trowel_sink_data(s, &got);
        CHECK(got == files[i].len && (got == 0 || memcmp(d, files[i].data, got) == 0));
        trowel_sink_discard(s);
    }
    int problems = 0;
    CHECK_EQ_U64(trowel_archive_verify(ar, count_problem, &problems), TROWEL_OK);
    trowel_archive_close(ar);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(a);
    for (size_t i = 0; i < 3; i++)
        buf_free(&files[i]);
}

static void test_damaged_v10_checksum_fails_verify(void)
{
    buf files[2] = {make_binary(5000), make_binary(77)};
    static const char *const names[] = {"one.bin", "two.bin"};
    vpp_layout L = vpp_layout_default(10);
    L.compressed = true;
    size_t n;
    uint8_t *a = write_from_memory(&L, files, names, 2, &n);
    for (int damaged = 0; damaged < 2; damaged++) {
        if (damaged)
            a[8] ^= 0x40;
        trowel_ctx *ctx = new_ctx();
        trowel_input *in;
        trowel_archive *ar;
        REQUIRE(trowel_input_open_memory(ctx, a, n, "t.vpp_pc", &in) == TROWEL_OK);
        REQUIRE(trowel_archive_open(ctx, in, NULL, &ar) == TROWEL_OK);
        int problems = 0;
        CHECK_EQ_U64(trowel_archive_verify(ar, count_problem, &problems),
                     damaged ? TROWEL_ERR_VERIFY : TROWEL_OK);
        CHECK_EQ_U64(problems, (uint64_t)damaged);
        trowel_archive_close(ar);
        trowel_input_close(in);
        trowel_ctx_free(ctx);
    }
    free(a);
    buf_free(&files[0]);
    buf_free(&files[1]);
}

TEST_MAIN(TEST(test_header_crc_matches_the_corpus), TEST(test_sr2_ps3_chunked_deflate_reads_back),
          TEST(test_v4_extension_table_is_shared), TEST(test_damaged_v10_checksum_fails_verify))
