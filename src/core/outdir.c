/*
 * Safe extraction paths. Archive names come from untrusted files, so each is
 * normalised and checked (no absolute paths, drive letters, "..", control
 * characters), and then walked one component at a time from an open handle
 * on the output folder with O_NOFOLLOW: a symbolic link planted inside the
 * folder (or by an earlier entry) can never redirect a write outside it.
 * Folders it makes and leaves empty (every entry in them failed) are removed
 * when it closes, so a failed extraction leaves nothing behind.
 *
 * Many small files: what holds for a whole folder (its stale temporaries
 * cleared, whether this run made it, how its file system reports write
 * errors) is found out once, when the folder is first opened, and handed
 * to each sink in its flags; the last sub-folder walked to stays open, so
 * the next entry in the same folder costs a dup instead of a walk. (A
 * folder someone else renames or swaps for a link while it is cached keeps
 * receiving the entries meant for it, where it now is, as it would between
 * one entry's walk and its write: the walk's guarantee is that no link
 * inside the output redirects a write, and that still holds.)
 *
 * A fresh folder, staged (TROWEL_OUTDIR_STAGED, stage.c): when the folder
 * does not exist yet, it is written under a private name and put in place
 * whole by trowel_outdir_finish; nobody sees its files before then, so
 * each is made under its final name at once (TROWEL_SINK_PRIVATE_FOLDER).
 */
#include "sink.h"
#include "bytes.h"
#include "stage.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct trowel_outdir {
    trowel_ctx *ctx;
    int fd;
    unsigned flags;
    char *path;
    size_t made_from;  /* path[0, made_from) existed; the folders below it were made */
    size_t made_len;   /* ... up to path[0, made_len): the folder itself, or its parent
                        * when it is staged (the stage makes the folder) */
    char **made;       /* sub-folders made inside, relative to fd, in order made */
    size_t made_count, made_cap;
    /* Every name handed a sink, normalised (open addressing): a second
     * entry under a name already given is refused, never let replace the
     * first (nor miscounted as a file that existed before the run). */
    struct given { char *name; unsigned archive; } *given;
    size_t given_count, given_cap;
    unsigned archive; /* trowel_outdir_begin_archive's count */
    unsigned facts;   /* trowel_sink_folder_facts of fd, and NEW_FOLDER */
    int sub_fd;       /* the last sub-folder walked to, or -1 */
    char *sub_rel;    /* its path relative to fd */
    unsigned sub_facts;
    trowel_stage *stage; /* TROWEL_OUTDIR_STAGED, the folder being staged */
    bool finished;       /* trowel_outdir_finish ran */
};

static bool is_drive_prefix(const char *s)
{
    return ((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')) && s[1] == ':';
}

trowel_status trowel_path_normalize(const char *name, char *out, size_t cap)
{
    if (cap == 0)
        return TROWEL_ERR_UNSAFE_PATH;
    out[0] = '\0';
    if (name[0] == '/' || name[0] == '\\' || is_drive_prefix(name))
        return TROWEL_ERR_UNSAFE_PATH;
    size_t n = 0;
    const char *p = name;
    while (*p) {
        /* One component: up to the next separator of either kind. */
        const char *start = p;
        while (*p && *p != '/' && *p != '\\') {
            if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == ':')
                return TROWEL_ERR_UNSAFE_PATH;
            p++;
        }
        size_t len = (size_t)(p - start);
        if (*p)
            p++;
        if (len == 0 || (len == 1 && start[0] == '.'))
            continue;
        if (len == 2 && start[0] == '.' && start[1] == '.')
            return TROWEL_ERR_UNSAFE_PATH;
        if (n + (n ? 1 : 0) + len + 1 > cap)
            return TROWEL_ERR_UNSAFE_PATH;
        if (n)
            out[n++] = '/';
        memcpy(out + n, start, len);
        n += len;
        out[n] = '\0';
    }
    return n ? TROWEL_OK : TROWEL_ERR_UNSAFE_PATH;
}

/* mkdir -p: the user named this folder, so its parents may be made too.
 * *made_from is where the first folder made begins in path (strlen(path)
 * when none was made). */
static int make_folders(const char *path, size_t *made_from)
{
    *made_from = strlen(path);
    bool made_any = false;
    size_t component = 0; /* where the component being made begins */
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) == 0) {
            if (!made_any)
                *made_from = component;
            made_any = true;
        } else if (errno != EEXIST) {
            return -1;
        }
        buf[i] = c;
        component = i + 1;
    }
    return 0;
}

