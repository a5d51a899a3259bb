/*
 * Tests of the Delphine packer (src/codec/bytekiller.c): hand-built streams
 * worked out bit by bit from the seed's command table (and the long copy's
 * length-before-offset order), the encoder reproducing them exactly, round
 * trips on text, binary, random, zeros, empty and 1-byte inputs, the packed
 * sizes the issue sets for three real files, and the decoder naming each
 * check a hostile stream fails.
 */
#include "codec_data.h"
#include "files.h"
#include "test.h"

#include "codec/bytekiller.h"
#include "core/bytes.h"
#include "core/module.h"

#include <stdbool.h>
#include <time.h>





static buf make_text(size_t n)
{
    static const char *const words[] = {"the ",   "part ",  "file ",    "holds ", "packed ",
                                        "data ",  "words ", "read ",    "from ",  "the end; ",
                                        "copies ", "reach ", "forward.\n", "and ",  "back "};
    return make_text_from(words, sizeof words / sizeof words[0], n);
}



static bool encode(trowel_ctx *ctx, const uint8_t *data, size_t len, buf *out)
{
    uint8_t *p = NULL;
    size_t n = 0;
    out->data = NULL;
    out->len = 0;
    if (trowel_bytekiller_encode(ctx, data, len, &p, &n) != TROWEL_OK)
        return false;
    out->data = malloc(n);
    memcpy(out->data, p, n);
    out->len = n;
    trowel_mem_free(ctx, p);
    return true;
}

/* Decodes through the public codec API into a memory sink. */
static trowel_status decode(trowel_ctx *ctx, const uint8_t *src, size_t n, uint64_t expected,
                            buf *out)
{
    trowel_input *in;
    trowel_sink *sink;
    out->data = NULL;
    out->len = 0;
    trowel_status s = trowel_input_open_memory(ctx, src, n, "stream", &in);
    if (s != TROWEL_OK)
        return s;
    if ((s = trowel_sink_open_memory(ctx, &sink)) != TROWEL_OK) {
        trowel_input_close(in);
        return s;
    }
    const trowel_codec *c = trowel_codec_find("bytekiller");
    s = c ? trowel_codec_decompress(ctx, c, in, expected, sink) : TROWEL_ERR_UNSUPPORTED;
    if (s == TROWEL_OK) {
        size_t len;
        const uint8_t *d = trowel_sink_data(sink, &len);
        out->data = malloc(len ? len : 1);
        if (len)
            memcpy(out->data, d, len);
        out->len = len;
    }
    trowel_sink_discard(sink);
    trowel_input_close(in);
    return s;
}

static bool message_has(trowel_ctx *ctx, const char *needle)
{
    const char *m = trowel_ctx_last_error(ctx)->message;
    if (strstr(m, needle))
        return true;
    fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", m, needle);
    return false;
}

/* ------------------------------------------------------ exact vectors */

/* "AB": 0 0 001 (run of 2), 'B' then 'A' (output goes back to front), 21
 * bits, all in the first word under a marker at bit 21. */
static const uint8_t vec_ab[] = {0x00, 0x30, 0x48, 0x50, 0x00, 0x30, 0x48, 0x50,
                                 0x00, 0x00, 0x00, 0x02};
/* "ABAB": the same run, then 0 1 00000010 (copy 2 from 2 above): 31 bits. */
static const uint8_t vec_abab[] = {0xA0, 0x50, 0x48, 0x50, 0xA0, 0x50, 0x48, 0x50,
                                   0x00, 0x00, 0x00, 0x04};
/* Eleven 'A': run of 1, then 1 1 0 00001001 000000000001 (copy 10 from 1
 * above, length field before offset field): 36 bits, so the first word read
 * (the last data word) holds 4 bits under its marker and word 0 holds 32. */
static const uint8_t vec_a11[] = {0x80, 0x09, 0x07, 0x04, 0x00, 0x00, 0x00, 0x10,
                                  0x80, 0x09, 0x07, 0x14, 0x00, 0x00, 0x00, 0x0B};

static void test_bytekiller_decodes_hand_built_streams(void)
{
    trowel_ctx *ctx = new_ctx();
    buf out;
    REQUIRE(decode(ctx, vec_ab, sizeof vec_ab, 2, &out) == TROWEL_OK);
    CHECK(out.len == 2 && memcmp(out.data, "AB", 2) == 0);
    buf_free(&out);
    REQUIRE(decode(ctx, vec_abab, sizeof vec_abab, TROWEL_SIZE_UNKNOWN, &out) == TROWEL_OK);
    CHECK(out.len == 4 && memcmp(out.data, "ABAB", 4) == 0);
    buf_free(&out);
    REQUIRE(decode(ctx, vec_a11, sizeof vec_a11, 11, &out) == TROWEL_OK);
    CHECK(out.len == 11 && memcmp(out.data, "AAAAAAAAAAA", 11) == 0);
    buf_free(&out);
    trowel_ctx_free(ctx);
}

