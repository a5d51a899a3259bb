/*
 * Several files in one command: which operands are archives and which are
 * PATTERNs, a header per file, and patterns matched across the batch.
 *
 * The rule (list and extract): the first operand is always an archive; the
 * operands after it are archives too while they name existing files (or
 * are '-', standard input); the first that does not starts the PATTERNs,
 * and every operand from there on is a PATTERN. A PATTERN that is also the
 * name of an existing file can be written with a bracket ('[s]cene.vcd').
 */
#ifndef TROWEL_CLI_BATCH_H
#define TROWEL_CLI_BATCH_H

#include "cli.h"

#include <json-c/json.h>

/* The batch rule, as help texts state it. */
#define CLI_BATCH_RULE_HELP                                                      \
    "Several archives may be given: the first operand is an archive, and so\n"   \
    "is each next operand that names an existing file ('-': standard input);\n" \
    "the first that does not starts the PATTERNs, which apply to every\n"        \
    "archive. Write a PATTERN that is also a file's name with a bracket\n"       \
    "('[s]cene.vcd'). A PATTERN that matches nothing in any archive is an\n"    \
    "error; so is any archive that fails, and the others are still done."

/* How many leading operands are archives (at least one when there are
 * operands). */
size_t cli_batch_archive_count(const cli_args *args);

/* More than one '-' among the files is a usage error (standard input can
 * be read once). Returns 0 or 2. */
int cli_batch_check_stdin(const cli_session *s, const char *const *files, size_t n);

/* The operands of a command whose every operand is a FILE (info, verify):
 * at least one, -t FORMAT in *fmt (NULL: detect), '-' at most once.
 * Returns 0 or the exit status after printing why. */
int cli_batch_files(const cli_session *s, const cli_args *args, const trowel_format **fmt);

/* "==> FILE <==" before each file's text when there are several, with a
 * blank line between files (as head(1) does). */
void cli_batch_header(const char *path, size_t index, size_t count);

/* Shell patterns applied to the entries of every archive of a batch. */
typedef struct cli_patterns {
    const char *const *list;
    size_t count;
    bool *used; /* one per pattern: matched at least one entry somewhere */
} cli_patterns;

/* Returns 0 or an exit status (out of memory). */
int cli_patterns_init(cli_patterns *p, const char *const *list, size_t count);
void cli_patterns_free(cli_patterns *p);
/* True when the entry is wanted: no patterns, or one matches (marked used). */
bool cli_patterns_match(cli_patterns *p, const char *name);
/* Reports each pattern that matched no entry of any archive; file is the
 * archive named in the message when the batch has one, else NULL. When the
 * archive keeps unnamed entries (hashes) and --names was not given, the
 * message says how to recover names. Returns 0 or 1. */
int cli_patterns_report_unused(const cli_patterns *p, const char *file, bool unnamed_hint);

/* True when entries of the archive are name hashes until --names names them. */
bool cli_has_unnamed_entries(const trowel_archive *a);

/* --names LIST with a count on stderr (unless -q): "FILE: N of M names
 * recovered". Returns 0 or an exit status after printing why. */
int cli_recover_names(cli_session *s, const char *path, trowel_archive *a, const char *list);

/* ------------------------------------------------------------------ JSON */

/* The greater of two exit statuses. */
int cli_max_exit(int a, int b);
/* Prints o (pretty, as the library does) and a newline on stdout. */
void cli_print_json_object(json_object *o);
/* The same, then releases o; NULL prints nothing. */
void cli_print_json_and_put(json_object *o);
/* A new object: {"file": path, then o's keys} (o is released). */
json_object *cli_json_with_file(json_object *o, const char *path);
/* An error as {"status", "message", "entry"?, "offset"?}. */
json_object *cli_json_error(const trowel_error *e);
/* --json: every warning of the library from now on is also added to
 * warnings, as {"message", "entry"?, "offset"?} (NULL: stop). */
void cli_keep_warnings(cli_session *s, json_object *warnings);
/* Adds "warnings": [...] to o when any were kept (o stays as it was
 * otherwise). */
void cli_json_add_warnings(json_object *o, json_object *warnings);
/* {"file": path, "error": {...}} from the session's last error. */
json_object *cli_json_failure(const cli_session *s, const char *path);

#endif
