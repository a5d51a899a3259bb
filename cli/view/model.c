/*
 * What `trowel view` browses (see view.h): the files given, their entries,
 * nested archives, and the answers of the page's API as JSON or bytes.
 *
 * Nodes live in one growing array and are named by their index, which is
 * all a request can name. A file given keeps its descriptor for the raw
 * bytes; an entry is read (as extract writes it) and opened as a file of
 * its own when the page asks about it, and closed again when it is the
 * least recently used of more than VIEW_OPEN_MAX; an expanded nested
 * archive stays open, because its entries refer to it.
 */
#include "view.h"

#include "../nested.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NO_NODE SIZE_MAX
/* Entries kept open (decoded and detected) besides the expanded ones. */
#define VIEW_OPEN_MAX 8
/* Problems kept per archive for the page (the count is always exact). */
#define VIEW_PROBLEMS_MAX 200
/* The largest hex page, and the largest text shown whole. */
#define VIEW_PAGE_MAX ((size_t)1 << 20)

typedef struct vnode {
    char *name;          /* the file's base name, or the entry's name */
    char *path;          /* what #entry= names: FILE[/ENTRY[/INNER]] */
    size_t parent;       /* NO_NODE for a file given */
    trowel_archive *owner; /* entries: the archive holding it */
    size_t entry;
    int fd;              /* files given: for their bytes; else -1 */
    uint64_t file_size;
    /* Opened as a file of its own (files given: at start). */
    bool opened;
    uint8_t *data;       /* entries: the bytes extract writes */
    size_t len;
    trowel_input *in;
    trowel_archive *archive; /* NULL: no format trowel knows (or failed) */
    char *error;         /* why it would not read or open */
    json_object *problems; /* warnings met while opening */
    size_t problem_count;
    /* Children, once expanded. */
    size_t *kids;
    size_t kid_count;
    bool expanded;
    uint64_t used;       /* when last asked about (LRU) */
} vnode;

typedef struct folder_file {
    char *name;
    uint8_t *data;
    size_t len;
} folder_file;

struct view_model {
    cli_session *s;
    vnode *nodes;
    size_t count, cap;
    size_t roots;        /* the first roots nodes are the files given */
    uint64_t tick;
    vnode *collecting;   /* warnings go to this node's problems */
    /* The last conversion that made a folder, kept for its files. */
    size_t folder_node;
    char *folder_target, *folder_opt;
    folder_file *folder;
    size_t folder_count;
    json_object *folder_notes; /* what the library warned of while converting */
    bool taking_notes;
};

/* ------------------------------------------------------------- replies */

void view_reply_free(view_reply *r)
{
    free(r->data);
    free(r->filename);
    memset(r, 0, sizeof *r);
}

static void reply_text(view_reply *r, unsigned status, const char *type, const char *text)
{
    r->status = status;
    r->type = type;
    r->data = strdup(text);
    r->len = r->data ? strlen(r->data) : 0;
}

static void reply_json(view_reply *r, json_object *o)
{
    reply_text(r, 200, "application/json",
               json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                     JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}

static void reply_error(view_reply *r, unsigned status, const char *fmt, ...) CLI_PRINTF(3, 4);
static void reply_error(view_reply *r, unsigned status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", json_object_new_string(msg));
    reply_json(r, o);
    r->status = status;
}

/* Takes ownership of data (malloc'ed). */
static void reply_bytes(view_reply *r, uint8_t *data, size_t len, const char *type)
{
    r->status = 200;
    r->type = type;
    r->data = (char *)data;
    r->len = len;
}

static void reply_copy(view_reply *r, const uint8_t *data, size_t len, const char *type)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) {
        reply_error(r, 500, "out of memory");
        return;
    }
    if (len)
        memcpy(copy, data, len);
    reply_bytes(r, copy, len, type);
}

/* The media type of a file the page is given, by its extension. */
static const char *media_type(const char *name)
{
    static const struct { const char *ext, *type; } types[] = {
        {".png", "image/png"},       {".gif", "image/gif"},
        {".glb", "model/gltf-binary"}, {".wav", "audio/wav"},
        {".json", "application/json"}, {".obj", "text/plain; charset=utf-8"},
        {".mtl", "text/plain; charset=utf-8"}, {".vcd", "text/plain; charset=utf-8"},
        {".txt", "text/plain; charset=utf-8"},
    };
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}

/* --------------------------------------------------------------- nodes */

static char *str_printf(const char *fmt, ...) CLI_PRINTF(1, 2);
static char *str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return s;
}

static size_t add_node(view_model *m, const char *name, const char *path, size_t parent)
{
    if (m->count == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        vnode *grown = realloc(m->nodes, cap * sizeof *grown);
        if (!grown)
            return NO_NODE;
        m->nodes = grown;
        m->cap = cap;
    }
    vnode *n = &m->nodes[m->count];
    memset(n, 0, sizeof *n);
    n->name = strdup(name);
    n->path = strdup(path);
    n->parent = parent;
    n->fd = -1;
    n->entry = NO_NODE;
    if (!n->name || !n->path) {
        free(n->name);
        free(n->path);
        return NO_NODE;
    }
    return m->count++;
}

