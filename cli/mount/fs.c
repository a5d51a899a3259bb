/*
 * The FUSE side of trowel mount: the libfuse3 high-level operations over
 * the tree of tree.c, an LRU cache of decoded files, and the views under
 * .trowel/. libfuse runs single-threaded (one trowel context, which must
 * be used by one thread at a time), and the archive never changes, so the
 * kernel may keep pages and attributes as long as it likes.
 */
#define FUSE_USE_VERSION 31
#define _XOPEN_SOURCE 700 /* realpath */
#include "mount.h"
#include "../nested.h"

#include <fuse.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#define VIEWS_DIR ".trowel"
#define TROWEL_STR_(x) #x
#define TROWEL_STR(x) TROWEL_STR_(x)

/* Open readers kept at most: each holds a decoder (about 300 KiB for
 * zlib), and a few let cp -r, or two programs reading one entry, go on
 * streaming without restarting one another's decoders. */
#define READERS_MAX 4

/* One open reader of a streamed entry, and where its last read ended. */
typedef struct mount_reader {
    mount_node *node;   /* NULL: the slot is free */
    trowel_entry_reader *reader;
    uint64_t pos;
    uint64_t used;      /* read_clock at its last read */
} mount_reader;

typedef struct mount_fs {
    cli_session *s;
    const mount_config *cfg;
    trowel_archive *a;   /* the main tree */
    trowel_archive *raw; /* .trowel/raw/, or NULL */
    mount_node *root;
    mount_node *views;   /* .trowel/ */
    mount_node *raw_dir; /* .trowel/raw/, once something goes in it; or NULL */
    mount_node *convert; /* .trowel/convert/, expanded on first use; or NULL */
    struct stat archive_st;
    /* LRU: head is the most recently used. */
    mount_node *lru_head, *lru_tail;
    uint64_t cached;     /* bytes held by cached files */
    /* Streamed entries: the open readers (an empty slot has no node). */
    mount_reader readers[READERS_MAX];
    uint64_t read_clock; /* counts reads, for the slots' LRU order */
} mount_fs;

static mount_fs *current_fs(void)
{
    return fuse_get_context()->private_data;
}

/* --------------------------------------------------------------- messages */

/* In the foreground on stderr, as every trowel message; once detached
 * (stderr is /dev/null then) in the system log. */
static void print_failure(mount_fs *fs, const trowel_error *e)
{
    if (fs->cfg->foreground) {
        cli_print_error(fs->cfg->archive, e);
        return;
    }
    if (e->offset != TROWEL_NO_OFFSET)
        syslog(LOG_ERR, "%s: %s: %s (offset 0x%llx)", fs->cfg->archive, e->entry, e->message,
               (unsigned long long)e->offset);
    else
        syslog(LOG_ERR, "%s: %s: %s", fs->cfg->archive, e->entry, e->message);
}

/* Why n could not be read, from the context's last error. */
static void report_failure(mount_fs *fs, const mount_node *n)
{
    trowel_error e = *trowel_ctx_last_error(fs->s->ctx);
    if (e.status == TROWEL_OK)
        e.status = TROWEL_ERR_IO;
    if (!e.entry[0])
        mount_tree_path(n, e.entry, sizeof e.entry);
    print_failure(fs, &e);
}

/* A failure of n the mount finds itself. */
static void report_message(mount_fs *fs, const mount_node *n, const char *message)
{
    trowel_error e = {.status = TROWEL_ERR_LIMIT, .offset = TROWEL_NO_OFFSET};
    mount_tree_path(n, e.entry, sizeof e.entry);
    snprintf(e.message, sizeof e.message, "%s", message);
    print_failure(fs, &e);
}

/* ------------------------------------------------------------------ cache */

static void lru_unlink(mount_fs *fs, mount_node *n)
{
    if (n->lru_prev)
        n->lru_prev->lru_next = n->lru_next;
    else
        fs->lru_head = n->lru_next;
    if (n->lru_next)
        n->lru_next->lru_prev = n->lru_prev;
    else
        fs->lru_tail = n->lru_prev;
    n->lru_prev = n->lru_next = NULL;
}

static void lru_push(mount_fs *fs, mount_node *n)
{
    n->lru_next = fs->lru_head;
    if (fs->lru_head)
        fs->lru_head->lru_prev = n;
    fs->lru_head = n;
    if (!fs->lru_tail)
        fs->lru_tail = n;
}

