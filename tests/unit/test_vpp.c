/*
 * Tests of the VPP v3 reader (src/format/volition/vpp.c): the Red Faction
 * Guerrilla archives of the shared corpus extract to the SHA-256 sums listed
 * beside them (made by the RFGM.Formats unpacker), in directory order, names
 * included, and verify clean; archives built here in every mode (raw,
 * compressed, condensed, compressed+condensed at alignments 1, 16 and 64)
 * read back; hostile archives (cut short, counts past the file, names
 * without NUL, other versions, bad hashes) give the errors they should.
 */
#include "codec_data.h"
#include "files.h"
#include "sha256.h"
#include "test.h"
#include "vpp_hash.h"

#include "core/module.h"

#include <zlib.h>

#define RFG TROWEL_CORPUS_DIR "/volition/rfg/"

static bool have_corpus(void)
{
    FILE *f = fopen(RFG "xray_effect.str2_pc", "rb");
    if (f)
        fclose(f);
    else
        printf("  (no corpus at %s: skipped)\n", RFG);
    return f != NULL;
}

static trowel_archive *open_bytes(trowel_ctx *ctx, const uint8_t *data, size_t n, trowel_input **in,
                                  trowel_status *st)
{
    trowel_archive *a = NULL;
    *st = trowel_input_open_memory(ctx, data, n, "t.vpp_pc", in);
    if (*st == TROWEL_OK)
        *st = trowel_archive_open(ctx, *in, trowel_format_find("vpp"), &a);
    return a;
}

/* Entry index's bytes in a malloc'd buffer (len in *n), NULL on failure. */
static uint8_t *read_entry(trowel_ctx *ctx, trowel_archive *a, size_t index, size_t *n,
                           trowel_status *st)
{
    trowel_sink *sink;
    *n = 0;
    if ((*st = trowel_sink_open_memory(ctx, &sink)) != TROWEL_OK)
        return NULL;
    *st = trowel_archive_read_entry(a, index, sink);
    uint8_t *copy = NULL;
    if (*st == TROWEL_OK) {
        const uint8_t *d = trowel_sink_data(sink, n);
        copy = malloc(*n + 1);
        if (*n)
            memcpy(copy, d, *n);
    }
    trowel_sink_discard(sink);
    return copy;
}

static void count_problem(void *user, const trowel_error *e)
{
    (void)e;
    (*(int *)user)++;
}

/* ----------------------------------------------------------- the corpus */

