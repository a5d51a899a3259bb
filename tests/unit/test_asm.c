/*
 * Tests of the Volition ASM format (src/format/volition/asm*.c) and of its
 * update after a repack: the corpus ASMs (v5, v12) go to JSON and back to
 * the same bytes; v11 and v12 files with containers built here do too;
 * hostile files are refused (or, when the fault is in a container, open
 * damaged) with the message they deserve; and the real pair in
 * dlcp01_activities.vpp_pc (eight .str2_pc files and the ASM that
 * describes them, read through nested archives) shows that rebuilding each
 * str2 from its entries and updating the ASM gives the ASM back, that a
 * changed str2 leaves exactly its new sizes and offsets in the ASM, and
 * that a file set that does not match its container is refused.
 */
#include "files.h"
#include "test.h"
#include "vpp_hash.h"

#include "core/module.h"
#include "format/volition/asm.h"

#include <json-c/json.h>
#include <zlib.h>

#define RFG TROWEL_CORPUS_DIR "/volition/rfg/"
#define SR4 TROWEL_CORPUS_DIR "/volition/sr4/"

/* -------------------------------------------------------------- helpers */

static trowel_archive *open_mem(trowel_ctx *ctx, const uint8_t *d, size_t n, const char *fmt,
                                trowel_input **in, trowel_status *st)
{
    trowel_archive *a = NULL;
    *st = trowel_input_open_memory(ctx, d, n, "t.asm_pc", in);
    if (*st == TROWEL_OK)
        *st = trowel_archive_open(ctx, *in, fmt ? trowel_format_find(fmt) : NULL, &a);
    return a;
}

/* convert --to json, then create -t asm from it: the bytes made. */
static bytes json_round_trip(trowel_ctx *ctx, const uint8_t *d, size_t n, char **json_out)
{
    bytes out = {NULL, 0};
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, d, n, "asm", &in, &st);
    trowel_sink *js = NULL, *bin = NULL;
    if (st == TROWEL_OK)
        st = trowel_sink_open_memory(ctx, &js);
    if (st == TROWEL_OK)
        st = trowel_convert(ctx, a, "json", NULL, 0, js);
    size_t jn = 0;
    const uint8_t *jd = st == TROWEL_OK ? trowel_sink_data(js, &jn) : NULL;
    char *json = jd ? strndup((const char *)jd, jn) : NULL;
    trowel_create_params p = {.manifest_json = json};
    if (st == TROWEL_OK)
        st = trowel_sink_open_memory(ctx, &bin);
    if (st == TROWEL_OK)
        st = trowel_create(ctx, trowel_format_find("asm"), &p, bin);
    if (st == TROWEL_OK) {
        const uint8_t *bd = trowel_sink_data(bin, &out.size);
        out.data = malloc(out.size + 1);
        memcpy(out.data, bd, out.size);
    } else {
        fprintf(stderr, "  round trip: %s\n", trowel_ctx_last_error(ctx)->message);
    }
    trowel_sink_discard(js);
    trowel_sink_discard(bin);
    trowel_archive_close(a);
    trowel_input_close(in);
    if (json_out)
        *json_out = json;
    else
        free(json);
    return out;
}

static void check_corpus_round_trip(const char *path, unsigned version, size_t containers)
{
    bytes f = read_file(path);
    REQUIRE_INPUT(f.data);
    trowel_ctx *ctx = trowel_ctx_new();
    char *json = NULL;
    bytes back = json_round_trip(ctx, f.data, f.size, &json);
    CHECK_EQ_U64(back.size, f.size);
    CHECK(back.data && memcmp(back.data, f.data, f.size) == 0);
    json_object *o = json_tokener_parse(json), *m, *v, *c;
    CHECK(o && json_object_object_get_ex(o, "asm", &m));
    CHECK(json_object_object_get_ex(m, "version", &v) && json_object_get_int(v) == (int)version);
    CHECK(json_object_object_get_ex(m, "containers", &c) &&
          json_object_array_length(c) == containers);
    json_object_put(o);
    free(json);
    free(back.data);
    free(f.data);
    trowel_ctx_free(ctx);
}

