/*
 * Tests of the LZSS codec (src/codec/lzss.c): round trips for the three
 * set-ups, hand-built streams with known output, the compressed sizes the
 * encoder must reach, the real SZDD files of the shared corpus (their
 * expansions' SHA-256 are in corpus/szdd/expanded.sha256, made by msexpand),
 * a cross-check against libmspack when it is installed, and the decoder's
 * refusals: truncated streams, trailing bytes, overlong matches, memory limits.
 */
#include "sha256.h"
#include "codec_data.h"
#include "test.h"

#include "codec/lzss.h"
#include "core/module.h"

#include <stdbool.h>
#include <unistd.h>

#ifdef TROWEL_HAVE_MSPACK
#include <mspack.h>
#endif

/* ------------------------------------------------------------ helpers */



static buf buf_copy(const uint8_t *data, size_t len)
{
    buf b = {malloc(len ? len : 1), len};
    if (b.data && len)
        memcpy(b.data, data, len);
    return b;
}

/* English-like text with repeats at all distances. */
static buf make_text(size_t n)
{
    static const char *const words[] = {
        "the ",     "window ",  "of ",      "four ",   "kilobytes ", "slides ", "over ",
        "bytes ",   "and ",     "matches ", "copy ",   "from ",      "behind ", "while ",
        "literals ", "stand ",  "alone;\n", "flags ",  "come ",      "first. "};
    return make_text_from(words, sizeof words / sizeof words[0], n);
}

/* Binary-like data: small integers, structs with repeating fields, noise. */


static trowel_status encode(trowel_ctx *ctx, const trowel_lzss_params *p, const uint8_t *data,
                            size_t len, buf *out)
{
    trowel_sink *sink;
    out->data = NULL;
    out->len = 0;
    trowel_status s = trowel_sink_open_memory(ctx, &sink);
    if (s != TROWEL_OK)
        return s;
    s = trowel_lzss_encode(ctx, p, data, len, sink);
    if (s == TROWEL_OK) {
        size_t n;
        const uint8_t *d = trowel_sink_data(sink, &n);
        *out = buf_copy(d, n);
    }
    trowel_sink_discard(sink);
    return s;
}

/* Encodes through a reader over a memory input (the block-loading path). */
static trowel_status encode_reader(trowel_ctx *ctx, const trowel_lzss_params *p,
                                   const uint8_t *data, size_t len, buf *out)
{
    trowel_input *in;
    trowel_sink *sink;
    out->data = NULL;
    out->len = 0;
    trowel_status s =
        trowel_input_open_memory(ctx, data ? data : (const uint8_t *)"", len, "test", &in);
    if (s != TROWEL_OK)
        return s;
    s = trowel_sink_open_memory(ctx, &sink);
    if (s != TROWEL_OK) {
        trowel_input_close(in);
        return s;
    }
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    s = trowel_lzss_encode_reader(ctx, p, &r, sink);
    if (s == TROWEL_OK) {
        size_t n;
        const uint8_t *d = trowel_sink_data(sink, &n);
        *out = buf_copy(d, n);
    }
    trowel_sink_discard(sink);
    trowel_input_close(in);
    return s;
}

/* Decodes stream[skip..len) with a reader over the whole memory input, so
 * error offsets are absolute; *written says what reached the sink. */
static trowel_status decode_at(trowel_ctx *ctx, const trowel_lzss_params *p, const uint8_t *stream,
                               size_t len, size_t skip, uint64_t expected, buf *out,
                               uint64_t *written)
{
    trowel_input *in;
    trowel_sink *sink;
    out->data = NULL;
    out->len = 0;
    static const uint8_t none[1];
    trowel_status s = trowel_input_open_memory(ctx, stream ? stream : none, len, "test", &in);
    if (s != TROWEL_OK)
        return s;
    s = trowel_sink_open_memory(ctx, &sink);
    if (s != TROWEL_OK) {
        trowel_input_close(in);
        return s;
    }
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    s = trowel_reader_skip(&r, skip);
    if (s == TROWEL_OK)
        s = trowel_lzss_decode(ctx, p, &r, expected, sink);
    size_t n;
    const uint8_t *d = trowel_sink_data(sink, &n);
    if (written)
        *written = n;
    if (s == TROWEL_OK)
        *out = buf_copy(d, n);
    trowel_sink_discard(sink);
    trowel_input_close(in);
    return s;
}

static trowel_status decode(trowel_ctx *ctx, const trowel_lzss_params *p, const uint8_t *stream,
                            size_t len, uint64_t expected, buf *out)
{
    return decode_at(ctx, p, stream, len, 0, expected, out, NULL);
}

static bool same(const buf *b, const uint8_t *data, size_t len)
{
    return b->len == len && (len == 0 || memcmp(b->data, data, len) == 0);
}

static const trowel_lzss_params *const all_params[] = {&trowel_lzss_szdd, &trowel_lzss_qbasic,
                                                       &trowel_lzss_spz};
static const char *const all_names[] = {"szdd", "qbasic", "spz"};

/* Encode, then decode with the size known and unknown; both must give the
 * input back, the reader path must give the same stream, the decoder's bound
 * must cover the input, and no memory may stay accounted. Returns the
 * stream's size. */
