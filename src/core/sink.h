/* Internal side of trowel_sink. */
#ifndef TROWEL_SINK_H
#define TROWEL_SINK_H

#include "core.h"

/* What one kind of sink does: a table of functions, one per kind, each in
 * its own file (sink_file.c, sink_fd.c, sink_memory.c, sink_null.c,
 * sink_callbacks.c). sink.c keeps what every kind shares (the write buffer,
 * the first failure, the byte count) and calls these; it never asks which
 * kind a sink is. Only write is required. */
struct trowel_sink_impl {
    /* Takes n bytes: a full buffer being flushed, or (unbuffered kinds,
     * writes larger than the buffer) the caller's bytes. */
    trowel_status (*write)(trowel_sink *s, const void *data, size_t n);
    /* Completes the output; status is the sink's result so far (its first
     * failure, or TROWEL_OK with the buffer flushed): a kind that must undo
     * something on failure does it here. NULL: status is the result. */
    trowel_status (*finish)(trowel_sink *s, trowel_status status);
    /* Throws the output away. NULL: nothing to undo. */
    void (*discard)(trowel_sink *s);
    /* Frees what the kind's state holds (after finish or discard; the
     * state itself is part of the sink). NULL: nothing. */
    void (*release)(trowel_sink *s);
    /* The state's size: trowel_sink_new gives the sink that many zeroed
     * bytes, aligned for any type, at s->state. */
    size_t state_size;
    /* The write buffer's size (0: every write goes straight to write) and
     * what it is for, as the memory limit's messages say. */
    size_t buffer_size;
    const char *buffer_purpose;
    /* Optional, each for the kinds that can (NULL otherwise): */
    /* trowel_sink_copy_fd: the buffer is flushed before. */
    trowel_status (*copy_fd)(trowel_sink *s, int fd, uint64_t off, uint64_t n, uint64_t *copied);
    /* trowel_sink_pwrite (a kind with it takes positional writes). */
    int (*pwrite)(trowel_sink *s, uint64_t off, const void *data, size_t n);
    /* Called before the first positional write, on the sink's thread: a
     * kind that defers its output (a file sink comparing with the file it
     * replaces) makes it now. NULL: nothing to do. */
    trowel_status (*begin_positional)(trowel_sink *s);
    /* Memory: trowel_sink_data, _take, _reserve and the decoder's room. */
    const uint8_t *(*data)(const trowel_sink *s, size_t *size);
    void (*take)(trowel_sink *s, uint8_t **data, size_t *size);
    trowel_status (*reserve)(trowel_sink *s, size_t size);
    uint8_t *(*room)(trowel_sink *s, size_t size);
    void (*filled)(trowel_sink *s, size_t size);
    /* Null: trowel_sink_crc32. */
    uint32_t (*crc)(const trowel_sink *s);
};

struct trowel_sink {
    trowel_ctx *ctx;
    const struct trowel_sink_impl *impl;
    void *state;           /* the kind's own (impl->state_size bytes) */
    char *name;            /* for messages */
    uint64_t written;
    trowel_status failed;  /* first write error: later writes and finish report it */
    uint8_t *buf;          /* the write buffer (impl->buffer_size bytes), or NULL */
    size_t len;            /* bytes in it */
};

/* A new sink of impl named name (copied), with its zeroed state and its
 * buffer; NULL (with the error set) when memory runs out. */
trowel_sink *trowel_sink_new(trowel_ctx *ctx, const struct trowel_sink_impl *impl,
                             const char *name);
/* Frees a sink (impl->release first) without finishing or discarding it:
 * for a constructor that fails after trowel_sink_new. */
void trowel_sink_free(trowel_sink *s);

/* The descriptor kinds' (file, fd) shared work, in sink_fd.c: writes all
 * n bytes to fd, and copies in the kernel as trowel_sink_copy_fd says. */
trowel_status trowel_sink_fd_write_all(trowel_sink *s, int fd, const void *data, size_t n);
trowel_status trowel_sink_fd_copy(trowel_sink *s, int to_fd, int fd, uint64_t off, uint64_t n,
                                  uint64_t *copied);
/* An fd sink that closes fd when it is done (a device opened by name). */
trowel_status trowel_sink_open_owned_fd(trowel_ctx *ctx, int fd, const char *name,
                                        trowel_sink **out);

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
    TROWEL_SINK_PRIVATE_FOLDER = 1u << 19, /* a folder being staged, which
                                            * nobody sees until it is whole:
                                            * each output is made under its
                                            * final name at once */
};
/* Clears dirfd's stale temporaries (once per context) and returns the
 * facts above that hold for it (TROWEL_SINK_SWEPT, maybe
 * TROWEL_SINK_EAGER_ERRORS). */
unsigned trowel_sink_folder_facts(trowel_ctx *ctx, int dirfd);
/* TROWEL_SINK_EAGER_ERRORS when dirfd's file system has it, else 0. */
unsigned trowel_sink_eager_facts(int dirfd);

/* Staged folders (outdir.c): whether name is one's (".trowel-PID-stageN");
 * removing one whose run is gone (kill -9) from dirfd, as stale
 * temporaries are; and emptying the one open as fd, then removing it as
 * name in dirfd (0, or -1 with errno) (remove_tree.c). */
bool trowel_is_stage_name(const char *name);
/* What follows ".trowel-PID-" in name[0, len), or NULL when name does not
 * start so (PID: digits); *pid (when wanted) is PID, or 0 when it is
 * longer than a pid can be. */
const char *trowel_temp_name_rest(const char *name, size_t len, long *pid);
/* Whether name[0, len) is any of trowel's temporary names (".trowel-PID-",
 * a staged folder's included): an entry must not have one, or a later run
 * would take it for a stale temporary and remove it. */
bool trowel_is_temp_name(const char *name, size_t len);
void trowel_sweep_stale_stages(int dirfd);
int trowel_remove_stage_at(int dirfd, const char *name, int fd);

/* Positional writes, for a decoder that finishes its output out of order
 * (the Delphine packer's decodes from the end) and hands finished pieces
 * to a writer thread. Only a file sink that has been given nothing yet
 * takes them, and they are not mixed with trowel_sink_write. A true answer
 * readies the sink for them (on the sink's thread); a sink that cannot be
 * readied is failed and answers false. */
bool trowel_sink_takes_positional(trowel_sink *s);
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

/* Memory sinks with room reserved for size bytes (trowel_sink_reserve) and
 * nothing written yet: that room, for a decoder to fill in place; NULL
 * otherwise. trowel_sink_filled then says size bytes are good. */
uint8_t *trowel_sink_room(trowel_sink *s, size_t size);
void trowel_sink_filled(trowel_sink *s, size_t size);

/* Copies n bytes at off of the file fd into a file or fd sink inside the
 * kernel (splice through a pipe, else copy_file_range: no trip through user
 * memory), as far as the system allows; *copied says how many went (0 for
 * other sinks and outputs that take neither), the caller writes the rest.
 * Fails only on a write error. */
trowel_status trowel_sink_copy_fd(trowel_sink *s, int fd, uint64_t off, uint64_t n,
                                 uint64_t *copied);

/* Writes out what is buffered (file, fd and callback sinks; others have no
 * buffer), or returns the sink's first failure. */
trowel_status trowel_sink_flush(trowel_sink *s);

/* Memory sinks: hands the buffer (allocated with trowel_mem_alloc on the
 * sink's context) to the caller, who frees it with trowel_mem_free. */
trowel_status trowel_sink_take(trowel_sink *s, uint8_t **data, size_t *size);

#endif
