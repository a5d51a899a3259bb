/*
 * Removing a temporary by name, be it a file or a whole folder: a folder
 * being staged (trowel_outdir's fresh folders) is removed with everything
 * in it when a signal kills the run, or when the next run finds it stale.
 * A signal handler calls this, so it uses only system calls: no memory is
 * allocated, no stdio, no locks. Links inside are removed, never followed.
 * Folders nest at most REMOVE_DEPTH deep here; anything deeper (only a
 * hostile archive's names make it) is left, and so is its folder.
 */
#define _GNU_SOURCE
#include "core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

enum { REMOVE_DEPTH = 128, LISTING_BYTES = 1024 };

#if defined(__linux__)
/* Whether a record getdents64 gave names something of the folder's own. */
static bool is_child(const char *name)
{
    return !(name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')));
}

static int remove_folder(int dirfd, const char *name, unsigned depth);

/* Removes the child name of fd, a folder of type type (DT_UNKNOWN: not
 * known without a look, which unlinkat's EISDIR gives). */
static void remove_child(int fd, const char *name, unsigned char type, unsigned depth)
{
    if (type == DT_DIR || (unlinkat(fd, name, 0) != 0 && errno == EISDIR))
        (void)remove_folder(fd, name, depth + 1);
}

/* Empties the folder name inside dirfd, then removes it (0, or -1 with
 * errno). The listing goes on from where it was: on Linux's file systems,
 * removing entries already listed moves none of those still to come. */
static int remove_folder(int dirfd, const char *name, unsigned depth)
{
    int fd = depth < REMOVE_DEPTH
                 ? openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                 : -1;
    if (fd < 0)
        return -1;
    _Alignas(struct dirent64) char listing[LISTING_BYTES];
    for (;;) {
        ssize_t n = getdents64(fd, listing, sizeof listing);
        if (n <= 0)
            break;
        for (ssize_t at = 0; at < n;) {
            const struct dirent64 *e = (const struct dirent64 *)(void *)(listing + at);
            if (is_child(e->d_name))
                remove_child(fd, e->d_name, e->d_type, depth);
            at += e->d_reclen;
        }
    }
    close(fd);
    return unlinkat(dirfd, name, AT_REMOVEDIR);
}
#endif

int trowel_remove_temp(int dirfd, const char *name)
{
    if (unlinkat(dirfd, name, 0) == 0)
        return 0;
#if defined(__linux__)
    if (errno == EISDIR)
        return remove_folder(dirfd, name, 0);
#endif
    return -1;
}
