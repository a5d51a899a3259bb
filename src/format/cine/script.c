/*
 * cine-script: PRC (procedure) and REL (relation) script files of Future
 * Wars and Operation Stealth.
 *
 * Layout (../shared/formats/delphine-cinematique.md; ScummVM tools' decine
 * reads both): u16BE script count, then a table of one record per script,
 * then the scripts' bytecode one after another in table order.
 *   PRC record: u16BE bytecode size                            (2 bytes)
 *   REL record: u16BE size, u16BE param1, u16BE index, u16BE param2 (8)
 * Nothing else is stored, so the only check is that the sizes add up.
 *
 * trowel lists one entry per script (its bytecode; REL records add param1,
 * index and param2), and `convert --to json` (the generic structure dump)
 * is the listing of the table with sizes and offsets. The kind comes from
 * the name (.PRC/.REL); without one, from which table accounts exactly for
 * the file. trowel bids only when the sizes account for every byte.
 */
#include "format/cine/cine_gfx.h"

enum script_kind { SCRIPT_PRC, SCRIPT_REL };

static unsigned record_size(enum script_kind k)
{
    return k == SCRIPT_PRC ? 2 : 8;
}

static const char *kind_name(enum script_kind k)
{
    return k == SCRIPT_PRC ? "prc" : "rel";
}

/* Sums the table's sizes: false when the table does not fit the file.
 * *code is the bytecode total, *positive whether every size is above 0. */
static bool table_sum(trowel_reader *r, enum script_kind k, uint16_t *count, uint64_t *code,
                      bool *positive)
{
    *code = 0;
    *positive = true;
    if (trowel_reader_seek(r, 0) != TROWEL_OK || trowel_read_u16be(r, count) != TROWEL_OK)
        return false;
    if (2 + (uint64_t)*count * record_size(k) > trowel_reader_size(r))
        return false;
    /* In spans of whole records (detection reads this for every file that
     * is not clearly something else: a 5 MB file has up to 32,767 records). */
    size_t rec = record_size(k), per_span = TROWEL_READER_SPAN_MAX / rec;
    for (unsigned i = 0; i < *count;) {
        size_t n = *count - i < per_span ? *count - i : per_span;
        const uint8_t *b;
        if (trowel_reader_peek(r, n * rec, &b) != TROWEL_OK ||
            trowel_reader_skip(r, n * rec) != TROWEL_OK)
            return false;
        for (size_t j = 0; j < n; j++) {
            unsigned size = (unsigned)b[j * rec] << 8 | b[j * rec + 1];
            *code += size;
            *positive = *positive && size > 0;
        }
        i += (unsigned)n;
    }
    return true;
}

static bool fits_exactly(trowel_reader *r, enum script_kind k, bool *positive, uint16_t *count)
{
    uint64_t code;
    return table_sum(r, k, count, &code, positive) &&
           2 + (uint64_t)*count * record_size(k) + code == trowel_reader_size(r);
}

static int script_bid(trowel_reader *r)
{
    if (cine_is_szdd(r))
        return TROWEL_BID_NONE;
    bool prc_name = cine_name_has_ext(r->in, ".PRC"), rel_name = cine_name_has_ext(r->in, ".REL");
    bool positive;
    uint16_t count;
    if (prc_name || rel_name)
        return fits_exactly(r, prc_name ? SCRIPT_PRC : SCRIPT_REL, &positive, &count)
                   ? TROWEL_BID_WEAK + 5
                   : TROWEL_BID_NONE;
    /* Nameless: an empty table or empty scripts say too little. */
    for (int k = SCRIPT_PRC; k <= SCRIPT_REL; k++)
        if (fits_exactly(r, (enum script_kind)k, &positive, &count) && count > 0 && positive)
            return TROWEL_BID_WEAK;
    return TROWEL_BID_NONE;
}

