/*
 * extract of several archives: which archive wrote each file of the run,
 * so that a second archive holding the same name is told as a clash
 * ("a.vpp and b.vpp both hold x.txt"), not as a file that exists.
 */
#ifndef TROWEL_CLI_WRITTEN_SET_H
#define TROWEL_CLI_WRITTEN_SET_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cli_written_slot {
    char *name;          /* the file, relative to DIR, normalised */
    const char *archive; /* the archive that wrote it (owned by the caller) */
} cli_written_slot;

typedef struct cli_written_set {
    cli_written_slot *slots;
    size_t used, cap; /* cap: 0 or a power of two */
} cli_written_set;

/* The archive that wrote name in this run, or NULL. */
const char *cli_written_by(const cli_written_set *set, const char *name);
/* Records that archive wrote name; false when memory runs out. */
bool cli_written_add(cli_written_set *set, const char *name, const char *archive);
void cli_written_free(cli_written_set *set);

#endif
