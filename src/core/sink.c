/*
 * Output sinks. A file sink never shows a partial file under its final name.
 * On Linux it writes to an unnamed file (O_TMPFILE) in the target's folder
 * and links it into place when the caller finishes it: an error, a signal or
 * even kill -9 leaves nothing behind, and the target's name may be as long
 * as the file system allows. Where the file system has no unnamed files, it
 * writes to a short named temporary beside the target (created with O_EXCL,
 * never following links), which the context's temp handler hears about so a
 * program can remove it when a signal kills it; one left by kill -9 is
 * removed by the next run that writes into that folder (see "stale
 * temporaries").
 */
/* O_TMPFILE, AT_EMPTY_PATH and AT_SYMLINK_FOLLOW are Linux extensions. */
#define _GNU_SOURCE
#include "sink.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
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
    if (s->kind == TROWEL_SINK_FD && s->owns_fd && s->fd >= 0)
        close(s->fd);
    trowel_mem_free(ctx, s->buf);
    trowel_mem_free(ctx, s->name);
    trowel_mem_free(ctx, s->final_name);
    trowel_mem_free(ctx, s);
}

void trowel_sink_announce(trowel_sink *s, const char *name, bool live)
{
    if (s->ctx->temp_fn)
        s->ctx->temp_fn(s->ctx->temp_user, s->dirfd, name, live);
}

static void announce_temp(trowel_sink *s, bool live)
{
    trowel_sink_announce(s, s->temp_name, live);
}

int trowel_sink_fresh_name(trowel_sink *s, char *name, size_t cap, const char *tag,
                           unsigned *serial, trowel_sink_make_fn make)
{
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        snprintf(name, cap, ".trowel-%ld-%s%u", (long)getpid(), tag, (*serial)++);
        trowel_sink_announce(s, name, true);
        int err = make(s, name);
        if (err == 0)
            return 0;
        trowel_sink_announce(s, name, false);
        name[0] = '\0';
        if (err != EEXIST)
            return err;
    }
    return EEXIST;
}

/* Gives the sink a fresh temporary name (".trowel-PID-N", N from 0) with
 * trowel_sink_fresh_name. */
static int with_fresh_temp(trowel_sink *s, trowel_sink_make_fn make)
{
    unsigned serial = 0;
    return trowel_sink_fresh_name(s, s->temp_name, sizeof s->temp_name, "", &serial, make);
}

/* The writer holds a lock on its file for as long as it has it open, so
 * that a sweep (below) by another process never takes a temporary that is
 * still being written, whatever its pid looks like from there. */
static void hold_lock(int fd)
{
    (void)flock(fd, LOCK_EX | LOCK_NB);
}

/* An unnamed file is locked only when it is about to get a temporary name
 * (replacing a file, or trowel_sinks_finish_all): nobody can sweep a file
 * that has no name, and most never get one. */
void trowel_sink_hold_lock(trowel_sink *s)
{
    hold_lock(s->fd);
}

static int create_named_temp(trowel_sink *s, const char *name)
{
    s->fd = openat(s->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (s->fd < 0)
        return errno;
    hold_lock(s->fd);
    return 0;
}

/* ------------------------------------------------ stale temporaries
 * A run killed with kill -9 (or a power loss) on a file system without
 * unnamed files leaves its ".trowel-PID-..." temporaries behind, and no
 * handler ran to remove them. The next sink opened in that folder removes
 * those whose process is gone: no process with that pid exists here (kill
 * with signal 0 says ESRCH), and nobody holds the file's lock (a live
 * writer always does: a pid from another pid namespace sharing the folder
 * looks dead from here, its lock does not). Each folder is swept once per
 * context. */

/* The pid in ".trowel-PID-rest", or 0 when name is not such a name. */
static long temp_name_pid(const char *name)
{
    static const char prefix[] = ".trowel-";
    if (strncmp(name, prefix, sizeof prefix - 1) != 0)
        return 0;
    const char *p = name + sizeof prefix - 1;
    long pid = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (pid > 99999999)
            return 0;
        pid = pid * 10 + (*p - '0');
    }
    return *p == '-' ? pid : 0;
}

static bool pid_is_gone(long pid)
{
    return pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes name from dirfd if it is a regular file nobody holds locked. */
static void remove_if_unlocked(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0)
        unlinkat(dirfd, name, 0);
    close(fd);
}

