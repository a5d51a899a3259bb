/*
 * Inputs: a file read with pread through one cache buffer (or read whole,
 * when it is small and is read all over), a stream read whole into memory
 * the limit counts, or a caller's memory. Files are opened read-only and
 * never mapped, so a file that shrinks under us gives a clean I/O error
 * instead of SIGBUS.
 */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INPUT_CACHE_SIZE ((size_t)1 << 18) /* 256 KiB, >= TROWEL_READER_SPAN_MAX */
/* A file up to this size is read whole once the cache window has had to
 * jump (not just slide forward): formats that jump between a directory and the data (scenes.image
 * reads its entry table, then each scene's summary and data) otherwise
 * refill a 256 KiB window for nearly every access. */
#define INPUT_WHOLE_MAX ((uint64_t)16 << 20)

/* A new input named name; NULL (with the error set) when memory runs out. */
static trowel_input *new_input(trowel_ctx *ctx, const char *name)
{
    trowel_input *in = trowel_mem_calloc(ctx, 1, sizeof *in);
    if (!in)
        return NULL;
    in->ctx = ctx;
    in->fd = -1;
    in->name = trowel_mem_strdup(ctx, name ? name : "(memory)");
    if (!in->name) {
        trowel_mem_free(ctx, in);
        return NULL;
    }
    return in;
}

/* Gives a new input its cache window (what: the buffer, for the memory
 * limit's message) and hands it out; on failure the input is closed. */
static trowel_status give_cache(trowel_input *in, const char *what, trowel_input **out)
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

const char *trowel_input_kind_refusal(unsigned mode)
{
    if (S_ISDIR(mode))
        return "is a folder, not a file";
    if (S_ISFIFO(mode))
        return "is a named pipe (FIFO), not a regular file";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "is a device, not a regular file";
    if (S_ISSOCK(mode))
        return "is a socket, not a regular file";
    return "not a regular file";
}

