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
        bool more = w->has_items[w->depth];
        w->has_items[w->depth] = true;
        size_t ind = (size_t)w->depth * 2;
        char *p = ind <= 32 ? room(w, 2 + 32) : NULL; /* as in member_start */
        if (!p) {
            if (more)
                put(w, ",\n", 2);
            indent(w, w->depth);
            return;
        }
        if (more) {
            p[0] = ',';
            p[1] = '\n';
            p += 2;
        }
        memcpy(p, spaces, 32);
        w->used = (size_t)(p + ind - w->buf);
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

/* True when s needs no escape in JSON: no byte below 0x20, no '"', no
 * '\\'. Eight bytes at a time (every key and string of a large document
 * passes here): for a word x, (x - 0x20..20) & ~x has a top bit set when a
 * byte is below 0x20, and y = x ^ 0x22..22 has a zero byte, found the same
 * way with 0x01..01, when one is '"' (0x5C..5C for '\\'); each test is exact
 * as to whether there is such a byte. */
static inline bool plain_word(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101u, tops = 0x8080808080808080u;
    uint64_t q = x ^ (0x22 * ones), b = x ^ (0x5C * ones);
    return !(((x - 0x20 * ones) & ~x & tops) | ((q - ones) & ~q & tops) |
             ((b - ones) & ~b & tops));
}

static bool plain(const char *s, size_t len)
{
    size_t i = 0;
    for (; len - i >= 8; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if (!plain_word(x))
            return false;
    }
    uint64_t tail = 0x4141414141414141u; /* the last bytes, the rest 'A's */
    memcpy(&tail, s + i, len - i);
    return plain_word(tail);
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

/* The separator, indent and "key": of a member whose key needs no escape,
 * and room for more bytes after it: where they go, or NULL (nothing
 * written) when the buffer cannot hold them all. */
static char *member_start(trowel_json_writer *w, const char *key, size_t len, size_t more)
{
    size_t ind = (size_t)w->depth * 2;
    /* An indent of up to 32 is copied as 32 bytes (a copy of fixed size is
     * a few instructions, not a call), so room is made for them all. */
    char *p = room(w, len + (ind > 32 ? ind : 32) + 6 + more);
    if (!p)
        return NULL;
    if (w->has_items[w->depth])
        *p++ = ',';
    w->has_items[w->depth] = true;
    *p++ = '\n';
    if (ind <= 32)
        memcpy(p, spaces, 32);
    else
        memcpy(p, spaces, ind);
    p += ind;
    *p++ = '"';
    memcpy(p, key, len);
    p += len;
    memcpy(p, "\": ", 3);
    return p + 3;
}

void trowel_jw_key_plain(trowel_json_writer *w, const char *key, size_t len)
{
    char *p = member_start(w, key, len, 0);
    if (!p) {
        trowel_jw_key(w, key);
        return;
    }
    w->used = (size_t)(p - w->buf);
    w->after_key = true;
}

/* v's decimal digits, written backwards ending at end: their count. */
static size_t uint_digits(uint64_t v, char *end)
{
    /* Two digits a division (a large document has a million numbers). */
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    size_t n = 0;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        n += 2;
        memcpy(end - n, pairs + 2 * r, 2);
    }
    if (v >= 10) {
        n += 2;
        memcpy(end - n, pairs + 2 * v, 2);
    } else {
        *(end - ++n) = (char)('0' + v);
    }
    return n;
}

/* How many decimal digits v has. */
static size_t digit_count(uint64_t v)
{
    size_t n = 1;
    for (; v >= 10000; v /= 10000)
        n += 4;
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

void trowel_jw_member_uint(trowel_json_writer *w, const char *key, size_t len, uint64_t v)
{
    size_t n = digit_count(v);
    char *p = member_start(w, key, len, n);
    if (!p) {
        trowel_jw_key(w, key);
        trowel_jw_uint(w, v);
        return;
    }
    uint_digits(v, p + n); /* straight into the buffer, backwards */
    w->used = (size_t)(p + n - w->buf);
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
    size_t n = uint_digits(v, digits + sizeof digits);
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
