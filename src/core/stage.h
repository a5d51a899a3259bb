/* A staged output folder (stage.c): a folder that does not exist yet,
 * written under a private name and put in place whole. trowel_outdir's
 * TROWEL_OUTDIR_STAGED. */
#ifndef TROWEL_STAGE_H
#define TROWEL_STAGE_H

#include "core.h"

typedef struct trowel_stage trowel_stage;

/* Stages the folder top inside parent (a folder descriptor, kept by the
 * caller): *out and *fd (the folder to write into, the stage's own until
 * it is published) when top does not exist and can be staged here; false,
 * with nothing made, when it exists or cannot be (the caller then makes it
 * in place, which says why if that fails too). */
bool trowel_stage_open(trowel_ctx *ctx, int parent, const char *top, trowel_stage **out,
                       int *fd);
/* Puts the folder in place, or removes it when it holds no file; path is
 * for messages. A failure removes it too, with all it holds. */
trowel_status trowel_stage_publish(trowel_stage *st, const char *path);
/* Frees st, removing the folder with all it holds unless it was published. */
void trowel_stage_close(trowel_stage *st);

#endif
