/*
 * --recursive: an entry whose name has the extension of an archive format
 * (".str2_pc" in a ".vpp_pc") is opened in place with
 * trowel_archive_open_entry. The extension test keeps list and extract
 * from decoding every compressed entry just to find out what it is.
 */
#include "nested.h"

#include <string.h>
#include <strings.h>

bool cli_nested_candidate(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot)
        return false;
    for (size_t i = 0; i < trowel_format_count(); i++) {
        const trowel_format *f = trowel_format_at(i);
        if (!(trowel_format_caps(f) & TROWEL_CAP_LIST))
            continue;
        const char *list = trowel_format_extensions(f), *word;
        size_t len;
        while (cli_next_word(&list, &word, &len))
            if (strlen(dot) == len && strncasecmp(dot, word, len) == 0)
                return true;
    }
    return false;
}

int cli_nested_open(cli_session *s, const char *path, trowel_archive *a, size_t index,
                    trowel_archive **out)
{
    *out = NULL;
    const trowel_entry *e = trowel_archive_entry(a, index);
    if (!cli_nested_candidate(e->name))
        return CLI_EXIT_OK;
    trowel_archive *n = NULL;
    if (trowel_archive_open_entry(a, index, NULL, &n) != TROWEL_OK)
        return cli_report(s, path, e->name);
    if (!(trowel_format_caps(trowel_archive_format(n)) & TROWEL_CAP_LIST)) {
        trowel_archive_close(n);
        return CLI_EXIT_OK;
    }
    *out = n;
    return CLI_EXIT_OK;
}

void cli_nested_try_open(cli_session *s, trowel_archive *a, size_t index, trowel_archive **out)
{
    *out = NULL;
    if (!cli_nested_candidate(trowel_archive_entry(a, index)->name))
        return;
    bool quiet = s->quiet;
    s->quiet = true;
    trowel_archive *n = NULL;
    if (trowel_archive_open_entry(a, index, NULL, &n) != TROWEL_OK)
        trowel_ctx_clear_error(s->ctx);
    else if (!(trowel_format_caps(trowel_archive_format(n)) & TROWEL_CAP_LIST))
        trowel_archive_close(n);
    else
        *out = n;
    s->quiet = quiet;
}
