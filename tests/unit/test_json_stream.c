/*
 * The streaming JSON writer (src/core/json_write.c) and pull reader
 * (src/core/json_pull.c). The writer is checked byte for byte against
 * json-c's own pretty printer (PRETTY | SPACED | NOSLASHESCAPE, what
 * `convert --to json` prints) on a document with every kind of value,
 * nesting, empty arrays and every escape; the reader against the same
 * document (the tokens it gives) and against broken texts, each refused
 * with the offset of its fault.
 */
#include "test.h"

#include "core/json_pull.h"
#include "core/json_write.h"

#include <json-c/json.h>

static const char escapes[] = "q\"b\\s/n\nt\tr\rf\fb\bc\x01\x1f del\x7f \xc3\xa9";

/* The document, built by json-c. */
static json_object *sample_tree(void)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(escapes));
    json_object_object_add(o, "big", json_object_new_uint64(UINT64_MAX));
    json_object_object_add(o, "neg", json_object_new_int64(-42));
    json_object_object_add(o, "yes", json_object_new_boolean(1));
    json_object_object_add(o, "nothing", NULL);
    json_object_object_add(o, "empty", json_object_new_array());
    json_object *arr = json_object_new_array();
    json_object_array_add(arr, json_object_new_uint64(0));
    json_object *inner = json_object_new_object();
    json_object_object_add(inner, "k\"ey", json_object_new_string(""));
    json_object *deep = json_object_new_array();
    json_object_array_add(deep, json_object_new_array());
    json_object_object_add(inner, "deep", deep);
    json_object_array_add(arr, inner);
    json_object_array_add(arr, json_object_new_boolean(0));
    json_object_object_add(o, "list", arr);
    return o;
}

/* The same, through the writer. */
static void sample_stream(trowel_json_writer *w)
{
    trowel_jw_begin_object(w);
    trowel_jw_key(w, "name");
    trowel_jw_string(w, escapes);
    trowel_jw_key(w, "big");
    trowel_jw_uint(w, UINT64_MAX);
    trowel_jw_key(w, "neg");
    trowel_jw_int(w, -42);
    trowel_jw_key(w, "yes");
    trowel_jw_bool(w, true);
    trowel_jw_key(w, "nothing");
    trowel_jw_null(w);
    trowel_jw_key(w, "empty");
    trowel_jw_begin_array(w);
    trowel_jw_end_array(w);
    trowel_jw_key(w, "list");
    trowel_jw_begin_array(w);
    trowel_jw_uint(w, 0);
    trowel_jw_begin_object(w);
    trowel_jw_key(w, "k\"ey");
    trowel_jw_string(w, "");
    trowel_jw_key(w, "deep");
    trowel_jw_begin_array(w);
    trowel_jw_begin_array(w);
    trowel_jw_end_array(w);
    trowel_jw_end_array(w);
    trowel_jw_end_object(w);
    trowel_jw_bool(w, false);
    trowel_jw_end_array(w);
    trowel_jw_end_object(w);
}

