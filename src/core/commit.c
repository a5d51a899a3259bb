/*
 * Outputs that succeed or fail together: trowel_sinks_finish_all finishes
 * several file sinks as one (a rebuilt .str2_pc and its updated .asm_pc).
 *
 * 1. Prepare, touching no target: every sink's bytes are flushed, synced
 *    and closed under a short named temporary beside its target (an
 *    unnamed file is linked under one; a named one already has it); every
 *    target that may not be replaced is checked to be absent; every target
 *    that will be replaced gets a second name (a hard link, ".trowel-...")
 *    so it can be put back. Any failure here removes the temporaries and
 *    backups: every original is untouched.
 * 2. Commit: each temporary is renamed over (or linked as) its target, in
 *    order. If step k fails, steps 0..k-1 are undone (each backup renamed
 *    back over its target, each new name removed).
 * 3. The backups go.
 * The window that remains: a crash (kill -9, power loss) between the first
 * and the last rename of step 2 leaves the earlier targets new and the
 * later ones old, with the backups and temporaries left beside them under
 * ".trowel-PID-N" names (announced to the temp handler, so the CLI removes
 * them on SIGINT/SIGTERM, not on kill -9); and an undo that itself fails
 * (the folder vanished, the disk died) is reported and leaves the same.
 * Renames are atomic one by one, not across files: POSIX offers nothing
 * that replaces two names at once.
 */
#include "sink_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct staged {
    trowel_sink *s;
    char temp[40];   /* the new bytes, under a temporary name */
    char backup[40]; /* the original target, under a second name, or "" */
    bool placed;     /* step 2 done for this one */
} staged;

/* A second name for the target, to put it back from. */
static int link_target(trowel_sink *s, const char *name)
{
    struct trowel_sink_file *f = trowel_sink_file_state(s);
    return linkat(f->dirfd, f->final_name, f->dirfd, name, 0) == 0 ? 0 : errno;
}

/* Step 1 for one sink. */
static trowel_status prepare(staged *g, unsigned *serial)
{
    trowel_sink *s = g->s;
    struct trowel_sink_file *f = trowel_sink_file_state(s);
    trowel_status st = trowel_sink_flush(s);
    if (st == TROWEL_OK) /* a target that holds these bytes is replaced all the same */
        st = trowel_sink_file_stop_comparing(s);
    if (st != TROWEL_OK)
        return st;
    if (fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS)
        return trowel_sink_io_fail(s, "write", errno);
    if (f->unnamed) {
        trowel_sink_hold_lock(s);
        int err = trowel_sink_fresh_name(s, g->temp, sizeof g->temp, "g", serial,
                                         trowel_sink_link_unnamed);
        if (err)
            return trowel_sink_io_fail(s, "write", err);
    } else {
        memcpy(g->temp, f->temp_name, sizeof g->temp);
        f->temp_name[0] = '\0'; /* the group owns the name from now on */
    }
    int fd = f->fd;
    f->fd = -1;
    if (close(fd) != 0)
        return trowel_sink_io_fail(s, "close", errno);
    struct stat sb;
    bool exists = fstatat(f->dirfd, f->final_name, &sb, AT_SYMLINK_NOFOLLOW) == 0;
    if (exists && !(f->flags & TROWEL_SINK_OVERWRITE))
        return trowel_sink_io_fail(s, "create", EEXIST);
    if (exists && !S_ISREG(sb.st_mode))
        return trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET,
                           "cannot replace %s: it is not a regular file", s->name);
    if (exists) {
        int err = trowel_sink_fresh_name(s, g->backup, sizeof g->backup, "g", serial,
                                         link_target);
        if (err)
            return trowel_sink_io_fail(s, "keep a copy of", err);
    }
    return TROWEL_OK;
}

/* Step 2 for one sink: 0 or an errno value. */
static int place(staged *g)
{
    trowel_sink *s = g->s;
    struct trowel_sink_file *f = trowel_sink_file_state(s);
    if (s->ctx->fail_commit_at && --s->ctx->fail_commit_at == 0)
        return EIO; /* tests: this rename fails */
    if (g->backup[0])
        return renameat(f->dirfd, g->temp, f->dirfd, f->final_name) == 0 ? 0 : errno;
    /* A new name: linked, so one that appeared meanwhile is refused. */
    if (linkat(f->dirfd, g->temp, f->dirfd, f->final_name, 0) != 0)
        return errno;
    unlinkat(f->dirfd, g->temp, 0);
    return 0;
}

