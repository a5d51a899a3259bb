/*
 * The context's open hook serves sibling files (here VOL.CNF's volume) from
 * memory: the format asks by the name it found, beside the input it reads;
 * a hook that declines leaves the volume missing, as on disk; NULL restores
 * the default (trowel_open_beside).
 */
#include "files.h"
#include "open_hook_server.h"
#include "test.h"
#include "trowel/trowel.h"

#include <string.h>
#include <unistd.h>

static void put_be16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    put_be16(p, v >> 16);
    put_be16(p + 2, v & 0xffff);
}

/* VOL.CNF: one volume PROCS00 of part_size bytes listing HELLO.TXT. */
static size_t build_volcnf(uint8_t *f, uint32_t part_size)
{
    memset(f, 0, 64);
    put_be16(f, 1);
    put_be16(f + 2, 20);
    memcpy(f + 4, "PROCS00", 7);
    put_be16(f + 4 + 14, 1);
    put_be32(f + 4 + 16, part_size);
    put_be32(f + 24, 11);
    memcpy(f + 28, "HELLO   TXT", 11);
    return 28 + 11;
}

static void test_open_hook_serves_volcnf_volume_from_memory(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    char *dir = make_temp_dir();
    REQUIRE(dir);
    char path[512];
    snprintf(path, sizeof path, "%s/HELLO.TXT", dir);
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    fputs("hello from memory\n", f);
    fclose(f);
    /* The part file, made in memory by trowel's own writer. */
    trowel_sink *part;
    REQUIRE(trowel_sink_open_memory(ctx, &part) == TROWEL_OK);
    trowel_source src = {"HELLO.TXT", path};
    trowel_create_params p = {.sources = &src, .source_count = 1};
    REQUIRE(trowel_create(ctx, trowel_format_find("cine-part"), &p, part) == TROWEL_OK);
    unlink(path);
    rmdir(dir);
    size_t part_size;
    const uint8_t *part_bytes = trowel_sink_data(part, &part_size);

    uint8_t cnf[64];
    size_t n = build_volcnf(cnf, (uint32_t)part_size);
    server sv = {.serves = "PROCS00", .data = part_bytes, .size = part_size};
    trowel_ctx_set_open_hook(ctx, serve, &sv);
    trowel_input *in;
    trowel_archive *a = NULL;
    REQUIRE(trowel_input_open_memory(ctx, cnf, n, "game/VOL.CNF", &in) == TROWEL_OK);
    CHECK(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    if (a) {
        CHECK_EQ_U64(trowel_archive_entry_count(a), 1);
        trowel_sink *out;
        REQUIRE(trowel_sink_open_memory(ctx, &out) == TROWEL_OK);
        CHECK(trowel_archive_read_entry(a, 0, out) == TROWEL_OK);
        size_t got;
        const uint8_t *d = trowel_sink_data(out, &got);
        CHECK(got == 18 && memcmp(d, "hello from memory\n", 18) == 0);
        trowel_sink_discard(out);
        CHECK(sv.calls >= 1);
        CHECK_STR(sv.base, "game/VOL.CNF");
        CHECK_STR(sv.name, "PROCS00");
    }
    trowel_archive_close(a);
    a = NULL;
    /* Declined: the volume is missing, as it would be on disk. */
    sv.data = NULL;
    CHECK(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    if (a) {
        trowel_sink *out;
        REQUIRE(trowel_sink_open_memory(ctx, &out) == TROWEL_OK);
        CHECK(trowel_archive_read_entry(a, 0, out) == TROWEL_ERR_IO);
        CHECK(strstr(trowel_ctx_last_error(ctx)->message, "not beside VOL.CNF") != NULL);
        trowel_sink_discard(out);
    }
    trowel_archive_close(a);
    /* NULL: back to the file system (no game/ folder here). */
    trowel_ctx_set_open_hook(ctx, NULL, NULL);
    int before = sv.calls;
    trowel_input *beside;
    CHECK(trowel_open_beside(ctx, "game/VOL.CNF", "PROCS00", &beside) == TROWEL_ERR_IO);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "PROCS00 is not beside game/VOL.CNF");
    CHECK(trowel_open_beside(ctx, "game/VOL.CNF", "../PROCS00", &beside) ==
          TROWEL_ERR_UNSAFE_PATH);
    CHECK(sv.calls == before);
    trowel_input_close(in);
    trowel_sink_discard(part);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_open_hook_serves_volcnf_volume_from_memory))
