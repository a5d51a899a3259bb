/*
 * The session a command runs in and the helpers the commands share
 * (see cli.h).
 */
#include "cli.h"
#include "suggest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STDOUT_NAME CLI_STDOUT_NAME

/* --------------------------------------------------------------- session */

static void on_warning(void *user, const trowel_error *w)
{
    cli_session *s = user;
    /* -q drops a warning about the whole file (such as "version 17 is
     * experimental") outright; those about entries are counted. */
    if (s->silent)
        return;
    if (s->keep_warning)
        s->keep_warning(s->keep_warning_user, w);
    if (s->quiet && !w->entry[0])
        return;
    if (!cli_admit_message(s)) {
        if (!w->entry[0]) {
            s->last_file_warning = *w;
            s->has_last_file_warning = true;
        }
        return;
    }
    cli_progress_clear(&s->progress);
    cli_print_warning(s->file, w);
}

bool cli_admit_message(cli_session *s)
{
    if (s->verbose)
        return true;
    if (!s->quiet && s->messages_shown < CLI_MESSAGES_SHOWN) {
        s->messages_shown++;
        return true;
    }
    s->messages_hidden++;
    return false;
}

void cli_summarise_messages(cli_session *s)
{
    size_t hidden = s->messages_hidden;
    bool more = s->messages_shown > 0;
    bool last = s->has_last_file_warning && !s->quiet;
    s->messages_shown = 0;
    s->messages_hidden = 0;
    s->has_last_file_warning = false;
    if (!hidden)
        return;
    cli_progress_clear(&s->progress);
    if (last) { /* e.g. "damaged image: 0 of its 51 scenes can be read" */
        cli_print_warning(s->file, &s->last_file_warning);
        if (!--hidden)
            return;
        more = true;
    }
    fputs(CLI_PROGRAM ": ", stderr);
    if (s->file) {
        cli_put_safe(stderr, s->file);
        fputs(": ", stderr);
    }
    fprintf(stderr, "%zu %smessage%s not shown (-v shows %s)\n", hidden, more ? "more " : "",
            hidden == 1 ? "" : "s", hidden == 1 ? "it" : "them all");
}

static void on_note(void *user, const trowel_error *n)
{
    cli_session *s = user;
    cli_progress_clear(&s->progress);
    cli_print_note(s->file, n);
}

int cli_session_open(cli_session *s, const char *verb, const cli_args *args)
{
    memset(s, 0, sizeof *s);
    s->verb = verb;
    s->quiet = cli_args_has(args, OPT_QUIET);
    s->verbose = cli_args_has(args, OPT_VERBOSE);
    uint64_t limit = 0;
    const char *text = cli_args_last(args, OPT_MEM_LIMIT);
    if (text && !cli_parse_size(text, &limit))
        return cli_usage_error(verb, "--mem-limit takes a byte count such as 512M, not '%s'",
                               text);
    unsigned long threads = 0;
    const char *threads_text = cli_args_last(args, OPT_THREADS);
    if (threads_text && !cli_parse_count(threads_text, 1024, &threads))
        return cli_usage_error(verb, "--threads takes a number from 0 to 1024, not '%s'",
                               threads_text);
    s->ctx = trowel_ctx_new();
    if (!s->ctx) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    if (text)
        trowel_ctx_set_mem_limit(s->ctx, limit);
    trowel_ctx_set_threads(s->ctx, (unsigned)threads);
    trowel_ctx_set_warning_handler(s->ctx, on_warning, s);
    if (s->verbose)
        trowel_ctx_set_note_handler(s->ctx, on_note, s);
    cli_progress_init(&s->progress, false);
    return CLI_EXIT_OK;
}

void cli_session_close(cli_session *s)
{
    cli_summarise_messages(s);
    cli_progress_clear(&s->progress);
    trowel_ctx_free(s->ctx);
    s->ctx = NULL;
}

void cli_session_progress(cli_session *s)
{
    cli_progress_init(&s->progress, !s->quiet);
    if (s->progress.enabled)
        trowel_ctx_set_progress_handler(s->ctx, cli_progress_handler, &s->progress);
}