static void test_corpus_asms_go_to_json_and_back_byte_identical(void)
{
    check_corpus_round_trip(RFG "cloth_containers.asm_pc", 5, 57);
    check_corpus_round_trip(RFG "dlc_activity_containers.asm_pc", 5, 8);
    check_corpus_round_trip(SR4 "template_customize_item.asm_pc", 12, 0);
}

static void test_v5_container_fields(void)
{
    bytes f = read_file(RFG "dlc_activity_containers.asm_pc");
    REQUIRE_INPUT(f.data);
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, f.data, f.size, NULL, &in, &st);
    REQUIRE(st == TROWEL_OK);
    CHECK_STR(trowel_format_id(trowel_archive_format(a)), "asm");
    CHECK_EQ_U64(trowel_archive_entry_count(a), 8);
    const trowel_entry *e = trowel_archive_entry(a, 0);
    CHECK_STR(e->name, "dlc_ORaid_07_08_Level_1");
    CHECK_EQ_U64(e->size, 13752);       /* the str2's layer_pc, decoded */
    CHECK_EQ_U64(e->packed_size, 3715); /* the str2's compressed size */
    CHECK_EQ_U64(e->offset, 6144);      /* the str2's data start */
    const trowel_prop *prims = trowel_props_find(e->extra, "primitives");
    CHECK(prims && prims->list_len == 1 && strcmp(prims->list[0], "dlc01_07_08_128.layer_pc") == 0);
    CHECK_EQ_U64(trowel_props_find(e->extra, "flags")->u, 0x80);
    CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_OK);
    trowel_sink *s;
    trowel_sink_open_null(ctx, &s);
    CHECK(trowel_archive_read_entry(a, 0, s) == TROWEL_ERR_UNSUPPORTED);
    trowel_sink_discard(s);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(f.data);
}

/* ---------------------------------------------- v11 / v12 built by hand */

typedef struct wbuf {
    uint8_t d[4096];
    size_t n;
} wbuf;

static void w8(wbuf *b, unsigned v) { b->d[b->n++] = (uint8_t)v; }
static void w16(wbuf *b, unsigned v) { w8(b, v & 0xFF), w8(b, v >> 8); }
static void w32(wbuf *b, uint32_t v) { w16(b, v & 0xFFFF), w16(b, v >> 16); }
static void wstr(wbuf *b, const char *s)
{
    w16(b, (unsigned)strlen(s));
    memcpy(b->d + b->n, s, strlen(s));
    b->n += strlen(s);
}

/* A v11/v12 file: remaps, one container with aux data and two primitives. */
static wbuf build_v11(unsigned version, uint32_t second_gpu_in_list)
{
    wbuf b = {{0}, 0};
    w32(&b, 0xBEEFFEED);
    w16(&b, version);
    w16(&b, 1);
    for (int t = 0; t < 3; t++) {
        w32(&b, 2);
        wstr(&b, t == 0 ? "alloc a" : t == 1 ? "prim a" : "cont a");
        w8(&b, 1);
        wstr(&b, "second");
        w8(&b, 7);
    }
    wstr(&b, "mission_x");
    w8(&b, 3);
    w16(&b, 0x0101);
    w16(&b, 2);
    w32(&b, 216);
    if (version == 12)
        w8(&b, 9);
    wstr(&b, "parent_y");
    w32(&b, 3);
    w8(&b, 0xAB), w8(&b, 0x00), w8(&b, 0xFF);
    w32(&b, 5000);
    w32(&b, 100), w32(&b, 200), w32(&b, 300), w32(&b, second_gpu_in_list);
    wstr(&b, "a.cmesh_pc");
    w8(&b, 1), w8(&b, 2), w8(&b, 4), w8(&b, 0);
    w32(&b, 100), w32(&b, 200);
    w8(&b, 5);
    wstr(&b, "b.cpeg_pc");
    w8(&b, 6), w8(&b, 0), w8(&b, 4), w8(&b, 1);
    w32(&b, 300), w32(&b, 400);
    w8(&b, 0);
    return b;
}

