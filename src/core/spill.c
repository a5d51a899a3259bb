/*
 * Temporary storage (spill.h): memory up to a threshold, then an unnamed
 * file. The read side is a callback input over the file (pread), or a
 * memory input over the buffer, so every reader reads a spill as it reads
 * anything else.
 */
#include "spill.h"

#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPILL_MEMORY_MAX ((size_t)1 << 20)

struct trowel_spill {
    trowel_ctx *ctx;
    char *what;
    size_t threshold;  /* bytes kept in memory at most */
    uint8_t *buf;      /* in memory: [0, len) */
    size_t cap;
    uint64_t size;
    int fd;            /* on disk: the unnamed file, or -1 */
    trowel_input *in;  /* the read side, once taken */
    trowel_status failed;
};

trowel_status trowel_spill_open(trowel_ctx *ctx, const char *what, trowel_spill **out)
{
    *out = NULL;
    trowel_spill *sp = trowel_mem_calloc(ctx, 1, sizeof *sp);
    if (!sp)
        return ctx->last_error.status;
    sp->ctx = ctx;
    sp->fd = -1;
    sp->what = trowel_mem_strdup(ctx, what ? what : "temporary storage");
    if (!sp->what) {
        trowel_mem_free(ctx, sp);
        return ctx->last_error.status;
    }
    uint64_t tenth = ctx->mem_limit / 10;
    sp->threshold = tenth < SPILL_MEMORY_MAX ? (size_t)tenth : SPILL_MEMORY_MAX;
    *out = sp;
    return TROWEL_OK;
}

uint64_t trowel_spill_size(const trowel_spill *sp)
{
    return sp->size;
}

bool trowel_spill_on_disk(const trowel_spill *sp)
{
    return sp->fd >= 0;
}

static void announce(trowel_ctx *ctx, int dirfd, const char *name, bool live)
{
    if (ctx->temp_fn)
        ctx->temp_fn(ctx->temp_user, dirfd, name, live);
}

/* An unnamed read-write file in folder dir: O_TMPFILE, else a fresh name
 * created exclusively and removed at once. -1 (errno set) on failure. */
static int unnamed_file(trowel_ctx *ctx, const char *dir)
{
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
#endif
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return -1;
    int fd = -1;
    for (unsigned tries = 0; fd < 0 && tries < 100; tries++) {
        char name[64];
        snprintf(name, sizeof name, ".trowel-spill-%ld-%lx-%u", (long)getpid(),
                 (unsigned long)(uintptr_t)ctx, tries);
        announce(ctx, dirfd, name, true);
        fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        int err = errno;
        if (fd >= 0)
            unlinkat(dirfd, name, 0);
        announce(ctx, dirfd, name, false);
        if (fd < 0 && err != EEXIST)
            break;
        errno = err;
    }
    int err = errno;
    close(dirfd);
    errno = err;
    return fd;
}

/* Writes all n bytes to fd, or fails. */
static trowel_status write_all(trowel_spill *sp, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t put = write(sp->fd, p, n);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return trowel_fail(sp->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET,
                               "cannot write %s to a temporary file: %s", sp->what,
                               put < 0 ? strerror(errno) : "no room");
        p += put;
        n -= (size_t)put;
    }
    return TROWEL_OK;
}

/* Moves what is in memory into a new unnamed file. */
static trowel_status move_to_disk(trowel_spill *sp)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    sp->fd = unnamed_file(sp->ctx, dir);
    if (sp->fd < 0)
        return trowel_fail(sp->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET,
                           "cannot make a temporary file for %s in %s: %s", sp->what, dir,
                           strerror(errno));
    trowel_status s = write_all(sp, sp->buf, (size_t)sp->size);
    trowel_mem_free(sp->ctx, sp->buf);
    sp->buf = NULL;
    sp->cap = 0;
    return s;
}

static trowel_status keep(trowel_spill *sp, const uint8_t *data, size_t n)
{
    if (sp->in)
        return trowel_fail(sp->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "%s is being read: no more writes", sp->what);
    if (sp->fd < 0 && n <= sp->threshold - sp->size) {
        if (sp->size + n > sp->cap) {
            size_t cap = sp->cap ? sp->cap : 4096;
            while (cap < sp->size + n)
                cap *= 2;
            if (cap > sp->threshold)
                cap = sp->threshold;
            uint8_t *grown = trowel_mem_realloc(sp->ctx, sp->buf, cap);
            if (!grown)
                return sp->ctx->last_error.status;
            sp->buf = grown;
            sp->cap = cap;
        }
        memcpy(sp->buf + sp->size, data, n);
        sp->size += n;
        return TROWEL_OK;
    }
    trowel_status s = sp->fd < 0 ? move_to_disk(sp) : TROWEL_OK;
    if (s == TROWEL_OK)
        s = write_all(sp, data, n);
    if (s == TROWEL_OK)
        sp->size += n;
    return s;
}

trowel_status trowel_spill_write(trowel_spill *sp, const void *data, size_t n)
{
    if (sp->failed != TROWEL_OK)
        return sp->failed;
    if (n == 0)
        return TROWEL_OK;
    trowel_status s = keep(sp, data, n);
    if (s != TROWEL_OK && !sp->in)
        sp->failed = s;
    return s;
}

static trowel_status spill_read(void *user, uint64_t off, void *dst, size_t n)
{
    const trowel_spill *sp = user;
    return trowel_pread_full(sp->fd, dst, n, off, NULL) == 0 ? TROWEL_OK : TROWEL_ERR_IO;
}

static trowel_status spill_size(void *user, uint64_t *size)
{
    *size = ((const trowel_spill *)user)->size;
    return TROWEL_OK;
}

trowel_status trowel_spill_input(trowel_spill *sp, trowel_input **out)
{
    *out = NULL;
    if (sp->failed != TROWEL_OK)
        return trowel_fail(sp->ctx, sp->failed, TROWEL_NO_OFFSET, "%s was not kept whole",
                           sp->what);
    if (!sp->in) {
        static const trowel_input_ops ops = {.read_at = spill_read, .size = spill_size};
        trowel_status s = sp->fd >= 0
                              ? trowel_input_open_callbacks(sp->ctx, &ops, sp, sp->what, &sp->in)
                              : trowel_input_open_memory(sp->ctx, sp->buf ? (const void *)sp->buf : "",
                                                         (size_t)sp->size, sp->what, &sp->in);
        if (s != TROWEL_OK)
            return s;
    }
    *out = sp->in;
    return TROWEL_OK;
}

void trowel_spill_close(trowel_spill *sp)
{
    if (!sp)
        return;
    trowel_input_close(sp->in);
    if (sp->fd >= 0)
        close(sp->fd);
    trowel_mem_free(sp->ctx, sp->buf);
    trowel_mem_free(sp->ctx, sp->what);
    trowel_mem_free(sp->ctx, sp);
}
