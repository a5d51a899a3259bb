/*
 * -O key=value options, checked once against a table. A format declares each
 * option it takes in one row (trowel_option_info: key, type, range or
 * choices, default, help, and what it is for: reading, a convert target, or
 * "create"); the archive layer parses the options given against those rows
 * before the format runs, and the format reads typed values back with the
 * getters below. Help, completions and the man page are made from the same
 * rows, so an option cannot be accepted without being documented, nor
 * documented without being checked.
 */
#include "core.h"
#include "module.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool key_matches(const char *opt, const char *key)
{
    size_t n = strlen(key);
    return strncmp(opt, key, n) == 0 && opt[n] == '=';
}

trowel_status trowel_options_check(trowel_ctx *ctx, const char *const *opts, size_t n,
                                   const char *const *allowed)
{
    for (size_t i = 0; i < n; i++) {
        if (!strchr(opts[i], '='))
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "option '%s' is not of the form key=value", opts[i]);
        bool known = false;
        for (size_t k = 0; allowed && allowed[k]; k++)
            known = known || key_matches(opts[i], allowed[k]);
        if (!known)
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "unknown option '%s' for this format", opts[i]);
    }
    return TROWEL_OK;
}

/* True when word (n bytes) is one of list's words, separated by sep. */
static bool word_in(const char *list, char sep, const char *word, size_t n)
{
    for (const char *w = list; w && *w;) {
        size_t len = strcspn(w, (char[]){sep, '\0'});
        if (len == n && strncmp(w, word, n) == 0)
            return true;
        w += len + (w[len] == sep);
    }
    return false;
}

/* True when the row applies: reading (target NULL), create ("create") or
 * this convert target. */
static bool applies(const trowel_option_info *o, const char *target)
{
    if (!target || !o->targets)
        return !target && !o->targets;
    return word_in(o->targets, ' ', target, strlen(target));
}

static const trowel_option_info *row_of(const trowel_option_info *rows, const char *target,
                                        const char *opt)
{
    for (size_t i = 0; rows && rows[i].key; i++)
        if (applies(&rows[i], target) && key_matches(opt, rows[i].key))
            return &rows[i];
    return NULL;
}

/* "for szdd", "for cine-set to png", "for creating szdd". */
static void what_for(char *buf, size_t cap, const char *owner, const char *target)
{
    if (!target)
        snprintf(buf, cap, "for %s", owner);
    else if (strcmp(target, "create") == 0)
        snprintf(buf, cap, "for creating %s", owner);
    else
        snprintf(buf, cap, "for %s to %s", owner, target);
}

/* "unknown option 'x' for cine-set to png; valid: frame, palette", or, when
 * nothing applies, "...for szdd: it takes no reading options". */
static trowel_status unknown_option(trowel_ctx *ctx, const char *owner,
                                    const trowel_option_info *rows, const char *target,
                                    const char *opt)
{
    char valid[256] = "";
    size_t used = 0;
    for (size_t i = 0; rows && rows[i].key; i++) {
        if (!applies(&rows[i], target))
            continue;
        int n = snprintf(valid + used, sizeof valid - used, "%s%s", used ? ", " : "",
                         rows[i].key);
        if (n < 0 || (size_t)n >= sizeof valid - used)
            break;
        used += (size_t)n;
    }
    int keylen = (int)strcspn(opt, "=");
    char where[128];
    if (!used) {
        bool create = target && strcmp(target, "create") == 0;
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "unknown option '%.*s' for %s: it takes no %s options%s%s", keylen, opt,
                           owner, create ? "create" : target ? "convert" : "reading",
                           target && !create ? " to " : "", target && !create ? target : "");
    }
    what_for(where, sizeof where, owner, target);
    return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "unknown option '%.*s' %s; valid: %s",
                       keylen, opt, where, valid);
}

/* Reads a decimal number as the row's type says: digits, after a '-' for
 * INT. False when text is not one or does not fit in 64 bits. */