static trowel_archive *archive_of(const mount_fs *fs, const mount_node *n)
{
    if (n->archive)
        return n->archive;
    return n->view == MOUNT_VIEW_RAW ? fs->raw : fs->a;
}

static void release(mount_fs *fs, mount_node *n)
{
    switch (n->hold) {
    case MOUNT_HOLD_ENTRY: trowel_archive_free_data(archive_of(fs, n), n->holder); break;
    case MOUNT_HOLD_SINK: trowel_sink_discard(n->holder); break;
    case MOUNT_HOLD_TEXT: trowel_free(n->holder); break;
    case MOUNT_HOLD_NONE: break;
    }
    lru_unlink(fs, n);
    fs->cached -= n->len;
    n->hold = MOUNT_HOLD_NONE;
    n->holder = NULL;
    n->data = NULL;
    n->len = 0;
}

/* Drops least recently used files until want more bytes fit (UINT64_MAX:
 * all of them), keeping keep (the file just read). */
static void make_room(mount_fs *fs, uint64_t want, const mount_node *keep)
{
    mount_node *n = fs->lru_tail;
    uint64_t limit = fs->cfg->cache_limit;
    while (n && (want > limit || fs->cached > limit - want)) {
        mount_node *prev = n->lru_prev;
        if (n != keep)
            release(fs, n);
        n = prev;
    }
}

static void keep(mount_fs *fs, mount_node *n, const uint8_t *data, size_t len, mount_hold hold,
                 void *holder)
{
    n->data = data;
    n->len = len;
    n->hold = hold;
    n->holder = holder;
    n->size = len;
    n->size_known = true;
    fs->cached += len;
    lru_push(fs, n);
    /* The file just read stays even when it alone is over the limit. */
    make_room(fs, 0, n);
}

/* ------------------------------------------------------------- streaming */

/* Opens a reader of n's entry into slot (empty). 0, or -EIO (reported;
 * n fails from now on), or 1 when the entry can only be read whole
 * (whole_only set). */
static int open_slot(mount_fs *fs, mount_reader *slot, mount_node *n)
{
    trowel_ctx_clear_error(fs->s->ctx);
    trowel_archive *a = archive_of(fs, n);
    trowel_status st = trowel_entry_reader_open(a, n->entry, &slot->reader);
    if (st == TROWEL_ERR_LIMIT && fs->lru_head) {
        make_room(fs, UINT64_MAX, NULL); /* a decoder before cached bytes */
        trowel_ctx_clear_error(fs->s->ctx);
        st = trowel_entry_reader_open(a, n->entry, &slot->reader);
    }
    if (st == TROWEL_ERR_UNSUPPORTED && trowel_ctx_last_error(fs->s->ctx)->status == TROWEL_OK) {
        n->whole_only = true;
        return 1;
    }
    if (st != TROWEL_OK) {
        n->failed = true;
        report_failure(fs, n);
        return -EIO;
    }
    slot->node = n;
    slot->pos = 0;
    return 0;
}

static void close_slot(mount_reader *slot)
{
    trowel_entry_reader_close(slot->reader);
    *slot = (mount_reader){0};
}

/* Whether slot a should be given up before slot b: a free one first,
 * then the least recently used. */
static bool sooner(const mount_reader *a, const mount_reader *b)
{
    return !b || (b->node && (!a->node || a->used < b->used));
}

/* The slot to read n at off from: n's reader that ended last at or
 * before off (reading on from there costs least: a decoder never goes
 * back without starting again), else a new reader in a free slot or the
 * least recently used one; an entry holds at most READERS_PER_ENTRY, so
 * random reads of one file do not close the decoders of others. Two
 * programs reading one entry at different places (cp, and a viewer
 * reading its head) thus each keep a decoder instead of restarting one
 * another's. NULL with *err: as open_slot. */
#define READERS_PER_ENTRY 2
static mount_reader *slot_for(mount_fs *fs, mount_node *n, uint64_t off, int *err)
{
    mount_reader *best = NULL, *victim = NULL, *own_victim = NULL;
    size_t own = 0;
    *err = 0;
    for (size_t i = 0; i < READERS_MAX; i++) {
        mount_reader *r = &fs->readers[i];
        if (r->node == n) {
            own++;
            if (r->pos <= off && (!best || r->pos > best->pos))
                best = r;
            if (sooner(r, own_victim))
                own_victim = r;
        }
        if (sooner(r, victim))
            victim = r;
    }
    if (!best) {
        if (own >= READERS_PER_ENTRY)
            victim = own_victim;
        close_slot(victim);
        *err = open_slot(fs, victim, n);
        if (*err != 0)
            return NULL;
        best = victim;
    }
    best->used = ++fs->read_clock;
    return best;
}

