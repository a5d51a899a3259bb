/*
 * trowel convert INPUT... [-o OUT] [--to TARGET] [-O key=value]... [-t FORMAT]
 * Converts files to a target: "json" (its structure) for every format,
 * images, meshes, sounds or scripts for those that have them. The target
 * is --to, else OUT's extension (which must name a target of the format),
 * else json. Several INPUTs go each to its own output under -o DIR.
 */
#include "batch.h"
#include "suggest.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- targets */

/* OUT's extension, lower case, in buf; NULL when it has none (or is
 * standard output). */
static const char *extension_of(const char *out, char *buf, size_t cap)
{
    if (!out || strcmp(out, "-") == 0)
        return NULL;
    const char *slash = strrchr(out, '/');
    const char *dot = strrchr(slash ? slash + 1 : out, '.');
    if (!dot || dot == (slash ? slash + 1 : out) || !dot[1] || strlen(dot + 1) >= cap)
        return NULL;
    size_t n = 0;
    for (const char *c = dot + 1; *c; c++)
        buf[n++] = (char)tolower((unsigned char)*c);
    buf[n] = '\0';
    return buf;
}

static bool format_has_target(const trowel_format *f, const char *target)
{
    return strcmp(target, "json") == 0 ||
           cli_word_in_list(trowel_format_convert_targets(f), target, strlen(target));
}

/* --to, checked against every target trowel has (before any file opens). */
static int check_to(const cli_session *s, const char *to)
{
    if (!to || cli_known_target(to))
        return CLI_EXIT_OK;
    fprintf(stderr, CLI_PROGRAM ": %s: unknown target '", s->verb);
    cli_put_safe(stderr, to);
    fputs("' (known: ", stderr);
    cli_list_targets(stderr, ", ");
    fputs(")\n", stderr);
    cli_suggest_target(stderr, to);
    fprintf(stderr, "Try '" CLI_PROGRAM " %s --help'.\n", s->verb);
    return CLI_EXIT_USAGE;
}

/* Without --to: OUT's extension when it names one of the format's targets;
 * an extension that names none is refused, listing those it has. */
static int target_for(const cli_session *s, const char *to, const char *out,
                      const trowel_format *f, char *buf, size_t cap, const char **target)
{
    *target = to ? to : "json";
    const char *ext = to ? NULL : extension_of(out, buf, cap);
    if (!ext)
        return CLI_EXIT_OK;
    if (format_has_target(f, ext)) {
        *target = ext;
        return CLI_EXIT_OK;
    }
    fprintf(stderr, CLI_PROGRAM ": %s: ", s->verb);
    cli_put_safe(stderr, out);
    fprintf(stderr, ": '.%s' names no target of %s (its targets: json", ext,
            trowel_format_id(f));
    const char *list = trowel_format_convert_targets(f), *w;
    size_t n;
    while (cli_next_word(&list, &w, &n))
        fprintf(stderr, ", %.*s", (int)n, w);
    fprintf(stderr, "); give --to TARGET\nTry '" CLI_PROGRAM " %s --help'.\n", s->verb);
    return CLI_EXIT_USAGE;
}

/* The extension a target's file gets when the name is trowel's to choose
 * (several INPUTs under -o DIR): the JSON flavours are .json. */
static const char *file_extension(const char *target)
{
    static const char *const json_kinds[] = {"json-full", "glyphmap", "savejson", "placements",
                                             "values"};
    for (size_t i = 0; i < sizeof json_kinds / sizeof json_kinds[0]; i++)
        if (strcmp(target, json_kinds[i]) == 0)
            return "json";
    return target;
}

/* ----------------------------------------------------------- converting */

typedef struct convert_job {
    cli_session *s;
    const cli_args *args;
    const char **opts;
    size_t nopts;
    bool force;
} convert_job;

/* A target whose result is a folder (a costume's pictures, sheet, atlas). */
static int convert_to_folder(convert_job *j, trowel_archive *a, const char *target,
                             const char *out)
{
    cli_session *s = j->s;
    if (!out || strcmp(out, "-") == 0) {
        fprintf(stderr, CLI_PROGRAM ": %s: --to %s writes a folder of files: name it with -o DIR\n",
                s->verb, target);
        return CLI_EXIT_USAGE;
    }
    trowel_outdir *dir;
    unsigned flags = j->force ? TROWEL_SINK_OVERWRITE : 0;
    if (trowel_outdir_open(s->ctx, out, flags, &dir) != TROWEL_OK)
        return cli_report(s, out, NULL);
    int rc = CLI_EXIT_OK;
    if (trowel_convert_folder(s->ctx, a, target, j->opts, j->nopts, dir) != TROWEL_OK) {
        rc = cli_report(s, s->file, NULL);
        if (rc == CLI_EXIT_USAGE)
            cli_suggest_options(stderr, trowel_archive_format(a), CLI_CONVERT_OPTIONS, j->opts,
                                j->nopts);
    }
    trowel_outdir_close(dir);
    return rc;
}

