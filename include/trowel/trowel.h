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
 */
#ifndef TROWEL_TROWEL_H
#define TROWEL_TROWEL_H

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

/* Returns the version of the library actually linked. */
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

/* A short, static, lower-case description of a status. */
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

/* Returns NULL only when memory is exhausted. */
trowel_ctx *trowel_ctx_new(void);
void trowel_ctx_free(trowel_ctx *ctx);

/* The most memory one allocation sized by file data, and all such
 * allocations alive together, may take. 0 restores the default. */
void trowel_ctx_set_mem_limit(trowel_ctx *ctx, uint64_t bytes);
uint64_t trowel_ctx_mem_limit(const trowel_ctx *ctx);

/* How many threads one call may use where the work splits (the Delphine
 * packer's encoder does): 1 keeps every call on the caller's thread; 0,
 * the default, means one per online CPU. Outputs never depend on it.
 * Callbacks are only ever called from the caller's thread. */
void trowel_ctx_set_threads(trowel_ctx *ctx, unsigned threads);
unsigned trowel_ctx_threads(const trowel_ctx *ctx);

typedef void (*trowel_warning_fn)(void *user, const trowel_error *warning);
/* Called for recoverable problems (a sanitised name, an ignored field). */
void trowel_ctx_set_warning_handler(trowel_ctx *ctx, trowel_warning_fn fn, void *user);

typedef void (*trowel_progress_fn)(void *user, uint64_t done, uint64_t total);
/* Called now and then during long work; total is 0 when unknown. */
void trowel_ctx_set_progress_handler(trowel_ctx *ctx, trowel_progress_fn fn, void *user);

const trowel_error *trowel_ctx_last_error(const trowel_ctx *ctx);
void trowel_ctx_clear_error(trowel_ctx *ctx);

/* ----------------------------------------------------------------- input */

/* A read-only source of bytes: a file (read with pread, never mapped, never
 * modified) or a caller's memory. */
typedef struct trowel_input trowel_input;

trowel_status trowel_input_open_file(trowel_ctx *ctx, const char *path, trowel_input **out);
/* The memory must outlive the input; it is not copied. */
trowel_status trowel_input_open_memory(trowel_ctx *ctx, const void *data, size_t size,
                                       const char *name, trowel_input **out);
/* Reads everything from fd (a pipe, standard input) into memory that the
 * input owns and the memory limit counts; more than the limit allows is
 * TROWEL_ERR_LIMIT. fd is left open. name is for messages. */
trowel_status trowel_input_open_stream(trowel_ctx *ctx, int fd, const char *name,
                                       trowel_input **out);
uint64_t trowel_input_size(const trowel_input *in);
const char *trowel_input_name(const trowel_input *in);
void trowel_input_close(trowel_input *in);

/* ------------------------------------------------------------------ sink */

/* Where output goes. File sinks write to a temporary name beside the target
 * and rename it into place only in trowel_sink_finish, so a failure never
 * leaves a half-written file under the final name. */
typedef struct trowel_sink trowel_sink;

enum {
    TROWEL_SINK_OVERWRITE = 1u << 0 /* replace an existing file */
};

trowel_status trowel_sink_open_file(trowel_ctx *ctx, const char *path, unsigned flags,
                                    trowel_sink **out);
/* Writes straight to an open descriptor (stdout); finish does not close it. */
trowel_status trowel_sink_open_fd(trowel_ctx *ctx, int fd, const char *name, trowel_sink **out);
/* Collects the bytes in memory, within the context's memory limit. */
trowel_status trowel_sink_open_memory(trowel_ctx *ctx, trowel_sink **out);
/* Discards the bytes but counts them and keeps their CRC-32. */
trowel_status trowel_sink_open_null(trowel_ctx *ctx, trowel_sink **out);

trowel_status trowel_sink_write(trowel_sink *sink, const void *data, size_t size);
uint64_t trowel_sink_written(const trowel_sink *sink);
uint32_t trowel_sink_crc32(const trowel_sink *sink); /* null sinks only; else 0 */
/* Memory sinks: the bytes so far; valid until the next write or free. */
const uint8_t *trowel_sink_data(const trowel_sink *sink, size_t *size);

/* Completes the output (file sinks: flush, then rename into place) and frees
 * the sink, whatever the result. */
trowel_status trowel_sink_finish(trowel_sink *sink);
/* Throws the output away (file sinks: remove the temporary) and frees. */
void trowel_sink_discard(trowel_sink *sink);

/* --------------------------------------------------------- output folder */

/* A folder that archive entries are extracted into. Names are checked with
 * trowel_path_normalize; missing parent folders are made; no symbolic link
 * inside the folder is ever followed; outputs go through temporary names. */
typedef struct trowel_outdir trowel_outdir;

trowel_status trowel_outdir_open(trowel_ctx *ctx, const char *path, unsigned sink_flags,
                                 trowel_outdir **out);
/* A file sink for an archive name inside the folder. */
trowel_status trowel_outdir_create(trowel_outdir *dir, const char *entry_name, trowel_sink **out);
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
    TROWEL_VALUE_STRING_LIST
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
} trowel_prop;

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
    TROWEL_CAP_NAMES = 1u << 6     /* stores name hashes; --names recovers names */
};

