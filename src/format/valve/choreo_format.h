/*
 * What the `vcd` and `bvcd` format modules share (choreo_format.c): the
 * info they report, their conversions, and the standalone BVCD layout.
 *
 * A standalone BVCD cannot resolve its string indices by itself (inside a
 * scenes.image they point into the image's pool). trowel stores one as
 * srctools' test files do: the pool as a JSON list of strings (Python's
 * json.dumps layout: `["a", "b"]`, non-ASCII as \uXXXX), immediately
 * followed by the BVCD bytes.
 */
#ifndef TROWEL_VALVE_CHOREO_FORMAT_H
#define TROWEL_VALVE_CHOREO_FORMAT_H

#include "choreo.h"
#include "core/module.h"

/* Adds format, counts, duration, summary to a->info. */
trowel_status choreo_fill_info(trowel_archive *a, const choreo_scene *s, const char *format);

/* Converts to "vcd", "bvcd" (standalone) or "json-full" (the whole model).
 * source_crc goes into a BVCD header. Options: none. */
trowel_status choreo_convert(trowel_archive *a, const choreo_scene *s, uint32_t source_crc,
                             const char *target, const char *const *opts, size_t nopts,
                             trowel_sink *out);

/* The standalone BVCD: JSON pool, then BVCD. */
trowel_status choreo_write_standalone_bvcd(trowel_ctx *ctx, const choreo_scene *s, uint32_t crc,
                                           trowel_sink *out);

/* The whole scene as a JSON object (caller puts it). */
trowel_status choreo_scene_json(trowel_ctx *ctx, const choreo_scene *s, struct json_object **out);

#endif