/* Serves a read of an entry through a reader: true with *result the
 * bytes read, or -EIO (reported once); false when the entry is to be read
 * whole instead. */
static bool read_streaming(mount_fs *fs, mount_node *n, char *buf, size_t size, off_t off,
                           int *result)
{
    mount_reader *slot = slot_for(fs, n, (uint64_t)off, result);
    if (!slot)
        return *result != 1;
    size_t got = 0;
    trowel_ctx_clear_error(fs->s->ctx);
    trowel_status st = trowel_entry_reader_read(slot->reader, (uint64_t)off, buf, size, &got);
    if (st == TROWEL_ERR_LIMIT && fs->lru_head) {
        make_room(fs, UINT64_MAX, NULL);
        trowel_ctx_clear_error(fs->s->ctx);
        st = trowel_entry_reader_read(slot->reader, (uint64_t)off, buf, size, &got);
    }
    if (st != TROWEL_OK) {
        close_slot(slot);
        n->failed = true;
        report_failure(fs, n);
        *result = -EIO;
        return true;
    }
    slot->pos = (uint64_t)off + got;
    *result = (int)got;
    return true;
}

static void close_readers(mount_fs *fs)
{
    for (size_t i = 0; i < READERS_MAX; i++)
        close_slot(&fs->readers[i]);
}

/* ---------------------------------------------------------------- loading */

static int load(mount_fs *fs, mount_node *n);

static trowel_status load_entry(mount_fs *fs, mount_node *n)
{
    trowel_archive *a = archive_of(fs, n);
    uint8_t *data;
    size_t len;
    trowel_status st = trowel_archive_read_entry_data(a, n->entry, &data, &len);
    if (st == TROWEL_ERR_LIMIT && fs->lru_head) {
        make_room(fs, UINT64_MAX, NULL); /* the whole limit for this one */
        st = trowel_archive_read_entry_data(a, n->entry, &data, &len);
    }
    if (st == TROWEL_OK)
        keep(fs, n, data, len, MOUNT_HOLD_ENTRY, data);
    return st;
}

/* Opens the bytes of src as an input and an archive (detected). */
static trowel_status open_bytes(mount_fs *fs, const mount_node *src, trowel_input **in,
                                trowel_archive **a)
{
    *a = NULL;
    trowel_status st = trowel_input_open_memory(fs->s->ctx, src->data, src->len, src->name, in);
    if (st == TROWEL_OK)
        st = trowel_archive_open(fs->s->ctx, *in, NULL, a);
    return st;
}

/* What `convert --to target` makes of a, kept as n's bytes. */
static trowel_status convert_and_keep(mount_fs *fs, mount_node *n, trowel_archive *a,
                                      const char *target)
{
    trowel_sink *sink = NULL;
    trowel_status st = trowel_sink_open_memory(fs->s->ctx, &sink);
    if (st == TROWEL_OK)
        st = trowel_convert(fs->s->ctx, a, target, NULL, 0, sink);
    if (st != TROWEL_OK) {
        trowel_sink_discard(sink);
        return st;
    }
    size_t len;
    const uint8_t *data = trowel_sink_data(sink, &len);
    keep(fs, n, data, len, MOUNT_HOLD_SINK, sink);
    return TROWEL_OK;
}

static trowel_status load_conversion(mount_fs *fs, mount_node *n)
{
    if (load(fs, n->source) != 0)
        return TROWEL_ERR_IO; /* reported with the source */
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    trowel_status st = open_bytes(fs, n->source, &in, &a);
    if (st == TROWEL_OK)
        st = convert_and_keep(fs, n, a, n->target);
    trowel_archive_close(a);
    trowel_input_close(in);
    return st;
}

static trowel_status load_json(mount_fs *fs, mount_node *n)
{
    return convert_and_keep(fs, n, fs->a, "json");
}

static trowel_status load_manifest(mount_fs *fs, mount_node *n)
{
    char *json;
    trowel_status st = trowel_archive_manifest(fs->a, &json);
    if (st == TROWEL_OK) {
        size_t len = strlen(json);
        json[len] = '\n'; /* the NUL becomes the line end extract writes */
        keep(fs, n, (const uint8_t *)json, len + 1, MOUNT_HOLD_TEXT, json);
    }
    return st;
}

