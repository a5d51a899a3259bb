/*
 * Whole-file helpers for tests that compare trowel's work with real files.
 * Test-only; failures show up as an empty result the test then checks.
 */
#ifndef TROWEL_TEST_FILES_H
#define TROWEL_TEST_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct bytes {
    uint8_t *data; /* malloc'd, one spare byte; NULL when unreadable */
    size_t size;
} bytes;

static inline bytes read_file(const char *path)
{
    bytes b = {NULL, 0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return b;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b.data = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b.data && fread(b.data, 1, (size_t)n, f) == (size_t)n)
        b.size = (size_t)n;
    fclose(f);
    return b;
}

#endif
