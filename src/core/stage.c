/*
 * Staged output folders. Thousands of small files into a new folder spend
 * most of their time being made, and an unnamed file linked into place
 * (sink_file.c) costs more to make than a plain one. A folder nobody sees
 * needs no unnamed files: its files can be made under their final names
 * at once (TROWEL_SINK_PRIVATE_FOLDER) if the folder appears only when
 * they are all whole.
 *
 * So the first folder of the path that does not exist (the top: "a" of
 * a/b/out when only the current folder exists) is made at once, empty, to
 * hold the name and to fail now where the name cannot be made; beside it a
 * private folder ".trowel-PID-stageN" is made, locked and announced to the
 * temp handler, with the rest of the path inside it (b/out), and the output
 * is written there. Publishing renames the private folder over the empty
 * top, which replaces it in one step (a top somebody put files in
 * meanwhile is not replaced: the run fails and removes its own). A signal
 * handler removes both names (trowel_remove_temp: the private folder with
 * all it holds, the top only while empty); kill -9 leaves the private
 * folder and the empty top, and the next run staging beside them removes
 * the private folder (trowel_sweep_stale_stages).
 */
#define _GNU_SOURCE
#include "stage.h"
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct trowel_stage {
    trowel_ctx *ctx;
    int parent;     /* the folder that holds the top and the private folder */
    int fd;         /* the private folder, open and locked, or -1 */
    char name[40];  /* its name */
    char *top;      /* the name it takes when published */
    bool reserved;  /* the top was made (empty) by this run */
    char *inner;    /* the path from the top to the output folder, or "" */
    bool published; /* put in place, or found empty and removed */
};

static void announce(trowel_stage *st, const char *name, bool live)
{
    if (st->ctx->temp_fn)
        st->ctx->temp_fn(st->ctx->temp_user, st->parent, name, live);
}

static bool is_dot_or_dotdot(const char *s, size_t len)
{
    return (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.');
}

/* Copies path (trailing slashes dropped) to buf and finds its first
 * component that does not exist, at *top_at: false when every one exists,
 * on an error other than "missing", or when a component after the top is
 * "." or "..". */
static bool find_top(const char *path, char *buf, size_t cap, size_t *top_at)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    if (n == 0 || n >= cap)
        return false;
    memcpy(buf, path, n);
    buf[n] = '\0';
    bool found = false;
    for (size_t i = 0; i < n;) {
        size_t start = i;
        while (i < n && buf[i] != '/')
            i++;
        size_t len = i - start;
        if (found && is_dot_or_dotdot(buf + start, len))
            return false;
        if (!found && len > 0) {
            char c = buf[i];
            buf[i] = '\0';
            struct stat sb;
            int missing = stat(buf, &sb) != 0 ? errno : 0;
            buf[i] = c;
            if (missing && (missing != ENOENT || is_dot_or_dotdot(buf + start, len)))
                return false;
            if (missing) {
                found = true;
                *top_at = start;
            }
        }
        i += i < n;
    }
    return found;
}

