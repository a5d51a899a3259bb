/*
 * scenes.image (VSIF): the builder (vsif_build.c), which the format table
 * in vsif.c names as its create. The builder uses the image as read
 * (vsif_image.h), never the reader, so uses go one way.
 */
#ifndef TROWEL_VALVE_VSIF_BUILD_H
#define TROWEL_VALVE_VSIF_BUILD_H

#include "core/module.h"

struct json_object;

/* Builds an image from p's sources (and -O base=IMAGE) into out. */
trowel_status vsif_create(trowel_ctx *ctx, const trowel_create_params *p,
                          struct json_object *manifest, trowel_sink *out);

#endif