static size_t roundtrip_one(const trowel_lzss_params *p, const char *pname, const char *what,
                            const uint8_t *data, size_t len)
{
    trowel_ctx *ctx = new_ctx();
    buf enc, enc2, dec;
    size_t packed = 0;
    trowel_status s = encode(ctx, p, data, len, &enc);
    CHECK_EQ_U64(s, TROWEL_OK);
    if (s != TROWEL_OK) {
        fprintf(stderr, "  %s/%s: encode failed: %s\n", pname, what,
                trowel_ctx_last_error(ctx)->message);
        trowel_ctx_free(ctx);
        return 0;
    }
    packed = enc.len;
    CHECK(trowel_lzss_max_output(enc.len) >= len);

    s = decode(ctx, p, enc.data, enc.len, len, &dec);
    CHECK_EQ_U64(s, TROWEL_OK);
    if (s != TROWEL_OK || !same(&dec, data, len))
        fprintf(stderr, "  %s/%s (%zu bytes): known-size decode differs (%s)\n", pname, what, len,
                s ? trowel_ctx_last_error(ctx)->message : "content");
    CHECK(s == TROWEL_OK && same(&dec, data, len));
    buf_free(&dec);

    s = decode(ctx, p, enc.data, enc.len, TROWEL_SIZE_UNKNOWN, &dec);
    CHECK_EQ_U64(s, TROWEL_OK);
    CHECK(s == TROWEL_OK && same(&dec, data, len));
    buf_free(&dec);

    s = encode_reader(ctx, p, data, len, &enc2);
    CHECK_EQ_U64(s, TROWEL_OK);
    CHECK(same(&enc2, enc.data, enc.len));
    buf_free(&enc2);
    buf_free(&enc);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
    return packed;
}

static void roundtrip_all(const char *what, const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < 3; i++)
        roundtrip_one(all_params[i], all_names[i], what, data, len);
}

/* ---------------------------------------------------------- round trips */

static void test_roundtrip_text_all_setups(void)
{
    buf t = make_text(100000);
    roundtrip_all("text", t.data, t.len);
    buf_free(&t);
}

static void test_roundtrip_binary_all_setups(void)
{
    buf b = make_binary(70000);
    roundtrip_all("binary", b.data, b.len);
    buf_free(&b);
}

static void test_roundtrip_random_all_setups(void)
{
    uint8_t *r = malloc(50000);
    fill_random(r, 50000, 12345);
    roundtrip_all("random", r, 50000);
    /* Incompressible data costs 9 bits a byte: 1/8 more, plus a flag byte. */
    size_t packed = roundtrip_one(&trowel_lzss_szdd, "szdd", "random", r, 50000);
    CHECK(packed <= 50000 + 50000 / 8 + 1);
    free(r);
}

static void test_roundtrip_zeros_and_fill_runs(void)
{
    uint8_t *z = calloc(1, 200000);
    roundtrip_all("zeros", z, 200000);
    memset(z, ' ', 200000);
    roundtrip_all("spaces", z, 200000);
    /* One byte cannot be a match (3 at least): a flag and a literal. */
    size_t packed = roundtrip_one(&trowel_lzss_spz, "spz", "zeros", (const uint8_t[]){0}, 1);
    CHECK(packed == 2);
    /* A run of the fill byte is all 18-byte matches: 17 bits per 18 bytes. */
    memset(z, 0, 200000);
    packed = roundtrip_one(&trowel_lzss_spz, "spz", "zeros", z, 180000);
    CHECK_EQ_U64(packed, 10000 * 2 + 10000 / 8);
    free(z);
}

static void test_roundtrip_tiny_inputs(void)
{
    static const uint8_t two[2] = {'h', 'i'};
    roundtrip_all("empty", NULL, 0);
    roundtrip_all("1 byte", two, 1);
    roundtrip_all("2 bytes", two, 2);
    roundtrip_all("1 space", (const uint8_t *)" ", 1);
    roundtrip_all("3 spaces", (const uint8_t *)"   ", 3);
    roundtrip_all("abcabcabc", (const uint8_t *)"abcabcabc", 9);
    /* The empty input gives the empty stream. */
    CHECK_EQ_U64(roundtrip_one(&trowel_lzss_szdd, "szdd", "empty", NULL, 0), 0);
}

static void test_roundtrip_window_edge_sizes(void)
{
    static const size_t sizes[] = {17, 18, 19, 4095, 4096, 4097, 8191, 8192, 8193};
    buf t = make_text(9000);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        roundtrip_all("text edge", t.data, sizes[i]);
        uint8_t *r = malloc(sizes[i]);
        fill_random(r, sizes[i], sizes[i]);
        roundtrip_all("random edge", r, sizes[i]);
        /* Repeats exactly 4096 bytes back: distance 4096 must be used. */
        uint8_t *rep = malloc(sizes[i] + 4096);
        fill_random(rep, 4096, 7);
        memcpy(rep + 4096, rep, sizes[i] < 4096 ? sizes[i] : 4096);
        if (sizes[i] > 4096)
            fill_random(rep + 8192, sizes[i] - 4096, 8);
        roundtrip_all("repeat at 4096", rep, sizes[i] + 4096);
        free(rep);
        free(r);
    }
    buf_free(&t);
}

