/*
 * The head of `convert --to json` written by the streaming writer
 * (src/core/archive_json_head.c) against the one json-c prints
 * (trowel_archive_to_json, archive.c): byte for byte on an archive built
 * here with every kind of field, escapes and empty lists, and on the corpus
 * ASMs (their whole convert output starts with json-c's head); the cases
 * json-c prints its own way (grouped, repeated or reserved keys, doubles,
 * text that is not UTF-8) are sent to json-c. Also the property lists'
 * chunked storage (src/core/props.c): values of every size read back.
 */
#include "test.h"

#include "core/archive_json_head.h"
#include "core/module.h"

#include <json-c/json.h>

#define RFG TROWEL_CORPUS_DIR "/volition/rfg/"
#define SR4 TROWEL_CORPUS_DIR "/volition/sr4/"

typedef struct fake {
    trowel_archive a;
    trowel_input *in;
    trowel_entry entries[3];
    trowel_props *extra[3];
} fake;

/* An archive with every kind of field, made without a format. */
static void fake_open(trowel_ctx *ctx, fake *f)
{
    memset(f, 0, sizeof *f);
    static const trowel_format format = {.id = "fake"}; /* reads nothing */
    f->a.fmt = &format;
    static const char byte[] = "x";
    REQUIRE(trowel_input_open_memory(ctx, byte, 1, "dir/na\"me\\.bin", &f->in) == TROWEL_OK);
    f->a.ctx = ctx;
    f->a.in = f->a.raw_in = f->in;
    trowel_props *info = f->a.info = trowel_props_new(ctx);
    static const char *const names[] = {"a", "b\\c", "", "tab\there"};
    CHECK(trowel_props_add_str(info, "format", "fake") == TROWEL_OK);
    CHECK(trowel_props_add_uint(info, "version", UINT64_MAX) == TROWEL_OK);
    CHECK(trowel_props_add_int(info, "delta", -12345) == TROWEL_OK);
    CHECK(trowel_props_add_bool(info, "packed", true) == TROWEL_OK);
    CHECK(trowel_props_add_hex(info, "flags", 0x80) == TROWEL_OK);
    CHECK(trowel_props_add_list(info, "names", names, 4) == TROWEL_OK);
    CHECK(trowel_props_add_list(info, "none", names, 0) == TROWEL_OK);
    CHECK(trowel_props_add_str(info, "say", "\x01quote\" slash/ \xc3\xa9") == TROWEL_OK);
    for (size_t i = 0; i < 3; i++) {
        f->extra[i] = trowel_props_new(ctx);
        f->entries[i] = (trowel_entry){.name = i == 1 ? "sub/\"q\".txt" : "plain.txt",
                                       .size = i * 1000, .packed_size = i, .offset = 7 * i,
                                       .method = i ? "lzss" : "stored", .index = i,
                                       .extra = f->extra[i]};
    }
    CHECK(trowel_props_add_list_kept(f->extra[1], "parts", names, 4) == TROWEL_OK);
    CHECK(trowel_props_add_uint(f->extra[2], "type", 9) == TROWEL_OK);
    CHECK(trowel_props_add_bool(f->extra[2], "last", false) == TROWEL_OK);
    f->a.entries = f->entries;
    f->a.entry_count = 3;
}

static void fake_close(fake *f)
{
    for (size_t i = 0; i < 3; i++)
        trowel_props_free(f->extra[i]);
    trowel_props_free(f->a.info);
    trowel_input_close(f->in);
}

/* The head streamed as a whole document ("{", head, "}"), in *n bytes. */
static char *streamed(trowel_ctx *ctx, const trowel_archive *a, size_t *n)
{
    trowel_sink *s;
    *n = 0;
    if (trowel_sink_open_memory(ctx, &s) != TROWEL_OK)
        return NULL;
    trowel_json_writer *w = malloc(sizeof *w);
    trowel_jw_init(w, s);
    trowel_jw_begin_object(w);
    trowel_archive_json_head(a, w);
    trowel_jw_end_object(w);
    CHECK_EQ_U64(trowel_jw_finish(w, ctx), TROWEL_OK);
    free(w);
    const uint8_t *d = trowel_sink_data(s, n);
    char *text = strndup((const char *)d, *n);
    trowel_sink_discard(s);
    return text;
}

static void test_head_prints_as_json_c(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    fake f;
    fake_open(ctx, &f);
    CHECK(trowel_archive_json_head_streams(&f.a));
    char *want = NULL;
    REQUIRE(trowel_archive_to_json(&f.a, TROWEL_JSON_INFO | TROWEL_JSON_ENTRIES | TROWEL_JSON_PRETTY,
                                   &want) == TROWEL_OK);
    size_t n;
    char *got = streamed(ctx, &f.a, &n);
    REQUIRE(got != NULL);
    CHECK_EQ_U64(n, strlen(want));
    CHECK_STR(got, want);
    free(got);
    trowel_free(want);
    fake_close(&f);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    trowel_ctx_free(ctx);
}

