/*
 * Inputs, the part every kind shares (input.h): names, sizes, the
 * detection brackets, and the one cache window through which kinds
 * without spans of their own (a file, an XOR view) are read: refilled
 * where a read falls outside it, and replaced by the whole input in
 * memory once the window has had to jump (see trowel_input_span). The
 * kinds themselves are input_file.c, input_memory.c, input_window.c and
 * input_xor.c.
 */
#include "input.h"

#include <stdalign.h>
#include <stddef.h>
#include <string.h>

#define INPUT_CACHE_SIZE ((size_t)1 << 18) /* 256 KiB, >= TROWEL_READER_SPAN_MAX */
/* An input up to this size is read whole once the cache window has had to
 * jump (not just slide forward): formats that jump between a directory and
 * the data (scenes.image reads its entry table, then each scene's summary
 * and data) otherwise refill a 256 KiB window for nearly every access. */
#define INPUT_WHOLE_MAX ((uint64_t)16 << 20)

/* Where a kind's state starts after the shared part, aligned for anything. */
#define IMPL_OFFSET \
    ((sizeof(trowel_input) + alignof(max_align_t) - 1) / alignof(max_align_t) * \
     alignof(max_align_t))

trowel_input *trowel_input_new(trowel_ctx *ctx, const trowel_input_kind *kind, size_t impl_size,
                               const char *name, uint64_t size)
{
    trowel_input *in = trowel_mem_calloc(ctx, 1, IMPL_OFFSET + impl_size);
    if (!in)
        return NULL;
    in->ctx = ctx;
    in->kind = kind;
    in->impl = impl_size ? (char *)in + IMPL_OFFSET : NULL;
    in->size = size;
    in->name = trowel_mem_strdup(ctx, name ? name : "(memory)");
    if (!in->name) {
        trowel_mem_free(ctx, in);
        return NULL;
    }
    return in;
}

trowel_status trowel_input_give_cache(trowel_input *in, const char *what, trowel_input **out)
{
    trowel_ctx *ctx = in->ctx;
    const char *purpose = trowel_mem_purpose(ctx, what);
    in->cache = trowel_mem_alloc(ctx, INPUT_CACHE_SIZE);
    trowel_mem_purpose(ctx, purpose);
    if (!in->cache) {
        trowel_input_close(in);
        return ctx->last_error.status;
    }
    *out = in;
    return TROWEL_OK;
}

const char *trowel_input_file_name(const trowel_input *in)
{
    return in->name_is_label ? NULL : in->name;
}

uint64_t trowel_input_size(const trowel_input *in)
{
    return in->size;
}

const char *trowel_input_name(const trowel_input *in)
{
    return in->name;
}

void trowel_input_close(trowel_input *in)
{
    if (!in)
        return;
    if (in->kind->close)
        in->kind->close(in);
    trowel_mem_free(in->ctx, in->owned);
    trowel_mem_free(in->ctx, in->cache);
    trowel_mem_free(in->ctx, in->name);
    trowel_mem_free(in->ctx, in);
}

void trowel_input_begin_detection(trowel_input *in)
{
    for (; in; in = in->source)
        in->detecting++;
}

void trowel_input_end_detection(trowel_input *in)
{
    for (; in; in = in->source)
        if (in->detecting && --in->detecting == 0)
            in->refills = 0;
}

int trowel_input_file_at(const trowel_input *in, uint64_t off, uint64_t *file_off)
{
    if (in->mem || !in->kind->file_at)
        return -1;
    return in->kind->file_at(in, off, file_off);
}

trowel_status trowel_input_copy(trowel_input *in, uint64_t off, void *dst, size_t n)
{
    /* Callers (the reader) have checked off + n <= size. */
    if (in->mem) {
        memcpy(dst, in->mem + off, n);
        return TROWEL_OK;
    }
    if (in->kind->span_at) /* no cache here: the kind reads through one */
        return in->kind->read_at(in, off, dst, n);
    if (off >= in->cache_off && off + n <= in->cache_off + in->cache_len) {
        memcpy(dst, in->cache + (off - in->cache_off), n);
        return TROWEL_OK;
    }
    if (n >= INPUT_CACHE_SIZE / 2)
        return in->kind->read_at(in, off, dst, n);
    const uint8_t *p;
    size_t got;
    trowel_status s = trowel_input_span(in, off, n, &p, &got);
    if (s == TROWEL_OK)
        memcpy(dst, p, n);
    return s;
}

/* Reads the whole input into memory and serves it from there, when it is
 * small enough and the memory limit has room; false (nothing changed, no
 * error left) otherwise. */
static bool load_whole(trowel_input *in)
{
    trowel_ctx *ctx = in->ctx;
    if (in->size > INPUT_WHOLE_MAX || ctx->mem_in_use > ctx->mem_limit ||
        ctx->mem_limit - ctx->mem_in_use < in->size)
        return false;
    trowel_error saved = ctx->last_error;
    uint8_t *all = trowel_mem_alloc(ctx, in->size ? (size_t)in->size : 1);
    if (!all || in->kind->read_at(in, 0, all, (size_t)in->size) != TROWEL_OK) {
        trowel_mem_free(ctx, all);
        ctx->last_error = saved; /* the window still works */
        return false;
    }
    in->owned = all; /* kinds with a cache own no memory before this */
    in->mem = all;   /* from now on served like memory */
    return true;
}

trowel_status trowel_input_span(trowel_input *in, uint64_t off, size_t want, const uint8_t **out,
                                size_t *got)
{
    uint64_t avail = in->size - off;
    if (want > avail)
        want = (size_t)avail;
    if (in->mem) {
        *out = in->mem + off;
        *got = want;
        return TROWEL_OK;
    }
    if (in->kind->span_at)
        return in->kind->span_at(in, off, want, out, got);
    if (want > INPUT_CACHE_SIZE)
        want = INPUT_CACHE_SIZE;
    bool outside = off < in->cache_off || off + want > in->cache_off + in->cache_len;
    /* Reading on (off inside the window or less than a window past its
     * end: a decoder streaming the file front to back, a parser stepping
     * over small gaps) only slides the window: such a reader must not pull
     * the whole file into memory (page faults cost more than the reads).
     * Jumps are what reading whole pays for. */
    bool straight_on = off >= in->cache_off &&
                       off - in->cache_off <= (uint64_t)in->cache_len + INPUT_CACHE_SIZE;
    if (outside && !in->detecting && in->refills++ > 0 && !straight_on && load_whole(in)) {
        *out = in->mem + off;
        *got = want;
        return TROWEL_OK;
    }
    if (outside) {
        /* Refill from off: as much as the cache holds or the input has. */
        uint64_t left = in->size - off;
        size_t fill = left < INPUT_CACHE_SIZE ? (size_t)left : INPUT_CACHE_SIZE;
        in->cache_len = 0;
        trowel_status s = in->kind->read_at(in, off, in->cache, fill);
        if (s != TROWEL_OK)
            return s;
        in->cache_off = off;
        in->cache_len = fill;
    }
    *out = in->cache + (off - in->cache_off);
    *got = want;
    return TROWEL_OK;
}
