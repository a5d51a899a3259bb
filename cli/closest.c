/*
 * Edit distance for did-you-mean (see closest.h).
 */
#include "closest.h"

#include <string.h>

/* Optimal string alignment distance: insertions, deletions, substitutions
 * and swaps of two neighbours each cost 1. Words past CLI_CLOSEST_MAX_WORD
 * are never close. */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > CLI_CLOSEST_MAX_WORD || m > CLI_CLOSEST_MAX_WORD)
        return (size_t)-1;
    size_t d[CLI_CLOSEST_MAX_WORD + 1][CLI_CLOSEST_MAX_WORD + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t k = 0; k <= m; k++)
        d[0][k] = k;
    for (size_t i = 1; i <= n; i++)
        for (size_t k = 1; k <= m; k++) {
            size_t best = d[i - 1][k - 1] + (a[i - 1] != b[k - 1]);
            if (d[i - 1][k] + 1 < best)
                best = d[i - 1][k] + 1;
            if (d[i][k - 1] + 1 < best)
                best = d[i][k - 1] + 1;
            if (i > 1 && k > 1 && a[i - 1] == b[k - 2] && a[i - 2] == b[k - 1] &&
                d[i - 2][k - 2] + 1 < best)
                best = d[i - 2][k - 2] + 1;
            d[i][k] = best;
        }
    return d[n][m];
}

static size_t reach(const char *word)
{
    size_t len = strlen(word);
    return len >= 9 ? 3 : len >= 5 ? 2 : 1;
}

const char *cli_closest(const char *word, const char *const *candidates, size_t n)
{
    const char *best = NULL;
    size_t best_d = reach(word) + 1;
    for (size_t i = 0; i < n; i++) {
        size_t d = distance(word, candidates[i]);
        if (d < best_d && d > 0) {
            best = candidates[i];
            best_d = d;
        }
    }
    return best;
}
