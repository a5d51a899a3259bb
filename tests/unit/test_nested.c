/*
 * Tests of nested archives (trowel_archive_open_entry): the eight .str2_pc
 * files inside dlcp01_activities.vpp_pc open in place (stored entries
 * through a window of the outer input) and read the same bytes as when
 * extracted to disk; a compressed entry opens from memory; nesting stops at
 * TROWEL_NEST_MAX; a damaged nested archive fails to open with its own
 * error while the outer one stays usable; an entry that is no archive is
 * TROWEL_ERR_UNSUPPORTED.
 */
#include "files.h"
#include "test.h"
#include "vpp_hash.h"

#include <trowel/trowel.h>
#include <zlib.h>

#define RFG TROWEL_CORPUS_DIR "/volition/rfg/"

/* A raw v3 packfile holding one file (name, data[0, n)); compressed: the
 * file as one zlib stream (compressed mode). */
static bytes one_file_vpp(const char *name, const uint8_t *data, size_t n, bool compressed)
{
    uLongf zn = compressBound((uLong)n);
    bytes b = {calloc(1, 6144 + zn + 16), 0};
    uint8_t *p = b.data;
    set_u32(p, 0x51890ACE), set_u32(p + 4, 3), set_u32(p + 0x14C, compressed ? 1 : 0);
    set_u32(p + 0x154, 1), set_u32(p + 0x15C, 28), set_u32(p + 0x160, (uint32_t)strlen(name) + 1);
    set_u32(p + 2048 + 12, vhash(name)), set_u32(p + 2048 + 16, (uint32_t)n);
    memcpy(p + 4096, name, strlen(name) + 1);
    size_t stored = n;
    if (compressed) {
        compress2(p + 6144, &zn, data, (uLong)n, 6);
        stored = zn;
    } else {
        memcpy(p + 6144, data, n);
    }
    set_u32(p + 2048 + 20, compressed ? (uint32_t)stored : 0xFFFFFFFF);
    set_u32(p + 0x164, (uint32_t)n), set_u32(p + 0x168, compressed ? (uint32_t)stored : 0xFFFFFFFF);
    b.size = 6144 + stored;
    set_u32(p + 0x158, (uint32_t)b.size);
    return b;
}

static void test_dlcp01_str2s_open_in_place(void)
{
    bytes vpp = read_file(RFG "dlcp01_activities.vpp_pc");
    REQUIRE_INPUT(vpp.data);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a;
    trowel_input_open_file(ctx, RFG "dlcp01_activities.vpp_pc", &in);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    REQUIRE(trowel_archive_entry_count(a) == 9);
    static const char *const inner[8] = {
        "dlc01_07_08_128.layer_pc", "dlc01_08_08_129.layer_pc", "dlc01_07_09_129.layer_pc",
        "dlc01_09_08_130.layer_pc", "dlc01_08_09_128.layer_pc", "dlc01_07_09_130.layer_pc",
        "dlc01_08_09_130.layer_pc", "dlc01_08_09_131.layer_pc"};
    static const uint64_t sizes[8] = {13752, 9060, 772, 220, 348, 2624, 2064, 6556};
    for (size_t i = 0; i < 8; i++) {
        trowel_archive *n = NULL;
        CHECK(trowel_archive_open_entry(a, i, NULL, &n) == TROWEL_OK);
        if (!n)
            continue;
        CHECK_STR(trowel_format_id(trowel_archive_format(n)), "vpp");
        CHECK_EQ_U64(trowel_archive_entry_count(n), 1);
        CHECK_STR(trowel_archive_entry(n, 0)->name, inner[i]);
        trowel_sink *s;
        trowel_sink_open_null(ctx, &s);
        CHECK(trowel_archive_read_entry(n, 0, s) == TROWEL_OK);
        CHECK_EQ_U64(trowel_sink_written(s), sizes[i]);
        trowel_sink_discard(s);
        CHECK(trowel_archive_verify(n, NULL, NULL) == TROWEL_OK);
        trowel_archive_close(n);
    }
    trowel_archive *n = NULL; /* the ASM opens too, as its own format */
    CHECK(trowel_archive_open_entry(a, 8, NULL, &n) == TROWEL_OK);
    CHECK(n && strcmp(trowel_format_id(trowel_archive_format(n)), "asm") == 0);
    trowel_archive_close(n);
    CHECK(trowel_archive_open_entry(a, 9, NULL, &n) == TROWEL_ERR_USAGE);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(vpp.data);
}

