/*
 * trowel — a library for the data files of classic games.
 *
 * The public API. Everything a program needs is reached through a context
 * (trowel_ctx): it carries the memory limit, the last error and the optional
 * callbacks, so the library has no global mutable state and any number of
 * contexts may be used from different threads (one context per thread).
 *
 * Guarantees, for every format and codec registered in this library:
 *  - Untrusted input never makes the library read or write out of bounds,
 *    crash, hang or allocate without limit. Every size taken from a file is
 *    checked against the bytes present and against the context's memory limit
 *    before anything is allocated from it. The fuzz targets in fuzz/ exercise
 *    this promise for each parser and decoder.
 *  - Decoders never produce more than the size a container declares.
 *  - Every call that can fail returns a trowel_status; on failure the
 *    context's last error names the entry and the offset where it was found.
 *  - The library never prints and never exits; warnings go to a callback.
 *
 * Contracts that hold for every function below unless its comment says
 * otherwise:
 *  - Pointer arguments must not be NULL. The functions that release
 *    something (trowel_ctx_free, trowel_input_close, trowel_archive_close,
 *    trowel_outdir_close, trowel_sink_discard, trowel_writer_abort,
 *    trowel_free) accept NULL and then do nothing.
 *  - A function that makes an object returns it through its last argument
 *    (`out`): on TROWEL_OK the caller owns it and releases it with the
 *    matching close/free function; on failure *out is set to NULL and there
 *    is nothing to release.
 *  - Strings and structures returned as const pointers belong to the
 *    library: static ones (ids, descriptions, status strings) live as long
 *    as the program; those of an object (an entry's name, an archive's
 *    props) live until that object is closed. Never free them.
 *  - Lifetimes nest: a context outlives everything made with it; an input
 *    outlives the archives opened on it; an output folder outlives the
 *    sinks it made (finish or discard them before closing it).
 *  - A call that fails sets the context's last error (status, entry,
 *    offset, message: trowel_ctx_last_error). After a success the last
 *    error is unspecified: read it only when a call has failed.
 *  - Threads: the library has no global mutable state. The registries of
 *    formats and codecs and the functions that take no context or object
 *    (trowel_version, trowel_status_string, trowel_path_normalize,
 *    trowel_crc32, the trowel_format_* and trowel_codec_* look-ups) may be
 *    called from any thread at any time. A context and every object made
 *    with it (input, archive, sink, output folder, writer) must be used by
 *    one thread at a time; different contexts may work on different threads
 *    at once.
 */
#ifndef TROWEL_TROWEL_H
#define TROWEL_TROWEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; what this header declares is
 * its exported interface. */
#if defined(TROWEL_BUILDING) && (defined(__GNUC__) || defined(__clang__))
#pragma GCC visibility push(default)
#endif

#define TROWEL_VERSION_MAJOR 0
#define TROWEL_VERSION_MINOR 1
#define TROWEL_VERSION_PATCH 0
#define TROWEL_VERSION_STRING "0.1.0"

/* Returns the version of the library actually linked ("0.1.0"; static). */
const char *trowel_version(void);

/* ---------------------------------------------------------------- status */

typedef enum trowel_status {
    TROWEL_OK = 0,
    TROWEL_ERR_IO,          /* the operating system refused a read or write */
    TROWEL_ERR_TRUNCATED,   /* the data ends before a structure or stream does */
    TROWEL_ERR_CORRUPT,     /* a field or stream breaks the format's rules */
    TROWEL_ERR_UNSUPPORTED, /* not this format, or a variant or operation we lack */
    TROWEL_ERR_LIMIT,       /* the work would exceed the context's memory limit */
    TROWEL_ERR_NOMEM,       /* the system allocator failed */
    TROWEL_ERR_UNSAFE_PATH, /* an entry name would land outside the output folder */
    TROWEL_ERR_EXISTS,      /* an output exists and overwriting was not allowed */
    TROWEL_ERR_USAGE,       /* the caller passed a bad argument or option */
    TROWEL_ERR_VERIFY       /* verification found at least one mismatch */
} trowel_status;

/* A short, static, lower-case description of a status ("truncated data");
 * never NULL, also for values outside the enum. */
const char *trowel_status_string(trowel_status status);

#define TROWEL_NO_OFFSET UINT64_MAX

/* The detail kept for the last failure on a context. */
typedef struct trowel_error {
    trowel_status status;
    uint64_t offset;     /* absolute offset in the input, or TROWEL_NO_OFFSET */
    char entry[256];     /* the entry being handled, or "" */
    char message[512];   /* what is wrong, in words, without file name */
} trowel_error;

/* --------------------------------------------------------------- context */

typedef struct trowel_ctx trowel_ctx;

#define TROWEL_DEFAULT_MEM_LIMIT ((uint64_t)1 << 30) /* 1 GiB */

/* A new context with the default memory limit, no callbacks and threads 0.
 * Returns NULL only when memory is exhausted. Free it with trowel_ctx_free,
 * after everything made with it is closed. */
trowel_ctx *trowel_ctx_new(void);
/* Frees the context (NULL: nothing). Objects made with it must already be
 * closed: it does not close them. */
void trowel_ctx_free(trowel_ctx *ctx);

/* The most memory one allocation sized by file data, and all such
 * allocations alive together, may take. 0 restores the default. Work past
 * it fails with TROWEL_ERR_LIMIT. Takes effect for the next allocation. */
void trowel_ctx_set_mem_limit(trowel_ctx *ctx, uint64_t bytes);
uint64_t trowel_ctx_mem_limit(const trowel_ctx *ctx);
/* The bytes of counted memory alive now (what the limit is checked
 * against): a caller keeping entries in memory (trowel mount's cache) sizes
 * what it keeps from it. */
uint64_t trowel_ctx_mem_in_use(const trowel_ctx *ctx);

/* How many threads one call may use where the work splits (the Delphine
 * packer's encoder does): 1 keeps every call on the caller's thread; 0,
 * the default, means one per online CPU. Outputs never depend on it.
 * Callbacks are only ever called from the caller's thread. */
void trowel_ctx_set_threads(trowel_ctx *ctx, unsigned threads);
unsigned trowel_ctx_threads(const trowel_ctx *ctx);

