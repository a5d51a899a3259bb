/*
 * Identifying every file of a tree (trowel scan, and trowel info DIR).
 */
#ifndef TROWEL_CLI_SCAN_H
#define TROWEL_CLI_SCAN_H

#include "cli.h"

#include <json-c/json.h>

/* Scans path (a folder, walked; or one file): a line a file on stdout, or
 * an element a file added to array. Adds the number of files seen to
 * *files (files may be NULL). Returns 1 only when path does not exist. */
int cli_scan_operand(cli_session *s, const char *path, json_object *array, size_t *files);

#endif
