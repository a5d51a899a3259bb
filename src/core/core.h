/*
 * Internal core: the context, errors, limit-aware memory, property lists and
 * small helpers shared by every module. Not installed.
 */
#ifndef TROWEL_CORE_H
#define TROWEL_CORE_H

#include "trowel/trowel.h"

#include <stdarg.h>
#include <stdbool.h>

#if defined(__GNUC__) || defined(__clang__)
#define TROWEL_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TROWEL_LIKELY(x) __builtin_expect(!!(x), 1)
#define TROWEL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TROWEL_PRINTF(f, a)
#define TROWEL_LIKELY(x) (x)
#define TROWEL_UNLIKELY(x) (x)
#endif

struct trowel_ctx {
    uint64_t mem_limit;
    unsigned threads;          /* 0: one per online CPU */
    uint64_t mem_in_use;       /* bytes handed out by trowel_mem_alloc, alive now */
    uint64_t fail_alloc_after; /* tests: fail the Nth allocation (0 = never) */
    bool named_temps_only;     /* tests: file sinks use the named fallback */
    unsigned fail_commit_at;   /* tests: the Nth rename of trowel_sinks_finish_all
                                * fails (0 = never) */
    uint64_t worker_share;     /* tests: a worker job's share of the limit
                                * (0 = worker.c's) */
    unsigned worker_jobs;      /* tests: jobs workers started for this context */
    /* Memory held for work done ahead (a worker's share, what it made):
     * when an allocation would pass the limit, reclaim_fn gives it all
     * back first, so that what the caller asks for is admitted or refused
     * exactly as it would be without it (trowel_mem_set_reclaim). */
    void (*reclaim_fn)(void *user);
    void *reclaim_user;
    bool reclaiming;
    const char *mem_purpose;   /* see trowel_mem_purpose */
    trowel_error last_error;
    trowel_warning_fn warn_fn;
    void *warn_user;
    trowel_warning_fn note_fn; /* what a call did, for verbose callers */
    void *note_user;
    trowel_progress_fn progress_fn;
    void *progress_user;
    trowel_temp_fn temp_fn;
    void *temp_user;
    trowel_io_hooks io;        /* see trowel_ctx_set_io_hooks */
    void *io_user;
    char entry[256];           /* entry being handled, copied into errors */
    uint64_t progress_base;    /* see trowel_progress_scope */
    uint64_t progress_span;
    uint64_t progress_total;
    unsigned siblings_refused; /* related files there but unreadable (a FIFO):
                                * the archive opening then is damaged */
    uint64_t swept[64][2];     /* folders (device, inode) already cleared of
                                * stale temporaries (sink.c), newest last */
    unsigned swept_count;
    signed char proc_fd_usable; /* sink.c: /proc/self/fd can link unnamed files
                                 * (1), cannot (-1), not looked at yet (0) */
    bool flink_refused;        /* sink_file.c: a link by descriptor
                                * (AT_EMPTY_PATH) failed where /proc/self/fd
                                * worked: only /proc from then on */
    bool last_target_existed;  /* sink.c: the last file sink replaced a file */
};

/* ---- errors: set the context's last error and return the status, so a
 * parser can write `return trowel_fail(ctx, ...)`. */
trowel_status trowel_fail(trowel_ctx *ctx, trowel_status status, uint64_t offset,
                          const char *fmt, ...) TROWEL_PRINTF(4, 5);
trowel_status trowel_vfail(trowel_ctx *ctx, trowel_status status, uint64_t offset,
                           const char *fmt, va_list ap) TROWEL_PRINTF(4, 0);
void trowel_warn(trowel_ctx *ctx, uint64_t offset, const char *fmt, ...) TROWEL_PRINTF(3, 4);
/* Hands warnings made elsewhere (kept by a worker thread) to ctx's
 * handler, in order: list[from, to), no further than count. */
void trowel_pass_warnings(trowel_ctx *ctx, const trowel_error *list, size_t count, size_t from,
                          size_t to);
