/*
 * The SCUMM costume decoders on real ScummC output (cube.cost, santa.akos:
 * counts, palette slots, limb sequences, flags) and on hand-made hostile
 * costumes: offsets past the block, pictures larger than their data, an
 * AKSQ that jumps to itself (bounded, with a warning).
 */
#include "core/core.h"
#include "files.h"
#include "format/scumm/costume.h"
#include "test.h"

#include <string.h>
#include <trowel/trowel.h>

static size_t warnings;
static void count_warning(void *user, const trowel_error *msg)
{
    (void)user;
    (void)msg;
    warnings++;
}

static bytes corpus(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/scumm/%s", TROWEL_CORPUS_DIR, name);
    return read_file(path);
}

static void test_cube_structure(void)
{
    bytes b = corpus("openquest/cube.cost");
    REQUIRE_INPUT(b.data);
    trowel_ctx *ctx = trowel_ctx_new();
    scumm_costume c;
    REQUIRE(scumm_cost_decode(ctx, b.data, b.size, &c) == TROWEL_OK);
    CHECK_EQ_U64(c.version, 6);
    CHECK_EQ_U64(c.format, 0xD9);
    CHECK(c.never_mirror);
    CHECK_EQ_U64(c.colours, 32);
    CHECK_EQ_U64(c.palette[0], 224);
    CHECK_EQ_U64(c.palette[31], 255);
    CHECK_EQ_U64(c.anim_count, 100);
    CHECK_EQ_U64(c.picture_count, 7);
    CHECK_EQ_U64(c.pictures[0].width, 34);
    CHECK_EQ_U64(c.pictures[0].height, 35);
    CHECK_EQ_U64((uint64_t)(int64_t)c.pictures[0].rel_x, (uint64_t)(int64_t)-17);
    /* dissolve @ 24, facing south: limb 15 (ScummC writes its one limb as the mask bit 0x0001) plays pictures 0..6 once */
    REQUIRE(c.anims[98].present);
    scumm_step steps[SCUMM_MAX_FRAMES];
    bool loops = true;
    size_t n = scumm_limb_steps(&c, &c.anims[98], 15, steps, SCUMM_MAX_FRAMES, &loops);
    CHECK_EQ_U64(n, 7);
    CHECK(!loops);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ_U64(steps[i].picture, i);
    scumm_costume_free(&c);
    trowel_ctx_free(ctx);
    free(b.data);
}

static void test_santa_structure(void)
{
    bytes b = corpus("road7/santa.akos");
    REQUIRE_INPUT(b.data);
    trowel_ctx *ctx = trowel_ctx_new();
    scumm_costume c;
    REQUIRE(scumm_akos_decode(ctx, b.data, b.size, &c) == TROWEL_OK);
    CHECK_EQ_U64(c.flags, 0x01);
    CHECK(c.never_mirror);
    CHECK_EQ_U64(c.directions, 4);
    CHECK_EQ_U64(c.codec, 1);
    CHECK_EQ_U64(c.colours, 32);
    CHECK_EQ_U64(c.palette[0], 48);
    CHECK_EQ_U64(c.anim_count, 16);
    REQUIRE(c.anims[14].present);
    CHECK_EQ_U64(c.anims[14].limb[15].kind, SCUMM_LIMB_SEQUENCE);
    CHECK_EQ_U64(c.anims[14].limb[15].mode, 2);
    CHECK_EQ_U64(c.picture_count, 1);
    CHECK_EQ_U64(c.pictures[0].width, 48);
    scumm_costume_free(&c);
    trowel_ctx_free(ctx);
    free(b.data);
}

/* A v6 COST block of 16 colours with one animation (0, limb 0 plays the
 * command at 0) and one limb table whose one picture is w x h with the RLE
 * bytes given. */