/* Removes the folder path[0, n) and its parents, deepest first, down to
 * the first that existed before (path[0, made_from)), while they are
 * empty: rmdir refuses any that is not, so nothing written is touched. */
static void remove_made_parents(const char *path, size_t n, size_t made_from)
{
    char buf[4096];
    while (n > made_from && path[n - 1] == '/') /* "out/": the folder is "out" */
        n--;
    if (made_from >= n || n >= sizeof buf)
        return;
    memcpy(buf, path, n);
    buf[n] = '\0';
    while (n > made_from) {
        if (rmdir(buf) != 0)
            return;
        while (n > made_from && buf[n - 1] != '/')
            n--;
        while (n > made_from && buf[n - 1] == '/')
            n--;
        buf[n] = '\0';
    }
}

/* The folder d->path, made (with its parents) if missing, opened. */
static trowel_status open_in_place(trowel_outdir *d)
{
    trowel_ctx *ctx = d->ctx;
    const char *path = d->path;
    if (make_folders(path, &d->made_from) != 0)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot create folder %s: %s",
                           path, strerror(errno));
    d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d->fd < 0)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot open folder %s: %s", path,
                           strerror(errno));
    d->facts = trowel_sink_folder_facts(ctx, d->fd);
    if (d->made_from < strlen(path)) /* mkdir -p made at least the folder itself */
        d->facts |= TROWEL_SINK_NEW_FOLDER;
    return TROWEL_OK;
}

/* Splits path (trailing slashes dropped) into the folder that holds its
 * last component (into parent: "." or "/" when there is none) and the
 * component (into last): false when that is "." or "..", or does not fit.
 * *parent_len is the parent's length in path (0 for "."). */
static bool split_last(const char *path, char *parent, size_t cap, size_t *parent_len,
                       char *last, size_t last_cap)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t at = n;
    while (at > 0 && path[at - 1] != '/')
        at--;
    size_t len = n - at;
    if (len == 0 || len >= last_cap || at + 2 > cap || (len == 1 && path[at] == '.') ||
        (len == 2 && path[at] == '.' && path[at + 1] == '.'))
        return false;
    memcpy(last, path + at, len);
    last[len] = '\0';
    size_t p = at;
    while (p > 1 && path[p - 1] == '/') /* "a//b": the folder is "a" */
        p--;
    if (p == 0)
        memcpy(parent, ".", 2);
    else
        memcpy(parent, path, p);
    parent[p ? p : 1] = '\0';
    *parent_len = p;
    return true;
}

/* Stages d->path when it does not exist, its parents made in place: false
 * when it exists or cannot be staged. When it exists, the stale stages
 * beside it go (kill -9 leaves the folder, empty, with the stage). */
static bool open_staged(trowel_outdir *d)
{
    char parent[4096], top[256];
    size_t parent_len, made_from;
    struct stat sb;
    if (!split_last(d->path, parent, sizeof parent, &parent_len, top, sizeof top))
        return false;
    bool exists = fstatat(AT_FDCWD, d->path, &sb, AT_SYMLINK_NOFOLLOW) == 0;
    if ((!exists && errno != ENOENT) || (!exists && make_folders(parent, &made_from) != 0))
        return false;
    int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool staged = false;
    if (pfd >= 0 && exists)
        trowel_sweep_stale_stages(pfd);
    else if (pfd >= 0)
        staged = trowel_stage_open(d->ctx, pfd, top, &d->stage, &d->fd);
    if (pfd >= 0)
        close(pfd);
    if (staged) {
        d->made_from = made_from < strlen(parent) ? made_from : parent_len;
        d->made_len = parent_len;
    } else if (!exists) { /* parents made for nothing go; the folder's own make says why */
        remove_made_parents(parent, strlen(parent), made_from);
    }
    return staged;
}