/* Makes n's bytes available (0) or says why not (-EIO, after a message
 * the first time). */
static int load(mount_fs *fs, mount_node *n)
{
    if (n->hold != MOUNT_HOLD_NONE) { /* cached (an empty file holds no data) */
        lru_unlink(fs, n);
        lru_push(fs, n);
        return 0;
    }
    if (n->failed)
        return -EIO;
    if (n->size_known)
        make_room(fs, n->size, NULL);
    trowel_ctx_clear_error(fs->s->ctx);
    trowel_status st = TROWEL_ERR_IO;
    switch (n->view) {
    case MOUNT_VIEW_ENTRY:
    case MOUNT_VIEW_RAW: st = load_entry(fs, n); break;
    case MOUNT_VIEW_CONVERT: st = load_conversion(fs, n); break;
    case MOUNT_VIEW_JSON: st = load_json(fs, n); break;
    case MOUNT_VIEW_MANIFEST: st = load_manifest(fs, n); break;
    }
    if (st == TROWEL_OK)
        return 0;
    n->failed = true;
    /* A conversion of a file that failed was reported with that file. */
    if (!(n->view == MOUNT_VIEW_CONVERT && n->source->failed))
        report_failure(fs, n);
    return -EIO;
}

/* --------------------------------------------------------------- the tree */

bool mount_format_has_raw_option(const trowel_format *f)
{
    const trowel_option_info *o;
    for (size_t i = 0; (o = trowel_format_option_at(f, i)) != NULL; i++)
        if (strcmp(o->key, "raw") == 0 && !o->targets)
            return true;
    return false;
}

static void warn_skipped(mount_fs *fs, const char *name, const char *why)
{
    if (fs->s->quiet)
        return;
    trowel_error w = {.status = TROWEL_ERR_UNSAFE_PATH, .offset = TROWEL_NO_OFFSET};
    snprintf(w.entry, sizeof w.entry, "%s", name);
    snprintf(w.message, sizeof w.message, "%s", why);
    cli_print_warning(fs->cfg->archive, &w);
}

/* In dir, the folder F.d/ for the archive in f (an entry of the main tree
 * or of a nested archive that may be an archive itself), opened on first
 * use; raw: its entries as stored. A name already taken keeps what took
 * it. */
static int add_nest_dir(mount_node *dir, mount_node *f, bool raw)
{
    size_t len = strlen(f->name) + sizeof CLI_NESTED_DIR_SUFFIX;
    char *name = malloc(len);
    if (!name)
        return ENOMEM;
    snprintf(name, len, "%s" CLI_NESTED_DIR_SUFFIX, f->name);
    mount_node *d = mount_tree_new_dir(dir, name);
    free(name);
    if (d) {
        d->nest_entry = f;
        d->nest_raw = raw;
        d->expanded = false;
    }
    return 0;
}

/* .trowel/raw/, made when first needed. */
static mount_node *raw_dir(mount_fs *fs)
{
    if (!fs->raw_dir)
        fs->raw_dir = mount_tree_add_dir(fs->views, "raw");
    return fs->raw_dir;
}

/* For f, a file of the mounted archive's own entries that may be an
 * archive, when that archive has no raw option (so .trowel/raw/ does not
 * mirror it): .trowel/raw/DIR/F.d/, the nested archive's entries as
 * stored, where DIR is f's folder. */
static int add_raw_nest_dir(mount_fs *fs, mount_node *f)
{
    char path[4096];
    if (!mount_tree_path(f->parent, path, sizeof path))
        return 0;
    mount_node *raw = raw_dir(fs);
    mount_node *dir = raw ? mount_tree_add_dir_path(raw, path) : NULL;
    return dir ? add_nest_dir(dir, f, true) : ENOMEM;
}

/* With -r, the folders for f, an entry of a, that may be an archive: F.d/
 * beside it and, for the mounted archive's own entries, its view under
 * .trowel/raw/ (nested archives' entries in .trowel/raw/ get theirs from
 * their own folder). */
static int add_nest_dirs(mount_fs *fs, trowel_archive *a, mount_node *f, mount_view view)
{
    int err = add_nest_dir(f->parent, f, view == MOUNT_VIEW_RAW);
    if (!err && view == MOUNT_VIEW_ENTRY && a == fs->a && !fs->raw && fs->views)
        err = add_raw_nest_dir(fs, f);
    return err;
}

