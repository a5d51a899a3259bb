/*
 * Volition packfiles: `create -O base=ARCHIVE` (and `-O delete=NAME`),
 * which rebuilds a packfile from an existing one. The base's entries keep
 * their order; a source of the same stored name replaces an entry in
 * place, delete= leaves one out, and the base's layout and non-zero
 * padding (as its manifest would record them) carry over. An untouched
 * entry whose stored form is what the new layout stores (stored data; one
 * zlib stream per file for v3/v4/v6/v10 compressed-only, one LZ4 frame for
 * v17) is copied as it is; the others are decoded, in order, into core's
 * temporary storage and read back from there, so a solid stream is
 * decoded once and memory stays flat.
 *
 * Facts: ../shared/formats/volition-vpp-asm.md (names are flat before v17,
 * the modes and what each stores per file); the rebuilds are checked byte
 * for byte against the game's own files of the shared corpus (RF1, RFG).
 * The option parsing and the create entry point are vpp.c's; writing is
 * vpp_write.c's.
 */
#include "vpp_priv.h"

#include "core/sink.h"

#include <json-c/json.h>
#include <string.h>

void vpp_layout_of(trowel_archive *a, vpp_layout *L)
{
    const vpp_state *st = a->priv;
    *L = vpp_layout_default(st->h.version);
    L->compressed = st->h.flags & VPP_FLAG_COMPRESSED;
    L->condensed = st->h.flags & VPP_FLAG_CONDENSED;
    if (st->alignment)
        L->alignment = st->alignment;
    if (st->level)
        L->level = st->level;
    L->short_name = st->h.short_name;
    L->path = st->h.path;
    L->timestamp = st->h.timestamp;
    L->big_endian = st->h.be;
    if (vpp_solid_mode(&st->h) && a->entry_count) {
        L->finish = !vpp_stream_unfinished(a, &st->h);
    }
    if (st->h.version >= 3 && st->h.version <= 6)
        if (!vpp_read_at(a, st->h.version == 4 ? 0x170 : 0x16C, L->runtime, sizeof L->runtime))
            memset(L->runtime, 0, sizeof L->runtime);
}

bool vpp_deleted(const trowel_create_params *p, const char *name)
{
    for (size_t i = 0; i < p->option_count; i++)
        if (!strncmp(p->options[i], "delete=", 7) && !strcmp(p->options[i] + 7, name))
            return true;
    return false;
}

/* Versions before 17 keep no folders: a source's name is its last
 * component there. */
const char *vpp_stored_name(const vpp_layout *L, const char *name)
{
    const char *slash = strrchr(name, '/');
    return L->version < 17 && slash && slash[1] ? slash + 1 : name;
}

static const trowel_source *source_named(const trowel_create_params *p, const vpp_layout *L,
                                         const char *name)
{
    for (size_t i = p->source_count; i-- > 0;) /* the last, as keep_last keeps */
        if (!strcmp(vpp_stored_name(L, p->sources[i].name), name))
            return &p->sources[i];
    return NULL;
}

/* Whether entry i of the base can be copied as it is stored for layout L. */
static bool copy_as_stored(const vpp_state *bs, size_t i, const vpp_layout *L)
{
    uint8_t m = bs->ent[i].method;
    if (m == M_STORED)
        return true; /* its bytes are the data */
    bool separate = L->compressed && !L->condensed;
    if (m == M_ZLIB && separate && L->version != 17)
        return true;
    return m == M_LZ4 && separate && L->version == 17;
}

bool vpp_base_has(const trowel_archive *base, const char *name)
{
    for (size_t i = 0; i < base->entry_count; i++)
        if (!strcmp(base->entries[i].name, name))
            return true;
    return false;
}

/* The bytes of the base's entries that cannot be copied as stored are
 * decoded, in order, into core's temporary storage (trowel_spill: memory,
 * then an unnamed file), then read back from it as the items' data. */

#define SPILL_PIECE ((uint64_t)1 << 20)

/* What the memory sink piece holds, moved to the end of the spill. */
static trowel_status move_piece(trowel_ctx *ctx, trowel_sink *piece, trowel_spill *spill)
{
    uint8_t *data;
    size_t n;
    trowel_status s = trowel_sink_take(piece, &data, &n);
    if (s == TROWEL_OK && n)
        s = trowel_spill_write(spill, data, n);
    trowel_mem_free(ctx, data);
    return s;
}

/* Decodes base entry i to the end of the spill a piece at a time, so that
 * memory stays flat whatever its size: a solid stream through the base's
 * own cursor (the entries come in order: one pass over the stream), a
 * zlib or LZ4 entry through a cursor of its own, anything else (PS3
 * chunks, an entry cut short) read whole. */
static trowel_status decode_base_entry(trowel_archive *base, size_t i, trowel_sink *piece,
                                       trowel_spill *spill)
{
    trowel_ctx *ctx = base->ctx;
    vpp_state *bs = base->priv;
    const vpp_entry *v = &bs->ent[i];
    trowel_codec_stream *own = NULL, *cursor = NULL;
    trowel_status s = TROWEL_OK;
    if (v->method == M_SOLID) {
        if (!bs->solid)
            s = vpp_open_solid(base, bs, &bs->solid);
        if (s == TROWEL_OK && (s = trowel_codec_stream_seek(bs->solid, v->pos)) == TROWEL_OK)
            cursor = bs->solid;
    } else {
        uint64_t start;
        bool whole;
        s = vpp_entry_cursor(base, i, &own, &start, &whole);
        cursor = own;
    }
    if (s == TROWEL_OK && !cursor) {
        if ((s = trowel_archive_read_entry(base, i, piece)) == TROWEL_OK)
            s = move_piece(ctx, piece, spill);
        return s;
    }
    for (uint64_t left = base->entries[i].size; s == TROWEL_OK && left;) {
        uint64_t n = left < SPILL_PIECE ? left : SPILL_PIECE;
        if ((s = trowel_codec_stream_read(cursor, n, piece)) == TROWEL_OK)
            s = move_piece(ctx, piece, spill);
        left -= n;
    }
    if (s == TROWEL_OK && own) /* the entry's own stream ends with it */
        s = trowel_codec_stream_finish(own);
    trowel_codec_stream_close(own);
    return s;
}