trowel_status trowel_outdir_open(trowel_ctx *ctx, const char *path, unsigned flags,
                                 trowel_outdir **out)
{
    *out = NULL;
    trowel_outdir *d = trowel_mem_calloc(ctx, 1, sizeof *d);
    char *p = d ? trowel_mem_strdup(ctx, path) : NULL;
    if (!p) {
        trowel_mem_free(ctx, d);
        return ctx->last_error.status;
    }
    d->ctx = ctx;
    d->fd = -1;
    d->flags = flags & TROWEL_SINK_OVERWRITE; /* the folder's facts are its own to add */
    d->path = p;
    d->sub_fd = -1;
    if ((flags & TROWEL_OUTDIR_STAGED) && open_staged(d)) {
        d->facts = TROWEL_SINK_SWEPT | TROWEL_SINK_NEW_FOLDER | TROWEL_SINK_PRIVATE_FOLDER |
                   trowel_sink_eager_facts(d->fd);
    } else {
        d->made_len = strlen(path);
        trowel_status st = open_in_place(d);
        if (st != TROWEL_OK) {
            if (d->fd >= 0)
                close(d->fd);
            trowel_mem_free(ctx, p);
            trowel_mem_free(ctx, d);
            return st;
        }
    }
    *out = d;
    return TROWEL_OK;
}

/* Removes, deepest first, the sub-folders this outdir made that are still
 * empty. */
static void remove_empty_made_subfolders(trowel_outdir *d)
{
    if (d->sub_fd >= 0)
        close(d->sub_fd);
    d->sub_fd = -1;
    for (size_t i = d->made_count; i-- > 0;)
        unlinkat(d->fd, d->made[i], AT_REMOVEDIR);
}

trowel_status trowel_outdir_finish(trowel_outdir *d)
{
    if (!d || !d->stage || d->finished)
        return TROWEL_OK;
    d->finished = true;
    remove_empty_made_subfolders(d);
    return trowel_stage_publish(d->stage, d->path);
}

void trowel_outdir_close(trowel_outdir *d)
{
    if (!d)
        return;
    remove_empty_made_subfolders(d);
    trowel_stage_close(d->stage); /* unpublished: removed whole */
    remove_made_parents(d->path, d->made_len, d->made_from); /* while empty */
    trowel_mem_free(d->ctx, d->sub_rel);
    close(d->fd);
    for (size_t i = 0; i < d->given_cap; i++)
        trowel_mem_free(d->ctx, d->given[i].name);
    trowel_mem_free(d->ctx, d->given);
    for (size_t i = 0; i < d->made_count; i++)
        trowel_mem_free(d->ctx, d->made[i]);
    trowel_mem_free(d->ctx, d->made);
    trowel_mem_free(d->ctx, d->path);
    trowel_mem_free(d->ctx, d);
}

/* Remembers the sub-folder rel (relative to the outdir) as made by us. A
 * folder that cannot be remembered is merely left when empty. */
static void remember_made(trowel_outdir *d, const char *rel)
{
    if (d->made_count == d->made_cap) {
        size_t cap = d->made_cap ? d->made_cap * 2 : 8;
        char **m = trowel_mem_realloc(d->ctx, d->made, cap * sizeof *m);
        if (!m)
            return;
        d->made = m;
        d->made_cap = cap;
    }
    char *copy = trowel_mem_strdup(d->ctx, rel);
    if (copy)
        d->made[d->made_count++] = copy;
}

void trowel_outdir_begin_archive(trowel_outdir *d)
{
    d->archive++;
}