/* The warning is valid only during the call; copy what you keep. */
typedef void (*trowel_warning_fn)(void *user, const trowel_error *warning);
/* Called for recoverable problems (a sanitised name, an ignored field),
 * on the calling thread, with user passed back. fn NULL: no warnings. */
void trowel_ctx_set_warning_handler(trowel_ctx *ctx, trowel_warning_fn fn, void *user);

/* Called with what a call did, for a caller who wants to be told (create
 * with -O base= says which scene of the base each source replaced or
 * that it added one): same shape as a warning (status TROWEL_OK, the entry
 * it concerns, a message); nothing is reported while no handler is set. */
void trowel_ctx_set_note_handler(trowel_ctx *ctx, trowel_warning_fn fn, void *user);

typedef void (*trowel_progress_fn)(void *user, uint64_t done, uint64_t total);
/* Called now and then during long work, on the calling thread; total is 0
 * when unknown. fn NULL: no progress reports. */
void trowel_ctx_set_progress_handler(trowel_ctx *ctx, trowel_progress_fn fn, void *user);

/* Told of each named temporary file a file sink makes: live is true just
 * before name appears inside the folder dirfd and false once it is gone
 * (renamed into place or removed). A program killed by a signal can unlink
 * the live ones from its handler (unlinkat is async-signal-safe); dirfd
 * stays open while a name is live. Linux file sinks mostly write to
 * unnamed files, which need none of this: only where the file system has
 * no unnamed files, and for an instant when --force replaces a file. */
typedef void (*trowel_temp_fn)(void *user, int dirfd, const char *name, bool live);
void trowel_ctx_set_temp_handler(trowel_ctx *ctx, trowel_temp_fn fn, void *user);
/* Removes the temporary name inside dirfd that a trowel_temp_fn was told
 * of: a file; a folder being staged (TROWEL_OUTDIR_STAGED,
 * ".trowel-PID-stageN") with all it holds, links inside removed, never
 * followed; any other folder only when it is empty. Async-signal-safe (it
 * makes system calls only), for a signal handler. 0, or -1 with errno set
 * (ENOENT: nothing had the name). */
int trowel_remove_temp(int dirfd, const char *name);

typedef struct trowel_input trowel_input;

/* How formats open files other than the one they read: a sibling beside
 * the archive (the volumes VOL.CNF lists, a SCUMM index's data file) or a
 * file an option names (-O palette=FILE, --names LIST, -O base=OLD).
 * base is the name of the input the sibling belongs to (as given to
 * trowel_input_open_file or _memory), or NULL when name is a path from an
 * option; name is as the format found it (a DOS name may differ in case).
 * The hook sets *out to an input opened on ctx, which the library closes
 * with trowel_input_close, and returns TROWEL_OK; or returns a failure
 * (TROWEL_ERR_IO for "not there"), with trowel_ctx_last_error set if it
 * has more to say (else the library names the file). It is called on the
 * calling thread, during a library call, with user passed back. */
typedef trowel_status (*trowel_open_fn)(void *user, trowel_ctx *ctx, const char *base,
                                        const char *name, trowel_input **out);
/* Serves every sibling and option-named file through fn instead of the
 * file system (fn NULL: back to the default, trowel_open_beside). A hook
 * may call trowel_open_beside for names it does not serve itself. */
void trowel_ctx_set_open_hook(trowel_ctx *ctx, trowel_open_fn fn, void *user);
/* The default: with base, name in base's folder (the folder part of base,
 * or the current folder), and if no file has exactly that name, the one
 * whose name matches it without regard to ASCII case (DOS names); without
 * base, name as a path. TROWEL_ERR_IO when there is none. */
trowel_status trowel_open_beside(trowel_ctx *ctx, const char *base, const char *name,
                                 trowel_input **out);

/* Called for each name in a listed folder (no "." or ".."), in the
 * folder's own order; is_folder tells a subfolder from a file. Return
 * false to stop the listing early. */
typedef bool (*trowel_list_each_fn)(void *each_user, const char *name, bool is_folder);
/* Lists folder dir, named as the open hook's name is: with base, dir is
 * in base's folder ("." for that folder itself); without, a path. Returns
 * TROWEL_OK (also when each stopped it), or a failure (TROWEL_ERR_IO for
 * "not there"), with trowel_ctx_last_error set if it has more to say. A
 * walk down a tree (--names DIR) lists each subfolder, "dir/name", from
 * inside each: the hook is then entered again before it returns. */
typedef trowel_status (*trowel_list_fn)(void *user, trowel_ctx *ctx, const char *base,
                                        const char *dir, trowel_list_each_fn each,
                                        void *each_user);
/* Every file a format reads besides its input, in one table: open serves
 * files (as trowel_open_fn above), list serves folders (VSIF's --names
 * DIR; a costume's folder of pictures). A member left NULL is the file
 * system's (trowel_open_beside, trowel_list_beside). */
typedef struct trowel_io_hooks {
    trowel_open_fn open;
    trowel_list_fn list;
} trowel_io_hooks;
/* Sets the hooks (copied; NULL: the file system for both), with user
 * passed back to each. trowel_ctx_set_open_hook(ctx, fn, user) is the same
 * as hooks {fn, NULL}. */
void trowel_ctx_set_io_hooks(trowel_ctx *ctx, const trowel_io_hooks *hooks, void *user);
/* The default listing: dir in base's folder (the folder part of base, or
 * the current folder), or dir as a path without base. TROWEL_ERR_IO when
 * it is not a folder that can be read. */
trowel_status trowel_list_beside(trowel_ctx *ctx, const char *base, const char *dir,
                                 trowel_list_each_fn each, void *each_user);

/* The detail of the last failure on this context; owned by the context,
 * valid until its next call that fails or clears it. Never NULL. */
const trowel_error *trowel_ctx_last_error(const trowel_ctx *ctx);
/* Resets the last error to TROWEL_OK, no entry, no offset, no message. */
void trowel_ctx_clear_error(trowel_ctx *ctx);

/* ----------------------------------------------------------------- input */

/* A read-only source of bytes: a file (read with pread, never mapped, never
 * modified) or a caller's memory. (Declared above, with the open hook.) */

