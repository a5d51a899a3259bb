/*
 * trowel list ARCHIVE [-l] [--json] [-t FORMAT]: the entries, one per line;
 * -l adds size, packed size, offset and method in aligned columns.
 */
#include "cli.h"

#include <inttypes.h>
#include <string.h>

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

static column_widths measure(const trowel_archive *a)
{
    column_widths w = {4, 6, 6, 6}; /* the headings */
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
        const trowel_entry *e = trowel_archive_entry(a, i);
        w.size = max_int(w.size, dec_width(e->size));
        w.packed = max_int(w.packed, dec_width(e->packed_size));
        w.offset = max_int(w.offset, hex_width(e->offset));
        w.method = max_int(w.method, (int)strlen(e->method));
    }
    return w;
}

static void print_long(const trowel_archive *a)
{
    column_widths w = measure(a);
    printf("%*s  %*s  %*s  %-*s  %s\n", w.size, "SIZE", w.packed, "PACKED", w.offset, "OFFSET",
           w.method, "METHOD", "NAME");
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
        const trowel_entry *e = trowel_archive_entry(a, i);
        char offset[32];
        snprintf(offset, sizeof offset, "0x%" PRIx64, e->offset);
        printf("%*" PRIu64 "  %*" PRIu64 "  %*s  ", w.size, e->size, w.packed, e->packed_size,
               w.offset, offset);
        cli_put_safe(stdout, e->method);
        printf("%*s  ", w.method - (int)strlen(e->method), "");
        cli_put_safe(stdout, e->name);
        putchar('\n');
    }
}

static void print_names(const trowel_archive *a)
{
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
        cli_put_safe(stdout, trowel_archive_entry(a, i)->name);
        putchar('\n');
    }
}

static int print_json(cli_session *s, const char *path, trowel_archive *a)
{
    char *text = NULL;
    if (trowel_archive_to_json(a, TROWEL_JSON_ENTRIES | TROWEL_JSON_PRETTY, &text) != TROWEL_OK)
        return cli_report(s, path, NULL);
    cli_print_json_text(text);
    trowel_free(text);
    return CLI_EXIT_OK;
}

static int run_list(const cli_args *args, cli_session *s)
{
    const trowel_format *fmt;
    int rc = cli_need_operands(s, args, 1, 1, "one ARCHIVE operand");
    if (rc == CLI_EXIT_OK)
        rc = cli_forced_format(s, args, &fmt);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *path = args->operands[0];
    cli_opened o;
    if ((rc = cli_open_archive(s, path, fmt, &o)) != CLI_EXIT_OK)
        return rc;
    if ((rc = cli_apply_names(s, path, o.a, cli_args_last(args, OPT_NAMES))) != CLI_EXIT_OK) {
        cli_close_archive(&o);
        return rc;
    }
    if (cli_args_has(args, OPT_JSON))
        rc = print_json(s, path, o.a);
    else if (cli_args_has(args, OPT_LONG))
        print_long(o.a);
    else
        print_names(o.a);
    /* A damaged file lists what can be read (its problems were warned
     * about when it was opened) and still fails. */
    if (rc == CLI_EXIT_OK && trowel_archive_damaged(o.a))
        rc = CLI_EXIT_FAILURE;
    cli_close_archive(&o);
    return rc;
}

static const cli_option list_options[] = {
    {OPT_LONG, 'l', "long", NULL, "add size, packed size, offset and method columns"},
    {OPT_JSON, 0, "json", NULL, "print one JSON document"},
    {OPT_FORMAT, 't', "format", "FORMAT", "read as FORMAT instead of detecting it"},
    {OPT_NAMES, 0, "names", "LIST", "recover entry names from LIST (formats that store hashes)"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_list = {
    .name = "list",
    .synopsis = "list ARCHIVE [-l] [--json] [-t FORMAT] [--names LIST]",
    .summary = "list the entries of an archive",
    .description =
        "Print the name of every entry of ARCHIVE, one per line, in directory\n"
        "order. With -l, also its size, packed size, offset (hex) and method.\n"
        "With --json: {\"format\", \"version\", ..., \"entries\": [{\"name\", \"size\",\n"
        "\"packed_size\", \"offset\", \"method\", ...}]}.",
    .options = list_options,
    .run = run_list,
};
