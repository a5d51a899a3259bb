/*
 * extract -r --manifest: the manifest of an archive holds, under "nested",
 * the manifest of each archive nested in it, keyed by the entry's name, and
 * so on down. 'create -r --manifest' reads the record to rebuild each
 * nested archive from its ENTRY.d/ folder with the same order and layout.
 */
#include "create.h"
#include "nested.h"

#include <stdlib.h>
#include <string.h>

static json_object *manifest_tree(cli_session *s, trowel_archive *a);

/* The manifests of the archives nested in a, or NULL when there are none
 * (a nested archive that does not open, or whose format has no manifest,
 * is left out: extract reports the first, create -r the missing record). */
static json_object *nested_records(cli_session *s, trowel_archive *a)
{
    json_object *nested = NULL;
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++) {
        trowel_archive *inner;
        cli_nested_try_open(s, a, i, &inner);
        if (!inner)
            continue;
        json_object *m = manifest_tree(s, inner);
        trowel_archive_close(inner);
        if (!m) {
            trowel_ctx_clear_error(s->ctx);
            continue;
        }
        if (!nested)
            nested = json_object_new_object();
        json_object_object_add(nested, trowel_archive_entry(a, i)->name, m);
    }
    return nested;
}

static json_object *manifest_tree(cli_session *s, trowel_archive *a)
{
    char *text;
    if (trowel_archive_manifest(a, &text) != TROWEL_OK)
        return NULL;
    json_object *m = json_tokener_parse(text);
    trowel_free(text);
    if (!m)
        return NULL;
    json_object *nested = nested_records(s, a);
    if (nested)
        json_object_object_add(m, "nested", nested);
    return m;
}

int cli_archive_manifest(cli_session *s, const char *path, trowel_archive *a, bool recursive,
                         char **json)
{
    *json = NULL;
    char *text;
    if (trowel_archive_manifest(a, &text) != TROWEL_OK)
        return cli_report(s, path, NULL);
    json_object *nested = recursive ? nested_records(s, a) : NULL;
    if (!nested) {
        *json = strdup(text);
        trowel_free(text);
    } else {
        json_object *m = json_tokener_parse(text);
        trowel_free(text);
        if (m) {
            json_object_object_add(m, "nested", nested);
            const char *t = json_object_to_json_string_ext(
                m, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                       JSON_C_TO_STRING_NOSLASHESCAPE);
            *json = t ? strdup(t) : NULL;
            json_object_put(m);
        } else {
            json_object_put(nested);
        }
    }
    if (*json)
        return CLI_EXIT_OK;
    cli_error("out of memory");
    return CLI_EXIT_FAILURE;
}
