/*
 * The streaming JSON writer of json_write.h. The layout rules are json-c's
 * pretty printer's (checked against json-c itself in
 * tests/unit/test_json_stream.c): a member starts on a new line indented
 * two spaces a level; "[" is followed by a newline even when the array is
 * empty, "{" is not; a closing bracket gets its own line, indented to its
 * opening's level, after a newline only when the container had items.
 */
#include "json_write.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void flush(trowel_json_writer *w)
{
    if (w->s == TROWEL_OK && w->used)
        w->s = trowel_sink_write(w->out, w->buf, w->used);
    w->used = 0;
}

static void put(trowel_json_writer *w, const char *p, size_t n)
{
    if (w->s != TROWEL_OK)
        return;
    if (n > sizeof w->buf - w->used) {
        flush(w);
        if (n > sizeof w->buf) { /* too big to buffer: straight through */
            if (w->s == TROWEL_OK)
                w->s = trowel_sink_write(w->out, p, n);
            return;
        }
    }
    memcpy(w->buf + w->used, p, n);
    w->used += n;
}

static void put_c(trowel_json_writer *w, char c)
{
    if (w->used == sizeof w->buf)
        flush(w);
    if (w->s == TROWEL_OK)
        w->buf[w->used++] = c;
}

/* Room for n more bytes in the buffer (flushing it first if need be), or
 * NULL when n does not fit in it at all or the writer has failed. */
static inline char *room(trowel_json_writer *w, size_t n)
{
    if (sizeof w->buf - w->used < n)
        flush(w);
    return w->s == TROWEL_OK && n <= sizeof w->buf ? w->buf + w->used : NULL;
}

static const char spaces[2 * TROWEL_JW_MAX_DEPTH + 1] =
    "                                                                "
    "                                                                ";

static void indent(trowel_json_writer *w, unsigned level)
{
    put(w, spaces, (size_t)level * 2); /* level <= TROWEL_JW_MAX_DEPTH */
}

void trowel_jw_init(trowel_json_writer *w, trowel_sink *out)
{
    w->out = out;
    w->s = TROWEL_OK;
    w->depth = 0;
    w->is_array[0] = false;
    w->has_items[0] = false;
    w->after_key = true; /* the top-level value needs no separator */
    w->used = 0;
}

void trowel_jw_init_in_object(trowel_json_writer *w, trowel_sink *out, bool has_items)
{
    trowel_jw_init(w, out);
    w->depth = 1;
    w->is_array[1] = false;
    w->has_items[1] = has_items;
    w->after_key = false;
}

/* What comes before a value: nothing after a key; in an array, the
 * separator and the indent of a new item. */
static void before_value(trowel_json_writer *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth && w->is_array[w->depth]) {
        if (w->has_items[w->depth])
            put(w, ",\n", 2);
        w->has_items[w->depth] = true;
        indent(w, w->depth);
    }
}

static void open_container(trowel_json_writer *w, bool array)
{
    before_value(w);
    if (w->depth == TROWEL_JW_MAX_DEPTH) {
        if (w->s == TROWEL_OK)
            w->s = TROWEL_ERR_LIMIT;
        return;
    }
    w->depth++;
    w->is_array[w->depth] = array;
    w->has_items[w->depth] = false;
    put(w, array ? "[\n" : "{", array ? 2 : 1);
}

static void close_container(trowel_json_writer *w, char bracket)
{
    if (!w->depth)
        return;
    if (w->has_items[w->depth])
        put_c(w, '\n');
    w->depth--;
    indent(w, w->depth);
    put_c(w, bracket);
}

void trowel_jw_begin_object(trowel_json_writer *w) { open_container(w, false); }
void trowel_jw_end_object(trowel_json_writer *w) { close_container(w, '}'); }
void trowel_jw_begin_array(trowel_json_writer *w) { open_container(w, true); }
void trowel_jw_end_array(trowel_json_writer *w) { close_container(w, ']'); }

