/*
 * scumm-res and the core pieces it needs: the xor69 and szdd input
 * filters, the open hook serving sibling files from memory, the room
 * palette of a costume, and hostile resource files.
 *
 * Expected offsets were read off the corpus games by hand (and by the
 * python walk in tests/cli/test_scumm_res.sh): tentacle.001 has its first
 * LFLF's ROOM at 0x46 (room 6, PALS at 0x6f) and COSTs 1..5 at 0x61c1,
 * 0x254f, 0x1931, 0x150f, 0xf05; scummc7.001 has room 2's ROOM at 0x23
 * (PALS at 0x50) and its AKOS (costume 2, santa) at 0x14659.
 */
#include "files.h"
#include "format/scumm/scumm.h"
#include "test.h"
#include "trowel/trowel.h"

#include <string.h>
#include <unistd.h>

static bytes game_file(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scumm/%s", TROWEL_CORPUS_DIR, rel);
    bytes b = read_file(path);
    if (!b.data)
        test_skip("%s is absent", path);
    return b;
}

static void xor69(bytes *b)
{
    for (size_t i = 0; i < b->size; i++)
        b->data[i] ^= 0x69;
}

static size_t find_entry(const trowel_archive *a, const char *name)
{
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++)
        if (strcmp(trowel_archive_entry(a, i)->name, name) == 0)
            return i;
    return SIZE_MAX;
}

/* Entry index's bytes equal want (size and content). */
static bool entry_equals(trowel_ctx *ctx, trowel_archive *a, size_t index, const bytes *want)
{
    trowel_sink *s;
    if (index == SIZE_MAX || trowel_sink_open_memory(ctx, &s) != TROWEL_OK)
        return false;
    bool same = false;
    if (trowel_archive_read_entry(a, index, s) == TROWEL_OK) {
        size_t n;
        const uint8_t *p = trowel_sink_data(s, &n);
        same = n == want->size && memcmp(p, want->data, n) == 0;
    }
    trowel_sink_discard(s);
    return same;
}

/* ------------------------------------------------------------ the hook */

typedef struct served {
    const char *name; /* the sibling's name as the format asks for it */
    bytes *data;
    int calls;
    char last_base[256], last_name[256];
} served;

static trowel_status serve(void *user, trowel_ctx *ctx, const char *base, const char *name,
                           trowel_input **out)
{
    served *sv = user;
    sv->calls++;
    snprintf(sv->last_base, sizeof sv->last_base, "%s", base ? base : "(none)");
    snprintf(sv->last_name, sizeof sv->last_name, "%s", name);
    if (!sv->data || strcmp(name, sv->name) != 0)
        return TROWEL_ERR_IO;
    return trowel_input_open_memory(ctx, sv->data->data, sv->data->size, name, out);
}

/* Opens data (named name) with the hook serving partner as partner_name. */
static trowel_archive *open_served(trowel_ctx *ctx, bytes *data, const char *name,
                                   served *sv, trowel_input **in, trowel_status *st)
{
    trowel_archive *a = NULL;
    trowel_ctx_set_open_hook(ctx, serve, sv);
    *st = trowel_input_open_memory(ctx, data->data, data->size, name, in);
    if (*st == TROWEL_OK)
        *st = trowel_archive_open(ctx, *in, NULL, &a);
    return a;
}

/* ------------------------------------------------------------- cases */

