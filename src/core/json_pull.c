/*
 * The pull JSON reader of json_pull.h, after RFC 8259. One state says what
 * may come next; a stack of flags says, per open level, whether it is an
 * array or an object, so that a closing bracket must match its opening.
 */
#include "json_pull.h"

#include <string.h>

enum {
    ST_VALUE,       /* a value (the top, after a key, after a comma in an array) */
    ST_ARRAY_FIRST, /* a value or ']' */
    ST_KEY_FIRST,   /* a key or '}' */
    ST_KEY,         /* a key (after a comma in an object) */
    ST_AFTER,       /* ',' or the closing bracket of the level */
    ST_DONE         /* only white space until the end */
};

void trowel_jp_init(trowel_json_pull *p, trowel_ctx *ctx, const char *what, const char *text,
                    size_t len)
{
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->what = what;
    p->text = text;
    p->len = len;
    p->state = ST_VALUE;
}

void trowel_jp_free(trowel_json_pull *p)
{
    trowel_mem_free(p->ctx, p->str);
    p->str = NULL;
    p->str_cap = p->str_len = 0;
}

static trowel_jp_token fail(trowel_json_pull *p, size_t at, const char *expected)
{
    p->failed = trowel_fail(p->ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                            "%s: not valid JSON at offset %zu: %s", p->what, at, expected);
    return TROWEL_JP_ERROR;
}

/* Locals, not p's fields, in the loops below: the text is chars, which may
 * alias anything, so the compiler would otherwise store pos every byte. */
/* How many of the eight bytes at t are spaces before the first that is
 * not (8: all are). The indentation of pretty JSON is most of its bytes. */
static size_t leading_spaces(const char *t)
{
    uint64_t w;
    memcpy(&w, t, sizeof w);
    uint64_t other = w ^ 0x2020202020202020u; /* 0 in each byte that is a space */
    if (!other)
        return 8;
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (size_t)__builtin_ctzll(other) / 8; /* the first byte is the lowest */
#else
    size_t n = 0;
    while (t[n] == ' ')
        n++;
    return n;
#endif
}

static void skip_space(trowel_json_pull *p)
{
    const char *t = p->text;
    size_t pos = p->pos, len = p->len;
    while (pos < len) {
        unsigned char c = (unsigned char)t[pos];
        if (c > ' ' || (c != ' ' && c != '\n' && c != '\r' && c != '\t'))
            break;
        pos++;
        /* Indentation: eight bytes at a time. */
        for (size_t n = 8; n == 8 && len - pos >= 8; pos += n)
            n = leading_spaces(t + pos);
    }
    p->pos = pos;
}

static bool reserve(trowel_json_pull *p, size_t more)
{
    if (p->str_cap - p->str_len > more)
        return true;
    size_t cap = p->str_cap ? p->str_cap : 256;
    while (cap - p->str_len <= more) {
        if (cap > SIZE_MAX / 2) {
            p->failed = trowel_fail(p->ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                                    "%s: a string too long to hold", p->what);
            return false;
        }
        cap *= 2;
    }
    p->failed = trowel_mem_resize(p->ctx, &p->str, cap);
    if (p->failed != TROWEL_OK)
        return false;
    p->str_cap = cap;
    return true;
}

static bool append(trowel_json_pull *p, const char *s, size_t n)
{
    if (!reserve(p, n))
        return false;
    memcpy(p->str + p->str_len, s, n);
    p->str_len += n;
    return true;
}

static int hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* \uXXXX (and its low surrogate when it is a high one) as UTF-8. */
static bool unicode_escape(trowel_json_pull *p)
{
    size_t at = p->pos - 2;
    if (p->len - p->pos < 4 || hex4(p->text + p->pos) < 0)
        return fail(p, at, "\\u needs 4 hex digits"), false;
    unsigned cp = (unsigned)hex4(p->text + p->pos);
    p->pos += 4;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return fail(p, at, "a low surrogate without a high one"), false;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        int lo = p->len - p->pos >= 6 && p->text[p->pos] == '\\' && p->text[p->pos + 1] == 'u'
                     ? hex4(p->text + p->pos + 2)
                     : -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail(p, at, "a high surrogate without a low one"), false;
        cp = 0x10000 + ((cp - 0xD800) << 10) + ((unsigned)lo - 0xDC00);
        p->pos += 6;
    }
    char u[4];
    size_t n;
    if (cp < 0x80)
        u[0] = (char)cp, n = 1;
    else if (cp < 0x800)
        u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F)),
        u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    else
        u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F)),
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    return append(p, u, n);
}

/* Where a run of bytes a string holds as they are ends: at the first '"',
 * '\\' or control byte from pos (len when there is none). Eight bytes at a
 * time while none of the eight can be one: names and text in game JSON are
 * long runs of plain bytes, and this is the reader's busiest loop. */