size_t trowel_format_count(void);
const trowel_format *trowel_format_at(size_t index);
const trowel_format *trowel_format_find(const char *id);
const char *trowel_format_id(const trowel_format *f);
const char *trowel_format_family(const trowel_format *f);
const char *trowel_format_description(const trowel_format *f);
const char *trowel_format_extensions(const trowel_format *f); /* "._ .grf", may be "" */
unsigned trowel_format_caps(const trowel_format *f);
/* The options create accepts, as "key=values: meaning" lines, or "". */
const char *trowel_format_create_options(const trowel_format *f);
/* The targets convert accepts, space separated, e.g. "json png". */
const char *trowel_format_convert_targets(const trowel_format *f);

/* Asks every format to bid for the input; the highest bid wins. Returns
 * TROWEL_ERR_UNSUPPORTED when no format recognises it. bid may be NULL. */
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

/* fmt NULL: detect. The input must outlive the archive. */
trowel_status trowel_archive_open(trowel_ctx *ctx, trowel_input *in, const trowel_format *fmt,
                                  trowel_archive **out);
void trowel_archive_close(trowel_archive *a);

const trowel_format *trowel_archive_format(const trowel_archive *a);
/* Header fields: always "format" and "version"; then format-specific keys. */
const trowel_props *trowel_archive_info(const trowel_archive *a);
size_t trowel_archive_entry_count(const trowel_archive *a);
const trowel_entry *trowel_archive_entry(const trowel_archive *a, size_t index);

/* Formats that store only hashes of names (scenes.image): path is a text
 * file of candidate names, one per line, or a folder scanned for candidate
 * files; entries whose hash matches a candidate take its name. Other
 * formats answer TROWEL_ERR_UNSUPPORTED. */
trowel_status trowel_archive_set_names(trowel_archive *a, const char *path);

/* Reading options ("key=value"), e.g. "raw=1": extract entries as stored
 * rather than converted. Unknown keys are TROWEL_ERR_USAGE. */
trowel_status trowel_archive_set_options(trowel_archive *a, const char *const *options,
                                         size_t option_count);

/* Streams one entry's decoded bytes into the sink (the sink is not
 * finished). Checks the entry's checksums and sizes as it goes. */
trowel_status trowel_archive_read_entry(trowel_archive *a, size_t index, trowel_sink *out);

/* One problem found by verify. */
typedef void (*trowel_verify_fn)(void *user, const trowel_error *problem);
/* Checks every checksum, size and offset the format has. Each problem goes
 * to fn (may be NULL); the result is TROWEL_ERR_VERIFY if there was any. */
trowel_status trowel_archive_verify(trowel_archive *a, trowel_verify_fn fn, void *user);

/* The archive as one JSON document: what selects the parts. */
enum {
    TROWEL_JSON_INFO = 1u << 0,    /* file, format, version, header fields, counts */
    TROWEL_JSON_ENTRIES = 1u << 1, /* "entries": [{name, size, packed_size, offset, method, ...}] */
    TROWEL_JSON_PRETTY = 1u << 2   /* indented, for people */
};
/* Caller frees *json_out with trowel_free. */
trowel_status trowel_archive_to_json(trowel_archive *a, unsigned what, char **json_out);

/* What `create --manifest` needs to rebuild this archive, as JSON text
 * (caller frees with trowel_free): {"trowel_manifest": 1, "format": id,
 * "entries": [{"name": ...}, ...] in directory order, format keys...}. */
trowel_status trowel_archive_manifest(trowel_archive *a, char **json_out);

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

/* The format a manifest names (so `create --manifest` needs no -t). */
trowel_status trowel_manifest_format(trowel_ctx *ctx, const char *manifest_json,
                                     const trowel_format **out);

trowel_status trowel_create(trowel_ctx *ctx, const trowel_format *f,
                            const trowel_create_params *params, trowel_sink *out);

/* --------------------------------------------------------------- convert */

/* Converts the input to the named target ("json", "png", ...). Every format
 * accepts "json" (its structure); others are listed per format. */
trowel_status trowel_convert(trowel_ctx *ctx, trowel_archive *a, const char *target,
                             const char *const *options, size_t option_count, trowel_sink *out);

/* ---------------------------------------------------------------- codecs */

typedef struct trowel_codec trowel_codec;

size_t trowel_codec_count(void);
const trowel_codec *trowel_codec_at(size_t index);
const trowel_codec *trowel_codec_find(const char *id);
const char *trowel_codec_id(const trowel_codec *c);
const char *trowel_codec_description(const trowel_codec *c);

#define TROWEL_SIZE_UNKNOWN UINT64_MAX

/* Raw codec streams (no container header). expected_size is the decoded
 * size when known: the decoder then refuses to produce more or less. */
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

/* Frees memory the library handed to the caller. */
void trowel_free(void *p);

uint32_t trowel_crc32(uint32_t crc, const void *data, size_t size);

#if defined(TROWEL_BUILDING) && (defined(__GNUC__) || defined(__clang__))
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
