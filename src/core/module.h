/*
 * What a format module and a codec module provide, and the archive object
 * they fill in. A format is one file under src/format/<family>/ exporting one
 * `const struct trowel_format`; a codec is one file under src/codec/
 * exporting one `const struct trowel_codec`. Both are listed in registry.c.
 */
#ifndef TROWEL_MODULE_H
#define TROWEL_MODULE_H

#include "reader.h"

struct json_object;
struct trowel_codec_stream;
struct trowel_json_writer;

/* Bids: how sure a format is that the input is its own. 0 means "not mine".
 * A magic number alone is worth TROWEL_BID_MAGIC; structure that checks out
 * besides (sizes agree with the file) adds to it. */
enum {
    TROWEL_BID_NONE = 0,
    TROWEL_BID_WEAK = 10,   /* plausible structure, no magic */
    TROWEL_BID_MAGIC = 50,  /* a magic number matched */
    TROWEL_BID_STRONG = 100 /* magic and consistent structure */
};

struct trowel_format {
    const char *id;
    const char *family;
    const char *description;
    const char *extensions;
    unsigned caps;
    /* What create takes besides its -O options (those are rows of options,
     * targets "create"), as lines; NULL or "" if nothing. */
    const char *create_options;
    const char *convert_targets; /* besides "json", "" if none */
    /* Reading, convert and create options (-O), ending with a {0} row;
     * NULL: none. The archive layer checks options against it before
     * set_options, convert or create runs, so those only read the values
     * (trowel_options_parse and the typed getters). */
    const trowel_option_info *options;

    /* Looks at the input through r (a reader over the whole input) and
     * returns a bid. Must not allocate from file data or fail loudly. */
    int (*bid)(trowel_reader *r);
    /* Parses the header and directory; fills a->info and the entries
     * (trowel_archive_add); may keep state in a->priv. */
    trowel_status (*open)(trowel_archive *a, trowel_reader *r);
    /* Streams entry index's decoded bytes into out. */
    trowel_status (*read_entry)(trowel_archive *a, size_t index, trowel_sink *out);
    /* Optional: format-specific checks beyond reading every entry (which the
     * archive layer does itself). Reports each problem with
     * trowel_archive_report. */
    trowel_status (*verify)(trowel_archive *a);
    /* Optional: checks entry index in one pass, its decoding included, for
     * a format whose own checks of an entry need its decoded bytes (verify
     * would otherwise decode it twice). Used by verify instead of reading
     * the entry into a null sink. Reports each problem with
     * trowel_archive_report; returns an error only when verification
     * cannot go on (memory). */
    trowel_status (*verify_entry)(trowel_archive *a, size_t index);
    /* Optional: fills the manifest object (format and entries are added by
     * the archive layer). */
    trowel_status (*manifest)(trowel_archive *a, struct json_object *m);
    /* Optional: builds a new file; manifest is NULL when none was given. */
    trowel_status (*create)(trowel_ctx *ctx, const trowel_create_params *p,
                            struct json_object *manifest, trowel_sink *out);
    /* Optional: adds format-specific structure to the document of
     * `convert --to json` (after info and entries): every field a create
     * from that JSON needs (asm), a costume's limbs and commands (scumm),
     * what info and entries cannot hold. */
    trowel_status (*convert_json)(trowel_archive *a, struct json_object *doc);
    /* Optional, instead of convert_json for structure too large for a tree
     * (asm): writes its members (keys and values) through w, which goes on
     * inside the document's top-level object after info and entries. */
    trowel_status (*convert_json_stream)(trowel_archive *a, struct trowel_json_writer *w);
    /* True when create reads the manifest text (p->manifest_json) itself,
     * streaming, every allocation counted: the archive layer then only
     * checks its "format" (without building a tree), passes manifest NULL
     * and takes no sources from its "entries". */
    bool create_reads_manifest_text;
    /* Optional: converts to a target other than "json". */
    trowel_status (*convert)(trowel_archive *a, const char *target, const char *const *opts,
                             size_t nopts, trowel_sink *out);
    /* Optional: the targets (space separated, also listed in convert_targets)
     * whose result is a folder of files rather than one file, and the
     * conversion that writes them (trowel_outdir_create for each). */
    const char *folder_targets;
    trowel_status (*convert_folder)(trowel_archive *a, const char *target,
                                    const char *const *opts, size_t nopts, trowel_outdir *dir);
    /* Optional (with TROWEL_CAP_NAMES): recovers names from a list or folder. */
    trowel_status (*set_names)(trowel_archive *a, const char *path);
    /* Optional: reading options (already checked against options). */
    trowel_status (*set_options)(trowel_archive *a, const char *const *opts, size_t n);
    /* Optional: false when read_entry converts entry index on the way, so
     * it may write other than the entry's size (trowel_archive_entry_size_exact).
     * NULL: every entry reads as exactly its size. */
    bool (*entry_size_exact)(const trowel_archive *a, size_t index);
    /* True when an entry whose method is "stored" (packed size = size) lies
     * as is at its offset in the archive's own input, so that a nested
     * archive can read it through a window instead of a decoded copy. False
     * (the default) for formats whose offsets point elsewhere (VOL.CNF into
     * its volumes, a SCUMM game into its other file) or that convert stored
     * bytes on the way (scenes.image's text VCDs). */
    bool stored_entries_in_input;
    /* Optional: for trowel_entry_reader_open, a decoding cursor over the
     * stream that holds entry index (trowel_codec_stream_open), in which
     * the entry's first decoded byte is at *start; *whole when the stream
     * is the entry's alone (its end is checked once the entry is read to
     * its end). *cursor NULL (and TROWEL_OK): the entry has no such
     * stream (stored, another codec, damaged), so it is read whole. */
    trowel_status (*entry_cursor)(trowel_archive *a, size_t index,
                                  struct trowel_codec_stream **cursor, uint64_t *start,
                                  bool *whole);
    /* Optional, for an archive opened to be read in order
     * (trowel_archive_open_in_order, a->in_order): a format that left
     * work on its entries until they are asked for (scenes.image: whether
     * a scene can become text, which names it .vcd or .bvcd) does it for
     * entries [a->settled, count) and sets a->settled to at least count.
     * The archive layer calls it before an entry, the info or anything
     * built from every entry is handed out, so callers see what an
     * archive opened with trowel_archive_open shows. It cannot fail:
     * what it cannot work out is left for reading the entry to report.
     * A format without it settles everything in open. */
    void (*settle)(trowel_archive *a, size_t count);
    /* Optional: frees a->priv. */
    void (*close)(trowel_archive *a);
};

