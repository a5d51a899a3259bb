/*
 * What the SCUMM family shares inside the library: the room palette of a
 * costume read from a game's resource files (scumm-res), for the costume
 * converters. Not installed.
 */
#ifndef TROWEL_SCUMM_H
#define TROWEL_SCUMM_H

#include "core/module.h"

extern const trowel_format trowel_format_scumm_res;

/* The 256-colour palette (768 bytes, R G B each 0..255) of the room that
 * entry index of a (scumm-res) belongs to: for a COST or AKOS block (any
 * entry of a room folder works), the ROOM's CLUT (v5) or the first APAL of
 * its PALS/WRAP/OFFS (v6, v7). TROWEL_ERR_USAGE when a is not a scumm-res
 * archive or index names no entry of a room; TROWEL_ERR_CORRUPT (with the
 * offset) when the room has no palette or its blocks do not nest. */
trowel_status trowel_scumm_room_palette(trowel_archive *a, size_t index, uint8_t rgb[768]);

#endif
