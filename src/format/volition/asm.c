/*
 * Volition asset-assembler files (.asm_pc), versions 5 (Red Faction
 * Guerrilla), 11 (Saints Row: The Third) and 12 (Saints Row IV, Gat out of
 * Hell): the `asm` format. The layout is in asm_model.c, the JSON form in
 * asm_json.c, the update after a repack in asm_update.c.
 *
 * An ASM describes the streaming containers of a game (one per .str2_pc):
 * `list` shows one entry per container (size: the bytes its primitives
 * load, CPU + GPU; packed size: the str2's total compressed read size;
 * offset: the str2's data start; extra keys: type, flags and the names of
 * its primitives). The file holds no data of its own, so its entries cannot
 * be extracted. `convert --to json` adds every field under "asm", and
 * `create -t asm --manifest THAT.json` writes the same bytes back. `verify`
 * checks that each container's size list matches its primitives. A file
 * cut short (or damaged in a container) lists the containers before the
 * fault, warns naming the one at fault, and is marked damaged.
 */
#include "asm.h"
#include "core/json_write.h"
#include "core/module.h"

#include <string.h>

static int asm_bid(trowel_reader *r)
{
    uint32_t magic;
    uint16_t version;
    if (trowel_read_u32le(r, &magic) != TROWEL_OK || magic != VOL_ASM_MAGIC ||
        trowel_read_u16le(r, &version) != TROWEL_OK)
        return TROWEL_BID_NONE;
    return version == 5 || version == 11 || version == 12 ? TROWEL_BID_STRONG : TROWEL_BID_MAGIC;
}

/* names: the container's primitives' names, kept by the model as long as
 * the archive is open. */
static trowel_status add_container(trowel_archive *a, const vol_asm_container *c,
                                   const char *const *names)
{
    uint64_t load = 0;
    for (uint16_t i = 0; i < c->prim_count; i++)
        load += (uint64_t)c->prims[i].cpu_size + c->prims[i].gpu_size;
    trowel_entry e = {.name = c->name, .size = load, .packed_size = c->read_size,
                      .offset = c->base_offset, .method = "container", .flags = c->flags};
    trowel_props *extra;
    trowel_status s = trowel_archive_add(a, &e, &extra);
    if (s == TROWEL_OK && !(s = trowel_props_add_uint(extra, "type", c->type)) &&
        !(s = trowel_props_add_hex(extra, "flags", c->flags)))
        s = trowel_props_add_list_kept(extra, "primitives", names, c->prim_count);
    return s;
}

static trowel_status asm_open(trowel_archive *a, trowel_reader *r)
{
    vol_asm *m;
    trowel_status s = vol_asm_read_damaged(a->ctx, r, &m);
    if (s != TROWEL_OK)
        return s;
    a->priv = m;
    if (m->damaged) {
        /* The containers before the fault are listed; the file is damaged. */
        trowel_warn(a->ctx, m->damage.offset, "%s", m->damage.message);
        trowel_archive_mark_damaged(a);
    }
    uint64_t prims = 0;
    for (uint16_t i = 0; i < m->container_count; i++)
        prims += m->containers[i].prim_count;
    trowel_props *info = a->info;
    if ((s = trowel_props_add_str(info, "format", "asm")) ||
        (s = trowel_props_add_uint(info, "version", m->version)) ||
        (s = trowel_props_add_uint(info, "containers", m->container_count)) ||
        (s = trowel_props_add_uint(info, "primitives", prims)))
        return s;
    if (m->version >= 11 &&
        ((s = trowel_props_add_uint(info, "allocator_types", m->remap_count[VOL_ASM_ALLOCATORS])) ||
         (s = trowel_props_add_uint(info, "primitive_types", m->remap_count[VOL_ASM_PRIMITIVE_TYPES])) ||
         (s = trowel_props_add_uint(info, "container_types", m->remap_count[VOL_ASM_CONTAINER_TYPES]))))
        return s;
    const char **names;
    if ((s = trowel_mem_new_zeroed(a->ctx, prims ? prims : 1, sizeof *names, &names)) != TROWEL_OK)
        return s;
    m->prim_names = names;
    for (uint16_t i = 0; i < m->container_count && s == TROWEL_OK; i++) {
        const vol_asm_container *c = &m->containers[i];
        for (uint16_t k = 0; k < c->prim_count; k++)
            names[k] = c->prims[k].name;
        s = add_container(a, c, names);
        names += c->prim_count;
    }
    return s;
}

