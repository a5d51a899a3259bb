/*
 * Cleaning up on a fatal signal. The library keeps no global state, so the
 * CLI keeps this little registry: the named temporaries live now, each in a
 * slot the handler can read at any moment. A slot's name is written before
 * the slot is marked live and the mark is cleared before the slot is reused,
 * so the handler never sees a half-written name. The handler only removes
 * (trowel_remove_temp makes system calls only) and writes, then dies of
 * the same signal with the default action, so the exit status tells the
 * shell what happened.
 */
#include "signals.h"

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#define TEMP_SLOTS 16
#define TEMP_NAME_MAX 256 /* the folder a stage holds has a name of the user's */

typedef struct temp_slot {
    volatile sig_atomic_t live;
    int dirfd;
    char name[TEMP_NAME_MAX];
} temp_slot;

static temp_slot temp_slots[TEMP_SLOTS];
static bool stderr_is_terminal;

/* Every signal whose default ends the run (a closed pipe, an alarm, a
 * file over the size limit too), so that none leaves a temporary or a
 * folder being staged behind. */
static const int fatal_signals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGPIPE, SIGQUIT,
                                    SIGXFSZ, SIGALRM, SIGUSR1, SIGUSR2};

void cli_signals_temp_handler(void *user, int dirfd, const char *name, bool live)
{
    (void)user;
    size_t len = strlen(name);
    for (size_t i = 0; i < TEMP_SLOTS; i++) {
        temp_slot *t = &temp_slots[i];
        if (live && !t->live && len < TEMP_NAME_MAX) {
            t->dirfd = dirfd;
            memcpy(t->name, name, len + 1);
            atomic_signal_fence(memory_order_seq_cst); /* the name before the mark */
            t->live = 1;
            return;
        }
        if (!live && t->live && t->dirfd == dirfd && strcmp(t->name, name) == 0) {
            t->live = 0;
            return;
        }
    }
}

static void on_fatal_signal(int sig)
{
    for (size_t i = 0; i < TEMP_SLOTS; i++)
        if (temp_slots[i].live) /* a file, or a folder being staged */
            trowel_remove_temp(temp_slots[i].dirfd, temp_slots[i].name);
    /* The progress bar may be on the line: leave it clean for the shell. */
    if (stderr_is_terminal) {
        static const char clear_line[] = "\r\033[K";
        ssize_t ignored = write(STDERR_FILENO, clear_line, sizeof clear_line - 1);
        (void)ignored;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void cli_signals_install(void)
{
    stderr_is_terminal = isatty(STDERR_FILENO);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigfillset(&sa.sa_mask); /* one cleanup at a time */
        struct sigaction old;
        /* A signal ignored by whoever started us (nohup) stays ignored. */
        if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(fatal_signals[i], &sa, NULL);
    }
}
