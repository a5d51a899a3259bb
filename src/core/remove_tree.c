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
 * the walk keeps a window of descriptors on its way down (empty_folder).
 */
#define _GNU_SOURCE
#include "sink.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

const char *trowel_temp_name_rest(const char *name, size_t len, long *pid)
{
    static const char prefix[] = ".trowel-";
    size_t i = sizeof prefix - 1;
    if (len <= i || memcmp(name, prefix, i) != 0 || name[i] < '0' || name[i] > '9')
        return NULL;
    long value = 0; /* -1 once past 9 digits' worth */
    for (; i < len && name[i] >= '0' && name[i] <= '9'; i++)
        value = value < 0 || value > 99999999 ? -1 : value * 10 + (name[i] - '0');
    if (i == len || name[i] != '-')
        return NULL;
    if (pid)
        *pid = value < 0 ? 0 : value;
    return name + i + 1;
}

bool trowel_is_temp_name(const char *name, size_t len)
{
    return trowel_temp_name_rest(name, len, NULL) != NULL;
}

bool trowel_is_stage_name(const char *name)
{
    const char *p = trowel_temp_name_rest(name, strlen(name), NULL);
    if (!p || strncmp(p, "stage", 5) != 0 || p[5] < '0' || p[5] > '9')
        return false;
    for (p += 5; *p >= '0' && *p <= '9'; p++)
        ;
    return *p == '\0';
}

#if defined(__linux__)
enum { LISTING_BYTES = 2048, WINDOW = 24 };

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
 * be removed. The walk keeps the descriptors of the last WINDOW folders on
 * its way down; a folder found empty is removed through its parent's, and
 * the walk goes on in the parent. Only deeper than the window, when the
 * folder at its top empties, does it start again from the top. */
static int empty_folder(int top)
{
    int fds[WINDOW];
    char names[WINDOW][256]; /* names[i]: fds[i]'s name inside fds[i - 1] */
    char found_name[256];
    for (;;) {
        int depth = 0;
        bool cut = false; /* fds[0] is not the top: the way was deeper than the window */
        fds[0] = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fds[0] < 0)
            return -1;
        for (;;) {
            unsigned removed = 0, before;
            int found;
            do { /* a pass that removed files lists again (see pass_over) */
                before = removed;
                found = pass_over(fds[depth], found_name, &removed);
            } while (found == 0 && removed != before);
            int child = found == 1 ? openat(fds[depth], found_name,
                                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                                   : -1;
            if (found == 1 && child < 0 && errno == ENOENT)
                continue; /* gone meanwhile */
            if (found < 0 || (found == 1 && child < 0))
                break;
            if (found == 1) { /* down into it, the window moved if full */
                if (depth + 1 == WINDOW) {
                    close(fds[0]);
                    memmove(fds, fds + 1, (WINDOW - 1) * sizeof fds[0]);
                    memmove(names, names + 1, (WINDOW - 1) * sizeof names[0]);
                    depth--;
                    cut = true;
                }
                fds[++depth] = child;
                memcpy(names[depth], found_name, sizeof found_name);
                continue;
            }
            if (depth == 0) { /* fds[0] holds nothing */
                close(fds[0]);
                if (!cut)
                    return 0;
                depth = -1;
                break; /* from the top again, to remove it through its parent */
            }
            close(fds[depth]);
            int gone = unlinkat(fds[depth - 1], names[depth], AT_REMOVEDIR);
            depth--;
            if (gone != 0)
                break;
        }
        if (depth < 0)
            continue;
        for (int i = 0; i <= depth; i++)
            close(fds[i]);
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