static void test_roundtrip_fill_byte_run_at_start(void)
{
    /* The fill byte at the start is matched against the initial window,
     * including matches that run from the fill into the data. */
    buf t = make_text(20000);
    for (size_t i = 0; i < 3; i++) {
        const trowel_lzss_params *p = all_params[i];
        static const size_t runs[] = {1, 2, 3, 17, 18, 19, 4095, 4096, 4097, 9000};
        for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
            memset(t.data, p->fill, runs[k]);
            roundtrip_one(p, all_names[i], "fill run", t.data, t.len);
        }
        /* 4096 fill bytes then random data: the run costs at most ~1 bit/byte. */
        uint8_t *d = malloc(8192);
        memset(d, p->fill, 4096);
        fill_random(d + 4096, 4096, 3);
        size_t packed = roundtrip_one(p, all_names[i], "fill + random", d, 8192);
        CHECK(packed < 4096 + 4096 / 8 + 4096 / 18 * 2 + 4096 / 18 / 8 + 4);
        free(d);
    }
    buf_free(&t);
}

static void test_roundtrip_multi_block_input(void)
{
    /* Over 1 MiB, so the encoder parses several blocks and carries history,
     * and the decoder flushes its buffer many times. */
    size_t n = 2600000;
    uint8_t *d = malloc(n);
    buf t = make_text(n);
    memcpy(d, t.data, n);
    fill_random(d + 900000, 300000, 5);
    memset(d + 1500000, 0, 200000);
    memcpy(d + (1 << 20) - 100, d + 1000, 5000); /* repeats across a block edge */
    roundtrip_one(&trowel_lzss_szdd, "szdd", "multi-block", d, n);
    roundtrip_one(&trowel_lzss_spz, "spz", "multi-block", d, n);
    buf_free(&t);
    free(d);
}

/* ----------------------------------------------------- hand-made vectors */

static void check_vector(const trowel_lzss_params *p, const uint8_t *stream, size_t len,
                         const uint8_t *want, size_t want_len)
{
    trowel_ctx *ctx = new_ctx();
    buf out;
    trowel_status s = decode(ctx, p, stream, len, want_len, &out);
    CHECK_EQ_U64(s, TROWEL_OK);
    if (s != TROWEL_OK)
        fprintf(stderr, "  %s\n", trowel_ctx_last_error(ctx)->message);
    CHECK(s == TROWEL_OK && same(&out, want, want_len));
    buf_free(&out);
    s = decode(ctx, p, stream, len, TROWEL_SIZE_UNKNOWN, &out);
    CHECK(s == TROWEL_OK && same(&out, want, want_len));
    buf_free(&out);
    trowel_ctx_free(ctx);
}

static void test_vector_eight_literals(void)
{
    static const uint8_t s[] = {0xFF, 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 0x01, 'I'};
    check_vector(&trowel_lzss_szdd, s, sizeof s, (const uint8_t *)"ABCDEFGHI", 9);
}

static void test_vector_match_reads_initial_fill(void)
{
    /* A match at ring position 0, never written: five fill bytes; then 'x'. */
    static const uint8_t s[] = {0x02, 0x00, 0x02, 'x'};
    check_vector(&trowel_lzss_szdd, s, sizeof s, (const uint8_t *)"     x", 6);
    check_vector(&trowel_lzss_qbasic, s, sizeof s, (const uint8_t *)"     x", 6);
    check_vector(&trowel_lzss_spz, s, sizeof s, (const uint8_t *)"\0\0\0\0\0x", 6);
}

static void test_vector_match_runs_from_fill_into_output(void)
{
    /* SZDD: 'A','B' land at 4080, 4081. A match at 4078, 5 bytes, reads two
     * fill bytes, A, B and then the first byte it wrote itself (at 4082). */
    static const uint8_t s[] = {0x03, 'A', 'B', 0xEE, 0xF2};
    check_vector(&trowel_lzss_szdd, s, sizeof s, (const uint8_t *)"AB  AB ", 7);
    /* QBasic starts at 4078, so the same match reads A, B and its own output. */
    check_vector(&trowel_lzss_qbasic, s, sizeof s, (const uint8_t *)"ABABABA", 7);
}

static void test_vector_overlapping_match_repeats_one_byte(void)
{
    /* 'a' at 4080, then a match at 4080 of 10 bytes: distance 1. */
    static const uint8_t s[] = {0x01, 'a', 0xF0, 0xF7};
    check_vector(&trowel_lzss_szdd, s, sizeof s, (const uint8_t *)"aaaaaaaaaaa", 11);
    /* Same with distance 2 and 3: "ab" then a 7-byte match at 4080. */
    static const uint8_t s2[] = {0x03, 'a', 'b', 0xF0, 0xF4};
    check_vector(&trowel_lzss_szdd, s2, sizeof s2, (const uint8_t *)"ababababa", 9);
}

static void test_vector_distance_4096(void)
{
    /* 4096 literals fill the ring once; a match at the current write position
     * (start again) then copies the bytes written 4096 bytes earlier. */
    const size_t groups = 4096 / 8;
    uint8_t *s = malloc(groups * 9 + 3 + 2);
    uint8_t *want = malloc(4096 + 18 + 5);
    size_t n = 0;
    for (size_t i = 0; i < 4096; i++) {
        if (i % 8 == 0)
            s[n++] = 0xFF;
        s[n++] = want[i] = (uint8_t)(i * 7 + i / 256);
    }
    for (int i = 0; i < 3; i++) {
        const trowel_lzss_params *p = all_params[i];
        size_t m = n;
        s[m++] = 0x00;                       /* one match, then the stream ends */
        s[m++] = (uint8_t)(p->start & 0xFF); /* ring position = start */
        s[m++] = (uint8_t)((p->start >> 4 & 0xF0) | 15);
        memcpy(want + 4096, want, 18);
        check_vector(p, s, m, want, 4096 + 18);
    }
    free(s);
    free(want);
}