static void test_bytekiller_encoder_writes_the_hand_built_streams(void)
{
    trowel_ctx *ctx = new_ctx();
    buf p;
    REQUIRE(encode(ctx, (const uint8_t *)"AB", 2, &p));
    CHECK(p.len == sizeof vec_ab && memcmp(p.data, vec_ab, p.len) == 0);
    buf_free(&p);
    REQUIRE(encode(ctx, (const uint8_t *)"ABAB", 4, &p));
    CHECK(p.len == sizeof vec_abab && memcmp(p.data, vec_abab, p.len) == 0);
    buf_free(&p);
    REQUIRE(encode(ctx, (const uint8_t *)"AAAAAAAAAAA", 11, &p));
    CHECK(p.len == sizeof vec_a11 && memcmp(p.data, vec_a11, p.len) == 0);
    buf_free(&p);
    /* Empty input: a data word holding only the marker. */
    static const uint8_t empty[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0};
    REQUIRE(encode(ctx, NULL, 0, &p));
    CHECK(p.len == sizeof empty && memcmp(p.data, empty, p.len) == 0);
    buf_free(&p);
    trowel_ctx_free(ctx);
}

static void test_bytekiller_zero_first_word_holds_no_bits(void)
{
    /* A first-read word of 0 has no marker and gives no bits; the word
     * before it then gives all 32. Here it carries the 31 bits of "ABAB"
     * and one unused bit, which readers ignore as the game's does. */
    trowel_ctx *ctx = new_ctx();
    static const uint8_t s[] = {0x20, 0x50, 0x48, 0x50, 0, 0, 0, 0,
                                0x20, 0x50, 0x48, 0x50, 0, 0, 0, 4};
    buf out;
    CHECK(decode(ctx, s, sizeof s, 4, &out) == TROWEL_OK);
    CHECK(out.len == 4 && out.data && memcmp(out.data, "ABAB", 4) == 0);
    buf_free(&out);
    trowel_ctx_free(ctx);
}

/* ------------------------------------------------------------ round trips */

static void round_trip(const uint8_t *data, size_t len, const char *what)
{
    trowel_ctx *ctx = new_ctx();
    buf p, back;
    if (!encode(ctx, data, len, &p)) {
        fprintf(stderr, "  %s: encode failed: %s\n", what, trowel_ctx_last_error(ctx)->message);
        test_failures_in_current++;
        trowel_ctx_free(ctx);
        return;
    }
    trowel_status s = decode(ctx, p.data, p.len, len, &back);
    if (s != TROWEL_OK || back.len != len || (len && memcmp(back.data, data, len) != 0)) {
        fprintf(stderr, "  %s (%zu bytes): round trip failed: %s\n", what, len,
                trowel_ctx_last_error(ctx)->message);
        test_failures_in_current++;
    }
    buf_free(&p);
    buf_free(&back);
    trowel_ctx_free(ctx);
}

static void test_bytekiller_round_trips(void)
{
    round_trip(NULL, 0, "empty");
    round_trip((const uint8_t *)"x", 1, "one byte");
    round_trip((const uint8_t *)"xy", 2, "two bytes");
    for (size_t n = 1; n < 600; n += 37) {
        buf t = make_text(n);
        round_trip(t.data, t.len, "short text");
        buf_free(&t);
    }
    buf t = make_text(300000);
    round_trip(t.data, t.len, "text");
    buf_free(&t);
    buf b = make_binary(200000);
    round_trip(b.data, b.len, "binary");
    buf_free(&b);
    uint8_t *r = malloc(100000);
    fill_random(r, 100000, 7);
    round_trip(r, 100000, "random");
    free(r);
    uint8_t *z = calloc(70000, 1);
    round_trip(z, 70000, "zeros");
    free(z);
}

static void test_bytekiller_round_trips_across_segments(void)
{
    /* Many 256 KiB segments, text and noise mixed, a run of zeros across
     * a segment boundary. */
    size_t n = 2600000;
    buf t = make_text(n);
    fill_random(t.data + 1000000, 100000, 3);
    memset(t.data + 1048000, 0, 2000);
    round_trip(t.data, t.len, "mixed, 2.6 MB");
    buf_free(&t);
}

/* The mixed input above, smaller: about 16 segments of 48 KiB. */
static buf make_mixed(size_t n)
{
    buf t = make_text(n);
    fill_random(t.data + n / 3, n / 10, 5);
    memset(t.data + n / 2, 0, 3000);
    return t;
}