static trowel_status asm_read_entry(trowel_archive *a, size_t index, trowel_sink *out)
{
    (void)out;
    return trowel_fail(a->ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                       "'%s' is a container description; an ASM file holds no data to "
                       "extract ('convert --to json' shows every field)",
                       a->entries[index].name);
}

/* The size list a container should store, from its primitives' sizes. */
static uint32_t expected_sizes(uint16_t version, const vol_asm_container *c, uint32_t *out)
{
    uint32_t n = 0;
    for (uint16_t i = 0; i < c->prim_count; i++) {
        uint32_t pair[2] = {c->prims[i].cpu_size, c->prims[i].gpu_size};
        for (int k = 0; k < 2; k++)
            if (version >= 11 || ((c->flags & VOL_ASM_FLAG_SIZE_LIST) && pair[k] != 0)) {
                if (out)
                    out[n] = pair[k];
                n++;
            }
    }
    return n;
}

static trowel_status asm_verify_entry(trowel_archive *a, size_t index)
{
    const vol_asm *m = a->priv;
    const vol_asm_container *c = &m->containers[index];
    uint32_t n = expected_sizes(m->version, c, NULL);
    uint32_t *want;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, n ? n : 1, sizeof *want, &want);
    if (s != TROWEL_OK)
        return s;
    expected_sizes(m->version, c, want);
    trowel_set_entry(a->ctx, c->name);
    if (n != c->size_count) {
        trowel_fail(a->ctx, TROWEL_ERR_VERIFY, TROWEL_NO_OFFSET,
                    "the size list holds %u sizes; its primitives give %u", c->size_count, n);
        trowel_archive_report(a);
    } else {
        for (uint32_t i = 0; i < n; i++)
            if (want[i] != c->sizes[i]) {
                trowel_fail(a->ctx, TROWEL_ERR_VERIFY, TROWEL_NO_OFFSET,
                            "size %u of the list is %u; its primitives give %u", i, c->sizes[i],
                            want[i]);
                trowel_archive_report(a);
                break;
            }
    }
    trowel_mem_free(a->ctx, want);
    return TROWEL_OK;
}

/* A damaged file fails verify with what open found. */
static trowel_status asm_verify(trowel_archive *a)
{
    const vol_asm *m = a->priv;
    if (m->damaged) {
        trowel_fail(a->ctx, m->damage.status, m->damage.offset, "%s", m->damage.message);
        trowel_archive_report(a);
    }
    return TROWEL_OK;
}

static trowel_status asm_convert_json(trowel_archive *a, trowel_json_writer *w)
{
    trowel_jw_key(w, "asm");
    vol_asm_write_json(a->priv, w);
    return w->s;
}

/* The manifest text is read here, streaming (the archive layer passes no
 * tree: create_reads_manifest_text). */
static trowel_status asm_create(trowel_ctx *ctx, const trowel_create_params *p,
                                struct json_object *manifest, trowel_sink *out)
{
    (void)manifest;
    trowel_status s = TROWEL_OK; /* it takes no options: core refused any given */
    if (!p->manifest_json)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "an ASM is built from its JSON: give --manifest X.json made by "
                           "'trowel convert --to json X.asm_pc'");
    vol_asm *m;
    if ((s = vol_asm_read_json(ctx, p->manifest_json, strlen(p->manifest_json), &m)) != TROWEL_OK)
        return s;
    s = vol_asm_write(ctx, m, out);
    vol_asm_free(ctx, m);
    return s;
}

static void asm_close(trowel_archive *a)
{
    vol_asm_free(a->ctx, a->priv);
}

const trowel_format trowel_format_asm = {
    .id = "asm",
    .family = "volition",
    .description = "Volition asset-assembler file (ASM) v5, v11, v12: streaming containers of "
                   "Red Faction Guerrilla, Saints Row: The Third, Saints Row IV",
    .extensions = ".asm_pc",
    .caps = TROWEL_CAP_VERIFY | TROWEL_CAP_CREATE | TROWEL_CAP_ENTRIES, /* no entry holds data */
    .create_options = "",
    .convert_targets = "",
    .bid = asm_bid,
    .open = asm_open,
    .read_entry = asm_read_entry,
    .verify_entry = asm_verify_entry,
    .verify = asm_verify,
    .convert_json_stream = asm_convert_json,
    .create = asm_create,
    .create_reads_manifest_text = true,
    .close = asm_close,
};
