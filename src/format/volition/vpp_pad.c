/*
 * Non-zero padding in Volition packfiles, kept by the manifest so that
 * `create --manifest` gives the archive's bytes back.
 *
 * Volition's packers wrote padding from buffers they did not always clear:
 * one Red Faction packfile in 27 examined holds 39,377 bytes of old buffer
 * contents after its files (the rest are zero everywhere). The reader
 * (vpp_padding_spans, below) knows where each version pads: after the
 * header's fields, the directory, the names, the extensions (v4), and
 * after each entry's stored bytes (v1 after the last one too; not inside
 * a compressed+condensed stream, whose padding is compressed with the
 * files). For each span that is not all zero, the manifest records the
 * bytes from its first non-zero byte to its last, as
 *   {"section": "header"|"directory"|"names"|"extensions", "at": N, "hex": "..."}
 *   {"entry": NAME, "at": N, "hex": "..."}
 * (N: the offset in the span), and the writer (vpp_write.c) writes them
 * back at the same place of the same span, zeros around them.
 */
#include "vpp_priv.h"

#include "core/bytes.h"

#include <json-c/json.h>
#include <string.h>

static size_t add_span(vpp_span *out, size_t n, uint64_t size, vpp_pad_section section,
                       size_t entry, uint64_t start, uint64_t end)
{
    end = end < size ? end : size;
    if (start >= end)
        return n;
    out[n] = (vpp_span){section, entry, start, end};
    return n + 1;
}

size_t vpp_padding_spans(trowel_archive *a, vpp_span *out)
{
    const vpp_state *st = a->priv;
    const vpp_header *h = &st->h;
    uint64_t size = vpp_file_size(a), n = a->entry_count;
    size_t k = 0;
    if (h->version == 1) {
        k = add_span(out, k, size, VPP_PAD_HEADER, 0, 16, VPP_SECTOR);
        k = add_span(out, k, size, VPP_PAD_DIRECTORY, 0, h->dir_start + 64 * n, h->data_start);
    } else if (h->version <= 6) { /* the header's fields end after the runtime bytes */
        k = add_span(out, k, size, VPP_PAD_HEADER, 0, h->version == 4 ? 0x184 : 0x180, VPP_SECTOR);
        k = add_span(out, k, size, VPP_PAD_DIRECTORY, 0, h->dir_start + h->dir_size, h->names_start);
        k = add_span(out, k, size, VPP_PAD_NAMES, 0, h->names_start + h->names_size, h->ext_start);
        k = add_span(out, k, size, VPP_PAD_EXTENSIONS, 0, h->ext_start + h->ext_size,
                     h->data_start);
    } else if (h->version == 17) {
        k = add_span(out, k, size, VPP_PAD_NAMES, 0, h->names_start + h->names_size,
                     h->data_start);
    }
    if (vpp_solid_mode(h)) /* the padding between files is inside the stream */
        return k;
    for (size_t i = 0; i < n; i++) {
        const vpp_entry *e = &st->ent[i];
        if (e->packed >= size || e->pos > size - e->packed)
            continue; /* past the end of the file (a damaged archive) */
        uint64_t end = e->pos + e->packed;
        /* up to the next file; v1 pads the last one to 2048 too */
        uint64_t v1_end = h->data_start + vpp_align_up(end - h->data_start, VPP_SECTOR);
        uint64_t next = i + 1 < n ? st->ent[i + 1].pos : h->version == 1 ? v1_end : end;
        k = add_span(out, k, size, VPP_PAD_ENTRY, i, end, next);
    }
    return k;
}

static const char *const section_names[] = {"header", "directory", "names", "extensions"};

/* The non-zero part of span sp, if any, added to list. */
static trowel_status record_span(trowel_archive *a, const vpp_span *sp, json_object *list)
{
    trowel_reader whole, r;
    trowel_reader_init(&whole, a->ctx, a->in);
    trowel_status s = trowel_reader_sub(&whole, sp->start, sp->end - sp->start, &r);
    uint64_t first = UINT64_MAX, last = 0;
    for (trowel_reader scan = r; s == TROWEL_OK;) {
        const uint8_t *p;
        size_t got = 0;
        uint64_t at = trowel_reader_tell(&scan);
        if ((s = trowel_reader_borrow(&scan, TROWEL_READER_SPAN_MAX, &p, &got)) != TROWEL_OK ||
            got == 0)
            break;
        for (size_t i = 0; i < got; i++)
            if (p[i]) {
                first = first == UINT64_MAX ? at + i : first;
                last = at + i;
            }
    }
    if (s != TROWEL_OK || first == UINT64_MAX)
        return s;
    trowel_reader run;
    uint8_t *bytes = NULL;
    size_t len = 0;
    if ((s = trowel_reader_sub(&r, first, last - first + 1, &run)) == TROWEL_OK)
        s = trowel_reader_load(&run, &bytes, &len);
    char *hex = NULL;
    if (s == TROWEL_OK)
        s = trowel_mem_new(a->ctx, 2 * len + 1, &hex);
    if (s == TROWEL_OK) {
        trowel_hex_encode(bytes, len, hex);
        json_object *o = json_object_new_object();
        if (sp->section == VPP_PAD_ENTRY)
            json_object_object_add(o, "entry", json_object_new_string(a->entries[sp->entry].name));
        else
            json_object_object_add(o, "section",
                                   json_object_new_string(section_names[sp->section]));
        json_object_object_add(o, "at", json_object_new_int64((int64_t)first));
        json_object_object_add(o, "hex", json_object_new_string(hex));
        json_object_array_add(list, o);
    }
    trowel_mem_free(a->ctx, hex);
    trowel_mem_free(a->ctx, bytes);
    return s;
}