/* Decodes base entry i to the end of the spill, opened on first use;
 * *off is where its bytes start there. */
static trowel_status spill_entry(trowel_ctx *ctx, trowel_archive *base, size_t i,
                                 trowel_spill **spill, trowel_sink **piece, uint64_t *off)
{
    trowel_status s = TROWEL_OK;
    if (!*spill && (s = trowel_spill_open(ctx, "the base archive's decoded entries", spill)) ==
                       TROWEL_OK)
        s = trowel_sink_open_memory(ctx, piece);
    if (s != TROWEL_OK)
        return s;
    *off = trowel_spill_size(*spill);
    trowel_set_entry(ctx, base->entries[i].name);
    s = decode_base_entry(base, i, *piece, *spill);
    trowel_set_entry(ctx, NULL);
    return s;
}

/* The items of the base archive, in its order: kept (as stored, or
 * decoded into the spill), replaced by a source of the same name, or left
 * out (delete=). *spill (the caller closes it) holds the decoded ones. */
trowel_status vpp_base_items(trowel_ctx *ctx, const trowel_create_params *p, trowel_archive *base,
                             const vpp_layout *L, vpp_item *items, size_t *n,
                             trowel_spill **spill)
{
    const vpp_state *bs = base->priv;
    trowel_reader whole;
    trowel_reader_init(&whole, ctx, base->in);
    trowel_sink *piece = NULL;
    size_t *spilled = NULL;
    uint64_t *spill_off = NULL;
    size_t nspilled = 0;
    trowel_status s = trowel_mem_new_zeroed(ctx, base->entry_count + 1, sizeof *spilled, &spilled);
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, base->entry_count + 1, sizeof *spill_off, &spill_off);
    for (size_t i = 0; i < base->entry_count && s == TROWEL_OK; i++) {
        const trowel_entry *e = &base->entries[i];
        if (vpp_deleted(p, e->name))
            continue;
        vpp_item *it = &items[*n];
        const trowel_source *src = source_named(p, L, e->name);
        it->name = e->name;
        if (src) { /* replaced: keeps its place */
            it->path = src->path;
        } else if (copy_as_stored(bs, i, L)) {
            it->size = e->size;
            it->has_stored = bs->ent[i].method != M_STORED;
            s = trowel_reader_sub(&whole, bs->ent[i].pos, bs->ent[i].packed,
                                  it->has_stored ? &it->stored : &it->data);
        } else {
            it->size = e->size;
            spilled[nspilled] = *n;
            s = spill_entry(ctx, base, i, spill, &piece, &spill_off[nspilled]);
            nspilled++;
        }
        (*n)++;
    }
    trowel_sink_discard(piece);
    trowel_input *in = NULL;
    if (s == TROWEL_OK && *spill)
        s = trowel_spill_input(*spill, &in);
    if (s == TROWEL_OK && in) {
        trowel_reader t;
        trowel_reader_init(&t, ctx, in);
        for (size_t k = 0; k < nspilled && s == TROWEL_OK; k++) {
            vpp_item *it = &items[spilled[k]];
            s = trowel_reader_sub(&t, spill_off[k], it->size, &it->data);
        }
    }
    trowel_mem_free(ctx, spilled);
    trowel_mem_free(ctx, spill_off);
    return s;
}

/* Every delete= names an entry of the base (a typo must not pass
 * silently), and there is a base. */
trowel_status vpp_check_deletions(trowel_ctx *ctx, const trowel_create_params *p,
                                  const trowel_archive *base)
{
    for (size_t i = 0; i < p->option_count; i++) {
        const char *name = p->options[i];
        if (strncmp(name, "delete=", 7))
            continue;
        name += 7;
        if (!base)
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "-O delete=%s needs -O base=ARCHIVE", name);
        if (!vpp_base_has(base, name))
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "-O delete=%s: the base has no entry of that name", name);
    }
    return TROWEL_OK;
}

/* base= keeps the base's non-zero padding (as its manifest would), except
 * after the entries that sources replace: *held owns what the pads point
 * into. */
trowel_status vpp_padding_of_base(trowel_ctx *ctx, const trowel_create_params *p,
                                  trowel_archive *base, vpp_layout *L, json_object **held,
                                  vpp_pad **pads)
{
    *held = json_object_new_object();
    if (!*held)
        return trowel_fail(ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "out of memory");
    trowel_status s = vpp_manifest_padding(base, *held);
    if (s == TROWEL_OK)
        s = vpp_pads_from_manifest(ctx, *held, L, pads);
    size_t kept = 0;
    for (size_t i = 0; s == TROWEL_OK && i < L->pad_count; i++) {
        vpp_pad *pad = &(*pads)[i];
        if (pad->section == VPP_PAD_ENTRY && source_named(p, L, pad->entry)) {
            trowel_mem_free(ctx, pad->bytes);
            continue;
        }
        (*pads)[kept++] = *pad;
    }
    if (s == TROWEL_OK)
        L->pad_count = kept;
    return s;
}
