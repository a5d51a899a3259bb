/*
 * Lookups in an open GROFF container (groff.h), shared by groff.c (the
 * container, the SCN save header) and groff_grf.c (the GRF world inside),
 * so that neither calls back into the other: a symbol by its handle
 * (binary search of the handle index groff.c builds), a section by its
 * symbol's name, and a bounded reader over a section's bytes.
 */
#include "groff.h"

#include <string.h>

const groff_symbol *groff_symbol_find(const groff_state *st, uint32_t handle)
{
    size_t lo = 0, hi = st->symbol_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t h = st->by_handle[mid].handle;
        if (h == handle)
            return &st->symbols[st->by_handle[mid].index];
        if (h < handle)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

size_t groff_section_find(const groff_state *st, const char *name)
{
    for (size_t i = 0; i < st->section_count; i++)
        if (st->sections[i].name && strcmp(st->sections[i].name, name) == 0)
            return i;
    return SIZE_MAX;
}

trowel_status groff_section_reader(trowel_archive *a, size_t i, trowel_reader *out)
{
    const groff_state *st = a->priv;
    const groff_section *s = &st->sections[i];
    trowel_reader whole;
    trowel_reader_init(&whole, a->ctx, a->in);
    if (s->damaged)
        return trowel_fail(a->ctx, TROWEL_ERR_TRUNCATED, s->offset,
                           "section %zu (%s) at offset %lu, %lu bytes, runs past the end of the "
                           "file (%llu bytes)",
                           i, s->name ? s->name : "?", (unsigned long)s->offset,
                           (unsigned long)s->size, (unsigned long long)st->real_size);
    return trowel_reader_sub(&whole, s->offset, s->size, out);
}
