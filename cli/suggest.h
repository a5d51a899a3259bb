/*
 * "Did you mean ...?" for a mistyped command, format id, convert target or
 * -O key: the closest known word, when one is close enough to be a typo.
 */
#ifndef TROWEL_CLI_SUGGEST_H
#define TROWEL_CLI_SUGGEST_H

#include "cli.h"

#include <stdio.h>

/* The candidate closest to word (edit distance, a swap counting as one),
 * or NULL when none is within a typo's reach: 1 edit for short words, 2
 * from 5 characters, 3 from 9. */
const char *cli_closest(const char *word, const char *const *candidates, size_t n);

/* Each prints "Did you mean 'X'?" on f when a close word exists. */
void cli_suggest_command(FILE *f, const char *word);
void cli_suggest_format(FILE *f, const char *id);
void cli_suggest_target(FILE *f, const char *target);
/* For the keys of opts ("key=value") that fmt does not take as kind. */
void cli_suggest_options(FILE *f, const trowel_format *fmt, cli_option_kind kind,
                         const char *const *opts, size_t nopts);

#endif
