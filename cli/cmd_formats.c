/*
 * trowel formats [--json]: every format and codec and what trowel can do
 * with it. Hidden for shell completion: --ids (format ids), --codec-ids and
 * --target-ids (convert targets), one bare id per line.
 */
#include "cli.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

/* The capability names, in the order they are shown: each is shown when
 * the format has any of its bits. extract is what TROWEL_CAP_LIST allows,
 * reading entries; list also works where entries hold no data (ASM). */
typedef struct cap_name {
    unsigned bit;
    const char *name;
} cap_name;

static const cap_name cap_names[] = {
    {TROWEL_CAP_INFO, "info"},       {TROWEL_CAP_LIST | TROWEL_CAP_ENTRIES, "list"},
    {TROWEL_CAP_LIST, "extract"},    {TROWEL_CAP_CREATE, "create"},
    {TROWEL_CAP_VERIFY, "verify"},   {TROWEL_CAP_CONVERT, "convert"},
    {TROWEL_CAP_MANIFEST, "manifest"},
};
#define CAP_NAME_COUNT (sizeof cap_names / sizeof cap_names[0])

/* -------------------------------------------------------------- bare ids */

static void print_format_ids(void)
{
    for (size_t i = 0; i < trowel_format_count(); i++)
        puts(trowel_format_id(trowel_format_at(i)));
}

static void print_codec_ids(void)
{
    for (size_t i = 0; i < trowel_codec_count(); i++)
        puts(trowel_codec_id(trowel_codec_at(i)));
}

static void print_target_ids(void)
{
    cli_list_targets(stdout, "\n");
    putchar('\n');
}

/* ------------------------------------------------------------------ text */

static void print_words(const char *list)
{
    const char *w;
    size_t n;
    for (bool first = true; cli_next_word(&list, &w, &n); first = false)
        printf("%s%.*s", first ? "" : " ", (int)n, w);
}

static void print_caps(unsigned caps)
{
    bool first = true;
    for (size_t i = 0; i < CAP_NAME_COUNT; i++) {
        if (!(caps & cap_names[i].bit))
            continue;
        printf("%s%s", first ? "" : " ", cap_names[i].name);
        first = false;
    }
}

/* The create option rows ("key=values: meaning"), then the format's other
 * lines about create: the first after the label, the rest under it. */
static void print_create_options(const trowel_format *f)
{
    const char *indent = "                     ";
    bool rows = cli_format_has_options(f, CLI_CREATE_OPTIONS);
    if (rows)
        cli_print_format_options(stdout, f, CLI_CREATE_OPTIONS, "    create options:  ", indent);
    const char *text = trowel_format_create_options(f);
    const char *first = rows ? indent : "    create options:  ";
    while (*text) {
        size_t n = strcspn(text, "\n");
        printf("%s%.*s\n", first, (int)n, text);
        first = indent;
        text += n + (text[n] == '\n');
    }
}

static void print_format_text(const trowel_format *f)
{
    printf("%-14s %s (%s)\n", trowel_format_id(f), trowel_format_description(f),
           trowel_format_family(f));
    printf("    extensions:      ");
    print_words(trowel_format_extensions(f));
    printf("\n    capabilities:    ");
    print_caps(trowel_format_caps(f));
    printf("\n    convert to:      json");
    const char *targets = trowel_format_convert_targets(f);
    if (*targets) {
        putchar(' ');
        print_words(targets);
    }
    putchar('\n');
    if (trowel_format_caps(f) & TROWEL_CAP_CREATE)
        print_create_options(f);
    if (cli_format_has_options(f, CLI_READ_OPTIONS)) {
        cli_print_format_options(stdout, f, CLI_READ_OPTIONS, "    reading options: ",
                                 "                     ");
    }
    if (cli_format_has_options(f, CLI_CONVERT_OPTIONS)) {
        cli_print_format_options(stdout, f, CLI_CONVERT_OPTIONS, "    convert options: ",
                                 "                     ");
    }
}

static void print_text(void)
{
    puts("Formats:");
    for (size_t i = 0; i < trowel_format_count(); i++)
        print_format_text(trowel_format_at(i));
    puts("\nCodecs:");
    for (size_t i = 0; i < trowel_codec_count(); i++) {
        const trowel_codec *c = trowel_codec_at(i);
        printf("%-14s %s\n", trowel_codec_id(c), trowel_codec_description(c));
    }
    const char *fuse = cli_mount_fuse_version();
    if (fuse)
        printf("\nMount: trowel mount shows every archive as a folder (libfuse %s)\n", fuse);
    else
        puts("\nMount: not available (this trowel was built without libfuse3)");
}

/* ------------------------------------------------------------------ JSON */

static json_object *words_array(const char *list, const char *first)
{
    json_object *arr = json_object_new_array();
    if (first)
        json_object_array_add(arr, json_object_new_string(first));
    const char *w;
    size_t n;
    while (cli_next_word(&list, &w, &n))
        if (!first || strlen(first) != n || memcmp(first, w, n) != 0)
            json_object_array_add(arr, json_object_new_string_len(w, (int)n));
    return arr;
}