static void escaped(trowel_json_writer *w, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    put_c(w, '"');
    size_t run = 0; /* bytes that need no escape, written together */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(w, s + run, i - run);
        run = i + 1;
        char e[7] = {'\\', 0};
        size_t n = 2;
        switch (c) {
        case '\b': e[1] = 'b'; break;
        case '\n': e[1] = 'n'; break;
        case '\r': e[1] = 'r'; break;
        case '\t': e[1] = 't'; break;
        case '\f': e[1] = 'f'; break;
        case '"': e[1] = '"'; break;
        case '\\': e[1] = '\\'; break;
        default:
            memcpy(e + 1, "u00", 3);
            e[4] = hex[c >> 4];
            e[5] = hex[c & 15];
            n = 6;
        }
        put(w, e, n);
    }
    put(w, s + run, len - run);
    put_c(w, '"');
}

/* True when s needs no escape in JSON. */
static bool plain(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == '"' || c == '\\')
            return false;
    }
    return true;
}

void trowel_jw_key(trowel_json_writer *w, const char *key)
{
    size_t len = strlen(key), ind = (size_t)w->depth * 2;
    bool more = w->has_items[w->depth];
    w->has_items[w->depth] = true;
    w->after_key = true;
    char *p = plain(key, len) ? room(w, len + ind + 6) : NULL;
    if (!p) { /* the general way: escapes, or longer than the buffer */
        if (more)
            put_c(w, ',');
        put_c(w, '\n');
        indent(w, w->depth);
        escaped(w, key, len);
        put(w, ": ", 2);
        return;
    }
    char *start = p;
    if (more)
        *p++ = ',';
    *p++ = '\n';
    memcpy(p, spaces, ind);
    p += ind;
    *p++ = '"';
    memcpy(p, key, len);
    p += len;
    memcpy(p, "\": ", 3);
    w->used += (size_t)(p + 3 - start);
}

void trowel_jw_string_n(trowel_json_writer *w, const char *s, size_t len)
{
    before_value(w);
    char *p = len < 256 && plain(s, len) ? room(w, len + 2) : NULL;
    if (!p) {
        escaped(w, s, len);
        return;
    }
    p[0] = '"';
    memcpy(p + 1, s, len);
    p[len + 1] = '"';
    w->used += len + 2;
}

void trowel_jw_string(trowel_json_writer *w, const char *s) { trowel_jw_string_n(w, s, strlen(s)); }

void trowel_jw_uint(trowel_json_writer *w, uint64_t v)
{
    before_value(w);
    char digits[20];
    size_t n = 0;
    do {
        digits[sizeof digits - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char *p = room(w, n);
    if (p) {
        memcpy(p, digits + sizeof digits - n, n);
        w->used += n;
    }
}

void trowel_jw_int(trowel_json_writer *w, int64_t v)
{
    if (v >= 0) {
        trowel_jw_uint(w, (uint64_t)v);
        return;
    }
    before_value(w);
    char text[24];
    int n = snprintf(text, sizeof text, "%" PRId64, v);
    put(w, text, (size_t)n);
}

void trowel_jw_bool(trowel_json_writer *w, bool v)
{
    before_value(w);
    put(w, v ? "true" : "false", v ? 4 : 5);
}

void trowel_jw_null(trowel_json_writer *w)
{
    before_value(w);
    put(w, "null", 4);
}

void trowel_jw_hex_string(trowel_json_writer *w, const uint8_t *data, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    before_value(w);
    put_c(w, '"');
    for (size_t i = 0; i < len; i++) {
        char pair[2] = {digits[data[i] >> 4], digits[data[i] & 15]};
        put(w, pair, 2);
    }
    put_c(w, '"');
}

trowel_status trowel_jw_finish(trowel_json_writer *w, trowel_ctx *ctx)
{
    if (w->s == TROWEL_ERR_LIMIT)
        return trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                           "JSON nested deeper than %d levels", TROWEL_JW_MAX_DEPTH);
    flush(w);
    return w->s;
}
