/*
 * Errors, warnings, property values and the progress bar (see output.h).
 */
#include "output.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- errors */

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(CLI_PROGRAM ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(CLI_PROGRAM ": ", stderr);
    if (verb)
        fprintf(stderr, "%s: ", verb);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (verb)
        fprintf(stderr, "Try '" CLI_PROGRAM " %s --help'.\n", verb);
    else
        fputs("Try '" CLI_PROGRAM " --help'.\n", stderr);
    return CLI_EXIT_USAGE;
}

void cli_put_safe(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
}

static void print_detail(const trowel_error *e)
{
    if (e->entry[0]) {
        cli_put_safe(stderr, e->entry);
        fputs(": ", stderr);
    }
    cli_put_safe(stderr, e->message[0] ? e->message : trowel_status_string(e->status));
    if (e->offset != TROWEL_NO_OFFSET)
        fprintf(stderr, " (offset 0x%" PRIx64 ")", e->offset);
    fputc('\n', stderr);
}

void cli_print_error(const char *file, const trowel_error *e)
{
    fputs(CLI_PROGRAM ": ", stderr);
    if (file) {
        cli_put_safe(stderr, file);
        fputs(": ", stderr);
    }
    print_detail(e);
}

void cli_print_warning(const char *file, const trowel_error *w)
{
    fputs(CLI_PROGRAM ": ", stderr);
    if (file) {
        cli_put_safe(stderr, file);
        fputs(": ", stderr);
    }
    fputs("warning: ", stderr);
    print_detail(w);
}

void cli_print_note(const char *file, const trowel_error *n)
{
    fputs(CLI_PROGRAM ": ", stderr);
    if (file) {
        cli_put_safe(stderr, file);
        fputs(": ", stderr);
    }
    print_detail(n);
}

int cli_status_exit(trowel_status s)
{
    if (s == TROWEL_OK)
        return CLI_EXIT_OK;
    return s == TROWEL_ERR_USAGE ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
}

/* ------------------------------------------------------------ properties */

static void print_list(FILE *f, const trowel_prop *p)
{
    for (size_t i = 0; i < p->list_len; i++) {
        if (i)
            fputs(", ", f);
        cli_put_safe(f, p->list[i]);
    }
}

void cli_print_prop_value(FILE *f, const trowel_prop *p)
{
    switch (p->type) {
    case TROWEL_VALUE_INT:
        fprintf(f, "%" PRId64, p->i);
        break;
    case TROWEL_VALUE_UINT:
        if (p->hex)
            fprintf(f, "0x%" PRIx64, p->u);
        else
            fprintf(f, "%" PRIu64, p->u);
        break;
    case TROWEL_VALUE_BOOL:
        fputs(p->i ? "yes" : "no", f);
        break;
    case TROWEL_VALUE_STRING:
        cli_put_safe(f, p->s ? p->s : "");
        break;
    case TROWEL_VALUE_STRING_LIST:
        print_list(f, p);
        break;
    case TROWEL_VALUE_DOUBLE:
        fprintf(f, "%.9g", p->d);
        break;
    }
}

/* -------------------------------------------------------------- progress */

#define BAR_WIDTH 30
#define LABEL_WIDTH 32
#define REDRAW_NS 100000000L /* 0.1 s */

void cli_progress_init(cli_progress *p, bool enabled)
{
    memset(p, 0, sizeof *p);
    p->enabled = enabled && isatty(STDERR_FILENO);
    p->label = "";
    clock_gettime(CLOCK_MONOTONIC, &p->last);
}

void cli_progress_start(cli_progress *p, const char *label)
{
    p->label = label ? label : "";
    clock_gettime(CLOCK_MONOTONIC, &p->last);
}

static long long elapsed_ns(const struct timespec *from, const struct timespec *to)
{
    return (long long)(to->tv_sec - from->tv_sec) * 1000000000LL + (to->tv_nsec - from->tv_nsec);
}

/* The label, made safe and cut to LABEL_WIDTH characters. */
static void put_label(char *out, size_t cap, const char *label)
{
    size_t n = 0;
    size_t len = strlen(label);
    const char *start = len > LABEL_WIDTH ? label + len - (LABEL_WIDTH - 3) : label;
    if (start != label)
        n += (size_t)snprintf(out, cap, "...");
    for (const unsigned char *c = (const unsigned char *)start; *c && n + 1 < cap; c++)
        out[n++] = *c < 0x20 || *c == 0x7f ? '?' : (char)*c;
    out[n] = '\0';
}

static size_t render(char *line, size_t cap, const char *label, uint64_t done, uint64_t total)
{
    char name[LABEL_WIDTH + 8];
    put_label(name, sizeof name, label);
    if (total == 0)
        return (size_t)snprintf(line, cap, "%s %" PRIu64, name, done);
    double frac = done >= total ? 1.0 : (double)done / (double)total;
    char bar[BAR_WIDTH + 1];
    size_t fill = (size_t)(frac * BAR_WIDTH);
    for (size_t i = 0; i < BAR_WIDTH; i++)
        bar[i] = i < fill ? '=' : ' ';
    bar[BAR_WIDTH] = '\0';
    return (size_t)snprintf(line, cap, "%s [%s] %3d%%", name, bar, (int)(frac * 100.0));
}

void cli_progress_handler(void *user, uint64_t done, uint64_t total)
{
    cli_progress *p = user;
    if (!p->enabled)
        return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (elapsed_ns(&p->last, &now) < REDRAW_NS)
        return;
    p->last = now;
    char line[128];
    size_t n = render(line, sizeof line, p->label, done, total);
    if (n >= sizeof line)
        n = sizeof line - 1;
    fprintf(stderr, "\r%s", line);
    for (size_t i = n; i < p->drawn; i++)
        fputc(' ', stderr);
    p->drawn = n > p->drawn ? n : p->drawn;
    fflush(stderr);
}

void cli_progress_clear(cli_progress *p)
{
    if (!p->drawn)
        return;
    fputc('\r', stderr);
    for (size_t i = 0; i < p->drawn; i++)
        fputc(' ', stderr);
    fputc('\r', stderr);
    fflush(stderr);
    p->drawn = 0;
}
