/*
 * Creating Volition packfiles: create's -O options (the typed rows core
 * checks them against), the layout a new file gets (from the options, the
 * manifest that `extract --manifest` wrote, or the base archive of
 * -O base=), the sources' names and sizes, and the call into vpp_write.c,
 * with -O asm= handing the result to the ASM updater (asm_update.c). The
 * format's facts are in vpp.c's opening comment; the base's entries are
 * taken by vpp_base.c. This file uses the reading side only through the
 * public archive calls, so reading and writing stay one-way.
 */
#include "vpp.h"
#include "vpp_priv.h"

#include "core/source.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -O options (create's): core checks them against these rows first. The
 * layout's defaults come from the base or the manifest when there is one,
 * so the rows name none. */
const trowel_option_info vpp_options[] = {
    /* a number: check_layout (vpp_write.c) refuses the versions trowel does not write */
    {"version", "1|3|4|6|10|17",
     "packfile version (default 3, or the base's / manifest's; 1 is Red Faction's, stored files "
     "only)", "create", .type = TROWEL_OPTION_UINT, .min = 0, .max = 99},
    {"compressed", "0|1", "zlib (v17: LZ4) compression (default 0)", "create",
     .type = TROWEL_OPTION_BOOL},
    {"condensed", "0|1",
     "no 2048-byte padding between files (default 0); with compressed=1 the data is one stream",
     "create", .type = TROWEL_OPTION_BOOL},
    {"align", "1|16|64|2048", "condensed alignment (default 16)", "create",
     .type = TROWEL_OPTION_UINT, .min = 0, .max = VPP_SECTOR},
    {"level", "1..9", "zlib level (default 9; RFG .vpp_pc use 1)", "create",
     .type = TROWEL_OPTION_UINT, .min = 0, .max = 9}, /* 0 is taken as 1 */
    {"finish", "0|1", "end a compressed+condensed stream with its Adler-32 (default 0, as the game)",
     "create", .type = TROWEL_OPTION_BOOL},
    {"base", "ARCHIVE",
     "start from ARCHIVE's entries: sources replace the entries of their name (in place) or are "
     "added at the end; untouched entries are copied as stored where the mode allows",
     "create", .type = TROWEL_OPTION_STRING},
    {"delete", "NAME", "with base=, leave entry NAME out (repeatable)", "create",
     .type = TROWEL_OPTION_STRING},
    {"asm", "FILE.asm_pc",
     "also update FILE's container named after the output (base offset, read size, primitive "
     "sizes), rewritten in place together with it", "create", .type = TROWEL_OPTION_STRING},
    {0},
};

static bool json_get(json_object *m, const char *key, json_object **v)
{
    return m && json_object_object_get_ex(m, key, v);
}

/* The layout: -O options over the manifest over the base archive's over
 * the defaults (v3 compressed+condensed as RFG's str2_pc, level 9). */
static trowel_status creation_layout(trowel_ctx *ctx, const trowel_create_params *p,
                                     json_object *m, trowel_archive *base, vpp_layout *L)
{
    unsigned version = 3;
    json_object *v;
    if (base)
        version = ((const vpp_state *)base->priv)->h.version;
    if (json_get(m, "version", &v))
        version = (unsigned)json_object_get_int(v);
    trowel_option_values o =
        trowel_option_values_of(vpp_options, "create", p->options, p->option_count);
    if (trowel_option_given(&o, "version"))
        version = (unsigned)trowel_option_uint(&o, "version");
    if (base)
        vpp_layout_of(base, L);
    else
        *L = vpp_layout_default(version);
    L->version = version;
    if (json_get(m, "compressed", &v))
        L->compressed = json_object_get_boolean(v);
    if (json_get(m, "condensed", &v))
        L->condensed = json_object_get_boolean(v);
    if (json_get(m, "alignment", &v))
        L->alignment = (unsigned)json_object_get_int(v);
    if (json_get(m, "level", &v))
        L->level = json_object_get_int(v);
    if (json_get(m, "finished", &v))
        L->finish = json_object_get_boolean(v);
    if (json_get(m, "big_endian", &v))
        L->big_endian = json_object_get_boolean(v);
    if (json_get(m, "short_name", &v))
        L->short_name = json_object_get_string(v);
    if (json_get(m, "path", &v))
        L->path = json_object_get_string(v);
    if (json_get(m, "timestamp", &v))
        L->timestamp = (uint64_t)json_object_get_int64(v);
    if (json_get(m, "runtime", &v)) {
        const char *hex = json_object_get_string(v);
        for (size_t i = 0; i < sizeof L->runtime && hex[2 * i] && hex[2 * i + 1]; i++) {
            unsigned byte;
            if (sscanf(hex + 2 * i, "%2x", &byte) == 1)
                L->runtime[i] = (uint8_t)byte;
        }
    }
    static const char *const flags[] = {"compressed", "condensed", "finish"};
    bool *dst[] = {&L->compressed, &L->condensed, &L->finish};
    for (size_t k = 0; k < 3; k++)
        if (trowel_option_given(&o, flags[k]))
            *dst[k] = trowel_option_bool(&o, flags[k]);
    if (trowel_option_given(&o, "align"))
        L->alignment = (unsigned)trowel_option_uint(&o, "align");
    unsigned level = (unsigned)L->level;
    if (trowel_option_given(&o, "level"))
        level = (unsigned)trowel_option_uint(&o, "level");
    L->level = level < 1 ? 1 : (int)level;
    if (version == 4 && L->condensed)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "version 4 (Saints Row 2) packfiles cannot be condensed");
    if (version == 17)
        trowel_warn(ctx, TROWEL_NO_OFFSET,
                    "writing version 17 is experimental: no game has loaded one trowel wrote yet");
    return TROWEL_OK;
}