/* Whether a normalised path is .trowel or inside it. */
static bool in_views_dir(const char *path)
{
    size_t len = strlen(VIEWS_DIR);
    return strncmp(path, VIEWS_DIR, len) == 0 && (path[len] == '/' || !path[len]);
}

/* Adds every entry of a under root with view. Names are those extract -r
 * writes. */
static int add_entries(mount_fs *fs, trowel_archive *a, mount_node *root, mount_view view)
{
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
        const trowel_entry *e = trowel_archive_entry(a, i);
        char path[4096];
        if (trowel_path_normalize(e->name, path, sizeof path) != TROWEL_OK) {
            if (view == MOUNT_VIEW_ENTRY)
                warn_skipped(fs, e->name, "unsafe name, not shown (as extract refuses it)");
            continue;
        }
        if (view == MOUNT_VIEW_ENTRY && fs->views && in_views_dir(path)) {
            warn_skipped(fs, e->name, "inside " VIEWS_DIR "/, the mount's own folder: not shown");
            continue;
        }
        mount_node *f;
        int err = mount_tree_add_file(root, path, &f);
        if (err == ENOMEM)
            return err;
        if (err) {
            if (view == MOUNT_VIEW_ENTRY)
                warn_skipped(fs, e->name, "the name is taken by an earlier entry: not shown");
            continue;
        }
        f->view = view;
        f->entry = i;
        f->archive = a;
        if (fs->cfg->recursive && cli_nested_candidate(e->name) &&
            add_nest_dirs(fs, a, f, view) != 0)
            return ENOMEM;
        if (trowel_archive_entry_size_exact(a, i)) {
            f->size = e->size;
            f->size_known = true;
        }
    }
    return 0;
}

static mount_node *add_special(mount_node *dir, const char *name, mount_view view)
{
    mount_node *f;
    if (mount_tree_add_file(dir, name, &f) != 0)
        return NULL;
    f->view = view;
    return f;
}

static int build_tree(mount_fs *fs)
{
    fs->root = mount_tree_dir("");
    if (!fs->root)
        return ENOMEM;
    if (!fs->cfg->views) {
        if (add_entries(fs, fs->a, fs->root, MOUNT_VIEW_ENTRY) != 0)
            return ENOMEM;
        mount_tree_sort(fs->root);
        return 0;
    }
    mount_node *views = mount_tree_add_dir(fs->root, VIEWS_DIR);
    fs->views = views;
    if (!views || add_entries(fs, fs->a, fs->root, MOUNT_VIEW_ENTRY) != 0)
        return ENOMEM;
    if (!add_special(views, "archive.json", MOUNT_VIEW_JSON))
        return ENOMEM;
    if ((trowel_format_caps(trowel_archive_format(fs->a)) & TROWEL_CAP_MANIFEST) &&
        !add_special(views, "manifest.json", MOUNT_VIEW_MANIFEST))
        return ENOMEM;
    if (fs->raw) {
        mount_node *raw = raw_dir(fs);
        if (!raw || add_entries(fs, fs->raw, raw, MOUNT_VIEW_RAW) != 0)
            return ENOMEM;
    }
    if (!(fs->convert = mount_tree_add_dir(views, "convert")))
        return ENOMEM;
    fs->convert->expanded = false;
    mount_tree_sort(fs->root);
    return 0;
}

/* One file of .trowel/convert/ for every target in targets (space
 * separated) that src converts to as one file, json first. */
static void add_targets(mount_fs *fs, mount_node *src, const char *path, trowel_archive *a)
{
    const char *targets = trowel_format_convert_targets(trowel_archive_format(a)), *word;
    size_t len;
    bool json_done = false;
    while (!json_done || cli_next_word(&targets, &word, &len)) {
        if (!json_done) {
            word = "json";
            len = 4;
            json_done = true;
        } else if (len == 4 && strncmp(word, "json", 4) == 0) {
            continue;
        }
        char target[64];
        snprintf(target, sizeof target, "%.*s", (int)len, word);
        /* A target convert writes as a folder of files (a costume's
         * frames) is no file: not shown. */
        if (trowel_convert_makes_folder(a, target))
            continue;
        char name[4200];
        snprintf(name, sizeof name, "%s.%.*s", path, (int)len, word);
        mount_node *c;
        if (mount_tree_add_file(fs->convert, name, &c) != 0)
            continue;
        c->view = MOUNT_VIEW_CONVERT;
        c->source = src;
        c->target = strndup(word, len); /* freed with the tree (free_targets) */
        if (!c->target)
            c->failed = true;
    }
}