static size_t name_hash(const char *s)
{
    size_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The slot of rel in the table: where it is, or the empty one where it
 * would go. The table is never full (it grows at half). */
static struct given *given_slot(struct given *table, size_t cap, const char *rel)
{
    for (size_t i = name_hash(rel) & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!table[i].name || strcmp(table[i].name, rel) == 0)
            return &table[i];
}

static bool grow_given(trowel_outdir *d)
{
    size_t cap = d->given_cap ? d->given_cap * 2 : 16;
    struct given *t = trowel_mem_calloc(d->ctx, cap, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < d->given_cap; i++)
        if (d->given[i].name)
            *given_slot(t, cap, d->given[i].name) = d->given[i];
    trowel_mem_free(d->ctx, d->given);
    d->given = t;
    d->given_cap = cap;
    return true;
}

/* Refuses (TROWEL_ERR_CORRUPT) a name given a sink before in this run. */
static trowel_status check_name(trowel_outdir *d, const char *rel, const char *display)
{
    if (d->given_cap) {
        struct given *g = given_slot(d->given, d->given_cap, rel);
        if (g->name && g->archive == d->archive)
            return trowel_fail(d->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                               "duplicate name in the archive: an earlier entry has it (%s); "
                               "this one is not written", display);
        if (g->name)
            return trowel_fail(d->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                               "an entry of an earlier archive of this run has this name (%s); "
                               "this one does not replace it", display);
    }
    return TROWEL_OK;
}

/* Records rel as given a sink. Only a sink that opened counts: a name
 * refused because the file exists stays free, so a later archive's entry
 * of that name is refused for the same reason, not as a clash. */
static trowel_status record_name(trowel_outdir *d, const char *rel)
{
    if ((d->given_count + 1) * 2 > d->given_cap && !grow_given(d))
        return d->ctx->last_error.status;
    char *copy = trowel_mem_strdup(d->ctx, rel);
    if (!copy)
        return d->ctx->last_error.status;
    struct given *g = given_slot(d->given, d->given_cap, rel);
    g->name = copy;
    g->archive = d->archive;
    d->given_count++;
    return TROWEL_OK;
}

/* Why a folder could not be made or passed through at component: what is
 * in its way, from a look that does not follow links (O_NOFOLLOW and
 * O_DIRECTORY together give ENOTDIR for a link, not ELOOP). */
static trowel_status refuse_folder(trowel_ctx *ctx, int parent, const char *component, int err,
                                   const char *display)
{
    struct stat st;
    bool there = fstatat(parent, component, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (there && S_ISLNK(st.st_mode))
        return trowel_fail(ctx, TROWEL_ERR_UNSAFE_PATH, TROWEL_NO_OFFSET,
                           "cannot make folder for %s: a symbolic link is in the way (%s)",
                           display, component);
    if (there && !S_ISDIR(st.st_mode))
        return trowel_fail(ctx, TROWEL_ERR_EXISTS, TROWEL_NO_OFFSET,
                           "cannot make folder for %s: a file is in the way (%s)", display,
                           component);
    return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot make folder for %s: %s",
                       display, strerror(err));
}

/* Opens (making it if needed: *made says so) the sub-folder component
 * inside parent, refusing to pass through a symbolic link or a non-folder. */
static int open_child_dir(int parent, const char *component, bool *made)
{
    *made = mkdirat(parent, component, 0777) == 0;
    if (!*made && errno != EEXIST)
        return -1;
    return openat(parent, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static trowel_status open_sink(trowel_outdir *d, char *rel, const char *display, trowel_sink **out);
/* Walks (making what is missing) to the folder of rel, whose last '/' is
 * at last_slash, and makes it the outdir's cached sub-folder. */
static trowel_status walk_to_folder(trowel_outdir *d, char *rel, char *last_slash,
                                    const char *display)
{
    trowel_ctx *ctx = d->ctx;
    int fd = dup(d->fd);
    if (fd < 0)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "dup: %s", strerror(errno));
    bool made = false;
    char *component = rel;
    for (char *slash; (slash = strchr(component, '/')) != NULL; component = slash + 1) {
        *slash = '\0';
        int child = open_child_dir(fd, component, &made);
        trowel_status refused = child < 0 ? refuse_folder(ctx, fd, component, errno, display)
                                          : TROWEL_OK;
        close(fd);
        if (made)
            remember_made(d, rel); /* rel ends at this component for now */
        *slash = '/';
        if (child < 0)
            return refused;
        fd = child;
    }
    *last_slash = '\0';
    char *copy = trowel_mem_strdup(ctx, rel);
    *last_slash = '/';
    if (!copy) {
        close(fd);
        return ctx->last_error.status;
    }
    if (d->sub_fd >= 0)
        close(d->sub_fd);
    trowel_mem_free(ctx, d->sub_rel);
    d->sub_fd = fd;
    d->sub_rel = copy;
    /* A staged folder's sub-folders are as new and private as it is. */
    d->sub_facts = (d->facts & TROWEL_SINK_PRIVATE_FOLDER)
                       ? d->facts
                       : trowel_sink_folder_facts(ctx, fd) | (made ? TROWEL_SINK_NEW_FOLDER : 0u);
    return TROWEL_OK;
}

/* Whether a component of rel (a normalised name), folder or file, has one
 * of trowel's temporary names, which a later run would take for a stale
 * temporary and remove. */
static bool names_a_temporary(const char *rel)
{
    for (const char *p = strstr(rel, ".trowel-"); p; p = strstr(p + 1, ".trowel-"))
        if ((p == rel || p[-1] == '/') && trowel_is_temp_name(p, strcspn(p, "/")))
            return true;
    return false;
}

/* "folder/rel" into out (cap bytes, cut to fit as snprintf would): made for
 * every file written, where snprintf's cost shows. */
static void join_display(char *out, size_t cap, const char *folder, const char *rel)
{
    size_t n = trowel_text_put_cut(out, cap, 0, folder);
    n = trowel_text_put_cut(out, cap, n, "/");
    out[trowel_text_put_cut(out, cap, n, rel)] = '\0';
}

trowel_status trowel_outdir_create(trowel_outdir *d, const char *entry_name, trowel_sink **out)
{
    trowel_ctx *ctx = d->ctx;
    *out = NULL;
    if (d->finished) /* a staged folder is published: its files are all there */
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "%s is finished: no more files go into it", d->path);
    char rel[4096];
    if (trowel_path_normalize(entry_name, rel, sizeof rel) != TROWEL_OK)
        return trowel_fail(ctx, TROWEL_ERR_UNSAFE_PATH, TROWEL_NO_OFFSET,
                           "refusing unsafe entry name '%s' (absolute, drive, '..', or control "
                           "characters)", entry_name);
    if (names_a_temporary(rel))
        return trowel_fail(ctx, TROWEL_ERR_UNSAFE_PATH, TROWEL_NO_OFFSET,
                           "refusing entry name '%s': trowel names its temporaries so, and "
                           "removes them when their run is gone", entry_name);
    char display[4200];
    join_display(display, sizeof display, d->path, rel);
    trowel_status st = check_name(d, rel, display);
    if (st == TROWEL_OK)
        st = open_sink(d, rel, display, out);
    if (st == TROWEL_OK && (st = record_name(d, rel)) != TROWEL_OK) {
        trowel_sink_discard(*out);
        *out = NULL;
    }
    return st;
}

/* The sink for rel (a normalised name) under d, making folders on the way
 * (the last sub-folder walked is kept open for the next entry). */
static trowel_status open_sink(trowel_outdir *d, char *rel, const char *display, trowel_sink **out)
{
    trowel_ctx *ctx = d->ctx;
    char *last_slash = strrchr(rel, '/');
    if (!last_slash) /* straight into the folder: no handle of its own */
        return trowel_sink_open_file_in(ctx, d->fd, rel, display, d->flags | d->facts, out);
    *last_slash = '\0';
    bool cached = d->sub_fd >= 0 && strcmp(d->sub_rel, rel) == 0;
    *last_slash = '/';
    if (!cached) {
        trowel_status walked = walk_to_folder(d, rel, last_slash, display);
        if (walked != TROWEL_OK)
            return walked;
    }
    int fd = dup(d->sub_fd);
    if (fd < 0)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "dup: %s", strerror(errno));
    return trowel_sink_open_file_at(ctx, fd, last_slash + 1, display, d->flags | d->sub_facts,
                                    out);
}
