/*
 * Output sinks. A file sink writes to a fresh temporary file beside its
 * target (created with O_EXCL, never following links) and only links or
 * renames it into place when the caller finishes it, so an error at any point
 * leaves no half-written file under the final name.
 */
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_BUFFER_SIZE ((size_t)1 << 18)

/* A new sink of kind; NULL (with the error set) when memory runs out. */
static trowel_sink *new_sink(trowel_ctx *ctx, enum trowel_sink_kind kind, const char *name)
{
    trowel_sink *s = trowel_mem_calloc(ctx, 1, sizeof *s);
    if (!s)
        return NULL;
    s->ctx = ctx;
    s->kind = kind;
    s->fd = -1;
    s->dirfd = -1;
    s->name = trowel_mem_strdup(ctx, name);
    if (!s->name) {
        trowel_mem_free(ctx, s);
        return NULL;
    }
    return s;
}

/* The public constructors' shape: *out is the sink or NULL. */
static trowel_status open_sink(trowel_ctx *ctx, enum trowel_sink_kind kind, const char *name,
                               trowel_sink **out)
{
    *out = new_sink(ctx, kind, name);
    return *out ? TROWEL_OK : ctx->last_error.status;
}

static void free_sink(trowel_sink *s)
{
    trowel_ctx *ctx = s->ctx;
    if (s->kind == TROWEL_SINK_FILE && s->dirfd >= 0 && s->owns_dirfd)
        close(s->dirfd);
    trowel_mem_free(ctx, s->buf);
    trowel_mem_free(ctx, s->name);
    trowel_mem_free(ctx, s->final_name);
    trowel_mem_free(ctx, s->temp_name);
    trowel_mem_free(ctx, s);
}

static trowel_status open_file_in(trowel_ctx *ctx, int dirfd, bool owns, const char *name,
                                  const char *display, unsigned flags, trowel_sink **out)
{
    *out = NULL;
    trowel_sink *s = new_sink(ctx, TROWEL_SINK_FILE, display);
    if (!s) {
        if (owns)
            close(dirfd);
        return ctx->last_error.status;
    }
    s->dirfd = dirfd;
    s->owns_dirfd = owns;
    s->flags = flags;
    s->final_name = trowel_mem_strdup(ctx, name);
    s->buf = trowel_mem_alloc(ctx, FILE_BUFFER_SIZE);
    size_t tcap = strlen(name) + 32;
    s->temp_name = trowel_mem_alloc(ctx, tcap);
    if (!s->final_name || !s->buf || !s->temp_name) {
        free_sink(s);
        return ctx->last_error.status;
    }
    s->cap = FILE_BUFFER_SIZE;

    struct stat st_final;
    if (!(flags & TROWEL_SINK_OVERWRITE) && fstatat(dirfd, name, &st_final, AT_SYMLINK_NOFOLLOW) == 0) {
        free_sink(s);
        return trowel_fail(ctx, TROWEL_ERR_EXISTS, TROWEL_NO_OFFSET,
                           "%s exists (use --force to overwrite)", display);
    }
    /* A unique temporary beside the target: same folder, so rename is atomic. */
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        snprintf(s->temp_name, tcap, ".%s.trowel-%ld-%u", name, (long)getpid(), attempt);
        s->fd = openat(dirfd, s->temp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                       0666);
        if (s->fd >= 0 || errno != EEXIST)
            break;
    }
    if (s->fd < 0) {
        int err = errno;
        free_sink(s);
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot create %s: %s", display,
                           strerror(err));
    }
    *out = s;
    return TROWEL_OK;
}

trowel_status trowel_sink_open_file_at(trowel_ctx *ctx, int dirfd, const char *name,
                                       const char *display, unsigned flags, trowel_sink **out)
{
    return open_file_in(ctx, dirfd, true, name, display, flags, out);
}

