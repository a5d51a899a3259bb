/*
 * Callback inputs (trowel_input_open_callbacks): a caller's read and size
 * functions over its own state. They are read through the shared cache
 * window like a file (input.c), so the caller sees few large reads; a
 * failed read is reported with the caller's status at its offset.
 */
#include "input.h"

typedef struct callback_input {
    trowel_input_ops ops; /* the caller's table, copied */
    void *user;
} callback_input;

static trowel_status callback_read_at(trowel_input *in, uint64_t off, void *dst, size_t n)
{
    const callback_input *c = in->impl;
    trowel_status s = c->ops.read_at(c->user, off, dst, n);
    if (s == TROWEL_OK)
        return TROWEL_OK;
    return trowel_fail(in->ctx, s, off, "the read function failed (%llu bytes)",
                       (unsigned long long)n);
}

static void callback_close(trowel_input *in)
{
    const callback_input *c = in->impl;
    if (c->ops.close)
        c->ops.close(c->user);
}

static const trowel_input_kind callback_kind = {
    .read_at = callback_read_at,
    .close = callback_close,
};

trowel_status trowel_input_open_callbacks(trowel_ctx *ctx, const trowel_input_ops *ops,
                                          void *user, const char *name, trowel_input **out)
{
    *out = NULL;
    if (!ops || !ops->read_at || !ops->size) {
        if (ops && ops->close)
            ops->close(user);
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "an input's functions need read_at and size");
    }
    uint64_t size = 0;
    trowel_status s = ops->size(user, &size);
    if (s != TROWEL_OK) {
        if (ops->close)
            ops->close(user);
        return trowel_fail(ctx, s, TROWEL_NO_OFFSET, "the size function failed");
    }
    trowel_input *in = trowel_input_new(ctx, &callback_kind, sizeof(callback_input),
                                        name ? name : "(callbacks)", size);
    if (!in) {
        if (ops->close)
            ops->close(user);
        return ctx->last_error.status;
    }
    callback_input *c = in->impl;
    c->ops = *ops;
    c->user = user;
    return trowel_input_give_cache(in, "the callback input's read buffer", out);
}