static void test_v11_and_v12_with_containers_round_trip(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    for (unsigned v = 11; v <= 12; v++) {
        wbuf b = build_v11(v, 400);
        bytes back = json_round_trip(ctx, b.d, b.n, NULL);
        CHECK_EQ_U64(back.size, b.n);
        CHECK(back.data && memcmp(back.data, b.d, b.n) == 0);
        free(back.data);
        trowel_input *in;
        trowel_status st;
        trowel_archive *a = open_mem(ctx, b.d, b.n, "asm", &in, &st);
        REQUIRE(st == TROWEL_OK);
        CHECK_EQ_U64(trowel_archive_entry(a, 0)->size, 1000);
        CHECK_EQ_U64(trowel_props_find(trowel_archive_info(a), "allocator_types")->u, 2);
        CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_OK);
        trowel_archive_close(a);
        trowel_input_close(in);
    }
    trowel_ctx_free(ctx);
}

static void count_problem(void *user, const trowel_error *e)
{
    (void)e;
    ++*(int *)user;
}

static void test_verify_finds_a_size_list_that_disagrees(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    wbuf b = build_v11(12, 401);
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, b.d, b.n, "asm", &in, &st);
    REQUIRE(st == TROWEL_OK);
    int problems = 0;
    CHECK(trowel_archive_verify(a, count_problem, &problems) == TROWEL_ERR_VERIFY);
    CHECK(problems == 1);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

/* Opens d: the status, the last error's message and whether the archive
 * opened damaged (with its entry count). */
static trowel_status open_status(const uint8_t *d, size_t n, char *msg, size_t cap, bool *damaged,
                                 size_t *entries)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(ctx, d, n, "asm", &in, &st);
    snprintf(msg, cap, "%s", trowel_ctx_last_error(ctx)->message);
    *damaged = a && trowel_archive_damaged(a);
    *entries = a ? trowel_archive_entry_count(a) : 0;
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return st;
}

/* A fault in the header or the remap tables refuses the file; one in a
 * container (or bytes after the last) opens it damaged, with the
 * containers before the fault (tests/unit/test_vpp_damaged.c checks the
 * messages and every cut of the seeds). */
static void test_hostile_files_are_refused_or_damaged(void)
{
    char msg[512];
    bool damaged;
    size_t entries;
    wbuf b = build_v11(12, 400);
    bool refused = false;
    for (size_t cut = b.n; cut-- > 0;) {
        trowel_status st = open_status(b.d, cut, msg, sizeof msg, &damaged, &entries);
        CHECK(st != TROWEL_OK || damaged); /* never whole */
        CHECK(st != TROWEL_OK || !refused); /* a cut in the header refuses every shorter one */
        refused = refused || st != TROWEL_OK;
    }
    CHECK(refused);
    CHECK(open_status(b.d, b.n - 1, msg, sizeof msg, &damaged, &entries) == TROWEL_OK);
    CHECK(damaged);
    CHECK_EQ_U64(entries, 0); /* its one container is the one cut */

    wbuf t = b;
    t.d[t.n++] = 0;
    CHECK(open_status(t.d, t.n, msg, sizeof msg, &damaged, &entries) == TROWEL_OK);
    CHECK(damaged);
    CHECK_EQ_U64(entries, 1);

    t = b;
    t.d[6] = 0xFF, t.d[7] = 0xFF; /* 65535 containers in a small file */
    CHECK(open_status(t.d, t.n, msg, sizeof msg, &damaged, &entries) == TROWEL_OK);
    CHECK(damaged);
    CHECK_EQ_U64(entries, 1);

    t = b;
    t.d[8] = 0xFF, t.d[9] = 0xFF, t.d[10] = 0xFF, t.d[11] = 0x7F; /* remap count */
    CHECK(open_status(t.d, t.n, msg, sizeof msg, &damaged, &entries) == TROWEL_ERR_CORRUPT);

    t = b;
    t.d[14] = 0x01; /* "alloc a" -> a control byte in a remap name */
    CHECK(open_status(t.d, t.n, msg, sizeof msg, &damaged, &entries) == TROWEL_ERR_CORRUPT);
    CHECK_STR(msg, "a name holds byte 0x01 (names are printable ASCII)");

    t = b;
    t.d[4] = 7;
    CHECK(open_status(t.d, t.n, msg, sizeof msg, &damaged, &entries) == TROWEL_ERR_UNSUPPORTED);
    CHECK_STR(msg, "ASM version 7 is not supported (5, 11 and 12 are)");
}

