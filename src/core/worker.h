/*
 * A second thread for work that can run beside the caller's: one job at a
 * time, on a context of its own (worker.c).
 *
 * A job runs on the worker's context, never the caller's: a context is one
 * thread's. What the job allocates counts against a share of the caller's
 * memory limit, lent from the start of the job until the caller waits for
 * it; what it leaves there the caller takes over (trowel_mem_take_over) or
 * frees. What it warns is kept, in order, for the caller to hand to its
 * own warning handler on its own thread when it uses the job's outcome.
 *
 * The outcome must never depend on the worker: a job that runs out of its
 * share (TROWEL_ERR_LIMIT, TROWEL_ERR_NOMEM) or cannot keep a warning
 * stops, and the caller does what is left itself, giving the same bytes,
 * warnings and errors as without a worker. A job is worth a thread
 * hand-over (tens of microseconds) only when it is many times longer, so
 * callers give it batches of work.
 *
 * While a job runs, its share counts as in use on the caller's context. A
 * caller that holds memory for work done ahead sets a reclaim function
 * (trowel_mem_set_reclaim): when one of its own allocations would pass the
 * limit, the work ahead is waited for and given up first, so the caller's
 * own work is admitted or refused as without a worker.
 */
#ifndef TROWEL_WORKER_H
#define TROWEL_WORKER_H

#include "core.h"

typedef struct trowel_worker trowel_worker;

/* A job: runs on the worker's thread with the worker's context. */
typedef trowel_status (*trowel_job_fn)(trowel_ctx *ctx, void *arg);

/* A worker for ctx's work, or NULL when a second thread is not worth it
 * or not possible: one thread asked for (-T 1), allocation failures
 * injected by a test, no thread to be had. Callers then do all the work
 * themselves, as they would anyway. */
trowel_worker *trowel_worker_new(trowel_ctx *ctx);

/* Waits for a running job and ends the thread. The caller frees what jobs
 * left on the worker's context first. NULL: nothing. */
void trowel_worker_free(trowel_worker *w);

/* The worker's context: for the caller to free, or take over, what a
 * finished job left there. Only while no job runs. */
trowel_ctx *trowel_worker_ctx(trowel_worker *w);

/* Whether the caller's limit has room for a job's share now (64 MiB
 * free): a caller that must allocate before starting a job asks first. */
bool trowel_worker_has_room(const trowel_worker *w);

/* Starts fn(worker's ctx, arg), errors naming entry (NULL: none); false
 * (nothing started) when the caller's limit has no room for the job's
 * share now (four shares must be free: 64 MiB). The worker must be idle, with nothing of
 * an earlier job left on its context. */
bool trowel_worker_start(trowel_worker *w, trowel_job_fn fn, void *arg, const char *entry);

/* Whether a job was started and not waited for. */
bool trowel_worker_busy(const trowel_worker *w);

/* Waits for the job and gives its memory share back; false when the job's
 * outcome is lost (the process forked while it ran: a child has no copy
 * of the thread, and what the job made is a copy caught part-way): the
 * caller then forgets, without freeing, all the job made, and does the
 * work itself. The warnings
 * it kept stay until the next start. */
bool trowel_worker_wait(trowel_worker *w);

/* The warnings the job has kept so far: in the job, to mark where each
 * piece of its work begins and ends; after trowel_worker_wait, all. */
size_t trowel_worker_warnings(const trowel_worker *w);

/* Whether a warning could not be kept (its memory share ran out): the
 * piece of work it belonged to, and the rest, are for the caller to do. */
bool trowel_worker_lost_warnings(const trowel_worker *w);

/* After trowel_worker_wait: the kept warnings, for a caller that keeps
 * them longer than the worker does (until the next start). */
const trowel_error *trowel_worker_warning_list(const trowel_worker *w);

/* After trowel_worker_wait: hands kept warnings [from, to) to ctx's
 * warning handler, in order, on the calling thread. */
void trowel_worker_pass_warnings(trowel_worker *w, trowel_ctx *ctx, size_t from, size_t to);

#endif