/* Makes, opens and locks the private folder, then announces it. */
static bool make_private(trowel_stage *st)
{
    for (unsigned serial = 0; serial < 100; serial++) {
        snprintf(st->name, sizeof st->name, ".trowel-%ld-stage%u", (long)getpid(), serial);
        if (mkdirat(st->parent, st->name, 0777) != 0) {
            if (errno == EEXIST)
                continue;
            break;
        }
        st->fd = openat(st->parent, st->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (st->fd < 0 || flock(st->fd, LOCK_EX | LOCK_NB) != 0) {
            /* Unlocked, a sweep elsewhere could take it for stale. */
            if (st->fd >= 0)
                close(st->fd);
            st->fd = -1;
            unlinkat(st->parent, st->name, AT_REMOVEDIR);
            break;
        }
        announce(st, st->name, true);
        return true;
    }
    st->name[0] = '\0';
    return false;
}

/* The output folder: the inner path made inside the private folder. */
static int make_inner(trowel_stage *st)
{
    int fd = fcntl(st->fd, F_DUPFD_CLOEXEC, 0);
    char part[4096];
    for (const char *p = st->inner; fd >= 0 && *p;) {
        size_t len = strcspn(p, "/");
        if (len > 0 && len < sizeof part) {
            memcpy(part, p, len);
            part[len] = '\0';
            int child = mkdirat(fd, part, 0777) == 0
                            ? openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                            : -1;
            close(fd);
            fd = child;
        }
        p += len;
        p += *p == '/';
    }
    return fd;
}

bool trowel_stage_open(trowel_ctx *ctx, const char *path, trowel_stage **out, int *fd)
{
    *out = NULL;
    *fd = -1;
#if defined(__linux__)
    char buf[4096];
    size_t top_at = 0;
    if (!find_top(path, buf, sizeof buf, &top_at))
        return false;
    size_t top_end = top_at + strcspn(buf + top_at, "/");
    const char *inner = buf + top_end + strspn(buf + top_end, "/");
    trowel_stage *st = trowel_mem_calloc(ctx, 1, sizeof *st);
    if (!st)
        return false;
    st->ctx = ctx;
    st->fd = -1;
    st->top = trowel_mem_calloc(ctx, 1, top_end - top_at + 1);
    st->inner = trowel_mem_strdup(ctx, inner);
    /* The folder holding the top: what comes before it, else "." or "/". */
    size_t p = top_at;
    while (p > 1 && buf[p - 1] == '/')
        p--;
    buf[p] = '\0';
    st->parent = open(p == 0 ? "." : buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (st->top && st->inner && st->parent >= 0) {
        memcpy(st->top, path + top_at, top_end - top_at);
        trowel_sweep_stale_stages(st->parent);
        st->reserved = mkdirat(st->parent, st->top, 0777) == 0;
        if (st->reserved)
            announce(st, st->top, true);
        if (st->reserved && make_private(st) && (*fd = make_inner(st)) >= 0) {
            *out = st;
            return true;
        }
    }
    trowel_stage_close(st);
    return false;
#else
    (void)ctx, (void)path;
    return false;
#endif
}

/* Removes the private folder if the output folder inside holds nothing
 * (the folders on the way hold only it): true when it did. */
static bool remove_if_empty(trowel_stage *st)
{
    char rel[4096];
    size_t n = strlen(st->inner);
    if (n >= sizeof rel)
        return false;
    memcpy(rel, st->inner, n + 1);
    while (n > 0) { /* the inner path, deepest folder first */
        if (unlinkat(st->fd, rel, AT_REMOVEDIR) != 0)
            return false;
        while (n > 0 && rel[n - 1] != '/')
            n--;
        while (n > 0 && rel[n - 1] == '/')
            n--;
        rel[n] = '\0';
    }
    if (unlinkat(st->parent, st->name, AT_REMOVEDIR) != 0)
        return false;
    announce(st, st->name, false);
    return true;
}

/* Removes the private folder with all it holds, and the top while empty. */
static void drop(trowel_stage *st)
{
    if (st->fd >= 0) {
        (void)trowel_remove_stage_at(st->parent, st->name, st->fd);
        announce(st, st->name, false);
    }
    if (st->reserved) {
        unlinkat(st->parent, st->top, AT_REMOVEDIR);
        announce(st, st->top, false);
    }
    st->published = true; /* nothing is left to do */
}

trowel_status trowel_stage_publish(trowel_stage *st, const char *path)
{
    if (st->published)
        return TROWEL_OK;
    if (remove_if_empty(st)) { /* no file: no folder, as when every entry failed */
        close(st->fd);
        st->fd = -1;
        drop(st);
        return TROWEL_OK;
    }
    if (renameat(st->parent, st->name, st->parent, st->top) != 0) {
        int err = errno;
        bool taken = err == ENOTEMPTY || err == EEXIST;
        drop(st);
        return trowel_fail(st->ctx, taken ? TROWEL_ERR_EXISTS : TROWEL_ERR_IO, TROWEL_NO_OFFSET,
                           "cannot put the folder %s in place: %s; nothing was extracted", path,
                           taken ? "files appeared in it while it was written" : strerror(err));
    }
    announce(st, st->name, false);
    announce(st, st->top, false);
    st->published = true;
    return TROWEL_OK;
}

void trowel_stage_close(trowel_stage *st)
{
    if (!st)
        return;
    if (!st->published)
        drop(st);
    if (st->fd >= 0)
        close(st->fd);
    if (st->parent >= 0)
        close(st->parent);
    trowel_mem_free(st->ctx, st->top);
    trowel_mem_free(st->ctx, st->inner);
    trowel_mem_free(st->ctx, st);
}
