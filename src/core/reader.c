/*
 * The bounded reader. Every function checks the request against the window
 * before touching the input and reports failures with absolute offsets.
 */
#include "reader.h"

#include "input.h"
#include "sink.h"

#include <string.h>

void trowel_reader_init(trowel_reader *r, trowel_ctx *ctx, trowel_input *in)
{
    r->ctx = ctx;
    r->in = in;
    r->base = 0;
    r->size = trowel_input_size(in);
    r->pos = 0;
}

static trowel_status out_of_window(const trowel_reader *r, uint64_t need)
{
    return trowel_fail(r->ctx, TROWEL_ERR_TRUNCATED, r->base + r->pos,
                       "needs %llu bytes at offset 0x%llx but the data ends at 0x%llx",
                       (unsigned long long)need, (unsigned long long)(r->base + r->pos),
                       (unsigned long long)(r->base + r->size));
}

trowel_status trowel_reader_sub(const trowel_reader *r, uint64_t off, uint64_t len,
                                trowel_reader *out)
{
    uint64_t end;
    if (trowel_add_overflows(off, len, &end) || end > r->size)
        return trowel_fail(r->ctx, TROWEL_ERR_TRUNCATED, r->base + (off < r->size ? off : r->size),
                           "range 0x%llx+%llu lies outside the data (which ends at 0x%llx)",
                           (unsigned long long)(r->base + off), (unsigned long long)len,
                           (unsigned long long)(r->base + r->size));
    *out = *r;
    out->base = r->base + off;
    out->size = len;
    out->pos = 0;
    return TROWEL_OK;
}

trowel_status trowel_reader_rest(const trowel_reader *r, trowel_reader *out)
{
    return trowel_reader_sub(r, r->pos, r->size - r->pos, out);
}

trowel_status trowel_reader_seek(trowel_reader *r, uint64_t pos)
{
    if (pos > r->size)
        return trowel_fail(r->ctx, TROWEL_ERR_TRUNCATED, r->base + r->size,
                           "offset 0x%llx lies past the end of the data (0x%llx)",
                           (unsigned long long)(r->base + pos),
                           (unsigned long long)(r->base + r->size));
    r->pos = pos;
    return TROWEL_OK;
}

trowel_status trowel_reader_skip(trowel_reader *r, uint64_t n)
{
    if (n > r->size - r->pos)
        return out_of_window(r, n);
    r->pos += n;
    return TROWEL_OK;
}

/* The window's bytes from the cursor on that are in memory already (the
 * whole input, or the input's cache window), *avail of them; NULL when
 * none is. Parsers read scenes and tables a few bytes at a time, so the
 * common case skips the input's own dispatch; anything else goes through
 * trowel_input_copy, which reads (and moves the cache) exactly as before. */
static inline const uint8_t *held(const trowel_reader *r, uint64_t *avail)
{
    const trowel_input *in = r->in;
    uint64_t off = r->base + r->pos, left = r->size - r->pos;
    if (in->mem) {
        *avail = left;
        return in->mem + off;
    }
    if (in->kind->span_at || off < in->cache_off || off - in->cache_off >= in->cache_len)
        return NULL;
    uint64_t cached = in->cache_len - (off - in->cache_off);
    *avail = cached < left ? cached : left;
    return in->cache + (off - in->cache_off);
}

/* The one read: inlined into the fixed-size readers below, where the copy
 * from memory becomes a plain load. */
static inline trowel_status fetch(trowel_reader *r, void *dst, size_t n)
{
    if (n > r->size - r->pos)
        return out_of_window(r, n);
    uint64_t avail;
    const uint8_t *p = held(r, &avail);
    if (p && avail >= n) {
        memcpy(dst, p, n);
        r->pos += n;
        return TROWEL_OK;
    }
    trowel_status s = trowel_input_copy(r->in, r->base + r->pos, dst, n);
    if (s == TROWEL_OK)
        r->pos += n;
    return s;
}

trowel_status trowel_read_bytes(trowel_reader *r, void *dst, size_t n)
{
    return fetch(r, dst, n);
}

trowel_status trowel_read_u8(trowel_reader *r, uint8_t *v)
{
    return fetch(r, v, 1);
}

trowel_status trowel_read_u16le(trowel_reader *r, uint16_t *v)
{
    uint8_t b[2];
    trowel_status s = fetch(r, b, 2);
    *v = s ? 0 : (uint16_t)(b[0] | b[1] << 8);
    return s;
}

trowel_status trowel_read_u16be(trowel_reader *r, uint16_t *v)
{
    uint8_t b[2];
    trowel_status s = fetch(r, b, 2);
    *v = s ? 0 : (uint16_t)(b[0] << 8 | b[1]);
    return s;
}