/* True (and the folder remembered) the first time this context sees it. */
static bool first_visit(trowel_ctx *ctx, int dirfd)
{
    struct stat st;
    if (fstat(dirfd, &st) != 0)
        return false;
    uint64_t dev = (uint64_t)st.st_dev, ino = (uint64_t)st.st_ino;
    unsigned n = ctx->swept_count;
    size_t slots = sizeof ctx->swept / sizeof ctx->swept[0];
    for (unsigned i = 0; i < n; i++)
        if (ctx->swept[i][0] == dev && ctx->swept[i][1] == ino)
            return false;
    if (n == slots) { /* forget the oldest */
        memmove(ctx->swept[0], ctx->swept[1], (slots - 1) * sizeof ctx->swept[0]);
        n--;
    }
    ctx->swept[n][0] = dev;
    ctx->swept[n][1] = ino;
    ctx->swept_count = n + 1;
    return true;
}

static void sweep_stale_temps(trowel_ctx *ctx, int dirfd)
{
    if (!first_visit(ctx, dirfd))
        return;
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        long pid = temp_name_pid(e->d_name);
        if (pid > 0 && pid_is_gone(pid))
            remove_if_unlocked(dirfd, e->d_name);
    }
    closedir(d);
}

/* File systems known to report a failed write (a full disk) at the write
 * itself; on others (NFS, CIFS, FUSE) it may surface only at close. */
static bool reports_errors_eagerly(int dirfd)
{
#if defined(__linux__)
    struct statfs sf;
    if (fstatfs(dirfd, &sf) != 0)
        return false;
    switch ((unsigned long)sf.f_type) {
    case 0xEF53:     /* ext2, ext3, ext4 */
    case 0x58465342: /* XFS */
    case 0x9123683E: /* Btrfs */
    case 0x01021994: /* tmpfs */
    case 0xF2F52010: /* F2FS */
        return true;
    default:
        return false;
    }
#else
    (void)dirfd;
    return false;
#endif
}

unsigned trowel_sink_folder_facts(trowel_ctx *ctx, int dirfd)
{
    sweep_stale_temps(ctx, dirfd);
    return TROWEL_SINK_SWEPT | (reports_errors_eagerly(dirfd) ? TROWEL_SINK_EAGER_ERRORS : 0u);
}

/* Whether an unnamed file can be linked into place through /proc: looked
 * at once per context. */
static bool proc_fd_usable(trowel_ctx *ctx)
{
    if (ctx->proc_fd_usable == 0)
        ctx->proc_fd_usable = faccessat(AT_FDCWD, "/proc/self/fd", X_OK, 0) == 0 ? 1 : -1;
    return ctx->proc_fd_usable > 0;
}

/* An unnamed file in the sink's folder, or false when the system or the
 * file system has none (or it could not be linked into place later:
 * linking needs /proc). */
static bool open_unnamed(trowel_sink *s)
{
#if defined(__linux__) && defined(O_TMPFILE)
    if (s->ctx->named_temps_only || !proc_fd_usable(s->ctx))
        return false;
    s->fd = openat(s->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    s->unnamed = s->fd >= 0;
    return s->unnamed;
#else
    (void)s;
    return false;
#endif
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
    const char *purpose = trowel_mem_purpose(ctx, "the output file's buffer");
    s->buf = trowel_mem_alloc(ctx, FILE_BUFFER_SIZE);
    trowel_mem_purpose(ctx, purpose);
    if (!s->final_name || !s->buf) {
        free_sink(s);
        return ctx->last_error.status;
    }
    s->cap = FILE_BUFFER_SIZE;

    /* An early look, so that a file that is there is refused before any
     * work; linking refuses it atomically later in any case, so a folder
     * made by this run needs no look. */
    struct stat st_final;
    if (!(flags & (TROWEL_SINK_OVERWRITE | TROWEL_SINK_NEW_FOLDER)) &&
        fstatat(dirfd, name, &st_final, AT_SYMLINK_NOFOLLOW) == 0) {
        free_sink(s);
        return trowel_fail(ctx, TROWEL_ERR_EXISTS, TROWEL_NO_OFFSET,
                           "%s exists (use --force to overwrite)", display);
    }
    if (!(flags & TROWEL_SINK_SWEPT))
        sweep_stale_temps(ctx, dirfd);
    /* Any failure of the unnamed file falls back to a named one, whose error
     * (permissions, a full disk) is then the one reported. */
    if (!open_unnamed(s)) {
        int err = with_fresh_temp(s, create_named_temp);
        if (err) {
            free_sink(s);
            return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot create %s: %s",
                               display, strerror(err));
        }
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

/* A path naming a character device or a FIFO (/dev/null, /dev/stdout, a
 * named pipe) is written in place, as cp does: there is no file there to
 * keep or replace, and renaming a finished output over it would replace the
 * device node itself. *done is false for any other path. */
static trowel_status open_special(trowel_ctx *ctx, const char *path, trowel_sink **out,
                                  bool *done)
{
    struct stat st;
    *done = stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) ||
                                     S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode));
    if (!*done)
        return TROWEL_OK;
    if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET,
                           "%s is a %s: refusing to write to it", path,
                           S_ISBLK(st.st_mode) ? "block device" : "socket");
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot open %s: %s", path,
                           strerror(errno));
    trowel_status s = trowel_sink_open_fd(ctx, fd, path, out);
    if (s != TROWEL_OK)
        close(fd);
    else
        (*out)->owns_fd = true;
    return s;
}