static void test_compressed_entry_opens_from_memory_within_the_limit(void)
{
    bytes innerv = one_file_vpp("x.txt", (const uint8_t *)"hello nested", 12, false);
    bytes outer = one_file_vpp("in.str2_pc", innerv.data, innerv.size, true);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a, *n = NULL;
    trowel_input_open_memory(ctx, outer.data, outer.size, "o.vpp_pc", &in);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    CHECK(trowel_archive_open_entry(a, 0, NULL, &n) == TROWEL_OK);
    CHECK(n && trowel_archive_entry(n, 0)->size == 12);
    trowel_archive_close(n);
    trowel_ctx_set_mem_limit(ctx, 4096); /* the decoded entry cannot fit */
    CHECK(trowel_archive_open_entry(a, 0, NULL, &n) == TROWEL_ERR_LIMIT);
    CHECK(n == NULL);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(innerv.data);
    free(outer.data);
}

static void test_nesting_stops_at_the_limit(void)
{
    bytes level = one_file_vpp("leaf.txt", (const uint8_t *)"leaf", 4, false);
    for (int d = 0; d < TROWEL_NEST_MAX + 1; d++) {
        bytes up = one_file_vpp("n.vpp_pc", level.data, level.size, false);
        free(level.data);
        level = up;
    }
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *chain[TROWEL_NEST_MAX + 2] = {0};
    trowel_input_open_memory(ctx, level.data, level.size, "top.vpp_pc", &in);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &chain[0]) == TROWEL_OK);
    int depth = 0;
    while (depth < TROWEL_NEST_MAX &&
           trowel_archive_open_entry(chain[depth], 0, NULL, &chain[depth + 1]) == TROWEL_OK)
        depth++;
    CHECK(depth == TROWEL_NEST_MAX);
    CHECK(trowel_archive_open_entry(chain[depth], 0, NULL, &chain[depth + 1]) == TROWEL_ERR_LIMIT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "'n.vpp_pc' is nested deeper than 8 archives");
    for (int d = depth; d >= 0; d--)
        trowel_archive_close(chain[d]);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(level.data);
}

static void test_damaged_nested_archive_fails_alone(void)
{
    bytes innerv = one_file_vpp("x.txt", (const uint8_t *)"hello", 5, false);
    set_u32(innerv.data + 0x154, 1000); /* 1000 files in a 6149-byte archive */
    bytes outer = one_file_vpp("bad.str2_pc", innerv.data, innerv.size, false);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a, *n = NULL;
    trowel_input_open_memory(ctx, outer.data, outer.size, "o.vpp_pc", &in);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    trowel_status st = trowel_archive_open_entry(a, 0, NULL, &n);
    CHECK(st == TROWEL_ERR_CORRUPT || st == TROWEL_ERR_TRUNCATED);
    CHECK(n == NULL);
    CHECK(trowel_ctx_last_error(ctx)->message[0] != '\0');
    trowel_sink *s; /* the outer archive still reads */
    trowel_sink_open_null(ctx, &s);
    CHECK(trowel_archive_read_entry(a, 0, s) == TROWEL_OK);
    CHECK_EQ_U64(trowel_sink_written(s), innerv.size);
    trowel_sink_discard(s);
    trowel_archive_close(a);
    trowel_input_close(in);

    bytes plain = one_file_vpp("note.str2_pc", (const uint8_t *)"just text", 9, false);
    trowel_input_open_memory(ctx, plain.data, plain.size, "p.vpp_pc", &in);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    CHECK(trowel_archive_open_entry(a, 0, NULL, &n) == TROWEL_ERR_UNSUPPORTED);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(plain.data);
    free(innerv.data);
    free(outer.data);
}

TEST_MAIN(TEST(test_dlcp01_str2s_open_in_place),
          TEST(test_compressed_entry_opens_from_memory_within_the_limit),
          TEST(test_nesting_stops_at_the_limit), TEST(test_damaged_nested_archive_fails_alone))