/* The create option rows as "key=values: meaning" lines, then text's lines. */
static json_object *lines_array(const trowel_format *f, const char *text)
{
    json_object *arr = json_object_new_array();
    const trowel_option_info *o;
    for (size_t i = 0; f && (o = trowel_format_option_at(f, i)) != NULL; i++) {
        if (!cli_option_is(o, CLI_CREATE_OPTIONS))
            continue;
        size_t len = strlen(o->key) + strlen(o->value) + strlen(o->help) + 4;
        char *line = malloc(len);
        if (!line)
            continue;
        snprintf(line, len, "%s=%s: %s", o->key, o->value, o->help);
        json_object_array_add(arr, json_object_new_string(line));
        free(line);
    }
    while (*text) {
        size_t n = strcspn(text, "\n");
        if (n)
            json_object_array_add(arr, json_object_new_string_len(text, (int)n));
        text += n + (text[n] == '\n');
    }
    return arr;
}

static json_object *caps_array(unsigned caps)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < CAP_NAME_COUNT; i++)
        if (caps & cap_names[i].bit)
            json_object_array_add(arr, json_object_new_string(cap_names[i].name));
    return arr;
}

/* [{"key", "value", "help", "targets": [...]}]: reading options have no
 * "targets". */
static json_object *options_array(const trowel_format *f, cli_option_kind kind)
{
    json_object *arr = json_object_new_array();
    const trowel_option_info *o;
    for (size_t i = 0; (o = trowel_format_option_at(f, i)) != NULL; i++) {
        if (!cli_option_is(o, kind))
            continue;
        json_object *x = json_object_new_object();
        json_object_object_add(x, "key", json_object_new_string(o->key));
        json_object_object_add(x, "value", json_object_new_string(o->value));
        json_object_object_add(x, "help", json_object_new_string(o->help));
        if (o->targets)
            json_object_object_add(x, "targets", words_array(o->targets, NULL));
        json_object_array_add(arr, x);
    }
    return arr;
}

static json_object *format_json(const trowel_format *f)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(trowel_format_id(f)));
    json_object_object_add(o, "family", json_object_new_string(trowel_format_family(f)));
    json_object_object_add(o, "description", json_object_new_string(trowel_format_description(f)));
    json_object_object_add(o, "extensions", words_array(trowel_format_extensions(f), NULL));
    json_object_object_add(o, "capabilities", caps_array(trowel_format_caps(f)));
    json_object_object_add(o, "convert_targets",
                           words_array(trowel_format_convert_targets(f), "json"));
    bool creates = trowel_format_caps(f) & TROWEL_CAP_CREATE;
    json_object_object_add(o, "create_options",
                           lines_array(creates ? f : NULL,
                                       creates ? trowel_format_create_options(f) : ""));
    json_object_object_add(o, "read_options", options_array(f, CLI_READ_OPTIONS));
    json_object_object_add(o, "convert_options", options_array(f, CLI_CONVERT_OPTIONS));
    return o;
}

static json_object *codec_json(const trowel_codec *c)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(trowel_codec_id(c)));
    json_object_object_add(o, "description", json_object_new_string(trowel_codec_description(c)));
    return o;
}

static int print_json(void)
{
    json_object *root = json_object_new_object();
    json_object *formats = json_object_new_array();
    json_object *codecs = json_object_new_array();
    for (size_t i = 0; i < trowel_format_count(); i++)
        json_object_array_add(formats, format_json(trowel_format_at(i)));
    for (size_t i = 0; i < trowel_codec_count(); i++)
        json_object_array_add(codecs, codec_json(trowel_codec_at(i)));
    json_object_object_add(root, "formats", formats);
    json_object_object_add(root, "codecs", codecs);
    const char *fuse = cli_mount_fuse_version();
    json_object *mount = json_object_new_object();
    json_object_object_add(mount, "available", json_object_new_boolean(fuse != NULL));
    if (fuse)
        json_object_object_add(mount, "fuse", json_object_new_string(fuse));
    json_object_object_add(root, "mount", mount);
    const char *text = json_object_to_json_string_ext(
        root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc = CLI_EXIT_OK;
    if (text)
        cli_print_json_text(text);
    else {
        cli_error("out of memory");
        rc = CLI_EXIT_FAILURE;
    }
    json_object_put(root);
    return rc;
}

/* --------------------------------------------------------------- command */

static int run_formats(const cli_args *args, cli_session *s)
{
    if (args->operand_count)
        return cli_usage_error(s->verb, "takes no operands ('%s' given)", args->operands[0]);
    if (cli_args_has(args, OPT_IDS))
        print_format_ids();
    else if (cli_args_has(args, OPT_CODEC_IDS))
        print_codec_ids();
    else if (cli_args_has(args, OPT_TARGET_IDS))
        print_target_ids();
    else if (cli_args_has(args, OPT_JSON))
        return print_json();
    else
        print_text();
    return CLI_EXIT_OK;
}

static const cli_option formats_options[] = {
    {OPT_JSON, 0, "json", NULL, "print one JSON document"},
    {OPT_IDS, 0, "ids", NULL, NULL},
    {OPT_CODEC_IDS, 0, "codec-ids", NULL, NULL},
    {OPT_TARGET_IDS, 0, "target-ids", NULL, NULL},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_formats = {
    .name = "formats",
    .synopsis = "formats [--json]",
    .summary = "list every format and codec and what trowel can do with it",
    .description =
        "Print every format trowel knows (id, family, description, file name\n"
        "extensions, capabilities, convert targets, create, reading and convert\n"
        "options) and every codec.",
    .options = formats_options,
    .run = run_formats,
};
