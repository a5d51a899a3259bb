/*
 * The writer's internal side (writer.c): what trowel_create gives a writer
 * besides the public calls.
 */
#ifndef TROWEL_WRITER_H
#define TROWEL_WRITER_H

#include "core.h"

/* An entry whose bytes stay at path (a create source): the build reads it
 * through the context's io hooks when the format asks, as trowel_create
 * always has, so nothing is copied and no more files are open at once than
 * the format opens. Its name is checked by the format, as before. */
trowel_status trowel_writer_add_path(trowel_writer *w, const char *name, const char *path);

/* With a manifest and no entries: the folder its entries are read from
 * (trowel_create_params.base_dir; NULL: "."). Copied. */
trowel_status trowel_writer_set_base_dir(trowel_writer *w, const char *base_dir);

#endif