trowel_status trowel_input_open_file(trowel_ctx *ctx, const char *path, trowel_input **out)
{
    *out = NULL;
    /* Non-blocking, so that a FIFO (or a device) under the name cannot
     * hang the open waiting for a writer; it is refused below, before
     * anything is read. A regular file's reads never block anyway, and the
     * flag is cleared for them all the same. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot open: %s",
                           strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot inspect: %s",
                           strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "%s",
                           trowel_input_kind_refusal(st.st_mode));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    trowel_input *in = new_input(ctx, path);
    if (!in) {
        close(fd);
        return ctx->last_error.status;
    }
    in->fd = fd;
    in->size = (uint64_t)st.st_size;
    return give_cache(in, "the input file's read buffer", out);
}

trowel_status trowel_input_open_memory(trowel_ctx *ctx, const void *data, size_t size,
                                       const char *name, trowel_input **out)
{
    *out = NULL;
    trowel_input *in = new_input(ctx, name);
    if (!in)
        return ctx->last_error.status;
    in->mem = data;
    in->size = size;
    *out = in;
    return TROWEL_OK;
}

trowel_status trowel_input_open_window(trowel_ctx *ctx, trowel_input *parent, uint64_t off,
                                       uint64_t len, const char *name, trowel_input **out)
{
    *out = NULL;
    uint64_t end;
    if (trowel_add_overflows(off, len, &end) || end > parent->size)
        return trowel_fail(ctx, TROWEL_ERR_TRUNCATED, off,
                           "the entry's %llu bytes run past the end of the archive",
                           (unsigned long long)len);
    trowel_input *in = new_input(ctx, name);
    if (!in)
        return ctx->last_error.status;
    in->parent = parent;
    in->parent_base = off;
    in->size = len;
    *out = in;
    return TROWEL_OK;
}

/* One read of up to n bytes into buf, EINTR retried: bytes read, 0 at the
 * end, -1 on error (errno set). */
static ssize_t read_some(int fd, uint8_t *buf, size_t n)
{
    ssize_t got;
    do
        got = read(fd, buf, n);
    while (got < 0 && errno == EINTR);
    return got;
}

const char *trowel_input_file_name(const trowel_input *in)
{
    return in->name_is_label ? NULL : in->name;
}

trowel_status trowel_input_open_stream(trowel_ctx *ctx, int fd, const char *name,
                                       trowel_input **out)
{
    *out = NULL;
    trowel_input *in = new_input(ctx, name);
    if (!in)
        return ctx->last_error.status;
    in->name_is_label = true;
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            /* Grow by doubling, but never past what the limit allows: the
             * last byte that fits is still taken. */
            uint64_t room = ctx->mem_limit > ctx->mem_in_use ? ctx->mem_limit - ctx->mem_in_use
                                                            : 0;
            size_t more = cap ? cap : (size_t)1 << 16;
            if (more > room)
                more = (size_t)room;
            if (more == 0) {
                uint8_t probe;
                ssize_t got = read_some(fd, &probe, 1);
                if (got == 0)
                    break;
                trowel_mem_free(ctx, buf);
                trowel_input_close(in);
                return got < 0 ? trowel_fail(ctx, TROWEL_ERR_IO, len, "read failed: %s",
                                             strerror(errno))
                               : trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                                             "larger than the memory limit (%llu bytes)",
                                             (unsigned long long)ctx->mem_limit);
            }
            uint8_t *grown = trowel_mem_realloc(ctx, buf, cap + more);
            if (!grown) {
                trowel_mem_free(ctx, buf);
                trowel_input_close(in);
                return ctx->last_error.status;
            }
            buf = grown;
            cap += more;
        }
        ssize_t got = read_some(fd, buf + len, cap - len);
        if (got < 0) {
            int err = errno;
            trowel_mem_free(ctx, buf);
            trowel_input_close(in);
            return trowel_fail(ctx, TROWEL_ERR_IO, len, "read failed: %s", strerror(err));
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    if (len && len < cap) { /* give back what doubling took beyond the data */
        uint8_t *fit = trowel_mem_realloc(ctx, buf, len);
        buf = fit ? fit : buf;
    }
    in->cache = buf; /* freed at close */
    in->mem = buf ? buf : (const uint8_t *)"";
    in->size = len;
    *out = in;
    return TROWEL_OK;
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
    if (in->fd >= 0)
        close(in->fd);
    trowel_mem_free(in->ctx, in->cache);
    trowel_mem_free(in->ctx, in->window);
    trowel_mem_free(in->ctx, in->name);
    trowel_mem_free(in->ctx, in);
}

/* The input in's reads go to next: a window's parent, an XOR input's
 * source; NULL for a file or memory. Each has a cache window of its own. */
static trowel_input *below(trowel_input *in)
{
    return in->parent ? in->parent : in->under;
}

void trowel_input_begin_detection(trowel_input *in)
{
    for (; in; in = below(in))
        in->detecting++;
}

void trowel_input_end_detection(trowel_input *in)
{
    for (; in; in = below(in))
        if (in->detecting && --in->detecting == 0)
            in->refills = 0;
}