static const char *json_c_text(json_object *o)
{
    return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                 JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void test_writer_prints_as_json_c(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    trowel_json_writer *w = malloc(sizeof *w);
    trowel_jw_init(w, s);
    sample_stream(w);
    CHECK_EQ_U64(trowel_jw_finish(w, ctx), TROWEL_OK);
    json_object *tree = sample_tree();
    size_t n;
    const char *got = (const char *)trowel_sink_data(s, &n);
    const char *want = json_c_text(tree);
    CHECK_EQ_U64(n, strlen(want));
    CHECK(n == strlen(want) && memcmp(got, want, n) == 0);

    /* Going on inside an object json-c printed (its "\n}" left off). */
    trowel_sink *t;
    REQUIRE(trowel_sink_open_memory(ctx, &t) == TROWEL_OK);
    json_object *head = json_object_new_object();
    json_object_object_add(head, "format", json_object_new_string("x"));
    const char *head_text = json_c_text(head);
    trowel_sink_write(t, head_text, strlen(head_text) - 2);
    trowel_jw_init_in_object(w, t, true);
    trowel_jw_key(w, "rest");
    sample_stream(w);
    trowel_jw_end_object(w);
    CHECK_EQ_U64(trowel_jw_finish(w, ctx), TROWEL_OK);
    json_object_object_add(head, "rest", tree);
    got = (const char *)trowel_sink_data(t, &n);
    want = json_c_text(head);
    CHECK(n == strlen(want) && memcmp(got, want, n) == 0);
    json_object_put(head);
    trowel_sink_discard(t);
    trowel_sink_discard(s);
    free(w);
    trowel_ctx_free(ctx);
}

/* The tokens of text as letters ({}[]k s n t f 0), "!" on an error. */
static void tokens(trowel_ctx *ctx, const char *text, char *out, size_t size)
{
    trowel_json_pull p;
    trowel_jp_init(&p, ctx, "test", text, strlen(text));
    size_t n = 0;
    for (;;) {
        trowel_jp_token t = trowel_jp_next(&p);
        static const char letters[] = "!.{}[]ksntf0";
        if (n + 1 < size)
            out[n++] = letters[t];
        if (t == TROWEL_JP_ERROR || t == TROWEL_JP_END)
            break;
    }
    out[n] = '\0';
    trowel_jp_free(&p);
}

static void test_reader_tokens_and_values(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    json_object *tree = sample_tree();
    char got[128];
    tokens(ctx, json_c_text(tree), got, sizeof got);
    CHECK_STR(got, "{ksknknktk0k[]k[n{ksk[[]]}f]}.");
    json_object_put(tree);

    /* Values: the decoded string, whole numbers and not. */
    const char *text = "[\"a\\u00e9\\ud83d\\ude00\\n\", 18446744073709551616, -0, -3, 1.5, 2e3]";
    trowel_json_pull p;
    trowel_jp_init(&p, ctx, "test", text, strlen(text));
    uint64_t v = 1;
    CHECK(trowel_jp_next(&p) == TROWEL_JP_ARRAY);
    CHECK(trowel_jp_next(&p) == TROWEL_JP_STRING);
    CHECK_STR(p.str, "a\xc3\xa9\xf0\x9f\x98\x80\n");
    CHECK(trowel_jp_next(&p) == TROWEL_JP_NUMBER);
    CHECK(trowel_jp_uint(&p, &v) == TROWEL_JP_WHOLE && v == UINT64_MAX);
    CHECK(trowel_jp_next(&p) == TROWEL_JP_NUMBER);
    CHECK(trowel_jp_uint(&p, &v) == TROWEL_JP_WHOLE && v == 0);
    CHECK(trowel_jp_next(&p) == TROWEL_JP_NUMBER);
    CHECK(trowel_jp_uint(&p, &v) == TROWEL_JP_NEGATIVE);
    CHECK(trowel_jp_next(&p) == TROWEL_JP_NUMBER);
    CHECK(trowel_jp_uint(&p, &v) == TROWEL_JP_FRACTION);
    CHECK(trowel_jp_next(&p) == TROWEL_JP_NUMBER);
    CHECK(trowel_jp_uint(&p, &v) == TROWEL_JP_FRACTION);
    CHECK(trowel_jp_next(&p) == TROWEL_JP_ARRAY_END);
    CHECK(trowel_jp_next(&p) == TROWEL_JP_END);
    trowel_jp_free(&p);

    /* skip: a whole value, nested. */
    text = "{\"a\": [1, {\"b\": [[]]}], \"c\": 2}";
    trowel_jp_init(&p, ctx, "test", text, strlen(text));
    CHECK(trowel_jp_next(&p) == TROWEL_JP_OBJECT);
    CHECK(trowel_jp_next(&p) == TROWEL_JP_KEY);
    CHECK_EQ_U64(trowel_jp_skip(&p, trowel_jp_next(&p)), TROWEL_OK);
    CHECK(trowel_jp_next(&p) == TROWEL_JP_KEY);
    CHECK_STR(p.str, "c");
    trowel_jp_free(&p);

    /* The top-level string of a key, read no further. */
    char id[16];
    CHECK(trowel_json_top_string(ctx, "{\"x\": [1, {\"format\": 1}], \"format\": \"asm\", !!!", 46,
                                 "format", id, sizeof id));
    CHECK_STR(id, "asm");
    CHECK(!trowel_json_top_string(ctx, "{\"format\": 5}", 13, "format", id, sizeof id));
    CHECK(!trowel_json_top_string(ctx, "[\"format\"]", 10, "format", id, sizeof id));
    CHECK(!trowel_json_top_string(ctx, "{\"format\": \"a-very-long-format-name\"}", 37, "format",
                                  id, sizeof id));
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    trowel_ctx_free(ctx);
}

static void test_reader_refuses_broken_json_naming_the_offset(void)
{
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"", "test: not valid JSON at offset 0: a value"},
        {"[1,]", "test: not valid JSON at offset 3: a value"},
        {"{\"a\":1,}", "test: not valid JSON at offset 7: a key"},
        {"{\"a\" 1}", "test: not valid JSON at offset 5: ':' after a key"},
        {"[1 2]", "test: not valid JSON at offset 3: ',' or ']'"},
        {"{\"a\":1]", "test: not valid JSON at offset 6: ',' or '}'"},
        {"[1] x", "test: not valid JSON at offset 4: nothing after the document's value"},
        {"[\"a\nb\"]", "test: not valid JSON at offset 3: a control character in a string (escape it)"},
        {"[\"a\\x\"]", "test: not valid JSON at offset 3: an unknown escape in a string"},
        {"[\"\\ud800\"]", "test: not valid JSON at offset 2: a high surrogate without a low one"},
        {"[\"abc", "test: not valid JSON at offset 1: a string that does not end"},
        {"[01]", "test: not valid JSON at offset 2: ',' or ']'"},
        {"[1.]", "test: not valid JSON at offset 3: digits after the decimal point"},
        {"[tru]", "test: not valid JSON at offset 1: a value"},
        {"[// c\n1]", "test: not valid JSON at offset 1: a value"},
        {"{\"a\": [1", "test: not valid JSON at offset 8: the rest of the document (it ends early)"},
    };
    trowel_ctx *ctx = trowel_ctx_new();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char got[64];
        tokens(ctx, cases[i].text, got, sizeof got);
        CHECK(strchr(got, '!') != NULL);
        CHECK_STR(trowel_ctx_last_error(ctx)->message, cases[i].message);
        CHECK_EQ_U64(trowel_ctx_last_error(ctx)->status, TROWEL_ERR_CORRUPT);
    }
    /* Deeper than the reader goes. */
    char deep[600];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    char got[1024];
    tokens(ctx, deep, got, sizeof got);
    CHECK_STR(trowel_ctx_last_error(ctx)->message,
              "test: not valid JSON at offset 256: nesting no deeper than 256 levels");
    CHECK_EQ_U64(trowel_ctx_mem_in_use(ctx), 0);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_writer_prints_as_json_c), TEST(test_reader_tokens_and_values),
          TEST(test_reader_refuses_broken_json_naming_the_offset))
