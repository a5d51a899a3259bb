/*
 * JSON documents are UTF-8, but names in these games' files are bytes:
 * CP1252 (é as the single byte 0xE9) is plausible in any of them. json-c
 * copies a string's bytes as they are, which makes a document strict
 * parsers reject (and jq quietly changes). So before a document is written
 * every string that is not valid UTF-8 is replaced by its bytes read as
 * CP1252 (Latin-1 plus the 0x80-0x9F punctuation; the five bytes CP1252
 * leaves undefined become U+FFFD), and an object member "KEY" so replaced
 * gets a sibling "KEY_bytes" holding the exact bytes in hex. Reading a
 * manifest puts those bytes back under "KEY", so extract --manifest and
 * create --manifest rebuild the same archive. Strings in arrays have no
 * sibling to carry their bytes: they are only made readable.
 */
#include "core.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trowel/trowel.h"

#define BYTES_SUFFIX "_bytes"

bool trowel_utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        size_t len;
        uint32_t cp, min;
        if (c < 0x80) {
            /* ASCII (nearly every name) eight bytes at a time */
            uint64_t word;
            for (i++; n - i >= 8; i += 8) {
                memcpy(&word, s + i, 8);
                if (word & 0x8080808080808080u)
                    break;
            }
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            len = 2, cp = c & 0x1F, min = 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3, cp = c & 0x0F, min = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return false;
        }
        if (n - i < len)
            return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

/* CP1252's 0x80-0x9F; 0 where it defines no character. */
static const uint16_t cp1252_high[32] = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0,      0x017D, 0,
    0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178,
};

/* Appends code point cp (below U+10000) as UTF-8. */
static size_t put_utf8(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    out[0] = (char)(0xE0 | cp >> 12);
    out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
}

/* The bytes s[0, n) read as CP1252, as a new json string (NULL: no memory). */
static json_object *cp1252_string(const uint8_t *s, size_t n)
{
    if (n > ((size_t)-1) / 3 - 1)
        return NULL;
    char *text = malloc(n * 3 + 1);
    if (!text)
        return NULL;
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t cp = s[i];
        if (cp >= 0x80 && cp < 0xA0)
            cp = cp1252_high[cp - 0x80] ? cp1252_high[cp - 0x80] : 0xFFFD;
        len += put_utf8(text + len, cp);
    }
    json_object *o = json_object_new_string_len(text, (int)len);
    free(text);
    return o;
}

static json_object *hex_string(const uint8_t *s, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    char *text = malloc(n * 2 + 1);
    if (!text)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        text[2 * i] = digits[s[i] >> 4];
        text[2 * i + 1] = digits[s[i] & 15];
    }
    json_object *o = json_object_new_string_len(text, (int)(n * 2));
    free(text);
    return o;
}

/* The string o as UTF-8 text: NULL when it is valid already (or memory
 * ran out, which leaves it as it is). */
static json_object *readable(json_object *o)
{
    const uint8_t *s = (const uint8_t *)json_object_get_string(o);
    size_t n = (size_t)json_object_get_string_len(o);
    return trowel_utf8_valid(s, n) ? NULL : cp1252_string(s, n);
}

static void fix_object(json_object *o);

static void fix_array(json_object *arr)
{
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *v = json_object_array_get_idx(arr, i);
        json_object *text = json_object_is_type(v, json_type_string) ? readable(v) : NULL;
        if (text)
            json_object_array_put_idx(arr, i, text);
        else
            trowel_json_make_utf8(v);
    }
}

/* Members are collected first: the object must not change while it is
 * being walked. */
