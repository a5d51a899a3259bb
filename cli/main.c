/*
 * trowel: the command-line tool. Finds the verb, parses its arguments, runs
 * it in a session, and answers --help, --version and 'help VERB'.
 */
#include "cli.h"
#include "signals.h"
#include "suggest.h"

#include <errno.h>
#include <string.h>

const cli_command *const cli_commands[] = {
    &cli_cmd_formats, &cli_cmd_info,    &cli_cmd_scan,       &cli_cmd_list,  &cli_cmd_extract,
    &cli_cmd_create,  &cli_cmd_verify,  &cli_cmd_convert,    &cli_cmd_compress,
    &cli_cmd_decompress, &cli_cmd_mount,  &cli_cmd_umount,     &cli_cmd_view,
    &cli_cmd_completion,
};
const size_t cli_command_count = sizeof cli_commands / sizeof cli_commands[0];

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < cli_command_count; i++)
        if (strcmp(cli_commands[i]->name, name) == 0)
            return cli_commands[i];
    return NULL;
}

/* ------------------------------------------------------------------ help */

static size_t label_width(const cli_option *o)
{
    size_t n = 6; /* "  -x, " or six spaces */
    if (o->long_name)
        n += 2 + strlen(o->long_name);
    if (o->arg_name)
        n += 1 + strlen(o->arg_name);
    return n;
}

static void print_option(FILE *f, const cli_option *o, size_t width)
{
    if (!o->help)
        return; /* hidden */
    if (o->short_name)
        fprintf(f, "  -%c%s", o->short_name, o->long_name ? ", " : "  ");
    else
        fputs("      ", f);
    if (o->long_name)
        fprintf(f, "--%s", o->long_name);
    if (o->arg_name)
        fprintf(f, " %s", o->arg_name);
    size_t used = label_width(o);
    fprintf(f, "%*s%s\n", (int)(width > used ? width - used : 0) + 2, "", o->help);
}

static size_t options_width(const cli_option *table)
{
    size_t w = 0;
    for (const cli_option *o = table; o->id != OPT_NONE; o++)
        if (o->help && label_width(o) > w)
            w = label_width(o);
    return w > 30 ? 30 : w;
}

static void print_command_help(const cli_command *cmd, FILE *f)
{
    fprintf(f, "Usage: " CLI_PROGRAM " %s\n\n%s\n", cmd->synopsis, cmd->description);
    size_t w = options_width(cmd->options);
    size_t wc = options_width(cli_common_options);
    w = w > wc ? w : wc;
    if (cmd->options[0].id != OPT_NONE) {
        fputs("\nOptions:\n", f);
        for (const cli_option *o = cmd->options; o->id != OPT_NONE; o++)
            print_option(f, o, w);
    }
    fputs("\nCommon options:\n", f);
    for (const cli_option *o = cli_common_options; o->id != OPT_NONE; o++)
        if (!cli_option_find(cmd->options, o->id)) /* else shown above */
            print_option(f, o, w);
    if (cmd->more_help)
        cmd->more_help(f);
    fputs("\nExit status: 0 success, 1 bad or unsupported input or a failed check, "
          "2 usage error.\n",
          f);
}

static void print_main_help(FILE *f)
{
    fputs("Usage: " CLI_PROGRAM " COMMAND [OPTION]... [ARGUMENT]...\n\n"
          "Detect, inspect, extract, convert, verify and rebuild the data files of\n"
          "classic games.\n\nCommands:\n",
          f);
    for (size_t i = 0; i < cli_command_count; i++)
        if (cli_commands[i]->summary) /* NULL: hidden (completion) */
            fprintf(f, "  %-11s %s\n", cli_commands[i]->name, cli_commands[i]->summary);
    fprintf(f, "  %-11s %s\n", "help", "show the help of a command");
    fputs("\nOptions: -h, --help (this help); --version (the version).\n"
          "Run '" CLI_PROGRAM " COMMAND --help' for a command's options, "
          "'man " CLI_PROGRAM "' for more.\n",
          f);
}

static int help_command(int argc, char **argv)
{
    if (argc < 1) {
        print_main_help(stdout);
        return CLI_EXIT_OK;
    }
    if (argc > 1)
        return cli_usage_error("help", "takes one command name");
    const cli_command *cmd = find_command(argv[0]);
    if (!cmd) {
        fputs(CLI_PROGRAM ": no command '", stderr);
        cli_put_safe(stderr, argv[0]);
        fputs("' to show help for\n", stderr);
        cli_suggest_command(stderr, argv[0]);
        fputs("Try '" CLI_PROGRAM " --help'.\n", stderr);
        return CLI_EXIT_USAGE;
    }
    print_command_help(cmd, stdout);
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------- run */

static int run_command(const cli_command *cmd, int argc, char **argv)
{
    cli_args args;
    int rc = cli_parse_args(cmd->name, cmd->options, argc, argv, &args);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (cli_args_has(&args, OPT_HELP)) {
        print_command_help(cmd, stdout);
        cli_args_free(&args);
        return CLI_EXIT_OK;
    }
    cli_session s;
    rc = cli_session_open(&s, cmd->name, &args);
    if (rc == CLI_EXIT_OK) {
        trowel_ctx_set_temp_handler(s.ctx, cli_signals_temp_handler, NULL);
        rc = cmd->run(&args, &s);
    }
    cli_session_close(&s);
    cli_args_free(&args);
    return rc;
}

/* A full disk or a closed pipe on stdout is a failure, not a success. */
static int finish_stdout(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("cannot write standard output: %s", strerror(errno));
        return rc ? rc : CLI_EXIT_FAILURE;
    }
    return rc;
}

static int dispatch(int argc, char **argv)
{
    const char *word = argv[1];
    if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0) {
        print_main_help(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(word, "--version") == 0) {
        printf(CLI_PROGRAM " %s\n", TROWEL_VERSION_STRING);
        return CLI_EXIT_OK;
    }
    if (strcmp(word, "help") == 0)
        return help_command(argc - 2, argv + 2);
    const cli_command *cmd = find_command(word);
    if (cmd)
        return run_command(cmd, argc - 2, argv + 2);
    if (word[0] == '-')
        return cli_usage_error(NULL, "unknown option '%s' (a command comes first)", word);
    fputs(CLI_PROGRAM ": unknown command '", stderr);
    cli_put_safe(stderr, word);
    fputs("'\n", stderr);
    cli_suggest_command(stderr, word);
    fputs("Try '" CLI_PROGRAM " --help'.\n", stderr);
    return CLI_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs("Usage: " CLI_PROGRAM " COMMAND [OPTION]... [ARGUMENT]...\n", stderr);
        return cli_usage_error(NULL, "no command given");
    }
    cli_signals_install();
    return finish_stdout(dispatch(argc, argv));
}