/* .trowel/convert/: for each file of the main tree that opens as a format
 * (as convert would open it), one file per convert target ("NAME.json",
 * "NAME.png"...). Made on first use: it reads every entry once, whole, to
 * open it; a file bigger than the cache is left out (its conversions
 * would not fit beside it). */
static void add_conversions(mount_fs *fs, mount_node *src)
{
    if ((src->size_known && src->size > fs->cfg->cache_limit) || load(fs, src) != 0)
        return;
    char path[4096];
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    if (mount_tree_path(src, path, sizeof path) && open_bytes(fs, src, &in, &a) == TROWEL_OK)
        add_targets(fs, src, path, a);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_clear_error(fs->s->ctx);
}

/* How many archives dir is nested in (1: an ENTRY.d/ of the mounted one). */
static int nest_depth(const mount_node *dir)
{
    int depth = 0;
    for (const mount_node *n = dir; n; n = n->parent)
        depth += n->nest_entry != NULL;
    return depth;
}

/* The archive in dir->nest_entry. A stored entry is opened in place (the
 * library reads it through a window of the outer input where it can);
 * any other is decoded once into memory of exactly its size, which the
 * folder keeps (nest_data) until unmount, so it counts its size against
 * the limit. (trowel_archive_open_entry held 7.2 MiB for a 3 MiB zlib
 * .str2_pc: its buffer grows by doubling.) */
static trowel_status open_nested(mount_fs *fs, mount_node *dir)
{
    const mount_node *src = dir->nest_entry;
    trowel_archive *outer = archive_of(fs, src);
    if (strcmp(trowel_archive_entry(outer, src->entry)->method, "stored") == 0)
        return trowel_archive_open_entry(outer, src->entry, NULL, &dir->nested);
    size_t len;
    trowel_status st = trowel_archive_read_entry_data(outer, src->entry, &dir->nest_data, &len);
    if (st == TROWEL_OK)
        st = trowel_input_open_memory(fs->s->ctx, dir->nest_data, len, src->name, &dir->nest_in);
    if (st == TROWEL_OK)
        st = trowel_archive_open(fs->s->ctx, dir->nest_in, NULL, &dir->nested);
    return st;
}

/* Undoes open_nested (whatever part of it was done). */
static void close_nest(mount_fs *fs, mount_node *dir)
{
    trowel_archive_close(dir->nested);
    trowel_input_close(dir->nest_in);
    trowel_archive_free_data(fs->a, dir->nest_data);
    dir->nested = NULL;
    dir->nest_in = NULL;
    dir->nest_data = NULL;
}

/* ENTRY.d/: the nested archive in dir->nest_entry, opened (open_nested)
 * on first use; its memory counts against the limit (cached files make
 * room for it). One that fails to open (damaged, or nested past
 * TROWEL_NEST_MAX) is reported once and its folder gives EIO; the rest
 * stays readable. A .trowel/raw/ folder (nest_raw) shows the entries as
 * stored. */
static void expand_nested(mount_fs *fs, mount_node *dir)
{
    if (nest_depth(dir) > TROWEL_NEST_MAX) {
        dir->nest_failed = true;
        report_message(fs, dir, "nested deeper than " TROWEL_STR(TROWEL_NEST_MAX) " archives");
        return;
    }
    trowel_ctx_clear_error(fs->s->ctx);
    trowel_status st = open_nested(fs, dir);
    if (st == TROWEL_ERR_LIMIT && fs->lru_head) {
        close_nest(fs, dir);
        make_room(fs, UINT64_MAX, NULL);
        trowel_ctx_clear_error(fs->s->ctx);
        st = open_nested(fs, dir);
    }
    if (st != TROWEL_OK) {
        close_nest(fs, dir);
        dir->nest_failed = true;
        report_failure(fs, dir);
        return;
    }
    trowel_archive *nested = dir->nested;
    const trowel_format *f = trowel_archive_format(nested);
    /* Detected as a format without entries (as list -r, nothing inside). */
    if (!(trowel_format_caps(f) & TROWEL_CAP_LIST))
        return;
    static const char *const raw[] = {"raw=1"};
    if (dir->nest_raw && mount_format_has_raw_option(f) &&
        trowel_archive_set_options(nested, raw, 1) != TROWEL_OK) {
        dir->nest_failed = true;
        report_failure(fs, dir);
        return;
    }
    if (add_entries(fs, nested, dir, dir->nest_raw ? MOUNT_VIEW_RAW : MOUNT_VIEW_ENTRY) != 0) {
        dir->nest_failed = true;
        cli_error("%s: out of memory", fs->cfg->archive);
    }
    mount_tree_sort(dir);
}