static void test_bytekiller_output_does_not_depend_on_threads(void)
{
    buf t = make_mixed(777777);
    trowel_ctx *ctx = new_ctx();
    trowel_ctx_set_threads(ctx, 1);
    buf one;
    REQUIRE(encode(ctx, t.data, t.len, &one));
    static const unsigned counts[] = {2, 3, 5, 16, 0};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        trowel_ctx_set_threads(ctx, counts[c]);
        CHECK(trowel_ctx_threads(ctx) == counts[c]);
        buf p;
        REQUIRE(encode(ctx, t.data, t.len, &p));
        if (p.len != one.len || memcmp(p.data, one.data, one.len) != 0) {
            fprintf(stderr, "  %u threads: %zu bytes, 1 thread: %zu bytes\n", counts[c], p.len,
                    one.len);
            test_failures_in_current++;
        }
        buf_free(&p);
    }
    /* A memory limit with room for one packer only: fewer threads, no
     * error, the same bytes. */
    trowel_ctx_set_threads(ctx, 8);
    trowel_ctx_set_mem_limit(ctx, 4 * t.len + 900000);
    buf tight;
    REQUIRE(encode(ctx, t.data, t.len, &tight));
    CHECK(tight.len == one.len && memcmp(tight.data, one.data, one.len) == 0);
    buf_free(&tight);
    /* Too little for even one packer: a clear refusal. */
    trowel_ctx_set_mem_limit(ctx, 2 * t.len + 1000);
    buf none;
    CHECK(!encode(ctx, t.data, t.len, &none));
    CHECK(trowel_ctx_last_error(ctx)->status == TROWEL_ERR_LIMIT);
    buf_free(&one);
    buf_free(&t);
    trowel_ctx_free(ctx);
}

static void test_bytekiller_random_data_barely_grows(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t *r = malloc(65536);
    fill_random(r, 65536, 11);
    buf p;
    REQUIRE(encode(ctx, r, 65536, &p));
    /* 264-byte runs cost 11 bits of header: about 0.5% over, plus 12 bytes. */
    CHECK(p.len <= 65536 + 65536 / 190 + 16);
    buf_free(&p);
    free(r);
    trowel_ctx_free(ctx);
}

/* ------------------------------------------------------------ ratios */

static void check_target(const char *path, size_t limit)
{
    buf in;
    if (!read_whole_file(path, &in)) {
        test_skip("%s absent: its size target is not checked", path);
        return;
    }
    trowel_ctx *ctx = new_ctx();
    buf p, back;
    /* Wall time: the encoder may use several threads. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool ok = encode(ctx, in.data, in.len, &p);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    CHECK(ok);
    if (ok) {
        printf("  %s: %zu -> %zu bytes (target <= %zu), %.1f MB/s\n", path, in.len, p.len, limit,
               secs > 0 ? (double)in.len / secs / 1e6 : 0.0);
        CHECK(p.len <= limit);
        CHECK(decode(ctx, p.data, p.len, in.len, &back) == TROWEL_OK);
        CHECK(back.len == in.len && memcmp(back.data, in.data, in.len) == 0);
        buf_free(&back);
    }
    buf_free(&p);
    buf_free(&in);
    trowel_ctx_free(ctx);
}

static void test_bytekiller_meets_size_targets(void)
{
    /* The targets; the sizes are deterministic (the figures in
     * docs/formats/bytekiller.md come from this test's output). */
    check_target("/usr/share/common-licenses/GPL-3", 15817);
    check_target("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", 69437);
    check_target(TROWEL_CORPUS_DIR "/scumm/openquest/tentacle.001", 301655);
}

/* Decodes through the public codec API into the file dir/OUT with the given
 * threads (2: a large output is written by a second thread as it is
 * decoded; 1: at the end). */
static trowel_status decode_to_file(const uint8_t *src, size_t n, unsigned threads,
                                    const char *dir)
{
    trowel_ctx *ctx = new_ctx();
    trowel_ctx_set_threads(ctx, threads);
    char path[256];
    snprintf(path, sizeof path, "%s/OUT", dir);
    trowel_input *in;
    trowel_sink *sink;
    trowel_status s = trowel_input_open_memory(ctx, src, n, "stream", &in);
    if (s == TROWEL_OK && (s = trowel_sink_open_file(ctx, path, TROWEL_SINK_OVERWRITE, &sink)) ==
                              TROWEL_OK) {
        s = trowel_codec_decompress(ctx, trowel_codec_find("bytekiller"), in,
                                    TROWEL_SIZE_UNKNOWN, sink);
        if (s == TROWEL_OK)
            s = trowel_sink_finish(sink);
        else
            trowel_sink_discard(sink);
    }
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return s;
}

/* Sets the checksum word of the n-byte stream s (8 bytes from its end) to
 * the XOR of its data words, so that damage to them reaches the decoder. */
