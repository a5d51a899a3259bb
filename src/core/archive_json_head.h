/*
 * The head of `convert --to json`'s document written by the streaming
 * writer (archive_json_head.c), byte for byte as json-c prints it, when it
 * can be. Internal; not installed.
 */
#ifndef TROWEL_ARCHIVE_JSON_HEAD_H
#define TROWEL_ARCHIVE_JSON_HEAD_H

#include "json_write.h"

/* True when a's head is known to print here exactly as json-c prints it
 * (no grouped or repeated keys, no doubles, all text valid UTF-8). */
bool trowel_archive_json_head_streams(const trowel_archive *a);
/* Its members ("file" to "entries"), inside the document's open object. */
void trowel_archive_json_head(const trowel_archive *a, trowel_json_writer *w);

#endif
