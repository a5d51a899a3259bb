/*
 * Verifying Volition packfiles (`trowel verify`): beyond decoding every
 * entry, the v3 name hashes, the v10/v17 header checksums, the header's
 * file size, the `start` of raw and condensed entries, names that occur
 * twice, and, for the one zlib (v17: LZ4) stream of compressed+condensed
 * data, each entry's compressed size.
 *
 * That stream is sync-flushed after each file (and its padding), and each
 * entry's compressed size is the stream's growth across it: so the first
 * c_0 + ... + c_i bytes of the stream, and no fewer, decode to exactly the
 * bytes of entries 0..i (padding included) and leave the decoder at a
 * block boundary. The read cursor (vpp.c) cannot tell that, since it
 * decodes the stream without looking at the sizes; verify runs its own
 * decoder instead, handing it the stream one entry's compressed bytes at
 * a time. The stream is still decoded once.
 */
#include "vpp_priv.h"

#include "core/sink.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_CHUNK ((size_t)1 << 16)

struct vpp_solid_check {
    trowel_coder c;
    trowel_reader r;    /* the rest of the stream's window */
    trowel_codec_io io;
    trowel_code last;   /* what the coder said last (DONE: never run again) */
    uint64_t fed;       /* stream bytes handed to the coder */
    uint64_t in_end;    /* the compressed sizes of the entries checked so far */
    size_t next;        /* the entry verify is expected to ask for next */
    bool lost;          /* a compressed size did not match: later ones are not checked */
    bool dead;          /* the stream failed: nothing more is checked */
    bool eof;           /* the window is used up */
    uint8_t *buf;       /* decoded bytes, dropped */
};

TROWEL_PRINTF(5, 6)
static void report(trowel_archive *a, const char *entry, trowel_status status, uint64_t off,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    trowel_set_entry(a->ctx, entry);
    trowel_vfail(a->ctx, status, off, fmt, ap);
    va_end(ap);
    trowel_archive_report(a);
    trowel_set_entry(a->ctx, NULL);
}

/* ------------------------------------------------------ the solid stream */

/* Where entry i's compressed size is in the directory. */
static uint64_t csize_field(const vpp_state *st, size_t i)
{
    unsigned at = st->h.version == 17 ? 32 : st->h.version == 6 || st->h.version == 10 ? 16 : 20;
    return st->h.dir_start + (uint64_t)i * st->h.entry_size + at;
}

void vpp_verify_close(trowel_archive *a, vpp_state *st)
{
    vpp_solid_check *k = st->check;
    if (!k)
        return;
    trowel_coder_end(&k->c);
    trowel_mem_free(a->ctx, k->buf);
    trowel_mem_free(a->ctx, k);
    st->check = NULL;
}

static trowel_status check_start(trowel_archive *a, vpp_state *st)
{
    vpp_solid_check *k;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, 1, sizeof *k, &k);
    if (s != TROWEL_OK)
        return s;
    st->check = k;
    k->last = TROWEL_CODE_MORE;
    s = vpp_solid_window(a, st, &k->r);
    if (s == TROWEL_OK)
        s = trowel_mem_new(a->ctx, CHECK_CHUNK, &k->buf);
    if (s == TROWEL_OK)
        s = trowel_coder_init_decoder(&k->c, a->ctx, vpp_solid_codec(st), NULL,
                                      trowel_reader_abs(&k->r));
    return s;
}

/* Runs the decoder, dropping what it makes, with the stream's bytes up to
 * `limit` (from its start) and at most up to decoded byte `want`, until it
 * has used them up and stalls, reaches want, or the stream ends. False
 * when the stream failed (the context says why). */