static void make_checksum_match(uint8_t *s, size_t n)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 8 < n; i += 4)
        sum ^= (uint32_t)s[i] << 24 | (uint32_t)s[i + 1] << 16 | (uint32_t)s[i + 2] << 8 | s[i + 3];
    trowel_put_be32(s + n - 8, sum);
}

/* plain packed on a context of its own. */
static bool encode_alone(const buf *plain, buf *packed)
{
    trowel_ctx *ctx = new_ctx();
    bool ok = encode(ctx, plain->data, plain->len, packed);
    trowel_ctx_free(ctx);
    return ok;
}

/* packed decodes to plain through a file sink, on one thread and on two
 * (the writer thread), leaving just that file in dir (removed after). */
static void check_decodes_to_file(const buf *packed, const buf *plain, const char *dir)
{
    char out[256];
    snprintf(out, sizeof out, "%s/OUT", dir);
    for (unsigned threads = 1; threads <= 2; threads++) {
        CHECK(decode_to_file(packed->data, packed->len, threads, dir) == TROWEL_OK);
        bytes back = read_file(out);
        CHECK(back.size == plain->len && back.data &&
              memcmp(back.data, plain->data, plain->len) == 0);
        free(back.data);
        CHECK(count_dir_entries(dir) == 1);
        remove(out);
    }
}

static void test_bytekiller_large_output_is_written_while_decoding(void)
{
    /* Over the 8 MiB from which a second thread writes the output at its
     * place in the file as the decoder finishes it, from the end down. */
    size_t n = 9 * 1024 * 1024 + 12345;
    buf t = make_mixed(n);
    buf p;
    REQUIRE(encode_alone(&t, &p));
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    check_decodes_to_file(&p, &t, dir);
    /* A stream that runs out near the end of decoding (its words read last
     * removed, the checksum made good): an error, and no file at all, not
     * even the pieces already written. */
    size_t cut = 4 * 64;
    uint8_t *bad = malloc(p.len - cut);
    REQUIRE(bad != NULL);
    memcpy(bad, p.data + cut, p.len - cut);
    make_checksum_match(bad, p.len - cut);
    CHECK(decode_to_file(bad, p.len - cut, 2, dir) != TROWEL_OK);
    CHECK(count_dir_entries(dir) == 0);
    free(bad);
    remove_tree(dir);
    buf_free(&p);
    buf_free(&t);
}

/* Decoded to a file by a second thread, the output is in memory only a
 * window at a time (8 MiB); each time the window moves down it must keep
 * the bytes above the decoder that copies still read. Here every copy
 * reaches 4,000 bytes up (a 4,000-byte block repeated, one byte changed in
 * each), over 20 MiB: the window moves twice. */
static void test_bytekiller_window_keeps_what_copies_read(void)
{
    size_t n = 20u << 20, period = 4000;
    buf t = {malloc(n), n};
    REQUIRE(t.data != NULL);
    fill_random(t.data, period, 7);
    for (size_t i = period; i < n; i++)
        t.data[i] = t.data[i - period] ^ (i % period == (i / period * 7) % period ? 0xff : 0);
    buf p;
    REQUIRE(encode_alone(&t, &p));
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    check_decodes_to_file(&p, &t, dir);
    remove_tree(dir);
    buf_free(&p);
    buf_free(&t);
}

/* ------------------------------------------------------ decoder builds */

/* What one decode gave: status, message, offset and bytes. */
typedef struct decode_outcome {
    trowel_status s;
    char message[sizeof(((trowel_error *)NULL)->message)];
    uint64_t offset;
    buf out;
} decode_outcome;

/* Decodes the stream in memory (path NULL) or in the file at path, into
 * memory (out_path NULL) or into the file at out_path (a large output then
 * goes through the writer thread's window), with the decoder built for
 * this processor or the portable one. */