trowel_status trowel_sink_open_file_in(trowel_ctx *ctx, int dirfd, const char *name,
                                       const char *display, unsigned flags, trowel_sink **out)
{
    return open_file_in(ctx, dirfd, false, name, display, flags, out);
}

/* Splits path into its folder and last component and opens the folder. */
trowel_status trowel_sink_open_file(trowel_ctx *ctx, const char *path, unsigned flags,
                                    trowel_sink **out)
{
    *out = NULL;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "%s: not a file name", path);
    char dir[4096];
    if (slash) {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir)
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "path too long");
        memcpy(dir, path, n);
        dir[n] = '\0';
        if (n == 0)
            strcpy(dir, "/");
    } else {
        strcpy(dir, ".");
    }
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot open folder %s: %s", dir,
                           strerror(errno));
    return trowel_sink_open_file_at(ctx, dirfd, base, path, flags, out);
}

trowel_status trowel_sink_open_fd(trowel_ctx *ctx, int fd, const char *name, trowel_sink **out)
{
    *out = NULL;
    trowel_sink *s = new_sink(ctx, TROWEL_SINK_FD, name ? name : "(output)");
    if (!s)
        return ctx->last_error.status;
    s->fd = fd;
    s->buf = trowel_mem_alloc(ctx, FILE_BUFFER_SIZE);
    if (!s->buf) {
        free_sink(s);
        return ctx->last_error.status;
    }
    s->cap = FILE_BUFFER_SIZE;
    *out = s;
    return TROWEL_OK;
}

trowel_status trowel_sink_open_memory(trowel_ctx *ctx, trowel_sink **out)
{
    return open_sink(ctx, TROWEL_SINK_MEMORY, "(memory)", out);
}

trowel_status trowel_sink_open_null(trowel_ctx *ctx, trowel_sink **out)
{
    return open_sink(ctx, TROWEL_SINK_NULL, "(null)", out);
}

static trowel_status write_all(trowel_sink *s, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(s->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot write %s: %s",
                               s->name, w < 0 ? strerror(errno) : "no progress");
        p += w;
        n -= (size_t)w;
    }
    return TROWEL_OK;
}

static trowel_status flush_buffer(trowel_sink *s)
{
    trowel_status st = write_all(s, s->buf, s->len);
    s->len = 0;
    return st;
}

static trowel_status grow_memory(trowel_sink *s, size_t need)
{
    size_t cap = s->cap ? s->cap : 4096;
    while (cap < need) {
        if (cap > SIZE_MAX / 2)
            return trowel_fail(s->ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET, "output too large");
        cap *= 2;
    }
    uint8_t *b = trowel_mem_realloc(s->ctx, s->buf, cap);
    if (!b)
        return s->ctx->last_error.status;
    s->buf = b;
    s->cap = cap;
    return TROWEL_OK;
}

trowel_status trowel_sink_write(trowel_sink *s, const void *data, size_t n)
{
    if (s->failed)
        return s->failed;
    trowel_status st = TROWEL_OK;
    switch (s->kind) {
    case TROWEL_SINK_NULL:
        s->crc = trowel_crc32_update(s->crc, data, n);
        break;
    case TROWEL_SINK_MEMORY:
        if (n > SIZE_MAX - s->len)
            st = trowel_fail(s->ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET, "output too large");
        else if (s->len + n > s->cap)
            st = grow_memory(s, s->len + n);
        if (st == TROWEL_OK && n) {
            memcpy(s->buf + s->len, data, n);
            s->len += n;
        }
        break;
    case TROWEL_SINK_FILE:
    case TROWEL_SINK_FD:
        if (s->len + n > s->cap) {
            st = flush_buffer(s);
            if (st == TROWEL_OK && n >= s->cap)
                st = write_all(s, data, n);
            else if (st == TROWEL_OK) {
                memcpy(s->buf, data, n);
                s->len = n;
            }
        } else if (n) {
            memcpy(s->buf + s->len, data, n);
            s->len += n;
        }
        break;
    }
    if (st != TROWEL_OK)
        s->failed = st;
    else
        s->written += n;
    return st;
}

