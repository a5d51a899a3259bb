/*
 * A test's stand-in for a program that embeds the library and serves
 * sibling files from memory through the context's open hook: it answers
 * one name (`serves`) with `data`, declines every other name (and every
 * name once data is NULL), and remembers how often it was asked and the
 * last base and name it was asked for.
 */
#ifndef TROWEL_TEST_OPEN_HOOK_SERVER_H
#define TROWEL_TEST_OPEN_HOOK_SERVER_H

#include "trowel/trowel.h"

#include <stdio.h>
#include <string.h>

typedef struct server {
    const char *serves;
    const uint8_t *data;
    size_t size;
    int calls;
    char base[256], name[256];
} server;

static trowel_status serve(void *user, trowel_ctx *ctx, const char *base, const char *name,
                           trowel_input **out)
{
    server *sv = user;
    sv->calls++;
    snprintf(sv->base, sizeof sv->base, "%s", base ? base : "(none)");
    snprintf(sv->name, sizeof sv->name, "%s", name);
    if (!sv->data || strcmp(name, sv->serves) != 0)
        return TROWEL_ERR_IO;
    return trowel_input_open_memory(ctx, sv->data, sv->size, name, out);
}

#endif