static void test_vector_lone_flag_byte_at_end(void)
{
    /* An encoder may start a group it has nothing for: accepted both with
     * a known size and without. */
    static const uint8_t s[] = {0xFF, '1', '2', '3', '4', '5', '6', '7', '8', 0x00};
    check_vector(&trowel_lzss_szdd, s, sizeof s, (const uint8_t *)"12345678", 8);
}

/* --------------------------------------------------------- size targets */

static void check_target(const char *path, size_t limit)
{
    buf in;
    if (!read_whole_file(path, &in)) {
        test_skip("%s is absent", path);
        return;
    }
    trowel_ctx *ctx = new_ctx();
    buf enc, dec;
    trowel_status s = encode(ctx, &trowel_lzss_szdd, in.data, in.len, &enc);
    REQUIRE(s == TROWEL_OK);
    printf("  %s: %zu -> %zu bytes as an SZDD file (target <= %zu)\n", path, in.len,
           enc.len + 14, limit);
    CHECK(enc.len + 14 <= limit);
    s = decode(ctx, &trowel_lzss_szdd, enc.data, enc.len, in.len, &dec);
    CHECK(s == TROWEL_OK && same(&dec, in.data, in.len));
    buf_free(&dec);
    buf_free(&enc);
    buf_free(&in);
    trowel_ctx_free(ctx);
}

static void test_size_target_gpl3(void)
{
    check_target("/usr/share/common-licenses/GPL-3", 15227);
}

static void test_size_target_libz(void)
{
    check_target("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", 70913);
}

static void test_size_target_tentacle(void)
{
    check_target(TROWEL_CORPUS_DIR "/scumm/openquest/tentacle.001", 310453);
}

/* The encoder's bit count equals the optimum that a brute-force search
 * (every distance tried at every position) and the same cost model find. */
static void check_optimal(const trowel_lzss_params *p, const uint8_t *data, size_t n)
{
    uint8_t *all = malloc(4096 + n);
    memset(all, p->fill, 4096);
    memcpy(all + 4096, data, n);
    uint64_t *cost = malloc((n + 1) * sizeof *cost);
    cost[n] = 0;
    for (size_t i = n; i-- > 0;) {
        size_t longest = 0, cap = n - i < 18 ? n - i : 18;
        for (size_t d = 1; d <= 4096 && longest < cap; d++) {
            size_t l = 0;
            while (l < cap && all[4096 + i + l] == all[4096 + i - d + l])
                l++;
            if (l > longest)
                longest = l;
        }
        cost[i] = 9 + cost[i + 1];
        for (size_t l = 3; l <= longest; l++)
            if (17 + cost[i + l] < cost[i])
                cost[i] = 17 + cost[i + l];
    }
    trowel_ctx *ctx = new_ctx();
    buf enc;
    CHECK_EQ_U64(encode(ctx, p, data, n, &enc), TROWEL_OK);
    /* Count the bits of the stream the encoder wrote. */
    uint64_t bits = 0, items_out = 0;
    size_t k = 0;
    while (k < enc.len && items_out < n) {
        unsigned flags = enc.data[k++];
        for (int b = 0; b < 8 && k < enc.len; b++) {
            if (flags >> b & 1) {
                bits += 9;
                items_out += 1;
                k += 1;
            } else {
                bits += 17;
                items_out += (enc.data[k + 1] & 15) + 3u;
                k += 2;
            }
        }
    }
    CHECK_EQ_U64(bits, cost[0]);
    buf_free(&enc);
    trowel_ctx_free(ctx);
    free(cost);
    free(all);
}

static void test_encoder_bits_equal_bruteforce_optimum(void)
{
    buf t = make_text(6000);
    buf b = make_binary(5000);
    check_optimal(&trowel_lzss_szdd, t.data, t.len);
    check_optimal(&trowel_lzss_spz, b.data, b.len);
    /* Near-repeats: many candidates share a prefix but differ late. */
    uint8_t *d = malloc(6000);
    fill_random(d, 6000, 11);
    for (size_t i = 0; i < 6000; i++)
        d[i] = (uint8_t)(i % 5 == 0 ? d[i] % 3 : 'a');
    check_optimal(&trowel_lzss_qbasic, d, 6000);
    free(d);
    buf_free(&t);
    buf_free(&b);
}

/* ---------------------------------------------------------- real files */

static void test_corpus_szdd_files_expand_to_listed_sha256(void)
{
    FILE *list = fopen(TROWEL_CORPUS_DIR "/szdd/expanded.sha256", "r");
    if (!list) {
        test_skip("no SZDD corpus at %s", TROWEL_CORPUS_DIR);
        return;
    }
    char want[80], name[256];
    int files = 0;
    while (fscanf(list, "%79s %255s", want, name) == 2) {
        char path[512];
        snprintf(path, sizeof path, "%s/szdd/%s", TROWEL_CORPUS_DIR, name);
        buf f;
        CHECK(read_whole_file(path, &f));
        if (!f.data || f.len < 14) {
            buf_free(&f);
            continue;
        }
        uint64_t size = (uint64_t)f.data[10] | (uint64_t)f.data[11] << 8 |
                        (uint64_t)f.data[12] << 16 | (uint64_t)f.data[13] << 24;
        CHECK(size <= trowel_lzss_max_output(f.len - 14));
        trowel_ctx *ctx = new_ctx();
        buf out;
        trowel_status s = decode_at(ctx, &trowel_lzss_szdd, f.data, f.len, 14, size, &out, NULL);
        CHECK_EQ_U64(s, TROWEL_OK);
        if (s == TROWEL_OK) {
            char got[65];
            sha256_hex(out.data, out.len, got);
            if (strcmp(got, want) != 0)
                fprintf(stderr, "  %s: sha256 %s, want %s\n", name, got, want);
            CHECK_STR(got, want);
            files++;
        } else {
            fprintf(stderr, "  %s: %s\n", name, trowel_ctx_last_error(ctx)->message);
        }
        buf_free(&out);
        buf_free(&f);
        trowel_ctx_free(ctx);
    }
    fclose(list);
    CHECK_EQ_U64(files, 7);
}