static void expand(void *user, mount_node *dir);

/* The conversions of every file under dir in the main tree, opening the
 * nested archives met (-r) on the way. */
static void add_conversions_under(mount_fs *fs, mount_node *dir)
{
    for (size_t i = 0; i < dir->child_count; i++) {
        mount_node *c = dir->children[i];
        if (c == fs->views)
            continue;
        if (!c->is_dir) {
            add_conversions(fs, c);
            continue;
        }
        if (!c->expanded)
            expand(fs, c);
        if (!c->nest_failed)
            add_conversions_under(fs, c);
    }
}

static void expand(void *user, mount_node *dir)
{
    mount_fs *fs = user;
    dir->expanded = true;
    if (dir->nest_entry)
        expand_nested(fs, dir);
    if (dir != fs->convert)
        return;
    add_conversions_under(fs, fs->root);
    mount_tree_sort(dir);
}

static void free_targets(mount_node *n)
{
    if (!n->is_dir && n->view == MOUNT_VIEW_CONVERT)
        free((char *)(uintptr_t)n->target);
    for (size_t i = 0; n->is_dir && i < n->child_count; i++)
        free_targets(n->children[i]);
}

/* ------------------------------------------------------------ operations */

static mount_node *find(mount_fs *fs, const char *path)
{
    return mount_tree_lookup(fs->root, path, expand, fs);
}

static void fill_stat(const mount_fs *fs, const mount_node *n, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_uid = getuid();
    st->st_gid = getgid();
    st->st_mtim = fs->archive_st.st_mtim;
    st->st_ctim = fs->archive_st.st_ctim;
    st->st_atim = fs->archive_st.st_atim;
    if (n->is_dir) {
        st->st_mode = S_IFDIR | 0555;
        st->st_nlink = 2;
        return;
    }
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = (off_t)n->size;
    st->st_blksize = 4096;
    st->st_blocks = (blkcnt_t)((n->size + 511) / 512);
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    mount_fs *fs = current_fs();
    mount_node *n = fi && fi->fh ? (mount_node *)(uintptr_t)fi->fh : find(fs, path);
    if (!n)
        return -ENOENT;
    /* A size known only once decoded (a text VCD): decode now, so ls and
     * cp see the true size. A file that fails shows the table's size and
     * gives EIO when read. */
    if (!n->is_dir && !n->size_known && load(fs, n) != 0 && n->view != MOUNT_VIEW_CONVERT) {
        n->size = trowel_archive_entry(archive_of(fs, n), n->entry) ?
                      trowel_archive_entry(archive_of(fs, n), n->entry)->size : 0;
    }
    fill_stat(fs, n, st);
    return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void)off;
    (void)fi;
    (void)flags;
    mount_fs *fs = current_fs();
    mount_node *d = find(fs, path);
    if (!d)
        return -ENOENT;
    if (!d->is_dir)
        return -ENOTDIR;
    if (!d->expanded)
        expand(fs, d);
    if (d->nest_failed)
        return -EIO;
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    for (size_t i = 0; i < d->child_count; i++)
        if (fill(buf, d->children[i]->name, NULL, 0, 0))
            break;
    return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
    if ((fi->flags & O_ACCMODE) != O_RDONLY)
        return -EROFS;
    mount_node *n = find(current_fs(), path);
    if (!n)
        return -ENOENT;
    if (n->is_dir)
        return -EISDIR;
    fi->fh = (uint64_t)(uintptr_t)n;
    fi->keep_cache = 1; /* the bytes never change */
    return 0;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    mount_fs *fs = current_fs();
    mount_node *n = fi->fh ? (mount_node *)(uintptr_t)fi->fh : find(fs, path);
    if (!n || n->is_dir)
        return -ENOENT;
    if (n->failed)
        return -EIO;
    /* An entry not cached: streamed where the library can (a cached one,
     * read whole for a conversion, is served from memory). */
    bool is_entry = n->view == MOUNT_VIEW_ENTRY || n->view == MOUNT_VIEW_RAW;
    int result;
    if (is_entry && n->hold == MOUNT_HOLD_NONE && !n->whole_only && off >= 0 &&
        read_streaming(fs, n, buf, size, off, &result))
        return result;
    int rc = load(fs, n);
    if (rc != 0)
        return rc;
    if (off < 0 || (uint64_t)off >= n->len)
        return 0;
    size_t avail = n->len - (size_t)off;
    size_t got = size < avail ? size : avail;
    memcpy(buf, n->data + off, got);
    return (int)got;
}

