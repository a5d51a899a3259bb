/*
 * A hash set of file names (open addressing, FNV-1a), see written_set.h.
 */
#include "written_set.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (size_t)h;
}

static cli_written_slot *slot_for(const cli_written_set *set, const char *name)
{
    size_t i = hash(name) & (set->cap - 1);
    while (set->slots[i].name && strcmp(set->slots[i].name, name) != 0)
        i = (i + 1) & (set->cap - 1);
    return &set->slots[i];
}

const char *cli_written_by(const cli_written_set *set, const char *name)
{
    if (!set->cap)
        return NULL;
    const cli_written_slot *s = slot_for(set, name);
    return s->name ? s->archive : NULL;
}

static bool grow(cli_written_set *set)
{
    size_t cap = set->cap ? set->cap * 2 : 64;
    cli_written_set bigger = {calloc(cap, sizeof *bigger.slots), set->used, cap};
    if (!bigger.slots)
        return false;
    for (size_t i = 0; i < set->cap; i++)
        if (set->slots[i].name)
            *slot_for(&bigger, set->slots[i].name) = set->slots[i];
    free(set->slots);
    *set = bigger;
    return true;
}

bool cli_written_add(cli_written_set *set, const char *name, const char *archive)
{
    if ((set->used + 1) * 2 > set->cap && !grow(set))
        return false;
    cli_written_slot *s = slot_for(set, name);
    if (s->name)
        return true; /* the first archive keeps it */
    s->name = strdup(name);
    if (!s->name)
        return false;
    s->archive = archive;
    set->used++;
    return true;
}

void cli_written_free(cli_written_set *set)
{
    for (size_t i = 0; i < set->cap; i++)
        free(set->slots[i].name);
    free(set->slots);
    memset(set, 0, sizeof *set);
}