static void set_error(vnode *n, const char *fmt, ...) CLI_PRINTF(2, 3);
static void set_error(vnode *n, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    free(n->error);
    n->error = strdup(msg);
}

/* The context's last error in words ("truncated data at 0x1a2b: ..."). */
static void set_error_from_ctx(view_model *m, vnode *n)
{
    const trowel_error *e = trowel_ctx_last_error(m->s->ctx);
    char where[64] = "";
    if (e->offset != TROWEL_NO_OFFSET)
        snprintf(where, sizeof where, " (offset 0x%" PRIx64 ")", e->offset);
    set_error(n, "%s%s%s%s", e->entry[0] ? e->entry : "", e->entry[0] ? ": " : "",
              e->message[0] ? e->message : trowel_status_string(e->status), where);
}

/* Warnings while a node opens: kept for the page, counted, not printed
 * one by one (the summary line goes to stderr). */
static void collect_warning(void *user, const trowel_error *w)
{
    view_model *m = user;
    vnode *n = m->collecting;
    if (!n && m->taking_notes) { /* a conversion's guess (a palette), for the page */
        if (!m->folder_notes)
            m->folder_notes = json_object_new_array();
        if (json_object_array_length(m->folder_notes) < VIEW_PROBLEMS_MAX)
            json_object_array_add(m->folder_notes, json_object_new_string(w->message));
        return;
    }
    if (!n)
        return;
    n->problem_count++;
    if (n->problem_count > VIEW_PROBLEMS_MAX)
        return;
    if (!n->problems)
        n->problems = json_object_new_array();
    json_object *o = json_object_new_object();
    json_object_object_add(o, "entry", json_object_new_string(w->entry));
    json_object_object_add(o, "message", json_object_new_string(w->message));
    if (w->offset != TROWEL_NO_OFFSET)
        json_object_object_add(o, "offset", json_object_new_uint64(w->offset));
    json_object_array_add(n->problems, o);
}

static void begin_collect(view_model *m, vnode *n)
{
    m->collecting = n;
    trowel_ctx_clear_error(m->s->ctx);
}

static void end_collect(view_model *m)
{
    m->collecting = NULL;
}

/* Opens the node's bytes as a file of its own (detected). An entry is
 * read first. A node that is no format trowel knows stays open without an
 * archive (its bytes are still shown). */
static bool open_node(view_model *m, size_t id)
{
    vnode *n = &m->nodes[id];
    n->used = ++m->tick;
    if (n->opened)
        return n->error == NULL || n->data || n->fd >= 0;
    n->opened = true;
    begin_collect(m, n);
    trowel_status st = TROWEL_OK;
    if (n->fd < 0) {
        st = trowel_archive_read_entry_data(n->owner, n->entry, &n->data, &n->len);
        if (st != TROWEL_OK) {
            set_error_from_ctx(m, n);
            end_collect(m);
            return false;
        }
        st = trowel_input_open_memory(m->s->ctx, n->data, n->len, n->name, &n->in);
    }
    if (st == TROWEL_OK)
        st = trowel_archive_open(m->s->ctx, n->in, NULL, &n->archive);
    if (st == TROWEL_ERR_UNSUPPORTED)
        trowel_ctx_clear_error(m->s->ctx); /* plain bytes: shown as text or hex */
    else if (st != TROWEL_OK)
        set_error_from_ctx(m, n);
    end_collect(m);
    return true;
}

static void free_folder(view_model *m)
{
    for (size_t i = 0; i < m->folder_count; i++) {
        free(m->folder[i].name);
        free(m->folder[i].data);
    }
    free(m->folder);
    json_object_put(m->folder_notes);
    m->folder_notes = NULL;
    free(m->folder_target);
    free(m->folder_opt);
    m->folder = NULL;
    m->folder_count = 0;
    m->folder_target = m->folder_opt = NULL;
    m->folder_node = NO_NODE;
}

/* Undoes open_node for an entry (files given stay open). */
static void close_node(view_model *m, vnode *n)
{
    if (m->folder_node != NO_NODE && &m->nodes[m->folder_node] == n)
        free_folder(m);
    trowel_archive_close(n->archive);
    n->archive = NULL;
    if (n->fd < 0) {
        trowel_input_close(n->in);
        n->in = NULL;
        if (n->owner)
            trowel_archive_free_data(n->owner, n->data);
        n->data = NULL;
        n->len = 0;
    }
    json_object_put(n->problems);
    n->problems = NULL;
    n->problem_count = 0;
    free(n->error);
    n->error = NULL;
    n->opened = false;
}

/* Closes the least recently used open entries past VIEW_OPEN_MAX; keep is
 * never closed. Expanded archives and files given are never closed. */
static void trim_open(view_model *m, size_t keep)
{
    for (;;) {
        size_t open = 0, oldest = NO_NODE;
        for (size_t i = m->roots; i < m->count; i++) {
            vnode *n = &m->nodes[i];
            if (!n->opened || n->expanded || i == keep)
                continue;
            open++;
            if (oldest == NO_NODE || n->used < m->nodes[oldest].used)
                oldest = i;
        }
        if (open <= VIEW_OPEN_MAX || oldest == NO_NODE)
            return;
        close_node(m, &m->nodes[oldest]);
    }
}