static bool parse_number(trowel_option_type type, const char *text, int64_t *out)
{
    const char *digits = text + (type == TROWEL_OPTION_INT && text[0] == '-');
    if (*digits < '0' || *digits > '9')
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

/* Reads a decimal number with a fraction or exponent allowed. False when
 * text is not one, is not finite, or has anything after it. */
static bool parse_real(const char *text, double *out)
{
    if (!((text[0] >= '0' && text[0] <= '9') || text[0] == '-' || text[0] == '.'))
        return false; /* no spaces, '+', "inf" or "nan" */
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || *end || end == text || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* True when text is a value the row allows. */
static bool value_ok(const trowel_option_info *o, const char *text)
{
    int64_t v;
    double r;
    switch (o->type) {
    case TROWEL_OPTION_REAL:
        if (!parse_real(text, &r))
            return false;
        return (o->min == 0 && o->max == 0) || (r >= (double)o->min && r <= (double)o->max);
    case TROWEL_OPTION_BOOL:
        return strcmp(text, "0") == 0 || strcmp(text, "1") == 0;
    case TROWEL_OPTION_UINT:
    case TROWEL_OPTION_INT:
        if (o->choices && word_in(o->choices, '|', text, strlen(text)) && !strchr(text, '|'))
            return true; /* a word allowed beside the numbers ("none") */
        if (!parse_number(o->type, text, &v))
            return false;
        if (o->min == 0 && o->max == 0)
            return o->type == TROWEL_OPTION_INT || v >= 0;
        return v >= o->min && v <= o->max;
    case TROWEL_OPTION_CHOICE:
        return word_in(o->choices ? o->choices : o->value, '|', text, strlen(text)) &&
               !strchr(text, '|');
    case TROWEL_OPTION_STRING:
    default:
        return true;
    }
}

/* "option 'level=12' for creating vpp: level= takes a number from 1 to 9". */
static trowel_status bad_value(trowel_ctx *ctx, const char *owner, const trowel_option_info *o,
                               const char *target, const char *opt)
{
    char where[128], takes[160];
    what_for(where, sizeof where, owner, target);
    switch (o->type) {
    case TROWEL_OPTION_BOOL: snprintf(takes, sizeof takes, "0 or 1"); break;
    case TROWEL_OPTION_CHOICE:
        snprintf(takes, sizeof takes, "one of %s", o->choices ? o->choices : o->value);
        break;
    case TROWEL_OPTION_REAL:
        if (o->min == 0 && o->max == 0)
            snprintf(takes, sizeof takes, "a decimal number");
        else
            snprintf(takes, sizeof takes, "a decimal number from %lld to %lld",
                     (long long)o->min, (long long)o->max);
        break;
    default:
        if (o->min == 0 && o->max == 0)
            snprintf(takes, sizeof takes, "%s",
                     o->type == TROWEL_OPTION_INT ? "a whole number" : "a number from 0 up");
        else
            snprintf(takes, sizeof takes, "a number from %lld to %lld", (long long)o->min,
                     (long long)o->max);
        if (o->choices) {
            size_t used = strlen(takes);
            snprintf(takes + used, sizeof takes - used, ", or %s", o->choices);
        }
        break;
    }
    return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "option '%s' %s: %s= takes %s",
                       opt, where, o->key, takes);
}

trowel_status trowel_options_parse_rows(trowel_ctx *ctx, const char *owner,
                                        const trowel_option_info *rows, const char *target,
                                        const char *const *opts, size_t n,
                                        trowel_option_values *out)
{
    *out = (trowel_option_values){rows, target, opts, n};
    for (size_t i = 0; i < n; i++) {
        if (!strchr(opts[i], '='))
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "option '%s' is not of the form key=value", opts[i]);
        const trowel_option_info *o = row_of(rows, target, opts[i]);
        if (!o)
            return unknown_option(ctx, owner, rows, target, opts[i]);
        if (!value_ok(o, opts[i] + strlen(o->key) + 1))
            return bad_value(ctx, owner, o, target, opts[i]);
    }
    return TROWEL_OK;
}

trowel_status trowel_options_parse(trowel_ctx *ctx, const trowel_format *f, const char *target,
                                   const char *const *opts, size_t n, trowel_option_values *out)
{
    return trowel_options_parse_rows(ctx, f->id, f->options, target, opts, n, out);
}

trowel_status trowel_options_check_format(trowel_ctx *ctx, const trowel_format *f,
                                          const char *target, const char *const *opts, size_t n)
{
    trowel_option_values unused;
    return trowel_options_parse(ctx, f, target, opts, n, &unused);
}

bool trowel_option_row_valid(const trowel_option_info *o)
{
    return !o->def || value_ok(o, o->def);
}

const char *trowel_options_get(const char *const *opts, size_t n, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i < n; i++)
        if (key_matches(opts[i], key))
            v = opts[i] + strlen(key) + 1;
    return v;
}

/* ---- typed getters: the last value given, else the row's default */

static const trowel_option_info *row_for_key(const trowel_option_values *v, const char *key)
{
    for (size_t i = 0; v->rows && v->rows[i].key; i++)
        if (applies(&v->rows[i], v->target) && strcmp(v->rows[i].key, key) == 0)
            return &v->rows[i];
    return NULL;
}

bool trowel_option_given(const trowel_option_values *v, const char *key)
{
    return trowel_options_get(v->opts, v->n, key) != NULL;
}

const char *trowel_option_str(const trowel_option_values *v, const char *key)
{
    const char *given = trowel_options_get(v->opts, v->n, key);
    if (given)
        return given;
    const trowel_option_info *o = row_for_key(v, key);
    return o ? o->def : NULL;
}

/* The value as a number (checked by the parse; a default by the unit test).
 * Values made without rows (trowel_option_values_of(NULL, ...)) are read as
 * the format's own rows checked them: as numbers, a '-' allowed. */
static int64_t number_of(const trowel_option_values *v, const char *key)
{
    const trowel_option_info *o = row_for_key(v, key);
    const char *text = trowel_option_str(v, key);
    int64_t n = 0;
    if (text && !parse_number(o ? o->type : TROWEL_OPTION_INT, text, &n))
        n = 0;
    return n;
}

uint64_t trowel_option_uint(const trowel_option_values *v, const char *key)
{
    int64_t n = number_of(v, key);
    return n < 0 ? 0 : (uint64_t)n;
}

int64_t trowel_option_int(const trowel_option_values *v, const char *key)
{
    return number_of(v, key);
}

double trowel_option_real(const trowel_option_values *v, const char *key)
{
    const char *text = trowel_option_str(v, key);
    double r = 0;
    if (text && !parse_real(text, &r))
        r = 0;
    return r;
}

bool trowel_option_bool(const trowel_option_values *v, const char *key)
{
    const char *text = trowel_option_str(v, key);
    return text && strcmp(text, "1") == 0;
}

const char *trowel_option_next(const trowel_option_values *v, const char *key, size_t *pos)
{
    for (; *pos < v->n; (*pos)++)
        if (key_matches(v->opts[*pos], key))
            return v->opts[(*pos)++] + strlen(key) + 1;
    return NULL;
}
