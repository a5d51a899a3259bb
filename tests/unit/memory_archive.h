/*
 * What the tests that build archives in memory share (test_writer_memory,
 * test_create_from_memory): a copy of a memory sink's bytes, an archive
 * opened over bytes in memory and converted, the check that an entry holds
 * exactly some bytes, and a small Future Wars save (cine-save) made field
 * by field.
 */
#ifndef TROWEL_TEST_MEMORY_ARCHIVE_H
#define TROWEL_TEST_MEMORY_ARCHIVE_H

#include "files.h"
#include "trowel/trowel.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A malloc'd copy of the bytes memory sink s holds (data NULL when memory
 * runs out). */
static inline bytes sink_copy(trowel_sink *s)
{
    size_t n = 0;
    const uint8_t *d = trowel_sink_data(s, &n);
    bytes b = {malloc(n + 1), n};
    if (b.data && n)
        memcpy(b.data, d, n);
    return b;
}

/* An archive over bytes in memory (kept open by the caller). */
typedef struct opened {
    trowel_input *in;
    trowel_archive *a;
} opened;

/* Opens b as fmt (NULL: detected); name is for messages and extensions. */
static inline trowel_status open_bytes(trowel_ctx *ctx, const bytes *b, const char *name,
                                       const char *fmt, opened *o)
{
    o->a = NULL;
    trowel_status st = trowel_input_open_memory(ctx, b->data, b->size, name, &o->in);
    if (st == TROWEL_OK)
        st = trowel_archive_open(ctx, o->in, fmt ? trowel_format_find(fmt) : NULL, &o->a);
    return st;
}

static inline void close_opened(opened *o)
{
    trowel_archive_close(o->a);
    trowel_input_close(o->in);
}

/* b, opened as fmt, converted to target without options: a malloc'd copy
 * (data NULL when any step fails). */
static inline bytes converted(trowel_ctx *ctx, const bytes *b, const char *name, const char *fmt,
                              const char *target)
{
    bytes out = {NULL, 0};
    opened o = {NULL, NULL};
    trowel_sink *s = NULL;
    if (open_bytes(ctx, b, name, fmt, &o) == TROWEL_OK &&
        trowel_sink_open_memory(ctx, &s) == TROWEL_OK &&
        trowel_convert(ctx, o.a, target, NULL, 0, s) == TROWEL_OK)
        out = sink_copy(s);
    trowel_sink_discard(s);
    close_opened(&o);
    return out;
}

/* Whether entry index holds exactly want[0, n). */
static inline bool entry_at_holds(trowel_archive *a, size_t index, const void *want, size_t n)
{
    uint8_t *d = NULL;
    size_t len = 0;
    bool same = trowel_archive_read_entry_data(a, index, &d, &len) == TROWEL_OK && len == n &&
                (n == 0 || memcmp(d, want, n) == 0);
    trowel_archive_free_data(a, d);
    return same;
}

/* Whether the entry named name holds exactly want[0, n). */
static inline bool entry_holds(trowel_archive *a, const char *name, const void *want, size_t n)
{
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++)
        if (strcmp(trowel_archive_entry(a, i)->name, name) == 0)
            return entry_at_holds(a, i, want, n);
    fprintf(stderr, "  no entry %s (entry 0: %s)\n", name,
            trowel_archive_entry_count(a) ? trowel_archive_entry(a, 0)->name : "none");
    return false;
}

static inline void put_be16_at(uint8_t *b, size_t at, unsigned v)
{
    b[at] = (uint8_t)(v >> 8);
    b[at + 1] = (uint8_t)v;
}

/* A Future Wars save (cine-save): part PART01, background BG01.PI1, 255
 * object slots, a palette word, one animation set in use. */
enum { FW_ENTRY = 30, FW_SAVE_SIZE = 0x2315 + 255 * FW_ENTRY + 12 + 4 };

static inline void fw_save(uint8_t *b)
{
    memset(b, 0, FW_SAVE_SIZE);
    put_be16_at(b, 0x0000, 1);
    memcpy(b + 0x0002, "PART01", 6);
    memcpy(b + 0x0045, "BG01.PI1", 8);
    put_be16_at(b, 0x005F, 255);
    put_be16_at(b, 0x0061, 32);
    put_be16_at(b, 0x2043, 0x777);
    put_be16_at(b, 0x230F, 5);
    memcpy(b + 0x2315 + 20, "ROBOT.SET", 9);
    put_be16_at(b, 0x2315 + 255u * FW_ENTRY + 2, 42);
}

#endif
