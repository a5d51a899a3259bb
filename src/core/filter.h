/*
 * Input filters: wrappers peeled before formats bid (libarchive's read
 * filters, for game files). A filter recognises its wrapper from a few
 * bytes and opens a new input that reads what the wrapper hides. The
 * detection in filter.c tries every filter, and keeps a chain only when a
 * format recognises the peeled bytes; the archive owns the chain's inputs.
 */
#ifndef TROWEL_FILTER_H
#define TROWEL_FILTER_H

#include "module.h"

typedef struct trowel_filter {
    const char *id;          /* shown in info: "xor69", "szdd" */
    const char *description;
    /* How sure the filter is that r (a reader over the whole input) is its
     * wrapper; 0: not. Must not allocate from file data. */
    int (*bid)(trowel_reader *r);
    /* Optional, consulted only when no format was asked for (no -t): false
     * when peeling is not worth its cost for this input (szdd: peeling
     * decodes the whole file). */
    bool (*worth_peeling)(trowel_reader *r);
    /* Opens the peeled input over in (which must outlive it). Fails with an
     * error set when the wrapper is damaged or too large for the limit. */
    trowel_status (*open)(trowel_ctx *ctx, trowel_input *in, trowel_input **out);
} trowel_filter;

/* Every filter, in the order they are tried (registry.c; each filter's
 * object is defined by its family: scumm/xor69.c, trespasser/szdd_filter.c). */
extern const trowel_filter *const trowel_filters[];
extern const size_t trowel_filters_len;

/* The format that bids highest on in (want: only want), with its bid; 0
 * and *fmt NULL when none bids. The bids' reads are detection's (see
 * trowel_input_begin_detection), and their errors are cleared. */
int trowel_best_format(trowel_ctx *ctx, trowel_input *in, const trowel_format *want,
                       const trowel_format **fmt);

/* What detection found: the filters applied, outermost first, the inputs
 * they opened (inputs[i] is what filters[i] peeled), and the format. */
typedef struct trowel_chain {
    const trowel_filter *filters[TROWEL_FILTER_DEPTH];
    trowel_input *inputs[TROWEL_FILTER_DEPTH];
    size_t count;
    const trowel_format *fmt;
} trowel_chain;

/* Detects in's format, peeling filters first. want non-NULL (-t FORMAT):
 * the input is read as want, through the chain of filters whose peeled
 * bytes want bids on if there is one, else as it is. Without want, a chain
 * is kept only when some format bids at least TROWEL_BID_MAGIC on its
 * peeled bytes; otherwise the best bid on the raw input wins. On failure
 * nothing is left open. */
trowel_status trowel_detect_chain(trowel_ctx *ctx, trowel_input *in, const trowel_format *want,
                                  trowel_chain *out);
/* Closes the chain's inputs, innermost first. */
void trowel_chain_close(trowel_chain *c);

#endif
