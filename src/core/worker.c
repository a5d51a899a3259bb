/*
 * A second thread with a context of its own (see worker.h).
 *
 * The thread sleeps on a condition variable until a job is posted, runs it,
 * and signals that it is done; the mutex hand-over orders everything the
 * job wrote before what the caller reads after. Signals are blocked on the
 * thread, so that the command line's handlers (which remove temporaries on
 * Ctrl-C) keep running on the caller's thread.
 *
 * A process that forks (trowel mount's daemon) keeps only the thread that
 * forked: the child's worker starts a thread of its own the first time it
 * is given a job. A job that was running when the process forked is lost
 * to the child: what it had made is a copy caught part-way, never used or
 * freed (its caller forgets it and does the work itself).
 *
 * Memory: the job's context gets a share of the caller's limit, counted as
 * in use on the caller's context from the start of the job until the
 * caller waits for it; the kept warnings live in that share too.
 */
#include "worker.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The share a job may use (a test may set a smaller one), and the room the
 * caller must have for a job to start: four shares, so that the caller
 * keeps three quarters of it. */
#define JOB_SHARE ((uint64_t)16 << 20)

static uint64_t share_of(const trowel_ctx *owner)
{
    return owner->worker_share ? owner->worker_share : JOB_SHARE;
}

struct trowel_worker {
    trowel_ctx *owner; /* the caller's context */
    trowel_ctx *ctx;   /* the job's */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t posted;   /* a job, or quit */
    pthread_cond_t finished; /* the job is done */
    trowel_job_fn fn;        /* posted and not done (under lock) */
    void *arg;
    bool done;               /* under lock */
    bool quit;               /* under lock */
    bool running;            /* started and not waited for (caller's thread) */
    pid_t pid;               /* the process the thread runs in */
    uint64_t lent;           /* of the owner's limit, while a job runs */
    trowel_status status;
    trowel_error *warnings;  /* on ctx */
    size_t warning_count, warning_cap;
    bool warnings_lost;
};

/* The job's warning handler (the job's thread). */
static void keep_warning(void *user, const trowel_error *warning)
{
    trowel_worker *w = user;
    if (!w->warnings_lost && w->warning_count == w->warning_cap) {
        size_t cap = w->warning_cap ? 2 * w->warning_cap : 8;
        trowel_error saved = w->ctx->last_error; /* a failed resize sets it */
        if (trowel_mem_resize_array(w->ctx, &w->warnings, cap, sizeof *w->warnings) ==
            TROWEL_OK)
            w->warning_cap = cap;
        w->ctx->last_error = saved;
    }
    if (w->warnings_lost || w->warning_count == w->warning_cap)
        w->warnings_lost = true;
    else
        w->warnings[w->warning_count++] = *warning;
}

static void *worker_main(void *arg)
{
    trowel_worker *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->fn && !w->quit)
            pthread_cond_wait(&w->posted, &w->lock);
        if (w->quit)
            break;
        trowel_job_fn fn = w->fn;
        pthread_mutex_unlock(&w->lock);
        trowel_status s = fn(w->ctx, w->arg);
        pthread_mutex_lock(&w->lock);
        w->status = s;
        w->fn = NULL;
        w->done = true;
        pthread_cond_signal(&w->finished);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Starts w's thread with every signal blocked; false if it cannot. */
static bool start_thread(trowel_worker *w)
{
    sigset_t all, old;
    sigfillset(&all);
    if (pthread_sigmask(SIG_SETMASK, &all, &old) != 0)
        return false;
    bool ok = pthread_create(&w->thread, NULL, worker_main, w) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ok;
}

static bool has_room(const trowel_ctx *ctx)
{
    uint64_t room = ctx->mem_in_use < ctx->mem_limit ? ctx->mem_limit - ctx->mem_in_use : 0;
    return room / 4 >= share_of(ctx);
}

/* The mutex and both conditions, then the thread; false (nothing to undo)
 * if any cannot be had. */
static bool start_sync(trowel_worker *w)
{
    w->fn = NULL;
    w->done = w->quit = false;
    if (pthread_mutex_init(&w->lock, NULL) != 0)
        return false;
    if (pthread_cond_init(&w->posted, NULL) == 0) {
        if (pthread_cond_init(&w->finished, NULL) == 0) {
            if (start_thread(w)) {
                w->pid = getpid();
                return true;
            }
            pthread_cond_destroy(&w->finished);
        }
        pthread_cond_destroy(&w->posted);
    }
    pthread_mutex_destroy(&w->lock);
    return false;
}