/* pread all n bytes at off, or fail. */
static trowel_status read_fully(trowel_input *in, uint64_t off, uint8_t *dst, size_t n)
{
    while (n > 0) {
        ssize_t got = pread(in->fd, dst, n, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return trowel_fail(in->ctx, TROWEL_ERR_IO, off, "read failed: %s", strerror(errno));
        if (got == 0)
            return trowel_fail(in->ctx, TROWEL_ERR_IO, off,
                               "file shrank while being read (ends before offset 0x%llx)",
                               (unsigned long long)off);
        dst += got;
        off += (uint64_t)got;
        n -= (size_t)got;
    }
    return TROWEL_OK;
}

/* Bytes [off, off + n) of a file or XOR input, from their source. */
static trowel_status fetch(trowel_input *in, uint64_t off, uint8_t *dst, size_t n)
{
    if (!in->under)
        return read_fully(in, off, dst, n);
    trowel_status s = trowel_input_copy(in->under, off, dst, n);
    for (size_t i = 0; s == TROWEL_OK && i < n; i++)
        dst[i] ^= in->xor_key;
    return s;
}

trowel_status trowel_input_open_xor(trowel_ctx *ctx, trowel_input *under, uint8_t key,
                                    trowel_input **out)
{
    *out = NULL;
    trowel_input *in = new_input(ctx, under->name);
    if (!in)
        return ctx->last_error.status;
    in->under = under;
    in->xor_key = key;
    in->size = under->size;
    return give_cache(in, "the XOR filter's read buffer", out);
}

trowel_status trowel_input_adopt_memory(trowel_ctx *ctx, uint8_t *data, size_t size,
                                        const char *name, trowel_input **out)
{
    *out = NULL;
    trowel_input *in = new_input(ctx, name);
    if (!in) {
        trowel_mem_free(ctx, data);
        return ctx->last_error.status;
    }
    in->cache = data; /* freed at close */
    in->mem = data ? data : (const uint8_t *)"";
    in->size = size;
    *out = in;
    return TROWEL_OK;
}

int trowel_input_file_at(const trowel_input *in, uint64_t off, uint64_t *file_off)
{
    for (; in->parent; in = in->parent)
        off += in->parent_base;
    if (in->fd < 0 || in->mem || in->under)
        return -1;
    *file_off = off;
    return in->fd;
}

trowel_status trowel_input_copy(trowel_input *in, uint64_t off, void *dst, size_t n)
{
    /* Callers (the reader) have checked off + n <= size. */
    if (in->parent)
        return trowel_input_copy(in->parent, in->parent_base + off, dst, n);
    if (in->mem) {
        memcpy(dst, in->mem + off, n);
        return TROWEL_OK;
    }
    if (off >= in->cache_off && off + n <= in->cache_off + in->cache_len) {
        memcpy(dst, in->cache + (off - in->cache_off), n);
        return TROWEL_OK;
    }
    if (n >= INPUT_CACHE_SIZE / 2)
        return fetch(in, off, dst, n);
    const uint8_t *p;
    size_t got;
    trowel_status s = trowel_input_span(in, off, n, &p, &got);
    if (s == TROWEL_OK)
        memcpy(dst, p, n);
    return s;
}

/* Reads the whole file into memory and serves it from there, when it is
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
    if (!all || fetch(in, 0, all, (size_t)in->size) != TROWEL_OK) {
        trowel_mem_free(ctx, all);
        ctx->last_error = saved; /* the window still works */
        return false;
    }
    in->window = in->cache;
    in->cache = all;
    in->cache_off = 0;
    in->cache_len = (size_t)in->size;
    in->mem = all; /* freed as the cache; from now on served like memory */
    return true;
}

trowel_status trowel_input_span(trowel_input *in, uint64_t off, size_t want, const uint8_t **out,
                                size_t *got)
{
    uint64_t avail = in->size - off;
    if (want > avail)
        want = (size_t)avail;
    if (in->parent)
        return trowel_input_span(in->parent, in->parent_base + off, want, out, got);
    if (in->mem) {
        *out = in->mem + off;
        *got = want;
        return TROWEL_OK;
    }
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
    if (off < in->cache_off || off + want > in->cache_off + in->cache_len) {
        /* Refill from off: as much as the cache holds or the file has. */
        uint64_t left = in->size - off;
        size_t fill = left < INPUT_CACHE_SIZE ? (size_t)left : INPUT_CACHE_SIZE;
        in->cache_len = 0;
        trowel_status s = fetch(in, off, in->cache, fill);
        if (s != TROWEL_OK)
            return s;
        in->cache_off = off;
        in->cache_len = fill;
    }
    *out = in->cache + (off - in->cache_off);
    *got = want;
    return TROWEL_OK;
}