static void test_create_needs_the_json_and_names_a_bad_field(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s;
    trowel_sink_open_memory(ctx, &s);
    const trowel_format *f = trowel_format_find("asm");
    trowel_create_params none = {0};
    CHECK(trowel_create(ctx, f, &none, s) == TROWEL_ERR_USAGE);
    trowel_create_params p = {.manifest_json =
        "{\"format\":\"asm\",\"entries\":[],\"asm\":{\"version\":5,\"containers\":"
        "[{\"name\":\"c\",\"type\":1,\"flags\":128,\"base_offset\":6144,\"read_size\":9,"
        "\"sizes\":[1],\"primitives\":[{\"name\":\"p\",\"type\":1,\"allocator\":0,\"flags\":0,"
        "\"split_ext\":0,\"cpu_size\":4294967296,\"gpu_size\":0}]}]}}"};
    CHECK(trowel_create(ctx, f, &p, s) == TROWEL_ERR_CORRUPT); /* bad data, not a bad call */
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "asm JSON: containers[0].primitives[0].cpu_size must be 0 to 4294967295");
    CHECK_EQ_U64(trowel_sink_written(s), 0);
    trowel_sink_discard(s);
    trowel_ctx_free(ctx);
}

/* ------------------------------------- the real pair: dlcp01_activities */

typedef struct str2_file {
    const char *name;
    const uint8_t *data;
    size_t len;
} str2_file;

/* A str2 the way the game writes one: v3, compressed+condensed, no
 * alignment, one zlib stream at level 9 sync-flushed after each file. */
static bytes build_str2(const str2_file *files, size_t n)
{
    size_t names = 0, cap = 6144 + 64;
    for (size_t i = 0; i < n; i++) {
        names += strlen(files[i].name) + 1;
        cap += compressBound((uLong)files[i].len) + 16;
    }
    bytes b = {calloc(1, cap), 0};
    uint8_t *p = b.data;
    set_u32(p, 0x51890ACE), set_u32(p + 4, 3), set_u32(p + 0x14C, 3), set_u32(p + 0x154, (uint32_t)n);
    set_u32(p + 0x15C, (uint32_t)(28 * n)), set_u32(p + 0x160, (uint32_t)names);
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit(&z, 9);
    size_t at = 6144, name_at = 0, data = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t *e = p + 2048 + 28 * i;
        set_u32(e, (uint32_t)name_at), set_u32(e + 8, (uint32_t)data);
        set_u32(e + 12, vhash(files[i].name)), set_u32(e + 16, (uint32_t)files[i].len);
        memcpy(p + 4096 + name_at, files[i].name, strlen(files[i].name) + 1);
        name_at += strlen(files[i].name) + 1;
        z.next_in = (Bytef *)(uintptr_t)files[i].data;
        z.avail_in = (uInt)files[i].len;
        z.next_out = p + at;
        z.avail_out = (uInt)(cap - at);
        deflate(&z, Z_SYNC_FLUSH);
        set_u32(e + 20, (uint32_t)(z.next_out - (p + at)));
        at = (size_t)(z.next_out - p);
        data += files[i].len;
    }
    deflateEnd(&z);
    set_u32(p + 0x158, (uint32_t)at), set_u32(p + 0x164, (uint32_t)data);
    set_u32(p + 0x168, (uint32_t)(at - 6144));
    b.size = at;
    return b;
}

/* Reads entry i of a into memory (malloc'd). */
static uint8_t *entry_bytes(trowel_ctx *ctx, trowel_archive *a, size_t i, size_t *n)
{
    trowel_sink *s;
    trowel_sink_open_memory(ctx, &s);
    uint8_t *out = NULL;
    if (trowel_archive_read_entry(a, i, s) == TROWEL_OK) {
        const uint8_t *d = trowel_sink_data(s, n);
        out = malloc(*n + 1);
        memcpy(out, d, *n);
    }
    trowel_sink_discard(s);
    return out;
}

/* Updates m from a str2 given as bytes (opened and read back by the vpp
 * reader, as create will). */