static size_t plain_run_end(const char *t, size_t pos, size_t len)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    while (len - pos >= 8) {
        uint64_t w;
        memcpy(&w, t + pos, sizeof w);
        uint64_t quote = w ^ (ones * '"'), slash = w ^ (ones * '\\');
        /* some byte of x is 0 exactly when (x - ones) & ~x & highs is not 0;
         * (w - 0x20 in each byte) & ~w & highs, when some byte is below 0x20 */
        uint64_t stop = ((quote - ones) & ~quote) | ((slash - ones) & ~slash) |
                        ((w - ones * 0x20) & ~w);
        if (stop & highs)
            break;
        pos += 8;
    }
    while (pos < len) {
        unsigned char c = (unsigned char)t[pos];
        if (c == '"' || c == '\\' || c < 0x20)
            break;
        pos++;
    }
    return pos;
}

/* The string starting at pos (its opening quote), decoded into str. */
static bool read_string(trowel_json_pull *p)
{
    size_t start = p->pos++;
    p->str_len = 0;
    for (;;) {
        size_t run = p->pos;
        p->pos = plain_run_end(p->text, p->pos, p->len);
        if (!append(p, p->text + run, p->pos - run))
            return false;
        if (p->pos == p->len)
            return fail(p, start, "a string that does not end"), false;
        char c = p->text[p->pos++];
        if (c == '"')
            break;
        if (c != '\\')
            return fail(p, p->pos - 1, "a control character in a string (escape it)"), false;
        if (p->pos == p->len)
            return fail(p, start, "a string that does not end"), false;
        char e = p->text[p->pos++], out;
        switch (e) {
        case '"': out = '"'; break;
        case '\\': out = '\\'; break;
        case '/': out = '/'; break;
        case 'b': out = '\b'; break;
        case 'f': out = '\f'; break;
        case 'n': out = '\n'; break;
        case 'r': out = '\r'; break;
        case 't': out = '\t'; break;
        case 'u':
            if (!unicode_escape(p))
                return false;
            continue;
        default: return fail(p, p->pos - 2, "an unknown escape in a string"), false;
        }
        if (!append(p, &out, 1))
            return false;
    }
    if (!reserve(p, 1))
        return false;
    p->str[p->str_len] = '\0';
    return true;
}

static bool digits(trowel_json_pull *p)
{
    size_t from = p->pos;
    while (p->pos < p->len && p->text[p->pos] >= '0' && p->text[p->pos] <= '9')
        p->pos++;
    return p->pos > from;
}

static trowel_jp_token read_number(trowel_json_pull *p)
{
    size_t start = p->pos;
    if (p->text[p->pos] == '-')
        p->pos++;
    if (p->pos < p->len && p->text[p->pos] == '0')
        p->pos++;
    else if (!digits(p))
        return fail(p, start, "a value");
    p->num_whole = true;
    if (p->pos < p->len && p->text[p->pos] == '.') {
        p->pos++;
        p->num_whole = false;
        if (!digits(p))
            return fail(p, p->pos, "digits after the decimal point");
    }
    if (p->pos < p->len && (p->text[p->pos] == 'e' || p->text[p->pos] == 'E')) {
        p->pos++;
        p->num_whole = false;
        if (p->pos < p->len && (p->text[p->pos] == '+' || p->text[p->pos] == '-'))
            p->pos++;
        if (!digits(p))
            return fail(p, p->pos, "digits of an exponent");
    }
    p->num = p->text + start;
    p->num_len = p->pos - start;
    return TROWEL_JP_NUMBER;
}

static trowel_jp_token literal(trowel_json_pull *p, const char *word, trowel_jp_token tok)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->text + p->pos, word, n) != 0)
        return fail(p, p->pos, "a value");
    p->pos += n;
    return tok;
}

/* After a whole value: the level it is in decides what may follow. */
static void value_done(trowel_json_pull *p) { p->state = p->depth ? ST_AFTER : ST_DONE; }

static trowel_jp_token open_level(trowel_json_pull *p, bool array)
{
    if (p->depth == TROWEL_JP_MAX_DEPTH)
        return fail(p, p->pos, "nesting no deeper than 256 levels");
    p->pos++;
    p->in_array[++p->depth] = array;
    p->state = array ? ST_ARRAY_FIRST : ST_KEY_FIRST;
    return array ? TROWEL_JP_ARRAY : TROWEL_JP_OBJECT;
}

static trowel_jp_token close_level(trowel_json_pull *p, char c)
{
    bool array = p->in_array[p->depth];
    if (c != (array ? ']' : '}'))
        return fail(p, p->pos, array ? "',' or ']'" : "',' or '}'");
    p->pos++;
    p->depth--;
    value_done(p);
    return array ? TROWEL_JP_ARRAY_END : TROWEL_JP_OBJECT_END;
}

