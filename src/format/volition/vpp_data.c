/*
 * Volition packfiles: where an open packfile's bytes are read from, for
 * the files that read (vpp.c), verify (vpp_verify.c) and rebuild from a
 * base (vpp_base.c) alike: small reads at an offset, the one zlib (v17:
 * LZ4) stream of compressed+condensed data and the cursor over it, each
 * compressed entry's own stream. Everything goes through the bounded
 * reader over the archive's input.
 *
 * Facts: ../shared/formats/volition-vpp-asm.md (the data modes, the solid
 * stream sync-flushed after each file and left unfinished by the game's
 * packer; SR2 PS3 entries in chunks, X360 ones as zlib streams), checked
 * on the files of the shared corpus.
 */
#include "vpp_priv.h"

#include "codec/lz4_frame.h"
#include "codec/zlib.h"

#include <string.h>

uint64_t vpp_file_size(trowel_archive *a)
{
    trowel_reader whole;
    trowel_reader_init(&whole, a->ctx, a->in);
    return trowel_reader_size(&whole);
}

/* Small reads (a stream's first or last bytes, the runtime bytes of the
 * header): false when the input does not hold them all. */
bool vpp_read_at(trowel_archive *a, uint64_t off, void *dst, size_t n)
{
    trowel_reader whole, at;
    trowel_reader_init(&whole, a->ctx, a->in);
    uint64_t size = trowel_reader_size(&whole);
    return off <= size && n <= size - off && trowel_reader_sub(&whole, off, n, &at) == TROWEL_OK &&
           trowel_read_bytes(&at, dst, n) == TROWEL_OK;
}

uint64_t vpp_file_size_offset(const vpp_header *h)
{
    return h->version == 1 || h->version == 10 ? 0x0C : h->version == 17 ? 0x20 : 0x158;
}

const trowel_stream_codec *vpp_solid_codec(const vpp_state *st)
{
    return st->h.version == 17 ? &trowel_lz4_stream : &trowel_zlib_stream;
}

trowel_status vpp_solid_window(trowel_archive *a, const vpp_state *st, trowel_reader *stream)
{
    trowel_reader whole;
    trowel_reader_init(&whole, a->ctx, a->in);
    /* A stream cut short still gives the entries before the cut; the one
     * it cuts fails with the offset where the file ends. The 32-bit
     * compressed size of v3/v4/v6/v10 is not trusted past 4 GiB. */
    uint64_t size = trowel_reader_size(&whole), start = st->h.data_start;
    uint64_t len = start < size ? size - start : 0;
    if (st->h.compressed_size < len && st->h.compressed_size != UINT32_MAX)
        len = st->h.compressed_size;
    return trowel_reader_sub(&whole, start < size ? start : size, len, stream);
}

/* The solid stream from its start, as a cursor of the caller's (*out):
 * the archive's own (st->solid) or an entry reader's. */
trowel_status vpp_open_solid(trowel_archive *a, const vpp_state *st, trowel_codec_stream **out)
{
    trowel_reader stream;
    trowel_status s = vpp_solid_window(a, st, &stream);
    if (s != TROWEL_OK)
        return s;
    return trowel_codec_stream_open(a->ctx, vpp_solid_codec(st), NULL, &stream, out);
}

/* Console compressed entries are zlib streams (X360) or PS3 chunks; a zlib
 * header tells them apart. */
bool vpp_looks_like_zlib(trowel_reader *span)
{
    const uint8_t *p;
    trowel_reader r = *span;
    return trowel_reader_peek(&r, 2, &p) == TROWEL_OK && (p[0] & 0x0F) == 8 &&
           (p[0] << 8 | p[1]) % 31 == 0;
}

/* trowel_entry_reader's cursor: the entry's own zlib or LZ4 stream, or a
 * solid stream of the reader's own (so that readers of several entries,
 * and read_entry, do not move one another's). PS3 chunks, stored and cut
 * entries have none. */
trowel_status vpp_entry_cursor(trowel_archive *a, size_t index, trowel_codec_stream **cursor,
                               uint64_t *start, bool *whole)
{
    const vpp_state *st = a->priv;
    const vpp_entry *v = &st->ent[index];
    *cursor = NULL;
    *start = 0;
    *whole = false;
    if (v->cut || v->method == M_STORED)
        return TROWEL_OK;
    if (v->method == M_SOLID) {
        *start = v->pos;
        return vpp_open_solid(a, st, cursor);
    }
    trowel_reader all, span;
    trowel_reader_init(&all, a->ctx, a->in);
    trowel_status s = trowel_reader_sub(&all, v->pos, v->packed, &span);
    if (s != TROWEL_OK || (v->method == M_CONSOLE && !vpp_looks_like_zlib(&span)))
        return s;
    *whole = true;
    const trowel_stream_codec *codec =
        v->method == M_LZ4 ? &trowel_lz4_stream : &trowel_zlib_stream;
    return trowel_codec_stream_open(a->ctx, codec, NULL, &span, cursor);
}

/* Whether the solid stream ends at a sync flush (00 00 FF FF, the game's
 * unfinished streams) rather than with its Adler-32 (peers' repacks). */
bool vpp_stream_unfinished(trowel_archive *a, const vpp_header *h)
{
    uint8_t tail[4];
    uint64_t size = vpp_file_size(a);
    if (h->data_start > size || h->compressed_size > size - h->data_start ||
        h->compressed_size < 4)
        return false;
    uint64_t end = h->data_start + h->compressed_size;
    return vpp_read_at(a, end - 4, tail, 4) && !memcmp(tail, "\0\0\xff\xff", 4);
}