static trowel_status source_size(trowel_ctx *ctx, vpp_item *it)
{
    const trowel_source src = {it->name, it->path};
    if (trowel_source_size(ctx, &src, &it->size) != TROWEL_OK)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "%s: not a readable file",
                           it->path);
    return TROWEL_OK;
}

trowel_status vpp_create(trowel_ctx *ctx, const trowel_create_params *p, json_object *m,
                                trowel_sink *out)
{
    trowel_status s = TROWEL_OK;
    const char *base_path = trowel_options_get(p->options, p->option_count, "base");
    trowel_input *base_in = NULL;
    trowel_archive *base = NULL;
    if (base_path && (s = trowel_open_related(ctx, NULL, base_path, &base_in)) == TROWEL_OK)
        s = trowel_archive_open(ctx, base_in, trowel_format_find("vpp"), &base);
    vpp_layout L;
    vpp_pad *pads = NULL;
    json_object *base_pads = NULL;
    if (s == TROWEL_OK)
        s = creation_layout(ctx, p, m, base, &L);
    if (s == TROWEL_OK && base && !json_get(m, "padding", NULL))
        s = vpp_padding_of_base(ctx, p, base, &L, &base_pads, &pads);
    else if (s == TROWEL_OK)
        s = vpp_pads_from_manifest(ctx, m, &L, &pads);
    if (s == TROWEL_OK)
        s = vpp_check_deletions(ctx, p, base);
    size_t cap = p->source_count + (base ? base->entry_count : 0);
    vpp_item *items = NULL;
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, cap ? cap : 1, sizeof *items, &items);
    size_t n = 0;
    trowel_spill *spill = NULL;
    if (s == TROWEL_OK && base)
        s = vpp_base_items(ctx, p, base, &L, items, &n, &spill);
    /* Flat names (before v17): a/x.txt and b/x.txt would both be x.txt. */
    const char **stored = NULL;
    bool *keep = NULL;
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, cap ? cap : 1, sizeof *stored, &stored);
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, cap ? cap : 1, sizeof *keep, &keep);
    for (size_t i = 0; i < p->source_count && s == TROWEL_OK; i++)
        stored[i] = vpp_stored_name(&L, p->sources[i].name);
    if (s == TROWEL_OK)
        s = trowel_create_unique_names(ctx, p, stored, keep);
    for (size_t i = 0; i < p->source_count && s == TROWEL_OK; i++) {
        const char *name = stored[i];
        if (!keep[i] || (base && vpp_base_has(base, name) && !vpp_deleted(p, name)))
            continue; /* replaced in place above, or by a later source */
        items[n].name = name;
        items[n++].path = p->sources[i].path;
    }
    for (size_t i = 0; i < n && s == TROWEL_OK; i++)
        if (items[i].path)
            s = source_size(ctx, &items[i]);
    /* -O asm=FILE: the caller opened FILE as the companion (asm_update.c). */
    bool with_asm = trowel_options_get(p->options, p->option_count, "asm") != NULL;
    const trowel_create_job *job = (const trowel_create_job *)(const void *)p;
    if (s == TROWEL_OK && with_asm && !job->companion_in)
        s = trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                        "-O asm=FILE needs FILE given as the companion "
                        "(trowel_create_with_companion; the trowel CLI does it)");
    vpp_written written = {0};
    if (s == TROWEL_OK)
        s = vpp_write(ctx, &L, items, n, out, &written);
    if (s == TROWEL_OK && with_asm)
        s = vol_asm_after_vpp_write(ctx, job, out, items, n, &written);
    trowel_mem_free(ctx, items);
    trowel_mem_free(ctx, stored);
    trowel_mem_free(ctx, keep);
    vpp_pads_free(ctx, pads, L.pad_count);
    json_object_put(base_pads);
    trowel_spill_close(spill);
    trowel_archive_close(base);
    trowel_input_close(base_in);
    return s;
}