/* Each change makes json-c print the head its own way: not streamed. */
static void test_head_left_to_json_c(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    static const char *const bad_list[] = {"ok", "caf\xe9"};
    for (int change = 0; change < 9; change++) {
        fake f;
        fake_open(ctx, &f);
        trowel_props *info = f.a.info, *extra = f.extra[0];
        switch (change) {
        case 0: CHECK(trowel_props_add_uint(info, "group.key", 1) == TROWEL_OK); break;
        case 1: CHECK(trowel_props_add_double(info, "ratio", 0.5) == TROWEL_OK); break;
        case 2: CHECK(trowel_props_add_uint(info, "version", 2) == TROWEL_OK); break;
        case 3: CHECK(trowel_props_add_uint(info, "entry_count", 2) == TROWEL_OK); break;
        case 4: CHECK(trowel_props_add_uint(extra, "size", 2) == TROWEL_OK); break;
        case 5: CHECK(trowel_props_add_str(info, "name", "caf\xe9") == TROWEL_OK); break;
        case 6: CHECK(trowel_props_add_list(extra, "l", bad_list, 2) == TROWEL_OK); break;
        case 7: f.entries[2].name = "\xff.bin"; break;
        default: CHECK(trowel_props_add_uint(extra, "k", 1) == TROWEL_OK &&
                       trowel_props_add_uint(extra, "k", 2) == TROWEL_OK);
        }
        if (trowel_archive_json_head_streams(&f.a)) {
            fprintf(stderr, "  change %d still streams\n", change);
            CHECK(false);
        }
        fake_close(&f);
    }
    trowel_ctx_free(ctx);
}

/* A corpus ASM's whole convert output opens with json-c's head. */
static void check_asm_head(const char *path)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    if (trowel_input_open_file(ctx, path, &in) != TROWEL_OK) {
        trowel_ctx_free(ctx);
        REQUIRE_INPUT(false);
    }
    trowel_archive *a;
    REQUIRE(trowel_archive_open(ctx, in, trowel_format_find("asm"), &a) == TROWEL_OK);
    CHECK(trowel_archive_json_head_streams(a));
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    REQUIRE(trowel_convert(ctx, a, "json", NULL, 0, s) == TROWEL_OK);
    size_t n;
    const char *got = (const char *)trowel_sink_data(s, &n);
    char *head = NULL;
    REQUIRE(trowel_archive_to_json(a, TROWEL_JSON_INFO | TROWEL_JSON_ENTRIES | TROWEL_JSON_PRETTY,
                                   &head) == TROWEL_OK);
    size_t h = strlen(head) - 2; /* without its "\n}" */
    static const char rest[] = ",\n  \"asm\": {";
    CHECK(n > h + sizeof rest && memcmp(got, head, h) == 0 &&
          memcmp(got + h, rest, sizeof rest - 1) == 0);
    CHECK(n > 3 && memcmp(got + n - 3, "\n}\n", 3) == 0);
    trowel_free(head);
    trowel_sink_discard(s);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

static void test_asm_head_matches_json_c(void)
{
    check_asm_head(RFG "cloth_containers.asm_pc");
    check_asm_head(RFG "dlc_activity_containers.asm_pc");
    check_asm_head(SR4 "template_customize_item.asm_pc");
}

/* Values of every size go into chunks and come back whole. */
static void test_props_chunks(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_props *p = trowel_props_new(ctx);
    char big[20000], key[16];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    const char *items[300];
    char text[300][8];
    for (int i = 0; i < 300; i++) {
        snprintf(text[i], sizeof text[i], "i%d", i);
        items[i] = text[i];
    }
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "k%d", i);
        CHECK(trowel_props_add_str(p, key, i % 50 == 7 ? big : text[i]) == TROWEL_OK);
        if (i % 40 == 0)
            CHECK(trowel_props_add_list(p, "list", items, 300) == TROWEL_OK);
    }
    size_t lists = 0;
    for (size_t i = 0; i < trowel_props_count(p); i++) {
        const trowel_prop *it = trowel_props_at(p, i);
        if (it->type == TROWEL_VALUE_STRING_LIST) {
            lists++;
            CHECK_EQ_U64(it->list_len, 300);
            for (int k = 0; k < 300; k++)
                CHECK_STR(it->list[k], text[k]);
            CHECK_EQ_U64((uintptr_t)it->list % sizeof(char *), 0);
        }
    }
    CHECK_EQ_U64(lists, 5);
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "k%d", i);
        const trowel_prop *it = trowel_props_find(p, key);
        REQUIRE(it != NULL);
        CHECK_STR(it->s, i % 50 == 7 ? big : text[i]);
    }
    trowel_props_free(p);
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_head_prints_as_json_c), TEST(test_head_left_to_json_c),
          TEST(test_asm_head_matches_json_c), TEST(test_props_chunks))