/* Opens path for reading (TROWEL_ERR_IO when it cannot be opened). The
 * input keeps the file open until trowel_input_close. */
trowel_status trowel_input_open_file(trowel_ctx *ctx, const char *path, trowel_input **out);
/* The memory must outlive the input; it is not copied. name (copied) is
 * for messages and for formats that look at a name's extension. */
trowel_status trowel_input_open_memory(trowel_ctx *ctx, const void *data, size_t size,
                                       const char *name, trowel_input **out);
/* Reads everything from fd (a pipe, standard input) into memory that the
 * input owns and the memory limit counts; more than the limit allows is
 * TROWEL_ERR_LIMIT. fd is left open. name is for messages. */
trowel_status trowel_input_open_stream(trowel_ctx *ctx, int fd, const char *name,
                                       trowel_input **out);
/* A caller's bytes served through functions, with no file or memory of
 * the library's: an archive inside another program's container, a network
 * object, a compressed blob decoded on demand. Zero-initialise the table:
 * members may be added at the end. */
typedef struct trowel_input_ops {
    /* Copies exactly n bytes at off into dst; the library has checked
     * off + n against the size. Returns TROWEL_OK, or the failure (usually
     * TROWEL_ERR_IO) that the library reports as "the read function
     * failed" at off. Required. */
    trowel_status (*read_at)(void *user, uint64_t off, void *dst, size_t n);
    /* Sets *size to the bytes there are; called once, by the open.
     * Required. */
    trowel_status (*size)(void *user, uint64_t *size);
    /* Releases user when the input closes (and when the open fails: user
     * is the input's from the call on). Optional. */
    void (*close)(void *user);
} trowel_input_ops;
/* An input whose bytes come from ops (the table is copied; user is passed
 * back to each function, on the calling thread). Reads go through the same
 * 256 KiB cache window as a file's (read whole, up to 16 MiB, once it has
 * had to jump), so read_at sees few, large calls. name (copied; NULL:
 * "(callbacks)") is for messages, for formats that look at an extension,
 * and the base siblings are looked for beside (trowel_open_related). */
trowel_status trowel_input_open_callbacks(trowel_ctx *ctx, const trowel_input_ops *ops,
                                          void *user, const char *name, trowel_input **out);
/* An input over bytes [off, off + len) of parent (TROWEL_ERR_TRUNCATED past
 * its end), read through the parent, nothing copied; parent must outlive
 * it. name (copied; NULL: "(memory)") is for messages. */
trowel_status trowel_input_open_window(trowel_ctx *ctx, trowel_input *parent, uint64_t off,
                                       uint64_t len, const char *name, trowel_input **out);
/* Bytes in the input. */
uint64_t trowel_input_size(const trowel_input *in);
/* The path or name given when it was opened; owned by the input. */
const char *trowel_input_name(const trowel_input *in);
/* Closes the file (if any) and frees the input (NULL: nothing). Archives
 * opened on it must be closed first. */
void trowel_input_close(trowel_input *in);

/* ------------------------------------------------------------------ sink */

/* Where output goes. File sinks write to an unnamed file in the target's
 * folder (Linux O_TMPFILE; elsewhere a short temporary name beside the
 * target) and put it under the final name only in trowel_sink_finish, so a
 * failure, or a kill, never leaves a half-written file under that name.
 * Every sink opened must end in exactly one trowel_sink_finish or
 * trowel_sink_discard, which frees it; the sink pointer is invalid
 * afterwards. */
typedef struct trowel_sink trowel_sink;

enum {
    TROWEL_SINK_OVERWRITE = 1u << 0 /* replace an existing file */
};

/* A file sink for path; flags: TROWEL_SINK_OVERWRITE or 0. Without it an
 * existing path is TROWEL_ERR_EXISTS. */
trowel_status trowel_sink_open_file(trowel_ctx *ctx, const char *path, unsigned flags,
                                    trowel_sink **out);
/* Writes straight to an open descriptor (stdout); finish does not close it,
 * and bytes already written stay written if the sink is discarded. name
 * (copied; NULL allowed) is for messages. */
trowel_status trowel_sink_open_fd(trowel_ctx *ctx, int fd, const char *name, trowel_sink **out);
/* Collects the bytes in memory, within the context's memory limit. */
trowel_status trowel_sink_open_memory(trowel_ctx *ctx, trowel_sink **out);
/* Discards the bytes but counts them and keeps their CRC-32. */
trowel_status trowel_sink_open_null(trowel_ctx *ctx, trowel_sink **out);

/* A sink whose bytes go to a caller's functions, with no file or memory of
 * the library's: another program's container, a socket, a hash, a
 * language binding's stream. Zero-initialise the table: members may be
 * added at the end. */
typedef struct trowel_sink_ops {
    /* Takes the next n bytes (n > 0), in order. Small writes are gathered
     * in a 64 KiB buffer, so it sees few calls (a write of 64 KiB or more
     * passes whole); what is still buffered comes during
     * trowel_sink_finish. Returns TROWEL_OK, or the failure (usually
     * TROWEL_ERR_IO) that the library reports as "the write function
     * failed": the call writing into the sink fails with that status, and
     * so do every later write and the finish. Required. */
    trowel_status (*write)(void *user, const void *data, size_t n);
    /* Called by trowel_sink_finish after every byte went to write without
     * a failure: the place to commit (rename, send, close). A failure it
     * returns is the finish's, reported as "the finish function failed".
     * Optional. */
    trowel_status (*finish)(void *user);
    /* Called instead of finish when the output is thrown away: by
     * trowel_sink_discard, by trowel_sink_finish after a failed write, and
     * by a failed trowel_sink_open_callbacks. The place to undo and release
     * user. Optional. */
    void (*discard)(void *user);
} trowel_sink_ops;
/* A sink over ops (the table is copied; user is passed back to each
 * function, on the calling thread). Exactly one of finish and discard is
 * called, once, when the sink ends (if the table has it). name (copied;
 * NULL: "(callbacks)") is for messages. TROWEL_ERR_USAGE without write. */
trowel_status trowel_sink_open_callbacks(trowel_ctx *ctx, const trowel_sink_ops *ops,
                                         void *user, const char *name, trowel_sink **out);

/* Appends size bytes. After a failed write every later write returns the
 * same status, and finish fails too. */