/* True when the node may hold entries of its own (shown with a triangle). */
static bool expandable(const view_model *m, size_t id)
{
    const vnode *n = &m->nodes[id];
    if (n->expanded)
        return n->kid_count > 0;
    if (n->fd >= 0)
        return n->archive && (trowel_format_caps(trowel_archive_format(n->archive)) &
                              TROWEL_CAP_LIST);
    return cli_nested_candidate(n->name);
}

/* Fills the node's children from its archive (opening it first). */
static bool expand(view_model *m, size_t id)
{
    if (m->nodes[id].expanded)
        return true;
    if (!open_node(m, id) || !m->nodes[id].archive)
        return false;
    trowel_archive *a = m->nodes[id].archive;
    if (!(trowel_format_caps(trowel_archive_format(a)) & TROWEL_CAP_LIST))
        return false;
    size_t count = trowel_archive_entry_count(a);
    size_t *kids = calloc(count ? count : 1, sizeof *kids);
    if (!kids)
        return false;
    for (size_t i = 0; i < count; i++) {
        const trowel_entry *e = trowel_archive_entry(a, i);
        char *path = str_printf("%s/%s", m->nodes[id].path, e->name);
        size_t k = path ? add_node(m, e->name, path, id) : NO_NODE;
        free(path);
        if (k == NO_NODE) {
            free(kids);
            return false;
        }
        m->nodes[k].owner = a;
        m->nodes[k].entry = i;
        kids[i] = k;
    }
    vnode *n = &m->nodes[id]; /* add_node may have moved the array */
    n->kids = kids;
    n->kid_count = count;
    n->expanded = true;
    return true;
}

/* ------------------------------------------------------------ open/close */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

static void open_root(view_model *m, const char *path)
{
    size_t id = add_node(m, base_name(path), base_name(path), NO_NODE);
    if (id == NO_NODE)
        return;
    vnode *n = &m->nodes[id];
    n->opened = true;
    begin_collect(m, n);
    trowel_status st = trowel_input_open_file(m->s->ctx, path, &n->in);
    if (st == TROWEL_OK)
        st = trowel_archive_open(m->s->ctx, n->in, NULL, &n->archive);
    if (st != TROWEL_OK && st != TROWEL_ERR_UNSUPPORTED)
        set_error_from_ctx(m, n);
    trowel_ctx_clear_error(m->s->ctx);
    end_collect(m);
    n->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat sb;
    if (n->fd >= 0 && fstat(n->fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        n->file_size = (uint64_t)sb.st_size;
    } else {
        if (!n->error)
            set_error(n, "cannot read: %s", n->fd < 0 ? strerror(errno) : "not a regular file");
        if (n->fd >= 0)
            close(n->fd);
        n->fd = -2; /* a file given, whose bytes cannot be shown */
    }
    if (n->error)
        cli_error("%s: %s", path, n->error);
    else if (n->problem_count)
        cli_error("%s: damaged: %zu problem%s (listed in the page)", path, n->problem_count,
                  n->problem_count == 1 ? "" : "s");
}

view_model *view_model_open(cli_session *s, const char *const *paths, size_t count)
{
    view_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->s = s;
    m->folder_node = NO_NODE;
    trowel_ctx_set_warning_handler(s->ctx, collect_warning, m);
    for (size_t i = 0; i < count; i++)
        open_root(m, paths[i]);
    m->roots = m->count;
    if (m->roots != count) {
        view_model_close(m);
        return NULL;
    }
    return m;
}

void view_model_close(view_model *m)
{
    if (!m)
        return;
    free_folder(m);
    /* Children before parents: an entry's archive before its owner. */
    for (size_t i = m->count; i-- > 0;) {
        vnode *n = &m->nodes[i];
        close_node(m, n);
        if (n->fd >= 0)
            close(n->fd);
        trowel_input_close(n->in);
        free(n->kids);
        free(n->name);
        free(n->path);
    }
    free(m->nodes);
    trowel_ctx_set_warning_handler(m->s->ctx, NULL, NULL);
    free(m);
}

/* ------------------------------------------------------------------ JSON */

static json_object *jstr(const char *s)
{
    return json_object_new_string(s ? s : "");
}

/* True when a problem met while opening the entry's archive names it: as
 * its entry, or in its message as "(NAME)" (VPP says "entry 3 (NAME)"). */
static bool named_in_problems(const view_model *m, const vnode *n)
{
    if (n->parent == NO_NODE || !m->nodes[n->parent].problems)
        return false;
    json_object *list = m->nodes[n->parent].problems;
    size_t len = strlen(n->name);
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *p = json_object_array_get_idx(list, i), *e, *msg;
        if (json_object_object_get_ex(p, "entry", &e) &&
            strcmp(json_object_get_string(e), n->name) == 0)
            return true;
        if (!json_object_object_get_ex(p, "message", &msg))
            continue;
        const char *text = json_object_get_string(msg);
        for (const char *at = strstr(text, n->name); at; at = strstr(at + 1, n->name))
            if (at > text && at[-1] == '(' && at[len] == ')')
                return true;
    }
    return false;
}