trowel_status vpp_manifest_padding(trowel_archive *a, json_object *m)
{
    vpp_span *spans;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, a->entry_count + 4, sizeof *spans, &spans);
    if (s != TROWEL_OK)
        return s;
    size_t n = vpp_padding_spans(a, spans);
    json_object *list = json_object_new_array();
    for (size_t i = 0; i < n && s == TROWEL_OK; i++)
        s = record_span(a, &spans[i], list);
    trowel_mem_free(a->ctx, spans);
    if (s == TROWEL_OK && json_object_array_length(list))
        json_object_object_add(m, "padding", list);
    else
        json_object_put(list);
    return s;
}

void vpp_pads_free(trowel_ctx *ctx, vpp_pad *pads, size_t count)
{
    for (size_t i = 0; pads && i < count; i++)
        trowel_mem_free(ctx, pads[i].bytes);
    trowel_mem_free(ctx, pads);
}

/* One {"section" | "entry", "at", "hex"} of the manifest into *p. */
static trowel_status read_pad(trowel_ctx *ctx, json_object *o, size_t index, vpp_pad *p)
{
    json_object *sec = NULL, *entry = NULL, *at = NULL, *hex = NULL;
    bool ok = json_object_is_type(o, json_type_object) &&
              json_object_object_get_ex(o, "at", &at) && json_object_is_type(at, json_type_int) &&
              json_object_get_int64(at) >= 0 && json_object_object_get_ex(o, "hex", &hex) &&
              json_object_is_type(hex, json_type_string);
    if (ok && json_object_object_get_ex(o, "entry", &entry) &&
        json_object_is_type(entry, json_type_string)) {
        p->section = VPP_PAD_ENTRY;
        p->entry = json_object_get_string(entry);
    } else if (ok && json_object_object_get_ex(o, "section", &sec)) {
        ok = false;
        for (size_t k = 0; k < sizeof section_names / sizeof *section_names; k++)
            if (!strcmp(json_object_get_string(sec), section_names[k])) {
                p->section = (vpp_pad_section)k;
                ok = true;
            }
    } else
        ok = false;
    size_t len = ok ? strlen(json_object_get_string(hex)) / 2 : 0;
    uint8_t *bytes = NULL;
    trowel_status s = ok && len ? trowel_mem_new(ctx, len, &bytes) : TROWEL_OK;
    if (s != TROWEL_OK)
        return s;
    if (!ok || !len || !trowel_hex_decode(json_object_get_string(hex), bytes, len)) {
        trowel_mem_free(ctx, bytes);
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "the manifest's padding %zu is not {\"section\" or \"entry\", \"at\", "
                           "\"hex\"} with an even number of hex digits",
                           index);
    }
    p->at = (uint64_t)json_object_get_int64(at);
    p->bytes = bytes;
    p->len = len;
    return TROWEL_OK;
}

trowel_status vpp_pads_from_manifest(trowel_ctx *ctx, json_object *m, vpp_layout *L,
                                     vpp_pad **owned)
{
    json_object *list = NULL;
    *owned = NULL;
    if (!m || !json_object_object_get_ex(m, "padding", &list))
        return TROWEL_OK;
    if (!json_object_is_type(list, json_type_array))
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "the manifest's \"padding\" is not a list");
    size_t n = json_object_array_length(list);
    vpp_pad *pads;
    trowel_status s = trowel_mem_new_zeroed(ctx, n ? n : 1, sizeof *pads, &pads);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < n; i++) {
        s = read_pad(ctx, json_object_array_get_idx(list, i), i, &pads[i]);
        if (s != TROWEL_OK) {
            vpp_pads_free(ctx, pads, i);
            return s;
        }
    }
    *owned = pads;
    L->pads = pads;
    L->pad_count = n;
    return TROWEL_OK;
}