static void test_sha256_helper_known_answers(void)
{
    char h[65];
    sha256_hex((const uint8_t *)"abc", 3, h);
    CHECK_STR(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_hex((const uint8_t *)"", 0, h);
    CHECK_STR(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    static const char s56[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex((const uint8_t *)s56, 56, h);
    CHECK_STR(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* ------------------------------------------------------------ libmspack */

#ifdef TROWEL_HAVE_MSPACK
/* Writes header + our stream to a file, expands it with libmspack and
 * compares with the original. */
static void check_mspack(const uint8_t *data, size_t len, bool qbasic)
{
    const trowel_lzss_params *p = qbasic ? &trowel_lzss_qbasic : &trowel_lzss_szdd;
    trowel_ctx *ctx = new_ctx();
    buf enc;
    REQUIRE(encode(ctx, p, data, len, &enc) == TROWEL_OK);
    char packed[] = "/tmp/trowel-lzss-XXXXXX";
    char plain[] = "/tmp/trowel-lzss-out-XXXXXX";
    int fd1 = mkstemp(packed), fd2 = mkstemp(plain);
    REQUIRE(fd1 >= 0 && fd2 >= 0);
    close(fd2);
    FILE *f = fdopen(fd1, "wb");
    uint8_t sz[4] = {(uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
    if (qbasic)
        fwrite("SZ \x88\xf0\x27\x33\xd1", 1, 8, f);
    else
        fwrite("SZDD\x88\xf0\x27\x33\x41\x00", 1, 10, f);
    fwrite(sz, 1, 4, f);
    fwrite(enc.data, 1, enc.len, f);
    fclose(f);

    struct msszdd_decompressor *d = mspack_create_szdd_decompressor(NULL);
    REQUIRE(d != NULL);
    struct msszddd_header *h = d->open(d, packed);
    CHECK(h != NULL);
    if (h) {
        CHECK_EQ_U64(h->format, qbasic ? MSSZDD_FMT_QBASIC : MSSZDD_FMT_NORMAL);
        CHECK_EQ_U64(h->length, len);
        CHECK_EQ_U64(d->extract(d, h, plain), MSPACK_ERR_OK);
        d->close(d, h);
        buf back;
        CHECK(read_whole_file(plain, &back));
        if (!same(&back, data, len))
            fprintf(stderr, "  libmspack expands our %s stream of %zu bytes differently\n",
                    qbasic ? "QBasic" : "SZDD", len);
        CHECK(same(&back, data, len));
        buf_free(&back);
    }
    mspack_destroy_szdd_decompressor(d);
    unlink(packed);
    unlink(plain);
    buf_free(&enc);
    trowel_ctx_free(ctx);
}

static void test_mspack_expands_our_streams(void)
{
    buf t = make_text(300000);
    buf b = make_binary(100000);
    uint8_t *r = malloc(20000);
    fill_random(r, 20000, 77);
    memset(t.data, ' ', 5000); /* a run of the fill at the start */
    check_mspack(t.data, t.len, false);
    check_mspack(t.data, t.len, true);
    check_mspack(b.data, b.len, false);
    check_mspack(r, 20000, false);
    check_mspack(r, 1, false);
    check_mspack((const uint8_t *)"   ", 3, false);
    buf g;
    if (read_whole_file("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", &g)) {
        check_mspack(g.data, g.len, false);
        buf_free(&g);
    } else {
        test_skip("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13 is absent");
    }
    free(r);
    buf_free(&t);
    buf_free(&b);
}
#else
static void test_mspack_expands_our_streams(void)
{
    test_skip("built without libmspack");
}
#endif

/* ------------------------------------------------------------- refusals */

static void test_truncated_stream_every_cut(void)
{
    /* Cut a real stream at every length: with the size known each cut is
     * TRUNCATED at the offset where the input ends; without it, only a cut
     * inside a match is, and otherwise a prefix of the output comes out. */
    buf t = make_text(3000);
    trowel_ctx *ctx = new_ctx();
    buf enc;
    REQUIRE(encode(ctx, &trowel_lzss_szdd, t.data, t.len, &enc) == TROWEL_OK);
    for (size_t cut = 0; cut < enc.len; cut++) {
        buf out;
        uint64_t written = 0;
        trowel_status s = decode_at(ctx, &trowel_lzss_szdd, enc.data, cut, 0, t.len, &out, &written);
        CHECK_EQ_U64(s, TROWEL_ERR_TRUNCATED);
        CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, cut);
        CHECK(written < t.len);
        s = decode_at(ctx, &trowel_lzss_szdd, enc.data, cut, 0, TROWEL_SIZE_UNKNOWN, &out, &written);
        CHECK(s == TROWEL_OK || s == TROWEL_ERR_TRUNCATED);
        CHECK(written <= t.len && memcmp(t.data, out.data ? out.data : t.data, out.len) == 0);
        buf_free(&out);
    }
    buf_free(&enc);
    buf_free(&t);
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

static void test_truncated_message_names_counts(void)
{
    /* Two literals of a declared 5 after 14 header bytes. */
    static const uint8_t s[] = {'S', 'Z', 'D', 'D', 0x88, 0xF0, 0x27, 0x33,
                                'A', 0,   5,   0,   0,    0,    0x03, 'a', 'b'};
    trowel_ctx *ctx = new_ctx();
    buf out;
    CHECK_EQ_U64(decode_at(ctx, &trowel_lzss_szdd, s, sizeof s, 14, 5, &out, NULL),
                 TROWEL_ERR_TRUNCATED);
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, sizeof s);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "2 of 5 bytes") != NULL);
    /* A match cut after its first byte, size unknown. */
    static const uint8_t m[] = {0x01, 'a', 0xF0};
    CHECK_EQ_U64(decode(ctx, &trowel_lzss_szdd, m, sizeof m, TROWEL_SIZE_UNKNOWN, &out),
                 TROWEL_ERR_TRUNCATED);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "match is cut short") != NULL);
    trowel_ctx_free(ctx);
}

static void test_declared_size_beyond_max_output_is_truncated(void)
{
    /* A group of eight 18-byte matches is the densest stream there is. */
    uint8_t s[17 * 3];
    for (size_t g = 0; g < 3; g++) {
        s[17 * g] = 0;
        for (size_t k = 0; k < 8; k++) {
            s[17 * g + 1 + 2 * k] = 0x00;
            s[17 * g + 2 + 2 * k] = 0x0F;
        }
    }
    CHECK_EQ_U64(trowel_lzss_max_output(0), 0);
    CHECK_EQ_U64(trowel_lzss_max_output(1), 0);
    CHECK_EQ_U64(trowel_lzss_max_output(2), 1);
    CHECK_EQ_U64(trowel_lzss_max_output(3), 18);
    CHECK_EQ_U64(trowel_lzss_max_output(4), 19);
    CHECK_EQ_U64(trowel_lzss_max_output(17), 144);
    CHECK_EQ_U64(trowel_lzss_max_output(51), 432);
    CHECK_EQ_U64(trowel_lzss_max_output(UINT64_MAX), UINT64_MAX);
    trowel_ctx *ctx = new_ctx();
    buf out;
    CHECK_EQ_U64(decode(ctx, &trowel_lzss_spz, s, sizeof s, TROWEL_SIZE_UNKNOWN, &out), TROWEL_OK);
    CHECK_EQ_U64(out.len, trowel_lzss_max_output(sizeof s));
    buf_free(&out);
    CHECK_EQ_U64(decode(ctx, &trowel_lzss_spz, s, sizeof s, 433, &out), TROWEL_ERR_TRUNCATED);
    CHECK_EQ_U64(decode(ctx, &trowel_lzss_spz, s, sizeof s, UINT32_MAX, &out),
                 TROWEL_ERR_TRUNCATED);
    trowel_ctx_free(ctx);
}

static void test_corrupt_bytes_after_the_declared_size(void)
{
    trowel_ctx *ctx = new_ctx();
    buf out;
    /* Three literals, then one more item byte: too much input. */
    static const uint8_t mid[] = {0x0F, 'a', 'b', 'c', 'd'};
    CHECK_EQ_U64(decode(ctx, &trowel_lzss_szdd, mid, sizeof mid, 3, &out), TROWEL_ERR_CORRUPT);
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, 4);
    /* A full group then two bytes: more than one padding flag byte. */
    static const uint8_t two[] = {0xFF, '1', '2', '3', '4', '5', '6', '7', '8', 0xFF, '9'};
    CHECK_EQ_U64(decode(ctx, &trowel_lzss_szdd, two, sizeof two, 8, &out), TROWEL_ERR_CORRUPT);
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, 9);
    /* Declared 0 with a flag byte and a literal after it. */
    static const uint8_t zero[] = {0x01, 0x00};
    CHECK_EQ_U64(decode(ctx, &trowel_lzss_szdd, zero, sizeof zero, 0, &out), TROWEL_ERR_CORRUPT);
    /* Declared 0 with a lone flag byte is padding. */
    CHECK_EQ_U64(decode(ctx, &trowel_lzss_szdd, zero, 1, 0, &out), TROWEL_OK);
    CHECK_EQ_U64(out.len, 0);
    buf_free(&out);
    trowel_ctx_free(ctx);
}