static int fs_statfs(const char *path, struct statvfs *sv)
{
    (void)path;
    memset(sv, 0, sizeof *sv);
    sv->f_bsize = 4096;
    sv->f_namemax = 255;
    sv->f_flag = ST_RDONLY;
    return 0;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    (void)conn;
    cfg->kernel_cache = 1;
    cfg->entry_timeout = 3600;
    cfg->attr_timeout = 3600;
    cfg->negative_timeout = 3600;
    return fuse_get_context()->private_data;
}

static const struct fuse_operations operations = {
    .getattr = fs_getattr,
    .readdir = fs_readdir,
    .open = fs_open,
    .read = fs_read,
    .statfs = fs_statfs,
    .init = fs_init,
};

/* ----------------------------------------------------------------- serve */

/* libfuse only installs its handlers (which end the loop, so the mount is
 * undone) over the default ones: the tool's own would kill it mounted. */
static void default_signals(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
}

static int run_loop(mount_fs *fs)
{
    const mount_config *cfg = fs->cfg;
    struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
    int rc = CLI_EXIT_FAILURE;
    if (fuse_opt_add_arg(&args, CLI_PROGRAM) != 0 || fuse_opt_add_arg(&args, "-o") != 0 ||
        fuse_opt_add_arg(&args, "ro,fsname=trowel,subtype=trowel,default_permissions") != 0 ||
        (cfg->debug && fuse_opt_add_arg(&args, "-d") != 0)) {
        cli_error("out of memory");
        fuse_opt_free_args(&args);
        return rc;
    }
    /* libfuse unmounts by this path once detached (in "/") or interrupted. */
    char *point = realpath(cfg->mountpoint, NULL);
    struct fuse *f = point ? fuse_new(&args, &operations, sizeof operations, fs) : NULL;
    if (!point) {
        cli_error("%s: %s", cfg->mountpoint, strerror(errno));
    } else if (!f) {
        cli_error("%s: libfuse could not start", cfg->archive);
    } else if (fuse_mount(f, point) != 0) {
        cli_error("%s: cannot mount on %s (is it an empty folder, and can /dev/fuse be opened?)",
                  cfg->archive, cfg->mountpoint);
    } else {
        struct fuse_session *se = fuse_get_session(f);
        default_signals();
        if (fuse_set_signal_handlers(se) != 0 || fuse_daemonize(cfg->foreground) != 0) {
            cli_error("%s: cannot serve the mount", cfg->archive);
        } else {
            if (!cfg->foreground)
                openlog(CLI_PROGRAM, LOG_PID, LOG_USER);
            /* 0, or the signal that ended it (Ctrl-C unmounts cleanly). */
            rc = fuse_loop(f) >= 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
            fuse_remove_signal_handlers(se);
        }
        fuse_unmount(f);
    }
    if (f)
        fuse_destroy(f);
    free(point);
    fuse_opt_free_args(&args);
    return rc;
}

static void release_all(mount_fs *fs)
{
    while (fs->lru_head)
        release(fs, fs->lru_head);
}

/* Closes the nested archives, the innermost first (each before the archive
 * it lives in). */
static void close_nested(mount_fs *fs, mount_node *n)
{
    for (size_t i = 0; n->is_dir && i < n->child_count; i++)
        close_nested(fs, n->children[i]);
    close_nest(fs, n);
}

int mount_serve(cli_session *s, trowel_archive *a, trowel_archive *raw, const mount_config *cfg)
{
    mount_fs fs = {.s = s, .cfg = cfg, .a = a,
                   .raw = raw};
    if (stat(cfg->archive, &fs.archive_st) != 0)
        memset(&fs.archive_st, 0, sizeof fs.archive_st);
    int rc = CLI_EXIT_FAILURE;
    if (build_tree(&fs) != 0)
        cli_error("out of memory");
    else
        rc = run_loop(&fs);
    close_readers(&fs);
    release_all(&fs);
    if (fs.root) {
        free_targets(fs.root);
        close_nested(&fs, fs.root);
    }
    mount_tree_free(fs.root);
    return rc;
}