static void fix_object(json_object *o)
{
    size_t n = (size_t)json_object_object_length(o), k = 0;
    if (n == 0)
        return;
    char **bad = calloc(n, sizeof *bad);
    if (!bad)
        return;
    json_object_object_foreach(o, key, v) {
        if (json_object_is_type(v, json_type_string)) {
            const uint8_t *s = (const uint8_t *)json_object_get_string(v);
            if (!trowel_utf8_valid(s, (size_t)json_object_get_string_len(v)) &&
                (bad[k] = strdup(key)) != NULL)
                k++;
        } else {
            trowel_json_make_utf8(v);
        }
    }
    for (size_t i = 0; i < k; i++) {
        json_object *value = json_object_object_get(o, bad[i]);
        const uint8_t *s = (const uint8_t *)json_object_get_string(value);
        size_t len = (size_t)json_object_get_string_len(value);
        char bytes_key[256];
        int kn = snprintf(bytes_key, sizeof bytes_key, "%s" BYTES_SUFFIX, bad[i]);
        json_object *hex = kn > 0 && (size_t)kn < sizeof bytes_key ? hex_string(s, len) : NULL;
        json_object *text = cp1252_string(s, len);
        if (hex)
            json_object_object_add(o, bytes_key, hex);
        if (text) /* replaces value */
            json_object_object_add(o, bad[i], text);
        free(bad[i]);
    }
    free(bad);
}

void trowel_json_make_utf8(struct json_object *o)
{
    if (json_object_is_type(o, json_type_object))
        fix_object(o);
    else if (json_object_is_type(o, json_type_array))
        fix_array(o);
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* "KEY_bytes": "hex" beside a string "KEY": KEY gets those bytes back (a
 * hex string with a NUL or an odd digit is left alone). */
static void restore_member(json_object *o, const char *key, json_object *hex)
{
    size_t klen = strlen(key), slen = strlen(BYTES_SUFFIX);
    if (klen <= slen || strcmp(key + klen - slen, BYTES_SUFFIX) != 0 ||
        !json_object_is_type(hex, json_type_string))
        return;
    char base[256];
    if (klen - slen >= sizeof base)
        return;
    memcpy(base, key, klen - slen);
    base[klen - slen] = '\0';
    json_object *text;
    if (!json_object_object_get_ex(o, base, &text) || !json_object_is_type(text, json_type_string))
        return;
    const char *h = json_object_get_string(hex);
    size_t n = (size_t)json_object_get_string_len(hex);
    if (n % 2)
        return;
    char *bytes = malloc(n / 2 + 1);
    if (!bytes)
        return;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hex_digit(h[2 * i]), lo = hex_digit(h[2 * i + 1]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
            free(bytes);
            return;
        }
        bytes[i] = (char)(hi << 4 | lo);
    }
    /* Only when KEY is still what the bytes read as: a KEY edited by hand
     * (and its stale _bytes left) is taken as written. */
    json_object *shown = cp1252_string((const uint8_t *)bytes, n / 2);
    if (shown && strcmp(json_object_get_string(shown), json_object_get_string(text)) == 0)
        json_object_object_add(o, base, json_object_new_string_len(bytes, (int)(n / 2)));
    json_object_put(shown);
    free(bytes);
}

void trowel_json_restore_bytes(struct json_object *o)
{
    if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++)
            trowel_json_restore_bytes(json_object_array_get_idx(o, i));
        return;
    }
    if (!json_object_is_type(o, json_type_object))
        return;
    /* Replacing "KEY" while walking would change the object under the walk:
     * the pairs are found first. */
    size_t n = (size_t)json_object_object_length(o), k = 0;
    char **keys = n ? calloc(n, sizeof *keys) : NULL;
    json_object_object_foreach(o, key, v) {
        trowel_json_restore_bytes(v);
        if (keys && (keys[k] = strdup(key)) != NULL)
            k++;
    }
    for (size_t i = 0; i < k; i++) {
        restore_member(o, keys[i], json_object_object_get(o, keys[i]));
        free(keys[i]);
    }
    free(keys);
}

const char *trowel_json_text_utf8(struct json_object *o, int flags)
{
    const char *s = json_object_to_json_string_ext(o, flags);
    if (!s || trowel_utf8_valid((const uint8_t *)s, strlen(s)))
        return s;
    trowel_json_make_utf8(o);
    return json_object_to_json_string_ext(o, flags);
}