static json_object *node_summary(view_model *m, size_t id)
{
    vnode *n = &m->nodes[id];
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_uint64(id));
    json_object_object_add(o, "name", jstr(n->name));
    if (n->parent == NO_NODE) /* an entry's path is its parent's, '/', its name */
        json_object_object_add(o, "path", jstr(n->path));
    if (n->owner) {
        const trowel_entry *e = trowel_archive_entry(n->owner, n->entry);
        json_object_object_add(o, "size", json_object_new_uint64(e->size));
        json_object_object_add(o, "packed_size", json_object_new_uint64(e->packed_size));
    } else {
        json_object_object_add(o, "size", json_object_new_uint64(n->file_size));
    }
    if (expandable(m, id)) /* absent: false (most entries; the list stays small) */
        json_object_object_add(o, "expandable", json_object_new_boolean(1));
    if (n->error)
        json_object_object_add(o, "error", jstr(n->error));
    if (n->problem_count || (n->archive && trowel_archive_damaged(n->archive)) ||
        named_in_problems(m, n))
        json_object_object_add(o, "damaged", json_object_new_boolean(1));
    return o;
}

/* Parses a node number; false when it names none. */
static bool node_arg(const view_model *m, const char *text, size_t *out)
{
    unsigned long v;
    if (!text || !cli_parse_count(text, ULONG_MAX, &v) || v >= m->count)
        return false;
    *out = (size_t)v;
    return true;
}

static void api_children(view_model *m, const view_query *q, view_reply *r)
{
    json_object *list = json_object_new_array();
    size_t id = NO_NODE;
    if (q->node && !node_arg(m, q->node, &id)) {
        json_object_put(list);
        reply_error(r, 404, "no such node");
        return;
    }
    if (id == NO_NODE) {
        for (size_t i = 0; i < m->roots; i++)
            json_object_array_add(list, node_summary(m, i));
    } else {
        if (!expand(m, id)) {
            json_object_put(list);
            vnode *n = &m->nodes[id];
            reply_error(r, 422, "%s: %s", n->path, n->error ? n->error : "holds no entries");
            return;
        }
        for (size_t i = 0; i < m->nodes[id].kid_count; i++)
            json_object_array_add(list, node_summary(m, m->nodes[id].kids[i]));
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "nodes", list);
    reply_json(r, o);
}

/* The node a deep link names: FILE, then an entry name (names may hold
 * '/'), then an entry of that entry's archive, and so on. */
static size_t find_path(view_model *m, const char *path)
{
    for (size_t i = 0; i < m->roots; i++) {
        size_t id = i;
        const char *rest = path;
        size_t len = strlen(m->nodes[i].name);
        if (strncmp(rest, m->nodes[i].name, len) != 0 || (rest[len] && rest[len] != '/'))
            continue;
        rest += len;
        while (*rest == '/') {
            rest++;
            if (!expand(m, id))
                break;
            size_t best = NO_NODE, best_len = 0;
            for (size_t k = 0; k < m->nodes[id].kid_count; k++) {
                size_t kid = m->nodes[id].kids[k];
                const char *name = m->nodes[kid].name;
                size_t nl = strlen(name);
                if (strncmp(rest, name, nl) == 0 && (rest[nl] == '\0' || rest[nl] == '/') &&
                    nl > best_len) {
                    best = kid;
                    best_len = nl;
                }
            }
            if (best == NO_NODE)
                return NO_NODE;
            id = best;
            rest += best_len;
        }
        if (*rest == '\0')
            return id;
    }
    return NO_NODE;
}

static void api_find(view_model *m, const view_query *q, view_reply *r)
{
    size_t id = q->path ? find_path(m, q->path) : NO_NODE;
    if (id == NO_NODE) {
        reply_error(r, 404, "no entry %s", q->path ? q->path : "(none)");
        return;
    }
    json_object *o = json_object_new_object();
    json_object *chain = json_object_new_array(); /* outermost first */
    size_t ids[64], depth = 0;
    for (size_t p = m->nodes[id].parent; p != NO_NODE && depth < 64; p = m->nodes[p].parent)
        ids[depth++] = p;
    while (depth > 0)
        json_object_array_add(chain, json_object_new_uint64(ids[--depth]));
    json_object_object_add(o, "id", json_object_new_uint64(id));
    json_object_object_add(o, "parents", chain);
    reply_json(r, o);
}

/* ------------------------------------------------------------------ info */

static json_object *prop_value(const trowel_prop *p)
{
    switch (p->type) {
    case TROWEL_VALUE_INT: return json_object_new_int64(p->i);
    case TROWEL_VALUE_UINT: return json_object_new_uint64(p->u);
    case TROWEL_VALUE_BOOL: return json_object_new_boolean(p->i != 0);
    case TROWEL_VALUE_DOUBLE: return json_object_new_double(p->d);
    case TROWEL_VALUE_STRING: return jstr(p->s);
    case TROWEL_VALUE_STRING_LIST: {
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < p->list_len; i++)
            json_object_array_add(a, jstr(p->list[i]));
        return a;
    }
    }
    return NULL;
}

