/*
 * Staged output folders. Thousands of small files into a new folder spend
 * most of their time being made, and an unnamed file linked into place
 * (sink_file.c) costs more to make than a plain one. A folder nobody sees
 * needs no unnamed files: its files can be made under their final names
 * at once (TROWEL_SINK_PRIVATE_FOLDER) if the folder appears only when
 * they are all whole.
 *
 * So the folder is made at once, empty, to hold its name and to fail now
 * where the name cannot be made (its parents are made as they always
 * were, in place); beside it a private folder ".trowel-PID-stageN" is made,
 * locked and announced to the temp handler, and the output is written
 * there. Publishing renames the private folder over the empty one, which
 * replaces it in one step (one somebody put files in meanwhile is not
 * replaced: the run fails and removes its own). A signal handler removes
 * both names (trowel_remove_temp: the private folder with all it holds,
 * the other only while empty); kill -9 leaves them, and the next run
 * staging beside them, or writing into the folder they were for, removes
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
    int parent;     /* the folder that holds both names */
    int fd;         /* the private folder, open and locked, or -1 */
    char name[40];  /* its name */
    char *top;      /* the name it takes when published */
    bool reserved;  /* the top was made (empty) by this run */
    bool published; /* put in place, or found empty and removed */
};

static void announce(trowel_stage *st, const char *name, bool live)
{
    if (st->ctx->temp_fn)
        st->ctx->temp_fn(st->ctx->temp_user, st->parent, name, live);
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

bool trowel_stage_open(trowel_ctx *ctx, int parent, const char *top, trowel_stage **out,
                       int *fd)
{
    *out = NULL;
    *fd = -1;
#if defined(__linux__)
    if (trowel_is_temp_name(top, strlen(top))) /* a later sweep would take it for ours */
        return false;
    trowel_stage *st = trowel_mem_calloc(ctx, 1, sizeof *st);
    if (!st)
        return false;
    st->ctx = ctx;
    st->fd = -1;
    st->parent = fcntl(parent, F_DUPFD_CLOEXEC, 0);
    st->top = trowel_mem_strdup(ctx, top);
    if (st->top && st->parent >= 0) {
        trowel_sweep_stale_stages(st->parent);
        st->reserved = mkdirat(st->parent, st->top, 0777) == 0;
        if (st->reserved)
            announce(st, st->top, true);
        if (st->reserved && make_private(st) &&
            (*fd = fcntl(st->fd, F_DUPFD_CLOEXEC, 0)) >= 0) {
            *out = st;
            return true;
        }
    }
    trowel_stage_close(st);
    return false;
#else
    (void)ctx, (void)parent, (void)top;
    return false;
#endif
}

/* Removes the private folder if it holds nothing: true when it did. */
static bool remove_if_empty(trowel_stage *st)
{
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
    trowel_mem_free(st->ctx, st);
}