/* ---- options: the -O values, checked against the format's rows (core/options.c) */

/* The options given for one use of a format (reading: target NULL; a convert
 * target; or "create"), once trowel_options_parse has checked every one
 * against the rows: the getters then cannot meet a bad value. It points into
 * the rows and the strings given, so it lives no longer than they do, and
 * needs no freeing. */
typedef struct trowel_option_values {
    const trowel_option_info *rows;
    const char *target;
    const char *const *opts;
    size_t n;
} trowel_option_values;

/* Checks each "key=value" of opts against the rows of f that apply to target:
 * TROWEL_ERR_USAGE for one not of that form, an unknown key (the message
 * names the format and the valid keys), a bad number, one out of range, or
 * a word not among the choices. A key given twice is checked twice; the
 * getters take the last. */
trowel_status trowel_options_parse(trowel_ctx *ctx, const trowel_format *f, const char *target,
                                   const char *const *opts, size_t n, trowel_option_values *out);
/* The same against rows of one's own (a codec's), owner naming them. */
trowel_status trowel_options_parse_rows(trowel_ctx *ctx, const char *owner,
                                        const trowel_option_info *rows, const char *target,
                                        const char *const *opts, size_t n,
                                        trowel_option_values *out);
/* The values of options core has already checked against rows (create,
 * set_options and convert receive only those), for the getters. rows may
 * be NULL in shared code that serves several formats' tables (whose rows
 * did the checking): the getters then find no defaults. */
static inline trowel_option_values trowel_option_values_of(const trowel_option_info *rows,
                                                           const char *target,
                                                           const char *const *opts, size_t n)
{
    return (trowel_option_values){rows, target, opts, n};
}
/* Getters: the last value given for key, else the row's default (def), else
 * 0, false or NULL. key must be one of the rows for the values' target. */
bool trowel_option_given(const trowel_option_values *v, const char *key);
uint64_t trowel_option_uint(const trowel_option_values *v, const char *key);
int64_t trowel_option_int(const trowel_option_values *v, const char *key);
bool trowel_option_bool(const trowel_option_values *v, const char *key);
double trowel_option_real(const trowel_option_values *v, const char *key);
const char *trowel_option_str(const trowel_option_values *v, const char *key);
/* A repeatable option: each value given for key in turn, from *pos (start
 * at 0); NULL after the last. */
const char *trowel_option_next(const trowel_option_values *v, const char *key, size_t *pos);
/* True when the row's default (if any) is a value the row itself allows. */
bool trowel_option_row_valid(const trowel_option_info *o);

