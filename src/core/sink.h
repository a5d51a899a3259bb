/* Internal side of trowel_sink. */
#ifndef TROWEL_SINK_H
#define TROWEL_SINK_H

#include "core.h"

enum trowel_sink_kind { TROWEL_SINK_FILE, TROWEL_SINK_FD, TROWEL_SINK_MEMORY, TROWEL_SINK_NULL };

struct trowel_sink {
    trowel_ctx *ctx;
    enum trowel_sink_kind kind;
    char *name;            /* for messages */
    uint64_t written;
    trowel_status failed;  /* first write error: later writes and finish report it */
    uint8_t *buf;          /* file/fd: write buffer; memory: the data */
    size_t len, cap;
    uint32_t crc;          /* null sink */
    int fd;                /* file: the output being written; fd: the caller's descriptor */
    bool owns_fd;          /* fd: a device or FIFO opened by name, closed when done */
    int dirfd;             /* file: the folder holding target and temporary */
    bool owns_dirfd;       /* file: close dirfd when done */
    char *final_name;      /* file: name inside dirfd */
    bool unnamed;          /* file: fd is an O_TMPFILE file, linked into place at the end */
    char temp_name[40];    /* file: the named temporary inside dirfd, or "" */
    unsigned flags;
};

/* A file sink for name (one path component) inside the open folder dirfd,
 * which the sink takes over (and closes). display names it in messages. */
trowel_status trowel_sink_open_file_at(trowel_ctx *ctx, int dirfd, const char *name,
                                       const char *display, unsigned flags, trowel_sink **out);
/* The same, but dirfd stays the caller's: it must stay open until the sink
 * is finished or discarded. Saves a dup and a close a file when many files
 * go into one folder. */
trowel_status trowel_sink_open_file_in(trowel_ctx *ctx, int dirfd, const char *name,
                                       const char *display, unsigned flags, trowel_sink **out);

/* Facts about a sink's folder that a caller writing many files into it
 * (trowel_outdir) learns once and passes in the flags, next to
 * TROWEL_SINK_OVERWRITE, instead of each sink finding them out again. */
enum {
    TROWEL_SINK_SWEPT = 1u << 16,        /* its stale temporaries are cleared */
    TROWEL_SINK_NEW_FOLDER = 1u << 17,   /* made by this run: no name in it is
                                          * older than the run (a name that
                                          * appears anyway is still refused
                                          * when the file is linked) */
    TROWEL_SINK_EAGER_ERRORS = 1u << 18, /* its file system reports a failed
                                          * write at the write, not at close */
};
/* Clears dirfd's stale temporaries (once per context) and returns the
 * facts above that hold for it (TROWEL_SINK_SWEPT, maybe
 * TROWEL_SINK_EAGER_ERRORS). */
unsigned trowel_sink_folder_facts(trowel_ctx *ctx, int dirfd);

/* Positional writes, for a decoder that finishes its output out of order
 * (the Delphine packer's decodes from the end) and hands finished pieces
 * to a writer thread. Only a file sink that has been given nothing yet
 * takes them, and they are not mixed with trowel_sink_write. */
bool trowel_sink_takes_positional(const trowel_sink *s);
/* Writes n bytes at off. Touches no context, so another thread may call it
 * (one at a time); returns 0 or an errno value. */
int trowel_sink_pwrite(trowel_sink *s, uint64_t off, const void *data, size_t n);
/* Back on the sink's thread, after the positional writes: total bytes were
 * written from 0, or err (an errno value from trowel_sink_pwrite) failed
 * them, which fails the sink. */
trowel_status trowel_sink_positional_done(trowel_sink *s, uint64_t total, int err);

/* Memory sinks: makes room for size bytes in all at once (a decoder that
 * knows its output size spares the doublings and their slack). */
trowel_status trowel_sink_reserve(trowel_sink *s, size_t size);

/* Copies n bytes at off of the file fd into a file or fd sink inside the
 * kernel (copy_file_range: no trip through user memory), as far as the
 * system allows; *copied says how many went (0 for other sinks, pipes,
 * other file systems), the caller writes the rest. Fails only on a write
 * error. */
trowel_status trowel_sink_copy_fd(trowel_sink *s, int fd, uint64_t off, uint64_t n,
                                 uint64_t *copied);

/* File and fd sinks: writes out what is buffered (or returns the sink's
 * first failure). */
trowel_status trowel_sink_flush(trowel_sink *s);

/* Memory sinks: hands the buffer (allocated with trowel_mem_alloc on the
 * sink's context) to the caller, who frees it with trowel_mem_free. */
trowel_status trowel_sink_take(trowel_sink *s, uint8_t **data, size_t *size);

/* The file sink's naming and linking, shared with trowel_sinks_finish_all
 * (commit.c), which gives several sinks more names of its own. */

/* Tells the context's temp handler that name, in s's folder, is about to
 * exist (live) or exists no more. */
void trowel_sink_announce(trowel_sink *s, const char *name, bool live);
/* Makes something (a file, a link) under name in s's folder: 0 or an errno
 * value, EEXIST when the name is taken. */
typedef int (*trowel_sink_make_fn)(trowel_sink *s, const char *name);
/* Writes a fresh short name ".trowel-PID-<tag><serial>" into name (cap
 * bytes), whatever the target's length, and calls make until it makes
 * something under it (0) or fails for a reason other than the name being
 * taken (an errno value; name is then ""). Each try takes the next
 * *serial. The name is announced live from just before it is made. */
int trowel_sink_fresh_name(trowel_sink *s, char *name, size_t cap, const char *tag,
                           unsigned *serial, trowel_sink_make_fn make);
/* Locks s's file (flock) so that no other process's sweep takes it for a
 * leftover once it has a temporary name. */
void trowel_sink_hold_lock(trowel_sink *s);
/* Links s's unnamed file (O_TMPFILE) into its folder as name: 0 or an
 * errno value (EEXIST when the name is taken). */
int trowel_sink_link_unnamed(trowel_sink *s, const char *name);
/* Fails s's context with "cannot WHAT NAME: why", err an errno value; a
 * name that exists (EEXIST) is TROWEL_ERR_EXISTS and says --force. */
trowel_status trowel_sink_io_fail(trowel_sink *s, const char *what, int err);

#endif
