/*
 * Files related to the one being read: siblings (VOL.CNF's volumes, a
 * SCUMM index's data file) and files named by options. Formats never open
 * paths themselves; they ask here, and a program embedding the library can
 * serve the files itself through the context's open hook (libmspack's
 * mspack_system idea, for the one call formats need).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "module.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

void trowel_ctx_set_io_hooks(trowel_ctx *ctx, const trowel_io_hooks *hooks, void *user)
{
    ctx->io = hooks ? *hooks : (trowel_io_hooks){0};
    ctx->io_user = ctx->io.open || ctx->io.list ? user : NULL;
}

void trowel_ctx_set_open_hook(trowel_ctx *ctx, trowel_open_fn fn, void *user)
{
    trowel_ctx_set_io_hooks(ctx, &(trowel_io_hooks){.open = fn}, user);
}

/* Opens folder/name: 1 when it opened, 0 (error untouched) when there is
 * nothing under that name, -1 when something is there but cannot be read
 * as a file (a FIFO or a device named like a sibling, a folder, no
 * permission): that is said, naming both files, and never waited on. */
static int try_open(trowel_ctx *ctx, const char *folder, const char *name, trowel_input **out)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s%s", folder, name);
    if (n < 0 || (size_t)n >= sizeof path)
        return 0;
    trowel_error saved = ctx->last_error;
    if (trowel_input_open_file(ctx, path, out) == TROWEL_OK)
        return 1;
    struct stat st;
    if (lstat(path, &st) != 0 && errno == ENOENT) {
        ctx->last_error = saved;
        return 0;
    }
    char why[sizeof ctx->last_error.message];
    snprintf(why, sizeof why, "%s", ctx->last_error.message);
    trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "sibling %s: %s", name, why);
    ctx->siblings_refused++; /* the archive being opened is damaged, not just partial */
    return -1;
}

/* The entry of folder whose name equals name ignoring ASCII case. */
static bool find_any_case(const char *folder, const char *name, char *found, size_t cap)
{
    DIR *d = opendir(folder[0] ? folder : ".");
    if (!d)
        return false;
    bool hit = false;
    for (struct dirent *e; !hit && (e = readdir(d)) != NULL;) {
        if (strcasecmp(e->d_name, name) == 0 && strlen(e->d_name) < cap) {
            snprintf(found, cap, "%s", e->d_name);
            hit = true;
        }
    }
    closedir(d);
    return hit;
}

trowel_status trowel_open_beside(trowel_ctx *ctx, const char *base, const char *name,
                                 trowel_input **out)
{
    *out = NULL;
    if (!base)
        return trowel_input_open_file(ctx, name, out);
    if (strchr(name, '/'))
        return trowel_fail(ctx, TROWEL_ERR_UNSAFE_PATH, TROWEL_NO_OFFSET,
                           "sibling name %s is not a plain file name", name);
    char folder[4096];
    const char *slash = strrchr(base, '/');
    size_t len = slash ? (size_t)(slash - base) + 1 : 0;
    if (len >= sizeof folder)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "folder name too long");
    memcpy(folder, base, len);
    folder[len] = '\0';
    char other[256];
    int got = try_open(ctx, folder, name, out);
    if (got == 0 && find_any_case(folder, name, other, sizeof other))
        got = try_open(ctx, folder, other, out);
    if (got != 0)
        return got > 0 ? TROWEL_OK : ctx->last_error.status;
    return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "%s is not beside %s", name, base);
}

trowel_status trowel_open_related(trowel_ctx *ctx, const char *base, const char *name,
                                  trowel_input **out)
{
    *out = NULL;
    if (!ctx->io.open)
        return trowel_open_beside(ctx, base, name, out);
    trowel_ctx_clear_error(ctx);
    trowel_status s = ctx->io.open(ctx->io_user, ctx, base, name, out);
    if (s == TROWEL_OK && !*out)
        s = trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                        "the open hook gave no input for %s", name);
    if (s != TROWEL_OK && ctx->last_error.status == TROWEL_OK)
        trowel_fail(ctx, s, TROWEL_NO_OFFSET, "cannot open %s (open hook)", name);
    if (s != TROWEL_OK && *out) {
        trowel_input_close(*out);
        *out = NULL;
    }
    return s;
}