static trowel_status update_from_bytes(trowel_ctx *ctx, vol_asm *m, const char *name,
                                       const bytes *str2)
{
    trowel_input *in;
    trowel_archive *a = NULL;
    trowel_status st = trowel_input_open_memory(ctx, str2->data, str2->size, name, &in);
    if (st == TROWEL_OK)
        st = trowel_archive_open(ctx, in, trowel_format_find("vpp"), &a);
    vol_str2_facts facts;
    vol_str2_file *files = NULL;
    if (st == TROWEL_OK)
        st = vol_str2_facts_of(a, name, &facts, &files);
    if (st == TROWEL_OK)
        st = vol_asm_update(ctx, m, &facts);
    trowel_mem_free(ctx, files);
    trowel_archive_close(a);
    trowel_input_close(in);
    return st;
}

static bytes write_model(trowel_ctx *ctx, const vol_asm *m)
{
    bytes out = {NULL, 0};
    trowel_sink *s;
    trowel_sink_open_memory(ctx, &s);
    if (vol_asm_write(ctx, m, s) == TROWEL_OK) {
        const uint8_t *d = trowel_sink_data(s, &out.size);
        out.data = malloc(out.size + 1);
        memcpy(out.data, d, out.size);
    }
    trowel_sink_discard(s);
    return out;
}

typedef struct pair {
    trowel_ctx *ctx;
    bytes vpp;
    trowel_input *in;
    trowel_archive *outer;
    bytes asm_bytes;
    vol_asm *model;
} pair;

static bool open_pair(pair *p)
{
    memset(p, 0, sizeof *p);
    p->vpp = read_file(RFG "dlcp01_activities.vpp_pc");
    if (!p->vpp.data)
        return false;
    p->ctx = trowel_ctx_new();
    trowel_input_open_memory(p->ctx, p->vpp.data, p->vpp.size, "dlcp01_activities.vpp_pc", &p->in);
    if (trowel_archive_open(p->ctx, p->in, NULL, &p->outer) != TROWEL_OK)
        return true;
    size_t last = trowel_archive_entry_count(p->outer) - 1;
    p->asm_bytes.data = entry_bytes(p->ctx, p->outer, last, &p->asm_bytes.size);
    trowel_reader r;
    trowel_input *ain;
    trowel_input_open_memory(p->ctx, p->asm_bytes.data, p->asm_bytes.size, "asm", &ain);
    trowel_reader_init(&r, p->ctx, ain);
    vol_asm_read(p->ctx, &r, &p->model);
    trowel_input_close(ain);
    return true;
}

static void close_pair(pair *p)
{
    vol_asm_free(p->ctx, p->model);
    trowel_archive_close(p->outer);
    trowel_input_close(p->in);
    trowel_ctx_free(p->ctx);
    free(p->asm_bytes.data);
    free(p->vpp.data);
}

/* Rebuilds str2 number i of the pair from its entries, read through the
 * nested archive, after change (may be NULL) edits the first entry. */
static bytes rebuild_str2(pair *p, size_t i, void (*change)(uint8_t **, size_t *))
{
    trowel_archive *str2;
    bytes out = {NULL, 0};
    if (trowel_archive_open_entry(p->outer, i, NULL, &str2) != TROWEL_OK)
        return out;
    size_t n = trowel_archive_entry_count(str2);
    str2_file files[8];
    uint8_t *data[8] = {0};
    for (size_t k = 0; k < n && k < 8; k++) {
        files[k].name = trowel_archive_entry(str2, k)->name;
        data[k] = entry_bytes(p->ctx, str2, k, &files[k].len);
        if (k == 0 && change)
            change(&data[k], &files[k].len);
        files[k].data = data[k];
    }
    out = build_str2(files, n < 8 ? n : 8);
    for (size_t k = 0; k < 8; k++)
        free(data[k]);
    trowel_archive_close(str2);
    return out;
}