trowel_status trowel_sink_write(trowel_sink *sink, const void *data, size_t size);
/* Bytes written so far. */
uint64_t trowel_sink_written(const trowel_sink *sink);
uint32_t trowel_sink_crc32(const trowel_sink *sink); /* null sinks only; else 0 */
/* Memory sinks: the bytes so far (owned by the sink); valid until the next
 * write, finish or discard. Other sinks: NULL and *size 0. */
const uint8_t *trowel_sink_data(const trowel_sink *sink, size_t *size);

/* Completes the output (file sinks: flush, then rename into place) and frees
 * the sink, whatever the result. */
trowel_status trowel_sink_finish(trowel_sink *sink);
/* Throws the output away (file sinks: remove the temporary) and frees. */
void trowel_sink_discard(trowel_sink *sink);

/* Finishes several file sinks as one: either every output appears under its
 * name (replacing the target where the sink may overwrite) or none does and
 * every target keeps its old bytes. All outputs are first written out in
 * full under temporary names beside their targets (and each target to be
 * replaced gets a second name to put back), so any failure up to then
 * leaves everything as it was; then they are renamed into place one by
 * one, and a failed rename puts back those already done. What remains: a
 * crash between the first and the last rename leaves some new, some old
 * (renames are atomic per file, not across files). Frees every sink;
 * TROWEL_ERR_USAGE for a sink that is not a file. */
trowel_status trowel_sinks_finish_all(trowel_sink *const *sinks, size_t count);

/* --------------------------------------------------------- output folder */

/* A folder that archive entries are extracted into. Names are checked with
 * trowel_path_normalize; missing parent folders are made; no symbolic link
 * inside the folder is ever followed; outputs are file sinks (all or
 * nothing). Closing removes the folders it made that are still empty, so
 * an extraction whose entries all failed leaves nothing behind. */
typedef struct trowel_outdir trowel_outdir;

enum {
    /* Staging: a folder that does not exist yet is made at once, empty
     * (its parents as ever), and the output is written in a private
     * folder beside it (".trowel-PID-stageN") that replaces it, whole, at
     * trowel_outdir_finish. Its files are made under their final names at
     * once, which costs fewer system calls each than unnamed files: for a
     * run making many small files. Both names go to the temp handler, so
     * a signal handler removes them with trowel_remove_temp; kill -9
     * leaves them, and the next run staging beside them, or writing into
     * that folder, removes the private one. An existing folder is written
     * in place. */
    TROWEL_OUTDIR_STAGED = 1u << 1
};

/* Opens path as the output folder, making it (and its parents) if missing.
 * flags: TROWEL_SINK_OVERWRITE (applies to every sink it makes) and
 * TROWEL_OUTDIR_STAGED, or 0. */
trowel_status trowel_outdir_open(trowel_ctx *ctx, const char *path, unsigned flags,
                                 trowel_outdir **out);
/* A file sink for an archive name inside the folder (sub-folders made as
 * needed). An unsafe name is TROWEL_ERR_UNSAFE_PATH, an existing file
 * without TROWEL_SINK_OVERWRITE TROWEL_ERR_EXISTS. The sink is the
 * caller's to finish or discard, before the folder is closed. */
trowel_status trowel_outdir_create(trowel_outdir *dir, const char *entry_name, trowel_sink **out);
/* The folder remembers every name it gave a sink: a name given again is
 * refused (TROWEL_ERR_CORRUPT, "duplicate name in the archive"), never
 * allowed to replace the first, even with TROWEL_SINK_OVERWRITE. Call this
 * before each further archive extracted into the same folder, so that a
 * clash between two archives is told apart from one inside an archive. */
void trowel_outdir_begin_archive(trowel_outdir *dir);
/* Puts a staged folder in place, whole, once every sink it made is
 * finished or discarded (one that holds no file is removed instead); no
 * sink is made in it afterwards (TROWEL_ERR_USAGE). Fails
 * (the folder removed with all it holds, so nothing is left behind) when
 * the name was taken meanwhile. A folder not staged: nothing to do. */
trowel_status trowel_outdir_finish(trowel_outdir *dir);
/* Frees the folder handle (NULL: nothing); files already finished stay,
 * except in a staged folder never finished, which is removed whole. */
void trowel_outdir_close(trowel_outdir *dir);

/* Turns an archive name into a safe relative path: backslashes become '/',
 * empty and "." components are dropped. Absolute paths, drive letters, ".."
 * components, control characters and names longer than cap-1 are refused
 * with TROWEL_ERR_UNSAFE_PATH. */
trowel_status trowel_path_normalize(const char *name, char *out, size_t cap);

/* ------------------------------------------------------------ properties */

/* An ordered list of named values: header fields for `info`, format-specific
 * keys of entries. Keys are stable identifiers (snake_case). */
typedef enum trowel_value_type {
    TROWEL_VALUE_INT,
    TROWEL_VALUE_UINT,
    TROWEL_VALUE_BOOL,
    TROWEL_VALUE_STRING,
    TROWEL_VALUE_STRING_LIST,
    TROWEL_VALUE_DOUBLE
} trowel_value_type;

typedef struct trowel_prop {
    const char *key;
    trowel_value_type type;
    int64_t i;              /* INT, BOOL */
    uint64_t u;             /* UINT */
    const char *s;          /* STRING */
    const char *const *list;/* STRING_LIST */
    size_t list_len;
    unsigned hex : 1;       /* UINT: show as hex in text output */
    double d;               /* DOUBLE (finite) */
} trowel_prop;

/* A key "group.name" is shown in JSON as "name" inside the object "group"
 * (one level), so related header fields stay together. */
/* Props belong to the archive or entry they came from. props may be NULL
 * (count 0). at: NULL past the end; find: NULL when the key is absent. */
typedef struct trowel_props trowel_props;
size_t trowel_props_count(const trowel_props *props);
const trowel_prop *trowel_props_at(const trowel_props *props, size_t index);
const trowel_prop *trowel_props_find(const trowel_props *props, const char *key);

/* --------------------------------------------------------------- formats */

typedef struct trowel_format trowel_format;

