/*
 * trowel view: the archives given on the command line as a local web page.
 *
 * model.c keeps what the page browses: one node per file given and per
 * entry, nested archives opened when first expanded (as mount -r opens
 * them), an entry's bytes opened as a file of its own when its preview is
 * asked for. Every conversion goes through trowel_convert, so the page's
 * downloads are the bytes `trowel convert` writes.
 *
 * server.c answers HTTP on 127.0.0.1 with libmicrohttpd: one polling
 * thread, so requests are served one at a time and the model needs no
 * locks. Nothing a request names reaches the file system: entries are
 * addressed by node number.
 *
 * Built only when libmicrohttpd is found (TROWEL_HAVE_MHD); cmd_view.c is
 * the verb.
 */
#ifndef TROWEL_CLI_VIEW_H
#define TROWEL_CLI_VIEW_H

#include "../cli.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct view_model view_model;

/* A reply body: bytes, their media type, and an optional file name for a
 * download. data is malloc'ed; the caller frees it. */
typedef struct view_reply {
    unsigned status; /* HTTP status */
    char *data;
    size_t len;
    const char *type;   /* static */
    char *filename;     /* malloc'ed or NULL */
} view_reply;

void view_reply_free(view_reply *r);

/* Opens every path (reporting failures on stderr; a file that does not
 * open is still shown, with its error). NULL only when memory is out. */
view_model *view_model_open(cli_session *s, const char *const *paths, size_t count);
void view_model_close(view_model *m);
/* One request of the page's API: the call ("children", "find", "info",
 * "preview", "raw", "convert") and its query parameters, NULL when absent. */
typedef struct view_query {
    const char *call;
    const char *node; /* a node number */
    const char *path; /* find: FILE/ENTRY/... */
    const char *to;   /* convert: the target */
    const char *file; /* convert: one file of a target that makes a folder */
    const char *opt;  /* convert: one KEY=VALUE option */
    const char *off, *len; /* raw: a range */
    bool download;    /* a file name goes with the reply */
} view_query;

/* Answers q into *r; never fails the server (an error is a reply). */
void view_api(view_model *m, const view_query *q, view_reply *r);

/* --------------------------------------------------------------- assets */

/* The page's own files (web/, built in) and three.js from the system. */
typedef struct view_asset {
    const char *name;
    const unsigned char *data;
    size_t len;
    const char *type;
} view_asset;

const view_asset *view_builtin_asset(const char *name);

/* --------------------------------------------------------------- server */

struct view_mhd;

typedef struct view_config {
    unsigned port;      /* 0: any free port */
    bool open_browser;
    const struct view_mhd *mhd; /* libmicrohttpd, loaded by the caller (mhd.h) */
} view_config;

/* Serves m until SIGINT or SIGTERM. Prints the URL first on stdout. */
int view_serve(cli_session *s, view_model *m, const view_config *cfg);

#endif
