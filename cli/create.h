/*
 * create's sources and their nested archives (cmd_create.c, create_nested.c),
 * and the record of nested archives that 'extract -r --manifest' writes
 * (nested_manifest.c).
 *
 * 'extract -r' writes an archive entry X and its entries under X.d/. Such a
 * folder, met while create walks its PATHs, is never stored as plain files
 * (that would flatten the nested archive into the outer one): without -r it
 * is refused, with -r the archive X is rebuilt from it and stored under X.
 */
#ifndef TROWEL_CLI_CREATE_H
#define TROWEL_CLI_CREATE_H

#include "batch.h"

typedef struct owned_source {
    char *name; /* as stored in the archive */
    char *path; /* where the bytes are read from */
} owned_source;

typedef struct source_list {
    owned_source *items;
    size_t count, cap;
} source_list;

typedef struct cli_rebuilds cli_rebuilds; /* create_nested.c */

typedef struct create_job {
    cli_session *s;
    const char *dir;          /* -C DIR (or the X.d/ folder rebuilt), or NULL */
    source_list sources;      /* the files to store, in order */
    source_list nested;       /* -r: X (name as stored) and its X.d/ folder */
    bool recursive;           /* -r */
    cli_patterns *exclude;    /* --exclude, never NULL */
    cli_rebuilds *rebuilds;   /* -r: the temporary folder and the ASMs updated */
    const char *shown;        /* -v: the path of the archive rebuilt ("X/" as list -r), or "" */
} create_job;

int cli_source_add(source_list *l, char *name, char *path);
void cli_sources_free(source_list *l);

/* Every file under the folder fs_path into j->sources, named name/... (""
 * at the top), --exclude applied; X.d/ folders of nested archives go to
 * j->nested with -r and are refused without it. */
int cli_create_walk(create_job *j, const char *fs_path, const char *name);

/* True when the folder name (its last component) is NAME.d for a NAME with
 * an archive format's extension: what 'extract -r' writes. */
bool cli_is_nested_folder(const char *name);

/* -r: rebuilds each archive of j->nested from its folder, the entries in
 * the order its manifest gives (the record in level_manifest's "nested",
 * else the manifest of the archive X beside the folder), updating a
 * sibling ASM whose container is named after it; j->sources then reads X
 * from the rebuilt file. level_manifest may be NULL. */
int cli_create_rebuild_nested(create_job *j, json_object *level_manifest);

/* The state of a -r run, created on first use; the temporary files go with
 * it. Prints what changed in each ASM rebuilt (after the final build). */
void cli_rebuilds_report(cli_session *s, const cli_rebuilds *r, const char *out);
void cli_rebuilds_free(cli_rebuilds *r);

/* An ASM's containers as its JSON ("asm" of 'convert --to json'), to
 * compare before and after an update; NULL if it does not read. */
json_object *cli_asm_snapshot(cli_session *s, const char *path);
/* What changed between two snapshots of an ASM, as one line on stderr
 * (with -v, a line per changed container and primitive; nothing with -q).
 * shown names the file; stored_in (or NULL) the archive that stores the
 * updated copy; quiet_if_same: say nothing when nothing changed (unless
 * -v). */
void cli_asm_report_change(cli_session *s, const char *shown, const char *stored_in,
                           json_object *before, json_object *after, bool quiet_if_same);

/* The manifest of a (as trowel_archive_manifest); with recursive, it also
 * holds "nested": {ENTRY: manifest of that nested archive, ...} (and so on
 * down) for what create -r needs. *json is freed with free(). */
int cli_archive_manifest(cli_session *s, const char *path, trowel_archive *a, bool recursive,
                         char **json);

/* --files-from FILE ('-': standard input): its non-empty lines (a final
 * '\r' dropped) into *lines, pointing into *text; both freed with free(). */
int cli_read_lines(cli_session *s, const char *path, char **text, const char ***lines,
                   size_t *count);

#endif