static decode_outcome decode_build(const uint8_t *src, size_t n, const char *path,
                                   const char *out_path, bool portable)
{
    decode_outcome o = {TROWEL_OK, "", 0, {NULL, 0}};
    trowel_ctx *ctx = new_ctx();
    trowel_ctx_set_threads(ctx, 2);
    trowel_input *in;
    trowel_sink *sink;
    o.s = path ? trowel_input_open_file(ctx, path, &in)
               : trowel_input_open_memory(ctx, src, n, "stream", &in);
    if (o.s == TROWEL_OK &&
        (out_path ? trowel_sink_open_file(ctx, out_path, TROWEL_SINK_OVERWRITE, &sink)
                  : trowel_sink_open_memory(ctx, &sink)) != TROWEL_OK) {
        trowel_input_close(in);
        o.s = TROWEL_ERR_IO;
    }
    if (o.s != TROWEL_OK) {
        fprintf(stderr, "  cannot set up the decode\n");
        test_failures_in_current++;
        trowel_ctx_free(ctx);
        return o;
    }
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    o.s = portable ? trowel_bytekiller_decode_portable(ctx, &r, TROWEL_SIZE_UNKNOWN, sink)
                   : trowel_bytekiller_decode(ctx, &r, TROWEL_SIZE_UNKNOWN, sink);
    const trowel_error *e = trowel_ctx_last_error(ctx);
    snprintf(o.message, sizeof o.message, "%s", o.s == TROWEL_OK ? "" : e->message);
    o.offset = o.s == TROWEL_OK ? 0 : e->offset;
    if (out_path) {
        if (o.s == TROWEL_OK && trowel_sink_finish(sink) == TROWEL_OK) {
            bytes back = read_file(out_path);
            o.out.data = back.data;
            o.out.len = back.size;
            remove(out_path);
        } else {
            trowel_sink_discard(sink);
        }
    } else {
        size_t len;
        const uint8_t *d = trowel_sink_data(sink, &len);
        o.out.data = malloc(len ? len : 1);
        if (len)
            memcpy(o.out.data, d, len);
        o.out.len = len;
        trowel_sink_discard(sink);
    }
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return o;
}

/* Both builds of the decoder on one stream: from memory into memory, from
 * a file (the loader thread) into memory, from a file into a file (and the
 * writer thread). */
static void check_builds_agree(const uint8_t *src, size_t n, const char *dir, const char *what)
{
    static const char *const ways[] = {"memory to memory", "file to memory", "file to file"};
    char path[256], out[256];
    snprintf(path, sizeof path, "%s/STREAM", dir);
    snprintf(out, sizeof out, "%s/OUT", dir);
    write_file(path, src, n);
    for (int way = 0; way < 3; way++) {
        const char *in_path = way > 0 ? path : NULL, *out_path = way == 2 ? out : NULL;
        decode_outcome a = decode_build(src, n, in_path, out_path, false);
        decode_outcome b = decode_build(src, n, in_path, out_path, true);
        bool same = a.s == b.s && strcmp(a.message, b.message) == 0 && a.offset == b.offset &&
                    a.out.len == b.out.len &&
                    (a.out.len == 0 || memcmp(a.out.data, b.out.data, a.out.len) == 0);
        if (!same) {
            fprintf(stderr, "  %s (%s): %d \"%s\" at %llu, portable %d \"%s\" at %llu\n", what,
                    ways[way], a.s, a.message, (unsigned long long)a.offset, b.s, b.message,
                    (unsigned long long)b.offset);
            test_failures_in_current++;
        }
        buf_free(&a.out);
        buf_free(&b.out);
    }
}

/* trowel_bytekiller_decode may run a build of the decoder made for the
 * processor (BMI2 on x86-64); the portable build must agree with it on
 * every outcome: sound streams, a large one (the loader, prefault and
 * writer threads), and damaged copies the decoder or the checksum
 * refuses. */
static void test_bytekiller_decoder_builds_agree(void)
{
    char *dir = make_temp_dir();
    REQUIRE(dir != NULL);
    trowel_ctx *ctx = new_ctx();
    static const size_t sizes[] = {100000, 9 * 1024 * 1024 + 4321};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        buf t = make_mixed(sizes[k]);
        buf p;
        REQUIRE(encode(ctx, t.data, t.len, &p));
        check_builds_agree(p.data, p.len, dir, "sound");
        for (unsigned seed = 1; seed <= 6; seed++) {
            /* Bits flipped where decoding starts (the last data words),
             * the checksum made to match or not. */
            uint8_t *bad = malloc(p.len);
            REQUIRE(bad != NULL);
            memcpy(bad, p.data, p.len);
            uint64_t x = seed * 0x9E3779B97F4A7C15u;
            for (unsigned i = 0; i < 3; i++) {
                x ^= x >> 29;
                x *= 0xBF58476D1CE4E5B9u;
                bad[p.len - 9 - (size_t)(x >> 40) % (p.len < 4009 ? p.len - 9 : 4000)] ^=
                    (uint8_t)(1u << (x & 7));
            }
            if (seed % 3 != 0)
                make_checksum_match(bad, p.len);
            check_builds_agree(bad, p.len, dir, "damaged");
            free(bad);
        }
        buf_free(&p);
        buf_free(&t);
    }
    trowel_ctx_free(ctx);
    remove_tree(dir);
}

/* ------------------------------------------------------------ hostile */

static void test_bytekiller_rejects_bad_checksum(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t s[sizeof vec_abab];
    memcpy(s, vec_abab, sizeof s);
    s[7] ^= 1;
    buf out;
    CHECK(decode(ctx, s, sizeof s, 4, &out) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "checksum"));
    /* A flipped data bit with a matching checksum still decodes to other
     * bytes or fails; here it flips a literal bit: the checksum catches it. */
    memcpy(s, vec_abab, sizeof s);
    s[3] ^= 0x10;
    CHECK(decode(ctx, s, sizeof s, 4, &out) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "checksum"));
    trowel_ctx_free(ctx);
}