static void test_corrupt_match_past_declared_size_writes_nothing_beyond(void)
{
    /* 'a' then a 10-byte match, declared 5: refused, and no more than the
     * declared size was ever written. */
    static const uint8_t s[] = {0x01, 'a', 0xF0, 0xF7};
    trowel_ctx *ctx = new_ctx();
    buf out;
    uint64_t written = 99;
    CHECK_EQ_U64(decode_at(ctx, &trowel_lzss_szdd, s, sizeof s, 0, 5, &out, &written),
                 TROWEL_ERR_CORRUPT);
    CHECK_EQ_U64(trowel_ctx_last_error(ctx)->offset, 2);
    CHECK(written <= 5);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "past the declared size") != NULL);
    /* The same in the middle of a long stream (the fast path's bound). */
    buf t = make_text(5000), enc;
    REQUIRE(encode(ctx, &trowel_lzss_szdd, t.data, t.len, &enc) == TROWEL_OK);
    for (uint64_t declared = 1000; declared < 1100; declared++) {
        trowel_status st = decode_at(ctx, &trowel_lzss_szdd, enc.data, enc.len, 0, declared, &out,
                                     &written);
        CHECK(st == TROWEL_ERR_CORRUPT);
        CHECK(written <= declared);
    }
    buf_free(&enc);
    buf_free(&t);
    trowel_ctx_free(ctx);
}