static void test_scumm_res_v6_data_through_xor_filter_names_costumes(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scumm/openquest/tentacle.001", TROWEL_CORPUS_DIR);
    bytes zif = game_file("openquest/zif.cost"), carol = game_file("openquest/carol.cost");
    bytes bluecup = game_file("openquest/bluecup.cost"), cube = game_file("openquest/cube.cost");
    if (!zif.data || !carol.data || !bluecup.data || !cube.data || access(path, R_OK) != 0) {
        SKIP("the OpenQuest game is absent");
    }
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a = NULL;
    REQUIRE(trowel_input_open_file(ctx, path, &in) == TROWEL_OK);
    CHECK(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    if (a) {
        CHECK_STR(trowel_format_id(trowel_archive_format(a)), "scumm-res");
        CHECK_EQ_U64(trowel_archive_filter_count(a), 1);
        CHECK_STR(trowel_archive_filter_id(a, 0), "xor69");
        CHECK(trowel_archive_filter_id(a, 1) == NULL);
        CHECK_EQ_U64(trowel_archive_entry_count(a), 231);
        size_t c1 = find_entry(a, "room06/cost001.cost");
        REQUIRE(c1 != SIZE_MAX);
        CHECK_EQ_U64(trowel_archive_entry(a, c1)->offset, 0x61c1);
        CHECK_EQ_U64(trowel_archive_entry(a, c1)->size, 14800);
        CHECK(find_entry(a, "room08/cost006.cost") != SIZE_MAX);
        CHECK(find_entry(a, "index/dcos.dcos") != SIZE_MAX);
        /* The standalone costumes ScummC wrote are these blocks, byte for byte. */
        CHECK(entry_equals(ctx, a, find_entry(a, "room06/cost002.cost"), &zif));
        CHECK(entry_equals(ctx, a, find_entry(a, "room06/cost003.cost"), &carol));
        CHECK(entry_equals(ctx, a, find_entry(a, "room06/cost004.cost"), &bluecup));
        CHECK(entry_equals(ctx, a, find_entry(a, "room06/cost005.cost"), &cube));
        CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_OK);

        /* The room palette: APAL's data in room 6, read here straight from
         * the file (XOR undone by hand). */
        bytes raw = read_file(path);
        REQUIRE(raw.data && raw.size > 0x93 + 768);
        xor69(&raw);
        uint8_t rgb[768];
        CHECK(trowel_scumm_room_palette(a, c1, rgb) == TROWEL_OK);
        CHECK(memcmp(rgb, raw.data + 0x93, 768) == 0);
        CHECK(trowel_scumm_room_palette(a, find_entry(a, "index/dcos.dcos"), rgb) ==
              TROWEL_ERR_USAGE);
        free(raw.data);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(zif.data);
    free(carol.data);
    free(bluecup.data);
    free(cube.data);
}

static void test_scumm_res_v7_index_serves_data_through_hook(void)
{
    bytes index = game_file("road7/scummc7.000"), data = game_file("road7/scummc7.001");
    bytes santa = game_file("road7/santa.akos");
    if (!index.data || !data.data || !santa.data)
        SKIP("the road7 game is absent");
    trowel_ctx *ctx = trowel_ctx_new();
    served sv = {"SCUMMC7.001", &data, 0, "", ""};
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_served(ctx, &index, "games/road/SCUMMC7.000", &sv, &in, &st);
    CHECK(st == TROWEL_OK);
    CHECK_EQ_U64(sv.calls, 1);
    CHECK_STR(sv.last_base, "games/road/SCUMMC7.000");
    CHECK_STR(sv.last_name, "SCUMMC7.001");
    if (a) {
        CHECK_EQ_U64(trowel_archive_filter_count(a), 0);
        CHECK_EQ_U64(trowel_archive_entry_count(a), 86);
        size_t akos = find_entry(a, "room02/akos002.akos");
        REQUIRE(akos != SIZE_MAX);
        CHECK_EQ_U64(trowel_archive_entry(a, akos)->offset, 0x14659);
        CHECK(entry_equals(ctx, a, akos, &santa));
        const trowel_prop *number = trowel_props_find(trowel_archive_entry(a, akos)->extra, "number");
        CHECK(number && number->u == 2);
        const trowel_prop *room = trowel_props_find(trowel_archive_entry(a, akos)->extra, "room");
        CHECK(room && room->u == 2);
        CHECK(find_entry(a, "room01/akos001.akos") != SIZE_MAX);
        CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_OK);
        uint8_t rgb[768];
        CHECK(trowel_scumm_room_palette(a, akos, rgb) == TROWEL_OK);
        CHECK(memcmp(rgb, data.data + 0x50 + 36, 768) == 0);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    /* The hook not serving the partner: the index alone, with a warning. */
    sv.data = NULL;
    a = open_served(ctx, &index, "SCUMMC7.000", &sv, &in, &st);
    CHECK(st == TROWEL_OK && a && trowel_archive_entry_count(a) == 10);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(index.data);
    free(data.data);
    free(santa.data);
}

static void test_scumm_res_default_sibling_ignores_case(void)
{
    bytes index = game_file("road7/scummc7.000"), data = game_file("road7/scummc7.001");
    if (!index.data || !data.data)
        SKIP("the road7 game is absent");
    char *dir = make_temp_dir();
    REQUIRE(dir);
    char ipath[512], dpath[512];
    snprintf(ipath, sizeof ipath, "%s/GAME.000", dir);
    snprintf(dpath, sizeof dpath, "%s/game.001", dir);
    FILE *f = fopen(ipath, "wb");
    REQUIRE(f);
    fwrite(index.data, 1, index.size, f);
    fclose(f);
    f = fopen(dpath, "wb");
    REQUIRE(f);
    fwrite(data.data, 1, data.size, f);
    fclose(f);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a = NULL;
    REQUIRE(trowel_input_open_file(ctx, ipath, &in) == TROWEL_OK);
    CHECK(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    CHECK(a && trowel_archive_entry_count(a) == 86);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    unlink(ipath);
    unlink(dpath);
    rmdir(dir);
    free(index.data);
    free(data.data);
}

/* SZDD around a known format is peeled (a chain of two around an XORed
 * index); -t szdd keeps the wrapper. */
static void test_filters_peel_szdd_then_xor(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/scumm/openquest/tentacle.000", TROWEL_CORPUS_DIR);
    if (access(path, R_OK) != 0)
        SKIP("tentacle.000 is absent");
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *packed;
    REQUIRE(trowel_sink_open_memory(ctx, &packed) == TROWEL_OK);
    trowel_source src = {"TENTACLE.000", path};
    trowel_create_params p = {.sources = &src, .source_count = 1};
    REQUIRE(trowel_create(ctx, trowel_format_find("szdd"), &p, packed) == TROWEL_OK);
    size_t n;
    const uint8_t *szdd = trowel_sink_data(packed, &n);
    trowel_input *in;
    trowel_archive *a = NULL;
    REQUIRE(trowel_input_open_memory(ctx, szdd, n, "TENTACLE.00_", &in) == TROWEL_OK);
    CHECK(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    if (a) {
        CHECK_STR(trowel_format_id(trowel_archive_format(a)), "scumm-res");
        CHECK_EQ_U64(trowel_archive_filter_count(a), 2);
        CHECK_STR(trowel_archive_filter_id(a, 0), "szdd");
        CHECK_STR(trowel_archive_filter_id(a, 1), "xor69");
        CHECK_EQ_U64(trowel_archive_entry_count(a), 9); /* no data file beside it */
    }
    trowel_archive_close(a);
    a = NULL;
    CHECK(trowel_archive_open(ctx, in, trowel_format_find("szdd"), &a) == TROWEL_OK);
    CHECK(a && trowel_archive_filter_count(a) == 0 &&
          strcmp(trowel_format_id(trowel_archive_format(a)), "szdd") == 0);
    trowel_archive_close(a);
    a = NULL;
    CHECK(trowel_archive_open(ctx, in, trowel_format_find("scumm-res"), &a) == TROWEL_OK);
    CHECK(a && trowel_archive_filter_count(a) == 2);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_sink_discard(packed);
    trowel_ctx_free(ctx);
}

/* ---------------------------------------------------------- hostile */

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

typedef struct problems {
    int count;
    char first[512];
} problems;

static void note_problem(void *user, const trowel_error *e)
{
    problems *p = user;
    if (p->count++ == 0)
        snprintf(p->first, sizeof p->first, "%s", e->message);
}

/* Opens the changed pair (v7, plain) and verifies it: the open status, and
 * the first problem verify found ("" when it passed). */
static trowel_status open_and_verify(bytes *index, bytes *data, problems *pr, bool *damaged)
{
    trowel_ctx *ctx = trowel_ctx_new();
    served sv = {"G.001", data, 0, "", ""};
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_served(ctx, index, "G.000", &sv, &in, &st);
    memset(pr, 0, sizeof *pr);
    if (a) {
        *damaged = trowel_archive_damaged(a);
        trowel_archive_verify(a, note_problem, pr);
    } else {
        snprintf(pr->first, sizeof pr->first, "%s", trowel_ctx_last_error(ctx)->message);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return st;
}

static void test_scumm_res_hostile_files_fail_clearly(void)
{
    bytes index = game_file("road7/scummc7.000"), data = game_file("road7/scummc7.001");
    if (!index.data || !data.data)
        SKIP("the road7 game is absent");
    problems pr;
    bool damaged = false;
    /* untouched: passes */
    CHECK(open_and_verify(&index, &data, &pr, &damaged) == TROWEL_OK && pr.count == 0);

    /* the AKOS's size runs past its LFLF */
    uint8_t saved[8];
    memcpy(saved, data.data + 0x14659, 8);
    put_be32(data.data + 0x14659 + 4, 0x10000);
    CHECK(open_and_verify(&index, &data, &pr, &damaged) == TROWEL_OK && damaged);
    CHECK_STR(pr.first, "block AKOS (65536 bytes) runs past the end of LFLF at 0x14845");
    /* a size of 0 (which would loop for ever) */
    put_be32(data.data + 0x14659 + 4, 0);
    CHECK(open_and_verify(&index, &data, &pr, &damaged) == TROWEL_OK && damaged);
    CHECK_STR(pr.first, "block AKOS declares 0 bytes, less than its own header");
    memcpy(data.data + 0x14659, saved, 8);

    /* DCOS's offset of costume 2 one byte off its tag (index 0x142: DCOS;
     * data: count, 3 rooms, then 3 LE u32 offsets) */
    uint8_t *cost2 = index.data + 0x142 + 8 + 2 + 3 + 8;
    cost2[0]++;
    CHECK(open_and_verify(&index, &data, &pr, &damaged) == TROWEL_OK);
    CHECK_STR(pr.first,
              "DCOS: resource 2 points at 0x1465a in room 2, where no block starts, not COST or AKOS");
    cost2[0]--;

    /* LOFF puts room 1 where no ROOM starts */
    data.data[0x8 + 8 + 1 + 5 + 1] ^= 0x04; /* room 1's offset, low byte */
    CHECK(open_and_verify(&index, &data, &pr, &damaged) == TROWEL_OK);
    CHECK(pr.count > 0 && strstr(pr.first, "LOFF puts room 1 at") != NULL);
    data.data[0x8 + 8 + 1 + 5 + 1] ^= 0x04;

    /* LECF claims more than the file */
    put_be32(data.data + 4, (uint32_t)data.size + 1);
    CHECK(open_and_verify(&index, &data, &pr, &damaged) == TROWEL_OK && damaged);
    CHECK_STR(pr.first, "block LECF (125957 bytes) runs past the end of the data file at 0x1ec04");
    put_be32(data.data + 4, (uint32_t)data.size);

    /* a directory that claims more resources than it holds */
    index.data[0x142 + 8] = 0xff;
    CHECK(open_and_verify(&index, &data, &pr, &damaged) == TROWEL_ERR_CORRUPT);
    CHECK_STR(pr.first, "directory DCOS lists 255 resources but holds room for 3");
    free(index.data);
    free(data.data);
}

/* ------------------------------------------------------- a v5 game */

typedef struct buf {
    uint8_t data[2048];
    size_t len;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void put_le(buf *b, uint32_t v, int n)
{
    for (int i = 0; i < n; i++) {
        uint8_t c = (uint8_t)(v >> (8 * i));
        put(b, &c, 1);
    }
}

/* Starts a block: returns where its size goes, filled by end_block. */
static size_t begin_block(buf *b, const char *tag)
{
    put(b, tag, 4);
    b->len += 4;
    return b->len - 8;
}

static void end_block(buf *b, size_t at)
{
    uint32_t size = (uint32_t)(b->len - at);
    b->data[at + 4] = (uint8_t)(size >> 24);
    b->data[at + 5] = (uint8_t)(size >> 16);
    b->data[at + 6] = (uint8_t)(size >> 8);
    b->data[at + 7] = (uint8_t)size;
}

/* A v5 pair built here, XORed: room 3 with a CLUT, costume 1 beside it. */
static void test_scumm_res_v5_clut_palette(void)
{
    buf data = {.len = 0}, index = {.len = 0};
    size_t lecf = begin_block(&data, "LECF");
    size_t loff = begin_block(&data, "LOFF");
    uint8_t one_room[] = {1, 3};
    put(&data, one_room, 2);
    size_t room_offset_at = data.len;
    put_le(&data, 0, 4);
    end_block(&data, loff);
    size_t lflf = begin_block(&data, "LFLF");
    size_t room = begin_block(&data, "ROOM");
    size_t clut = begin_block(&data, "CLUT");
    for (int i = 0; i < 256; i++) {
        uint8_t rgb[3] = {(uint8_t)i, (uint8_t)(255 - i), (uint8_t)(i * 7)};
        put(&data, rgb, 3);
    }
    end_block(&data, clut);
    end_block(&data, room);
    size_t cost = begin_block(&data, "COST");
    put(&data, "\x10\x00\x00\x00\x03\x58", 6);
    end_block(&data, cost);
    end_block(&data, lflf);
    end_block(&data, lecf);
    for (int i = 0; i < 4; i++)
        data.data[room_offset_at + (size_t)i] = (uint8_t)(room >> (8 * i));
    size_t rnam = begin_block(&index, "RNAM");
    put(&index, "", 1);
    end_block(&index, rnam);
    size_t dcos = begin_block(&index, "DCOS");
    put_le(&index, 2, 2);
    uint8_t rooms[] = {0, 3};
    put(&index, rooms, 2);
    put_le(&index, 0, 4);
    put_le(&index, (uint32_t)(cost - room), 4);
    end_block(&index, dcos);
    uint8_t want[768];
    memcpy(want, data.data + clut + 8, 768);
    for (size_t i = 0; i < data.len; i++)
        data.data[i] ^= 0x69;
    for (size_t i = 0; i < index.len; i++)
        index.data[i] ^= 0x69;

    bytes d = {data.data, data.len}, x = {index.data, index.len};
    trowel_ctx *ctx = trowel_ctx_new();
    served sv = {"MONKEY2.000", &x, 0, "", ""};
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_served(ctx, &d, "MONKEY2.001", &sv, &in, &st);
    CHECK(st == TROWEL_OK);
    if (a) {
        CHECK_STR(trowel_archive_filter_id(a, 0), "xor69");
        CHECK_EQ_U64(trowel_props_find(trowel_archive_info(a), "version")->u, 5);
        size_t c = find_entry(a, "room03/cost001.cost");
        REQUIRE(c != SIZE_MAX);
        CHECK_EQ_U64(trowel_archive_entry(a, c)->offset, cost);
        uint8_t rgb[768];
        CHECK(trowel_scumm_room_palette(a, c, rgb) == TROWEL_OK);
        CHECK(memcmp(rgb, want, 768) == 0);
        CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_OK);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_scumm_res_v6_data_through_xor_filter_names_costumes),
          TEST(test_scumm_res_v7_index_serves_data_through_hook),
          TEST(test_scumm_res_default_sibling_ignores_case),
          TEST(test_filters_peel_szdd_then_xor),
          TEST(test_scumm_res_hostile_files_fail_clearly),
          TEST(test_scumm_res_v5_clut_palette))
