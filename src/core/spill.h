/* Core's temporary storage: bytes written once, front to back, then read
 * back as an input, for a format that must hold more than it should keep
 * in memory (a packfile rebuilt from a base) without opening a temporary
 * file of its own.
 *
 * Memory and disk: the bytes stay in memory the limit counts up to a
 * threshold, 1 MiB or a tenth of the context's memory limit, whichever is
 * smaller. The first write that would pass it moves everything to an
 * unnamed file in $TMPDIR (else /tmp): O_TMPFILE where the file system has
 * it, else a short name made with O_EXCL and removed at once, announced to
 * the context's temp handler for as long as it exists. Nothing is left
 * behind whatever happens: an unnamed file goes with its descriptor. */
#ifndef TROWEL_SPILL_H
#define TROWEL_SPILL_H

#include "core.h"

typedef struct trowel_spill trowel_spill;

/* A new, empty spill; what (copied) names it in messages ("the base
 * archive's copy"). */
trowel_status trowel_spill_open(trowel_ctx *ctx, const char *what, trowel_spill **out);
/* Appends n bytes. Fails (TROWEL_ERR_IO, _NOMEM) if the bytes cannot be
 * kept; after a failure, or once the input is taken, every write fails. */
trowel_status trowel_spill_write(trowel_spill *sp, const void *data, size_t n);
/* Bytes written so far. */
uint64_t trowel_spill_size(const trowel_spill *sp);
/* True once the bytes have moved to a file. */
bool trowel_spill_on_disk(const trowel_spill *sp);
/* The bytes written, as an input owned by the spill (valid until
 * trowel_spill_close; the same input on every call). No writes after it. */
trowel_status trowel_spill_input(trowel_spill *sp, trowel_input **out);
/* Frees the spill, its input and its storage (NULL: nothing). */
void trowel_spill_close(trowel_spill *sp);

#endif