/* Tells the note handler (if any) what was done, about the current entry. */
void trowel_note(trowel_ctx *ctx, const char *fmt, ...) TROWEL_PRINTF(2, 3);
/* The entry named in errors from now on ("" or NULL for none). */
void trowel_set_entry(trowel_ctx *ctx, const char *name);
/* Reports progress of the current piece of work (bytes of one stream).
 * Inside an archive entry the archive layer maps it onto the whole archive,
 * so a caller sees one steady count across entries. */
void trowel_progress(trowel_ctx *ctx, uint64_t done, uint64_t total);
/* The archive layer: the piece now running covers [base, base + span) of a
 * whole of total (all 0 to report pieces as they are). */
void trowel_progress_scope(trowel_ctx *ctx, uint64_t base, uint64_t span, uint64_t total);

/* How many threads to use for `pieces` independent pieces of work: the
 * context's setting (or the online CPUs), no more than the pieces, at
 * least 1. */
unsigned trowel_threads_for(const trowel_ctx *ctx, size_t pieces);

/* ---- memory. Every allocation whose size comes from file data goes through
 * these: they refuse (TROWEL_ERR_LIMIT, with an error set) what would take
 * the live total past the context's limit. */
void *trowel_mem_alloc(trowel_ctx *ctx, size_t size);
void *trowel_mem_calloc(trowel_ctx *ctx, size_t count, size_t size);
void *trowel_mem_realloc(trowel_ctx *ctx, void *p, size_t size);
void trowel_mem_free(trowel_ctx *ctx, void *p);
char *trowel_mem_strdup(trowel_ctx *ctx, const char *s);
/* The same, for code that hands the status on (errors travel with the
 * call: a caller returns what it got, never ctx->last_error). out_ptr is
 * the address of a pointer of any object type (T **); it is set to the
 * block, or to NULL on failure. _new_zeroed is calloc's; _resize keeps
 * *inout_ptr as it was on failure; _dup_bytes makes at least one byte. */
trowel_status trowel_mem_new(trowel_ctx *ctx, size_t size, void *out_ptr);
trowel_status trowel_mem_new_zeroed(trowel_ctx *ctx, size_t count, size_t size, void *out_ptr);
trowel_status trowel_mem_resize(trowel_ctx *ctx, void *inout_ptr, size_t size);
trowel_status trowel_mem_resize_array(trowel_ctx *ctx, void *inout_ptr, size_t count,
                                      size_t size);
trowel_status trowel_mem_dup(trowel_ctx *ctx, const char *s, char **out);
trowel_status trowel_mem_dup_bytes(trowel_ctx *ctx, const void *data, size_t size, void *out_ptr);
/* Sets (fn NULL: clears) what gives back the memory ctx holds for work
 * done ahead, called when an allocation would pass the limit; the
 * allocation is then tried again. fn must not allocate on ctx. */
void trowel_mem_set_reclaim(trowel_ctx *ctx, void (*fn)(void *user), void *user);
/* Moves block p (allocated on from) onto to's count, as if to had
 * allocated it; false (nothing moved, no error set) when it does not fit
 * under to's limit. For a second thread's result (worker.h). */
bool trowel_mem_take_over(trowel_ctx *from, trowel_ctx *to, void *p);
/* Ends ctx's count of block p and gives it as a raw allocation that
 * trowel_mem_release frees on any thread: for a block a second thread
 * frees first thing, where it was allocated (a free from another thread
 * waits for that thread's heap). NULL for NULL. */
void *trowel_mem_disown(trowel_ctx *ctx, void *p);
void trowel_mem_release(void *raw);
/* Checks, without allocating, that size more bytes fit under the limit;
 * what names them in the error ("the LZMA decoder"). */
trowel_status trowel_mem_check(trowel_ctx *ctx, uint64_t size, const char *what);
/* Names what the allocations from now on are for, so that an allocation
 * the limit refuses says so in words: "over the memory limit: needs 256
 * KiB for <what>, 12 KiB already in use, limit 300 KiB (--mem-limit)".
 * what must outlive its use (a string literal); NULL: unnamed. Returns the
 * purpose it replaces, for the caller to restore. */
