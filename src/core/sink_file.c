/*
 * File sinks. A file sink never shows a partial file under its final name.
 * On Linux it writes to an unnamed file (O_TMPFILE) in the target's folder
 * and links it into place when the caller finishes it: an error, a signal or
 * even kill -9 leaves nothing behind, and the target's name may be as long
 * as the file system allows. Where the file system has no unnamed files, it
 * writes to a short named temporary beside the target (created with O_EXCL,
 * never following links), which the context's temp handler hears about so a
 * program can remove it when a signal kills it; one left by kill -9 is
 * removed by the next run that writes into that folder (see "stale
 * temporaries"). Replacing a file (TROWEL_SINK_OVERWRITE) is described at
 * place_unnamed and commit_named; a target that already holds exactly the
 * bytes being written is left as it is ("identical files"). In a private
 * folder (TROWEL_SINK_PRIVATE_FOLDER: one trowel_outdir stages, which
 * nobody sees until it is whole) the output is made under its final name
 * at once, as a plain file, and removed if anything fails.
 */
/* O_TMPFILE, AT_EMPTY_PATH and AT_SYMLINK_FOLLOW are Linux extensions. */
#define _GNU_SOURCE
#include "sink_file.h"
#include "input.h"

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

static const struct trowel_sink_impl file_impl;

struct trowel_sink_file *trowel_sink_file_state(trowel_sink *s)
{
    return s->impl == &file_impl ? s->state : NULL;
}

static struct trowel_sink_file *file_of(const trowel_sink *s)
{
    return s->state;
}

void trowel_sink_announce(trowel_sink *s, const char *name, bool live)
{
    if (s->ctx->temp_fn)
        s->ctx->temp_fn(s->ctx->temp_user, file_of(s)->dirfd, name, live);
}

static void announce_temp(trowel_sink *s, bool live)
{
    trowel_sink_announce(s, file_of(s)->temp_name, live);
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
    struct trowel_sink_file *f = file_of(s);
    return trowel_sink_fresh_name(s, f->temp_name, sizeof f->temp_name, "", &serial, make);
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
    hold_lock(file_of(s)->fd);
}

static int create_named_temp(trowel_sink *s, const char *name)
{
    struct trowel_sink_file *f = file_of(s);
    f->fd = openat(f->dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (f->fd < 0)
        return errno;
    hold_lock(f->fd);
    return 0;
}

/* ------------------------------------------------ stale temporaries
 * A run killed with kill -9 (or a power loss) on a file system without
 * unnamed files leaves its ".trowel-PID-..." temporaries behind, and one
 * killed while it staged a fresh output folder leaves that folder
 * (".trowel-PID-stageN", trowel_outdir; swept by the next run staging
 * beside it, trowel_sweep_stale_stages): no handler ran to remove them.
 * The next sink opened in that folder removes those whose process is
 * gone: no process with that pid exists here (kill with signal 0 says
 * ESRCH), and nobody holds the file's lock (a live writer always does: a
 * pid from another pid namespace sharing the folder looks dead from here,
 * its lock does not). Each folder is swept once per context. */

/* The pid in ".trowel-PID-rest", or 0 when name is not such a name. */
static long temp_name_pid(const char *name)
{
    long pid = 0;
    return trowel_temp_name_rest(name, strlen(name), &pid) ? pid : 0;
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

/* Removes the staged folder name from dirfd if nobody holds it locked: it
 * is emptied through the descriptor locked, so a folder renamed to its
 * name meanwhile is never emptied, and only an empty one is removed. */
static void remove_stage_if_unlocked(int dirfd, const char *name)
{
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        (void)trowel_remove_stage_at(dirfd, name, fd);
    close(fd);
}

/* Calls remove(dirfd, name) for each name in dirfd of the form
 * ".trowel-PID-..." whose process is gone, and that stages_only allows. */
static void remove_stale(int dirfd, bool stages_only, void (*remove)(int, const char *))
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        long pid = temp_name_pid(e->d_name);
        if (pid > 0 && (!stages_only || trowel_is_stage_name(e->d_name)) && pid_is_gone(pid))
            remove(dirfd, e->d_name);
    }
    closedir(d);
}

