/*
 * The body shared by the fuzz targets of archive formats: the input goes
 * through the public API the way the CLI drives it (open as the named
 * format, info/list JSON, manifest, every entry expanded, verify). Each call
 * must fail cleanly or succeed; a 64 MiB memory limit turns any allocation
 * sized by a hostile header into an error instead of an OOM; and a decoded
 * entry must never exceed its declared size (exactly that size on success),
 * and read at offsets (trowel_entry_reader) it gives the same bytes.
 */
#ifndef TROWEL_ARCHIVE_FUZZ_H
#define TROWEL_ARCHIVE_FUZZ_H

#include "trowel/trowel.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Entry i read at offsets (trowel_entry_reader, as trowel mount reads):
 * forwards in slices, then one slice back; every slice read must be the
 * bytes the whole read gave (want, n of them, complete when whole_ok), and
 * never more than the entry's size. */
static inline void fuzz_read_at_offsets(trowel_archive *a, size_t i, const uint8_t *want,
                                        size_t n, bool whole_ok)
{
    trowel_entry_reader *r = NULL;
    if (trowel_entry_reader_open(a, i, &r) != TROWEL_OK)
        return;
    static uint8_t slice[65536];
    uint64_t size = trowel_entry_reader_size(r), off = 0;
    size_t got = 0;
    bool ok = true;
    for (; ok && off < size && off < (8u << 20); off += got) {
        ok = trowel_entry_reader_read(r, off, slice, 3001, &got) == TROWEL_OK && got > 0;
        if (ok && (off + got > size || (off + got <= n && memcmp(slice, want + off, got) != 0)))
            abort();
        if (ok && whole_ok && off + got > n)
            abort(); /* the whole read ended sooner */
    }
    if (off > 5000 && trowel_entry_reader_read(r, off - 5000, slice, 4000, &got) == TROWEL_OK &&
        (got > 4000 || (off - 5000 + got <= n && memcmp(slice, want + off - 5000, got) != 0)))
        abort();
    trowel_entry_reader_close(r);
}

static inline void fuzz_expand_entries(trowel_ctx *ctx, trowel_archive *a)
{
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
        trowel_sink *s;
        if (trowel_sink_open_memory(ctx, &s) != TROWEL_OK)
            return;
        trowel_status st = trowel_archive_read_entry(a, i, s);
        size_t n = 0;
        const uint8_t *data = trowel_sink_data(s, &n);
        uint64_t declared = trowel_archive_entry(a, i)->size;
        if ((st == TROWEL_OK && n != declared) || n > declared)
            abort();
        fuzz_read_at_offsets(a, i, data, n, st == TROWEL_OK);
        trowel_sink_discard(s);
    }
}

/* JSON is UTF-8 whatever bytes the names hold: checked here on its own
 * (RFC 3629's table), not with the library's checker. */
static inline void fuzz_require_utf8(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    while (*p) {
        unsigned char c = *p;
        int more = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2
                 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
        if (more < 0)
            abort();
        unsigned char lo = 0x80, hi = 0xBF; /* the second byte's range */
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
        for (int k = 1; k <= more; k++)
            if (p[k] < (k == 1 ? lo : 0x80) || p[k] > (k == 1 ? hi : 0xBF))
                abort();
        p += more + 1;
    }
}

/* name: what the input is called (formats may look at its extension). */
static inline int fuzz_archive(const uint8_t *data, size_t size, const char *format_id,
                               const char *name)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    if (trowel_input_open_memory(ctx, data, size, name, &in) == TROWEL_OK &&
        trowel_archive_open(ctx, in, trowel_format_find(format_id), &a) == TROWEL_OK) {
        char *json = NULL;
        if (trowel_archive_to_json(a, TROWEL_JSON_INFO | TROWEL_JSON_ENTRIES, &json) == TROWEL_OK) {
            fuzz_require_utf8(json);
            trowel_free(json);
        }
        if (trowel_archive_manifest(a, &json) == TROWEL_OK) {
            fuzz_require_utf8(json);
            trowel_free(json);
        }
        fuzz_expand_entries(ctx, a);
        trowel_archive_verify(a, NULL, NULL);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return 0;
}

#endif