const char *trowel_mem_purpose(trowel_ctx *ctx, const char *what);

/* Overflow-checked arithmetic for sizes read from files. */
static inline bool trowel_add_overflows(uint64_t a, uint64_t b, uint64_t *sum)
{
    *sum = a + b;
    return *sum < a;
}
static inline bool trowel_mul_overflows(uint64_t a, uint64_t b, uint64_t *product)
{
    if (a != 0 && b > UINT64_MAX / a)
        return true;
    *product = a * b;
    return false;
}

/* ---- property lists (trowel_props). Strings and keys are copied. */
trowel_props *trowel_props_new(trowel_ctx *ctx);
trowel_status trowel_props_create(trowel_ctx *ctx, trowel_props **out);
/* A list whose memory is cut from within's (which must outlive it):
 * freeing it does nothing, freeing within frees both. For many small
 * lists that go together (an archive's entries). */
trowel_status trowel_props_create_within(trowel_props *within, trowel_props **out);
void trowel_props_free(trowel_props *p);
trowel_status trowel_props_add_int(trowel_props *p, const char *key, int64_t v);
trowel_status trowel_props_add_uint(trowel_props *p, const char *key, uint64_t v);
trowel_status trowel_props_add_hex(trowel_props *p, const char *key, uint64_t v);
trowel_status trowel_props_add_double(trowel_props *p, const char *key, double v);
trowel_status trowel_props_add_bool(trowel_props *p, const char *key, bool v);
trowel_status trowel_props_add_str(trowel_props *p, const char *key, const char *v);
trowel_status trowel_props_add_list(trowel_props *p, const char *key, const char *const *v, size_t n);
/* The same without copying: the array and its strings must outlive the
 * list (a format's model, freed when its archive closes), unchanged. For
 * long lists on many entries, where the copies cost more than the rest of
 * opening the file. */
trowel_status trowel_props_add_list_kept(trowel_props *p, const char *key,
                                         const char *const *v, size_t n);
const trowel_props *trowel_props_empty(void);

/* ---- options ("key=value" strings from -O). */
/* Refuses (TROWEL_ERR_USAGE) any key not in the NULL-terminated allowed list. */
trowel_status trowel_options_check(trowel_ctx *ctx, const char *const *opts, size_t n,
                                   const char *const *allowed);
/* Refuses (TROWEL_ERR_USAGE) any option the format's table does not list
 * for target (NULL: reading options), naming the format and the valid keys. */
trowel_status trowel_options_check_format(trowel_ctx *ctx, const trowel_format *f,
                                          const char *target, const char *const *opts, size_t n);
/* The value of the last "key=..." given, or NULL. */
const char *trowel_options_get(const char *const *opts, size_t n, const char *key);

/* ---- inputs */
/* The input's file name, for formats that take an entry's name from it
 * (SZDD); NULL for a stream, whose name is only a label ("(standard
 * input)"). */
const char *trowel_input_file_name(const trowel_input *in);

/* ---- JSON text (json_utf8.c): documents are valid UTF-8, names' bytes
 * stay recoverable. */
struct json_object;
/* True when s[0, n) is well-formed UTF-8 (no overlong forms, surrogates or
 * code points past U+10FFFF). */
bool trowel_utf8_valid(const uint8_t *s, size_t n);
/* json_object_to_json_string_ext, after trowel_json_make_utf8 when the
 * text would not be UTF-8; the text belongs to o. */
const char *trowel_json_text_utf8(struct json_object *o, int flags);
/* Undoes trowel_json_make_utf8 on a document read back (a manifest):
 * every "KEY_bytes" hex string beside a string "KEY" puts its bytes back
 * under "KEY". */
void trowel_json_restore_bytes(struct json_object *o);

/* ---- CRC-32 (IEEE, as zlib) */
uint32_t trowel_crc32_update(uint32_t crc, const void *data, size_t size);

#endif
