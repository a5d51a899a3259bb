/*
 * trowel_entry_reader: an entry's decoded bytes read at any offset, for a
 * caller that serves reads as they come (trowel mount) and must not hold
 * a large entry whole. Two kinds of entry can be read so:
 *  - a stored entry that lies as is in the archive's input (the format
 *    says so with stored_entries_in_input, as for nested archives): each
 *    read is a bounded read of the input at the entry's offset;
 *  - an entry in a stream the format hands out a cursor for (entry_cursor:
 *    a VPP's zlib and LZ4 entries, its solid stream): the cursor stays
 *    where the last read ended, so reading on costs only the new bytes and
 *    reading backwards restarts the decoder (trowel_codec_stream_seek).
 * Everything else is TROWEL_ERR_UNSUPPORTED: a whole-buffer codec holds
 * the whole entry anyway, and the caller reads it whole.
 */
#include "stream.h"
#include "module.h"
#include "sink.h"

#include <string.h>

struct trowel_entry_reader {
    trowel_archive *a;
    size_t index;
    uint64_t size;
    trowel_reader stored;        /* a stored entry: its bytes in the input */
    trowel_codec_stream *cursor; /* else: the decoder, where the last read ended */
    uint64_t start;              /* the entry's first byte in the cursor's stream */
    bool whole;                  /* the stream is the entry's alone: check its end */
    bool end_checked;            /* ... which was done once */
};

/* Whether entry e lies as is in a's own input, all of it there. */
static bool stored_in_place(const trowel_archive *a, const trowel_entry *e)
{
    uint64_t in_size = trowel_input_size(a->in);
    return a->fmt->stored_entries_in_input && strcmp(e->method, "stored") == 0 &&
           e->packed_size == e->size && !a->damaged && e->offset <= in_size &&
           e->size <= in_size - e->offset;
}

trowel_status trowel_entry_reader_open(trowel_archive *a, size_t index,
                                       trowel_entry_reader **out)
{
    *out = NULL;
    if (index >= a->entry_count)
        return trowel_fail(a->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "no entry %zu", index);
    const trowel_entry *e = trowel_archive_entry(a, index); /* settled */
    bool in_place = stored_in_place(a, e);
    if (!trowel_archive_entry_size_exact(a, index) || (!in_place && !a->fmt->entry_cursor))
        return TROWEL_ERR_UNSUPPORTED;
    trowel_entry_reader *r = trowel_mem_calloc(a->ctx, 1, sizeof *r);
    if (!r)
        return a->ctx->last_error.status;
    *r = (trowel_entry_reader){.a = a, .index = index, .size = e->size};
    trowel_status s = TROWEL_OK;
    if (in_place) {
        trowel_reader whole;
        trowel_reader_init(&whole, a->ctx, a->in);
        s = trowel_reader_sub(&whole, e->offset, e->size, &r->stored);
    } else {
        trowel_set_entry(a->ctx, e->name);
        s = a->fmt->entry_cursor(a, index, &r->cursor, &r->start, &r->whole);
        if (s == TROWEL_OK) {
            trowel_set_entry(a->ctx, NULL);
            if (!r->cursor)
                s = TROWEL_ERR_UNSUPPORTED; /* nothing said: the caller reads it whole */
        }
    }
    if (s != TROWEL_OK) {
        trowel_entry_reader_close(r);
        return s;
    }
    *out = r;
    return TROWEL_OK;
}

/* n bytes of the cursor's stream from the entry's offset into buf. */
static trowel_status read_cursor(trowel_entry_reader *r, uint64_t offset, uint8_t *buf, size_t n)
{
    trowel_sink *sink;
    trowel_status s = trowel_codec_stream_seek(r->cursor, r->start + offset);
    if (s == TROWEL_OK)
        s = trowel_sink_open_memory(r->a->ctx, &sink);
    if (s != TROWEL_OK)
        return s;
    s = trowel_sink_reserve(sink, n);
    if (s == TROWEL_OK)
        s = trowel_codec_stream_read(r->cursor, n, sink);
    size_t len = 0;
    const uint8_t *data = trowel_sink_data(sink, &len);
    if (s == TROWEL_OK && len == n)
        memcpy(buf, data, n);
    trowel_sink_discard(sink);
    /* The entry read to its end: its stream must end there too. */
    if (s == TROWEL_OK && r->whole && !r->end_checked && offset + n == r->size) {
        s = trowel_codec_stream_finish(r->cursor);
        r->end_checked = s == TROWEL_OK;
    }
    return s;
}

trowel_status trowel_entry_reader_read(trowel_entry_reader *r, uint64_t offset, void *buf,
                                       size_t len, size_t *got)
{
    *got = 0;
    if (offset >= r->size || len == 0)
        return TROWEL_OK;
    size_t n = r->size - offset < len ? (size_t)(r->size - offset) : len;
    trowel_ctx *ctx = r->a->ctx;
    trowel_set_entry(ctx, r->a->entries[r->index].name);
    const char *purpose = trowel_mem_purpose(ctx, "decoding the entry");
    trowel_status s;
    if (r->cursor) {
        s = read_cursor(r, offset, buf, n);
    } else {
        s = trowel_reader_seek(&r->stored, offset);
        if (s == TROWEL_OK)
            s = trowel_read_bytes(&r->stored, buf, n);
    }
    trowel_mem_purpose(ctx, purpose);
    if (s != TROWEL_OK)
        return s;
    trowel_set_entry(ctx, NULL);
    *got = n;
    return TROWEL_OK;
}

uint64_t trowel_entry_reader_size(const trowel_entry_reader *r)
{
    return r->size;
}

void trowel_entry_reader_close(trowel_entry_reader *r)
{
    if (!r)
        return;
    trowel_codec_stream_close(r->cursor);
    trowel_mem_free(r->a->ctx, r);
}
