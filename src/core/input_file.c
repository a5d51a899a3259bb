/*
 * File inputs: a regular file opened read-only and read with pread through
 * the shared cache window (input.c), never mapped, so a file that shrinks
 * under us gives a clean I/O error instead of SIGBUS. Anything that is not
 * a regular file (a FIFO, a device, a folder) is refused before a byte is
 * read.
 */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct file_input {
    int fd;
} file_input;

int trowel_pread_full(int fd, void *buf, size_t n, uint64_t off, uint64_t *reached)
{
    uint8_t *to = buf;
    int result = 0;
    while (n > 0) {
        ssize_t got = pread(fd, to, n, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            result = got < 0 ? errno : -1;
            break;
        }
        to += got;
        off += (uint64_t)got;
        n -= (size_t)got;
    }
    if (reached)
        *reached = off;
    return result;
}

/* pread all n bytes at off, or fail. */
static trowel_status file_read_at(trowel_input *in, uint64_t off, void *dst, size_t n)
{
    const file_input *f = in->impl;
    uint64_t at;
    int err = trowel_pread_full(f->fd, dst, n, off, &at);
    if (err > 0)
        return trowel_fail(in->ctx, TROWEL_ERR_IO, at, "read failed: %s", strerror(err));
    if (err < 0)
        return trowel_fail(in->ctx, TROWEL_ERR_IO, at,
                           "file shrank while being read (ends before offset 0x%llx)",
                           (unsigned long long)at);
    return TROWEL_OK;
}

static int file_file_at(const trowel_input *in, uint64_t off, uint64_t *file_off)
{
    const file_input *f = in->impl;
    *file_off = off;
    return f->fd;
}

static void file_close(trowel_input *in)
{
    file_input *f = in->impl;
    close(f->fd);
}

static const trowel_input_kind file_kind = {
    .read_at = file_read_at,
    .file_at = file_file_at,
    .close = file_close,
};

bool trowel_input_is_file(const trowel_input *in)
{
    return in->kind == &file_kind;
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
    trowel_input *in = trowel_input_new(ctx, &file_kind, sizeof(file_input), path,
                                        (uint64_t)st.st_size);
    if (!in) {
        close(fd);
        return ctx->last_error.status;
    }
    ((file_input *)in->impl)->fd = fd;
    return trowel_input_give_cache(in, "the input file's read buffer", out);
}