/* The folder of base joined with dir (dir alone without base) into path. */
static trowel_status beside_path(trowel_ctx *ctx, const char *base, const char *dir, char *path,
                                 size_t cap)
{
    const char *slash = base ? strrchr(base, '/') : NULL;
    int folder = slash ? (int)(slash - base) + 1 : 0;
    int n = snprintf(path, cap, "%.*s%s", folder, base ? base : "", dir);
    if (n < 0 || (size_t)n >= cap)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "folder name too long: %s",
                           dir);
    return TROWEL_OK;
}

/* Lists folder path on the file system: 0, or the errno of a folder that
 * cannot be opened. follow_links: a link to a folder lists as a folder;
 * without, as a file, and an entry that cannot be looked at (gone since
 * the folder was read) is left out. */
static int list_folder(const char *path, bool follow_links, trowel_list_each_fn each,
                       void *each_user)
{
    DIR *d = opendir(path[0] ? path : ".");
    if (!d)
        return errno;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        struct stat st;
        int looked = fstatat(dirfd(d), e->d_name, &st, follow_links ? 0 : AT_SYMLINK_NOFOLLOW);
        if (looked != 0 && !follow_links)
            continue;
        if (!each(each_user, e->d_name, looked == 0 && S_ISDIR(st.st_mode)))
            break;
    }
    closedir(d);
    return 0;
}

trowel_status trowel_list_beside(trowel_ctx *ctx, const char *base, const char *dir,
                                 trowel_list_each_fn each, void *each_user)
{
    char path[4096];
    trowel_status s = beside_path(ctx, base, dir, path, sizeof path);
    if (s != TROWEL_OK)
        return s;
    int err = list_folder(path, true, each, each_user);
    if (err)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot list folder %s: %s",
                           path, strerror(err));
    return TROWEL_OK;
}

trowel_status trowel_list_related(trowel_ctx *ctx, const char *base, const char *dir,
                                  trowel_list_each_fn each, void *each_user)
{
    if (!ctx->io.list)
        return trowel_list_beside(ctx, base, dir, each, each_user);
    trowel_ctx_clear_error(ctx);
    trowel_status s = ctx->io.list(ctx->io_user, ctx, base, dir, each, each_user);
    if (s != TROWEL_OK && ctx->last_error.status == TROWEL_OK)
        trowel_fail(ctx, s, TROWEL_NO_OFFSET, "cannot list folder %s (list hook)", dir);
    return s;
}

trowel_status trowel_list_related_no_links(trowel_ctx *ctx, const char *base, const char *dir,
                                           trowel_list_each_fn each, void *each_user)
{
    if (ctx->io.list)
        return trowel_list_related(ctx, base, dir, each, each_user);
    char path[4096];
    trowel_status s = beside_path(ctx, base, dir, path, sizeof path);
    if (s != TROWEL_OK)
        return s;
    int err = list_folder(path, false, each, each_user);
    if (err)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot open folder %s: %s",
                           path, strerror(err));
    return TROWEL_OK;
}

static bool stop_at_once(void *each_user, const char *name, bool is_folder)
{
    (void)each_user, (void)name, (void)is_folder;
    return false;
}

/* Through a list hook: dir joined to base's folder, a folder when the hook
 * lists it (a failure to list only means it is not one). */
static trowel_status locate_through_hook(trowel_ctx *ctx, const char *base, const char *dir,
                                         char *full, size_t cap, bool *is_folder)
{
    trowel_status s = beside_path(ctx, base, dir, full, cap);
    if (s != TROWEL_OK)
        return s;
    trowel_error before = ctx->last_error;
    *is_folder = trowel_list_related(ctx, base, dir, stop_at_once, NULL) == TROWEL_OK;
    ctx->last_error = before;
    return TROWEL_OK;
}

trowel_status trowel_locate_related(trowel_ctx *ctx, const char *base, const char *dir,
                                    char *full, size_t cap, bool *is_folder)
{
    *is_folder = false;
    if (ctx->io.list)
        return locate_through_hook(ctx, base, dir, full, cap, is_folder);
    char path[4096], real[PATH_MAX];
    trowel_status s = beside_path(ctx, base, dir, path, sizeof path);
    if (s != TROWEL_OK)
        return s;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (!ctx->io.open) /* else the open hook may serve it as a file */
            return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "%s: %s", path,
                               strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        if (!realpath(path, real))
            return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "%s: %s", path,
                               strerror(errno));
        *is_folder = true;
    }
    const char *name = *is_folder ? real : path;
    if (strlen(name) >= cap)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "folder name too long: %s", dir);
    memcpy(full, name, strlen(name) + 1);
    return TROWEL_OK;
}