enum {
    TROWEL_CAP_INFO = 1u << 0,
    TROWEL_CAP_LIST = 1u << 1,    /* an archive: entries can be listed and read */
    TROWEL_CAP_CREATE = 1u << 2,
    TROWEL_CAP_VERIFY = 1u << 3,
    TROWEL_CAP_CONVERT = 1u << 4,
    TROWEL_CAP_MANIFEST = 1u << 5, /* extract --manifest / create --manifest */
    TROWEL_CAP_NAMES = 1u << 6,    /* stores name hashes; --names recovers names */
    TROWEL_CAP_ENTRIES = 1u << 7,  /* entries can be listed, though they hold no data to
                                      read (ASM containers); TROWEL_CAP_LIST implies it */
    /* create reads --manifest as a stream (its memory counted by the limit);
     * the manifest's "entries" name no files to read */
    TROWEL_CAP_STREAMED_MANIFEST = 1u << 8
};

/* The formats built in (static; any thread). at: NULL past the end; find:
 * NULL for an unknown id. The accessors below return static strings. */
size_t trowel_format_count(void);
const trowel_format *trowel_format_at(size_t index);
const trowel_format *trowel_format_find(const char *id);
const char *trowel_format_id(const trowel_format *f);
const char *trowel_format_family(const trowel_format *f);
const char *trowel_format_description(const trowel_format *f);
/* The file names the format is usually found under, space-separated:
 * ".grf" an extension (any case), "texte.dat" a whole name, "*_" names
 * ending in '_' (SZDD); may be "". */
const char *trowel_format_extensions(const trowel_format *f);
unsigned trowel_format_caps(const trowel_format *f);
/* What create takes besides its -O options (what a source folder holds, which
 * text chunks of a picture it reads back), as lines, or "". The create
 * options themselves are the rows of trowel_format_option_at whose targets
 * is "create". */
const char *trowel_format_create_options(const trowel_format *f);
/* The targets convert accepts, space separated, e.g. "json png". */
const char *trowel_format_convert_targets(const trowel_format *f);

/* What an option's value must be; the library refuses any other value
 * (TROWEL_ERR_USAGE) before the format sees it. */
typedef enum trowel_option_type {
    TROWEL_OPTION_STRING = 0, /* any text: a name, a file, a number the format reads */
    TROWEL_OPTION_BOOL,       /* 0 or 1 */
    TROWEL_OPTION_UINT,       /* decimal digits, from min to max */
    TROWEL_OPTION_INT,        /* decimal digits after an optional '-', from min to max */
    TROWEL_OPTION_CHOICE,     /* one of choices */
    TROWEL_OPTION_REAL        /* a finite decimal number ("0.5", "2e3"), from min to max */
} trowel_option_type;

/* One "-O key=value" option a format takes when it is read (extract),
 * converted or created. Each format declares its options once, in one
 * table; the library checks options against it (key, then value) and tools
 * list it. */
typedef struct trowel_option_info {
    const char *key;
    const char *value;   /* what the value is, e.g. "0|1", "N", "FILE" */
    const char *help;    /* what it does, one line */
    const char *targets; /* the convert targets it applies to, space
                            separated; "create": a create option; NULL: a
                            reading option */
    trowel_option_type type;
    int64_t min, max;    /* UINT, INT and REAL: the values allowed (both 0: any;
                            for UINT, any from 0) */
    const char *choices; /* CHOICE: the values allowed, '|' separated; UINT and
                            INT: words allowed beside the numbers ("none") */
    const char *def;     /* the value taken when the option is not given, as
                            text; NULL when it depends on the input or on
                            other options (the help says how) */
} trowel_option_info;

/* The format's reading, convert and create options, in order: index from 0
 * until NULL. */
const trowel_option_info *trowel_format_option_at(const trowel_format *f, size_t index);

/* Asks every format to bid for the input as it is (no filters: see
 * trowel_archive_open); the highest bid wins. Returns
 * TROWEL_ERR_UNSUPPORTED when no format recognises it. bid may be NULL.
 * Reads the input only; *out is a static format. */
trowel_status trowel_detect(trowel_ctx *ctx, trowel_input *in, const trowel_format **out, int *bid);

/* --------------------------------------------------------------- entries */

typedef struct trowel_entry {
    const char *name;      /* as stored in the archive (restored where known) */
    uint64_t size;         /* bytes after decoding */
    uint64_t packed_size;  /* bytes as stored */
    uint64_t offset;       /* where the stored bytes start in the archive */
    const char *method;    /* "stored", "lzss", ... */
    uint32_t flags;        /* format-specific */
    size_t index;          /* position in the archive's directory */
    const trowel_props *extra; /* format-specific keys; never NULL */
} trowel_entry;

/* -------------------------------------------------------------- archives */

/* Any opened file. Single-file formats and plain assets show one entry or
 * none; every format answers info. */
typedef struct trowel_archive trowel_archive;

/* Parses the input's header and directory (entries are decoded only when
 * read). fmt NULL: detect. The input must outlive the archive; the archive
 * uses the context it was opened with.
 *
 * Input filters come first: a wrapper that hides a format (SCUMM's XOR
 * 0x69, an SZDD file around a format trowel knows) is peeled, up to four
 * deep, and the format reads what it hid. Without fmt a filter is kept
 * only when some format bids at least a magic number's worth on the peeled
 * bytes, so a wrapper around nothing known stays what it is (an SZDD file
 * of unknown content opens as szdd, as before). With fmt, the input is
 * read as fmt: through the filters whose peeled bytes fmt recognises if
 * there are any, else as it is (so -t szdd still opens an SZDD-wrapped
 * file as szdd). The peeled bytes live with the archive (a virtual input
 * for XOR, counted memory for SZDD) and go when it is closed. */
trowel_status trowel_archive_open(trowel_ctx *ctx, trowel_input *in, const trowel_format *fmt,
                                  trowel_archive **out);
/* The same, for a caller that reads the entries one after the other, each
 * once (extract): a format may then leave work on an entry until the entry
 * is asked for, so that it overlaps the caller's own work on the entries
 * before it (scenes.image learns whether a scene can become text, which
 * names it .vcd or .bvcd, as it reads the scene, instead of reading every
 * scene first). What the archive shows is the same: asking for the info,
 * JSON, a manifest, names, options or verify finishes that work for every
 * entry first. Work that fails there for want of memory is left for
 * reading the entry to report, where trowel_archive_open fails. */
