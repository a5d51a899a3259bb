/*
 * SIGINT, SIGTERM and SIGHUP: before the signal kills trowel, remove the
 * named temporaries the library's file sinks have live (see
 * trowel_ctx_set_temp_handler) and clear the progress bar's line.
 */
#ifndef TROWEL_CLI_SIGNALS_H
#define TROWEL_CLI_SIGNALS_H

#include <trowel/trowel.h>

/* Installs the handlers; once, before any work. */
void cli_signals_install(void);
/* A trowel_temp_fn keeping the registry the handlers clean up from (the
 * user pointer is unused). */
void cli_signals_temp_handler(void *user, int dirfd, const char *name, bool live);

#endif
