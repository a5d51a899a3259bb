/*
 * Removing a temporary by name: a file, or a staged folder
 * (".trowel-PID-stageN", trowel_outdir's) with all it holds; any other
 * folder only when it is empty. A signal handler calls this, so it uses
 * only system calls: no memory is allocated, no stdio, no locks.
 *
 * A staged folder is emptied through a descriptor opened on it, never by
 * paths: links inside are removed, never followed, and a folder renamed
 * into the tree while it is emptied is emptied where it is, never
 * somewhere a name now leads. Nesting costs no memory and has no limit:
 * the walk goes down to a folder holding no folder, empties and removes
 * it, and starts again from the top, with two descriptors at a time.
 */
#define _GNU_SOURCE
#include "sink.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

bool trowel_is_stage_name(const char *name)
{
    static const char prefix[] = ".trowel-";
    if (strncmp(name, prefix, sizeof prefix - 1) != 0)
        return false;
    const char *p = name + sizeof prefix - 1;
    if (*p < '0' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    if (strncmp(p, "-stage", 6) != 0 || p[6] < '0' || p[6] > '9')
        return false;
    for (p += 6; *p >= '0' && *p <= '9'; p++)
        ;
    return *p == '\0';
}

#if defined(__linux__)
enum { LISTING_BYTES = 2048 };

static bool is_child(const char *name)
{
    return !(name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')));
}

/* One pass over the folder fd from its start: removes every file in it;
 * stops at the first folder inside, whose name goes to sub. 1 when a
 * folder was found, 0 when the pass saw none, -1 on an error. *removed
 * counts what the pass removed. */
static int pass_over(int fd, char sub[256], unsigned *removed)
{
    _Alignas(struct dirent64) char listing[LISTING_BYTES];
    if (lseek(fd, 0, SEEK_SET) != 0)
        return -1;
    for (;;) {
        ssize_t n = getdents64(fd, listing, sizeof listing);
        if (n <= 0)
            return n < 0 ? -1 : 0;
        for (ssize_t at = 0; at < n;) {
            const struct dirent64 *e = (const struct dirent64 *)(void *)(listing + at);
            at += e->d_reclen;
            if (!is_child(e->d_name))
                continue;
            if (e->d_type != DT_DIR && unlinkat(fd, e->d_name, 0) == 0) {
                (*removed)++;
                continue;
            }
            if (e->d_type == DT_DIR || errno == EISDIR) {
                size_t len = strlen(e->d_name);
                if (len >= 256)
                    return -1;
                memcpy(sub, e->d_name, len + 1);
                return 1;
            }
            if (errno != ENOENT)
                return -1;
        }
    }
}

/* Empties the folder open as top: 0, or -1 when something in it could not
 * be removed. */
static int empty_folder(int top)
{
    char name[256];
    for (;;) {
        /* Down from the top to a folder that holds no folder. */
        int parent = -1, cur = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cur < 0)
            return -1;
        unsigned removed = 0, before;
        int found;
        do {
            before = removed;
            found = pass_over(cur, name, &removed);
            if (found == 1) {
                int child = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (parent >= 0)
                    close(parent);
                parent = cur;
                cur = child;
                if (cur < 0)
                    break;
            }
            /* A pass that removed files lists again: on some file systems
             * removing moves entries a listing has yet to reach. */
        } while (found == 1 || (found == 0 && removed != before));
        if (cur >= 0)
            close(cur);
        if (found < 0 || cur < 0) {
            if (parent >= 0)
                close(parent);
            return -1;
        }
        if (parent < 0)
            return 0; /* the top itself holds nothing */
        int gone = unlinkat(parent, name, AT_REMOVEDIR);
        close(parent);
        if (gone != 0)
            return -1;
    }
}
#endif

int trowel_remove_temp(int dirfd, const char *name)
{
    if (unlinkat(dirfd, name, 0) == 0)
        return 0;
#if defined(__linux__)
    if (errno != EISDIR)
        return -1;
    if (trowel_is_stage_name(name)) {
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return -1;
        int emptied = empty_folder(fd);
        close(fd);
        if (emptied != 0)
            return -1;
    }
    return unlinkat(dirfd, name, AT_REMOVEDIR);
#else
    return -1;
#endif
}

int trowel_remove_stage_at(int dirfd, const char *name, int fd)
{
#if defined(__linux__)
    if (empty_folder(fd) != 0)
        return -1;
    return unlinkat(dirfd, name, AT_REMOVEDIR);
#else
    (void)dirfd, (void)name, (void)fd;
    return -1;
#endif
}