uint64_t trowel_sink_written(const trowel_sink *s)
{
    return s->written;
}

uint32_t trowel_sink_crc32(const trowel_sink *s)
{
    return s->kind == TROWEL_SINK_NULL ? s->crc : 0;
}

const uint8_t *trowel_sink_data(const trowel_sink *s, size_t *size)
{
    if (s->kind != TROWEL_SINK_MEMORY) {
        *size = 0;
        return NULL;
    }
    *size = s->len;
    return s->buf;
}

trowel_status trowel_sink_take(trowel_sink *s, uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    if (s->kind != TROWEL_SINK_MEMORY)
        return trowel_fail(s->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "not a memory sink");
    *data = s->buf;
    *size = s->len;
    s->buf = NULL;
    s->len = s->cap = 0;
    return TROWEL_OK;
}

bool trowel_sink_takes_positional(const trowel_sink *s)
{
    return s->kind == TROWEL_SINK_FILE && !s->failed && s->written == 0 && s->len == 0;
}

int trowel_sink_pwrite(trowel_sink *s, uint64_t off, const void *data, size_t n)
{
    const uint8_t *p = data;
    while (n > 0) {
        ssize_t w = pwrite(s->fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        p += w;
        off += (uint64_t)w;
        n -= (size_t)w;
    }
    return 0;
}

trowel_status trowel_sink_positional_done(trowel_sink *s, uint64_t total, int err)
{
    if (err) {
        s->failed = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot write %s: %s",
                                s->name, strerror(err));
        return s->failed;
    }
    s->written = total;
    return TROWEL_OK;
}

static trowel_status commit_file(trowel_sink *s)
{
    trowel_status st = s->failed ? s->failed : flush_buffer(s);
    if (st == TROWEL_OK && close(s->fd) != 0)
        st = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot close %s: %s", s->name,
                         strerror(errno));
    else if (st != TROWEL_OK)
        close(s->fd);
    s->fd = -1;
    if (st != TROWEL_OK) {
        unlinkat(s->dirfd, s->temp_name, 0);
        return st;
    }
    if (s->flags & TROWEL_SINK_OVERWRITE) {
        /* rename replaces whatever is there, a link included, without following it. */
        if (renameat(s->dirfd, s->temp_name, s->dirfd, s->final_name) != 0)
            st = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot rename into %s: %s",
                             s->name, strerror(errno));
    } else {
        /* link refuses an existing name atomically: no window for a race. */
        if (linkat(s->dirfd, s->temp_name, s->dirfd, s->final_name, 0) != 0)
            st = trowel_fail(s->ctx, errno == EEXIST ? TROWEL_ERR_EXISTS : TROWEL_ERR_IO,
                             TROWEL_NO_OFFSET, "cannot create %s: %s", s->name,
                             errno == EEXIST ? "it exists (use --force to overwrite)"
                                             : strerror(errno));
    }
    unlinkat(s->dirfd, s->temp_name, 0);
    return st;
}

trowel_status trowel_sink_finish(trowel_sink *s)
{
    trowel_status st = s->failed;
    switch (s->kind) {
    case TROWEL_SINK_FILE:
        st = commit_file(s);
        break;
    case TROWEL_SINK_FD:
        if (st == TROWEL_OK)
            st = flush_buffer(s);
        break;
    case TROWEL_SINK_MEMORY:
    case TROWEL_SINK_NULL:
        break;
    }
    free_sink(s);
    return st;
}

void trowel_sink_discard(trowel_sink *s)
{
    if (!s)
        return;
    if (s->kind == TROWEL_SINK_FILE && s->fd >= 0) {
        close(s->fd);
        unlinkat(s->dirfd, s->temp_name, 0);
    }
    free_sink(s);
}
