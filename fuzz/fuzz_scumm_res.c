/*
 * libFuzzer target: scumm-res, both files at once. The input is a u32 LE
 * length n, then n bytes of index, then the data file. The index is opened
 * (named F.000) with the open hook serving the data file from memory as
 * F.001, then the data file the other way round; each archive goes through
 * what the CLI does (archive_fuzz.h) and every entry's room palette is
 * asked for. Nothing may crash, leak, hang or read out of bounds.
 */
#include "archive_fuzz.h"
#include "format/scumm/scumm.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct partner {
    const char *name;
    const uint8_t *data;
    size_t size;
} partner;

static trowel_status serve(void *user, trowel_ctx *ctx, const char *base, const char *name,
                           trowel_input **out)
{
    const partner *p = user;
    (void)base;
    if (strcmp(name, p->name) != 0)
        return TROWEL_ERR_IO;
    return trowel_input_open_memory(ctx, p->data, p->size, name, out);
}

static void one_side(const uint8_t *mine, size_t mine_size, const char *my_name,
                     const partner *other)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    trowel_ctx_set_open_hook(ctx, serve, (void *)other);
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    if (trowel_input_open_memory(ctx, mine, mine_size, my_name, &in) == TROWEL_OK &&
        trowel_archive_open(ctx, in, trowel_format_find("scumm-res"), &a) == TROWEL_OK) {
        char *json = NULL;
        if (trowel_archive_to_json(a, TROWEL_JSON_INFO | TROWEL_JSON_ENTRIES, &json) == TROWEL_OK)
            trowel_free(json);
        fuzz_expand_entries(ctx, a);
        trowel_archive_verify(a, NULL, NULL);
        uint8_t rgb[768];
        for (size_t i = 0; i < trowel_archive_entry_count(a); i++)
            (void)trowel_scumm_room_palette(a, i, rgb);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    size_t n = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 |
               (size_t)data[3] << 24;
    if (n > size - 4)
        n = size - 4;
    const uint8_t *index = data + 4, *rest = data + 4 + n;
    size_t rest_size = size - 4 - n;
    partner data_file = {"F.001", rest, rest_size}, index_file = {"F.000", index, n};
    one_side(index, n, "F.000", &data_file);
    one_side(rest, rest_size, "F.001", &index_file);
    return 0;
}