int cli_report(cli_session *s, const char *file, const char *entry)
{
    trowel_error e = *trowel_ctx_last_error(s->ctx);
    if (entry && !cli_admit_message(s))
        return cli_status_exit(e.status == TROWEL_OK ? TROWEL_ERR_IO : e.status);
    if (!entry)
        cli_summarise_messages(s);
    cli_progress_clear(&s->progress);
    if (e.status == TROWEL_OK)
        e.status = TROWEL_ERR_IO; /* a failure with no detail still fails */
    if (entry && !e.entry[0])
        snprintf(e.entry, sizeof e.entry, "%s", entry);
    cli_print_error(file, &e);
    return cli_status_exit(e.status);
}

/* --------------------------------------------------------------- helpers */

int cli_need_operands(const cli_session *s, const cli_args *args, size_t min, size_t max,
                      const char *what)
{
    if (args->operand_count < min)
        return cli_usage_error(s->verb, "missing %s", what);
    if (max && args->operand_count > max)
        return cli_usage_error(s->verb, "too many operands (from '%s' on): expected %s",
                               args->operands[max], what);
    return CLI_EXIT_OK;
}

static void list_format_ids(FILE *f)
{
    for (size_t i = 0; i < trowel_format_count(); i++)
        fprintf(f, "%s%s", i ? ", " : "", trowel_format_id(trowel_format_at(i)));
}

int cli_find_format(const char *verb, const char *id, const trowel_format **out)
{
    *out = trowel_format_find(id);
    if (*out)
        return CLI_EXIT_OK;
    fprintf(stderr, CLI_PROGRAM ": %s: unknown format '", verb);
    cli_put_safe(stderr, id);
    fputs("' (known: ", stderr);
    list_format_ids(stderr);
    fputs(")\n", stderr);
    cli_suggest_format(stderr, id);
    fprintf(stderr, "Try '" CLI_PROGRAM " formats'.\n");
    return CLI_EXIT_USAGE;
}

int cli_forced_format(const cli_session *s, const cli_args *args, const trowel_format **out)
{
    *out = NULL;
    const char *id = cli_args_last(args, OPT_FORMAT);
    return id ? cli_find_format(s->verb, id, out) : CLI_EXIT_OK;
}

bool cli_is_stdin(const char *path)
{
    return strcmp(path, "-") == 0;
}

const char *cli_display_name(const char *path)
{
    return cli_is_stdin(path) ? CLI_STDIN_NAME : path;
}

static int open_archive(cli_session *s, const char *path, const trowel_format *fmt,
                        bool in_order, cli_opened *out)
{
    memset(out, 0, sizeof *out);
    const char *name = cli_display_name(path);
    cli_summarise_messages(s); /* of the file before */
    s->file = name;
    out->s = s;
    trowel_status st;
    if (cli_is_stdin(path)) /* read by the library, so the memory limit counts it */
        st = trowel_input_open_stream(s->ctx, STDIN_FILENO, name, &out->in);
    else
        st = trowel_input_open_file(s->ctx, path, &out->in);
    if (st == TROWEL_OK)
        st = in_order ? trowel_archive_open_in_order(s->ctx, out->in, fmt, &out->a)
                      : trowel_archive_open(s->ctx, out->in, fmt, &out->a);
    if (st == TROWEL_OK)
        return CLI_EXIT_OK;
    int rc = cli_report(s, name, NULL);
    cli_close_archive(out);
    return rc;
}

int cli_open_archive(cli_session *s, const char *path, const trowel_format *fmt,
                     cli_opened *out)
{
    return open_archive(s, path, fmt, false, out);
}

int cli_open_archive_in_order(cli_session *s, const char *path, const trowel_format *fmt,
                              cli_opened *out)
{
    return open_archive(s, path, fmt, true, out);
}

void cli_close_archive(cli_opened *o)
{
    if (o->s)
        cli_summarise_messages(o->s);
    trowel_archive_close(o->a);
    trowel_input_close(o->in);
    o->a = NULL;
    o->in = NULL;
}

static bool is_stdout(const char *path)
{
    return !path || strcmp(path, "-") == 0;
}