static trowel_jp_token value(trowel_json_pull *p, char c)
{
    trowel_jp_token t;
    switch (c) {
    case '{': return open_level(p, false);
    case '[': return open_level(p, true);
    case '"':
        if (!read_string(p))
            return TROWEL_JP_ERROR;
        t = TROWEL_JP_STRING;
        break;
    case 't': t = literal(p, "true", TROWEL_JP_TRUE); break;
    case 'f': t = literal(p, "false", TROWEL_JP_FALSE); break;
    case 'n': t = literal(p, "null", TROWEL_JP_NULL); break;
    default:
        if (c != '-' && (c < '0' || c > '9'))
            return fail(p, p->pos, "a value");
        t = read_number(p);
    }
    if (t != TROWEL_JP_ERROR)
        value_done(p);
    return t;
}

static trowel_jp_token key(trowel_json_pull *p, char c)
{
    if (c != '"')
        return fail(p, p->pos, p->state == ST_KEY_FIRST ? "a key or '}'" : "a key");
    if (!read_string(p))
        return TROWEL_JP_ERROR;
    skip_space(p);
    if (p->pos == p->len || p->text[p->pos] != ':')
        return fail(p, p->pos, "':' after a key");
    p->pos++;
    p->state = ST_VALUE;
    return TROWEL_JP_KEY;
}

trowel_jp_token trowel_jp_next(trowel_json_pull *p)
{
    skip_space(p);
    p->tok_at = p->pos;
    if (p->pos == p->len) {
        if (p->state == ST_DONE)
            return TROWEL_JP_END;
        return fail(p, p->pos, p->depth ? "the rest of the document (it ends early)" : "a value");
    }
    char c = p->text[p->pos];
    switch (p->state) {
    case ST_VALUE: return value(p, c);
    case ST_ARRAY_FIRST: return c == ']' ? close_level(p, c) : value(p, c);
    case ST_KEY_FIRST:
        if (c == '}')
            return close_level(p, c);
        return key(p, c);
    case ST_KEY: return key(p, c);
    case ST_AFTER:
        if (c != ',')
            return close_level(p, c);
        p->pos++;
        p->state = p->in_array[p->depth] ? ST_VALUE : ST_KEY;
        return trowel_jp_next(p);
    default: return fail(p, p->pos, "nothing after the document's value");
    }
}

trowel_status trowel_jp_skip(trowel_json_pull *p, trowel_jp_token tok)
{
    if (tok == TROWEL_JP_ERROR)
        return p->failed;
    if (tok != TROWEL_JP_OBJECT && tok != TROWEL_JP_ARRAY)
        return TROWEL_OK;
    unsigned depth = p->depth - 1;
    while (p->depth > depth) {
        trowel_jp_token t = trowel_jp_next(p);
        if (t == TROWEL_JP_ERROR)
            return p->failed;
    }
    return TROWEL_OK;
}

trowel_status trowel_jp_status(const trowel_json_pull *p)
{
    return p->failed;
}

int trowel_jp_uint(const trowel_json_pull *p, uint64_t *out)
{
    if (!p->num_whole)
        return TROWEL_JP_FRACTION;
    size_t i = p->num[0] == '-';
    uint64_t v = 0;
    if (p->num_len - i <= 19) { /* 19 digits cannot pass UINT64_MAX */
        for (; i < p->num_len; i++)
            v = v * 10 + (unsigned)(p->num[i] - '0');
    }
    for (; i < p->num_len; i++) {
        unsigned d = (unsigned)(p->num[i] - '0');
        v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
    }
    if (p->num[0] == '-' && v != 0)
        return TROWEL_JP_NEGATIVE;
    *out = v;
    return TROWEL_JP_WHOLE;
}

bool trowel_json_top_string(trowel_ctx *ctx, const char *text, size_t len, const char *key,
                            char *out, size_t size)
{
    trowel_json_pull p;
    trowel_jp_init(&p, ctx, "JSON", text, len);
    bool found = false;
    trowel_error saved = ctx->last_error; /* failures here are not the caller's */
    if (trowel_jp_next(&p) == TROWEL_JP_OBJECT) {
        for (trowel_jp_token t; !found && (t = trowel_jp_next(&p)) == TROWEL_JP_KEY;) {
            bool wanted = strcmp(p.str, key) == 0;
            t = trowel_jp_next(&p);
            if (wanted) {
                if (t == TROWEL_JP_STRING && p.str_len < size && strlen(p.str) == p.str_len) {
                    memcpy(out, p.str, p.str_len + 1);
                    found = true;
                }
                break;
            }
            if (trowel_jp_skip(&p, t) != TROWEL_OK)
                break;
        }
    }
    trowel_jp_free(&p);
    ctx->last_error = saved;
    return found;
}
