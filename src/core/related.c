/*
 * Files related to the one being read: siblings (VOL.CNF's volumes, a
 * SCUMM index's data file) and files named by options. Formats never open
 * paths themselves; they ask here, and a program embedding the library can
 * serve the files itself through the context's open hook (libmspack's
 * mspack_system idea, for the one call formats need).
 */
#include "module.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

void trowel_ctx_set_open_hook(trowel_ctx *ctx, trowel_open_fn fn, void *user)
{
    ctx->open_fn = fn;
    ctx->open_user = fn ? user : NULL;
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
    if (!ctx->open_fn)
        return trowel_open_beside(ctx, base, name, out);
    trowel_ctx_clear_error(ctx);
    trowel_status s = ctx->open_fn(ctx->open_user, ctx, base, name, out);
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