/* Splits path into its folder and last component and opens the folder. */
trowel_status trowel_sink_open_file(trowel_ctx *ctx, const char *path, unsigned flags,
                                    trowel_sink **out)
{
    *out = NULL;
    bool special;
    trowel_status st = open_special(ctx, path, out, &special);
    if (special)
        return st;
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
    const char *purpose = trowel_mem_purpose(ctx, "the output's buffer");
    s->buf = trowel_mem_alloc(ctx, FILE_BUFFER_SIZE);
    trowel_mem_purpose(ctx, purpose);
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
    const char *purpose = trowel_mem_purpose(s->ctx, "the output kept in memory");
    uint8_t *b = trowel_mem_realloc(s->ctx, s->buf, cap);
    trowel_mem_purpose(s->ctx, purpose);
    if (!b)
        return s->ctx->last_error.status;
    s->buf = b;
    s->cap = cap;
    return TROWEL_OK;
}

trowel_status trowel_sink_copy_fd(trowel_sink *s, int fd, uint64_t off, uint64_t n,
                                 uint64_t *copied)
{
    *copied = 0;
    if (s->failed)
        return s->failed;
    if (s->kind != TROWEL_SINK_FILE && s->kind != TROWEL_SINK_FD)
        return TROWEL_OK;
    trowel_status st = flush_buffer(s);
    off64_t in_off = (off64_t)off;
    while (st == TROWEL_OK && *copied < n) {
        uint64_t left = n - *copied;
        size_t chunk = left < ((size_t)1 << 30) ? (size_t)left : (size_t)1 << 30;
        ssize_t got = copy_file_range(fd, &in_off, s->fd, NULL, chunk, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            /* Not possible here (a pipe, another file system, an old
             * kernel) or the input ended: ordinary reads and writes do the
             * rest and report what is wrong. A failure after some bytes
             * went is a real write error. */
            if (got < 0 && *copied && errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
                errno != EOPNOTSUPP)
                st = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot write %s: %s",
                                 s->name, strerror(errno));
            break;
        }
        *copied += (uint64_t)got;
    }
    if (st != TROWEL_OK)
        s->failed = st;
    s->written += *copied;
    return st;
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

trowel_status trowel_sink_reserve(trowel_sink *s, size_t size)
{
    if (s->kind != TROWEL_SINK_MEMORY || size <= s->cap)
        return TROWEL_OK;
    const char *purpose = trowel_mem_purpose(s->ctx, "the output kept in memory");
    uint8_t *b = trowel_mem_realloc(s->ctx, s->buf, size);
    trowel_mem_purpose(s->ctx, purpose);
    if (!b)
        return s->ctx->last_error.status;
    s->buf = b;
    s->cap = size;
    return TROWEL_OK;
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

/* Through /proc first, which needs no privilege; AT_EMPTY_PATH needs
 * CAP_DAC_READ_SEARCH. */
int trowel_sink_link_unnamed(trowel_sink *s, const char *name)
{
#if defined(__linux__) && defined(O_TMPFILE)
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", s->fd);
    if (linkat(AT_FDCWD, proc, s->dirfd, name, AT_SYMLINK_FOLLOW) == 0)
        return 0;
    int err = errno;
    if (err == EEXIST)
        return err;
    if (linkat(s->fd, "", s->dirfd, name, AT_EMPTY_PATH) == 0)
        return 0;
    return errno == EEXIST ? EEXIST : err;
#else
    (void)s, (void)name;
    return ENOTSUP;
#endif
}

trowel_status trowel_sink_io_fail(trowel_sink *s, const char *what, int err)
{
    return trowel_fail(s->ctx, err == EEXIST ? TROWEL_ERR_EXISTS : TROWEL_ERR_IO, TROWEL_NO_OFFSET,
                       "cannot %s %s: %s", what, s->name,
                       err == EEXIST ? "it exists (use --force to overwrite)" : strerror(err));
}

/* Puts the unnamed file under its final name. A new name is linked at once,
 * atomically refusing one that appeared meanwhile. Replacing links it under
 * a short temporary name and renames that over the target, so a name that
 * is not the target's shows the output only between those two calls. Once
 * a target of this run was there already (--force over an earlier
 * extraction), the next ones are assumed to be too and go straight to the
 * temporary name, sparing a link that would fail. */
static trowel_status place_unnamed(trowel_sink *s)
{
    bool replacing = s->flags & TROWEL_SINK_OVERWRITE;
    if (!replacing || !s->ctx->last_target_existed) {
        int err = trowel_sink_link_unnamed(s, s->final_name);
        if (err != EEXIST || !replacing)
            return err ? trowel_sink_io_fail(s, "create", err) : TROWEL_OK;
        s->ctx->last_target_existed = true;
    }
    hold_lock(s->fd); /* it gets a name a sweep could see */
    int err = with_fresh_temp(s, trowel_sink_link_unnamed);
    if (err)
        return trowel_sink_io_fail(s, "create", err);
    trowel_status st = TROWEL_OK;
    if (renameat(s->dirfd, s->temp_name, s->dirfd, s->final_name) != 0) {
        st = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot rename into %s: %s",
                         s->name, strerror(errno));
        unlinkat(s->dirfd, s->temp_name, 0);
    }
    announce_temp(s, false);
    return st;
}