int cli_open_output(cli_session *s, const char *path, bool force, trowel_sink **out)
{
    trowel_status st;
    if (is_stdout(path) && !force && isatty(STDOUT_FILENO)) {
        st = trowel_sink_open_memory(s->ctx, out);
        s->held_stdout = st == TROWEL_OK ? *out : NULL;
    } else if (is_stdout(path)) {
        fflush(stdout);
        st = trowel_sink_open_fd(s->ctx, STDOUT_FILENO, STDOUT_NAME, out);
    } else {
        st = trowel_sink_open_file(s->ctx, path, force ? TROWEL_SINK_OVERWRITE : 0, out);
    }
    return st == TROWEL_OK ? CLI_EXIT_OK : cli_report(s, is_stdout(path) ? STDOUT_NAME : path, NULL);
}

/* Text: no NUL, no control character but tab, line and page breaks (an
 * escape sequence could drive the terminal). */
static bool is_text(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < size; i++)
        if (data[i] == 0 || data[i] == 0x7f || (data[i] < 0x20 && !strchr("\t\n\v\f\r", data[i])))
            return false;
    return true;
}

/* Shows the held output on the terminal, or refuses it when binary. */
static int release_held(cli_session *s, trowel_sink *sink, int status)
{
    s->held_stdout = NULL;
    size_t size = 0;
    const uint8_t *data = trowel_sink_data(sink, &size);
    if (!is_text(data, size)) {
        if (status == CLI_EXIT_OK) { /* else the failure was reported */
            cli_progress_clear(&s->progress);
            cli_error("%s: refusing to write binary data to a terminal "
                      "(redirect it, or use --force)", STDOUT_NAME);
            status = CLI_EXIT_FAILURE;
        }
    } else if (size) {
        fwrite(data, 1, size, stdout);
    }
    trowel_sink_discard(sink);
    return status;
}

int cli_close_output(cli_session *s, trowel_sink *sink, int status, const char *path)
{
    if (sink && sink == s->held_stdout)
        return release_held(s, sink, status);
    if (status != CLI_EXIT_OK) {
        trowel_sink_discard(sink);
        return status;
    }
    if (trowel_sink_finish(sink) == TROWEL_OK)
        return CLI_EXIT_OK;
    return cli_report(s, is_stdout(path) ? STDOUT_NAME : path, NULL);
}

