/*
 * The closest word to a mistyped one, by edit distance: the one piece of
 * did-you-mean that both the argument parser (an unknown option) and the
 * suggestions (suggest.h: commands, formats, targets, -O keys) need. It
 * knows no table of its own, so the parser can use it without depending on
 * the commands it parses for.
 */
#ifndef TROWEL_CLI_CLOSEST_H
#define TROWEL_CLI_CLOSEST_H

#include <stddef.h>

/* Words longer than this are never close to anything. */
#define CLI_CLOSEST_MAX_WORD 64

/* The candidate closest to word (edit distance, a swap counting as one),
 * or NULL when none is within a typo's reach: 1 edit for short words, 2
 * from 5 characters, 3 from 9. */
const char *cli_closest(const char *word, const char *const *candidates, size_t n);

#endif