static bool check_decode(vpp_solid_check *k, uint64_t limit, uint64_t want)
{
    for (;;) {
        if (k->io.in_pos == k->io.in_len && k->fed < limit && !k->eof) {
            const uint8_t *p;
            size_t got = 0;
            uint64_t room = limit - k->fed;
            if (trowel_reader_borrow(&k->r, room < TROWEL_READER_SPAN_MAX ? (size_t)room
                                                                          : TROWEL_READER_SPAN_MAX,
                                     &p, &got) != TROWEL_OK)
                return false;
            k->io = (trowel_codec_io){p, got, 0, k->buf, 0, 0};
            k->fed += got;
            k->eof = got == 0;
        }
        if (k->c.total_out >= want || k->last == TROWEL_CODE_DONE)
            return true;
        uint64_t due = want - k->c.total_out;
        k->io.out = k->buf;
        k->io.out_cap = due < CHECK_CHUNK ? (size_t)due : CHECK_CHUNK;
        k->io.out_pos = 0;
        trowel_code r = k->last = trowel_coder_run(&k->c, &k->io, TROWEL_FLUSH_NONE);
        if (r == TROWEL_CODE_ERROR)
            return false;
        if (r == TROWEL_CODE_DONE)
            return true;
        bool used_up = k->io.in_pos == k->io.in_len && (k->fed >= limit || k->eof);
        if (trowel_code_stalled(r) && used_up)
            return true;
        if (trowel_code_stalled(r) && k->io.in_pos < k->io.in_len && k->io.out_pos == 0 &&
            k->io.out_cap > 0) {
            trowel_fail(k->c.ctx, TROWEL_ERR_CORRUPT, trowel_coder_offset(&k->c),
                        "the %s decoder cannot make progress", k->c.codec->name);
            return false;
        }
    }
}

/* Entry i of the solid stream, checked against its compressed size. */
static void check_solid_entry(trowel_archive *a, vpp_state *st, size_t i)
{
    vpp_solid_check *k = st->check;
    const vpp_entry *e = &st->ent[i];
    bool last = i + 1 == a->entry_count;
    /* The entry's bytes and the padding after it (fed before the flush). */
    uint64_t end = last ? e->pos + a->entries[i].size : st->ent[i + 1].pos;
    uint64_t limit = k->in_end + e->packed < k->in_end ? UINT64_MAX : k->in_end + e->packed;
    uint64_t before = k->in_end;
    k->in_end = limit;
    if (!check_decode(k, k->lost ? UINT64_MAX : limit, k->lost ? end : UINT64_MAX)) {
        k->dead = true;
        trowel_set_entry(a->ctx, a->entries[i].name);
        trowel_archive_report(a);
        trowel_set_entry(a->ctx, NULL);
        return;
    }
    uint64_t made = k->c.total_out;
    if (made < end && k->eof && k->io.in_pos == k->io.in_len) {
        k->dead = true;
        report(a, a->entries[i].name, TROWEL_ERR_TRUNCATED, trowel_coder_offset(&k->c),
               "the %s stream stops at decoded byte %llu, %llu more were wanted",
               k->c.codec->name, (unsigned long long)made, (unsigned long long)(end - made));
        return;
    }
    if (k->lost)
        return;
    /* At a flush point: a block boundary (zlib), before a block header (LZ4). */
    bool at_flush = k->last == TROWEL_CODE_DONE || k->last == TROWEL_CODE_MAY_STOP;
    if (k->eof && k->fed < limit) /* the size passes the stream's end */
        report(a, a->entries[i].name, TROWEL_ERR_VERIFY, csize_field(st, i),
               "compressed size %llu passes the end of the stream (%llu bytes from stream "
               "offset %llu)",
               (unsigned long long)e->packed, (unsigned long long)(k->fed - before),
               (unsigned long long)before);
    else if (made != end || !at_flush)
        report(a, a->entries[i].name, TROWEL_ERR_VERIFY, csize_field(st, i),
               "compressed size %llu does not match the stream: its %llu bytes from stream "
               "offset %llu end at decoded byte %llu%s, the entry and its padding at %llu",
               (unsigned long long)e->packed, (unsigned long long)(limit - before),
               (unsigned long long)before, (unsigned long long)made,
               made == end ? " inside a block" : "", (unsigned long long)end);
    else
        return;
    /* Positions in the stream are lost from here: the rest is only decoded. */
    k->lost = true;
    if (!check_decode(k, UINT64_MAX, end)) {
        k->dead = true;
        trowel_archive_report(a);
    }
}

/* After the last entry: the stream must hold nothing more (it ends there,
 * or, unfinished, stops there at a flush point with its window used up). */
