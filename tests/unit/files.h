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

/* A fresh folder under /tmp (a static buffer: one at a time), or NULL. */
static inline char *make_temp_dir(void)
{
    static char templ[64];
    snprintf(templ, sizeof templ, "/tmp/trowel-test-XXXXXX");
    return mkdtemp(templ);
}

/* How many names a folder holds (dot files included), or -1. */
static inline int count_dir_entries(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

static inline void remove_tree(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "  could not remove %s\n", dir);
}

#endif