static size_t make_cost(uint8_t *out, uint16_t w, uint16_t h, const uint8_t *rle, size_t n,
                        uint16_t pic_offset)
{
    memset(out, 0, 256);
    size_t base = 8, p = base + 8 + 16; /* after size, CO, count, format, palette */
    memcpy(out, "COST", 4);
    memcpy(out + base + 4, "CO", 2);
    out[base + 6] = 0; /* one animation */
    out[base + 7] = 0x58;
    size_t table = p - base;
    size_t anim = table + 2 + 32 + 2, cmds = anim + 5, limb = cmds + 1, pic = limb + 2;
    out[p] = (uint8_t)cmds;
    out[p + 2] = (uint8_t)limb;      /* limb 0's table */
    out[p + 34] = (uint8_t)anim;     /* animation 0 */
    uint8_t *a = out + base + anim;
    a[0] = 0x00, a[1] = 0x80, a[2] = 0, a[3] = 0, a[4] = 0; /* limb 0: start 0, last 0, loop */
    out[base + cmds] = 0;                                    /* picture 0 */
    out[base + limb] = (uint8_t)(pic_offset ? pic_offset : pic);
    out[base + limb + 1] = (uint8_t)((pic_offset ? pic_offset : pic) >> 8);
    uint8_t *h12 = out + base + pic;
    h12[0] = (uint8_t)w, h12[1] = (uint8_t)(w >> 8), h12[2] = (uint8_t)h, h12[3] = (uint8_t)(h >> 8);
    memcpy(h12 + 12, rle, n);
    size_t total = base + pic + 12 + n;
    out[7] = (uint8_t)total;
    out[base] = (uint8_t)(total - 8);
    return total;
}

static void test_hostile_costs(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    uint8_t buf[256];
    scumm_costume c;
    const uint8_t rle[] = {0x12, 0x22}; /* 2 of colour 1, 2 of colour 2 */
    size_t n = make_cost(buf, 2, 2, rle, sizeof rle, 0);
    REQUIRE(scumm_cost_decode(ctx, buf, n, &c) == TROWEL_OK);
    CHECK(c.picture_count == 1 && memcmp(c.pictures[0].pixels, "\x01\x02\x01\x02", 4) == 0);
    scumm_costume_free(&c);

    n = make_cost(buf, 2, 2, rle, sizeof rle, 0xF000);
    CHECK(scumm_cost_decode(ctx, buf, n, &c) == TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "COST: a picture offset points past the costume");

    n = make_cost(buf, 2, 3, rle, sizeof rle, 0); /* 6 pixels, data for 4 */
    CHECK(scumm_cost_decode(ctx, buf, n, &c) == TROWEL_ERR_TRUNCATED);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "COST: a picture's pixels run past the costume");

    n = make_cost(buf, 60000, 60000, rle, sizeof rle, 0);
    CHECK(scumm_cost_decode(ctx, buf, n, &c) == TROWEL_ERR_CORRUPT);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "COST: a picture is larger than its data could draw");

    const uint8_t longrun[] = {0x10, 0x09}; /* 9 pixels into 4: cut, with a warning */
    warnings = 0;
    trowel_ctx_set_warning_handler(ctx, count_warning, NULL);
    n = make_cost(buf, 2, 2, longrun, sizeof longrun, 0);
    CHECK(scumm_cost_decode(ctx, buf, n, &c) == TROWEL_OK);
    CHECK_EQ_U64(warnings, 1);
    scumm_costume_free(&c);

    for (size_t cut = 0; cut < n; cut++) /* every prefix fails cleanly */
        CHECK(scumm_cost_decode(ctx, buf, cut, &c) != TROWEL_OK);
    trowel_ctx_free(ctx);
}

static void test_akos_jump_to_itself_is_bounded(void)
{
    bytes b = corpus("road7/santa.akos");
    REQUIRE_INPUT(b.data);
    trowel_ctx *ctx = trowel_ctx_new();
    warnings = 0;
    trowel_ctx_set_warning_handler(ctx, count_warning, NULL);
    scumm_costume c;
    REQUIRE(scumm_akos_decode(ctx, b.data, b.size, &c) == TROWEL_OK);
    uint8_t loop[4] = {0xC0, 0x30, 0x00, 0x00}; /* goto 0 */
    trowel_mem_free(ctx, c.cmds);
    c.cmds = trowel_mem_alloc(ctx, 4);
    REQUIRE(c.cmds);
    memcpy(c.cmds, loop, 4);
    c.cmd_count = 4;
    scumm_step steps[SCUMM_MAX_FRAMES];
    bool loops;
    CHECK_EQ_U64(scumm_limb_steps(&c, &c.anims[14], 15, steps, SCUMM_MAX_FRAMES, &loops), 0);
    CHECK_EQ_U64(warnings, 1);
    scumm_costume_free(&c);
    trowel_ctx_free(ctx);
    free(b.data);
}

/* An AKOS of one cel (w x h, codec, AKCD bytes), 16 animations, flags. */
static size_t put_block(uint8_t *out, const char *tag, const void *data, size_t n)
{
    memcpy(out, tag, 4);
    size_t size = n + 8;
    out[4] = 0, out[5] = 0, out[6] = (uint8_t)(size >> 8), out[7] = (uint8_t)size;
    memcpy(out + 8, data, n);
    return size;
}

