/*
 * Descriptor sinks: bytes written straight to a descriptor the caller
 * opened (stdout, a pipe), or to a device or FIFO trowel_sink_open_file
 * opened by name, which the sink then closes. Nothing is renamed or
 * removed: bytes written stay written, even when the sink is discarded.
 * The writing helpers here serve the file sink too.
 */
/* copy_file_range, splice, pipe2, F_SETPIPE_SZ and off64_t are GNU
 * extensions. */
#define _GNU_SOURCE
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

struct fd_state {
    int fd;
    bool owns_fd; /* a device or FIFO opened by name: closed when done */
};

static struct fd_state *fd_of(const trowel_sink *s)
{
    return s->state;
}

static trowel_status write_failed(trowel_sink *s, const char *why)
{
    return trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot write %s: %s", s->name,
                       why);
}

/* Whether err says a kernel copy is not possible here (another file
 * system, an output or kernel without it), not that writing failed. */
static bool kernel_copy_refused(int err)
{
    return err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP;
}

trowel_status trowel_sink_fd_write_all(trowel_sink *s, int fd, const void *data, size_t n)
{
    const uint8_t *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return write_failed(s, w < 0 ? strerror(errno) : "no progress");
        p += w;
        n -= (size_t)w;
    }
    return TROWEL_OK;
}

/* The pipe a splice copy goes through. The kernel's own copy_file_range
 * between files of one file system goes through a pipe of 16 pages;
 * bigger steps are cheaper when the source range does not start at a page
 * boundary (a packfile's entries start 2,048 bytes past one): measured on
 * a 1 GiB archive, a 256 KiB pipe took the copy from 1.19x to about 1.0x
 * `cp -r` of the same files, a 1 MiB one gained nothing more. */
enum { SPLICE_PIPE_SIZE = 1 << 18 };

/* Setting that pipe up (pipe2, its resize, two closes) costs more than
 * the bigger steps save on a small copy: the matched bytes of a small file
 * being replaced go straight to copy_file_range. */
#define SPLICE_COPY_MIN ((uint64_t)1 << 20)

/* Writes what is left in the pipe with ordinary reads and writes: the
 * output refused a splice after the bytes had left the input. */
static trowel_status drain_pipe(trowel_sink *s, int pipe_out, int to_fd, size_t left)
{
    uint8_t buf[16384];
    while (left > 0) {
        ssize_t got = read(pipe_out, buf, left < sizeof buf ? left : sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return write_failed(s, got < 0 ? strerror(errno) : "copied bytes were lost");
        trowel_status st = trowel_sink_fd_write_all(s, to_fd, buf, (size_t)got);
        if (st != TROWEL_OK)
            return st;
        left -= (size_t)got;
    }
    return TROWEL_OK;
}

/* Moves the bytes of one pipe load to to_fd; *refused when the output
 * takes no splice (the bytes were then written the ordinary way). */
static trowel_status empty_pipe(trowel_sink *s, int pipe_out, int to_fd, size_t n, bool *refused)
{
    while (n > 0) {
        ssize_t w = splice(pipe_out, NULL, to_fd, NULL, n, 0);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w < 0 && !kernel_copy_refused(errno))
                return write_failed(s, strerror(errno));
            *refused = true;
            return drain_pipe(s, pipe_out, to_fd, n);
        }
        n -= (size_t)w;
    }
    return TROWEL_OK;
}

/* Copies through a pipe of our own with splice, as far as both ends allow
 * (see SPLICE_PIPE_SIZE); *copied grows by what went. The input may end
 * early or refuse a splice: the caller carries on. *refused: the output
 * takes no splice (an O_APPEND file, a file system without it), so no
 * kernel copy will do. */
static trowel_status splice_copy(trowel_sink *s, int to_fd, int fd, uint64_t off, uint64_t n,
                                 uint64_t *copied, bool *refused)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return TROWEL_OK;
    /* A smaller pipe (the user's pipe quota is used up) still works. */
    (void)fcntl(p[1], F_SETPIPE_SZ, SPLICE_PIPE_SIZE);
    trowel_status st = TROWEL_OK;
    off64_t in_off = (off64_t)(off + *copied);
    while (*copied < n && !*refused && st == TROWEL_OK) {
        uint64_t left = n - *copied;
        size_t want = left < SPLICE_PIPE_SIZE ? (size_t)left : SPLICE_PIPE_SIZE;
        ssize_t got = splice(fd, &in_off, p[1], NULL, want, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        st = empty_pipe(s, p[0], to_fd, (size_t)got, refused);
        if (st == TROWEL_OK)
            *copied += (uint64_t)got;
    }
    close(p[0]);
    close(p[1]);
    return st;
}

trowel_status trowel_sink_fd_copy(trowel_sink *s, int to_fd, int fd, uint64_t off, uint64_t n,
                                  uint64_t *copied)
{
    bool refused = false;
    trowel_status st = TROWEL_OK;
    if (n - *copied >= SPLICE_COPY_MIN)
        st = splice_copy(s, to_fd, fd, off, n, copied, &refused);
    if (st != TROWEL_OK || refused)
        return st;
    off64_t in_off = (off64_t)(off + *copied);
    while (*copied < n) {
        uint64_t left = n - *copied;
        size_t chunk = left < ((size_t)1 << 30) ? (size_t)left : (size_t)1 << 30;
        ssize_t got = copy_file_range(fd, &in_off, to_fd, NULL, chunk, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            /* Not possible here (a pipe, another file system, an old
             * kernel) or the input ended: ordinary reads and writes do the
             * rest and report what is wrong. A failure after some bytes
             * went is a real write error. */
            if (got < 0 && *copied && !kernel_copy_refused(errno))
                st = write_failed(s, strerror(errno));
            break;
        }
        *copied += (uint64_t)got;
    }
    return st;
}

static trowel_status fd_write(trowel_sink *s, const void *data, size_t n)
{
    return trowel_sink_fd_write_all(s, fd_of(s)->fd, data, n);
}

static trowel_status fd_copy(trowel_sink *s, int fd, uint64_t off, uint64_t n, uint64_t *copied)
{
    return trowel_sink_fd_copy(s, fd_of(s)->fd, fd, off, n, copied);
}

static void fd_release(trowel_sink *s)
{
    struct fd_state *f = fd_of(s);
    if (f->owns_fd && f->fd >= 0)
        close(f->fd);
}

static const struct trowel_sink_impl fd_impl = {
    .write = fd_write,
    .release = fd_release,
    .buffer_size = (size_t)1 << 18,
    .buffer_purpose = "the output's buffer",
    .copy_fd = fd_copy,
    .state_size = sizeof(struct fd_state),
};

static trowel_status open_fd(trowel_ctx *ctx, int fd, bool owns, const char *name,
                             trowel_sink **out)
{
    *out = NULL;
    trowel_sink *s = trowel_sink_new(ctx, &fd_impl, name ? name : "(output)");
    if (!s)
        return ctx->last_error.status;
    struct fd_state *f = fd_of(s);
    f->fd = fd;
    f->owns_fd = owns;
    *out = s;
    return TROWEL_OK;
}

trowel_status trowel_sink_open_fd(trowel_ctx *ctx, int fd, const char *name, trowel_sink **out)
{
    return open_fd(ctx, fd, false, name, out);
}

trowel_status trowel_sink_open_owned_fd(trowel_ctx *ctx, int fd, const char *name,
                                        trowel_sink **out)
{
    return open_fd(ctx, fd, true, name, out);
}
