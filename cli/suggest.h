/*
 * "Did you mean ...?" for a mistyped command, format id, convert target or
 * -O key: the closest known word (closest.h), when one is close enough to
 * be a typo.
 */
#ifndef TROWEL_CLI_SUGGEST_H
#define TROWEL_CLI_SUGGEST_H

#include "cli.h"

#include <stdio.h>

/* Each prints "Did you mean 'X'?" on f when a close word exists. */
void cli_suggest_command(FILE *f, const char *word);
void cli_suggest_format(FILE *f, const char *id);
void cli_suggest_target(FILE *f, const char *target);
/* For the keys of opts ("key=value") that fmt does not take as kind. */
void cli_suggest_options(FILE *f, const trowel_format *fmt, cli_option_kind kind,
                         const char *const *opts, size_t nopts);

#endif