static void test_bytekiller_rejects_length_mismatch(void)
{
    trowel_ctx *ctx = new_ctx();
    buf out;
    CHECK(decode(ctx, vec_abab, sizeof vec_abab, 5, &out) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "length field says 4"));
    /* A length field the stream cannot possibly fill: refused before any
     * allocation. */
    uint8_t s[sizeof vec_ab];
    memcpy(s, vec_ab, sizeof s);
    s[8] = 0x7f;
    CHECK(decode(ctx, s, sizeof s, TROWEL_SIZE_UNKNOWN, &out) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "more than"));
    trowel_ctx_free(ctx);
}

static void test_bytekiller_rejects_truncated_and_ragged(void)
{
    trowel_ctx *ctx = new_ctx();
    buf out;
    CHECK(decode(ctx, vec_ab, 8, TROWEL_SIZE_UNKNOWN, &out) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "at least 12"));
    CHECK(decode(ctx, vec_ab, 11, TROWEL_SIZE_UNKNOWN, &out) == TROWEL_ERR_CORRUPT);
    /* vec_a11 without its word 0: the commands run out of bits. */
    uint8_t s[12] = {0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x10, 0, 0, 0, 11};
    CHECK(decode(ctx, s, sizeof s, 11, &out) == TROWEL_ERR_TRUNCATED);
    CHECK(message_has(ctx, "ran out"));
    /* Ask for more output than the commands give. */
    uint8_t l[sizeof vec_ab];
    memcpy(l, vec_ab, sizeof l);
    l[11] = 3;
    CHECK(decode(ctx, l, sizeof l, 3, &out) == TROWEL_ERR_TRUNCATED);
    trowel_ctx_free(ctx);
}

static void test_bytekiller_rejects_unread_words(void)
{
    trowel_ctx *ctx = new_ctx();
    /* An extra zero word in front of "AB": never read, checksum unchanged. */
    uint8_t s[16] = {0, 0, 0, 0, 0x00, 0x30, 0x48, 0x50, 0x00, 0x30, 0x48, 0x50, 0, 0, 0, 2};
    buf out;
    CHECK(decode(ctx, s, sizeof s, 2, &out) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "never read"));
    trowel_ctx_free(ctx);
}

/* Builds a one-word stream from up to 31 decoding-order bits given as a
 * string of '0'/'1'. */
static void one_word_stream(const char *bits, uint32_t length, uint8_t s[12])
{
    uint32_t w = 0;
    unsigned n = (unsigned)strlen(bits);
    for (unsigned i = 0; i < n; i++)
        if (bits[i] == '1')
            w |= 1u << i;
    w |= 1u << n;
    for (int i = 0; i < 4; i++) {
        s[i] = (uint8_t)(w >> (24 - 8 * i));
        s[4 + i] = s[i];
        s[8 + i] = (uint8_t)(length >> (24 - 8 * i));
    }
}

static void test_bytekiller_rejects_bad_back_references(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t s[12];
    buf out;
    /* Copy 2 from 1 above with nothing decoded yet. */
    one_word_stream("01" "00000001", 2, s);
    CHECK(decode(ctx, s, 12, 2, &out) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "past the end of the output"));
    /* Literal 'A', then copy 2 with offset 0. */
    one_word_stream("00000" "01000001" "01" "00000000", 3, s);
    CHECK(decode(ctx, s, 12, 3, &out) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "offset 0"));
    /* Literal 'A', then copy 2 from 2 above: only 1 byte decoded. */
    one_word_stream("00000" "01000001" "01" "00000010", 3, s);
    CHECK(decode(ctx, s, 12, 3, &out) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "past the end"));
    /* A run of 3 literals into a 2-byte output. */
    one_word_stream("00010", 2, s);
    CHECK(decode(ctx, s, 12, 2, &out) == TROWEL_ERR_CORRUPT);
    CHECK(message_has(ctx, "past the start"));
    /* Literal 'A' + copy 2 from 1 above: "AAA", accepted. */
    one_word_stream("00000" "01000001" "01" "00000001", 3, s);
    CHECK(decode(ctx, s, 12, 3, &out) == TROWEL_OK);
    CHECK(out.len == 3 && memcmp(out.data, "AAA", 3) == 0);
    buf_free(&out);
    trowel_ctx_free(ctx);
}

static void test_bytekiller_respects_memory_limit(void)
{
    trowel_ctx *ctx = new_ctx();
    uint8_t *z = calloc(200000, 1);
    buf p, out;
    REQUIRE(encode(ctx, z, 200000, &p));
    trowel_ctx_set_mem_limit(ctx, 100000);
    CHECK(decode(ctx, p.data, p.len, 200000, &out) == TROWEL_ERR_LIMIT);
    buf_free(&p);
    free(z);
    trowel_ctx_free(ctx);
}