static void check_corpus_file(const char *name)
{
    char path[512], list[512];
    snprintf(path, sizeof path, RFG "%s", name);
    snprintf(list, sizeof list, RFG "%s.sha256", name);
    trowel_ctx *ctx = new_ctx();
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(trowel_input_open_file(ctx, path, &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK); /* detected */
    FILE *f = fopen(list, "r");
    REQUIRE(f);
    char line[512];
    size_t i = 0;
    while (fgets(line, sizeof line, f)) {
        char want[65], ename[400];
        if (sscanf(line, "%64s %399s", want, ename) != 2)
            continue;
        REQUIRE(i < trowel_archive_entry_count(a));
        const trowel_entry *e = trowel_archive_entry(a, i);
        CHECK_STR(e->name, ename);
        size_t n;
        trowel_status st;
        uint8_t *d = read_entry(ctx, a, i, &n, &st);
        CHECK_EQ_U64(st, TROWEL_OK);
        CHECK_EQ_U64(n, e->size);
        char got[65];
        sha256_hex(d, n, got);
        CHECK_STR(got, want);
        free(d);
        i++;
    }
    fclose(f);
    CHECK_EQ_U64(i, trowel_archive_entry_count(a));
    int problems = 0;
    CHECK_EQ_U64(trowel_archive_verify(a, count_problem, &problems), TROWEL_OK);
    CHECK_EQ_U64(problems, 0);
    trowel_archive_close(a);
    trowel_input_close(in);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

static void test_corpus_archives_extract_to_listed_sha256_in_order(void)
{
    if (!have_corpus())
        return;
    check_corpus_file("cloth_sim.vpp_pc");
    check_corpus_file("dlc01_l1.vpp_pc");
    check_corpus_file("dlcp01_activities.vpp_pc");
    check_corpus_file("xray_effect.str2_pc");
}

static void test_corpus_str2_is_compressed_condensed_unaligned(void)
{
    if (!have_corpus())
        return;
    trowel_ctx *ctx = new_ctx();
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(trowel_input_open_file(ctx, RFG "xray_effect.str2_pc", &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    const trowel_props *info = trowel_archive_info(a);
    char *json = NULL;
    REQUIRE(trowel_archive_to_json(a, TROWEL_JSON_INFO | TROWEL_JSON_ENTRIES, &json) == TROWEL_OK);
    CHECK(strstr(json, "\"mode\":\"compressed+condensed\"") || strstr(json, "\"mode\": \"compressed+condensed\""));
    CHECK(strstr(json, "\"alignment\":1") || strstr(json, "\"alignment\": 1"));
    CHECK(strstr(json, "\"data_start\":6144") || strstr(json, "\"data_start\": 6144"));
    free(json);
    (void)info;
    /* Packed sizes are the stream's growth across each file; offsets follow. */
    static const uint64_t packed[] = {200, 67, 414}, offset[] = {6144, 6344, 6411};
    for (size_t i = 0; i < 3; i++) {
        CHECK_EQ_U64(trowel_archive_entry(a, i)->packed_size, packed[i]);
        CHECK_EQ_U64(trowel_archive_entry(a, i)->offset, offset[i]);
    }
    /* Out of order reads restart the stream and still give the right bytes. */
    size_t order[] = {2, 0, 1, 1};
    for (size_t k = 0; k < 4; k++) {
        size_t n;
        trowel_status st;
        uint8_t *d = read_entry(ctx, a, order[k], &n, &st);
        CHECK_EQ_U64(st, TROWEL_OK);
        char got[65], want[65];
        sha256_hex(d, n, got);
        REQUIRE(sha256_lookup(RFG "xray_effect.str2_pc.sha256", trowel_archive_entry(a, order[k])->name, want));
        CHECK_STR(got, want);
        free(d);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

/* -------------------------------------------------- archives built here */

typedef struct vfile {
    const char *name;
    buf data;
} vfile;

static size_t up(size_t v, size_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

/* A v3 packfile of files in mode flags (bit 0 compressed, bit 1 condensed),
 * condensed data aligned to align, the way Volition's writer lays it out. */
static buf build_v3(const vfile *files, size_t n, uint32_t flags, size_t align)
{
    size_t names_size = 0;
    for (size_t i = 0; i < n; i++)
        names_size += strlen(files[i].name) + 1;
    size_t dir_size = 28 * n, names_at = 2048 + up(dir_size, 2048);
    size_t data_at = names_at + up(names_size, 2048);
    size_t cap = data_at + 64;
    for (size_t i = 0; i < n; i++)
        cap += compressBound((uLong)files[i].data.len) + 4096 + align;
    buf b = {calloc(1, cap), 0};
    uint8_t *p = b.data;
    set_u32(p, 0x51890ACE);
    set_u32(p + 4, 3);
    set_u32(p + 0x14C, flags);
    set_u32(p + 0x154, (uint32_t)n);
    set_u32(p + 0x15C, (uint32_t)dir_size);
    set_u32(p + 0x160, (uint32_t)names_size);
    size_t name_at = 0, at = data_at, data_size = 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (flags == 3)
        deflateInit(&z, 9);
    for (size_t i = 0; i < n; i++) {
        const buf *d = &files[i].data;
        uint8_t *e = p + 2048 + 28 * i;
        set_u32(e, (uint32_t)name_at);
        set_u32(e + 12, vhash(files[i].name));
        set_u32(e + 16, (uint32_t)d->len);
        memcpy(p + names_at + name_at, files[i].name, strlen(files[i].name) + 1);
        name_at += strlen(files[i].name) + 1;
        bool last = i + 1 == n;
        size_t csize = 0xFFFFFFFF;
        set_u32(e + 8, (uint32_t)(flags == 3 ? data_size : at - data_at)); /* start */
        if (flags == 0 || flags == 2) {
            memcpy(p + at, d->data, d->len);
            size_t pad = last ? 0 : up(d->len, flags ? align : 2048) - d->len;
            at += d->len + pad;
            data_size += d->len + pad;
        } else if (flags == 1) {
            uLongf zn = compressBound((uLong)d->len);
            compress2(p + at, &zn, d->data, (uLong)d->len, 9);
            csize = zn;
            at += last ? zn : up(zn, 2048);
            data_size += last ? d->len : up(d->len, 2048);
        } else {
            size_t pad = last ? 0 : up(d->len, align) - d->len;
            uint8_t *fed = calloc(1, d->len + pad + 1);
            memcpy(fed, d->data, d->len);
            z.next_in = fed;
            z.avail_in = (uInt)(d->len + pad);
            z.next_out = p + at;
            z.avail_out = (uInt)(cap - at);
            deflate(&z, Z_SYNC_FLUSH);
            csize = (size_t)(z.next_out - (p + at));
            at += csize;
            data_size += d->len + pad;
            free(fed);
        }
        set_u32(e + 20, (uint32_t)csize);
    }
    if (flags == 3)
        deflateEnd(&z);
    set_u32(p + 0x164, (uint32_t)data_size);
    set_u32(p + 0x168, flags & 1 ? (uint32_t)(at - data_at) : 0xFFFFFFFF);
    set_u32(p + 0x158, (uint32_t)at);
    b.len = at;
    return b;
}

static vfile *sample_files(size_t *n)
{
    static const char *const words[] = {"guerrilla ", "mars ", "edf ", "\n"};
    static const char *const names[] = {"a.txt", "empty.bin", "Upper.Case.rfgzone_pc", "b.str2_pc",
                                        "c.xtbl"};
    static const size_t sizes[] = {5000, 0, 70000, 17, 33333};
    *n = 5;
    vfile *f = calloc(5, sizeof *f);
    for (size_t i = 0; i < 5; i++) {
        f[i].name = names[i];
        f[i].data = make_text_from(words, 4, sizes[i]);
        if (i == 2)
            fill_random(f[i].data.data, 20000, 5);
    }
    return f;
}

static void free_files(vfile *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_free(&f[i].data);
    free(f);
}

static void check_reads_back(const buf *arc, const vfile *files, size_t n, const char *alignment)
{
    trowel_ctx *ctx = new_ctx();
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_bytes(ctx, arc->data, arc->len, &in, &st);
    REQUIRE(st == TROWEL_OK);
    REQUIRE(trowel_archive_entry_count(a) == n);
    for (size_t i = 0; i < n; i++) {
        CHECK_STR(trowel_archive_entry(a, i)->name, files[i].name);
        size_t got;
        uint8_t *d = read_entry(ctx, a, i, &got, &st);
        CHECK_EQ_U64(st, TROWEL_OK);
        CHECK(got == files[i].data.len && (got == 0 || memcmp(d, files[i].data.data, got) == 0));
        free(d);
    }
    if (alignment) {
        char *json = NULL;
        REQUIRE(trowel_archive_to_json(a, TROWEL_JSON_INFO, &json) == TROWEL_OK);
        CHECK(strstr(json, alignment) != NULL);
        free(json);
    }
    int problems = 0;
    CHECK_EQ_U64(trowel_archive_verify(a, count_problem, &problems), TROWEL_OK);
    CHECK_EQ_U64(problems, 0);
    trowel_archive_close(a);
    trowel_input_close(in);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

static void test_every_mode_reads_back(void)
{
    size_t n;
    vfile *f = sample_files(&n);
    buf raw = build_v3(f, n, 0, 0), comp = build_v3(f, n, 1, 0);
    check_reads_back(&raw, f, n, NULL);
    check_reads_back(&comp, f, n, NULL);
    size_t aligns[] = {16, 64, 1};
    const char *want[] = {"\"alignment\":16", "\"alignment\":64", "\"alignment\":1"};
    for (size_t k = 0; k < 3; k++) {
        buf cond = build_v3(f, n, 2, aligns[k]), both = build_v3(f, n, 3, aligns[k]);
        check_reads_back(&cond, f, n, want[k]);
        check_reads_back(&both, f, n, want[k]);
        buf_free(&cond);
        buf_free(&both);
    }
    buf_free(&raw);
    buf_free(&comp);
    free_files(f, n);
}

/* ------------------------------------------------------------- hostile */

static trowel_status open_status(const buf *b, char *msg, size_t cap)
{
    trowel_ctx *ctx = new_ctx();
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_bytes(ctx, b->data, b->len, &in, &st);
    snprintf(msg, cap, "%s", trowel_ctx_last_error(ctx)->message);
    trowel_archive_close(a);
    trowel_input_close(in);
    if (ctx->mem_in_use != 0)
        st = TROWEL_ERR_NOMEM; /* a leak shows as a wrong status */
    trowel_ctx_free(ctx);
    return st;
}

static void test_other_versions_and_magics_have_their_own_messages(void)
{
    size_t n;
    vfile *f = sample_files(&n);
    buf b = build_v3(f, n, 0, 0);
    char msg[512];
    set_u32(b.data + 4, 2);
    CHECK_EQ_U64(open_status(&b, msg, sizeof msg), TROWEL_ERR_UNSUPPORTED);
    CHECK_STR(msg, "packfile version 2 (Summoner 2) has no known layout");
    set_u32(b.data + 4, 7);
    CHECK_EQ_U64(open_status(&b, msg, sizeof msg), TROWEL_ERR_UNSUPPORTED);
    CHECK_STR(msg, "packfile version 7 is unknown (trowel reads 1, 3, 4, 6, 10 and 17)");
    set_u32(b.data + 4, 3);
    memcpy(b.data, "\xce\x0d\x0a\x89", 4);
    CHECK_EQ_U64(open_status(&b, msg, sizeof msg), TROWEL_ERR_CORRUPT);
    CHECK(strstr(msg, "magic is damaged") != NULL);
    memcpy(b.data, "\x51\x89\x0a\xce", 4); /* big-endian: the version reads 0x03000000 */
    CHECK_EQ_U64(open_status(&b, msg, sizeof msg), TROWEL_ERR_UNSUPPORTED);
    CHECK_STR(msg, "packfile version 50331648 is unknown (trowel reads 1, 3, 4, 6, 10 and 17)");
    buf_free(&b);
    free_files(f, n);
}

static void test_hostile_directories_are_refused(void)
{
    size_t n;
    vfile *f = sample_files(&n);
    buf good = build_v3(f, n, 3, 16);
    char msg[512];
    buf b = {malloc(good.len), good.len};
    /* A count far past the file: refused before anything is allocated for it. */
    memcpy(b.data, good.data, good.len);
    set_u32(b.data + 0x154, 0x09000000);
    set_u32(b.data + 0x15C, 0xFFFFFFF0);
    CHECK_EQ_U64(open_status(&b, msg, sizeof msg), TROWEL_ERR_TRUNCATED);
    /* More files than the directory size holds. */
    memcpy(b.data, good.data, good.len);
    set_u32(b.data + 0x154, 6);
    CHECK_EQ_U64(open_status(&b, msg, sizeof msg), TROWEL_ERR_CORRUPT);
    CHECK_STR(msg, "6 files need 168 directory bytes, the header gives 140");
    /* A name offset past the names. */
    memcpy(b.data, good.data, good.len);
    set_u32(b.data + 2048 + 28 * 2, 5000);
    CHECK_EQ_U64(open_status(&b, msg, sizeof msg), TROWEL_ERR_CORRUPT);
    CHECK(strstr(msg, "entry 2's name offset 5000 is past") != NULL);
    /* A last name without its NUL. */
    memcpy(b.data, good.data, good.len);
    uint32_t names_size = (uint32_t)b.data[0x160] | (uint32_t)b.data[0x161] << 8;
    set_u32(b.data + 0x160, names_size - 1);
    CHECK_EQ_U64(open_status(&b, msg, sizeof msg), TROWEL_ERR_CORRUPT);
    CHECK(strstr(msg, "entry 4's name has no NUL") != NULL);
    /* Sizes that add up under no alignment. */
    memcpy(b.data, good.data, good.len);
    set_u32(b.data + 0x164, 12345);
    CHECK_EQ_U64(open_status(&b, msg, sizeof msg), TROWEL_ERR_CORRUPT);
    CHECK(strstr(msg, "under no alignment") != NULL);
    /* Cut in the header or the directory. */
    buf cut = {good.data, 1000};
    CHECK_EQ_U64(open_status(&cut, msg, sizeof msg), TROWEL_ERR_TRUNCATED);
    cut.len = 2048 + 50;
    CHECK_EQ_U64(open_status(&cut, msg, sizeof msg), TROWEL_ERR_TRUNCATED);
    buf_free(&b);
    buf_free(&good);
    free_files(f, n);
}

static void test_solid_stream_that_ends_early(void)
{
    size_t n;
    vfile *f = sample_files(&n);
    buf good = build_v3(f, n, 3, 16);
    trowel_ctx *ctx = new_ctx();
    trowel_input *in;
    trowel_status st;
    /* The stream is cut inside the last file's compressed bytes. */
    size_t len = good.len - 100;
    trowel_archive *a = open_bytes(ctx, good.data, len, &in, &st);
    REQUIRE(st == TROWEL_OK);
    for (size_t i = 0; i + 1 < n; i++) {
        size_t got;
        free(read_entry(ctx, a, i, &got, &st));
        CHECK_EQ_U64(st, TROWEL_OK);
    }
    size_t got;
    free(read_entry(ctx, a, n - 1, &got, &st));
    CHECK_EQ_U64(st, TROWEL_ERR_TRUNCATED);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "offset") == NULL); /* offset is a field */
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, len);
    trowel_archive_close(a);
    trowel_input_close(in);
    /* Raw data past the end of the file: the entry names the offset. */
    buf raw = build_v3(f, n, 0, 0);
    a = open_bytes(ctx, raw.data, raw.len - 10, &in, &st);
    REQUIRE(st == TROWEL_OK);
    free(read_entry(ctx, a, n - 1, &got, &st));
    CHECK_EQ_U64(st, TROWEL_ERR_TRUNCATED);
    trowel_archive_close(a);
    trowel_input_close(in);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
    buf_free(&raw);
    buf_free(&good);
    free_files(f, n);
}

static void test_bad_name_hash_fails_verify(void)
{
    size_t n;
    vfile *f = sample_files(&n);
    buf b = build_v3(f, n, 0, 0);
    set_u32(b.data + 2048 + 28 * 1 + 12, 0x12345678);
    trowel_ctx *ctx = new_ctx();
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_bytes(ctx, b.data, b.len, &in, &st);
    REQUIRE(st == TROWEL_OK);
    int problems = 0;
    CHECK_EQ_U64(trowel_archive_verify(a, count_problem, &problems), TROWEL_ERR_VERIFY);
    CHECK_EQ_U64(problems, 1);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    buf_free(&b);
    free_files(f, n);
}

TEST_MAIN(TEST(test_corpus_archives_extract_to_listed_sha256_in_order),
          TEST(test_corpus_str2_is_compressed_condensed_unaligned),
          TEST(test_every_mode_reads_back),
          TEST(test_other_versions_and_magics_have_their_own_messages),
          TEST(test_hostile_directories_are_refused), TEST(test_solid_stream_that_ends_early),
          TEST(test_bad_name_hash_fails_verify))
