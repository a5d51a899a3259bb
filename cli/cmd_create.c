/*
 * trowel create -t FORMAT -o OUT [-C DIR] [-O key=value]... [--manifest M.json]
 *               [PATH...]
 * Builds a new file from PATHs (files, or folders walked recursively, names
 * relative to DIR) and/or a manifest written by 'extract --manifest'.
 */
#include "create.h"
#include "nested.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------- sources */

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 2);
    if (!p)
        return NULL;
    memcpy(p, a, la);
    p[la] = '/';
    memcpy(p + (la ? la + 1 : 0), b, lb + 1);
    return p;
}

int cli_source_add(source_list *l, char *name, char *path)
{
    if (name && path && l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        owned_source *p = realloc(l->items, cap * sizeof *p);
        if (p) {
            l->items = p;
            l->cap = cap;
        }
    }
    if (!name || !path || l->count == l->cap) {
        free(name);
        free(path);
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    l->items[l->count].name = name;
    l->items[l->count].path = path;
    l->count++;
    return CLI_EXIT_OK;
}

void cli_sources_free(source_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].name);
        free(l->items[i].path);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

static int by_name(const void *x, const void *y)
{
    const owned_source *a = x, *b = y;
    return strcmp(a->name, b->name);
}

static void warn_skip(const create_job *j, const char *path, const char *why)
{
    if (j->s->quiet)
        return;
    trowel_error w = {.status = TROWEL_OK, .offset = TROWEL_NO_OFFSET};
    snprintf(w.message, sizeof w.message, "skipped: %s", why);
    cli_print_warning(path, &w);
}

/* ------------------------------------------------------------ walking */

bool cli_is_nested_folder(const char *name)
{
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    size_t len = strlen(base), suffix = strlen(CLI_NESTED_DIR_SUFFIX);
    if (len <= suffix || strcmp(base + len - suffix, CLI_NESTED_DIR_SUFFIX) != 0)
        return false;
    char stem[4096];
    if (len - suffix >= sizeof stem)
        return false;
    memcpy(stem, base, len - suffix);
    stem[len - suffix] = '\0';
    return cli_nested_candidate(stem);
}

/* --exclude: a PATTERN matching the name as stored, or its last part. */
static bool excluded(const create_job *j, const char *name)
{
    const char *slash = strrchr(name, '/');
    return j->exclude->count &&
           (cli_patterns_match(j->exclude, name) ||
            (slash && cli_patterns_match(j->exclude, slash + 1)));
}

/* The folder X.d/ that 'extract -r' wrote for the nested archive X: with
 * -r, X is rebuilt from it; without, storing its files beside X would
 * flatten the nested archive into this one, so it is refused. */
static int nested_folder(create_job *j, const char *fs_path, const char *name)
{
    size_t len = strlen(name) - strlen(CLI_NESTED_DIR_SUFFIX);
    if (!j->recursive)
        return cli_usage_error(j->s->verb,
                               "%s: holds the entries of the nested archive '%.*s' "
                               "(as 'extract -r' writes them): use 'create -r' to rebuild "
                               "'%.*s' from them, or --exclude the folder",
                               fs_path, (int)len, name, (int)len, name);
    char *stored = strndup(name, len);
    return cli_source_add(&j->nested, stored, strdup(fs_path));
}

/* One folder child: a file is added, a folder walked, anything else (and
 * symbolic links to folders) skipped with a warning. */
