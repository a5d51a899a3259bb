/*
 * trowel view FILE... [--port N] [--no-browser]
 * The files given as a local web page (cli/view/): a tree of every archive,
 * nested ones included, and a preview of each entry. Built only with
 * libmicrohttpd; without it, view says so.
 */
#include "cli.h"
#ifdef TROWEL_HAVE_MHD
#include "view/mhd.h"
#include "view/view.h"
#endif

#include <string.h>

#ifdef TROWEL_HAVE_MHD
static int run_view(const cli_args *args, cli_session *s)
{
    int rc = cli_need_operands(s, args, 1, 0, "FILE operand");
    if (rc != CLI_EXIT_OK)
        return rc;
    view_config cfg = {.port = 0, .open_browser = !cli_args_has(args, OPT_NO_BROWSER)};
    const char *port = cli_args_last(args, OPT_PORT);
    unsigned long value = 0;
    if (port && !cli_parse_count(port, 65535, &value))
        return cli_usage_error(s->verb, "--port takes a number from 0 to 65535, not '%s'", port);
    cfg.port = (unsigned)value;
    for (size_t i = 0; i < args->operand_count; i++)
        if (cli_is_stdin(args->operands[i]))
            return cli_usage_error(s->verb, "view reads files, not standard input");
    /* Loaded first, so that a missing library is said before any work. */
    view_mhd mhd;
    char why[256];
    if (!view_mhd_load(&mhd, why, sizeof why)) {
        cli_error("%s: cannot load libmicrohttpd: %s (install the libmicrohttpd package)",
                  s->verb, why);
        return CLI_EXIT_FAILURE;
    }
    cfg.mhd = &mhd;
    view_model *m = view_model_open(s, args->operands, args->operand_count);
    if (!m) {
        view_mhd_unload(&mhd);
        cli_error("%s: out of memory", s->verb);
        return CLI_EXIT_FAILURE;
    }
    rc = view_serve(s, m, &cfg);
    view_model_close(m);
    view_mhd_unload(&mhd); /* after the server's thread has stopped */
    return rc;
}
#else
static int run_view(const cli_args *args, cli_session *s)
{
    (void)args;
    cli_error("%s: this trowel was built without libmicrohttpd (install libmicrohttpd-dev and "
              "rebuild)",
              s->verb);
    return CLI_EXIT_FAILURE;
}
#endif

static const cli_option view_options[] = {
    {OPT_PORT, 0, "port", "N", "listen on port N of 127.0.0.1 (default 0: any free port)"},
    {OPT_NO_BROWSER, 0, "no-browser", NULL, "only print the URL; do not open a browser"},
    {OPT_NONE, 0, NULL, NULL, NULL},
};

const cli_command cli_cmd_view = {
    .name = "view",
    .synopsis = "view FILE... [--port N] [--no-browser]",
    .summary = "browse and preview archives in a local web page",
    .description =
        "Serve a page on 127.0.0.1 that browses every FILE: the tree of its\n"
        "entries (nested archives open when expanded, as mount -r shows them),\n"
        "and for the entry selected its properties, its bytes in hex, and a\n"
        "preview: pictures, animations (costumes, ANI/SET), 3D (GRF worlds and\n"
        "objects, terrain) with orbit controls, sounds, Valve scenes on a\n"
        "timeline, text and JSON. Downloads are the bytes 'extract' and\n"
        "'convert' write. The first line on standard output is the URL,\n"
        "http://127.0.0.1:PORT/?token=TOKEN; a request without the token, or\n"
        "with another Host, is refused. The browser is opened with xdg-open\n"
        "unless --no-browser. Ctrl-C stops the server. A damaged file opens with\n"
        "what can be read; the page lists its problems.",
    .options = view_options,
    .run = run_view,
};