static size_t make_akos(uint8_t *out, uint8_t flags, uint16_t codec, uint16_t w, uint16_t h,
                        const uint8_t *cd, size_t ncd)
{
    uint8_t akhd[10] = {1, 0, flags, 0, 16, 0, 1, 0, (uint8_t)codec, 0};
    uint8_t akpl[16];
    for (unsigned i = 0; i < 16; i++)
        akpl[i] = (uint8_t)(100 + i);
    uint8_t aksq[1] = {0};
    uint8_t akch[32 + 7] = {0};
    akch[2 * 2] = 32; /* animation 2: limb 0 loops cel 0 */
    akch[32] = 0x00, akch[33] = 0x80, akch[34] = 2;
    uint8_t akof[6] = {0};
    uint8_t akci[12] = {(uint8_t)w, 0, (uint8_t)h, 0};
    size_t n = 8;
    n += put_block(out + n, "AKHD", akhd, sizeof akhd);
    if (codec == 1)
        n += put_block(out + n, "AKPL", akpl, sizeof akpl);
    n += put_block(out + n, "AKSQ", aksq, sizeof aksq);
    n += put_block(out + n, "AKCH", akch, sizeof akch);
    n += put_block(out + n, "AKOF", akof, sizeof akof);
    n += put_block(out + n, "AKCI", akci, sizeof akci);
    n += put_block(out + n, "AKCD", cd, ncd);
    memcpy(out, "AKOS", 4);
    out[4] = 0, out[5] = 0, out[6] = (uint8_t)(n >> 8), out[7] = (uint8_t)n;
    return n;
}

static void test_akos_codecs_5_and_16_and_eight_directions(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    uint8_t buf[512];
    scumm_costume c;
    /* codec 5: row 0 repeats 9 four times; row 1 copies 1, 2, repeats 5 once */
    const uint8_t bomp[] = {0x02, 0x00, 0x07, 0x09, 0x05, 0x00, 0x02, 0x01, 0x02, 0x01, 0x05};
    size_t n = make_akos(buf, 0x02, 5, 4, 2, bomp, sizeof bomp);
    REQUIRE(scumm_akos_decode(ctx, buf, n, &c) == TROWEL_OK);
    CHECK(c.raw_colours && c.colours == 256 && c.directions == 8 && !c.never_mirror);
    CHECK(memcmp(c.pictures[0].pixels, "\x09\x09\x09\x09\x01\x02\x05\xff", 8) == 0);
    scumm_costume_free(&c);
    /* codec 16, 4 bits a literal, start 3: bits 0 | 1 0 0111 | 1 1 101 | 0 */
    const uint8_t bits[] = {0x04, 0x03, 0xBA, 0x0B, 0x00, 0x00};
    n = make_akos(buf, 0x01, 16, 4, 1, bits, sizeof bits);
    REQUIRE(scumm_akos_decode(ctx, buf, n, &c) == TROWEL_OK);
    CHECK(c.never_mirror && c.directions == 4);
    CHECK(memcmp(c.pictures[0].pixels, "\x03\x03\x07\x08", 4) == 0);
    scumm_costume_free(&c);
    /* codec 1 with a 16-colour AKPL: 4/4 runs, column-major */
    const uint8_t rle[] = {0x12, 0x22};
    n = make_akos(buf, 0, 1, 2, 2, rle, sizeof rle);
    REQUIRE(scumm_akos_decode(ctx, buf, n, &c) == TROWEL_OK);
    CHECK(c.colours == 16 && c.palette[1] == 101);
    CHECK(memcmp(c.pictures[0].pixels, "\x01\x02\x01\x02", 4) == 0);
    {
        scumm_step steps[4];
        bool loops;
        CHECK_EQ_U64(scumm_limb_steps(&c, &c.anims[2], 0, steps, 4, &loops), 1);
        CHECK(loops && steps[0].picture == 0);
    }
    scumm_costume_free(&c);
    for (size_t cut = 0; cut < n; cut++) /* every prefix of a good one fails cleanly */
        CHECK(scumm_akos_decode(ctx, buf, cut, &c) != TROWEL_OK);
    n = make_akos(buf, 0, 32, 2, 2, rle, sizeof rle);
    CHECK(scumm_akos_decode(ctx, buf, n, &c) == TROWEL_ERR_UNSUPPORTED);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "AKOS: codec 32 (known: 1, 5, 16)");
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_cube_structure), TEST(test_akos_codecs_5_and_16_and_eight_directions), TEST(test_santa_structure), TEST(test_hostile_costs),
          TEST(test_akos_jump_to_itself_is_bounded))
