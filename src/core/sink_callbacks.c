/*
 * Callback sinks (trowel_sink_open_callbacks): a caller's write, finish and
 * discard functions over its own state. Writes are gathered in a 64 KiB
 * buffer (sink.c), so the caller sees few, large calls; a failed write is
 * reported with the caller's status, and the output then ends in discard,
 * never in finish.
 */
#include "sink.h"

struct callback_state {
    trowel_sink_ops ops; /* the caller's table, copied */
    void *user;
};

static struct callback_state *callbacks_of(const trowel_sink *s)
{
    return s->state;
}

static trowel_status callback_write(trowel_sink *s, const void *data, size_t n)
{
    const struct callback_state *c = callbacks_of(s);
    trowel_status st = c->ops.write(c->user, data, n);
    if (st == TROWEL_OK)
        return TROWEL_OK;
    return trowel_fail(s->ctx, st, TROWEL_NO_OFFSET, "cannot write %s: the write function failed",
                       s->name);
}

static void callback_discard(trowel_sink *s)
{
    const struct callback_state *c = callbacks_of(s);
    if (c->ops.discard)
        c->ops.discard(c->user);
}

static trowel_status callback_finish(trowel_sink *s, trowel_status st)
{
    const struct callback_state *c = callbacks_of(s);
    if (st != TROWEL_OK) {
        callback_discard(s);
        return st;
    }
    if (!c->ops.finish)
        return TROWEL_OK;
    st = c->ops.finish(c->user);
    if (st == TROWEL_OK)
        return TROWEL_OK;
    return trowel_fail(s->ctx, st, TROWEL_NO_OFFSET, "cannot finish %s: the finish function failed",
                       s->name);
}

static const struct trowel_sink_impl callback_impl = {
    .write = callback_write,
    .finish = callback_finish,
    .discard = callback_discard,
    .state_size = sizeof(struct callback_state),
    .buffer_size = (size_t)1 << 16,
    .buffer_purpose = "the callback sink's buffer",
};

trowel_status trowel_sink_open_callbacks(trowel_ctx *ctx, const trowel_sink_ops *ops,
                                         void *user, const char *name, trowel_sink **out)
{
    *out = NULL;
    if (!ops || !ops->write) {
        if (ops && ops->discard)
            ops->discard(user);
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "a sink's functions need write");
    }
    trowel_sink *s = trowel_sink_new(ctx, &callback_impl, name ? name : "(callbacks)");
    if (!s) {
        if (ops->discard)
            ops->discard(user);
        return ctx->last_error.status;
    }
    struct callback_state *c = callbacks_of(s);
    c->ops = *ops;
    c->user = user;
    *out = s;
    return TROWEL_OK;
}