/* Undoes step 2 for one sink; false when the original could not be put back. */
static bool undo(staged *g)
{
    trowel_sink *s = g->s;
    struct trowel_sink_file *f = trowel_sink_file_state(s);
    if (g->backup[0]) {
        if (renameat(f->dirfd, g->backup, f->dirfd, f->final_name) != 0)
            return false;
        trowel_sink_announce(s, g->backup, false);
        g->backup[0] = '\0';
        return true;
    }
    return unlinkat(f->dirfd, f->final_name, 0) == 0;
}

/* Removes what is left of a sink's names and frees it. */
static void clean(staged *g)
{
    trowel_sink *s = g->s;
    struct trowel_sink_file *f = trowel_sink_file_state(s);
    if (g->temp[0]) {
        unlinkat(f->dirfd, g->temp, 0);
        trowel_sink_announce(s, g->temp, false);
    }
    if (g->backup[0]) {
        unlinkat(f->dirfd, g->backup, 0);
        trowel_sink_announce(s, g->backup, false);
    }
    trowel_sink_discard(s);
}

static trowel_status check_kinds(trowel_sink *const *sinks, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct trowel_sink_file *f = trowel_sink_file_state(sinks[i]);
        if (sinks[i]->failed) /* its own failure says more than its kind */
            return trowel_fail(sinks[i]->ctx, sinks[i]->failed, TROWEL_NO_OFFSET,
                               "%s: a write to it failed earlier", sinks[i]->name);
        if (!f || (f->fd < 0 && !f->comparing))
            return trowel_fail(sinks[i]->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "%s is not a file output: only files finish together",
                               sinks[i]->name);
        if (f->plain) /* its folder, being staged, is what appears whole */
            return trowel_fail(sinks[i]->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "%s is in a folder being staged: it finishes with the folder",
                               sinks[i]->name);
    }
    return TROWEL_OK;
}

trowel_status trowel_sinks_finish_all(trowel_sink *const *sinks, size_t n)
{
    if (n == 0)
        return TROWEL_OK;
    trowel_ctx *ctx = sinks[0]->ctx;
    staged *g = trowel_mem_calloc(ctx, n, sizeof *g);
    trowel_status st = g ? check_kinds(sinks, n) : ctx->last_error.status;
    if (!g) {
        for (size_t i = 0; i < n; i++)
            trowel_sink_discard(sinks[i]);
        return st;
    }
    unsigned serial = 0;
    for (size_t i = 0; i < n; i++)
        g[i].s = sinks[i];
    for (size_t i = 0; i < n && st == TROWEL_OK; i++)
        st = prepare(&g[i], &serial);
    size_t done = 0;
    for (; st == TROWEL_OK && done < n; done++) {
        int err = place(&g[done]);
        if (err) {
            st = trowel_sink_io_fail(g[done].s, "create", err);
            break;
        }
        trowel_sink_announce(g[done].s, g[done].temp, false); /* renamed or unlinked by place */
        g[done].temp[0] = '\0';
        g[done].placed = true;
    }
    if (st != TROWEL_OK) {
        trowel_error why = ctx->last_error;
        bool undone = true;
        for (size_t i = done; i-- > 0;)
            undone &= undo(&g[i]);
        if (!undone)
            trowel_fail(ctx, why.status, TROWEL_NO_OFFSET,
                        "%s; putting back the outputs already replaced failed too: their "
                        "originals are beside them as .trowel-%ld-g* files",
                        why.message, (long)getpid());
        for (size_t i = 0; i < n; i++)
            if (!undone && g[i].placed) {
                /* keep the original copy for the user: no longer ours to
                 * remove, not even by a signal handler */
                trowel_sink_announce(g[i].s, g[i].backup, false);
                g[i].backup[0] = '\0';
            }
    }
    for (size_t i = 0; i < n; i++)
        clean(&g[i]);
    trowel_mem_free(ctx, g);
    return st;
}