static void test_rebuilt_str2s_update_the_asm_to_its_original_bytes(void)
{
    pair p;
    REQUIRE_INPUT(open_pair(&p));
    REQUIRE(p.outer && p.model);
    CHECK_EQ_U64(trowel_archive_entry_count(p.outer), 9);
    /* Spoil every container first, so the update must restore each field. */
    for (uint16_t c = 0; c < p.model->container_count; c++) {
        p.model->containers[c].base_offset = 1;
        p.model->containers[c].read_size = 2;
        p.model->containers[c].prims[0].cpu_size = 3;
    }
    for (size_t i = 0; i + 1 < trowel_archive_entry_count(p.outer); i++) {
        const trowel_entry *e = trowel_archive_entry(p.outer, i);
        bytes str2 = rebuild_str2(&p, i, NULL);
        REQUIRE(str2.data);
        /* The game's str2 is this one but for the runtime pointers it left
         * in the header (0x16C..0x17B). */
        size_t on;
        uint8_t *orig = entry_bytes(p.ctx, p.outer, i, &on);
        CHECK_EQ_U64(str2.size, on);
        memset(orig + 0x16C, 0, 16);
        CHECK(orig && memcmp(orig, str2.data, on) == 0);
        CHECK(update_from_bytes(p.ctx, p.model, e->name, &str2) == TROWEL_OK);
        free(orig);
        free(str2.data);
    }
    bytes back = write_model(p.ctx, p.model);
    CHECK_EQ_U64(back.size, p.asm_bytes.size);
    CHECK(back.data && memcmp(back.data, p.asm_bytes.data, back.size) == 0);
    free(back.data);
    close_pair(&p);
}