trowel_status trowel_archive_open_in_order(trowel_ctx *ctx, trowel_input *in,
                                           const trowel_format *fmt, trowel_archive **out);
/* The filters peeled to reach the format, outermost first ("xor69",
 * "szdd"): count 0 for a plain file; id NULL past the end. */
size_t trowel_archive_filter_count(const trowel_archive *a);
const char *trowel_archive_filter_id(const trowel_archive *a, size_t index);
/* Frees the archive, its entries and props (NULL: nothing); not the input. */
void trowel_archive_close(trowel_archive *a);

const trowel_format *trowel_archive_format(const trowel_archive *a);
/* Header fields: always "format" and "version"; then format-specific keys. */
const trowel_props *trowel_archive_info(const trowel_archive *a);
size_t trowel_archive_entry_count(const trowel_archive *a);
/* NULL past the end; owned by the archive (names may change after
 * trowel_archive_set_names). */
const trowel_entry *trowel_archive_entry(const trowel_archive *a, size_t index);
/* True when the file is damaged (truncated or partly corrupt) but could be
 * opened: the entries listed are those that can still be found; reading one
 * whose data is cut off or corrupt fails with an error naming it, the others
 * read as usual. Each problem went to the warning handler when the archive
 * was opened, and verify reports them. A caller listing or extracting
 * should still fail (the CLI exits 1). */
bool trowel_archive_damaged(const trowel_archive *a);

/* Formats that store only hashes of names (scenes.image): path is a text
 * file of candidate names, one per line, or a folder scanned for candidate
 * files; entries whose hash matches a candidate take its name. Other
 * formats answer TROWEL_ERR_UNSUPPORTED. */
trowel_status trowel_archive_set_names(trowel_archive *a, const char *path);

/* Reading options ("key=value"), e.g. "raw=1": extract entries as stored
 * rather than converted. Keys the format does not list as reading options
 * (trowel_format_option_at) are TROWEL_ERR_USAGE, with a message that lists
 * the valid ones. */
trowel_status trowel_archive_set_options(trowel_archive *a, const char *const *options,
                                         size_t option_count);

/* Streams one entry's decoded bytes into the sink (the sink is not
 * finished: the caller finishes it on TROWEL_OK, discards it otherwise).
 * Checks the entry's checksums and sizes as it goes. An index past the end
 * or a NULL sink is TROWEL_ERR_USAGE. */
trowel_status trowel_archive_read_entry(trowel_archive *a, size_t index, trowel_sink *out);

/* True when trowel_archive_read_entry, with the options set now, writes
 * exactly the entry's size bytes (or fails). False when the bytes are
 * converted on the way (scenes.image writes text VCDs unless raw=1), so
 * their count is known only once the entry has been read. Answers from
 * the directory alone: nothing is read (but on an archive opened with
 * trowel_archive_open_in_order, the work left on entries up to index is
 * done first). False for an index past the end. */
bool trowel_archive_entry_size_exact(const trowel_archive *a, size_t index);

/* Reads entry index whole into memory that the context's memory limit
 * counts (the memory stays counted until it is freed, so what a caller
 * keeps narrows what later work may allocate). The same bytes, checks and
 * errors as trowel_archive_read_entry. On TROWEL_OK *data holds *size bytes
 * (NULL when the entry is empty), freed with trowel_archive_free_data on
 * the same archive (or another of the same context); on failure *data is
 * NULL and *size 0. When the size is exact, the memory is sized once. */
trowel_status trowel_archive_read_entry_data(trowel_archive *a, size_t index, uint8_t **data,
                                             size_t *size);
/* Frees what trowel_archive_read_entry_data returned (NULL: nothing). */
void trowel_archive_free_data(trowel_archive *a, uint8_t *data);

/* The deepest nesting trowel_archive_open_entry opens (an archive inside
 * an entry inside an entry ... of a file on disk counts 1 per level). */
#define TROWEL_NEST_MAX 8

/* Opens entry index of a as an archive of its own (a .str2_pc inside a
 * .vpp_pc), without writing it anywhere: an entry stored as is is read
 * through a window of a's input; any other is decoded into memory first
 * (within the memory limit). fmt NULL: detected. The nested archive's
 * input is named "OUTER/ENTRY" and its error offsets count from the
 * entry's first byte. Close it (trowel_archive_close) before a; it frees
 * what it owns. Past TROWEL_NEST_MAX levels: TROWEL_ERR_LIMIT; an entry
 * that is no archive trowel knows: TROWEL_ERR_UNSUPPORTED. */
trowel_status trowel_archive_open_entry(trowel_archive *a, size_t index, const trowel_format *fmt,
                                        trowel_archive **nested);

/* Reads one entry's decoded bytes at any offset without holding them all,
 * for a caller that serves reads as they come (trowel mount): a stored
 * entry is read in place from the archive's input, one in a seekable
 * stream (a VPP's zlib or LZ4 entry, or its place in a solid stream)
 * through a decoder kept where the last read ended: reading on goes on
 * decoding, reading backwards starts it again from the stream's start.
 * It holds one decoder and one read's bytes, whatever the entry's size.
 * Checks: the entry's size, and the stream's own end checks (Adler-32,
 * no data after it) once a read reaches the entry's end; a checksum the
 * format keeps over the whole entry is not checked (verify does).
 * Entries it cannot read this way (one only a whole decode gives: the
 * Delphine packer, LZSS, a converted text VCD; a damaged archive's):
 * TROWEL_ERR_UNSUPPORTED, with nothing set on the context, so the caller
 * reads them whole (trowel_archive_read_entry_data). The reader uses a and
 * its context: close it before a; like a, one thread at a time. */
typedef struct trowel_entry_reader trowel_entry_reader;
trowel_status trowel_entry_reader_open(trowel_archive *a, size_t index,
                                       trowel_entry_reader **out);
/* Copies up to len bytes from offset of the entry into buf; *got is how
 * many (fewer only at the entry's end, 0 at or past it). On failure (the
 * data is cut or corrupt there) the context's last error names the entry
 * and *got is 0; later reads may be tried again. */