trowel_worker *trowel_worker_new(trowel_ctx *ctx)
{
    if (trowel_threads_for(ctx, 2) < 2 || ctx->fail_alloc_after)
        return NULL;
    trowel_worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->owner = ctx;
    w->ctx = trowel_ctx_new();
    if (w->ctx) {
        w->ctx->threads = 1;
        trowel_ctx_set_warning_handler(w->ctx, keep_warning, w);
        if (start_sync(w))
            return w;
        trowel_ctx_free(w->ctx);
    }
    free(w);
    return NULL;
}

trowel_ctx *trowel_worker_ctx(trowel_worker *w)
{
    return w->ctx;
}

bool trowel_worker_has_room(const trowel_worker *w)
{
    return has_room(w->owner);
}

/* Whether w's thread is in this process (not a forked child's copy). */
static bool here(const trowel_worker *w)
{
    return w->pid == getpid();
}

bool trowel_worker_start(trowel_worker *w, trowel_job_fn fn, void *arg, const char *entry)
{
    if (!here(w)) {
        (void)trowel_worker_wait(w); /* a job of the parent's is lost */
        /* The parent's mutex and conditions are copies no thread uses:
         * made anew, with a thread of this process (once). */
        if (w->pid == 0 || !start_sync(w)) {
            w->pid = 0;
            return false;
        }
    }
    if (w->running || !has_room(w->owner))
        return false;
    trowel_mem_free(w->ctx, w->warnings);
    w->warnings = NULL;
    w->warning_count = w->warning_cap = 0;
    w->warnings_lost = false;
    if (w->ctx->mem_in_use != 0) /* the caller left something of the last job */
        return false;
    w->lent = share_of(w->owner);
    w->owner->worker_jobs++;
    w->owner->mem_in_use += w->lent;
    w->ctx->mem_limit = w->lent;
    w->ctx->mem_purpose = w->owner->mem_purpose;
    trowel_ctx_clear_error(w->ctx);
    trowel_set_entry(w->ctx, entry);
    w->running = true;
    pthread_mutex_lock(&w->lock);
    w->fn = fn;
    w->arg = arg;
    w->done = false;
    pthread_cond_signal(&w->posted);
    pthread_mutex_unlock(&w->lock);
    return true;
}

bool trowel_worker_busy(const trowel_worker *w)
{
    return w->running;
}

bool trowel_worker_wait(trowel_worker *w)
{
    if (!w->running)
        return true;
    bool finished = here(w);
    if (finished) {
        pthread_mutex_lock(&w->lock);
        while (!w->done)
            pthread_cond_wait(&w->finished, &w->lock);
        pthread_mutex_unlock(&w->lock);
    }
    w->running = false;
    w->owner->mem_in_use -= w->lent;
    w->lent = 0;
    if (!finished) { /* a half-made copy: forgotten, not freed */
        w->warnings = NULL;
        w->warning_count = w->warning_cap = 0;
        w->ctx->mem_in_use = 0;
    }
    return finished;
}

size_t trowel_worker_warnings(const trowel_worker *w)
{
    return w->warning_count;
}

bool trowel_worker_lost_warnings(const trowel_worker *w)
{
    return w->warnings_lost;
}

const trowel_error *trowel_worker_warning_list(const trowel_worker *w)
{
    return w->warnings;
}

void trowel_worker_pass_warnings(trowel_worker *w, trowel_ctx *ctx, size_t from, size_t to)
{
    trowel_pass_warnings(ctx, w->warnings, w->warning_count, from, to);
}

void trowel_worker_free(trowel_worker *w)
{
    if (!w)
        return;
    (void)trowel_worker_wait(w);
    if (here(w)) { /* a forked child has no thread to end */
        pthread_mutex_lock(&w->lock);
        w->quit = true;
        pthread_cond_signal(&w->posted);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL);
        pthread_cond_destroy(&w->finished);
        pthread_cond_destroy(&w->posted);
        pthread_mutex_destroy(&w->lock);
    }
    trowel_mem_free(w->ctx, w->warnings);
    trowel_ctx_free(w->ctx);
    free(w);
}