static void test_random_streams_decode_within_bounds(void)
{
    /* Garbage decodes (or is refused) without going past max_output or the
     * declared size; run under ASan/valgrind this also checks memory safety. */
    trowel_ctx *ctx = new_ctx();
    uint8_t s[600];
    for (uint64_t seed = 1; seed <= 300; seed++) {
        size_t n = (size_t)(seed * 7 % 600);
        fill_random(s, n, seed);
        buf out;
        uint64_t written = 0;
        trowel_status st = decode_at(ctx, all_params[seed % 3], s, n, 0, TROWEL_SIZE_UNKNOWN,
                                     &out, &written);
        CHECK(st == TROWEL_OK || st == TROWEL_ERR_TRUNCATED);
        CHECK(written <= trowel_lzss_max_output(n));
        buf_free(&out);
        st = decode_at(ctx, all_params[seed % 3], s, n, 0, seed * 3, &out, &written);
        CHECK(written <= seed * 3);
        if (st == TROWEL_OK)
            CHECK_EQ_U64(out.len, seed * 3);
        buf_free(&out);
    }
    CHECK_EQ_U64(ctx->mem_in_use, 0);
    trowel_ctx_free(ctx);
}

/* --------------------------------------------------------------- memory */

static void test_memory_limit_refuses_and_cleans_up(void)
{
    buf t = make_text(50000), enc;
    trowel_ctx *ctx = new_ctx();
    REQUIRE(encode(ctx, &trowel_lzss_szdd, t.data, t.len, &enc) == TROWEL_OK);

    /* 4 KiB more than the input and sink hold: too small for the decoder's
     * 4 KiB history plus its buffers. */
    buf out;
    trowel_input *in;
    trowel_sink *sink;
    REQUIRE(trowel_input_open_memory(ctx, enc.data, enc.len, "t", &in) == TROWEL_OK);
    REQUIRE(trowel_sink_open_null(ctx, &sink) == TROWEL_OK);
    trowel_ctx_set_mem_limit(ctx, ctx->mem_in_use + 4096);
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    CHECK_EQ_U64(trowel_lzss_decode(ctx, &trowel_lzss_szdd, &r, t.len, sink), TROWEL_ERR_LIMIT);
    /* Too small for the encoder's match trees. */
    trowel_reader_init(&r, ctx, in);
    CHECK_EQ_U64(trowel_lzss_encode_reader(ctx, &trowel_lzss_szdd, &r, sink), TROWEL_ERR_LIMIT);
    trowel_sink_discard(sink);
    trowel_input_close(in);
    CHECK_EQ_U64(ctx->mem_in_use, 0);

    /* Every allocation failing in turn: an error, never a leak or crash. */
    trowel_ctx_set_mem_limit(ctx, 0);
    for (uint64_t k = 1; k <= 16; k++) {
        ctx->fail_alloc_after = k;
        trowel_status s = encode(ctx, &trowel_lzss_spz, t.data, t.len, &out);
        CHECK(s == TROWEL_OK || s == TROWEL_ERR_NOMEM);
        buf_free(&out);
        ctx->fail_alloc_after = k;
        s = decode(ctx, &trowel_lzss_szdd, enc.data, enc.len, t.len, &out);
        CHECK(s == TROWEL_OK || s == TROWEL_ERR_NOMEM);
        buf_free(&out);
        ctx->fail_alloc_after = 0;
        CHECK_EQ_U64(ctx->mem_in_use, 0);
    }
    buf_free(&enc);
    buf_free(&t);
    trowel_ctx_free(ctx);
}

static void test_memory_stays_bounded_for_large_data(void)
{
    /* 30 MB of output from 3.5 MB of stream through a null sink, under a
     * 2 MiB limit: the decoder's buffers do not grow with the data. */
    size_t groups = 30000000 / 144 + 1;
    uint8_t *s = malloc(groups * 17);
    for (size_t g = 0; g < groups; g++) {
        s[17 * g] = 0;
        for (size_t k = 0; k < 8; k++) {
            s[17 * g + 1 + 2 * k] = (uint8_t)(g * 8 + k);
            s[17 * g + 2 + 2 * k] = (uint8_t)(0x0F | (k << 4));
        }
    }
    trowel_ctx *ctx = new_ctx();
    trowel_input *in;
    trowel_sink *sink;
    REQUIRE(trowel_input_open_memory(ctx, s, groups * 17, "t", &in) == TROWEL_OK);
    REQUIRE(trowel_sink_open_null(ctx, &sink) == TROWEL_OK);
    trowel_ctx_set_mem_limit(ctx, ctx->mem_in_use + ((uint64_t)2 << 20));
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    CHECK_EQ_U64(trowel_lzss_decode(ctx, &trowel_lzss_szdd, &r, groups * 144, sink), TROWEL_OK);
    CHECK_EQ_U64(trowel_sink_written(sink), groups * 144);
    trowel_sink_discard(sink);
    trowel_input_close(in);

    /* The encoder, reading 3.5 MB through the reader, fits in 10 MiB. */
    REQUIRE(trowel_input_open_memory(ctx, s, groups * 17, "t", &in) == TROWEL_OK);
    REQUIRE(trowel_sink_open_null(ctx, &sink) == TROWEL_OK);
    trowel_ctx_set_mem_limit(ctx, ctx->mem_in_use + ((uint64_t)10 << 20));
    trowel_reader_init(&r, ctx, in);
    CHECK_EQ_U64(trowel_lzss_encode_reader(ctx, &trowel_lzss_spz, &r, sink), TROWEL_OK);
    CHECK(trowel_sink_written(sink) > 0);
    trowel_sink_discard(sink);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    free(s);
}

