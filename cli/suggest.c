/*
 * Did-you-mean suggestions (see suggest.h). The candidates come from the
 * command table and the library's registry, so they never drift.
 */
#include "suggest.h"

#include "closest.h"

#include <stdlib.h>
#include <string.h>

static void say(FILE *f, const char *best)
{
    if (!best)
        return;
    fputs("Did you mean '", f);
    cli_put_safe(f, best);
    fputs("'?\n", f);
}

void cli_suggest_command(FILE *f, const char *word)
{
    const char *names[64];
    size_t n = 0;
    for (size_t i = 0; i < cli_command_count && n < 63; i++)
        if (cli_commands[i]->summary)
            names[n++] = cli_commands[i]->name;
    names[n++] = "help";
    say(f, cli_closest(word, names, n));
}

void cli_suggest_format(FILE *f, const char *id)
{
    size_t n = trowel_format_count();
    const char **ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids)
        return;
    for (size_t i = 0; i < n; i++)
        ids[i] = trowel_format_id(trowel_format_at(i));
    say(f, cli_closest(id, ids, n));
    free(ids);
}

/* Every word of every format's target list, and "json" (duplicates do no
 * harm); the words are copied into one buffer. */
void cli_suggest_target(FILE *f, const char *target)
{
    size_t count = 1, bytes = 5;
    for (size_t i = 0; i < trowel_format_count(); i++) {
        const char *list = trowel_format_convert_targets(trowel_format_at(i)), *w;
        size_t len;
        while (cli_next_word(&list, &w, &len)) {
            count++;
            bytes += len + 1;
        }
    }
    const char **words = malloc(count * sizeof *words);
    char *text = malloc(bytes);
    if (words && text) {
        size_t n = 0;
        char *p = text;
        words[n++] = strcpy(p, "json");
        p += 5;
        for (size_t i = 0; i < trowel_format_count(); i++) {
            const char *list = trowel_format_convert_targets(trowel_format_at(i)), *w;
            size_t len;
            while (cli_next_word(&list, &w, &len)) {
                memcpy(p, w, len);
                p[len] = '\0';
                words[n++] = p;
                p += len + 1;
            }
        }
        say(f, cli_closest(target, words, n));
    }
    free(words);
    free(text);
}

void cli_suggest_options(FILE *f, const trowel_format *fmt, cli_option_kind kind,
                         const char *const *opts, size_t nopts)
{
    const char *keys[128];
    size_t n = 0;
    const trowel_option_info *o;
    for (size_t i = 0; (o = trowel_format_option_at(fmt, i)) != NULL && n < 128; i++)
        if (cli_option_is(o, kind))
            keys[n++] = o->key;
    for (size_t i = 0; i < nopts; i++) {
        char key[CLI_CLOSEST_MAX_WORD + 1];
        size_t len = strcspn(opts[i], "=");
        if (len > CLI_CLOSEST_MAX_WORD)
            continue;
        memcpy(key, opts[i], len);
        key[len] = '\0';
        bool known = false;
        for (size_t k = 0; k < n && !known; k++)
            known = strcmp(keys[k], key) == 0;
        if (known)
            continue;
        const char *best = cli_closest(key, keys, n);
        if (best)
            fprintf(f, "Did you mean '-O %s%s'?\n", best, opts[i] + len);
    }
}