static void check_solid_end(trowel_archive *a, vpp_state *st)
{
    vpp_solid_check *k = st->check;
    if (k->dead)
        return;
    uint64_t made = k->c.total_out;
    if (!check_decode(k, UINT64_MAX, made + 1)) {
        trowel_archive_report(a);
        return;
    }
    uint64_t left = (k->io.in_len - k->io.in_pos) + trowel_reader_remaining(&k->r);
    if (k->c.total_out > made)
        report(a, NULL, TROWEL_ERR_CORRUPT, trowel_coder_offset(&k->c),
               "the %s stream decodes to more than its entries hold (%llu bytes)",
               k->c.codec->name, (unsigned long long)made);
    else if (k->last == TROWEL_CODE_DONE && left)
        report(a, NULL, TROWEL_ERR_CORRUPT, trowel_coder_offset(&k->c),
               "%llu bytes follow the end of the %s stream", (unsigned long long)left,
               k->c.codec->name);
    else if (k->last != TROWEL_CODE_DONE &&
             (k->last != TROWEL_CODE_MAY_STOP || !vpp_solid_codec(st)->unfinished_ok))
        report(a, NULL, TROWEL_ERR_TRUNCATED, trowel_coder_offset(&k->c),
               "the %s stream stops in the middle of a block after %llu bytes",
               k->c.codec->name, (unsigned long long)made);
}

/* Entries in the order verify asks for them (directory order): solid ones
 * through the check's decoder, others read into nothing. */
trowel_status vpp_verify_entry(trowel_archive *a, size_t index)
{
    vpp_state *st = a->priv;
    if (st->ent[index].method == M_SOLID) {
        if (!st->check) {
            trowel_status s = check_start(a, st);
            if (s != TROWEL_OK) {
                vpp_verify_close(a, st);
                return s;
            }
        }
        vpp_solid_check *k = st->check;
        if (index != k->next) /* out of order: sizes can no longer be checked */
            k->lost = true;
        k->next = index + 1;
        if (!k->dead)
            check_solid_entry(a, st, index);
        return TROWEL_OK;
    }
    return trowel_archive_verify_by_reading(a, index);
}

/* ----------------------------------------------------- header and names */

static void verify_header_checksum(trowel_archive *a, const vpp_state *st)
{
    size_t len = st->h.version == 10 ? V10_HEADER : V17_HEADER;
    uint8_t hdr[V17_HEADER];
    if (!vpp_read_at(a, 0, hdr, len))
        return; /* reading the header needed fewer bytes; the file is short */
    uint32_t want = vpp_header_crc(hdr + 12, len - 12);
    if (want != st->h.checksum)
        report(a, NULL, TROWEL_ERR_VERIFY, 8,
               "header checksum 0x%08llx does not match the header's 0x%08llx",
               (unsigned long long)st->h.checksum, (unsigned long long)want);
}

/* The stored `start` of raw and condensed entries is the data-relative
 * offset (modulo 2^32 in 32-bit fields); compressed modes differ between
 * writers and are not checked. */
static void verify_starts(trowel_archive *a, const vpp_state *st)
{
    if (st->h.version == 1 || (st->h.flags & VPP_FLAG_COMPRESSED))
        return;
    for (size_t i = 0; i < a->entry_count; i++) {
        const vpp_entry *e = &st->ent[i];
        uint64_t want = st->h.version == 17 ? e->placed : (uint32_t)e->placed;
        if (e->start != want)
            report(a, a->entries[i].name, TROWEL_ERR_VERIFY, st->h.dir_start + i * st->h.entry_size,
                   "start %llu is not where the entry is (%llu from the data start)",
                   (unsigned long long)e->start, (unsigned long long)want);
    }
}

/* Names compared as the game looks them up: A-Z as a-z (its name hash
 * lower-cases them). */
static int name_cmp(const char *x, const char *y)
{
    for (;; x++, y++) {
        unsigned cx = (unsigned char)*x, cy = (unsigned char)*y;
        cx += cx >= 'A' && cx <= 'Z' ? 32u : 0u;
        cy += cy >= 'A' && cy <= 'Z' ? 32u : 0u;
        if (cx != cy || !cx)
            return (int)cx - (int)cy;
    }
}

