/*
 * How a format gets the bytes of a create source (a trowel_source of
 * trowel_create_params): never by opening its path itself, always here.
 * The path goes through the context's open hook as a file named by an
 * option does (trowel_open_related with base NULL), so a program that
 * serves files itself (from memory, from its own archive) serves create
 * sources too; without a hook it is the file at that path, as before.
 * The paths are already complete: trowel_create joins a manifest's names
 * to base_dir before a format sees them.
 */
#ifndef TROWEL_SOURCE_H
#define TROWEL_SOURCE_H

#include "reader.h"

/* Opens src's bytes as an input; the caller closes *out. Fails
 * (TROWEL_ERR_IO, the message naming the path) when it cannot be read. */
trowel_status trowel_source_open(trowel_ctx *ctx, const trowel_source *src, trowel_input **out);

/* src's bytes whole in counted memory (within the memory limit): *data
 * holds *size bytes; the caller frees it with trowel_mem_free (also when
 * *size is 0). */
trowel_status trowel_source_load(trowel_ctx *ctx, const trowel_source *src, uint8_t **data,
                                 size_t *size);

/* src's size in bytes, without reading it (the input is opened and closed). */
trowel_status trowel_source_size(trowel_ctx *ctx, const trowel_source *src, uint64_t *size);

#endif
