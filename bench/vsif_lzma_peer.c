/*
 * The LZMA part of bench_vsif.sh, in one process so the two sides share
 * every condition: the scenes' BVCDs (files named on the command line) are
 * encoded one by one with trowel's Valve-LZMA encoder and with liblzma
 * alone (raw LZMA1, preset 6, 64 KiB dictionary, one reused stream: the
 * settings trowel uses), then decoded back by both; passes alternate, RUNS
 * times, and the medians are printed. It calls internal functions, so it
 * links the library's objects (libtrowel.a exports only the public API):
 *   cc -O2 -Iinclude -Isrc bench/vsif_lzma_peer.c \
 *      $(find BUILD/CMakeFiles/trowel_objects.dir -name '*.o') \
 *      -llzma -lz -ljson-c -lpng -lgif -llz4 -lpthread -lm -o vsif_lzma_peer
 * Output: "<scenes> <bytes in> <trowel bytes> <liblzma bytes>" then one line
 * per pass: "<name> <median seconds>".
 * With "--decompile IMAGE" instead: the median time to decompile every scene
 * of IMAGE to text through the library (into a null sink, no files), so the
 * figure is the format's work, not the file system's.
 */
#include "codec/vsif_lzma.h"

#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct blob {
    uint8_t *data, *ours, *peer;
    size_t size, ours_size, peer_size;
} blob;

static int load(const char *path, blob *b)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b->data = malloc((size_t)n + 1);
    b->size = b->data && fread(b->data, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
    fclose(f);
    return b->data ? 0 : -1;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v)
{
    qsort(v, RUNS, sizeof *v, cmp_double);
    return v[RUNS / 2];
}

static int trowel_encode_all(trowel_ctx *ctx, blob *b, int n)
{
    trowel_vsif_lzma_encoder *e;
    if (trowel_vsif_lzma_encoder_new(ctx, &e) != TROWEL_OK)
        return -1;
    for (int i = 0; i < n; i++) {
        trowel_mem_free(ctx, b[i].ours);
        if (trowel_vsif_lzma_encoder_run(e, b[i].data, b[i].size, &b[i].ours, &b[i].ours_size))
            return -1;
    }
    trowel_vsif_lzma_encoder_free(e);
    return 0;
}

static int trowel_decode_all(trowel_ctx *ctx, blob *b, int n)
{
    for (int i = 0; i < n; i++) {
        uint8_t *back;
        size_t len;
        if (trowel_vsif_lzma_decode(ctx, b[i].ours, b[i].ours_size, 0, &back, &len) ||
            len != b[i].size || memcmp(back, b[i].data, len) != 0)
            return -1;
        trowel_mem_free(ctx, back);
    }
    return 0;
}

static int peer_encode_all(blob *b, int n, lzma_filter *f)
{
    lzma_stream s = LZMA_STREAM_INIT;
    for (int i = 0; i < n; i++) {
        size_t cap = b[i].size + b[i].size / 32 + 256;
        free(b[i].peer);
        b[i].peer = malloc(cap);
        if (lzma_raw_encoder(&s, f) != LZMA_OK)
            return -1;
        s.next_in = b[i].data;
        s.avail_in = b[i].size;
        s.next_out = b[i].peer;
        s.avail_out = cap;
        if (lzma_code(&s, LZMA_FINISH) != LZMA_STREAM_END)
            return -1;
        b[i].peer_size = (size_t)s.total_out;
    }
    lzma_end(&s);
    return 0;
}

static int peer_decode_all(blob *b, int n, lzma_filter *f)
{
    lzma_stream s = LZMA_STREAM_INIT;
    for (int i = 0; i < n; i++) {
        uint8_t *back = malloc(b[i].size + 1);
        if (lzma_raw_decoder(&s, f) != LZMA_OK)
            return -1;
        s.next_in = b[i].peer;
        s.avail_in = b[i].peer_size;
        s.next_out = back;
        s.avail_out = b[i].size;
        while (s.avail_out > 0 && lzma_code(&s, LZMA_RUN) == LZMA_OK)
            ;
        if (s.avail_out != 0 || memcmp(back, b[i].data, b[i].size) != 0)
            return -1;
        free(back);
    }
    lzma_end(&s);
    return 0;
}

static int decompile(const char *path)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in;
    trowel_archive *a;
    if (trowel_input_open_file(ctx, path, &in) || trowel_archive_open(ctx, in, NULL, &a))
        return 1;
    double t[RUNS];
    size_t bytes = 0;
    for (int r = 0; r < RUNS; r++) {
        double t0 = now();
        bytes = 0;
        for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
            trowel_sink *s;
            if (trowel_sink_open_null(ctx, &s) || trowel_archive_read_entry(a, i, s))
                return 1;
            bytes += trowel_sink_written(s);
            trowel_sink_discard(s);
        }
        t[r] = now() - t0;
    }
    printf("%zu %zu\ndecompile %.4f\n", trowel_archive_entry_count(a), bytes, median(t));
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--decompile") == 0)
        return decompile(argv[2]);
    int n = argc - 1;
    blob *b = calloc((size_t)(n ? n : 1), sizeof *b);
    size_t in = 0, ours = 0, peer = 0;
    for (int i = 0; i < n; i++) {
        if (load(argv[i + 1], &b[i]) != 0)
            return 1;
        in += b[i].size;
    }
    trowel_ctx *ctx = trowel_ctx_new();
    lzma_options_lzma opt;
    lzma_lzma_preset(&opt, 6);
    opt.dict_size = 64 * 1024;
    lzma_filter f[2] = {{LZMA_FILTER_LZMA1, &opt}, {LZMA_VLI_UNKNOWN, NULL}};
    double te[RUNS], pe[RUNS], td[RUNS], pd[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = now();
        if (trowel_encode_all(ctx, b, n))
            return 2;
        double t1 = now();
        if (peer_encode_all(b, n, f))
            return 3;
        double t2 = now();
        if (trowel_decode_all(ctx, b, n))
            return 4;
        double t3 = now();
        if (peer_decode_all(b, n, f))
            return 5;
        double t4 = now();
        te[r] = t1 - t0, pe[r] = t2 - t1, td[r] = t3 - t2, pd[r] = t4 - t3;
    }
    for (int i = 0; i < n; i++) {
        ours += b[i].ours_size;
        peer += b[i].peer_size + TROWEL_VSIF_LZMA_HEADER_SIZE;
    }
    printf("%d %zu %zu %zu\n", n, in, ours, peer);
    printf("trowel_encode %.4f\nliblzma_encode %.4f\n", median(te), median(pe));
    printf("trowel_decode %.4f\nliblzma_decode %.4f\n", median(td), median(pd));
    return 0;
}
