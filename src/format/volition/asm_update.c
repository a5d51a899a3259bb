/*
 * Updating an ASM after its .str2_pc was rebuilt. The game reads a str2 as
 * its ASM container says: from the base offset (the str2's data start), the
 * total compressed read size in one read, then each primitive's CPU and GPU
 * sizes in primitive order. A stale container crashes the game or loads
 * garbage, so every one of those numbers is taken from the rebuilt str2.
 *
 * The str2 must hold exactly the container's primitives, in primitive order,
 * each primitive's CPU file (its own name) followed by its GPU file (the
 * name with the extension's leading 'c' turned to 'g': .cpeg_pc ->
 * .gpeg_pc) when it has one. Anything else (a missing, extra, renamed or
 * reordered file, a GPU file that appeared or vanished) is refused naming
 * the first difference, and the model is left as it was.
 *
 * The size list: v5 stores only the non-zero sizes (CPU, GPU per primitive)
 * and sets container flag 0x80 when it stores any; v11/v12 store both sizes
 * of every primitive.
 */
#include "asm.h"
#include "core/module.h"
#include "core/sink.h"
#include "vpp.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? *a + 32 : *a;
        char y = *b >= 'A' && *b <= 'Z' ? *b + 32 : *b;
        if (x != y)
            return false;
    }
    return *a == *b;
}

/* Whether gpu is cpu's GPU file: same but for 'c' -> 'g' after the last dot. */
static bool is_gpu_of(const char *cpu, const char *gpu)
{
    const char *dot = strrchr(cpu, '.');
    size_t n = strlen(cpu);
    if (!dot || (dot[1] != 'c' && dot[1] != 'C') || strlen(gpu) != n)
        return false;
    size_t at = (size_t)(dot - cpu) + 1;
    return strncmp(cpu, gpu, at) == 0 && (gpu[at] == 'g' || gpu[at] == 'G') &&
           same_name(cpu + at + 1, gpu + at + 1);
}

static trowel_status mismatch(trowel_ctx *ctx, const vol_asm_container *c, const char *fmt, ...)
    TROWEL_PRINTF(3, 4);

static trowel_status mismatch(trowel_ctx *ctx, const vol_asm_container *c, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                       "the str2's files do not match ASM container '%s': %s", c->name, what);
}

/* Matches the files to the primitives; sizes[2i], sizes[2i+1] get the CPU
 * and GPU sizes of primitive i. */
static trowel_status match_files(trowel_ctx *ctx, const vol_asm_container *c,
                                 const vol_str2_facts *f, uint64_t *sizes)
{
    size_t k = 0;
    for (uint16_t i = 0; i < c->prim_count; i++) {
        const vol_asm_primitive *p = &c->prims[i];
        if (k >= f->file_count)
            return mismatch(ctx, c, "primitive '%s' has no file in the str2", p->name);
        if (!same_name(f->files[k].name, p->name))
            return mismatch(ctx, c, "primitive '%s' is where the str2 has '%s' (the files must "
                            "be the primitives, in order)", p->name, f->files[k].name);
        sizes[2 * i] = f->files[k++].size;
        sizes[2 * i + 1] = 0;
        bool has_gpu = k < f->file_count && is_gpu_of(p->name, f->files[k].name);
        if (has_gpu)
            sizes[2 * i + 1] = f->files[k++].size;
        else if (p->gpu_size != 0)
            return mismatch(ctx, c, "primitive '%s' has a GPU file in the ASM, none follows it "
                            "in the str2", p->name);
    }
    if (k < f->file_count)
        return mismatch(ctx, c, "the str2's file '%s' is not a primitive of the container",
                        f->files[k].name);
    for (size_t i = 0; i < 2u * c->prim_count; i++)
        if (sizes[i] > UINT32_MAX)
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "'%s' is over 4 GiB: an ASM records sizes in 32 bits",
                               c->prims[i / 2].name);
    return TROWEL_OK;
}

