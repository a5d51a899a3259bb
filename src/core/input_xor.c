/*
 * XOR inputs: another input's bytes with every byte XORed with a key (the
 * SCUMM resource files' 0x69), undone as they are read into this input's
 * own cache window, so nothing is copied whole unless the window has had
 * to jump (input.c). Name and size are the source's.
 */
#include "input.h"

typedef struct xor_input {
    uint8_t key;
} xor_input;

static trowel_status xor_read_at(trowel_input *in, uint64_t off, void *dst, size_t n)
{
    trowel_status s = trowel_input_copy(in->source, off, dst, n);
    if (s != TROWEL_OK)
        return s;
    uint8_t key = ((const xor_input *)in->impl)->key;
    uint8_t *b = dst;
    for (size_t i = 0; i < n; i++)
        b[i] ^= key;
    return TROWEL_OK;
}

static const trowel_input_kind xor_kind = {
    .read_at = xor_read_at,
};

trowel_status trowel_input_open_xor(trowel_ctx *ctx, trowel_input *under, uint8_t key,
                                    trowel_input **out)
{
    *out = NULL;
    trowel_input *in = trowel_input_new(ctx, &xor_kind, sizeof(xor_input), under->name,
                                        under->size);
    if (!in)
        return ctx->last_error.status;
    in->source = under;
    ((xor_input *)in->impl)->key = key;
    return trowel_input_give_cache(in, "the XOR filter's read buffer", out);
}