trowel_status trowel_sink_flush(trowel_sink *s)
{
    return s->failed ? s->failed : flush_buffer(s);
}

/* Some file systems (NFS) report a failed write only when a descriptor is
 * closed, and any of the file's descriptors will do: closing a duplicate
 * brings such an error out while the output is still unnamed, before it
 * takes the final name (with --force, before it replaces the old file).
 * Where the file system is known to report them at the write (ext4, XFS,
 * Btrfs, tmpfs, F2FS: TROWEL_SINK_EAGER_ERRORS) it is skipped. */
static trowel_status flush_by_closing_a_dup(trowel_sink *s)
{
    int dup_fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) /* no descriptor to spare: the final close still checks */
        return TROWEL_OK;
    if (close(dup_fd) == 0)
        return TROWEL_OK;
    return trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot write %s: %s", s->name,
                       strerror(errno));
}

static trowel_status commit_unnamed(trowel_sink *s)
{
    trowel_status st = s->failed ? s->failed : flush_buffer(s);
    if (st == TROWEL_OK && !(s->flags & TROWEL_SINK_EAGER_ERRORS))
        st = flush_by_closing_a_dup(s);
    if (st == TROWEL_OK)
        st = place_unnamed(s);
    bool placed = st == TROWEL_OK;
    if (close(s->fd) != 0 && placed) {
        /* A write failed after all (the duplicate's close said nothing):
         * the file under the final name may be short, so it goes. */
        st = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot close %s: %s", s->name,
                         strerror(errno));
        unlinkat(s->dirfd, s->final_name, 0);
    }
    s->fd = -1;
    return st;
}

/* Puts the named temporary under the final name unless that exists: 0 or an
 * errno value. link refuses an existing name atomically; a file system with
 * no hard links (FAT) gets a rename that refuses it just as well. */
static int place_named_no_replace(trowel_sink *s)
{
    if (linkat(s->dirfd, s->temp_name, s->dirfd, s->final_name, 0) == 0)
        return 0;
    int err = errno;
#if defined(__linux__) && defined(RENAME_NOREPLACE)
    if (err == EPERM || err == EOPNOTSUPP || err == ENOSYS) {
        if (renameat2(s->dirfd, s->temp_name, s->dirfd, s->final_name, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno != EINVAL) /* EINVAL: the flag is not supported; say why link failed */
            err = errno;
    }
#endif
    return err;
}

/* The named temporary: closed, then linked (a new name) or renamed
 * (replacing) into place, and always removed. */
static trowel_status commit_named(trowel_sink *s)
{
    trowel_status st = s->failed ? s->failed : flush_buffer(s);
    if (st == TROWEL_OK && close(s->fd) != 0)
        st = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot close %s: %s", s->name,
                         strerror(errno));
    else if (st != TROWEL_OK)
        close(s->fd);
    s->fd = -1;
    if (st == TROWEL_OK && (s->flags & TROWEL_SINK_OVERWRITE)) {
        /* rename replaces whatever is there, a link included, without following it. */
        if (renameat(s->dirfd, s->temp_name, s->dirfd, s->final_name) != 0)
            st = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot rename into %s: %s",
                             s->name, strerror(errno));
    } else if (st == TROWEL_OK) {
        int err = place_named_no_replace(s);
        if (err)
            st = trowel_sink_io_fail(s, "create", err);
    }
    unlinkat(s->dirfd, s->temp_name, 0);
    announce_temp(s, false);
    return st;
}

static trowel_status commit_file(trowel_sink *s)
{
    return s->unnamed ? commit_unnamed(s) : commit_named(s);
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
        if (!s->unnamed) {
            unlinkat(s->dirfd, s->temp_name, 0);
            announce_temp(s, false);
        }
    }
    free_sink(s);
}
