/*
 * trowel info FILE... [--json] [-t FORMAT]: detect each file and summarise
 * its header. A file that fails is reported and the others still shown.
 */
#include "batch.h"
#include "scan.h"

#include <string.h>
#include <sys/stat.h>

static void print_info_text(const char *path, const trowel_archive *a)
{
    cli_put_safe(stdout, cli_display_name(path));
    fputs(": ", stdout);
    for (size_t i = 0; i < trowel_archive_filter_count(a); i++) /* the wrappers peeled */
        printf("%s \u2192 ", trowel_archive_filter_id(a, i));
    printf("%s\n", trowel_format_id(trowel_archive_format(a)));
    const trowel_props *props = trowel_archive_info(a);
    for (size_t i = 0; i < trowel_props_count(props); i++) {
        const trowel_prop *p = trowel_props_at(props, i);
        if (strcmp(p->key, "format") == 0)
            continue; /* on the first line */
        printf("  %s:", p->key);
        if (p->type != TROWEL_VALUE_STRING || (p->s && p->s[0])) {
            putchar(' ');
            cli_print_prop_value(stdout, p);
        }
        putchar('\n');
    }
    printf("  entries: %zu\n", trowel_archive_entry_count(a));
}

/* Prints the file's JSON, or adds it to array when several are shown. */
static int info_json(cli_session *s, const char *path, trowel_archive *a, json_object *array,
                     json_object *warnings)
{
    char *text = NULL;
    if (trowel_archive_to_json(a, TROWEL_JSON_INFO | TROWEL_JSON_PRETTY, &text) != TROWEL_OK)
        return cli_report(s, path, NULL);
    int rc = CLI_EXIT_OK;
    bool warned = json_object_array_length(warnings) > 0;
    if (!array && !warned) {
        cli_print_json_text(text);
    } else {
        json_object *o = json_tokener_parse(text);
        cli_json_add_warnings(o, warnings);
        if (o && !array)
            cli_print_json_and_put(o);
        else if (o)
            json_object_array_add(array, cli_json_with_file(o, path));
        else {
            cli_error("%s: the library made JSON that does not parse", path);
            rc = CLI_EXIT_FAILURE;
        }
    }
    trowel_free(text);
    return rc;
}

static bool is_folder(const char *path)
{
    struct stat st;
    return !cli_is_stdin(path) && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A folder: every file in it identified, as trowel scan does (a JSON array
 * of its own when it is the only operand). */
static int info_folder(cli_session *s, const char *path, bool json, json_object *array)
{
    json_object *own = json && !array ? json_object_new_array() : NULL;
    int rc = cli_scan_operand(s, path, array ? array : own, NULL);
    cli_print_json_and_put(own);
    return rc;
}

static int info_one(cli_session *s, const char *path, const trowel_format *fmt, bool json,
                    json_object *array)
{
    if (is_folder(path))
        return info_folder(s, path, json, array);
    cli_opened o;
    json_object *warnings = json_object_new_array(); /* --json keeps them all */
    if (json)
        cli_keep_warnings(s, warnings);
    int rc = cli_open_archive(s, path, fmt, &o);
    cli_keep_warnings(s, NULL);
    if (rc != CLI_EXIT_OK) {
        if (array) /* a failure is an element too, so that none goes missing */
            json_object_array_add(array, cli_json_failure(s, path));
        json_object_put(warnings);
        return rc;
    }
    if (json)
        rc = info_json(s, path, o.a, array, warnings);
    else
        print_info_text(path, o.a);
    json_object_put(warnings);
    if (rc == CLI_EXIT_OK && trowel_archive_damaged(o.a))
        rc = CLI_EXIT_FAILURE; /* shown, but the file is damaged */
    cli_close_archive(&o);
    return rc;
}

static int run_info(const cli_args *args, cli_session *s)
{
    const trowel_format *fmt;
    int rc = cli_batch_files(s, args, &fmt);
    if (rc != CLI_EXIT_OK)
        return rc;
    bool json = cli_args_has(args, OPT_JSON);
    json_object *array = json && args->operand_count > 1 ? json_object_new_array() : NULL;
    for (size_t i = 0; i < args->operand_count; i++) {
        int r = info_one(s, args->operands[i], fmt, json, array);
        rc = r > rc ? r : rc;
    }
    cli_print_json_and_put(array);
    return rc;
}

static const cli_option info_options[] = {
    {OPT_JSON, 0, "json", NULL,
     "print one JSON document (an array for several files, failures included)"},
    {OPT_FORMAT, 't', "format", "FORMAT", "read as FORMAT instead of detecting it"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_info = {
    .name = "info",
    .synopsis = "info FILE|DIR... [--json] [-t FORMAT]",
    .summary = "detect files and summarise them (format, version, header fields)",
    .description =
        "Detect the format of each FILE ('-': standard input) and print its\n"
        "header fields and entry count. A folder is scanned as 'trowel scan DIR'\n"
        "does: one line a file in it. A file that cannot be read is reported\n"
        "and the others are still shown; the exit status is then 1. With --json\n"
        "and several files, the array holds such a file as {\"file\", \"error\":\n"
        "{\"status\", \"message\", \"entry\", \"offset\"}}. A file that warned also\n"
        "has \"warnings\": [{\"message\", \"entry\", \"offset\"}], every one.",
    .options = info_options,
    .run = run_info,
};
