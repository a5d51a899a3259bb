/*
 * What the trowel commands share: the command table entry each cmd_*.c
 * exports, the session (context, warnings, progress) a command runs in,
 * and small helpers for opening inputs and reporting failures.
 * The commands use only the public API (<trowel/trowel.h>).
 */
#ifndef TROWEL_CLI_H
#define TROWEL_CLI_H

#include "args.h"
#include "output.h"

#include <trowel/trowel.h>

typedef struct cli_session {
    trowel_ctx *ctx;
    const char *verb;
    bool quiet;
    bool verbose;
    bool silent;           /* drop the library's warnings (a quiet probe) */
    const char *file;      /* the file warnings name; NULL: none */
    /* Messages about s->file (warnings, failed entries, verify problems):
     * how many were printed, and how many held back for one summary line
     * (cli_admit_message). */
    size_t messages_shown;
    size_t messages_hidden;
    /* The last held-back warning about the whole file (no entry named):
     * often the format's own summary, so the summary line shows it. */
    trowel_error last_file_warning;
    bool has_last_file_warning;
    /* When set, every warning of the library is also handed here, shown or
     * not: --json output keeps the full list (cli_keep_warnings). */
    void (*keep_warning)(void *user, const trowel_error *w);
    void *keep_warning_user;
    cli_progress progress; /* user pointer of the progress callback */
    /* Standard output on a terminal without --force: the bytes are held
     * here and shown only if they turn out to be text (cli_close_output). */
    trowel_sink *held_stdout;
} cli_session;

typedef struct cli_command {
    const char *name;
    const char *synopsis;    /* usage after "trowel " */
    const char *summary;     /* one line for 'trowel --help'; NULL: hidden */
    const char *description; /* paragraphs for 'trowel VERB --help' */
    const cli_option *options;
    /* Optional: more help after the options (lists taken from the library). */
    void (*more_help)(FILE *f);
    /* Runs with parsed arguments in an open session; returns the exit status. */
    int (*run)(const cli_args *args, cli_session *s);
} cli_command;

extern const cli_command cli_cmd_formats;
extern const cli_command cli_cmd_info;
extern const cli_command cli_cmd_list;
extern const cli_command cli_cmd_extract;
extern const cli_command cli_cmd_create;
extern const cli_command cli_cmd_verify;
extern const cli_command cli_cmd_convert;
extern const cli_command cli_cmd_compress;
extern const cli_command cli_cmd_decompress;
extern const cli_command cli_cmd_completion;
extern const cli_command cli_cmd_mount;
extern const cli_command cli_cmd_umount;
extern const cli_command cli_cmd_view;
extern const cli_command cli_cmd_scan;

/* The libfuse version trowel mount was built with, or NULL when it was
 * built without libfuse3 (cmd_mount.c). */
const char *cli_mount_fuse_version(void);

/* Every command, in the order help lists them (main.c). */
extern const cli_command *const cli_commands[];
extern const size_t cli_command_count;

/* --------------------------------------------------------------- session */

/* Makes the context, applies --mem-limit and -q. Returns 0 or an exit
 * status (after printing why). */
int cli_session_open(cli_session *s, const char *verb, const cli_args *args);
void cli_session_close(cli_session *s);
/* Installs the progress bar (drawn only on a terminal and without -q). */
void cli_session_progress(cli_session *s);

/* Prints the context's last error for file and returns the exit status it
 * calls for. With entry non-NULL, names it when the error does not, and the
 * line is one of the file's messages (cli_admit_message); without, it is a
 * summary: the count of held-back messages is printed first. */
int cli_report(cli_session *s, const char *file, const char *entry);

/* How many messages about one file are printed before the rest are only
 * counted: a damaged archive gives one summary line, not one per entry. */
#define CLI_MESSAGES_SHOWN 5
/* Every per-entry message (a warning, an entry that failed, a verify
 * problem) asks here first: true to print it. -v prints all, -q none, else
 * the first CLI_MESSAGES_SHOWN; those not printed are counted. */
bool cli_admit_message(cli_session *s);
/* "FILE: N more messages not shown (-v shows them all)" when some were held
 * back, after the last held-back warning about the whole file (without
 * -q); then counts afresh. Called when a file is done. */
void cli_summarise_messages(cli_session *s);

/* --------------------------------------------------------------- helpers */

/* Checks the operand count; prints a usage error and returns 2 if it is out
 * of [min, max] (max 0: no upper bound). what names the operand. */