static json_object *props_object(const trowel_props *props)
{
    json_object *o = json_object_new_object();
    for (size_t i = 0; props && i < trowel_props_count(props); i++) {
        const trowel_prop *p = trowel_props_at(props, i);
        json_object_object_add(o, p->key, prop_value(p));
    }
    return o;
}

static json_object *targets_array(const trowel_format *f)
{
    json_object *a = json_object_new_array();
    json_object_array_add(a, jstr("json"));
    const char *list = trowel_format_convert_targets(f), *word;
    size_t len;
    while (list && cli_next_word(&list, &word, &len))
        if (!(len == 4 && strncmp(word, "json", 4) == 0))
            json_object_array_add(a, json_object_new_string_len(word, (int)len));
    return a;
}

static bool has_target(const trowel_format *f, const char *target)
{
    const char *list = trowel_format_convert_targets(f);
    return list && cli_word_in_list(list, target, strlen(target));
}

static void api_info(view_model *m, size_t id, view_reply *r)
{
    open_node(m, id);
    vnode *n = &m->nodes[id];
    json_object *o = json_object_new_object();
    json_object_object_add(o, "node", node_summary(m, id));
    if (n->owner) {
        const trowel_entry *e = trowel_archive_entry(n->owner, n->entry);
        json_object *eo = json_object_new_object();
        json_object_object_add(eo, "name", jstr(e->name));
        json_object_object_add(eo, "size", json_object_new_uint64(e->size));
        json_object_object_add(eo, "packed_size", json_object_new_uint64(e->packed_size));
        json_object_object_add(eo, "offset", json_object_new_uint64(e->offset));
        json_object_object_add(eo, "method", jstr(e->method));
        json_object *extra = props_object(e->extra);
        json_object_object_foreach(extra, k, v) json_object_object_add(eo, k, json_object_get(v));
        json_object_put(extra);
        json_object_object_add(o, "entry", eo);
    }
    if (n->archive) {
        const trowel_format *f = trowel_archive_format(n->archive);
        json_object *fo = props_object(trowel_archive_info(n->archive));
        json_object_object_add(fo, "format_description", jstr(trowel_format_description(f)));
        json_object_object_add(fo, "family", jstr(trowel_format_family(f)));
        json_object_object_add(fo, "entries",
                               json_object_new_uint64(trowel_archive_entry_count(n->archive)));
        size_t filters = trowel_archive_filter_count(n->archive);
        if (filters) {
            json_object *chain = json_object_new_array();
            for (size_t i = 0; i < filters; i++)
                json_object_array_add(chain, jstr(trowel_archive_filter_id(n->archive, i)));
            json_object_object_add(fo, "filters", chain);
        }
        json_object_object_add(o, "info", fo);
        json_object_object_add(o, "targets", targets_array(f));
    }
    if (n->error)
        json_object_object_add(o, "error", jstr(n->error));
    if (n->problem_count) {
        json_object_object_add(o, "problem_count", json_object_new_uint64(n->problem_count));
        json_object_object_add(o, "problems", json_object_get(n->problems));
    }
    reply_json(r, o);
}

/* ------------------------------------------------------------- raw bytes */

/* The node's bytes from off, at most len (0: to the end, up to a limit
 * for a page; whole for a download). */
static void api_raw(view_model *m, size_t id, const view_query *q, view_reply *r)
{
    if (!open_node(m, id) && !m->nodes[id].data) {
        reply_error(r, 422, "%s: %s", m->nodes[id].path, m->nodes[id].error);
        return;
    }
    vnode *n = &m->nodes[id];
    uint64_t size = n->fd >= 0 ? n->file_size : n->len;
    uint64_t off = 0, want = size;
    if (q->off && !cli_parse_size(q->off, &off)) {
        reply_error(r, 400, "bad offset");
        return;
    }
    if (q->len && !cli_parse_size(q->len, &want)) {
        reply_error(r, 400, "bad length");
        return;
    }
    if (off > size)
        off = size;
    if (want > size - off)
        want = size - off;
    if (!q->download && want > VIEW_PAGE_MAX)
        want = VIEW_PAGE_MAX;
    if (want > trowel_ctx_mem_limit(m->s->ctx)) {
        reply_error(r, 413, "%s: %" PRIu64 " bytes is over the memory limit", n->path, want);
        return;
    }
    if (n->fd == -2) {
        reply_error(r, 422, "%s: %s", n->path, n->error ? n->error : "cannot be read");
        return;
    }
    uint8_t *buf = malloc(want ? (size_t)want : 1);
    if (!buf) {
        reply_error(r, 500, "out of memory");
        return;
    }
    if (n->fd >= 0) {
        size_t done = 0;
        while (done < want) {
            ssize_t got = pread(n->fd, buf + done, (size_t)want - done, (off_t)(off + done));
            if (got <= 0) {
                free(buf);
                reply_error(r, 500, "%s: read failed", n->path);
                return;
            }
            done += (size_t)got;
        }
    } else if (want) {
        memcpy(buf, n->data + off, (size_t)want);
    }
    reply_bytes(r, buf, (size_t)want, "application/octet-stream");
    if (q->download)
        r->filename = strdup(base_name(n->name));
}