static enum script_kind choose_kind(trowel_reader *r)
{
    bool positive;
    uint16_t count;
    if (cine_name_has_ext(r->in, ".REL"))
        return SCRIPT_REL;
    if (cine_name_has_ext(r->in, ".PRC"))
        return SCRIPT_PRC;
    return !fits_exactly(r, SCRIPT_PRC, &positive, &count) &&
                   fits_exactly(r, SCRIPT_REL, &positive, &count)
               ? SCRIPT_REL
               : SCRIPT_PRC;
}

static trowel_status add_script(trowel_archive *a, enum script_kind k, unsigned i,
                                const uint16_t rec[4], uint64_t offset)
{
    char name[32];
    snprintf(name, sizeof name, "script_%03u", i);
    trowel_entry e = {.name = name, .size = rec[0], .packed_size = rec[0], .offset = offset,
                      .method = "stored"};
    trowel_props *x;
    trowel_status s = trowel_archive_add(a, &e, &x);
    if (s != TROWEL_OK || k != SCRIPT_REL)
        return s;
    if ((s = trowel_props_add_uint(x, "param1", rec[1])) != TROWEL_OK ||
        (s = trowel_props_add_uint(x, "index", rec[2])) != TROWEL_OK)
        return s;
    return trowel_props_add_uint(x, "param2", rec[3]);
}

static trowel_status script_open(trowel_archive *a, trowel_reader *r)
{
    enum script_kind k = choose_kind(r);
    trowel_status s = trowel_reader_seek(r, 0);
    uint16_t count;
    if (s == TROWEL_OK)
        s = trowel_read_u16be(r, &count);
    if (s != TROWEL_OK)
        return trowel_fail(a->ctx, s, 0, "the script count is cut short");
    uint64_t table_end = 2 + (uint64_t)count * record_size(k);
    if (table_end > trowel_reader_size(r))
        return trowel_fail(a->ctx, TROWEL_ERR_TRUNCATED, trowel_reader_size(r),
                           "a table of %u %s records needs %llu bytes but the file has %llu",
                           count, kind_name(k), (unsigned long long)table_end,
                           (unsigned long long)trowel_reader_size(r));
    uint64_t offset = table_end;
    for (unsigned i = 0; i < count; i++) {
        uint16_t rec[4] = {0, 0, 0, 0};
        for (unsigned w = 0; w < record_size(k) / 2 && s == TROWEL_OK; w++)
            s = trowel_read_u16be(r, &rec[w]);
        if (s == TROWEL_OK && offset + rec[0] > trowel_reader_size(r))
            s = trowel_fail(a->ctx, TROWEL_ERR_TRUNCATED, 2 + (uint64_t)i * record_size(k),
                            "script %u (%u bytes at %llu) ends past the file's %llu bytes", i,
                            rec[0], (unsigned long long)offset,
                            (unsigned long long)trowel_reader_size(r));
        if (s == TROWEL_OK)
            s = add_script(a, k, i, rec, offset);
        if (s != TROWEL_OK)
            return s;
        offset += rec[0];
    }
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", "cine-script")) ||
        (s = trowel_props_add_uint(info, "version", 0)) ||
        (s = trowel_props_add_str(info, "kind", kind_name(k))) ||
        (s = trowel_props_add_uint(info, "scripts", count)) ||
        (s = trowel_props_add_uint(info, "bytecode_size", offset - table_end)) ||
        (s = trowel_props_add_uint(info, "trailing_bytes", trowel_reader_size(r) - offset)))
        return s;
    return TROWEL_OK;
}

const trowel_format trowel_format_cine_script = {
    .id = "cine-script",
    .family = "cinematique",
    .description = "Delphine Cinematique script table (.PRC procedures, .REL relations)",
    .extensions = ".prc .rel",
    .caps = TROWEL_CAP_LIST,
    .create_options = "",
    .convert_targets = "",
    .bid = script_bid,
    .open = script_open,
    .read_entry = cine_copy_entry,
};
