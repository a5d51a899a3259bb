/* The file sink's state and its naming and linking helpers, shared with
 * trowel_sinks_finish_all (commit.c), which gives several file sinks more
 * names of its own. */
#ifndef TROWEL_SINK_FILE_H
#define TROWEL_SINK_FILE_H

#include "sink.h"

/* A running hash of bytes given in pieces (sink_file.c, "identical
 * files"). */
struct trowel_sink_hash {
    uint64_t h, len;
    uint8_t tail[8];
    unsigned tail_len;
};

struct trowel_sink_file {
    int fd;             /* the output being written, or -1 once closed */
    int dirfd;          /* the folder holding target and temporary */
    bool owns_dirfd;    /* close dirfd when done */
    bool unnamed;       /* fd is an O_TMPFILE file, linked into place at the end */
    bool plain;         /* fd is final_name itself, in a private folder */
    char *final_name;   /* the target's name inside dirfd */
    char temp_name[40]; /* the named temporary inside dirfd, or "" */
    unsigned flags;     /* TROWEL_SINK_OVERWRITE and the folder facts */
    /* Replacing a file: while `comparing`, nothing has been written (fd is
     * -1) and the bytes given so far equal the first `matched` of the
     * target's, open read-only as old_fd (old_size bytes when it was
     * looked at); matched_hash is their hash, to check the target (or the
     * output's copy of them) still holds them when that is relied on. */
    bool comparing;
    int old_fd;
    uint64_t matched, old_size;
    struct trowel_sink_hash matched_hash;
};

/* s's file state, or NULL when s is not a file sink. */
struct trowel_sink_file *trowel_sink_file_state(trowel_sink *s);

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
/* Gives up leaving s's target as it is (see sink_file.c, "identical
 * files"): s gets its output file, holding the bytes matched so far. A sink
 * that is not comparing is left as it is. */
trowel_status trowel_sink_file_stop_comparing(trowel_sink *s);
/* Fails s's context with "cannot WHAT NAME: why", err an errno value; a
 * name that exists (EEXIST) is TROWEL_ERR_EXISTS and says --force. */
trowel_status trowel_sink_io_fail(trowel_sink *s, const char *what, int err);

#endif