/* ------------------------------------------------------------ conversion */

/* Removes the temporary folder a conversion wrote, and all in it. */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *path = str_printf("%s/%s", dir, de->d_name);
        struct stat sb;
        if (path && lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            remove_tree(path);
        else if (path)
            unlink(path);
        free(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Reads the files a folder conversion wrote (one level, sorted by name). */
static int by_name(const void *a, const void *b)
{
    return strcmp(((const folder_file *)a)->name, ((const folder_file *)b)->name);
}

/* Reads the files a folder conversion wrote, below dir, named by their
 * path under it ("room06/cost005/anim014_S.gif"), sorted by name. */
static bool read_folder_under(view_model *m, const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *de;
    bool ok = true;
    while (ok && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char *path = str_printf("%s/%s", dir, de->d_name);
        char *name = str_printf("%s%s", prefix, de->d_name);
        struct stat sb;
        if (!path || !name || lstat(path, &sb) != 0) {
            ok = false;
        } else if (S_ISDIR(sb.st_mode)) {
            char *deeper = str_printf("%s/", name);
            ok = deeper && read_folder_under(m, path, deeper);
            free(deeper);
        } else if (S_ISREG(sb.st_mode)) {
            char *data = NULL;
            size_t len = 0;
            folder_file *grown = NULL;
            ok = cli_read_file(m->s, path, &data, &len) == CLI_EXIT_OK &&
                 (grown = realloc(m->folder, (m->folder_count + 1) * sizeof *grown)) != NULL;
            if (ok) {
                m->folder = grown;
                m->folder[m->folder_count++] = (folder_file){name, (uint8_t *)data, len};
                name = NULL;
            } else {
                free(data);
            }
        }
        free(path);
        free(name);
    }
    closedir(d);
    return ok;
}

static bool read_folder(view_model *m, const char *dir)
{
    bool ok = read_folder_under(m, dir, "");
    if (m->folder_count)
        qsort(m->folder, m->folder_count, sizeof *m->folder, by_name);
    return ok;
}

/* A costume inside a SCUMM game converts through its game, as `trowel
 * convert GAME -O entry=NAME` does, so that it takes its room's palette
 * (or the game's fallback) and not a stand-in. Its files are named below
 * the costume's folder (roomNN/costNNN/), which the page does not show. */
static bool game_costume(const view_model *m, const vnode *n)
{
    if (!n->owner || n->parent == NO_NODE)
        return false;
    const char *id = trowel_format_id(trowel_archive_format(n->owner));
    const char *dot = strrchr(n->name, '.');
    return strcmp(id, "scumm-res") == 0 && dot &&
           (strcmp(dot, ".cost") == 0 || strcmp(dot, ".akos") == 0) &&
           m->nodes[n->parent].archive == n->owner;
}

/* The game's conversion of one costume writes roomNN/costNNN/FILE: the
 * files are offered as FILE, as the costume's own conversion names them. */
static void strip_costume_folder(view_model *m, const char *entry)
{
    const char *dot = strrchr(entry, '.');
    size_t len = dot ? (size_t)(dot - entry) : strlen(entry);
    for (size_t i = 0; i < m->folder_count; i++) {
        char *name = m->folder[i].name;
        if (strncmp(name, entry, len) == 0 && name[len] == '/')
            memmove(name, name + len + 1, strlen(name + len + 1) + 1);
    }
}

/* A conversion that writes a folder: made in a private temporary folder,
 * read back into memory, the folder removed; the last one is kept. */
static trowel_status convert_folder(view_model *m, size_t id, const char *target,
                                    const char *const *opts, size_t nopt)
{
    if (m->folder_node == id && strcmp(m->folder_target, target) == 0 &&
        strcmp(m->folder_opt, nopt ? opts[0] : "") == 0)
        return TROWEL_OK;
    free_folder(m);
    const char *tmp = getenv("TMPDIR");
    char *dir = str_printf("%s/trowel-view-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!dir || !mkdtemp(dir)) {
        free(dir);
        return TROWEL_ERR_IO;
    }
    trowel_outdir *od = NULL;
    trowel_status st = trowel_outdir_open(m->s->ctx, dir, 0, &od);
    vnode *n = &m->nodes[id];
    m->taking_notes = true;
    char *entry_opt = NULL;
    if (st == TROWEL_OK && game_costume(m, n) && nopt == 0) {
        entry_opt = str_printf("entry=%s", n->name);
        const char *game_opts[1] = {entry_opt};
        st = entry_opt ? trowel_convert_folder(m->s->ctx, n->owner, target, game_opts, 1, od)
                       : TROWEL_ERR_NOMEM;
    } else if (st == TROWEL_OK) {
        st = trowel_convert_folder(m->s->ctx, n->archive, target, opts, nopt, od);
    }
    m->taking_notes = false;
    trowel_outdir_close(od);
    if (st == TROWEL_OK && !read_folder(m, dir)) {
        free_folder(m);
        st = TROWEL_ERR_LIMIT;
    }
    if (st == TROWEL_OK && entry_opt)
        strip_costume_folder(m, n->name);
    free(entry_opt);
    remove_tree(dir);
    free(dir);
    if (st == TROWEL_OK) {
        m->folder_node = id;
        m->folder_target = strdup(target);
        m->folder_opt = strdup(nopt ? opts[0] : "");
    }
    return st;
}

static void reply_failure(view_model *m, view_reply *r, const char *what)
{
    const trowel_error *e = trowel_ctx_last_error(m->s->ctx);
    unsigned status = e->status == TROWEL_ERR_USAGE || e->status == TROWEL_ERR_UNSUPPORTED ? 400
                                                                                           : 422;
    char where[64] = "";
    if (e->offset != TROWEL_NO_OFFSET)
        snprintf(where, sizeof where, " (offset 0x%" PRIx64 ")", e->offset);
    reply_error(r, status, "%s: %s%s%s%s", what, e->entry[0] ? e->entry : "",
                e->entry[0] ? ": " : "", e->message[0] ? e->message : trowel_status_string(e->status),
                where);
}

static void api_convert(view_model *m, size_t id, const view_query *q, view_reply *r)
{
    vnode *n = &m->nodes[id];
    if (!open_node(m, id) || !n->archive) {
        reply_error(r, 422, "%s: %s", n->path, n->error ? n->error : "no format trowel knows");
        return;
    }
    if (!q->to || !cli_known_target(q->to)) {
        reply_error(r, 400, "no such target");
        return;
    }
    const char *opts[1] = {q->opt};
    size_t nopt = q->opt && *q->opt ? 1 : 0;
    trowel_ctx_clear_error(m->s->ctx);
    if (trowel_convert_makes_folder(n->archive, q->to)) {
        if (convert_folder(m, id, q->to, opts, nopt) != TROWEL_OK) {
            reply_failure(m, r, n->path);
            return;
        }
        if (!q->file) { /* the list of files */
            json_object *o = json_object_new_object(), *files = json_object_new_array();
            for (size_t i = 0; i < m->folder_count; i++) {
                json_object *fo = json_object_new_object();
                json_object_object_add(fo, "name", jstr(m->folder[i].name));
                json_object_object_add(fo, "size", json_object_new_uint64(m->folder[i].len));
                json_object_array_add(files, fo);
            }
            json_object_object_add(o, "files", files);
            if (m->folder_notes)
                json_object_object_add(o, "notes", json_object_get(m->folder_notes));
            reply_json(r, o);
            return;
        }
        for (size_t i = 0; i < m->folder_count; i++)
            if (strcmp(m->folder[i].name, q->file) == 0) {
                reply_copy(r, m->folder[i].data, m->folder[i].len, media_type(q->file));
                if (q->download)
                    r->filename = strdup(q->file);
                return;
            }
        reply_error(r, 404, "no file %s in that conversion", q->file);
        return;
    }
    trowel_sink *sink = NULL;
    trowel_status st = trowel_sink_open_memory(m->s->ctx, &sink);
    if (st == TROWEL_OK)
        st = trowel_convert(m->s->ctx, n->archive, q->to, opts, nopt, sink);
    if (st != TROWEL_OK) {
        trowel_sink_discard(sink);
        reply_failure(m, r, n->path);
        return;
    }
    size_t len;
    const uint8_t *data = trowel_sink_data(sink, &len);
    char *fname = str_printf("%s.%s", base_name(n->name), q->to);
    reply_copy(r, data, len, fname ? media_type(fname) : "application/octet-stream");
    if (strcmp(q->to, "vcd") == 0 || strcmp(q->to, "json-full") == 0 ||
        strcmp(q->to, "placements") == 0 || strcmp(q->to, "values") == 0)
        r->type = strcmp(q->to, "vcd") == 0 ? "text/plain; charset=utf-8" : "application/json";
    trowel_sink_discard(sink);
    if (q->download)
        r->filename = fname;
    else
        free(fname);
}

/* --------------------------------------------------------------- preview */

/* Bytes that read as text: UTF-8 without control characters but white
 * space, in the first 4 KiB. */
static bool looks_like_text(const uint8_t *p, size_t len)
{
    if (len == 0)
        return true;
    size_t n = len < 4096 ? len : 4096;
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 && p[i] != '\n' && p[i] != '\r' && p[i] != '\t')
            return false;
    return true;
}

/* A format whose entries are files of their own (a packfile, a game's
 * resource file, a texture directory): its preview lists them. A SCUMM
 * game converts to pictures too, but only all its costumes at once, too
 * slow for a first look; the tree shows each. Assets that list their
 * parts (a costume's pictures, a script's procedures) are previewed as
 * what they are. */
static bool is_container(const trowel_format *f)
{
    static const char *const containers[] = {"scumm-res", "cine-volcnf", "tres-pid", "spz"};
    unsigned caps = trowel_format_caps(f);
    if (!(caps & TROWEL_CAP_LIST))
        return false;
    if (caps & TROWEL_CAP_MANIFEST)
        return true;
    for (size_t i = 0; i < sizeof containers / sizeof containers[0]; i++)
        if (strcmp(trowel_format_id(f), containers[i]) == 0)
            return true;
    return false;
}

/* The animations of a costume (one GIF each, from the gif target) or of
 * a Cinematique ANI/SET (one PNG each frame, from png with frame=N). */
static const char *preview_kind(view_model *m, vnode *n, json_object *o)
{
    (void)m;
    if (!n->archive) {
        const uint8_t *p = n->data;
        uint8_t head[4096];
        size_t len = n->len;
        if (n->fd >= 0) {
            ssize_t got = pread(n->fd, head, sizeof head, 0);
            p = head;
            len = got > 0 ? (size_t)got : 0;
        }
        /* Pictures and sounds stored as such (a PID's textures are PNGs). */
        if (len >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0)
            return json_object_object_add(o, "native", jstr("image/png")), "image";
        if (len >= 6 && (memcmp(p, "GIF87a", 6) == 0 || memcmp(p, "GIF89a", 6) == 0))
            return json_object_object_add(o, "native", jstr("image/gif")), "image";
        if (len >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WAVE", 4) == 0)
            return json_object_object_add(o, "native", jstr("audio/wav")), "audio";
        return looks_like_text(p, len) ? "text" : "hex";
    }
    const trowel_format *f = trowel_archive_format(n->archive);
    const char *id = trowel_format_id(f);
    /* A GROFF world (.grf) is meshes; a GROFF scene or save (.scn) none. */
    if (has_target(f, "glb") && (strcmp(id, "groff") != 0 || strstr(n->name, ".grf") ||
                                 strstr(n->name, ".GRF")))
        return "3d";
    if (is_container(f))
        return "list";
    if (has_target(f, "gif"))
        return "animation";
    if (has_target(f, "png") && trowel_format_option_at(f, 0)) {
        for (size_t i = 0; trowel_format_option_at(f, i); i++)
            if (strcmp(trowel_format_option_at(f, i)->key, "frame") == 0) {
                const trowel_prop *frames = trowel_props_find(trowel_archive_info(n->archive),
                                                              "frames");
                if (frames && frames->type == TROWEL_VALUE_UINT && frames->u > 1) {
                    json_object_object_add(o, "frames", json_object_new_uint64(frames->u));
                    return "animation";
                }
            }
    }
    if (has_target(f, "wav"))
        return "audio";
    if (has_target(f, "json-full"))
        return "timeline";
    if (has_target(f, "png"))
        return "image";
    return "text";
}

static void api_preview(view_model *m, size_t id, view_reply *r)
{
    open_node(m, id);
    vnode *n = &m->nodes[id];
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_uint64(id));
    json_object_object_add(o, "path", jstr(n->path));
    if (n->error && !n->data && n->fd < 0) {
        json_object_object_add(o, "kind", jstr("error"));
        json_object_object_add(o, "error", jstr(n->error));
        reply_json(r, o);
        return;
    }
    json_object_object_add(o, "kind", jstr(preview_kind(m, n, o)));
    if (n->archive) {
        const trowel_format *f = trowel_archive_format(n->archive);
        json_object_object_add(o, "format", jstr(trowel_format_id(f)));
        json_object_object_add(o, "targets", targets_array(f));
        json_object *keys = json_object_new_array();
        for (size_t i = 0; trowel_format_option_at(f, i); i++)
            if (trowel_format_option_at(f, i)->targets)
                json_object_array_add(keys, jstr(trowel_format_option_at(f, i)->key));
        json_object_object_add(o, "options", keys);
        if (has_target(f, "png") || has_target(f, "gif")) {
            json_object *folders = json_object_new_array();
            json_object *tl = targets_array(f);
            for (size_t i = 0; i < json_object_array_length(tl); i++) {
                const char *t = json_object_get_string(json_object_array_get_idx(tl, i));
                if (trowel_convert_makes_folder(n->archive, t))
                    json_object_array_add(folders, jstr(t));
            }
            json_object_put(tl);
            json_object_object_add(o, "folder_targets", folders);
        }
        if (trowel_archive_damaged(n->archive))
            json_object_object_add(o, "damaged", json_object_new_boolean(1));
    }
    if (n->error)
        json_object_object_add(o, "error", jstr(n->error));
    json_object_object_add(o, "size", json_object_new_uint64(n->fd >= 0 ? n->file_size : n->len));
    reply_json(r, o);
}

/* ----------------------------------------------------------------- calls */

void view_api(view_model *m, const view_query *q, view_reply *r)
{
    memset(r, 0, sizeof *r);
    size_t id = NO_NODE;
    const char *c = q->call ? q->call : "";
    if (strcmp(c, "children") == 0) {
        api_children(m, q, r);
    } else if (strcmp(c, "find") == 0) {
        api_find(m, q, r);
    } else if (!node_arg(m, q->node, &id)) {
        reply_error(r, 404, "no such node");
    } else if (strcmp(c, "info") == 0) {
        api_info(m, id, r);
    } else if (strcmp(c, "preview") == 0) {
        api_preview(m, id, r);
    } else if (strcmp(c, "raw") == 0) {
        api_raw(m, id, q, r);
    } else if (strcmp(c, "convert") == 0) {
        api_convert(m, id, q, r);
    } else {
        reply_error(r, 404, "no such call");
    }
    trowel_ctx_clear_error(m->s->ctx);
    trim_open(m, id);
}