trowel_status trowel_entry_reader_read(trowel_entry_reader *r, uint64_t offset, void *buf,
                                       size_t len, size_t *got);
/* The entry's decoded size. */
uint64_t trowel_entry_reader_size(const trowel_entry_reader *r);
/* Frees the reader (NULL: nothing). */
void trowel_entry_reader_close(trowel_entry_reader *r);

/* One problem found by verify. */
typedef void (*trowel_verify_fn)(void *user, const trowel_error *problem);
/* Checks every checksum, size and offset the format has. Each problem goes
 * to fn (may be NULL; the problem is valid during the call only); the
 * result is TROWEL_ERR_VERIFY if there was any. */
trowel_status trowel_archive_verify(trowel_archive *a, trowel_verify_fn fn, void *user);

/* The archive as one JSON document: what selects the parts. */
enum {
    TROWEL_JSON_INFO = 1u << 0,    /* file, format, version, header fields, counts */
    TROWEL_JSON_ENTRIES = 1u << 1, /* "entries": [{name, size, packed_size, offset, method, ...}] */
    TROWEL_JSON_PRETTY = 1u << 2   /* indented, for people */
};
/* On TROWEL_OK *json_out is NUL-terminated text the caller frees with
 * trowel_free; on failure it is NULL. Every JSON text trowel makes is
 * valid UTF-8: a string that is not (a CP1252 name) is given as its bytes
 * read as CP1252, and an object member "KEY" so changed gets a sibling
 * "KEY_bytes" with the exact bytes in hex ("name_bytes"), which create
 * --manifest puts back. */
trowel_status trowel_archive_to_json(trowel_archive *a, unsigned what, char **json_out);

/* What `create --manifest` needs to rebuild this archive, as JSON text
 * (caller frees with trowel_free): {"trowel_manifest": 1, "format": id,
 * "entries": [{"name": ...}, ...] in directory order, format keys...}. */
trowel_status trowel_archive_manifest(trowel_archive *a, char **json_out);
/* The same rule for a json-c document a program builds itself (the CLI's
 * own JSON): every string member that is not UTF-8 is made readable and
 * gets its "KEY_bytes" sibling; strings in arrays are made readable. */
struct json_object;
void trowel_json_make_utf8(struct json_object *doc);

/* ---------------------------------------------------------------- create */

typedef struct trowel_source {
    const char *name;   /* the name to store in the archive */
    const char *path;   /* where to read the bytes from */
} trowel_source;

typedef struct trowel_create_params {
    const trowel_source *sources;
    size_t source_count;
    const char *const *options; /* "key=value" strings from -O */
    size_t option_count;
    const char *manifest_json;  /* NULL, or what trowel_archive_manifest made */
    const char *base_dir;       /* with a manifest and no sources: where the
                                   manifest's entries are read from (NULL: ".") */
} trowel_create_params;

/* The format a manifest names (so `create --manifest` needs no -t); a
 * manifest that is not JSON or names no known format fails. */
trowel_status trowel_manifest_format(trowel_ctx *ctx, const char *manifest_json,
                                     const trowel_format **out);

/* Builds a new file of format f (one with TROWEL_CAP_CREATE) from the
 * sources or the manifest, writing it to out; the sink is the caller's to
 * finish (on TROWEL_OK) or discard. Every string in params is read during
 * the call only. Bad options or sources are TROWEL_ERR_USAGE. Two sources
 * the format would store under one name (a/x.txt and b/x.txt where names
 * are flat) are refused, naming both, unless the options hold
 * TROWEL_CREATE_KEEP_LAST (accepted by every format): then the last is
 * kept, with a warning. */
#define TROWEL_CREATE_KEEP_LAST "keep_last=1"
trowel_status trowel_create(trowel_ctx *ctx, const trowel_format *f,
                            const trowel_create_params *params, trowel_sink *out);

/* trowel_create with a second file the format rewrites along with the one
 * it builds (vpp with -O asm=FILE: the ASM whose container, the one named
 * after out's file name, describes the new .str2_pc). companion_in holds
 * that file's current bytes, companion_out receives the updated ones. The
 * caller opens both (the library opens no path of its own) and finishes
 * out and companion_out together with trowel_sinks_finish_all, or discards
 * both. */
trowel_status trowel_create_with_companion(trowel_ctx *ctx, const trowel_format *f,
                                           const trowel_create_params *params,
                                           trowel_input *companion_in,
                                           trowel_sink *companion_out, trowel_sink *out);

/* ---------------------------------------------------------------- writer */

/* A new file built from entries handed over one at a time, as libarchive's
 * archive_write_*: open, then for each entry begin_entry, write (any number
 * of times) or write_input, end_entry; then finish (or abort). The caller
 * needs no file: an entry's bytes may come from memory, another archive or
 * a decoder. trowel_create is this writer fed with its sources.
 *
 * What the formats get: each format builds the whole file at once from
 * every entry (a directory written first needs every size), so the writer
 * keeps the entries' bytes until finish, in memory the context's limit
 * counts up to 1 MiB (or a tenth of the limit, if smaller) and past it in
 * one unnamed temporary file that goes with the writer. During finish a
 * name the format opens that is an entry's name (with the open hook's base
 * NULL: a costume.json's pictures, named beside it) is that entry's bytes;
 * every other file goes to the context's io hooks as usual. */
typedef struct trowel_writer trowel_writer;

/* A writer of format f (one with TROWEL_CAP_CREATE, else
 * TROWEL_ERR_UNSUPPORTED) into out, the caller's sink, which the caller
 * finishes once trowel_writer_finish returned TROWEL_OK, and discards
 * otherwise (also after trowel_writer_abort). options ("key=value", as for
 * trowel_create; TROWEL_CREATE_KEEP_LAST included) and manifest_json
 * (NULL: none; what trowel_archive_manifest made, or for a format with
 * TROWEL_CAP_STREAMED_MANIFEST its whole description) are copied; the
 * format checks them when finish builds. */
trowel_status trowel_writer_open(trowel_ctx *ctx, const trowel_format *f,
                                 const char *const *options, size_t option_count,
                                 const char *manifest_json, trowel_sink *out,
                                 trowel_writer **w);

/* One entry to write. Zero-initialise it: members may be added at the
 * end. */