/* ------------------------------------------------------------ in place */

/* A plain one-bit-at-a-time decoder in the manner of the game's and
 * extract_cine's, run in place: the packed bytes sit at the start of buf,
 * the output fills buf[0, unpacked). Written from the seed's description,
 * independently of the codec, to check its in-place model. */
typedef struct ref_state {
    uint8_t *buf;
    size_t src; /* next word to load starts here + 1 word back */
    uint32_t chunk, crc;
    bool error;
} ref_state;

static uint32_t ref_word(ref_state *r)
{
    if (r->src < 4) {
        r->error = true;
        return 0;
    }
    r->src -= 4;
    const uint8_t *p = r->buf + r->src;
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static unsigned ref_bit(ref_state *r)
{
    unsigned carry = r->chunk & 1;
    r->chunk >>= 1;
    if (r->chunk == 0) {
        r->chunk = ref_word(r);
        r->crc ^= r->chunk;
        carry = r->chunk & 1;
        r->chunk = r->chunk >> 1 | 0x80000000u;
    }
    return carry;
}

static unsigned ref_bits(ref_state *r, unsigned n)
{
    unsigned v = 0;
    while (n--)
        v = v << 1 | ref_bit(r);
    return v;
}

static bool ref_unpack_in_place(uint8_t *mem, size_t packed, size_t unpacked)
{
    ref_state r = {mem, packed, 0, 0, false};
    uint32_t length = ref_word(&r);
    r.crc = ref_word(&r);
    r.chunk = ref_word(&r);
    r.crc ^= r.chunk;
    if (length != unpacked)
        return false;
    size_t pos = unpacked;
    while (pos > 0 && !r.error) {
        unsigned len, off = 0;
        bool literal;
        if (!ref_bit(&r)) {
            literal = !ref_bit(&r);
            if (literal) {
                len = ref_bits(&r, 3) + 1;
            } else {
                len = 2;
                off = ref_bits(&r, 8);
            }
        } else {
            unsigned c = ref_bits(&r, 2);
            literal = c == 3;
            if (literal) {
                len = ref_bits(&r, 8) + 9;
            } else if (c < 2) {
                len = c + 3;
                off = ref_bits(&r, c + 9);
            } else {
                len = ref_bits(&r, 8) + 1;
                off = ref_bits(&r, 12);
            }
        }
        if (len > pos || (!literal && (off == 0 || off > unpacked - pos)))
            return false;
        while (len--) {
            pos--;
            mem[pos] = literal ? (uint8_t)ref_bits(&r, 8) : mem[pos + off];
        }
    }
    return !r.error && r.crc == 0;
}

static void check_in_place(const uint8_t *data, size_t len, const char *what)
{
    trowel_ctx *ctx = new_ctx();
    buf p;
    REQUIRE(encode(ctx, data, len, &p));
    bool safe = trowel_bytekiller_in_place_safe(ctx, p.data, p.len, len);
    if (p.len < len) {
        uint8_t *work = malloc(len);
        memcpy(work, p.data, p.len);
        bool ok = ref_unpack_in_place(work, p.len, len) && memcmp(work, data, len) == 0;
        if (!ok || !safe)
            fprintf(stderr, "  %s: %zu -> %zu, in-place decode %s, checker says %s\n", what, len,
                    p.len, ok ? "right" : "WRONG", safe ? "safe" : "unsafe");
        CHECK(ok && safe);
        free(work);
    }
    buf_free(&p);
    trowel_ctx_free(ctx);
}

static void test_bytekiller_streams_unpack_in_place(void)
{
    /* Data whose start hardly packs is where in-place decoding breaks:
     * random heads on compressible tails, text, short tables. */
    for (size_t head = 0; head < 64; head += 3) {
        buf t = make_text(2000 + head * 7);
        fill_random(t.data, head, head + 1);
        check_in_place(t.data, t.len, "random head, text tail");
        buf_free(&t);
    }
    buf b = make_binary(50000);
    check_in_place(b.data, b.len, "binary");
    buf_free(&b);
    buf m = make_mixed(300000); /* several segments: the last one is kept in place */
    fill_random(m.data, 40, 9);
    check_in_place(m.data, m.len, "mixed, several segments");
    buf_free(&m);
    for (size_t n = 8; n < 400; n += 13) {
        uint8_t *r = malloc(n);
        fill_random(r, n, n);
        for (size_t i = n / 2; i < n; i++)
            r[i] = (uint8_t)(i % 7); /* a packable second half */
        check_in_place(r, n, "half random");
        free(r);
    }
}

/* Lays out a stream from bits given in decoding order ('0'/'1' string):
 * the odd bits go under the marker of the first word read. */
static size_t lay_out(const char *bits, uint32_t length, uint8_t *out)
{
    size_t total = strlen(bits), odd = total % 32, words = total / 32 + 1;
    uint32_t sum = 0;
    for (size_t w = 0; w < words; w++) {
        /* w = 0 is the first word read, stored last */
        size_t from = w == 0 ? 0 : odd + 32 * (w - 1), n = w == 0 ? odd : 32;
        uint32_t v = w == 0 ? 1u << odd : 0;
        for (size_t i = 0; i < n; i++)
            if (bits[from + i] == '1')
                v |= 1u << i;
        uint8_t *p = out + 4 * (words - 1 - w);
        p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
        sum ^= v;
    }
    uint8_t *t = out + 4 * words;
    t[0] = (uint8_t)(sum >> 24), t[1] = (uint8_t)(sum >> 16), t[2] = (uint8_t)(sum >> 8), t[3] = (uint8_t)sum;
    t[4] = (uint8_t)(length >> 24), t[5] = (uint8_t)(length >> 16), t[6] = (uint8_t)(length >> 8), t[7] = (uint8_t)length;
    return 4 * words + 8;
}

static void add_field(char *bits, unsigned v, unsigned w)
{
    size_t n = strlen(bits);
    for (unsigned i = 0; i < w; i++)
        bits[n + i] = (v >> (w - 1 - i)) & 1 ? '1' : '0';
    bits[n + w] = '\0';
}

static void test_bytekiller_in_place_checker_spots_unsafe_streams(void)
{
    trowel_ctx *ctx = new_ctx();
    CHECK(trowel_bytekiller_in_place_safe(ctx, vec_ab, sizeof vec_ab, 2));
    CHECK(trowel_bytekiller_in_place_safe(ctx, vec_a11, sizeof vec_a11, 11));
    /* Output: bytes 0..10 = 'a'..'k', then 100 'Z'. Decoding order: 'Z'
     * (a run of 1), copy 99 from 1 above, a run of 3 ('k' 'j' 'i'), a run
     * of 8 ('h'..'a'). When the copy's lowest byte (position 11) is
     * written, 29 + 69 = 98 bits are unread: 3 words, which sit on bytes
     * 0..11 of the buffer, so byte 11 lands on an unread word. */
    char bits[512] = "";
    add_field(bits, 0, 5), add_field(bits, 'Z', 8);
    add_field(bits, 6u << 8 | 98, 11), add_field(bits, 1, 12);
    add_field(bits, 2, 5);
    for (int c = 'k'; c >= 'i'; c--)
        add_field(bits, (unsigned)c, 8);
    add_field(bits, 7, 5);
    for (int c = 'h'; c >= 'a'; c--)
        add_field(bits, (unsigned)c, 8);
    uint8_t stream[64];
    size_t n = lay_out(bits, 111, stream);
    buf out;
    REQUIRE(decode(ctx, stream, n, 111, &out) == TROWEL_OK);
    CHECK(memcmp(out.data, "abcdefghijkZZZ", 14) == 0 && out.data[110] == 'Z');
    CHECK(!trowel_bytekiller_in_place_safe(ctx, stream, n, 111));
    /* ... and the in-place decoder indeed gets it wrong. */
    uint8_t work[111];
    memcpy(work, stream, n);
    CHECK(!ref_unpack_in_place(work, n, 111) || memcmp(work, out.data, 111) != 0);
    /* The encoder packs the same bytes safely. */
    check_in_place(out.data, out.len, "the unsafe example's bytes");
    buf_free(&out);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_bytekiller_decodes_hand_built_streams),
          TEST(test_bytekiller_encoder_writes_the_hand_built_streams),
          TEST(test_bytekiller_zero_first_word_holds_no_bits),
          TEST(test_bytekiller_round_trips), TEST(test_bytekiller_round_trips_across_segments),
          TEST(test_bytekiller_output_does_not_depend_on_threads),
          TEST(test_bytekiller_large_output_is_written_while_decoding),
          TEST(test_bytekiller_window_keeps_what_copies_read),
          TEST(test_bytekiller_decoder_builds_agree),
          TEST(test_bytekiller_random_data_barely_grows),
          TEST(test_bytekiller_meets_size_targets), TEST(test_bytekiller_rejects_bad_checksum),
          TEST(test_bytekiller_rejects_length_mismatch),
          TEST(test_bytekiller_rejects_truncated_and_ragged),
          TEST(test_bytekiller_rejects_unread_words),
          TEST(test_bytekiller_rejects_bad_back_references),
          TEST(test_bytekiller_respects_memory_limit),
          TEST(test_bytekiller_streams_unpack_in_place),
          TEST(test_bytekiller_in_place_checker_spots_unsafe_streams))