static int by_name_then_index(const void *p, const void *q)
{
    const trowel_entry *x = *(const trowel_entry *const *)p, *y = *(const trowel_entry *const *)q;
    int c = name_cmp(x->name, y->name);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Two entries of one name: the game finds only one of them, and they
 * cannot both be extracted. */
static trowel_status verify_unique_names(trowel_archive *a, const vpp_state *st)
{
    size_t n = a->entry_count;
    if (n < 2)
        return TROWEL_OK;
    const trowel_entry **sorted;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, n, sizeof *sorted, &sorted);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < n; i++)
        sorted[i] = &a->entries[i];
    qsort(sorted, n, sizeof *sorted, by_name_then_index);
    size_t first = 0; /* the first of the current run of equal names */
    for (size_t i = 1; i < n; i++) {
        if (name_cmp(sorted[i - 1]->name, sorted[i]->name)) {
            first = i;
            continue;
        }
        const trowel_entry *e = sorted[i], *f = sorted[first];
        bool exact = !strcmp(e->name, f->name);
        report(a, e->name, TROWEL_ERR_VERIFY, st->h.dir_start + e->index * st->h.entry_size,
               "entry %zu has the name of entry %zu%s%s%s", e->index, f->index,
               exact ? "" : " (", exact ? "" : f->name,
               exact ? "" : ", the game does not tell case apart)");
    }
    trowel_mem_free(a->ctx, sorted);
    return TROWEL_OK;
}

/* The solid stream's size in the header is the entries' compressed sizes
 * added up (below 4 GiB, where the 32-bit field can hold it). */
static void verify_solid_size(trowel_archive *a, const vpp_state *st)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < a->entry_count; i++)
        if (trowel_add_overflows(sum, st->ent[i].packed, &sum))
            return;
    if (st->h.version < 17 && sum > UINT32_MAX)
        return;
    if (sum != st->h.compressed_size)
        report(a, NULL, TROWEL_ERR_VERIFY,
               st->h.version == 17   ? 0x30
               : st->h.version == 10 ? 0x24
               : st->h.version == 4  ? 0x16C
                                     : 0x168,
               "the header's compressed size %llu is not the entries' %llu",
               (unsigned long long)st->h.compressed_size, (unsigned long long)sum);
}

trowel_status vpp_verify(trowel_archive *a)
{
    vpp_state *st = a->priv;
    if (st->h.version == 3)
        for (size_t i = 0; i < a->entry_count; i++) {
            uint32_t want = vpp_name_hash(a->entries[i].name);
            if (want != st->ent[i].hash)
                report(a, a->entries[i].name, TROWEL_ERR_VERIFY,
                       VPP_SECTOR + st->h.entry_size * (uint64_t)i + 12,
                       "name hash 0x%08llx does not match the name's 0x%08llx",
                       (unsigned long long)st->ent[i].hash, (unsigned long long)want);
        }
    trowel_status s = verify_unique_names(a, st);
    if (s != TROWEL_OK)
        return s;
    if (st->h.version >= 10)
        verify_header_checksum(a, st);
    verify_starts(a, st);
    uint64_t real = vpp_file_size(a);
    bool wraps = st->h.version < 17 && st->h.file_size == UINT32_MAX;
    if (!wraps && st->h.file_size != real)
        report(a, NULL, TROWEL_ERR_VERIFY, vpp_file_size_offset(&st->h),
               "the header gives a file size of %llu, the file has %llu bytes",
               (unsigned long long)st->h.file_size, (unsigned long long)real);
    if (vpp_solid_mode(&st->h) && a->entry_count) {
        verify_solid_size(a, st);
        if (st->check) {
            check_solid_end(a, st);
            vpp_verify_close(a, st);
            return TROWEL_OK;
        }
        /* Every entry has been read: the stream must hold nothing more. */
        const vpp_entry *last = &st->ent[a->entry_count - 1];
        s = st->solid ? TROWEL_OK : vpp_open_solid(a, st, &st->solid);
        if (s == TROWEL_OK)
            s = trowel_codec_stream_seek(st->solid, last->pos + a->entries[a->entry_count - 1].size);
        if (s == TROWEL_OK)
            s = trowel_codec_stream_finish(st->solid);
        if (s != TROWEL_OK)
            trowel_archive_report(a);
    }
    return TROWEL_OK;
}
