/*
 * Deterministic test data for the codec tests: text made of words, binary
 * with structure and noise, pseudo-random bytes, whole files. Test-only.
 */
#ifndef TROWEL_TEST_CODEC_DATA_H
#define TROWEL_TEST_CODEC_DATA_H

#include "trowel/trowel.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
    uint8_t *data;
    size_t len;
} buf;

static inline void buf_free(buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

static inline bool read_whole_file(const char *path, buf *out)
{
    FILE *f = fopen(path, "rb");
    out->data = NULL;
    out->len = 0;
    if (!f)
        return false;
    size_t cap = 1 << 16;
    out->data = malloc(cap);
    for (;;) {
        if (out->len == cap) {
            cap *= 2;
            out->data = realloc(out->data, cap);
        }
        size_t n = fread(out->data + out->len, 1, cap - out->len, f);
        if (n == 0)
            break;
        out->len += n;
    }
    fclose(f);
    return true;
}

/* Deterministic pseudo-random bytes (xorshift64*). */
static inline void fill_random(uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t x = seed ? seed : 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        p[i] = (uint8_t)((x * 0x2545F4914F6CDD1DULL) >> 56);
    }
}

/* n bytes of text: words drawn from a list by a fixed xorshift sequence. */
static inline buf make_text_from(const char *const *words, size_t nwords, size_t n)
{
    buf b = {malloc(n ? n : 1), n};
    uint64_t x = 88172645463325252ULL;
    size_t i = 0;
    while (i < n) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const char *w = words[x % nwords];
        for (size_t k = 0; w[k] && i < n; k++)
            b.data[i++] = (uint8_t)w[k];
    }
    return b;
}

static inline buf make_binary(size_t n)
{
    buf b = {malloc(n ? n : 1), n};
    fill_random(b.data, n, 99);
    for (size_t i = 0; i + 16 <= n; i += 16) {
        uint32_t v = (uint32_t)(i / 16);
        memcpy(b.data + i, &v, 4);
        memset(b.data + i + 4, 0, 4);
        if ((i / 16) % 3)
            memcpy(b.data + i + 8, "\x55\x48\x89\xe5", 4);
    }
    return b;
}

static inline trowel_ctx *new_ctx(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return ctx;
}

#endif
