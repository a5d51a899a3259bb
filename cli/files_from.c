/*
 * --files-from FILE (extract, create): a list of names, one a line.
 */
#include "create.h"

#include <stdlib.h>
#include <string.h>

int cli_read_lines(cli_session *s, const char *path, char **text, const char ***lines,
                   size_t *count)
{
    size_t size;
    *lines = NULL;
    *count = 0;
    int rc = strcmp(path, "-") == 0 ? cli_read_all(s, 0, "standard input", text, &size)
                                    : cli_read_file(s, path, text, &size);
    if (rc != CLI_EXIT_OK)
        return rc;
    size_t cap = 1;
    for (size_t i = 0; i < size; i++)
        cap += (*text)[i] == '\n';
    *lines = calloc(cap, sizeof **lines);
    if (!*lines) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    for (char *line = *text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r')
            line[--len] = '\0';
        if (len)
            (*lines)[(*count)++] = line;
    }
    return CLI_EXIT_OK;
}