static void grow_entry(uint8_t **d, size_t *n)
{
    *d = realloc(*d, *n + 5000);
    for (size_t i = 0; i < 5000; i++)
        (*d)[*n + i] = (uint8_t)(i * 7919u >> 3);
    *n += 5000;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void test_a_changed_str2_leaves_its_new_sizes_in_the_asm(void)
{
    pair p;
    REQUIRE_INPUT(open_pair(&p));
    REQUIRE(p.outer && p.model);
    const trowel_entry *e = trowel_archive_entry(p.outer, 0); /* dlc_ORaid_07_08_Level_1 */
    bytes str2 = rebuild_str2(&p, 0, grow_entry);
    REQUIRE(str2.data);
    CHECK(update_from_bytes(p.ctx, p.model, e->name, &str2) == TROWEL_OK);
    vol_asm_container *c = vol_asm_find(p.model, e->name);
    REQUIRE(c);
    CHECK_EQ_U64(c->base_offset, 6144);
    CHECK_EQ_U64(c->read_size, le32(str2.data + 0x168));    /* compressed size */
    CHECK_EQ_U64(c->prims[0].cpu_size, 13752 + 5000);
    CHECK_EQ_U64(c->prims[0].gpu_size, 0);
    CHECK_EQ_U64(c->size_count, 1);
    CHECK_EQ_U64(c->sizes[0], 13752 + 5000);
    CHECK(c->flags & 0x80);
    /* The other containers are untouched: written, the file differs only
     * in this container's numbers. */
    bytes back = write_model(p.ctx, p.model);
    CHECK_EQ_U64(back.size, p.asm_bytes.size);
    size_t differ = 0;
    for (size_t i = 0; back.data && i < back.size; i++)
        differ += back.data[i] != p.asm_bytes.data[i];
    CHECK(differ > 0 && differ <= 12);
    /* Read back by the format, the container shows the new numbers. */
    trowel_input *in;
    trowel_status st;
    trowel_archive *a = open_mem(p.ctx, back.data, back.size, "asm", &in, &st);
    REQUIRE(st == TROWEL_OK);
    CHECK_EQ_U64(trowel_archive_entry(a, 0)->size, 18752);
    CHECK_EQ_U64(trowel_archive_entry(a, 0)->packed_size, le32(str2.data + 0x168));
    CHECK(trowel_archive_verify(a, NULL, NULL) == TROWEL_OK);
    trowel_archive_close(a);
    trowel_input_close(in);
    free(back.data);
    free(str2.data);
    close_pair(&p);
}

static void test_a_file_set_that_does_not_match_is_refused(void)
{
    pair p;
    REQUIRE_INPUT(open_pair(&p));
    REQUIRE(p.outer && p.model);
    bytes before = write_model(p.ctx, p.model);
    vol_str2_file one[2] = {{"dlc01_07_08_128.layer_pc", 10}, {"extra.txt", 4}};
    vol_str2_facts f = {"dlc_ORaid_07_08_Level_1.str2_pc", 6144, 100, one, 2};
    CHECK(vol_asm_update(p.ctx, p.model, &f) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(p.ctx)->message,
              "the str2's files do not match ASM container 'dlc_ORaid_07_08_Level_1': the "
              "str2's file 'extra.txt' is not a primitive of the container");
    vol_str2_file renamed[1] = {{"other.layer_pc", 10}};
    f.files = renamed;
    f.file_count = 1;
    CHECK(vol_asm_update(p.ctx, p.model, &f) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(p.ctx)->message,
              "the str2's files do not match ASM container 'dlc_ORaid_07_08_Level_1': "
              "primitive 'dlc01_07_08_128.layer_pc' is where the str2 has 'other.layer_pc' "
              "(the files must be the primitives, in order)");
    f.file_count = 0;
    CHECK(vol_asm_update(p.ctx, p.model, &f) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(p.ctx)->message,
              "the str2's files do not match ASM container 'dlc_ORaid_07_08_Level_1': "
              "primitive 'dlc01_07_08_128.layer_pc' has no file in the str2");
    f.name = "nowhere.str2_pc";
    CHECK(vol_asm_update(p.ctx, p.model, &f) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(p.ctx)->message,
              "the ASM has no container named after 'nowhere.str2_pc'");
    bytes after = write_model(p.ctx, p.model); /* refusals changed nothing */
    CHECK(before.size == after.size && memcmp(before.data, after.data, after.size) == 0);
    free(before.data);
    free(after.data);
    close_pair(&p);
}

static void test_split_primitives_take_their_gpu_file(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    wbuf b = build_v11(12, 400);
    trowel_input *in;
    trowel_input_open_memory(ctx, b.d, b.n, "x", &in);
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    vol_asm *m = NULL;
    REQUIRE(vol_asm_read(ctx, &r, &m) == TROWEL_OK);
    vol_str2_file files[4] = {{"a.cmesh_pc", 11}, {"a.gmesh_pc", 22}, {"B.CPEG_PC", 33},
                              {"b.gpeg_pc", 44}};
    vol_str2_facts f = {"Mission_X.str2_pc", 300, 77, files, 4};
    CHECK(vol_asm_update(ctx, m, &f) == TROWEL_OK);
    const vol_asm_container *c = &m->containers[0];
    CHECK(c->base_offset == 300 && c->read_size == 77 && c->size_count == 4);
    CHECK(c->sizes[0] == 11 && c->sizes[1] == 22 && c->sizes[2] == 33 && c->sizes[3] == 44);
    CHECK(c->prims[1].cpu_size == 33 && c->prims[1].gpu_size == 44);
    f.file_count = 3; /* b's GPU file went missing */
    CHECK(vol_asm_update(ctx, m, &f) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "the str2's files do not match ASM container 'mission_x': primitive "
              "'b.cpeg_pc' has a GPU file in the ASM, none follows it in the str2");
    vol_asm_free(ctx, m);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

static void test_vpp_asm_option_needs_a_companion(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s, *c;
    trowel_sink_open_memory(ctx, &s);
    trowel_sink_open_memory(ctx, &c);
    const char *opts[] = {"asm=x.asm_pc"};
    trowel_create_params p = {.options = opts, .option_count = 1};
    CHECK(trowel_create(ctx, trowel_format_find("vpp"), &p, s) == TROWEL_ERR_USAGE);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "-O asm=FILE needs FILE given as the companion (trowel_create_with_companion; "
              "the trowel CLI does it)");
    CHECK_EQ_U64(trowel_sink_written(s), 0);
    CHECK(trowel_create_with_companion(ctx, trowel_format_find("vpp"), &p, NULL, c, s) ==
          TROWEL_ERR_USAGE);
    trowel_sink_discard(s);
    trowel_sink_discard(c);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_corpus_asms_go_to_json_and_back_byte_identical), TEST(test_v5_container_fields),
          TEST(test_v11_and_v12_with_containers_round_trip),
          TEST(test_verify_finds_a_size_list_that_disagrees), TEST(test_hostile_files_are_refused_or_damaged),
          TEST(test_create_needs_the_json_and_names_a_bad_field),
          TEST(test_rebuilt_str2s_update_the_asm_to_its_original_bytes),
          TEST(test_a_changed_str2_leaves_its_new_sizes_in_the_asm),
          TEST(test_a_file_set_that_does_not_match_is_refused),
          TEST(test_split_primitives_take_their_gpu_file),
          TEST(test_vpp_asm_option_needs_a_companion))
