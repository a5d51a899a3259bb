/*
 * The szdd input filter: MS COMPRESS.EXE's wrapper (Trespasser's .grf
 * worlds) peeled before formats bid. Peeling means decoding: the szdd
 * format (szdd.c) reads its one entry into counted memory, so its header
 * checks and the LZSS codec are the ones `trowel extract` uses. An SZDD
 * file whose content no format recognises stays the szdd archive it always
 * was. Because a trial peel decodes the whole file, the filter bids only
 * when the file's name, or the name its header restores (WORLD.GR_ with
 * 'f': WORLD.GRF), has the extension of another format, or when the input
 * has no file name (standard input): decoding a large SZDD of plain data
 * twice, once to find nothing inside, took longer than extracting it.
 */
#include "core/filter.h"
#include "core/input.h"

#include <ctype.h>
#include <string.h>

extern const trowel_format trowel_format_szdd;
extern const trowel_filter trowel_filter_szdd;

/* Whether name is one a format's word names ("." words: an extension,
 * others a whole name; case ignored). wild_last: name's last character
 * stands for any (an SZDD name whose missing character is unknown). */
static bool word_names(const char *word, size_t n, const char *name, bool wild_last)
{
    size_t len = strlen(name);
    if (n == 0 || word[0] == '*' || len < n || (word[0] != '.' && len != n))
        return false;
    const char *tail = name + len - n;
    for (size_t k = 0; k < n; k++)
        if (!(wild_last && k == n - 1) &&
            tolower((unsigned char)tail[k]) != tolower((unsigned char)word[k]))
            return false;
    return true;
}

/* Whether some format other than szdd is found under this name. */
static bool other_format_named(const char *name, bool wild_last)
{
    for (size_t i = 0; i < trowel_formats_len; i++) {
        if (trowel_formats[i] == &trowel_format_szdd)
            continue;
        for (const char *w = trowel_formats[i]->extensions; *w;) {
            size_t n = strcspn(w, " ");
            if (word_names(w, n, name, wild_last))
                return true;
            w += n;
            w += strspn(w, " ");
        }
    }
    return false;
}

/* The file's name, or the name its header restores, promises a format
 * inside (see the top of this file): WORLD.GRF, WORLD.GR_ with missing
 * character 'f', or WORLD.GR_ without one (QBasic variant, or none
 * recorded: any last character). */
static bool szdd_worth_peeling(trowel_reader *r)
{
    const trowel_input *in = r->in;
    if (in->name_is_label || !trowel_input_is_file(in))
        return true; /* standard input or memory: no name to go by */
    uint8_t head[10];
    trowel_reader h = *r;
    if (trowel_read_bytes(&h, head, sizeof head) != TROWEL_OK)
        return false;
    /* Only the normal header ("SZDD" 88 F0 27 33 'A' c) records one. */
    bool normal = memcmp(head, "SZDD\x88\xf0\x27\x33", 8) == 0 && head[8] == 'A';
    uint8_t missing = normal && head[9] > 0x20 && head[9] < 0x7F ? head[9] : 0;
    const char *slash = strrchr(in->name, '/');
    const char *base = slash ? slash + 1 : in->name;
    size_t len = strlen(base);
    if (other_format_named(base, false))
        return true;
    if (len < 2 || base[len - 1] != '_' || len > 255)
        return false;
    char restored[256];
    memcpy(restored, base, len + 1);
    if (!missing)
        return other_format_named(restored, true);
    restored[len - 1] = (char)missing;
    return other_format_named(restored, false);
}

static int szdd_filter_bid(trowel_reader *r)
{
    return trowel_format_szdd.bid(r);
}

/* The wrapped file, decoded by the szdd format into memory the input owns. */
static trowel_status szdd_filter_open(trowel_ctx *ctx, trowel_input *in, trowel_input **out)
{
    *out = NULL;
    trowel_archive *a;
    trowel_status s = trowel_archive_open_as(ctx, in, &trowel_format_szdd, &a);
    if (s != TROWEL_OK)
        return s;
    uint8_t *data = NULL;
    size_t size = 0;
    if (trowel_archive_entry_count(a) != 1)
        s = trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET, "SZDD file without content");
    else
        s = trowel_archive_entry_bytes(a, 0, false, &data, &size);
    trowel_archive_close(a);
    if (s != TROWEL_OK)
        return s;
    return trowel_input_adopt_memory(ctx, data, size, trowel_input_name(in), out);
}

const trowel_filter trowel_filter_szdd = {
    .id = "szdd",
    .description = "MS COMPRESS.EXE (SZDD) wrapper around a file trowel knows",
    .bid = szdd_filter_bid,
    .worth_peeling = szdd_worth_peeling,
    .open = szdd_filter_open,
};