trowel_status trowel_read_u32le(trowel_reader *r, uint32_t *v)
{
    uint8_t b[4];
    trowel_status s = fetch(r, b, 4);
    *v = s ? 0 : (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return s;
}

trowel_status trowel_read_u32be(trowel_reader *r, uint32_t *v)
{
    uint8_t b[4];
    trowel_status s = fetch(r, b, 4);
    *v = s ? 0 : (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
    return s;
}

trowel_status trowel_read_u64le(trowel_reader *r, uint64_t *v)
{
    uint32_t lo = 0, hi = 0;
    trowel_status s = trowel_read_u32le(r, &lo);
    if (s == TROWEL_OK)
        s = trowel_read_u32le(r, &hi);
    *v = (uint64_t)hi << 32 | lo;
    return s;
}

trowel_status trowel_read_i32le(trowel_reader *r, int32_t *v)
{
    uint32_t u;
    trowel_status s = trowel_read_u32le(r, &u);
    memcpy(v, &u, sizeof u);
    return s;
}

trowel_status trowel_read_f32le(trowel_reader *r, float *v)
{
    uint32_t u;
    trowel_status s = trowel_read_u32le(r, &u);
    memcpy(v, &u, sizeof u);
    return s;
}

trowel_status trowel_read_fixed_string(trowel_reader *r, size_t field_len, char *dst, size_t cap)
{
    uint64_t at = trowel_reader_abs(r);
    if (field_len > r->size - r->pos)
        return out_of_window(r, field_len);
    size_t n = 0;
    while (n < field_len) {
        uint8_t c;
        trowel_status s = trowel_read_u8(r, &c);
        if (s != TROWEL_OK)
            return s;
        if (c == 0)
            break;
        if (n + 1 >= cap)
            return trowel_fail(r->ctx, TROWEL_ERR_CORRUPT, at,
                               "string at 0x%llx is longer than %zu bytes",
                               (unsigned long long)at, cap ? cap - 1 : 0);
        dst[n++] = (char)c;
    }
    dst[n] = '\0';
    /* The field has a fixed size whatever the string's length. */
    r->pos = (at - r->base) + field_len;
    return TROWEL_OK;
}

trowel_status trowel_read_cstring(trowel_reader *r, char *dst, size_t cap)
{
    uint64_t avail;
    const uint8_t *p = held(r, &avail);
    if (p) { /* a NUL within reach: the whole string at once */
        const uint8_t *nul = memchr(p, 0, avail < cap ? (size_t)avail : cap);
        if (nul) {
            size_t n = (size_t)(nul - p) + 1;
            memcpy(dst, p, n);
            r->pos += n;
            return TROWEL_OK;
        }
    } /* else (or no NUL within reach) byte by byte, as before */
    uint64_t at = trowel_reader_abs(r);
    for (size_t n = 0;; n++) {
        uint8_t c;
        if (r->pos >= r->size)
            return trowel_fail(r->ctx, TROWEL_ERR_TRUNCATED, at,
                               "string at 0x%llx has no terminating NUL before the data ends",
                               (unsigned long long)at);
        trowel_status s = trowel_read_u8(r, &c);
        if (s != TROWEL_OK)
            return s;
        if (n + 1 > cap)
            return trowel_fail(r->ctx, TROWEL_ERR_CORRUPT, at,
                               "string at 0x%llx is longer than %zu bytes",
                               (unsigned long long)at, cap ? cap - 1 : 0);
        dst[n] = (char)c;
        if (c == 0)
            return TROWEL_OK;
    }
}

trowel_status trowel_reader_peek(trowel_reader *r, size_t n, const uint8_t **out)
{
    if (n > TROWEL_READER_SPAN_MAX)
        return trowel_fail(r->ctx, TROWEL_ERR_USAGE, trowel_reader_abs(r), "peek of %zu bytes", n);
    if (n > r->size - r->pos)
        return out_of_window(r, n);
    size_t got;
    trowel_status s = trowel_input_span(r->in, r->base + r->pos, n, out, &got);
    return s;
}

trowel_status trowel_reader_borrow(trowel_reader *r, size_t max, const uint8_t **out, size_t *got)
{
    uint64_t left = r->size - r->pos;
    size_t want = max < TROWEL_READER_SPAN_MAX ? max : TROWEL_READER_SPAN_MAX;
    if (want > left)
        want = (size_t)left;
    *got = 0;
    *out = NULL;
    if (want == 0)
        return TROWEL_OK;
    trowel_status s = trowel_input_span(r->in, r->base + r->pos, want, out, got);
    if (s == TROWEL_OK)
        r->pos += *got;
    return s;
}

trowel_status trowel_reader_load(trowel_reader *r, uint8_t **out, size_t *size)
{
    uint64_t n = r->size - r->pos;
    *out = NULL;
    *size = 0;
    if (n > SIZE_MAX - 1)
        return trowel_fail(r->ctx, TROWEL_ERR_LIMIT, trowel_reader_abs(r), "data too large");
    uint8_t *buf = trowel_mem_alloc(r->ctx, n ? (size_t)n : 1);
    if (!buf)
        return r->ctx->last_error.status;
    trowel_status s = trowel_read_bytes(r, buf, (size_t)n);
    if (s != TROWEL_OK) {
        trowel_mem_free(r->ctx, buf);
        return s;
    }
    *out = buf;
    *size = (size_t)n;
    return TROWEL_OK;
}

/* Below this a kernel copy saves less than its set-up costs. */
#define KERNEL_COPY_MIN ((uint64_t)1 << 20)

trowel_status trowel_reader_copy_to(trowel_reader *r, trowel_sink *out)
{
    uint64_t n = trowel_reader_remaining(r), file_off;
    int fd = n >= KERNEL_COPY_MIN ? trowel_input_file_at(r->in, trowel_reader_abs(r), &file_off) : -1;
    if (fd >= 0) {
        uint64_t copied = 0;
        trowel_status s = trowel_sink_copy_fd(out, fd, file_off, n, &copied);
        if (s == TROWEL_OK)
            s = trowel_reader_skip(r, copied);
        if (s != TROWEL_OK)
            return s;
    }
    for (;;) {
        const uint8_t *p;
        size_t got;
        trowel_status s = trowel_reader_borrow(r, TROWEL_READER_SPAN_MAX, &p, &got);
        if (s != TROWEL_OK || got == 0)
            return s;
        if ((s = trowel_sink_write(out, p, got)) != TROWEL_OK)
            return s;
    }
}