void trowel_sweep_stale_stages(int dirfd)
{
    remove_stale(dirfd, true, remove_stage_if_unlocked);
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
    if (first_visit(ctx, dirfd))
        remove_stale(dirfd, false, remove_if_unlocked);
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

unsigned trowel_sink_eager_facts(int dirfd)
{
    return reports_errors_eagerly(dirfd) ? TROWEL_SINK_EAGER_ERRORS : 0u;
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
 * file system has none, or when /proc is missing: /proc is the one way to
 * link it that every kernel allows, so without it the file might not get
 * its name. */
static bool open_unnamed(trowel_sink *s)
{
#if defined(__linux__) && defined(O_TMPFILE)
    struct trowel_sink_file *f = file_of(s);
    if (s->ctx->named_temps_only || !proc_fd_usable(s->ctx))
        return false;
    f->fd = openat(f->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
    f->unnamed = f->fd >= 0;
    return f->unnamed;
#else
    (void)s;
    return false;
#endif
}

static trowel_status open_output(trowel_sink *s);

/* The output under its final name, in a private folder: one system call
 * where an unnamed file costs two and its link the dearest of them. */
static trowel_status open_plain(trowel_sink *s)
{
    struct trowel_sink_file *f = file_of(s);
    f->fd = openat(f->dirfd, f->final_name,
                   O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
    if (f->fd >= 0) {
        f->plain = true;
        return TROWEL_OK;
    }
    if (errno == EEXIST && (f->flags & TROWEL_SINK_OVERWRITE)) {
        /* Two names one file on a case-blind file system, and --force:
         * the later replaces the earlier, as outside a private folder. */
        f->flags &= ~(unsigned)TROWEL_SINK_PRIVATE_FOLDER;
        return open_output(s);
    }
    return trowel_sink_io_fail(s, "create", errno);
}

/* The file the output is written to: a plain one in a private folder, an
 * unnamed one, or when that fails a named temporary, whose error
 * (permissions, a full disk) is then the one reported. */
static trowel_status open_output(trowel_sink *s)
{
    if (file_of(s)->flags & TROWEL_SINK_PRIVATE_FOLDER)
        return open_plain(s);
    if (open_unnamed(s))
        return TROWEL_OK;
    int err = with_fresh_temp(s, create_named_temp);
    return err ? trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot create %s: %s",
                             s->name, strerror(err))
               : TROWEL_OK;
}

/* ------------------------------------------------ identical files
 * Replacing a file costs a new inode and the old one's release, which on
 * ext4 is several times the cost of the bytes when the files are small
 * (--force over an earlier extraction of thousands of scenes). A target
 * that already holds exactly the bytes being written is therefore left as
 * it is, as `install -C` does: its bytes are what the replacement would
 * hold, and its mode, owner, links and times stay. The sink opens the
 * target read-only at the start and compares each write with it, writing
 * nothing; the first difference (or a longer or shorter target) makes the
 * output file after all, with the matched bytes copied over from the
 * target, and the replacement then goes on as before. Only a regular file
 * the process can read is compared (it is looked at before it is opened,
 * so a device under the name is not opened); anything else is replaced as
 * before. Positional writes, copies in the kernel and outputs that finish
 * together make the output file first (trowel_sink_file_stop_comparing).
 *
 * The target is someone else's file and may change while it is compared,
 * and once compared bytes are dropped, it is their only copy. So the sink
 * keeps a running hash of the matched bytes and checks it against what is
 * there when it relies on the target: the copy of the matched bytes in the
 * output (its own file, read back) after a difference, and the target
 * itself, read again, before leaving it as the output, whose name must
 * then still lead to that file (else, another file renamed over it, the
 * output is made from the open one). A mismatch fails the sink ("changed
 * while it was compared"). Time stamps and link counts are not trusted:
 * they move for harmless reasons (chmod, a new link) and, on some file
 * systems, too coarsely to see a write. */

/* A running 64-bit hash of bytes given in pieces of any size: a multiply,
 * rotate, multiply mix over 8-byte words, the tail of a piece waiting for
 * the next. For telling a changed file from an unchanged one, not for
 * adversaries. */
static uint64_t word_at(const uint8_t *p) /* host order: the hash never leaves the process */
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Reads exactly n bytes of fd at off into buf: false on an error or an
 * end before them. */
static bool pread_full(int fd, uint8_t *buf, size_t n, uint64_t off)
{
    return trowel_pread_full(fd, buf, n, off, NULL) == 0;
}

static void mix_word(uint64_t *h, uint64_t w)
{
    uint64_t x = *h ^ (w * 0x9E3779B97F4A7C15u);
    *h = (x << 29 | x >> 35) * 0xBF58476D1CE4E5B9u;
}

static void hash_add(struct trowel_sink_hash *m, const uint8_t *p, size_t n)
{
    m->len += n;
    while (n > 0 && m->tail_len > 0) {
        m->tail[m->tail_len++] = *p++;
        n--;
        if (m->tail_len == 8) {
            mix_word(&m->h, word_at(m->tail));
            m->tail_len = 0;
        }
    }
    for (; n >= 8; p += 8, n -= 8)
        mix_word(&m->h, word_at(p));
    memcpy(m->tail, p, n);
    m->tail_len += (unsigned)n;
}

static uint64_t hash_value(const struct trowel_sink_hash *m)
{
    uint8_t last[8] = {0};
    memcpy(last, m->tail, m->tail_len);
    uint64_t h = m->h;
    mix_word(&h, word_at(last));
    mix_word(&h, m->len);
    return h ^ h >> 31;
}

/* Whether fd's bytes [0, n) hash to want (false on a short read). */
static bool fd_hashes_to(int fd, uint64_t n, uint64_t want)
{
    struct trowel_sink_hash m = {0};
    uint8_t chunk[16384];
    for (uint64_t done = 0; done < n;) {
        size_t k = n - done < sizeof chunk ? (size_t)(n - done) : sizeof chunk;
        if (!pread_full(fd, chunk, k, done))
            return false;
        hash_add(&m, chunk, k);
        done += k;
    }
    return hash_value(&m) == want;
}

/* Opens the target for comparison: true when it is a readable regular file. */
static bool start_comparing(trowel_sink *s)
{
    struct trowel_sink_file *f = file_of(s);
    struct stat st;
    if (fstatat(f->dirfd, f->final_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
        return false;
    int fd = openat(f->dirfd, f->final_name,
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return false;
    f->old_fd = fd;
    f->old_size = (uint64_t)st.st_size;
    f->matched = 0;
    memset(&f->matched_hash, 0, sizeof f->matched_hash);
    f->comparing = true;
    return true;
}

static trowel_status target_changed(trowel_sink *s)
{
    return trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET,
                       "cannot replace %s: it changed while it was compared with the output "
                       "(run again)",
                       s->name);
}

/* Whether the target's next n bytes (after the matched ones) are data. The
 * size seen at the start only spares reads that cannot match. */
static bool target_continues_with(struct trowel_sink_file *f, const uint8_t *data, size_t n)
{
    if (n > f->old_size - f->matched)
        return false;
    uint8_t chunk[16384];
    for (size_t done = 0; done < n;) {
        size_t k = n - done < sizeof chunk ? n - done : sizeof chunk;
        if (!pread_full(f->old_fd, chunk, k, f->matched + done) ||
            memcmp(chunk, data + done, k) != 0)
            return false;
        done += k;
    }
    return true;
}

static void end_comparing(struct trowel_sink_file *f)
{
    if (f->comparing)
        close(f->old_fd);
    f->comparing = false;
}

/* The matched bytes, from the target into the output, where the kernel
 * cannot copy them itself: through memory, a chunk at a time. */
static trowel_status copy_matched_by_hand(trowel_sink *s, uint64_t copied)
{
    struct trowel_sink_file *f = file_of(s);
    uint8_t chunk[16384];
    trowel_status st = TROWEL_OK;
    while (st == TROWEL_OK && copied < f->matched) {
        uint64_t left = f->matched - copied;
        size_t k = left < sizeof chunk ? (size_t)left : sizeof chunk;
        if (!pread_full(f->old_fd, chunk, k, copied))
            return target_changed(s); /* it shrank */
        st = trowel_sink_fd_write_all(s, f->fd, chunk, k);
        copied += k;
    }
    return st;
}

trowel_status trowel_sink_file_stop_comparing(trowel_sink *s)
{
    struct trowel_sink_file *f = file_of(s);
    if (!f->comparing)
        return TROWEL_OK;
    trowel_status st = open_output(s);
    uint64_t copied = 0;
    if (st == TROWEL_OK && f->matched > 0)
        st = trowel_sink_fd_copy(s, f->fd, f->old_fd, 0, f->matched, &copied);
    if (st == TROWEL_OK && copied < f->matched)
        st = copy_matched_by_hand(s, copied);
    /* The output's own copy, read back, must be the bytes compared. */
    if (st == TROWEL_OK && f->matched > 0 &&
        !fd_hashes_to(f->fd, f->matched, hash_value(&f->matched_hash)))
        st = target_changed(s);
    end_comparing(f);
    s->ctx->last_target_existed = true; /* it was there: replace it by a temporary name */
    return st;
}

/* At finish, every write matched: *stays when the target can stay as the
 * output (it holds exactly the matched bytes, and its name still leads to
 * it); false when it holds them but is longer or its name leads elsewhere
 * (the output is then made from it). A target that lost them fails. */
static trowel_status target_holds_output(trowel_sink *s, bool *stays)
{
    struct trowel_sink_file *f = file_of(s);
    struct stat open_st, named;
    *stays = false;
    if (fstat(f->old_fd, &open_st) != 0 || (uint64_t)open_st.st_size < f->matched ||
        !fd_hashes_to(f->old_fd, f->matched, hash_value(&f->matched_hash)))
        return target_changed(s);
    *stays = (uint64_t)open_st.st_size == f->matched &&
             fstatat(f->dirfd, f->final_name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
             named.st_dev == open_st.st_dev && named.st_ino == open_st.st_ino;
    return TROWEL_OK;
}

static trowel_status open_file_in(trowel_ctx *ctx, int dirfd, bool owns, const char *name,
                                  const char *display, unsigned flags, trowel_sink **out)
{
    *out = NULL;
    trowel_sink *s = trowel_sink_new(ctx, &file_impl, display);
    if (!s) {
        if (owns)
            close(dirfd);
        return ctx->last_error.status;
    }
    struct trowel_sink_file *f = file_of(s);
    f->fd = -1;
    f->dirfd = dirfd;
    f->owns_dirfd = owns;
    f->flags = flags;
    f->final_name = trowel_mem_strdup(ctx, name);
    if (!f->final_name) {
        trowel_sink_free(s);
        return ctx->last_error.status;
    }

    /* An early look, so that a file that is there is refused before any
     * work; linking refuses it atomically later in any case, so a folder
     * made by this run needs no look. */
    struct stat st_final;
    if (!(flags & (TROWEL_SINK_OVERWRITE | TROWEL_SINK_NEW_FOLDER)) &&
        fstatat(dirfd, name, &st_final, AT_SYMLINK_NOFOLLOW) == 0) {
        trowel_sink_free(s);
        return trowel_fail(ctx, TROWEL_ERR_EXISTS, TROWEL_NO_OFFSET,
                           "%s exists (use --force to overwrite)", display);
    }
    if (!(flags & TROWEL_SINK_SWEPT))
        sweep_stale_temps(ctx, dirfd);
    bool may_hold_target = (flags & TROWEL_SINK_OVERWRITE) && !(flags & TROWEL_SINK_NEW_FOLDER);
    if (!(may_hold_target && start_comparing(s))) {
        trowel_status st = open_output(s);
        if (st != TROWEL_OK) {
            trowel_sink_free(s);
            return st;
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
    trowel_status s = trowel_sink_open_owned_fd(ctx, fd, path, out);
    if (s != TROWEL_OK)
        close(fd);
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

/* Names an unnamed file (0 or an errno value). linkat with AT_EMPTY_PATH
 * names the descriptor itself; Linux allows that to a process with
 * CAP_DAC_READ_SEARCH and, from 6.10 on, when the file was opened with the
 * caller's own credentials. Through /proc/self/fd/N works for anyone, but walks
 * /proc for every file: of the four system calls a small extracted file
 * costs, the link was the second dearest (bench/syscalls_per_file.sh and
 * docs/PERFORMANCE.md). So the descriptor is named directly first, and a
 * context that saw that refused and /proc work goes through /proc only
 * from then on, sparing a failed call per file. */
int trowel_sink_link_unnamed(trowel_sink *s, const char *name)
{
#if defined(__linux__) && defined(O_TMPFILE)
    struct trowel_sink_file *f = file_of(s);
    if (!s->ctx->flink_refused) {
        if (linkat(f->fd, "", f->dirfd, name, AT_EMPTY_PATH) == 0)
            return 0;
        if (errno == EEXIST)
            return EEXIST;
    }
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->fd);
    if (linkat(AT_FDCWD, proc, f->dirfd, name, AT_SYMLINK_FOLLOW) == 0) {
        s->ctx->flink_refused = true;
        return 0;
    }
    return errno; /* the reason: a direct link's ENOENT may only mean "refused" */
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
    struct trowel_sink_file *f = file_of(s);
    bool replacing = f->flags & TROWEL_SINK_OVERWRITE;
    if (!replacing || !s->ctx->last_target_existed) {
        int err = trowel_sink_link_unnamed(s, f->final_name);
        if (err != EEXIST || !replacing)
            return err ? trowel_sink_io_fail(s, "create", err) : TROWEL_OK;
        s->ctx->last_target_existed = true;
    }
    hold_lock(f->fd); /* it gets a name a sweep could see */
    int err = with_fresh_temp(s, trowel_sink_link_unnamed);
    if (err)
        return trowel_sink_io_fail(s, "create", err);
    trowel_status st = TROWEL_OK;
    if (renameat(f->dirfd, f->temp_name, f->dirfd, f->final_name) != 0) {
        st = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot rename into %s: %s",
                         s->name, strerror(errno));
        unlinkat(f->dirfd, f->temp_name, 0);
    }
    announce_temp(s, false);
    return st;
}

/* Some file systems (NFS) report a failed write only when a descriptor is
 * closed, and any of the file's descriptors will do: closing a duplicate
 * brings such an error out while the output is still unnamed, before it
 * takes the final name (with --force, before it replaces the old file).
 * Where the file system is known to report them at the write (ext4, XFS,
 * Btrfs, tmpfs, F2FS: TROWEL_SINK_EAGER_ERRORS) it is skipped. */
static trowel_status flush_by_closing_a_dup(trowel_sink *s)
{
    int dup_fd = fcntl(file_of(s)->fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) /* no descriptor to spare: the final close still checks */
        return TROWEL_OK;
    if (close(dup_fd) == 0)
        return TROWEL_OK;
    return trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot write %s: %s", s->name,
                       strerror(errno));
}

static trowel_status commit_unnamed(trowel_sink *s, trowel_status st)
{
    struct trowel_sink_file *f = file_of(s);
    if (st == TROWEL_OK && !(f->flags & TROWEL_SINK_EAGER_ERRORS))
        st = flush_by_closing_a_dup(s);
    if (st == TROWEL_OK)
        st = place_unnamed(s);
    bool placed = st == TROWEL_OK;
    if (close(f->fd) != 0 && placed) {
        /* A write failed after all (the duplicate's close said nothing):
         * the file under the final name may be short, so it goes. */
        st = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot close %s: %s", s->name,
                         strerror(errno));
        unlinkat(f->dirfd, f->final_name, 0);
    }
    f->fd = -1;
    return st;
}

/* Removes a plain output (its descriptor still open) if its name still
 * leads to it: with --force on a case-blind file system a later entry may
 * have replaced it under that name (open_plain), and that one stays. */
static void remove_plain(struct trowel_sink_file *f)
{
    struct stat mine, named;
    if (fstat(f->fd, &mine) == 0 &&
        fstatat(f->dirfd, f->final_name, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
        mine.st_dev == named.st_dev && mine.st_ino == named.st_ino)
        unlinkat(f->dirfd, f->final_name, 0);
}

/* A plain output in a private folder: closed, and removed when anything
 * failed, so the folder is published holding whole files only. (No
 * duplicate is closed first: nobody sees the name before the folder is
 * whole, and the close itself reports what a duplicate's would.) */
static trowel_status commit_plain(trowel_sink *s, trowel_status st)
{
    struct trowel_sink_file *f = file_of(s);
    if (st != TROWEL_OK)
        remove_plain(f);
    if (close(f->fd) != 0 && st == TROWEL_OK) {
        st = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot close %s: %s", s->name,
                         strerror(errno));
        unlinkat(f->dirfd, f->final_name, 0);
    }
    f->fd = -1;
    return st;
}

/* Puts the named temporary under the final name unless that exists: 0 or an
 * errno value. link refuses an existing name atomically; a file system with
 * no hard links (FAT) gets a rename that refuses it just as well. */
static int place_named_no_replace(trowel_sink *s)
{
    struct trowel_sink_file *f = file_of(s);
    if (linkat(f->dirfd, f->temp_name, f->dirfd, f->final_name, 0) == 0)
        return 0;
    int err = errno;
#if defined(__linux__) && defined(RENAME_NOREPLACE)
    if (err == EPERM || err == EOPNOTSUPP || err == ENOSYS) {
        if (renameat2(f->dirfd, f->temp_name, f->dirfd, f->final_name, RENAME_NOREPLACE) == 0)
            return 0;
        if (errno != EINVAL) /* EINVAL: the flag is not supported; say why link failed */
            err = errno;
    }
#endif
    return err;
}

/* The named temporary: closed, then linked (a new name) or renamed
 * (replacing: the name holds the old file or the new one) into place, and
 * always removed. */
static trowel_status commit_named(trowel_sink *s, trowel_status st)
{
    struct trowel_sink_file *f = file_of(s);
    if (st == TROWEL_OK && close(f->fd) != 0)
        st = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot close %s: %s", s->name,
                         strerror(errno));
    else if (st != TROWEL_OK)
        close(f->fd);
    f->fd = -1;
    if (st == TROWEL_OK && (f->flags & TROWEL_SINK_OVERWRITE)) {
        /* rename replaces whatever is there, a link included, without following it. */
        if (renameat(f->dirfd, f->temp_name, f->dirfd, f->final_name) != 0)
            st = trowel_fail(s->ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "cannot rename into %s: %s",
                             s->name, strerror(errno));
    } else if (st == TROWEL_OK) {
        int err = place_named_no_replace(s);
        if (err)
            st = trowel_sink_io_fail(s, "create", err);
    }
    unlinkat(f->dirfd, f->temp_name, 0);
    announce_temp(s, false);
    return st;
}

/* ------------------------------------------------ the sink's table */

static trowel_status file_write(trowel_sink *s, const void *data, size_t n)
{
    struct trowel_sink_file *f = file_of(s);
    if (f->comparing) {
        if (target_continues_with(f, data, n)) {
            hash_add(&f->matched_hash, data, n);
            f->matched += n;
            return TROWEL_OK;
        }
        trowel_status st = trowel_sink_file_stop_comparing(s);
        if (st != TROWEL_OK)
            return st;
    }
    return trowel_sink_fd_write_all(s, f->fd, data, n);
}

/* A copy in the kernel is not compared: it is for large entries, where
 * the new inode costs little beside the bytes. */
static trowel_status file_copy(trowel_sink *s, int fd, uint64_t off, uint64_t n, uint64_t *copied)
{
    trowel_status st = trowel_sink_file_stop_comparing(s);
    return st != TROWEL_OK ? st : trowel_sink_fd_copy(s, file_of(s)->fd, fd, off, n, copied);
}

static int file_pwrite(trowel_sink *s, uint64_t off, const void *data, size_t n)
{
    int fd = file_of(s)->fd;
    const uint8_t *p = data;
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
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

/* A file trowel_sinks_finish_all has closed (fd -1) is no longer the
 * sink's: the group removes its names. */
static void file_discard(trowel_sink *s)
{
    struct trowel_sink_file *f = file_of(s);
    end_comparing(f);
    if (f->fd < 0)
        return;
    if (f->plain)
        remove_plain(f);
    close(f->fd);
    f->fd = -1;
    if (!f->plain && !f->unnamed) {
        unlinkat(f->dirfd, f->temp_name, 0);
        announce_temp(s, false);
    }
}

static trowel_status file_finish(trowel_sink *s, trowel_status st)
{
    struct trowel_sink_file *f = file_of(s);
    if (f->comparing) {
        bool stays = false;
        if (st == TROWEL_OK)
            st = target_holds_output(s, &stays);
        if (st != TROWEL_OK || stays) {
            /* A failure before any byte was written, or the target holds
             * the output already: either way it stays as it is. */
            end_comparing(f);
            return st;
        }
        /* The target is longer, or its name now leads to another file. */
        st = trowel_sink_file_stop_comparing(s);
        if (st != TROWEL_OK) {
            file_discard(s);
            return st;
        }
    }
    if (f->fd < 0) /* making the output failed (the write said so) */
        return st != TROWEL_OK ? st : TROWEL_ERR_IO;
    if (f->plain)
        return commit_plain(s, st);
    return f->unnamed ? commit_unnamed(s, st) : commit_named(s, st);
}

static void file_release(trowel_sink *s)
{
    struct trowel_sink_file *f = file_of(s);
    end_comparing(f);
    if (f->owns_dirfd && f->dirfd >= 0)
        close(f->dirfd);
    trowel_mem_free(s->ctx, f->final_name);
}

static const struct trowel_sink_impl file_impl = {
    .write = file_write,
    .finish = file_finish,
    .discard = file_discard,
    .release = file_release,
    .state_size = sizeof(struct trowel_sink_file),
    .buffer_size = (size_t)1 << 18,
    .buffer_purpose = "the output file's buffer",
    .copy_fd = file_copy,
    .pwrite = file_pwrite,
    .begin_positional = trowel_sink_file_stop_comparing,
};