/* ------------------------------------------- a folder target, one file */

/* The files under dir (recursively) that one_file_from_folder may pick: the
 * sheet for png, every animation for gif. Paths are malloc'ed. */
typedef struct found {
    char **paths;
    size_t count, cap;
} found;

static bool wanted(const char *name, bool gif)
{
    size_t n = strlen(name);
    return gif ? n > 4 && strcmp(name + n - 4, ".gif") == 0 : strcmp(name, "sheet.png") == 0;
}

static void find_files(const char *dir, bool gif, found *out)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(len);
        if (!path)
            break;
        snprintf(path, len, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            find_files(path, gif, out);
        } else if (wanted(e->d_name, gif) && (out->count < out->cap ||
                   (out->paths = realloc(out->paths, (out->cap = out->cap * 2 + 8) *
                                         sizeof *out->paths)) != NULL)) {
            out->paths[out->count++] = path;
            continue;
        }
        free(path);
    }
    if (d)
        closedir(d);
}

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        char *sub = malloc(len);
        if (!sub)
            continue;
        snprintf(sub, len, "%s/%s", path, e->d_name);
        struct stat st;
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(sub);
        else
            unlink(sub);
        free(sub);
    }
    if (d)
        closedir(d);
    rmdir(path);
}

static int by_path(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Picks the one file OUT stands for among those the folder target wrote
 * under tmp, and renames it to out. */
static int keep_one(convert_job *j, const char *tmp, const char *target, const char *out)
{
    bool gif = strcmp(target, "gif") == 0;
    found f = {0};
    find_files(tmp, gif, &f);
    if (f.count) /* qsort wants an array, even for none */
        qsort(f.paths, f.count, sizeof *f.paths, by_path);
    int rc = CLI_EXIT_OK;
    if (f.count == 0) {
        cli_error("%s: the conversion to %s gave no %s", j->s->file, target,
                  gif ? "animation" : "sheet");
        rc = CLI_EXIT_FAILURE;
    } else if (!gif && f.count > 1) {
        rc = cli_usage_error(j->s->verb,
                             "%s names one file, but %s gives %zu sheets (one a costume): "
                             "choose one with -O costume=N, or name a folder with -o",
                             out, j->s->file, f.count);
    } else if (rename(f.paths[0], out) != 0) {
        cli_error("%s: cannot write: %s", out, strerror(errno));
        rc = CLI_EXIT_FAILURE;
    } else if (f.count > 1 && !j->s->quiet) {
        const char *base = strrchr(f.paths[0], '/');
        fprintf(stderr, CLI_PROGRAM ": ");
        cli_put_safe(stderr, out);
        fprintf(stderr, ": warning: the first of %zu animations (%s); name a folder with -o "
                "for all of them\n", f.count, base ? base + 1 : f.paths[0]);
    }
    for (size_t i = 0; i < f.count; i++)
        free(f.paths[i]);
    free(f.paths);
    return rc;
}

/* A folder target (a costume's pictures, sheet and atlas; one GIF per
 * animation) given a .png or .gif file name: one file, the sheet or the
 * first animation, made in a scratch folder beside OUT and moved there. */
static int convert_folder_to_one_file(convert_job *j, trowel_archive *a, const char *target,
                                      const char *out)
{
    struct stat st;
    if (!j->force && lstat(out, &st) == 0) {
        cli_error("%s: exists already (use --force to overwrite)", out);
        return CLI_EXIT_FAILURE;
    }
    size_t len = strlen(out) + 16;
    char *tmp = malloc(len);
    if (!tmp) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    snprintf(tmp, len, "%s.tmp-XXXXXX", out);
    if (!mkdtemp(tmp)) {
        cli_error("%s: cannot make a scratch folder beside it: %s", out, strerror(errno));
        free(tmp);
        return CLI_EXIT_FAILURE;
    }
    trowel_outdir *dir;
    int rc = CLI_EXIT_OK;
    if (trowel_outdir_open(j->s->ctx, tmp, TROWEL_SINK_OVERWRITE, &dir) != TROWEL_OK) {
        rc = cli_report(j->s, tmp, NULL);
    } else {
        if (trowel_convert_folder(j->s->ctx, a, target, j->opts, j->nopts, dir) != TROWEL_OK) {
            rc = cli_report(j->s, j->s->file, NULL);
            if (rc == CLI_EXIT_USAGE)
                cli_suggest_options(stderr, trowel_archive_format(a), CLI_CONVERT_OPTIONS,
                                    j->opts, j->nopts);
        }
        trowel_outdir_close(dir);
    }
    if (rc == CLI_EXIT_OK)
        rc = keep_one(j, tmp, target, out);
    remove_tree(tmp);
    free(tmp);
    return rc;
}

/* True when out is a file name of the folder target's own picture type. */
static bool names_one_file(const char *out, const char *target)
{
    char buf[8];
    const char *ext = extension_of(out, buf, sizeof buf);
    return ext && (strcmp(target, "png") == 0 || strcmp(target, "gif") == 0) &&
           strcmp(ext, target) == 0;
}

/* An OUT ending in .png or .gif for the other of the two targets (--to
 * png -o X.gif): neither one file of that kind nor a plain folder name. */
static bool picture_name_of_another(const char *out, const char *target)
{
    char buf[8];
    const char *ext = extension_of(out, buf, sizeof buf);
    return ext && (strcmp(ext, "png") == 0 || strcmp(ext, "gif") == 0) && strcmp(ext, target) != 0;
}

/* The rule for a damaged INPUT (one the library could open only in part):
 * nothing is written under OUT, so that a script trusting OUT's existence
 * is not misled, unless --partial asks for what could be read; the exit
 * status is 1 either way. Said once, here, before any output is opened. */
static int refuse_damaged(cli_session *s)
{
    cli_progress_clear(&s->progress);
    fputs(CLI_PROGRAM ": ", stderr);
    cli_put_safe(stderr, cli_display_name(s->file));
    fputs(": damaged: nothing written (--partial writes what could be read)\n", stderr);
    return CLI_EXIT_FAILURE;
}

/* After the conversion: damage found while converting also withdraws the
 * output (a file under OUT is discarded; standard output has gone). */
static int converted_status(convert_job *j, trowel_archive *a, int rc)
{
    if (rc == CLI_EXIT_OK && trowel_archive_damaged(a) && !cli_args_has(j->args, OPT_PARTIAL))
        return refuse_damaged(j->s);
    return rc;
}

static int convert_to_file(convert_job *j, trowel_archive *a, const char *target, const char *out)
{
    cli_session *s = j->s;
    if (cli_same_file(out, s->file))
        return cli_refuse_overwrite_input(s, out, s->file);
    trowel_sink *sink;
    int rc = cli_open_output(s, out, j->force, &sink);
    if (rc == CLI_EXIT_OK) {
        if (trowel_convert(s->ctx, a, target, j->opts, j->nopts, sink) != TROWEL_OK) {
            rc = cli_report(s, s->file, NULL);
            if (rc == CLI_EXIT_USAGE)
                cli_suggest_options(stderr, trowel_archive_format(a), CLI_CONVERT_OPTIONS,
                                    j->opts, j->nopts);
        }
        rc = cli_close_output(s, sink, converted_status(j, a, rc), out);
    }
    return rc;
}

/* One INPUT to out (NULL: standard output); with several INPUTs out is
 * made here from dir, the input's name and the target. */
static int convert_one(convert_job *j, const trowel_format *fmt, const char *path,
                       const char *out, const char *dir)
{
    cli_session *s = j->s;
    cli_opened o;
    int rc = cli_open_archive(s, path, fmt, &o);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *to = cli_args_last(j->args, OPT_TO);
    char buf[32];
    const char *target;
    char *made = NULL;
    if (trowel_archive_damaged(o.a) && !cli_args_has(j->args, OPT_PARTIAL)) {
        rc = refuse_damaged(s);
        cli_close_archive(&o);
        return rc;
    }
    rc = target_for(s, to, out, trowel_archive_format(o.a), buf, sizeof buf, &target);
    if (rc == CLI_EXIT_OK && dir) {
        const char *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        bool folder = trowel_convert_makes_folder(o.a, target);
        size_t len = strlen(dir) + strlen(base) + strlen(target) + 8;
        made = malloc(len);
        if (!made) {
            cli_error("out of memory");
            rc = CLI_EXIT_FAILURE;
        } else if (folder) {
            snprintf(made, len, "%s/%s.d", dir, base);
        } else {
            snprintf(made, len, "%s/%s.%s", dir, base, file_extension(target));
        }
        out = made;
    }
    if (rc == CLI_EXIT_OK && trowel_convert_makes_folder(o.a, target) &&
        picture_name_of_another(out, target))
        rc = cli_usage_error(s->verb, "%s names a picture file, but --to %s writes %s: give "
                                      "-o NAME.%s for one file or a folder name",
                             out, target, strcmp(target, "png") == 0 ? "PNGs" : "GIFs", target);
    else if (rc == CLI_EXIT_OK && !trowel_convert_makes_folder(o.a, target))
        rc = convert_to_file(j, o.a, target, out);
    else if (rc == CLI_EXIT_OK && names_one_file(out, target))
        rc = convert_folder_to_one_file(j, o.a, target, out);
    else if (rc == CLI_EXIT_OK)
        rc = convert_to_folder(j, o.a, target, out);
    /* With --partial what could be read was converted (the warnings at
     * open said what could not); a damaged file still fails, as with info
     * and list. */
    if (rc == CLI_EXIT_OK && trowel_archive_damaged(o.a))
        rc = CLI_EXIT_FAILURE;
    free(made);
    cli_close_archive(&o);
    return rc;
}

/* Several INPUTs: -o must name a folder (made when missing). */
static int check_output_folder(const cli_session *s, const char *out, size_t inputs)
{
    if (inputs < 2)
        return CLI_EXIT_OK;
    if (!out || strcmp(out, "-") == 0)
        return cli_usage_error(s->verb, "%zu INPUTs: name a folder for their outputs with -o DIR",
                               inputs);
    struct stat st;
    if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode))
        return cli_usage_error(s->verb, "%zu INPUTs: -o %s must be a folder, not a file", inputs,
                               out);
    if (stat(out, &st) != 0 && mkdir(out, 0777) != 0) {
        cli_error("%s: cannot make the folder", out);
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

static int run_convert(const cli_args *args, cli_session *s)
{
    const trowel_format *fmt;
    int rc = cli_need_operands(s, args, 1, 0, "an INPUT operand");
    if (rc == CLI_EXIT_OK)
        rc = cli_forced_format(s, args, &fmt);
    if (rc == CLI_EXIT_OK)
        rc = check_to(s, cli_args_last(args, OPT_TO));
    if (rc == CLI_EXIT_OK)
        rc = cli_batch_check_stdin(s, args->operands, args->operand_count);
    const char *out = cli_args_last(args, OPT_OUTPUT);
    if (rc == CLI_EXIT_OK)
        rc = check_output_folder(s, out, args->operand_count);
    if (rc != CLI_EXIT_OK)
        return rc;
    convert_job j = {.s = s, .args = args, .force = cli_args_has(args, OPT_FORCE)};
    j.opts = cli_args_values(args, OPT_OPTION, &j.nopts);
    if (!j.opts) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    bool several = args->operand_count > 1;
    for (size_t i = 0; i < args->operand_count; i++) {
        int r = convert_one(&j, fmt, args->operands[i], several ? NULL : out,
                            several ? out : NULL);
        rc = r > rc ? r : rc;
    }
    free(j.opts);
    return rc;
}

static void convert_help(FILE *f)
{
    fputs("\nTargets: ", f);
    cli_list_targets(f, ", ");
    fputs(" (what each format converts to: 'trowel formats').\n"
          "\nConvert options (-O KEY=VALUE), by format and the targets they apply to:\n", f);
    cli_print_all_options(f, CLI_CONVERT_OPTIONS);
}

static const cli_option convert_options[] = {
    {OPT_OUTPUT, 'o', "output", "OUT",
     "write to OUT (default, or '-': standard output; a folder for several INPUTs)"},
    {OPT_TO, 0, "to", "TARGET", "what to convert to (default: OUT's extension, else json)"},
    {OPT_OPTION, 'O', "option", "KEY=VALUE", "a conversion option (repeatable)"},
    {OPT_FORMAT, 't', "format", "FORMAT", "read as FORMAT instead of detecting it"},
    {OPT_FORCE, 'f', "force", NULL, "overwrite OUT; write binary data to a terminal"},
    {OPT_PARTIAL, 0, "partial", NULL, "from a damaged INPUT, write what could be read (exit 1)"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_convert = {
    .name = "convert",
    .synopsis = "convert INPUT... [-o OUT] [--to TARGET] [-O KEY=VALUE]... [-t FORMAT] "
                "[--partial]",
    .summary = "convert a file to JSON or to a common format (png, wav, vcd...)",
    .description =
        "Convert INPUT ('-': standard input) to TARGET: json (its structure, for\n"
        "every format) or what its format lists in 'trowel formats'. Without\n"
        "--to, the target is OUT's extension, which must name one of the format's\n"
        "targets (OUT.jpg for a format without jpg is refused, listing those it\n"
        "has); without either, json. Binary output is not written to a terminal\n"
        "unless --force. Several INPUTs go each to its own output in the folder\n"
        "-o DIR: DIR/NAME.TARGET (DIR/NAME.d/ for a target that is a folder).\n"
        "Where a target writes a folder (a costume's pictures, sheet and atlas;\n"
        "one GIF per animation), OUT names that folder; an OUT ending in .png or\n"
        ".gif gives one file instead: the sheet, or the first animation (said).\n"
        "A damaged INPUT (one that can be read only in part) is not converted:\n"
        "nothing is written and the exit status is 1. --partial writes what\n"
        "could be read, and still exits 1. (extract writes every whole entry\n"
        "it can, as always.)",
    .options = convert_options,
    .more_help = convert_help,
    .run = run_convert,
};