/* --------------------------------------------------------------- codecs */

static void test_codec_tables_use_their_setups(void)
{
    CHECK_STR(trowel_codec_szdd.id, "szdd");
    CHECK_STR(trowel_codec_spz.id, "spz");
    CHECK_EQ_U64(trowel_lzss_szdd.fill, ' ');
    CHECK_EQ_U64(trowel_lzss_szdd.start, 4080);
    CHECK_EQ_U64(trowel_lzss_qbasic.start, 4078);
    CHECK_EQ_U64(trowel_lzss_spz.fill, 0);
    CHECK_EQ_U64(trowel_lzss_spz.start, 4078);

    /* A match at ring 0 reads the fill: spaces for szdd, zeros for spz. */
    static const uint8_t s[] = {0x00, 0x00, 0x00};
    const struct trowel_codec *codecs[] = {&trowel_codec_szdd, &trowel_codec_spz};
    for (int i = 0; i < 2; i++) {
        trowel_ctx *ctx = new_ctx();
        trowel_input *in;
        trowel_sink *sink;
        REQUIRE(trowel_input_open_memory(ctx, s, sizeof s, "t", &in) == TROWEL_OK);
        REQUIRE(trowel_sink_open_memory(ctx, &sink) == TROWEL_OK);
        trowel_reader r;
        trowel_reader_init(&r, ctx, in);
        CHECK_EQ_U64(codecs[i]->decompress(ctx, &r, 3, sink), TROWEL_OK);
        size_t n;
        const uint8_t *d = trowel_sink_data(sink, &n);
        CHECK(n == 3 && d[0] == (i == 0 ? ' ' : 0));
        trowel_sink_discard(sink);

        /* compress then decompress through the table. */
        buf t = make_text(10000);
        trowel_input *tin;
        REQUIRE(trowel_input_open_memory(ctx, t.data, t.len, "t", &tin) == TROWEL_OK);
        REQUIRE(trowel_sink_open_memory(ctx, &sink) == TROWEL_OK);
        trowel_reader_init(&r, ctx, tin);
        CHECK_EQ_U64(codecs[i]->compress(ctx, &r, sink), TROWEL_OK);
        d = trowel_sink_data(sink, &n);
        buf packed = buf_copy(d, n), back;
        trowel_sink_discard(sink);
        CHECK_EQ_U64(decode(ctx, i == 0 ? &trowel_lzss_szdd : &trowel_lzss_spz, packed.data,
                            packed.len, t.len, &back),
                     TROWEL_OK);
        CHECK(same(&back, t.data, t.len));
        buf_free(&back);
        buf_free(&packed);
        buf_free(&t);
        trowel_input_close(tin);
        trowel_input_close(in);
        trowel_ctx_free(ctx);
    }
}

TEST_MAIN(TEST(test_roundtrip_text_all_setups), TEST(test_roundtrip_binary_all_setups),
          TEST(test_roundtrip_random_all_setups), TEST(test_roundtrip_zeros_and_fill_runs),
          TEST(test_roundtrip_tiny_inputs), TEST(test_roundtrip_window_edge_sizes),
          TEST(test_roundtrip_fill_byte_run_at_start), TEST(test_roundtrip_multi_block_input),
          TEST(test_vector_eight_literals), TEST(test_vector_match_reads_initial_fill),
          TEST(test_vector_match_runs_from_fill_into_output),
          TEST(test_vector_overlapping_match_repeats_one_byte), TEST(test_vector_distance_4096),
          TEST(test_vector_lone_flag_byte_at_end), TEST(test_size_target_gpl3),
          TEST(test_size_target_libz), TEST(test_size_target_tentacle),
          TEST(test_encoder_bits_equal_bruteforce_optimum),
          TEST(test_sha256_helper_known_answers),
          TEST(test_corpus_szdd_files_expand_to_listed_sha256),
          TEST(test_mspack_expands_our_streams),
          TEST(test_truncated_stream_every_cut), TEST(test_truncated_message_names_counts),
          TEST(test_declared_size_beyond_max_output_is_truncated),
          TEST(test_corrupt_bytes_after_the_declared_size),
          TEST(test_corrupt_match_past_declared_size_writes_nothing_beyond),
          TEST(test_random_streams_decode_within_bounds),
          TEST(test_memory_limit_refuses_and_cleans_up),
          TEST(test_memory_stays_bounded_for_large_data),
          TEST(test_codec_tables_use_their_setups))