typedef struct trowel_writer_entry {
    const char *name;  /* the name to store (copied) */
    uint64_t size;     /* the bytes that will be written, or TROWEL_SIZE_UNKNOWN */
    /* The entry's format keys, as a manifest entry holds them ("compressed"
     * of a scenes.image scene, "name_field" of a part file): typically the
     * extra props of the entry read from an archive of the same format
     * (trowel_entry.extra), to rebuild it alike. They go into the
     * manifest's entry at this entry's position (the writer makes the
     * manifest when none was given), over keys it holds. Read during the
     * call only. NULL: none. A format that reads its manifest as text
     * (TROWEL_CAP_STREAMED_MANIFEST) takes none: TROWEL_ERR_USAGE. */
    const trowel_props *props;
} trowel_writer_entry;

/* Starts entry e (TROWEL_ERR_USAGE while another is open or after a
 * failed write). Its name is checked as create checks names: one that
 * trowel_path_normalize refuses is TROWEL_ERR_UNSAFE_PATH; one already
 * given (compared after normalising) is TROWEL_ERR_USAGE, unless the
 * options hold TROWEL_CREATE_KEEP_LAST: then this entry replaces the
 * earlier one, with a warning. A refused entry leaves the writer as it
 * was, ready for the next. */
trowel_status trowel_writer_begin_entry(trowel_writer *w, const trowel_writer_entry *e);
/* Appends size bytes to the open entry (TROWEL_ERR_USAGE with none open,
 * or past the size it announced). A failure to keep the bytes (memory,
 * the temporary file) ends the writer: every later call but abort fails
 * with it. */
trowel_status trowel_writer_write(trowel_writer *w, const void *data, size_t size);
/* Appends the whole of in (read during the call only; it stays the
 * caller's) to the open entry, as trowel_writer_write. */
trowel_status trowel_writer_write_input(trowel_writer *w, trowel_input *in);
/* Ends the open entry (TROWEL_ERR_USAGE with none open, or when fewer
 * bytes came than its size announced). */
trowel_status trowel_writer_end_entry(trowel_writer *w);
/* vpp -O asm=FILE (as trowel_create_with_companion): companion_in holds
 * the companion's current bytes, companion_out receives the rewritten
 * ones; both stay the caller's and must outlive the writer. Only before
 * the first entry (else TROWEL_ERR_USAGE). */
trowel_status trowel_writer_set_companion(trowel_writer *w, trowel_input *companion_in,
                                          trowel_sink *companion_out);
/* Builds the file into out from the entries (and the manifest) and frees
 * w, whatever the result: the format's checks and errors are
 * trowel_create's. An entry still open is TROWEL_ERR_USAGE (nothing
 * built). */
trowel_status trowel_writer_finish(trowel_writer *w);
/* Frees w and what it kept, writing nothing more to out (NULL: nothing);
 * the caller discards out. */
void trowel_writer_abort(trowel_writer *w);

/* --------------------------------------------------------------- convert */

/* Converts the input to the named target ("json", "png", ...). Every format
 * accepts "json" (its structure); others are listed per format
 * (trowel_format_convert_targets). Options are "key=value" strings that
 * must be ones the format lists for that target (trowel_format_option_at),
 * else TROWEL_ERR_USAGE with a message that lists the valid ones; a target
 * the format lacks is TROWEL_ERR_UNSUPPORTED. The sink is the caller's to
 * finish or discard. */
trowel_status trowel_convert(trowel_ctx *ctx, trowel_archive *a, const char *target,
                             const char *const *options, size_t option_count, trowel_sink *out);

/* True when converting a's input to target writes a folder of files (a
 * costume's pictures, sheet and atlas) rather than one file: such targets
 * go through trowel_convert_folder, and trowel_convert refuses them. */
bool trowel_convert_makes_folder(const trowel_archive *a, const char *target);
/* Converts into the folder dir (trowel_outdir_open), with the same option
 * checks as trowel_convert. Files finished before a failure stay. */
trowel_status trowel_convert_folder(trowel_ctx *ctx, trowel_archive *a, const char *target,
                                    const char *const *options, size_t option_count,
                                    trowel_outdir *dir);

/* ---------------------------------------------------------------- codecs */

typedef struct trowel_codec trowel_codec;

/* The codecs built in (static; any thread). at: NULL past the end; find:
 * NULL for an unknown id. */
size_t trowel_codec_count(void);
const trowel_codec *trowel_codec_at(size_t index);
const trowel_codec *trowel_codec_find(const char *id);
const char *trowel_codec_id(const trowel_codec *c);
const char *trowel_codec_description(const trowel_codec *c);

#define TROWEL_SIZE_UNKNOWN UINT64_MAX

/* Raw codec streams (no container header), from the whole input to the
 * sink, which the caller then finishes or discards. expected_size is the
 * decoded size when known (else TROWEL_SIZE_UNKNOWN): the decoder then
 * refuses to produce more or less. */
trowel_status trowel_codec_compress(trowel_ctx *ctx, const trowel_codec *c, trowel_input *in,
                                    trowel_sink *out);
trowel_status trowel_codec_decompress(trowel_ctx *ctx, const trowel_codec *c, trowel_input *in,
                                      uint64_t expected_size, trowel_sink *out);
/* compress with "key=value" options: "level=N" for codecs with levels
 * (zlib 0-9, lz4 0-12; see trowel_codec_levels). Unknown keys, or any key
 * for a codec without options, are TROWEL_ERR_USAGE. */
trowel_status trowel_codec_compress_with(trowel_ctx *ctx, const trowel_codec *c, trowel_input *in,
                                         const char *const *options, size_t option_count,
                                         trowel_sink *out);
/* The codec's level range and default; returns 0 (and leaves the outputs
 * alone) for codecs without levels. */
int trowel_codec_levels(const trowel_codec *c, int *min, int *max, int *def);

/* ------------------------------------------------------------------ misc */

/* Frees memory the library handed to the caller (JSON text); NULL: nothing. */
void trowel_free(void *p);

/* The CRC-32 (zlib's polynomial) of data continued from crc; start at 0. */
uint32_t trowel_crc32(uint32_t crc, const void *data, size_t size);

#if defined(TROWEL_BUILDING) && (defined(__GNUC__) || defined(__clang__))
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