trowel_status vol_asm_update(trowel_ctx *ctx, vol_asm *m, const vol_str2_facts *f)
{
    vol_asm_container *c = vol_asm_find(m, f->name);
    if (!c)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "the ASM has no container named after '%s'", f->name);
    if (f->data_start > UINT32_MAX || f->read_size > UINT32_MAX)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "'%s' is over 4 GiB: an ASM records its offsets in 32 bits", f->name);
    uint64_t *sizes;
    trowel_status s = trowel_mem_new_zeroed(ctx, 2u * c->prim_count + 1, sizeof *sizes, &sizes);
    if (s != TROWEL_OK)
        return s;
    s = match_files(ctx, c, f, sizes);
    uint32_t *list = NULL, n = 0;
    if (s == TROWEL_OK)
        s = trowel_mem_new_zeroed(ctx, 2u * c->prim_count + 1, sizeof *list, &list);
    for (uint32_t i = 0; s == TROWEL_OK && i < 2u * c->prim_count; i++)
        if (m->version >= 11 || sizes[i] != 0)
            list[n++] = (uint32_t)sizes[i];
    if (s == TROWEL_OK) { /* nothing can fail from here: the model changes */
        for (uint16_t i = 0; i < c->prim_count; i++) {
            c->prims[i].cpu_size = (uint32_t)sizes[2 * i];
            c->prims[i].gpu_size = (uint32_t)sizes[2 * i + 1];
        }
        c->base_offset = (uint32_t)f->data_start;
        c->read_size = (uint32_t)f->read_size;
        if (m->version < 11)
            c->flags = (uint16_t)(n ? c->flags | VOL_ASM_FLAG_SIZE_LIST
                                    : c->flags & ~VOL_ASM_FLAG_SIZE_LIST);
        trowel_mem_free(ctx, c->sizes);
        c->sizes = list;
        c->size_count = n;
        list = NULL;
    }
    trowel_mem_free(ctx, list);
    trowel_mem_free(ctx, sizes);
    return s;
}

trowel_status vol_str2_facts_of(trowel_archive *a, const char *name, vol_str2_facts *f,
                                vol_str2_file **files)
{
    *files = NULL;
    const trowel_prop *start = trowel_props_find(a->info, "data_start");
    const trowel_prop *packed = trowel_props_find(a->info, "compressed_size");
    const trowel_prop *raw = trowel_props_find(a->info, "data_size");
    if (strcmp(a->fmt->id, "vpp") != 0 || !start || (!packed && !raw))
        return trowel_fail(a->ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "'%s' is not a packfile whose data start and size are known", name);
    vol_str2_file *list;
    trowel_status s = trowel_mem_new_zeroed(a->ctx, a->entry_count ? a->entry_count : 1,
                                            sizeof *list, &list);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < a->entry_count; i++)
        list[i] = (vol_str2_file){a->entries[i].name, a->entries[i].size};
    *f = (vol_str2_facts){.name = name, .data_start = start->u,
                          .read_size = packed ? packed->u : raw->u, .files = list,
                          .file_count = a->entry_count};
    *files = list;
    return TROWEL_OK;
}

trowel_status vol_asm_rewrite(trowel_ctx *ctx, trowel_input *asm_in, const vol_str2_facts *f,
                              trowel_sink *out)
{
    trowel_reader r;
    trowel_reader_init(&r, ctx, asm_in);
    vol_asm *m;
    trowel_status s = vol_asm_read(ctx, &r, &m);
    if (s == TROWEL_OK)
        s = vol_asm_update(ctx, m, f);
    if (s == TROWEL_OK)
        s = vol_asm_write(ctx, m, out);
    vol_asm_free(ctx, m);
    return s;
}

/* ----------------------------------------------- create -t vpp -O asm= */

trowel_status vol_asm_after_vpp_write(trowel_ctx *ctx, const trowel_create_job *job,
                                      const trowel_sink *out, const vpp_item *items, size_t n,
                                      const vpp_written *w)
{
    const char *slash = strrchr(out->name, '/');
    const char *name = slash ? slash + 1 : out->name;
    vol_str2_file *files;
    trowel_status s = trowel_mem_new_zeroed(ctx, n ? n : 1, sizeof *files, &files);
    if (s != TROWEL_OK)
        return s;
    for (size_t i = 0; i < n; i++)
        files[i] = (vol_str2_file){items[i].name, items[i].size};
    vol_str2_facts f = {.name = name, .data_start = w->data_start,
                        .read_size = w->compressed_size, .files = files, .file_count = n};
    const char *purpose = trowel_mem_purpose(ctx, "updating the ASM");
    s = vol_asm_rewrite(ctx, job->companion_in, &f, job->companion_out);
    trowel_mem_purpose(ctx, purpose);
    trowel_mem_free(ctx, files);
    return s;
}