static int visit(create_job *j, const char *fs_path, const char *name)
{
    struct stat st;
    if (excluded(j, name))
        return CLI_EXIT_OK;
    if (lstat(fs_path, &st) != 0) {
        cli_error("%s: %s", fs_path, strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    if (S_ISDIR(st.st_mode))
        return cli_is_nested_folder(name) ? nested_folder(j, fs_path, name)
                                          : cli_create_walk(j, fs_path, name);
    if (S_ISLNK(st.st_mode) && stat(fs_path, &st) != 0) {
        warn_skip(j, fs_path, "a symbolic link to nothing");
        return CLI_EXIT_OK;
    }
    if (!S_ISREG(st.st_mode)) {
        warn_skip(j, fs_path, S_ISDIR(st.st_mode) ? "a symbolic link to a folder"
                                                  : "not a regular file");
        return CLI_EXIT_OK;
    }
    char *n = strdup(name), *p = strdup(fs_path);
    return cli_source_add(&j->sources, n, p);
}

static int visit_child(create_job *j, const char *fs_path, const char *name, const char *child)
{
    char *child_fs = join(fs_path, child);
    char *child_name = name[0] ? join(name, child) : strdup(child);
    int rc = CLI_EXIT_FAILURE;
    if (child_fs && child_name)
        rc = visit(j, child_fs, child_name);
    else
        cli_error("out of memory");
    free(child_fs);
    free(child_name);
    return rc;
}

int cli_create_walk(create_job *j, const char *fs_path, const char *name)
{
    DIR *d = opendir(fs_path);
    if (!d) {
        cli_error("%s: cannot open folder: %s", fs_path, strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    int rc = CLI_EXIT_OK;
    struct dirent *de;
    while (rc == CLI_EXIT_OK && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            rc = visit_child(j, fs_path, name, de->d_name);
    }
    closedir(d);
    return rc;
}

/* ------------------------------------------------------------ operands */

/* The archive name for an operand: leading '/', "./" and "../" are dropped
 * (with a warning for '/' and ".."), the rest normalised. "" for the top. */
static int storable_name(const create_job *j, const char *operand, char *out, size_t cap)
{
    const char *p = operand;
    bool dropped = false;
    for (;;) {
        size_t skip = *p == '/' ? 1 : strncmp(p, "./", 2) == 0 ? 2
                                    : strncmp(p, "../", 3) == 0 ? 3 : 0;
        if (skip == 0)
            break;
        dropped = dropped || skip != 2;
        p += skip;
    }
    if (strcmp(p, ".") == 0 || strcmp(p, "..") == 0 || *p == '\0') {
        out[0] = '\0';
        return CLI_EXIT_OK;
    }
    if (trowel_path_normalize(p, out, cap) != TROWEL_OK)
        return cli_usage_error(j->s->verb, "'%s' cannot be stored as an archive name; use -C",
                               operand);
    if (dropped && !j->s->quiet)
        fprintf(stderr, CLI_PROGRAM ": %s: warning: stored as '%s'\n", operand, out);
    return CLI_EXIT_OK;
}

static int add_operand(create_job *j, const char *operand)
{
    char name[4096];
    int rc = storable_name(j, operand, name, sizeof name);
    if (rc != CLI_EXIT_OK)
        return rc;
    char *fs = operand[0] == '/' || !j->dir ? strdup(operand)
               : name[0] == '\0' && strcmp(operand, ".") == 0 ? strdup(j->dir)
                                                              : join(j->dir, operand);
    if (!fs) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    struct stat st;
    size_t first = j->sources.count;
    if (name[0] && excluded(j, name)) {
        rc = CLI_EXIT_OK;
    } else if (stat(fs, &st) != 0) {
        cli_error("%s: %s", fs, strerror(errno));
        rc = CLI_EXIT_FAILURE;
    } else if (S_ISDIR(st.st_mode) && name[0] && cli_is_nested_folder(name)) {
        rc = nested_folder(j, fs, name);
    } else if (S_ISDIR(st.st_mode)) {
        rc = cli_create_walk(j, fs, name);
        if (j->sources.count > first)
            qsort(j->sources.items + first, j->sources.count - first, sizeof *j->sources.items,
                  by_name);
    } else if (!S_ISREG(st.st_mode)) {
        cli_error("%s: not a regular file or folder", fs);
        rc = CLI_EXIT_FAILURE;
    } else if (name[0] == '\0') {
        rc = cli_usage_error(j->s->verb, "'%s' gives an empty archive name", operand);
    } else {
        rc = cli_source_add(&j->sources, strdup(name), strdup(fs));
    }
    free(fs);
    return rc;
}

/* ---------------------------------------------------------------- create */

static int choose_format(cli_session *s, const cli_args *args, const char *manifest,
                         const trowel_format **fmt)
{
    const char *id = cli_args_last(args, OPT_FORMAT);
    if (id)
        return cli_find_format(s->verb, id, fmt);
    if (!manifest)
        return cli_usage_error(s->verb, "missing -t FORMAT (or --manifest M.json naming one)");
    if (trowel_manifest_format(s->ctx, manifest, fmt) != TROWEL_OK)
        return cli_report(s, cli_args_last(args, OPT_MANIFEST), NULL);
    return CLI_EXIT_OK;
}

/* OUT must not be one of the files it is built from, nor the manifest. */
static int check_output(create_job *j, const char *out, const char *mpath)
{
    for (size_t i = 0; i < j->sources.count; i++)
        if (cli_same_file(out, j->sources.items[i].path))
            return cli_refuse_overwrite_input(j->s, out, j->sources.items[i].path);
    if (mpath && cli_same_file(out, mpath))
        return cli_refuse_overwrite_input(j->s, out, mpath);
    return CLI_EXIT_OK;
}

/* -O asm=FILE (vpp): the file rewritten along with OUT, or NULL. */
static const char *companion_path(const char **opts, size_t n)
{
    const char *path = NULL;
    for (size_t i = 0; opts && i < n; i++)
        if (strncmp(opts[i], "asm=", 4) == 0)
            path = opts[i] + 4;
    return path;
}

/* OUT and the companion FILE (the ASM of a rebuilt str2) are prepared in
 * full, then finished as one: both are replaced or neither is. */
static int build_with_companion(create_job *j, const trowel_format *fmt,
                                const trowel_create_params *p, const char *out,
                                const char *asm_path, trowel_sink *sink, bool dry_run)
{
    cli_session *s = j->s;
    trowel_input *asm_in = NULL;
    trowel_sink *asm_out = NULL;
    int rc = CLI_EXIT_OK;
    if (strcmp(out, "-") == 0 || cli_same_file(out, asm_path)) {
        trowel_sink_discard(sink);
        return cli_usage_error(s->verb, "-O asm=%s needs -o naming another file", asm_path);
    }
    if (trowel_input_open_file(s->ctx, asm_path, &asm_in) != TROWEL_OK ||
        trowel_sink_open_file(s->ctx, asm_path, TROWEL_SINK_OVERWRITE, &asm_out) != TROWEL_OK)
        rc = cli_report(s, asm_path, NULL);
    if (rc == CLI_EXIT_OK) {
        s->file = out;
        cli_progress_start(&s->progress, out);
        if (trowel_create_with_companion(s->ctx, fmt, p, asm_in, asm_out, sink) != TROWEL_OK)
            rc = cli_report(s, out, NULL);
    }
    cli_progress_clear(&s->progress);
    json_object *before = rc == CLI_EXIT_OK && !dry_run ? cli_asm_snapshot(s, asm_path) : NULL;
    if (rc == CLI_EXIT_OK && !dry_run) {
        trowel_sink *both[2] = {sink, asm_out};
        if (trowel_sinks_finish_all(both, 2) != TROWEL_OK)
            rc = cli_report(s, out, NULL);
        json_object *after = rc == CLI_EXIT_OK ? cli_asm_snapshot(s, asm_path) : NULL;
        cli_asm_report_change(s, asm_path, NULL, before, after, false);
        json_object_put(after);
    } else {
        trowel_sink_discard(sink);
        trowel_sink_discard(asm_out);
    }
    json_object_put(before);
    trowel_input_close(asm_in);
    return rc;
}

/* --dry-run: OUT is built as for real (so the exit status is the same)
 * and thrown away. */
static int finish_or_discard(create_job *j, trowel_sink *sink, int rc, const char *out,
                             bool dry_run)
{
    if (!dry_run)
        return cli_close_output(j->s, sink, rc, out);
    trowel_sink_discard(sink);
    return rc;
}

static int build(create_job *j, const trowel_format *fmt, const char *manifest, const char *out,
                 const cli_args *args)
{
    trowel_source *src = calloc(j->sources.count ? j->sources.count : 1, sizeof *src);
    size_t nopts;
    const char **opts = cli_args_values(args, OPT_OPTION, &nopts);
    bool dry_run = cli_args_has(args, OPT_DRY_RUN);
    if (opts && cli_args_has(args, OPT_KEEP_LAST)) /* room: --keep-last is one of args */
        opts[nopts++] = TROWEL_CREATE_KEEP_LAST;
    int rc = src && opts ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
    for (size_t i = 0; src && i < j->sources.count; i++) {
        src[i].name = j->sources.items[i].name;
        src[i].path = j->sources.items[i].path;
        if (j->s->verbose || dry_run) {
            cli_put_safe(stdout, src[i].name);
            putchar('\n');
        }
    }
    trowel_create_params p = {.sources = src, .source_count = j->sources.count,
                              .options = opts, .option_count = nopts,
                              .manifest_json = manifest, .base_dir = j->dir ? j->dir : "."};
    trowel_sink *sink = NULL;
    if (rc != CLI_EXIT_OK)
        cli_error("out of memory");
    else
        rc = cli_open_output(j->s, out, cli_args_has(args, OPT_FORCE), &sink);
    const char *asm_path = companion_path(opts, nopts);
    if (rc == CLI_EXIT_OK && asm_path) {
        rc = build_with_companion(j, fmt, &p, out, asm_path, sink, dry_run);
    } else if (rc == CLI_EXIT_OK) {
        j->s->file = out; /* what the library's warnings and notes name */
        cli_progress_start(&j->s->progress, out);
        if (trowel_create(j->s->ctx, fmt, &p, sink) != TROWEL_OK)
            rc = cli_report(j->s, out, NULL);
        rc = finish_or_discard(j, sink, rc, out, dry_run);
    }
    if (rc == CLI_EXIT_OK && !dry_run)
        cli_rebuilds_report(j->s, j->rebuilds, out);
    free(src);
    free(opts);
    return rc;
}

/* -O base=FILE (and the like) names a file of its own: one that does not
 * open is reported under its name, not OUT's. */
static int check_option_files(const cli_args *args)
{
    static const char *const keys[] = {"base=", "asm="};
    for (size_t i = 0; i < args->opt_count; i++) {
        const char *v = args->opts[i].value;
        if (args->opts[i].id != OPT_OPTION || !v)
            continue;
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            size_t len = strlen(keys[k]);
            struct stat st;
            if (strncmp(v, keys[k], len) != 0 || !v[len])
                continue;
            if (stat(v + len, &st) != 0) {
                cli_error("%s: cannot open the -O %.*s file: %s", v + len, (int)len - 1, v,
                          strerror(errno));
                return CLI_EXIT_FAILURE;
            }
        }
    }
    return CLI_EXIT_OK;
}

/* One manifest entry, read from DIR/rel, and the folder DIR/rel.d/ when
 * extract -r wrote one (refused without -r, rebuilt with it). */
static int add_manifest_entry(create_job *j, const char *name, const char *rel)
{
    if (excluded(j, name))
        return CLI_EXIT_OK;
    const char *dir = j->dir ? j->dir : ".";
    char folder[8300], name_d[4200];
    int nf = snprintf(folder, sizeof folder, "%s/%s" CLI_NESTED_DIR_SUFFIX, dir, rel);
    int nn = snprintf(name_d, sizeof name_d, "%s" CLI_NESTED_DIR_SUFFIX, name);
    struct stat st;
    int rc = CLI_EXIT_OK;
    if (nf > 0 && (size_t)nf < sizeof folder && nn > 0 && (size_t)nn < sizeof name_d &&
        stat(folder, &st) == 0 && S_ISDIR(st.st_mode) && cli_is_nested_folder(name_d))
        rc = nested_folder(j, folder, name_d);
    return rc == CLI_EXIT_OK ? cli_source_add(&j->sources, strdup(name), join(dir, rel)) : rc;
}

/* Without PATHs: the manifest's entries, read from DIR as the library
 * would read them, into j->sources when keep (-r and --exclude need them
 * in hand); either way an X.d/ folder beside an entry X is seen. An entry
 * without a safe name leaves the list empty: the library then says so. */
static int sources_from_manifest(create_job *j, json_object *m, bool keep)
{
    json_object *entries;
    if (!m || !json_object_object_get_ex(m, "entries", &entries) ||
        !json_object_is_type(entries, json_type_array))
        return CLI_EXIT_OK;
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; rc == CLI_EXIT_OK && i < json_object_array_length(entries); i++) {
        json_object *name;
        char rel[4096];
        if (!json_object_object_get_ex(json_object_array_get_idx(entries, i), "name", &name) ||
            trowel_path_normalize(json_object_get_string(name), rel, sizeof rel) != TROWEL_OK) {
            cli_sources_free(&j->sources);
            cli_sources_free(&j->nested);
            return CLI_EXIT_OK;
        }
        rc = add_manifest_entry(j, json_object_get_string(name), rel);
    }
    if (!keep && rc == CLI_EXIT_OK)
        cli_sources_free(&j->sources);
    return rc;
}

static int add_operands(create_job *j, const cli_args *args)
{
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; rc == CLI_EXIT_OK && i < args->operand_count; i++)
        rc = add_operand(j, args->operands[i]);
    const char *list_path = cli_args_last(args, OPT_FILES_FROM);
    if (rc != CLI_EXIT_OK || !list_path)
        return rc;
    char *text = NULL;
    const char **lines = NULL;
    size_t n = 0;
    rc = cli_read_lines(j->s, list_path, &text, &lines, &n);
    if (rc == CLI_EXIT_OK && n == 0)
        rc = cli_usage_error(j->s->verb, "--files-from %s names no PATH", list_path);
    for (size_t i = 0; rc == CLI_EXIT_OK && i < n; i++)
        rc = add_operand(j, lines[i]);
    free(lines);
    free(text);
    return rc;
}

static int collect(create_job *j, const cli_args *args, json_object *m)
{
    int rc = check_option_files(args);
    bool from_manifest = args->operand_count == 0 && !cli_args_has(args, OPT_FILES_FROM);
    if (rc == CLI_EXIT_OK && from_manifest)
        rc = sources_from_manifest(j, m, j->recursive || j->exclude->count);
    else if (rc == CLI_EXIT_OK)
        rc = add_operands(j, args);
    if (rc == CLI_EXIT_OK && j->recursive)
        rc = cli_create_rebuild_nested(j, m);
    return rc;
}

static int run_create(const cli_args *args, cli_session *s)
{
    const char *out = cli_args_last(args, OPT_OUTPUT);
    const char *mpath = cli_args_last(args, OPT_MANIFEST);
    if (!out)
        return cli_usage_error(s->verb, "missing -o OUT (use '-o -' for standard output)");
    if (!mpath && !cli_args_has(args, OPT_FORMAT))
        return cli_usage_error(s->verb, "missing -t FORMAT (or --manifest M.json naming one)");
    size_t nexclude;
    const char **exclude = cli_args_values(args, OPT_EXCLUDE, &nexclude);
    cli_patterns patterns = {0};
    int rc = exclude ? cli_patterns_init(&patterns, exclude, nexclude) : CLI_EXIT_FAILURE;
    char *manifest = NULL;
    size_t msize;
    if (rc == CLI_EXIT_OK && mpath)
        rc = cli_read_file(s, mpath, &manifest, &msize);
    const trowel_format *fmt = NULL;
    if (rc == CLI_EXIT_OK)
        rc = choose_format(s, args, manifest, &fmt);
    /* A format that streams its manifest (asm) reads it in the library,
     * within the memory limit; its entries name no files. */
    bool streamed = fmt && (trowel_format_caps(fmt) & TROWEL_CAP_STREAMED_MANIFEST);
    json_object *m = manifest && !streamed ? json_tokener_parse(manifest) : NULL;
    create_job j = {.s = s, .dir = cli_args_last(args, OPT_DIRECTORY),
                    .recursive = cli_args_has(args, OPT_RECURSIVE), .exclude = &patterns};
    cli_session_progress(s);
    if (rc == CLI_EXIT_OK)
        rc = collect(&j, args, m);
    if (rc == CLI_EXIT_OK)
        rc = check_output(&j, out, mpath);
    if (rc == CLI_EXIT_OK)
        rc = build(&j, fmt, manifest, out, args);
    cli_rebuilds_free(j.rebuilds);
    cli_sources_free(&j.sources);
    cli_sources_free(&j.nested);
    cli_patterns_free(&patterns);
    free(exclude);
    json_object_put(m);
    free(manifest);
    return rc;
}

static const cli_option create_options[] = {
    {OPT_FORMAT, 't', "format", "FORMAT", "the format to write (see 'trowel formats')"},
    {OPT_OUTPUT, 'o', "output", "OUT", "the file to write ('-': standard output)"},
    {OPT_DIRECTORY, 'C', "directory", "DIR", "read PATHs (and manifest entries) under DIR"},
    {OPT_OPTION, 'O', "option", "KEY=VALUE", "a format option (repeatable; see 'trowel formats')"},
    {OPT_MANIFEST, 0, "manifest", "M.json", "rebuild from what 'extract --manifest' wrote"},
    {OPT_RECURSIVE, 'r', "recursive", NULL,
     "rebuild each nested archive X from the X.d/ folder 'extract -r' wrote"},
    {OPT_EXCLUDE, 0, "exclude", "PATTERN", "leave out files and folders matching PATTERN"},
    {OPT_FILES_FROM, 0, "files-from", "FILE", "read PATHs from FILE, one a line ('-': stdin)"},
    {OPT_KEEP_LAST, 0, "keep-last", NULL,
     "of sources stored under one name, keep the last (else refused)"},
    {OPT_DRY_RUN, 'n', "dry-run", NULL, "list what would be stored, write nothing"},
    {OPT_FORCE, 'f', "force", NULL, "overwrite OUT if it exists"},
    {OPT_VERBOSE, 'v', "verbose", NULL, "print each name stored"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_create = {
    .name = "create",
    .synopsis = "create -t FORMAT -o OUT [-C DIR] [-O KEY=VALUE]... [--manifest M.json] "
                "[-r] [--exclude PATTERN]... [--files-from FILE] [--keep-last] [-n] [PATH...]",
    .summary = "build a new file of a format from files, folders or a manifest",
    .description =
        "Write a new FORMAT file to OUT. Each PATH is read relative to DIR: a\n"
        "file is stored under its PATH, a folder is walked recursively and its\n"
        "files stored in name order, named relative to DIR. With --manifest\n"
        "(from 'extract --manifest') the format, order and fields come from the\n"
        "manifest, -t may be left out, and without PATHs the manifest's entries\n"
        "are read from DIR. OUT is written under a temporary name and renamed\n"
        "only when complete.\n"
        "\n"
        "A folder X.d/ beside an archive entry X (a .str2_pc) holds X's entries\n"
        "as 'extract -r' writes them. With -r, X is rebuilt from X.d/ (in the\n"
        "order of the manifest 'extract -r --manifest' wrote, else of the file X)\n"
        "and stored under X; an ASM beside X with a container named after it is\n"
        "updated as -O asm= does. Without -r such a folder is refused: its files\n"
        "would be stored flat beside X. Two sources the format would store under\n"
        "one name are refused, naming both, unless --keep-last. --exclude\n"
        "PATTERN matches a stored name or its last part; -n builds OUT in full\n"
        "(the exit status is the real run's), lists the names and writes nothing.",
    .options = create_options,
    .run = run_create,
};
