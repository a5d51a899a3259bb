/*
 * A pull (streaming) JSON reader over text in memory: the caller asks for
 * one token at a time and builds what it needs, so no document tree is
 * made. Strings are decoded into one buffer allocated on the context
 * (counted by its memory limit) and reused; numbers are left as text for
 * the caller to read. The grammar is RFC 8259's, strictly: anything else
 * (a trailing comma, a comment, a control byte in a string, text after the
 * value) fails with TROWEL_ERR_USAGE, "WHAT: not valid JSON at offset N:
 * what was expected". Internal; not installed.
 */
#ifndef TROWEL_JSON_PULL_H
#define TROWEL_JSON_PULL_H

#include "core.h"

#define TROWEL_JP_MAX_DEPTH 256

typedef enum trowel_jp_token {
    TROWEL_JP_ERROR,      /* trowel_jp_status says why (the context's error, in words) */
    TROWEL_JP_END,        /* the text is done (after one whole value) */
    TROWEL_JP_OBJECT,     /* { */
    TROWEL_JP_OBJECT_END, /* } */
    TROWEL_JP_ARRAY,      /* [ */
    TROWEL_JP_ARRAY_END,  /* ] */
    TROWEL_JP_KEY,        /* a member's key (in str), its ':' read */
    TROWEL_JP_STRING,     /* a string value (in str) */
    TROWEL_JP_NUMBER,     /* a number (its text at num, num_len bytes) */
    TROWEL_JP_TRUE,
    TROWEL_JP_FALSE,
    TROWEL_JP_NULL
} trowel_jp_token;

typedef struct trowel_json_pull {
    trowel_ctx *ctx;
    const char *what; /* names the text in messages ("asm JSON") */
    const char *text;
    size_t len, pos;
    unsigned depth;
    bool in_array[TROWEL_JP_MAX_DEPTH + 1];
    int state;     /* what may come next (json_pull.c) */
    size_t tok_at; /* offset of the last token */
    /* the last string or key, decoded, NUL-terminated (a NUL inside it
     * came from \u0000) */
    char *str;
    size_t str_len, str_cap;
    /* the last number */
    const char *num;
    size_t num_len;
    bool num_whole; /* no fraction, no exponent */
    trowel_status failed; /* why the last TROWEL_JP_ERROR came (TROWEL_OK before one) */
} trowel_json_pull;

void trowel_jp_init(trowel_json_pull *p, trowel_ctx *ctx, const char *what, const char *text,
                    size_t len);
/* Frees the string buffer. */
void trowel_jp_free(trowel_json_pull *p);
trowel_jp_token trowel_jp_next(trowel_json_pull *p);
/* Skips the rest of the value whose first token was tok (an object or
 * array up to its end; nothing for a scalar). */
trowel_status trowel_jp_skip(trowel_json_pull *p, trowel_jp_token tok);
/* Why the parser last returned TROWEL_JP_ERROR (a caller hands this on);
 * TROWEL_OK while there has been none. */
trowel_status trowel_jp_status(const trowel_json_pull *p);

/* The last number as a whole number: TROWEL_JP_WHOLE (in *out), or why it
 * is not one; a value above UINT64_MAX reads as UINT64_MAX. */
enum { TROWEL_JP_WHOLE, TROWEL_JP_NEGATIVE, TROWEL_JP_FRACTION };
int trowel_jp_uint(const trowel_json_pull *p, uint64_t *out);

/* The string value of the top-level object's member key, copied into
 * out (at most size - 1 bytes, NUL-terminated), read without building
 * anything and stopping at it: true when the text opens with an object
 * that has key with a string value. Errors are not reported. */
bool trowel_json_top_string(trowel_ctx *ctx, const char *text, size_t len, const char *key,
                            char *out, size_t size);

#endif
