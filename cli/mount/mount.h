/*
 * trowel mount: an archive as a read-only folder through libfuse3. Built
 * only when libfuse3 is found (TROWEL_HAVE_FUSE); cmd_mount.c is the verb.
 *
 * The tree (tree.c) is built once from the entry table: the main tree holds
 * what `trowel extract` writes, under the same normalised names; `.trowel/`
 * beside it, with --views, holds the other views (raw/, convert/,
 * archive.json, manifest.json); it is opt-in so that find and grep -r do
 * not walk every entry three times. Files hold no bytes until read. An
 * entry the library can read at an offset (trowel_entry_reader: stored
 * in place, or a VPP's zlib, LZ4 or solid stream) is served read by read
 * through a reader kept where the last read ended, so it reads under any
 * memory limit whatever its size. Any other is decoded whole on its first
 * read (or stat, when its size is known only once decoded) and kept in an
 * LRU cache under the memory limit, so a backward-coded stream (the
 * Delphine packer) is decoded once and then served at any offset.
 *
 * With -r, beside every entry that is an archive trowel can open (cli_nested_candidate,
 * as list -r and extract -r decide), a folder ENTRY.d/ holds its tree, as
 * extract -r writes it: the nested archive is opened when the folder is
 * first listed or walked through, down to TROWEL_NEST_MAX levels.
 */
#ifndef TROWEL_CLI_MOUNT_H
#define TROWEL_CLI_MOUNT_H

#include "../cli.h"

#include <stdbool.h>
#include <stdint.h>

/* What a file of the tree shows. */
typedef enum mount_view {
    MOUNT_VIEW_ENTRY,    /* an entry, as extract writes it */
    MOUNT_VIEW_RAW,      /* an entry as stored (extract --raw) */
    MOUNT_VIEW_CONVERT,  /* a conversion of another file's bytes */
    MOUNT_VIEW_JSON,     /* the archive as `convert --to json` writes it */
    MOUNT_VIEW_MANIFEST  /* what `extract --manifest` writes */
} mount_view;

/* How a cached file's bytes are held, so they are freed the right way. */
typedef enum mount_hold { MOUNT_HOLD_NONE, MOUNT_HOLD_ENTRY, MOUNT_HOLD_SINK, MOUNT_HOLD_TEXT } mount_hold;

typedef struct mount_node mount_node;
struct mount_node {
    char *name;           /* one path component ("" for the root) */
    mount_node *parent;
    bool is_dir;
    /* Folders. A folder may later stand for a nested archive (an archive
     * inside an entry): expand fills its children on first use, which is
     * how .trowel/convert/ is made too. */
    mount_node **children; /* sorted by name once built (mount_tree_sort) */
    size_t child_count, child_cap;
    /* A hash index of the children by name (open addressing, index_cap a
     * power of two, at most half full), so that adding n entries to one
     * folder costs O(n) and not O(n^2); NULL while the folder is small. */
    mount_node **index;
    size_t index_cap;
    bool expanded;
    /* ENTRY.d/ folders: the nested archive in the file nest_entry, opened
     * when the folder is first used and kept until unmount; nest_failed
     * when it would not open (EIO on the folder). */
    mount_node *nest_entry;
    trowel_archive *nested;
    bool nest_failed;
    bool nest_raw;          /* .trowel/raw/ENTRY.d/: its entries as stored (raw=1) */
    trowel_input *nest_in;  /* the nested archive's input, when the folder made it */
    uint8_t *nest_data;     /* the decoded entry under it (trowel_archive_free_data) */
    /* Files. */
    mount_view view;
    size_t entry;         /* ENTRY, RAW: the index in its archive */
    trowel_archive *archive; /* ENTRY, RAW: that archive (a nested one, or the mount's) */
    mount_node *source;   /* CONVERT: the file whose bytes are converted */
    const char *target;   /* CONVERT: the convert target (static or kept) */
    uint64_t size;        /* bytes, once size_known */
    bool size_known;
    bool failed;          /* reading failed once: EIO from then on */
    /* Streaming (fs.c): an entry read by offset is served through readers
     * the file system keeps, not cached; whole_only once the library said
     * it can only be read whole. */
    bool whole_only;
    /* The cache (fs.c): bytes while cached, in LRU order. */
    const uint8_t *data;
    size_t len;
    mount_hold hold;
    void *holder;         /* what to free: entry data, a sink or text */
    mount_node *lru_prev, *lru_next;
};

/* ------------------------------------------------------------------ tree */

/* A new folder node named name (copied); NULL when memory is exhausted. */
mount_node *mount_tree_dir(const char *name);
/* Adds a file at path (components separated by '/', as
 * trowel_path_normalize makes them) under root, making folders on the way.
 * Returns 0 and the node, EEXIST when the path or a folder on it is taken
 * by something else, or ENOMEM. */
int mount_tree_add_file(mount_node *root, const char *path, mount_node **out);
/* Adds a folder named name inside dir; NULL when the name is taken or
 * memory is exhausted. */
mount_node *mount_tree_new_dir(mount_node *dir, const char *name);
/* Adds (or finds) a folder named name inside dir. NULL: ENOMEM or taken. */
mount_node *mount_tree_add_dir(mount_node *dir, const char *name);
/* The folder at path ("a/b": every component a folder) under root, made
 * where missing; NULL when a file takes a component or memory is
 * exhausted. "" is root. */
mount_node *mount_tree_add_dir_path(mount_node *root, const char *path);
/* Sorts every folder's children so lookups can bisect. */
void mount_tree_sort(mount_node *root);
/* The node at path ("/" or "/a/b"), or NULL. Folders met on the way that
 * are not expanded are expanded with expand (user passed back). */
mount_node *mount_tree_lookup(mount_node *root, const char *path,
                              void (*expand)(void *user, mount_node *dir), void *user);
/* The path of node below root into buf ("a/b"); false when it does not fit. */
bool mount_tree_path(const mount_node *node, char *buf, size_t cap);
/* Frees the tree (cached bytes must be released first). */
void mount_tree_free(mount_node *root);

/* ------------------------------------------------------------ file system */

typedef struct mount_config {
    const char *archive;    /* the path, for messages */
    const char *mountpoint;
    bool foreground;        /* -f: stay in the foreground, messages on stderr */
    bool debug;             /* libfuse's own trace (hidden --debug) */
    bool recursive;         /* -r: nested archives as ENTRY.d/ folders */
    bool views;             /* --views: the .trowel/ folder */
    uint64_t cache_limit;   /* decoded bytes kept at most */
} mount_config;

/* Whether f has the reading option raw (entries as stored, not converted):
 * the formats for which .trowel/raw/ shows something extract does not. */
bool mount_format_has_raw_option(const trowel_format *f);

/* Builds the tree of a (and of raw, an archive over the same input opened
 * with raw=1 for .trowel/raw/ when its format has that option, or NULL),
 * mounts it and serves it until it is unmounted or, in the foreground,
 * interrupted. Returns an exit status (after printing why). */
int mount_serve(cli_session *s, trowel_archive *a, trowel_archive *raw, const mount_config *cfg);

#endif
