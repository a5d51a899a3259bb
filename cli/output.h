/*
 * What trowel prints besides command results: errors and warnings in one
 * shape, property values as text, and the progress bar.
 */
#ifndef TROWEL_CLI_OUTPUT_H
#define TROWEL_CLI_OUTPUT_H

#include <trowel/trowel.h>

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#if defined(__GNUC__) || defined(__clang__)
#define CLI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CLI_PRINTF(f, a)
#endif

#define CLI_PROGRAM "trowel"

/* Exit statuses (DESIGN.md). */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAILURE = 1, CLI_EXIT_USAGE = 2 };

/* "trowel: message" on stderr. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);
/* "trowel: VERB: message" and a pointer to --help on stderr; returns 2. */
int cli_usage_error(const char *verb, const char *fmt, ...) CLI_PRINTF(2, 3);

/* "trowel: FILE: ENTRY: message (offset 0x1a2b)"; FILE may be NULL. */
void cli_print_error(const char *file, const trowel_error *e);
/* "trowel: FILE: warning: ENTRY: message (offset 0x1a2b)". */
void cli_print_warning(const char *file, const trowel_error *w);
/* -v: what the library did ("trowel: FILE: ENTRY: message"), on stderr. */
void cli_print_note(const char *file, const trowel_error *n);

/* 2 for TROWEL_ERR_USAGE, 1 for every other failure, 0 for TROWEL_OK. */
int cli_status_exit(trowel_status s);

/* Prints s with control characters shown as '?', so names taken from a
 * hostile file cannot drive the terminal. */
void cli_put_safe(FILE *f, const char *s);
/* A property's value as text: hex as 0x..., lists comma-joined. */
void cli_print_prop_value(FILE *f, const trowel_prop *p);

/* ------------------------------------------------------------ progress */

/* The bar's state, handed to the library as the progress callback's user
 * pointer (no global state). Drawn on stderr only when enabled. */
typedef struct cli_progress {
    bool enabled;
    const char *label;    /* not copied: must outlive the work */
    struct timespec last; /* when the line was last drawn (or work began) */
    size_t drawn;         /* characters on the line now; 0 when clear */
} cli_progress;

/* enabled is forced off unless stderr is a terminal. */
void cli_progress_init(cli_progress *p, bool enabled);
/* A new piece of work: new label, and no redraw for the first ~100 ms. */
void cli_progress_start(cli_progress *p, const char *label);
/* A trowel_progress_fn: redraws at most ten times a second. */
void cli_progress_handler(void *user, uint64_t done, uint64_t total);
/* Removes the bar from the line, if one is there. */
void cli_progress_clear(cli_progress *p);

#endif
