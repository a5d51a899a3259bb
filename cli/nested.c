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

/* Entry index of a as a nested archive whose entries hold data: *out
 * (NULL when the entry is no archive); a status when it should be one and
 * does not open. */
static trowel_status open_listable(trowel_archive *a, size_t index, trowel_archive **out)
{
    *out = NULL;
    if (!cli_nested_candidate(trowel_archive_entry(a, index)->name))
        return TROWEL_OK;
    trowel_archive *n = NULL;
    trowel_status st = trowel_archive_open_entry(a, index, NULL, &n);
    if (st != TROWEL_OK)
        return st;
    if (trowel_format_caps(trowel_archive_format(n)) & TROWEL_CAP_LIST)
        *out = n;
    else
        trowel_archive_close(n);
    return TROWEL_OK;
}

int cli_nested_open(cli_session *s, const char *path, trowel_archive *a, size_t index,
                    trowel_archive **out)
{
    if (open_listable(a, index, out) != TROWEL_OK)
        return cli_report(s, path, trowel_archive_entry(a, index)->name);
    return CLI_EXIT_OK;
}

void cli_nested_try_open(cli_session *s, trowel_archive *a, size_t index, trowel_archive **out)
{
    bool silent = s->silent;
    s->silent = true;
    if (open_listable(a, index, out) != TROWEL_OK)
        trowel_ctx_clear_error(s->ctx);
    s->silent = silent;
}