int cli_need_operands(const cli_session *s, const cli_args *args, size_t min, size_t max,
                      const char *what);
/* -t/--format: the forced format, or NULL to detect. Returns 0 or 2. */
int cli_forced_format(const cli_session *s, const cli_args *args, const trowel_format **out);
/* A format by id; unknown ids are a usage error listing the known ones. */
int cli_find_format(const char *verb, const char *id, const trowel_format **out);

#define CLI_STDIN_NAME "(standard input)"
#define CLI_STDOUT_NAME "(standard output)"

/* The name messages use for a file operand: "(standard input)" for "-". */
const char *cli_display_name(const char *path);
bool cli_is_stdin(const char *path);

/* An opened file and its archive. */
typedef struct cli_opened {
    trowel_input *in;
    trowel_archive *a;
    cli_session *s; /* closing summarises the file's messages */
} cli_opened;

/* Opens path ("-": standard input, read whole within the memory limit) and
 * its archive (fmt NULL: detect). Reports failures itself
 * and returns 0 or an exit status. */
int cli_open_archive(cli_session *s, const char *path, const trowel_format *fmt,
                     cli_opened *out);
/* The same for reading the entries one after the other (extract):
 * trowel_archive_open_in_order. */
int cli_open_archive_in_order(cli_session *s, const char *path, const trowel_format *fmt,
                              cli_opened *out);
void cli_close_archive(cli_opened *o);

/* --names LIST and extract's reading options (-O, --raw), applied to an
 * opened archive. Formats without hashed names make --names a usage error.
 * Returns 0 or an exit status after printing why. */
int cli_apply_names(cli_session *s, const char *path, trowel_archive *a, const char *list);
int cli_apply_read_options(cli_session *s, const char *path, trowel_archive *a,
                           const cli_args *args);

/* Opens an output: a file sink for path, or stdout for NULL or "-". On a
 * terminal, without force, standard output is held until cli_close_output,
 * which shows it only when it is text: binary data is refused there. */
int cli_open_output(cli_session *s, const char *path, bool force, trowel_sink **out);
/* Finishes the sink, or discards it when status is not OK. Returns the
 * exit status for the pair (reporting a failure to finish). */
int cli_close_output(cli_session *s, trowel_sink *sink, int status, const char *path);

/* The next space-separated word of *s (advanced past it); false at the end. */
bool cli_next_word(const char **s, const char **word, size_t *len);
/* True when list (space separated) holds the word of len bytes. */
bool cli_word_in_list(const char *list, const char *word, size_t len);
/* True for "json" and every target some format converts to. */
bool cli_known_target(const char *target);
/* Prints those targets, each once, "json" first, sep between them. */
void cli_list_targets(FILE *f, const char *sep);

/* Which of a format's -O options to show. */
typedef enum cli_option_kind {
    CLI_READ_OPTIONS,
    CLI_CONVERT_OPTIONS,
    CLI_CREATE_OPTIONS /* the rows whose targets is "create" */
} cli_option_kind;
/* True when the option row is of that kind. */
bool cli_option_is(const trowel_option_info *o, cli_option_kind kind);
/* True when the format has options of that kind. */
bool cli_format_has_options(const trowel_format *f, cli_option_kind kind);
/* Prints them, one "KEY=VALUE: help (targets)" line each, the first after
 * first (a label), the others after indent. */
void cli_print_format_options(FILE *f, const trowel_format *fmt, cli_option_kind kind,
                              const char *first, const char *indent);
/* "FORMAT, FORMAT:" and their options, for every list of such options
 * (formats with the same list share a paragraph). */
void cli_print_all_options(FILE *f, cli_option_kind kind);

/* Reads all of fd (named name in errors) into memory, NUL-terminated,
 * refusing more than the session's memory limit. Returns 0 or an exit
 * status after printing why; the caller frees *data. */
int cli_read_all(cli_session *s, int fd, const char *name, char **data, size_t *size);
/* The same for a file by path. */
int cli_read_file(cli_session *s, const char *path, char **data, size_t *size);

/* True when path names the same file (device and inode) as other; false
 * when either is NULL, "-" or missing. Outputs must never replace inputs. */
bool cli_same_file(const char *path, const char *other);
/* Reports "OUT: refusing to write over the input INPUT"; returns 1. */
int cli_refuse_overwrite_input(cli_session *s, const char *out, const char *input);

/* Prints one JSON text and a newline on stdout. */
void cli_print_json_text(const char *json);

#endif