struct trowel_stream_codec;

/* A codec: whole calls over a reader, and optionally a streaming form
 * (core/stream.h). Streaming codecs implement compress/decompress with the
 * generic adapters trowel_codec_encode_reader/trowel_codec_decode_reader;
 * whole-buffer codecs (lzss, bytekiller, vsif-lzma) leave stream NULL. */
struct trowel_codec {
    const char *id;
    const char *description;
    trowel_status (*compress)(trowel_ctx *ctx, trowel_reader *in, trowel_sink *out);
    trowel_status (*decompress)(trowel_ctx *ctx, trowel_reader *in, uint64_t expected_size,
                                trowel_sink *out);
    /* Optional: the streaming form (levels, bounds, coders), used by
     * containers and by trowel_codec_compress_with's options. */
    const struct trowel_stream_codec *stream;
};

/* What a format's create receives: the caller's params first (create gets
 * a pointer to them and may cast it back: every create runs through
 * trowel_create or trowel_create_with_companion), then what only some
 * formats use. */
typedef struct trowel_create_job {
    trowel_create_params params;
    trowel_input *companion_in;  /* see trowel_create_with_companion */
    trowel_sink *companion_out;
    bool keep_last; /* TROWEL_CREATE_KEEP_LAST was given (and taken out of the options) */
} trowel_create_job;

/* Runs f's create on p (the manifest checked, its entries made the sources
 * when p has none, TROWEL_CREATE_KEEP_LAST taken out of the options): the
 * last step of every create, called by trowel_writer_finish (writer.c)
 * with the sources the writer was given. */
trowel_status trowel_create_build(trowel_ctx *ctx, const trowel_format *f,
                                  const trowel_create_params *p, trowel_input *companion_in,
                                  trowel_sink *companion_out, trowel_sink *out);

/* Adds props to the JSON object obj as info and entries show them (a key
 * "group.name" as "name" inside the object "group"). */
void trowel_json_add_props(struct json_object *obj, const trowel_props *props);

/* For formats whose stored names can coincide (flat names): stored[i] is
 * the name source i of p (a trowel_create_job's params) gets. Two sources
 * under one name are refused, naming both (TROWEL_ERR_USAGE), unless the
 * job's keep_last: then keep[i] is false for each source a later one
 * replaces, and a warning says so. */
trowel_status trowel_create_unique_names(trowel_ctx *ctx, const trowel_create_params *p,
                                         const char *const *stored, bool *keep);

/* An encoder of whole buffers: data[0, size) into a new buffer *out
 * (trowel_mem_alloc) of *out_len bytes. */
typedef trowel_status (*trowel_buffer_encoder)(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                               uint8_t **out, size_t *out_len);
/* The compress side of a codec whose encoder needs its whole input at once
 * (the Delphine packer parses from the end, Valve's header holds sizes):
 * loads the reader's window, encodes it, writes the result. */
trowel_status trowel_codec_compress_whole(trowel_ctx *ctx, trowel_reader *in, trowel_sink *out,
                                          trowel_buffer_encoder encode);

/* The longest chain of input filters tried (a wrapper inside a wrapper). */
#define TROWEL_FILTER_DEPTH 4

struct trowel_archive {
    trowel_ctx *ctx;
    trowel_input *in;     /* what the format reads: the last filter's output, or raw_in */
    trowel_input *raw_in; /* the caller's input */
    const char *filter_ids[TROWEL_FILTER_DEPTH];          /* filters peeled, outermost first */
    trowel_input *filter_inputs[TROWEL_FILTER_DEPTH];     /* what each peeled; closed with the archive */
    size_t filter_count;
    const trowel_format *fmt;
    trowel_props *info;
    trowel_entry *entries;
    trowel_props **entry_extra;
    trowel_props *strings; /* storage for entry names and methods */
    trowel_props *extras;  /* holds every entry's extra (trowel_props_create_within) */
    size_t entry_count;
    size_t entry_cap;
    void *priv;
    bool damaged; /* see trowel_archive_damaged */
    bool in_order;  /* opened by trowel_archive_open_in_order */
    size_t settled; /* entries [0, settled) are final (see settle) */
    trowel_archive *self; /* a itself, for settling from the const accessors */
    uint64_t *size_before; /* progress: prefix sums of entry sizes */
    size_t size_before_len;
    /* opened by trowel_archive_open_entry: what it owns, how deep it is */
    trowel_input *own_in;
    unsigned depth;
    /* verify bookkeeping */
    trowel_verify_fn report_fn;
    void *report_user;
    size_t problems;
};

