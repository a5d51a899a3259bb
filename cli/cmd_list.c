/*
 * trowel list ARCHIVE... [-l] [--json] [-t FORMAT] [--names LIST] [PATTERN...]:
 * the entries, one per line; -l adds size, packed size, offset and method in
 * aligned columns. Several archives get a header each (or a JSON array).
 */
#include "batch.h"
#include "nested.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* The indexes of the entries to show: all, or those a pattern matches. */
typedef struct shown {
    size_t *index;
    size_t count;
} shown;

typedef struct column_widths {
    int size, packed, offset, method;
} column_widths;

static int dec_width(uint64_t v)
{
    char buf[32];
    return snprintf(buf, sizeof buf, "%" PRIu64, v);
}

static int hex_width(uint64_t v)
{
    char buf[32];
    return snprintf(buf, sizeof buf, "0x%" PRIx64, v);
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

static column_widths measure(const trowel_archive *a, const shown *sel)
{
    column_widths w = {4, 6, 6, 6}; /* the headings */
    for (size_t k = 0; k < sel->count; k++) {
        const trowel_entry *e = trowel_archive_entry(a, sel->index[k]);
        w.size = max_int(w.size, dec_width(e->size));
        w.packed = max_int(w.packed, dec_width(e->packed_size));
        w.offset = max_int(w.offset, hex_width(e->offset));
        w.method = max_int(w.method, (int)strlen(e->method));
    }
    return w;
}

static int select_entries(const trowel_archive *a, cli_patterns *pats, shown *out)
{
    size_t n = trowel_archive_entry_count(a);
    out->count = 0;
    out->index = calloc(n ? n : 1, sizeof *out->index);
    if (!out->index) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    for (size_t i = 0; i < n; i++)
        if (cli_patterns_match(pats, trowel_archive_entry(a, i)->name))
            out->index[out->count++] = i;
    return CLI_EXIT_OK;
}

/* Formats that convert entries on extraction (those with a "raw" reading
 * option: scenes.image writes text VCDs): what extract writes differs from
 * the stored size, and is found by converting each entry. */
static bool converts_on_extract(const trowel_format *f)
{
    const trowel_option_info *o;
    for (size_t i = 0; (o = trowel_format_option_at(f, i)) != NULL; i++)
        if (!o->targets && strcmp(o->key, "raw") == 0)
            return true;
    return false;
}

#define SIZE_UNKNOWN UINT64_MAX

/* The bytes extract writes for entry index (into a sink that counts them),
 * or SIZE_UNKNOWN for one that cannot be read (its damage was told when
 * the archive opened). */
static uint64_t written_size(cli_session *s, trowel_archive *a, size_t index)
{
    trowel_sink *sink;
    uint64_t n = SIZE_UNKNOWN;
    bool silent = s->silent;
    s->silent = true;
    if (trowel_sink_open_null(s->ctx, &sink) == TROWEL_OK) {
        if (trowel_archive_read_entry(a, index, sink) == TROWEL_OK)
            n = trowel_sink_written(sink);
        trowel_sink_discard(sink);
    }
    s->silent = silent;
    trowel_ctx_clear_error(s->ctx);
    return n;
}

/* The WRITTEN column's values for the selected entries, or NULL when the
 * format writes entries as they are (or memory runs out). */
static uint64_t *written_sizes(cli_session *s, trowel_archive *a, const shown *sel)
{
    if (!converts_on_extract(trowel_archive_format(a)))
        return NULL;
    uint64_t *w = calloc(sel->count ? sel->count : 1, sizeof *w);
    for (size_t k = 0; w && k < sel->count; k++)
        w[k] = written_size(s, a, sel->index[k]);
    return w;
}

static int written_width(uint64_t v)
{
    return v == SIZE_UNKNOWN ? 1 : dec_width(v);
}

static void print_written(uint64_t v, int width)
{
    if (v == SIZE_UNKNOWN)
        printf("%*s  ", width, "?");
    else
        printf("%*" PRIu64 "  ", width, v);
}

/* The totals under the columns, as 7z's listing has them: printed for two
 * entries or more (for one they would repeat its line). */
typedef struct totals {
    size_t entries;
    uint64_t size, packed, written;
    bool written_unknown;
} totals;

static void print_totals(const column_widths *w, int written_w, const totals *t)
{
    if (t->entries < 2)
        return;
    int dashes = w->size + 2 + w->packed + 2 + (written_w ? written_w + 2 : 0);
    for (int i = 0; i < dashes; i++)
        putchar('-');
    putchar('\n');
    printf("%*" PRIu64 "  %*" PRIu64 "  ", w->size, t->size, w->packed, t->packed);
    if (written_w)
        print_written(t->written_unknown ? SIZE_UNKNOWN : t->written, written_w);
    printf("%*s  %*s  %zu entr%s\n", w->offset, "", w->method, "", t->entries,
           t->entries == 1 ? "y" : "ies");
}

static void print_long(cli_session *s, trowel_archive *a, const shown *sel)
{
    column_widths w = measure(a, sel);
    uint64_t *written = written_sizes(s, a, sel);
    totals t = {.entries = sel->count};
    for (size_t k = 0; k < sel->count; k++) {
        const trowel_entry *e = trowel_archive_entry(a, sel->index[k]);
        t.size += e->size;
        t.packed += e->packed_size;
        if (written && written[k] == SIZE_UNKNOWN)
            t.written_unknown = true;
        else if (written)
            t.written += written[k];
    }
    w.size = max_int(w.size, dec_width(t.size));
    w.packed = max_int(w.packed, dec_width(t.packed));
    int ww = 0;
    if (written) {
        ww = max_int(7, t.written_unknown ? 1 : dec_width(t.written)); /* "WRITTEN" */
        for (size_t k = 0; k < sel->count; k++)
            ww = max_int(ww, written_width(written[k]));
    }
    printf("%*s  %*s  ", w.size, "SIZE", w.packed, "PACKED");
    if (written)
        printf("%*s  ", ww, "WRITTEN");
    printf("%*s  %-*s  %s\n", w.offset, "OFFSET", w.method, "METHOD", "NAME");
    for (size_t k = 0; k < sel->count; k++) {
        const trowel_entry *e = trowel_archive_entry(a, sel->index[k]);
        char offset[32];
        snprintf(offset, sizeof offset, "0x%" PRIx64, e->offset);
        printf("%*" PRIu64 "  %*" PRIu64 "  ", w.size, e->size, w.packed, e->packed_size);
        if (written)
            print_written(written[k], ww);
        printf("%*s  ", w.offset, offset);
        cli_put_safe(stdout, e->method);
        printf("%*s  ", w.method - (int)strlen(e->method), "");
        cli_put_safe(stdout, e->name);
        putchar('\n');
    }
    print_totals(&w, ww, &t);
    free(written);
}

static void print_names(const trowel_archive *a, const shown *sel)
{
    for (size_t k = 0; k < sel->count; k++) {
        cli_put_safe(stdout, trowel_archive_entry(a, sel->index[k])->name);
        putchar('\n');
    }
}

/* The archive's JSON; with patterns, only the entries they match. */
static json_object *archive_json(cli_session *s, const char *path, trowel_archive *a,
                                 const shown *sel, const cli_patterns *pats,
                                 json_object *warnings)
{
    char *text = NULL;
    if (trowel_archive_to_json(a, TROWEL_JSON_ENTRIES, &text) != TROWEL_OK) {
        cli_report(s, cli_display_name(path), NULL);
        return NULL;
    }
    json_object *o = json_tokener_parse(text);
    trowel_free(text);
    json_object *entries;
    if (o && converts_on_extract(trowel_archive_format(a)) &&
        json_object_object_get_ex(o, "entries", &entries)) {
        /* an added key: what extract writes (null: cannot be read) */
        for (size_t i = 0; i < json_object_array_length(entries); i++) {
            uint64_t n = written_size(s, a, i);
            json_object_object_add(json_object_array_get_idx(entries, i), "written_size",
                                   n == SIZE_UNKNOWN ? NULL : json_object_new_uint64(n));
        }
    }
    if (o && pats->count && json_object_object_get_ex(o, "entries", &entries)) {
        json_object *kept = json_object_new_array();
        for (size_t k = 0; k < sel->count; k++)
            json_object_array_add(kept,
                                  json_object_get(json_object_array_get_idx(entries, sel->index[k])));
        json_object_object_add(o, "entries", kept);
    }
    if (!o)
        cli_error("%s: the library made JSON that does not parse", cli_display_name(path));
    cli_json_add_warnings(o, warnings);
    return o;
}

typedef struct list_job {
    cli_session *s;
    const cli_args *args;
    const trowel_format *fmt;
    cli_patterns patterns;
    json_object *array; /* --json with several files */
    json_object *warnings; /* --json: the file's warnings, every one */
    bool unnamed;       /* some archive keeps hashes for names */
    size_t opened;      /* archives that could be read */
} list_job;

/* --recursive: a's entries (their JSON, named by full path from prefix) go
 * into rows when they match, each archive entry followed by its own. */
static int collect(list_job *j, const char *path, trowel_archive *a, const char *prefix,
                   json_object *rows)
{
    char *text = NULL;
    if (trowel_archive_to_json(a, TROWEL_JSON_ENTRIES, &text) != TROWEL_OK)
        return cli_report(j->s, cli_display_name(path), NULL);
    json_object *o = json_tokener_parse(text), *entries;
    trowel_free(text);
    int rc = CLI_EXIT_OK;
    if (!o || !json_object_object_get_ex(o, "entries", &entries)) {
        json_object_put(o);
        cli_error("%s: the library made JSON that does not parse", cli_display_name(path));
        return CLI_EXIT_FAILURE;
    }
    for (size_t i = 0; i < json_object_array_length(entries); i++) {
        json_object *e = json_object_array_get_idx(entries, i);
        const char *name = trowel_archive_entry(a, i)->name;
        size_t len = strlen(prefix) + strlen(name) + 2;
        char *full = malloc(len);
        if (!full) {
            rc = CLI_EXIT_FAILURE;
            break;
        }
        snprintf(full, len, "%s%s", prefix, name);
        /* The full name's bytes: printing adds its own "name_bytes". */
        json_object_object_del(e, "name_bytes");
        json_object_object_add(e, "name", json_object_new_string(full));
        if (cli_patterns_match(&j->patterns, full))
            json_object_array_add(rows, json_object_get(e));
        trowel_archive *nested;
        rc = cli_max_exit(rc, cli_nested_open(j->s, path, a, i, &nested));
        if (nested) {
            strcat(full, "/");
            rc = cli_max_exit(rc, collect(j, path, nested, full, rows));
            rc = cli_max_exit(rc, trowel_archive_damaged(nested) ? CLI_EXIT_FAILURE : CLI_EXIT_OK);
            trowel_archive_close(nested);
        }
        free(full);
    }
    json_object_put(o);
    return rc;
}

static const char *row_str(json_object *row, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(row, key, &v) ? json_object_get_string(v) : "";
}

static uint64_t row_u64(json_object *row, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(row, key, &v) ? json_object_get_uint64(v) : 0;
}

static void print_rows(json_object *rows, bool long_form)
{
    column_widths w = {4, 6, 6, 6};
    size_t n = json_object_array_length(rows);
    totals t = {.entries = n};
    for (size_t k = 0; k < n && long_form; k++) {
        json_object *r = json_object_array_get_idx(rows, k);
        t.size += row_u64(r, "size");
        t.packed += row_u64(r, "packed_size");
        w.size = max_int(w.size, dec_width(row_u64(r, "size")));
        w.packed = max_int(w.packed, dec_width(row_u64(r, "packed_size")));
        w.offset = max_int(w.offset, hex_width(row_u64(r, "offset")));
        w.method = max_int(w.method, (int)strlen(row_str(r, "method")));
    }
    w.size = max_int(w.size, dec_width(t.size));
    w.packed = max_int(w.packed, dec_width(t.packed));
    if (long_form)
        printf("%*s  %*s  %*s  %-*s  %s\n", w.size, "SIZE", w.packed, "PACKED", w.offset, "OFFSET",
               w.method, "METHOD", "NAME");
    for (size_t k = 0; k < n; k++) {
        json_object *r = json_object_array_get_idx(rows, k);
        if (long_form) {
            char offset[32];
            snprintf(offset, sizeof offset, "0x%" PRIx64, row_u64(r, "offset"));
            printf("%*" PRIu64 "  %*" PRIu64 "  %*s  ", w.size, row_u64(r, "size"), w.packed,
                   row_u64(r, "packed_size"), w.offset, offset);
            cli_put_safe(stdout, row_str(r, "method"));
            printf("%*s  ", w.method - (int)strlen(row_str(r, "method")), "");
        }
        cli_put_safe(stdout, row_str(r, "name"));
        putchar('\n');
    }
    if (long_form)
        print_totals(&w, 0, &t);
}

static int show_recursive(list_job *j, const char *path, trowel_archive *a, size_t index,
                          size_t count)
{
    json_object *rows = json_object_new_array();
    int rc = collect(j, path, a, "", rows);
    if (cli_args_has(j->args, OPT_JSON)) {
        char *text = NULL;
        json_object *o = NULL;
        if (trowel_archive_to_json(a, 0, &text) == TROWEL_OK)
            o = json_tokener_parse(text);
        trowel_free(text);
        if (!o) {
            json_object_put(rows);
            return cli_report(j->s, cli_display_name(path), NULL);
        }
        json_object_object_add(o, "entries", rows);
        cli_json_add_warnings(o, j->warnings);
        if (j->array)
            json_object_array_add(j->array, cli_json_with_file(o, path));
        else
            cli_print_json_and_put(o);
        return rc;
    }
    cli_batch_header(path, index, count);
    print_rows(rows, cli_args_has(j->args, OPT_LONG));
    json_object_put(rows);
    return rc;
}

static int show(list_job *j, const char *path, trowel_archive *a, size_t index, size_t count)
{
    if (cli_args_has(j->args, OPT_RECURSIVE))
        return show_recursive(j, path, a, index, count);
    shown sel;
    int rc = select_entries(a, &j->patterns, &sel);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (cli_args_has(j->args, OPT_JSON)) {
        json_object *o = archive_json(j->s, path, a, &sel, &j->patterns, j->warnings);
        if (!o)
            rc = CLI_EXIT_FAILURE;
        else if (j->array)
            json_object_array_add(j->array, cli_json_with_file(o, path));
        else
            cli_print_json_and_put(o);
    } else {
        cli_batch_header(path, index, count);
        if (cli_args_has(j->args, OPT_LONG))
            print_long(j->s, a, &sel);
        else
            print_names(a, &sel);
    }
    free(sel.index);
    return rc;
}

static int list_one(list_job *j, const char *path, size_t index, size_t count)
{
    cli_opened o;
    bool damaged = false;
    if (cli_args_has(j->args, OPT_JSON)) {
        j->warnings = json_object_new_array();
        cli_keep_warnings(j->s, j->warnings);
    }
    int rc = cli_open_archive(j->s, path, j->fmt, &o);
    if (rc == CLI_EXIT_OK) {
        j->opened++;
        const char *names = cli_args_last(j->args, OPT_NAMES);
        j->unnamed = j->unnamed || (cli_has_unnamed_entries(o.a) && !names);
        rc = cli_recover_names(j->s, path, o.a, names);
        if (rc == CLI_EXIT_OK)
            rc = show(j, path, o.a, index, count);
        /* What could be read was listed (the warnings said what could
         * not); the file still fails. */
        damaged = rc == CLI_EXIT_OK && trowel_archive_damaged(o.a);
        if (damaged) { /* the summary, kept under -q */
            cli_summarise_messages(j->s);
            fprintf(stderr, CLI_PROGRAM ": ");
            cli_put_safe(stderr, cli_display_name(path));
            fputs(": damaged: not every entry can be read\n", stderr);
        }
        cli_close_archive(&o);
    }
    if (rc != CLI_EXIT_OK && j->array)
        json_object_array_add(j->array, cli_json_failure(j->s, path));
    cli_keep_warnings(j->s, NULL);
    json_object_put(j->warnings);
    j->warnings = NULL;
    return damaged ? CLI_EXIT_FAILURE : rc;
}

static int run_list(const cli_args *args, cli_session *s)
{
    list_job j = {.s = s, .args = args};
    int rc = cli_need_operands(s, args, 1, 0, "ARCHIVE operand");
    if (rc == CLI_EXIT_OK)
        rc = cli_forced_format(s, args, &j.fmt);
    size_t files = cli_batch_archive_count(args);
    if (rc == CLI_EXIT_OK)
        rc = cli_batch_check_stdin(s, args->operands, files);
    if (rc == CLI_EXIT_OK)
        rc = cli_patterns_init(&j.patterns, args->operands + files, args->operand_count - files);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (cli_args_has(args, OPT_JSON) && files > 1)
        j.array = json_object_new_array();
    for (size_t i = 0; i < files; i++) {
        int r = list_one(&j, args->operands[i], i, files);
        rc = r > rc ? r : rc;
    }
    cli_print_json_and_put(j.array);
    if (j.opened) /* else nothing could match */
        rc = cli_max_exit(rc, cli_patterns_report_unused(
                                  &j.patterns, files == 1 ? args->operands[0] : NULL, j.unnamed));
    cli_patterns_free(&j.patterns);
    return rc;
}

static const cli_option list_options[] = {
    {OPT_LONG, 'l', "long", NULL, "add size, packed size, offset and method columns, and totals"},
    {OPT_JSON, 0, "json", NULL, "print one JSON document (an array for several archives)"},
    {OPT_FORMAT, 't', "format", "FORMAT", "read as FORMAT instead of detecting it"},
    {OPT_NAMES, 0, "names", "LIST", "recover entry names from LIST (formats that store hashes)"},
    {OPT_RECURSIVE, 'r', "recursive", NULL, "also list the entries of entries that are archives"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_list = {
    .name = "list",
    .synopsis = "list ARCHIVE... [-l] [-r] [--json] [-t FORMAT] [--names LIST] [PATTERN...]",
    .summary = "list the entries of archives",
    .description =
        "Print the name of every entry of each ARCHIVE ('-': standard input), one\n"
        "per line, in directory order, or of those whose name matches a shell\n"
        "PATTERN ('*', '?', '[...]'). With -l, also its size, packed size, offset\n"
        "(hex) and method, then (for two entries or more) a line of totals; where\n"
        "extract converts entries (scenes.image writes text VCDs), a WRITTEN\n"
        "column gives the bytes it writes ('?': cannot be read), and --json adds\n"
        "\"written_size\" to each entry. With --json: {\"format\", \"version\", ..., \"entries\":\n"
        "[{\"name\", \"size\", \"packed_size\", \"offset\", \"method\", ...}]}; with\n"
        "several archives, an array of them, each with \"file\", and a failed one\n"
        "as {\"file\", \"error\": {\"status\", \"message\", \"entry\", \"offset\"}}. A\n"
        "file that warned also has \"warnings\": [{\"message\", \"entry\", \"offset\"}],\n"
        "every one (standard error shows the first few).\n"
        "With --names LIST, standard error says how many names were recovered.\n"
        "With -r, an entry that is an archive itself (a .str2_pc in a .vpp_pc) is\n"
        "followed by its own entries, named by path: OUTER.str2_pc/INNER (offsets\n"
        "count from the start of the nested archive); PATTERNs match those paths.\n"
        "\n" CLI_BATCH_RULE_HELP,
    .options = list_options,
    .run = run_list,
};
