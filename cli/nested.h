/*
 * --recursive for list and extract: which entries are archives of their
 * own, and opening them through trowel_archive_open_entry.
 */
#ifndef TROWEL_CLI_NESTED_H
#define TROWEL_CLI_NESTED_H

#include "cli.h"

/* What separates an archive's name from its entries' in nested paths
 * ("dlcp01_activities.vpp_pc/DLC_HA_08_08.str2_pc/x.layer_pc"), and what
 * extract adds to an archive entry's name to make the folder its entries
 * go into ("DLC_HA_08_08.str2_pc.d/x.layer_pc"). */
#define CLI_NESTED_DIR_SUFFIX ".d"

/* True when name ends with the extension of a format whose entries hold
 * data (TROWEL_CAP_LIST): the entries worth trying as nested archives
 * (list -r, extract -r, and the ENTRY.d/ folders of mount). */
bool cli_nested_candidate(const char *name);

/* Opens entry index of a as a nested archive when its name ends with an
 * extension of a format whose entries hold data (TROWEL_CAP_LIST) and it
 * opens as such a format: CLI_EXIT_OK with *out set. An entry that is not
 * an archive: CLI_EXIT_OK with *out NULL. One that should be but is damaged
 * (or nested too deep): reported against path and the entry, exit status
 * returned, *out NULL. */
int cli_nested_open(cli_session *s, const char *path, trowel_archive *a, size_t index,
                    trowel_archive **out);
/* The same, quietly: for an entry nobody asked for, whose nested archive is
 * searched only for entries a PATTERN may name below it. Not an archive,
 * not openable or damaged: *out is NULL or the archive, and nothing is
 * reported (its warnings included). */
void cli_nested_try_open(cli_session *s, trowel_archive *a, size_t index, trowel_archive **out);

#endif
