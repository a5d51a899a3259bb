/*
 * Window inputs: bytes [base, base + size) of a parent input, for an entry
 * stored as is inside an archive. Nothing is copied and there is no cache
 * of its own: every read, span and file position is the parent's, shifted
 * by base, so a nested archive shares its parent's cache window.
 */
#include "input.h"

typedef struct window_input {
    uint64_t base;
} window_input;

static uint64_t base_of(const trowel_input *in)
{
    return ((const window_input *)in->impl)->base;
}

static trowel_status window_read_at(trowel_input *in, uint64_t off, void *dst, size_t n)
{
    return trowel_input_copy(in->source, base_of(in) + off, dst, n);
}

static trowel_status window_span_at(trowel_input *in, uint64_t off, size_t want,
                                    const uint8_t **out, size_t *got)
{
    return trowel_input_span(in->source, base_of(in) + off, want, out, got);
}

static int window_file_at(const trowel_input *in, uint64_t off, uint64_t *file_off)
{
    return trowel_input_file_at(in->source, base_of(in) + off, file_off);
}

static const trowel_input_kind window_kind = {
    .read_at = window_read_at,
    .span_at = window_span_at,
    .file_at = window_file_at,
};

trowel_status trowel_input_open_window(trowel_ctx *ctx, trowel_input *parent, uint64_t off,
                                       uint64_t len, const char *name, trowel_input **out)
{
    *out = NULL;
    uint64_t end;
    if (trowel_add_overflows(off, len, &end) || end > parent->size)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, off,
                           "the entry's %llu bytes run past the end of the archive",
                           (unsigned long long)len);
    trowel_input *in = trowel_input_new(ctx, &window_kind, sizeof(window_input), name, len);
    if (!in)
        return ctx->last_error.status;
    in->source = parent;
    ((window_input *)in->impl)->base = off;
    *out = in;
    return TROWEL_OK;
}