/* Opens in as fmt exactly: no filters, no detection (a filter that reads
 * its wrapper with a format uses it, so that it does not peel itself). */
trowel_status trowel_archive_open_as(trowel_ctx *ctx, trowel_input *in, const trowel_format *fmt,
                                     trowel_archive **out);

/* Entry index read whole into counted memory: *data (trowel_mem_alloc'ed
 * on a's context, NULL when empty) holds *size bytes, fitted to them; the
 * caller frees it. Errors as trowel_archive_read_entry. reserve: when the
 * entry's size is exact, allocate it before decoding instead of growing as
 * the decoder writes (trowel_archive_read_entry_data); without it, an
 * entry whose size cannot fit is refused only as its bytes arrive, so a
 * damaged one fails with its own error. */
trowel_status trowel_archive_entry_bytes(trowel_archive *a, size_t index, bool reserve,
                                        uint8_t **data, size_t *size);

/* Opens a file related to the one being read, through the context's open
 * hook (trowel_ctx_set_open_hook) or the default: base is the name of the
 * input the name is relative to (a sibling: in its folder, matched without
 * regard to case if the exact name is absent), or NULL for a path named by
 * an option (-O palette=FILE, --names LIST), opened as given. The caller
 * closes *out. Fails with TROWEL_ERR_IO and a message naming name. */
trowel_status trowel_open_related(trowel_ctx *ctx, const char *base, const char *name,
                                  trowel_input **out);
/* Lists a folder related to the one being read, through the context's io
 * hooks (trowel_ctx_set_io_hooks) or the default, trowel_list_beside; base
 * and dir as there. Fails with TROWEL_ERR_IO and a message naming dir. */
trowel_status trowel_list_related(trowel_ctx *ctx, const char *base, const char *dir,
                                  trowel_list_each_fn each, void *each_user);
/* The same, for a walk down a tree (each may list a subfolder from inside
 * the call): on the file system a link is never taken for a folder (it is
 * passed as a file, so a walk neither loops nor leaves the tree through
 * one), an entry gone since the folder was read is left out, and a folder
 * that cannot be read fails with "cannot open folder DIR: why". A list
 * hook serves it as it serves trowel_list_related. */
trowel_status trowel_list_related_no_links(trowel_ctx *ctx, const char *base, const char *dir,
                                           trowel_list_each_fn each, void *each_user);
/* Where dir (named as for trowel_list_related) is, for an option that
 * takes a folder or a file (--names DIR|LIST): *is_folder, and in full
 * (cap: PATH_MAX or more) the name to list it by. On the file system, a
 * folder's full name is its canonical path ("." and "..", links resolved:
 * where it really sits, such as under a game's scenes/), a file's is dir
 * joined to base's folder, and nothing there fails with "DIR: why" unless
 * an open hook may serve it as a file. Through a list hook, dir joined to
 * base's folder, a folder when the hook lists it. */
trowel_status trowel_locate_related(trowel_ctx *ctx, const char *base, const char *dir,
                                    char *full, size_t cap, bool *is_folder);

/* Adds an entry (strings copied); *extra is its extra-property list, into
 * which the format may add keys (NULL on failure, whose status it returns). */
trowel_status trowel_archive_add(trowel_archive *a, const trowel_entry *e, trowel_props **extra);
/* Renames entry index (after --names found its name). */
trowel_status trowel_archive_rename_entry(trowel_archive *a, size_t index, const char *name);
/* Open found entries whose data cannot be read (cut off, corrupt) but kept
 * the rest readable: it warns for each and marks the archive damaged. */
void trowel_archive_mark_damaged(trowel_archive *a);
/* verify: records one problem (the error currently on the context). */
void trowel_archive_report(trowel_archive *a);
/* Verifies entry index by reading it whole into nothing: its checks and
 * sizes as trowel_archive_read_entry makes them; a failure is reported
 * (trowel_archive_report), and only a failure to begin is returned. */
trowel_status trowel_archive_verify_by_reading(trowel_archive *a, size_t index);
/* verify: records one TROWEL_ERR_VERIFY problem at offset, as printf. */
void trowel_archive_reportf(trowel_archive *a, uint64_t offset, const char *fmt, ...)
    TROWEL_PRINTF(3, 4);

/* The registry tables (registry.c). */
extern const trowel_format *const trowel_formats[];
extern const size_t trowel_formats_len;
extern const trowel_codec *const trowel_codecs[];
extern const size_t trowel_codecs_len;

#endif