bool cli_same_file(const char *path, const char *other)
{
    struct stat a, b;
    if (is_stdout(path) || is_stdout(other))
        return false;
    return stat(path, &a) == 0 && stat(other, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

int cli_refuse_overwrite_input(cli_session *s, const char *out, const char *input)
{
    cli_progress_clear(&s->progress);
    fprintf(stderr, CLI_PROGRAM ": ");
    cli_put_safe(stderr, out);
    fprintf(stderr, ": refusing to write over the input ");
    cli_put_safe(stderr, input);
    fputc('\n', stderr);
    return CLI_EXIT_FAILURE;
}

void cli_print_json_text(const char *json)
{
    fputs(json, stdout);
    fputc('\n', stdout);
}

bool cli_next_word(const char **s, const char **word, size_t *len)
{
    const char *p = *s + strspn(*s, " \t\n");
    size_t n = strcspn(p, " \t\n");
    *s = p + n;
    *word = p;
    *len = n;
    return n > 0;
}

bool cli_word_in_list(const char *list, const char *word, size_t len)
{
    const char *w;
    size_t n;
    while (cli_next_word(&list, &w, &n))
        if (n == len && memcmp(w, word, n) == 0)
            return true;
    return false;
}

bool cli_known_target(const char *target)
{
    if (strcmp(target, "json") == 0)
        return true;
    for (size_t i = 0; i < trowel_format_count(); i++)
        if (cli_word_in_list(trowel_format_convert_targets(trowel_format_at(i)), target,
                             strlen(target)))
            return true;
    return false;
}

/* True when the target appeared before: "json", an earlier format's list,
 * or earlier in this format's list (before pos). */
static bool target_seen(size_t format, const char *pos, const char *w, size_t n)
{
    if (n == 4 && memcmp(w, "json", 4) == 0)
        return true;
    for (size_t i = 0; i < format; i++)
        if (cli_word_in_list(trowel_format_convert_targets(trowel_format_at(i)), w, n))
            return true;
    const char *list = trowel_format_convert_targets(trowel_format_at(format));
    const char *x;
    size_t m;
    while (cli_next_word(&list, &x, &m) && x < pos)
        if (m == n && memcmp(x, w, n) == 0)
            return true;
    return false;
}

void cli_list_targets(FILE *f, const char *sep)
{
    fputs("json", f);
    for (size_t i = 0; i < trowel_format_count(); i++) {
        const char *list = trowel_format_convert_targets(trowel_format_at(i));
        const char *w;
        size_t n;
        while (cli_next_word(&list, &w, &n))
            if (!target_seen(i, w, w, n))
                fprintf(f, "%s%.*s", sep, (int)n, w);
    }
}

/* ------------------------------------------------------- format options */

bool cli_option_is(const trowel_option_info *o, cli_option_kind kind)
{
    bool create = o->targets && strcmp(o->targets, "create") == 0;
    switch (kind) {
    case CLI_READ_OPTIONS: return o->targets == NULL;
    case CLI_CREATE_OPTIONS: return create;
    default: return o->targets && !create;
    }
}

static bool kind_matches(const trowel_option_info *o, cli_option_kind kind)
{
    return cli_option_is(o, kind);
}

bool cli_format_has_options(const trowel_format *f, cli_option_kind kind)
{
    const trowel_option_info *o;
    for (size_t i = 0; (o = trowel_format_option_at(f, i)) != NULL; i++)
        if (kind_matches(o, kind))
            return true;
    return false;
}

void cli_print_format_options(FILE *f, const trowel_format *fmt, cli_option_kind kind,
                              const char *first, const char *indent)
{
    const trowel_option_info *o;
    for (size_t i = 0; (o = trowel_format_option_at(fmt, i)) != NULL; i++) {
        if (!kind_matches(o, kind))
            continue;
        fprintf(f, "%s%s=%s: %s", first, o->key, o->value, o->help);
        first = indent;
        if (kind == CLI_CONVERT_OPTIONS) { /* "png gif" prints as (png,gif) */
            fputs(" (", f);
            for (const char *t = o->targets; *t; t++)
                fputc(*t == ' ' ? ',' : *t, f);
            fputc(')', f);
        }
        fputc('\n', f);
    }
}

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* True when two formats have the same options of that kind. */
static bool same_options(const trowel_format *a, const trowel_format *b, cli_option_kind kind)
{
    const trowel_option_info *x = NULL, *y = NULL;
    for (size_t i = 0, j = 0;; i++, j++) {
        while ((x = trowel_format_option_at(a, i)) && !kind_matches(x, kind))
            i++;
        while ((y = trowel_format_option_at(b, j)) && !kind_matches(y, kind))
            j++;
        if (!x || !y)
            return x == y;
        if (!same_text(x->key, y->key) || !same_text(x->value, y->value) ||
            !same_text(x->help, y->help) || !same_text(x->targets, y->targets))
            return false;
    }
}

void cli_print_all_options(FILE *f, cli_option_kind kind)
{
    size_t n = trowel_format_count();
    for (size_t i = 0; i < n; i++) {
        const trowel_format *fmt = trowel_format_at(i);
        bool shown = !cli_format_has_options(fmt, kind);
        for (size_t k = 0; k < i && !shown; k++)
            shown = same_options(trowel_format_at(k), fmt, kind);
        if (shown)
            continue;
        fprintf(f, "  %s", trowel_format_id(fmt));
        for (size_t k = i + 1; k < n; k++)
            if (same_options(trowel_format_at(k), fmt, kind))
                fprintf(f, ", %s", trowel_format_id(trowel_format_at(k)));
        fputs(":\n", f);
        cli_print_format_options(f, fmt, kind, "    ", "    ");
    }
}

/* ---------------------------------------------------------------- reading */

static int read_error(const char *name, const char *what)
{
    fprintf(stderr, CLI_PROGRAM ": ");
    cli_put_safe(stderr, name);
    fprintf(stderr, ": %s\n", what);
    return CLI_EXIT_FAILURE;
}

static int too_large(const char *name, uint64_t limit)
{
    char why[160];
    snprintf(why, sizeof why, "larger than the memory limit (%" PRIu64 " bytes; see --mem-limit)",
             limit);
    return read_error(name, why);
}

/* Makes room for more bytes after len in *buf: at most limit + 2, enough to
 * notice an input one byte over the limit. */
static int grow_buffer(char **buf, size_t *cap, size_t len, uint64_t limit, const char *name)
{
    if (len + 1 < *cap)
        return CLI_EXIT_OK;
    uint64_t most = limit > SIZE_MAX - 2 ? SIZE_MAX : limit + 2;
    size_t ncap = *cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2;
    if ((uint64_t)ncap > most)
        ncap = (size_t)most;
    if (ncap <= *cap)
        return too_large(name, limit);
    char *p = realloc(*buf, ncap);
    if (!p)
        return read_error(name, "out of memory");
    *buf = p;
    *cap = ncap;
    return CLI_EXIT_OK;
}

/* One read into the buffer; 1 at the end, 0 after bytes, or an exit status
 * (negated) on failure. */
static int read_more(int fd, char *buf, size_t cap, size_t *len, const char *name)
{
    ssize_t n;
    do
        n = read(fd, buf + *len, cap - 1 - *len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -read_error(name, strerror(errno));
    *len += (size_t)n;
    return n == 0;
}

int cli_read_all(cli_session *s, int fd, const char *name, char **data, size_t *size)
{
    uint64_t limit = trowel_ctx_mem_limit(s->ctx);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return read_error(name, "out of memory");
    int r = 0;
    while (r == 0) {
        r = -grow_buffer(&buf, &cap, len, limit, name);
        if (r == 0)
            r = read_more(fd, buf, cap, &len, name);
        if (r == 0 && len > limit)
            r = -too_large(name, limit);
    }
    if (r < 0) {
        free(buf);
        return -r;
    }
    buf[len] = '\0';
    *data = buf;
    *size = len;
    return CLI_EXIT_OK;
}

int cli_read_file(cli_session *s, const char *path, char **data, size_t *size)
{
    /* An option names this file: a FIFO or device there is refused, never
     * waited on (opened non-blocking, then checked). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        char why[300];
        snprintf(why, sizeof why, "cannot open: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return read_error(path, why);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return read_error(path, S_ISDIR(st.st_mode) ? "is a folder, not a file"
                                                    : "not a regular file (a FIFO or a device)");
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int rc = cli_read_all(s, fd, path, data, size);
    close(fd);
    return rc;
}

/* ------------------------------------------------- reading an archive */

int cli_apply_names(cli_session *s, const char *path, trowel_archive *a, const char *list)
{
    if (!list)
        return CLI_EXIT_OK;
    const trowel_format *f = trowel_archive_format(a);
    if (!(trowel_format_caps(f) & TROWEL_CAP_NAMES))
        return cli_usage_error(s->verb, "%s does not take --names", trowel_format_id(f));
    if (trowel_archive_set_names(a, list) != TROWEL_OK)
        return cli_report(s, path, NULL);
    return CLI_EXIT_OK;
}

int cli_apply_read_options(cli_session *s, const char *path, trowel_archive *a,
                           const cli_args *args)
{
    /* Room for every option given plus "raw=1" from --raw. */
    const char **opts = calloc(args->opt_count + 1, sizeof *opts);
    if (!opts) {
        cli_error("out of memory");
        return CLI_EXIT_FAILURE;
    }
    size_t n = 0;
    for (size_t i = 0; i < args->opt_count; i++)
        if (args->opts[i].id == OPT_OPTION)
            opts[n++] = args->opts[i].value;
    if (cli_args_has(args, OPT_RAW))
        opts[n++] = "raw=1";
    int rc = CLI_EXIT_OK;
    if (n && trowel_archive_set_options(a, opts, n) != TROWEL_OK) {
        rc = cli_report(s, path, NULL);
        if (rc == CLI_EXIT_USAGE)
            cli_suggest_options(stderr, trowel_archive_format(a), CLI_READ_OPTIONS, opts, n);
    }
    free(opts);
    return rc;
}
