/*
 * A streaming JSON writer: values go to a sink as they are written, through
 * a small buffer, so no document is built in memory. Its layout is json-c's
 * JSON_C_TO_STRING_PRETTY | SPACED | NOSLASHESCAPE, byte for byte (two
 * spaces an indent, `"key": value`, an empty array as "[\n<indent>]"), so
 * that a part of a document written here reads exactly as json-c would
 * have printed it. Internal; not installed.
 *
 * Usage: trowel_jw_init, then begin/end object and array, key before each
 * member of an object, the scalar writers for values; trowel_jw_finish
 * flushes and gives the first failure of the sink (later calls after a
 * failure do nothing).
 */
#ifndef TROWEL_JSON_WRITE_H
#define TROWEL_JSON_WRITE_H

#include "core.h"

#define TROWEL_JW_MAX_DEPTH 64
/* Twice a file sink's buffer (256 KiB): what a flush writes, nearly a full
 * buffer, is then more than the sink buffers, and goes straight through
 * instead of being copied into it. */
#define TROWEL_JW_BUFFER ((size_t)1 << 19)

/* Holds its buffer: allocate one (trowel_mem_new), never on the stack. */
typedef struct trowel_json_writer {
    trowel_sink *out;
    trowel_status s;
    unsigned depth;                         /* open objects and arrays */
    bool is_array[TROWEL_JW_MAX_DEPTH + 1]; /* per level: an array, else an object */
    bool has_items[TROWEL_JW_MAX_DEPTH + 1];
    bool after_key; /* a key was written: the value follows on its line */
    size_t used;
    char buf[TROWEL_JW_BUFFER];
} trowel_json_writer;

/* A writer at the top level of a document. */
void trowel_jw_init(trowel_json_writer *w, trowel_sink *out);
/* A writer that goes on inside an object already open at level 0 (the
 * rest of a document json-c printed, its closing "\n}" left off): has_items
 * tells whether that object printed members already. */
void trowel_jw_init_in_object(trowel_json_writer *w, trowel_sink *out, bool has_items);

void trowel_jw_begin_object(trowel_json_writer *w);
void trowel_jw_end_object(trowel_json_writer *w);
void trowel_jw_begin_array(trowel_json_writer *w);
void trowel_jw_end_array(trowel_json_writer *w);
/* The next member's key (inside an object). */
void trowel_jw_key(trowel_json_writer *w, const char *key);
/* The same for a key of len bytes known to need no escape (no byte below
 * 0x20, no '"', no '\\': a literal such as "size"); TROWEL_JW_KEY(w, "size")
 * passes a literal's length. */
void trowel_jw_key_plain(trowel_json_writer *w, const char *key, size_t len);
#define TROWEL_JW_KEY(w, literal) trowel_jw_key_plain((w), "" literal, sizeof(literal) - 1)
/* A member "key": v at once, key as for trowel_jw_key_plain. */
void trowel_jw_member_uint(trowel_json_writer *w, const char *key, size_t len, uint64_t v);
#define TROWEL_JW_MEMBER_UINT(w, literal, v) \
    trowel_jw_member_uint((w), "" literal, sizeof(literal) - 1, (v))
void trowel_jw_string(trowel_json_writer *w, const char *s);
/* len bytes as a JSON string (escaped as json-c escapes them). */
void trowel_jw_string_n(trowel_json_writer *w, const char *s, size_t len);
void trowel_jw_uint(trowel_json_writer *w, uint64_t v);
void trowel_jw_int(trowel_json_writer *w, int64_t v);
void trowel_jw_bool(trowel_json_writer *w, bool v);
void trowel_jw_null(trowel_json_writer *w);
/* len bytes of lowercase hex digits for data as one JSON string. */
void trowel_jw_hex_string(trowel_json_writer *w, const uint8_t *data, size_t len);
/* Writes out what is buffered; the first failure of the sink, or of the
 * writer's use (nesting too deep: TROWEL_ERR_LIMIT, reported on ctx). */
trowel_status trowel_jw_finish(trowel_json_writer *w, trowel_ctx *ctx);

#endif
