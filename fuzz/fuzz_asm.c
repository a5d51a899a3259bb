/*
 * libFuzzer target: the Volition ASM reader (v5, v11, v12) through the
 * public archive API as the CLI drives it (see archive_fuzz.h), plus the
 * JSON form: whatever opens whole must convert to JSON and build back from
 * it to the very same bytes; what opens damaged (cut short: the containers
 * before the fault) must build a whole ASM of those containers. The
 * converted document must open with the head json-c prints for the same
 * archive (the streaming head of src/core/archive_json_head.c, byte for
 * byte).
 */
#include "archive_fuzz.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a damaged file's JSON builds is a whole ASM of the containers that
 * were read. */
static void check_whole(const uint8_t *data, size_t size, size_t containers)
{
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    if (ctx && trowel_input_open_memory(ctx, data, size, "rebuilt.asm_pc", &in) == TROWEL_OK) {
        if (trowel_archive_open(ctx, in, trowel_format_find("asm"), &a) != TROWEL_OK ||
            trowel_archive_damaged(a) || trowel_archive_entry_count(a) != containers)
            abort();
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

/* The n bytes of JSON at json open with json-c's head of a. */
static void check_head(trowel_archive *a, const char *json, size_t n)
{
    char *head = NULL;
    if (trowel_archive_to_json(a, TROWEL_JSON_INFO | TROWEL_JSON_ENTRIES | TROWEL_JSON_PRETTY,
                               &head) != TROWEL_OK)
        return; /* out of memory: nothing to compare */
    size_t h = strlen(head);
    if (h < 2 || n < h - 2 || memcmp(json, head, h - 2) != 0)
        abort();
    trowel_free(head);
}

static void json_round_trip(const uint8_t *data, size_t size)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return;
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    trowel_sink *js = NULL, *bin = NULL;
    if (trowel_input_open_memory(ctx, data, size, "fuzz.asm_pc", &in) == TROWEL_OK &&
        trowel_archive_open(ctx, in, trowel_format_find("asm"), &a) == TROWEL_OK &&
        trowel_sink_open_memory(ctx, &js) == TROWEL_OK &&
        trowel_convert(ctx, a, "json", NULL, 0, js) == TROWEL_OK &&
        trowel_sink_write(js, "", 1) == TROWEL_OK) { /* a NUL for the parser */
        size_t n = 0;
        const char *json = (const char *)trowel_sink_data(js, &n);
        check_head(a, json, n);
        trowel_create_params p = {.manifest_json = json};
        if (trowel_sink_open_memory(ctx, &bin) == TROWEL_OK &&
            trowel_create(ctx, trowel_format_find("asm"), &p, bin) == TROWEL_OK) {
            size_t m = 0;
            const uint8_t *back = trowel_sink_data(bin, &m);
            if (trowel_archive_damaged(a))
                check_whole(back, m, trowel_archive_entry_count(a));
            else if (m != size || memcmp(back, data, size) != 0)
                abort(); /* what was read must write back unchanged */
        }
    }
    trowel_sink_discard(bin);
    trowel_sink_discard(js);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_round_trip(data, size);
    return fuzz_archive(data, size, "asm", "fuzz.asm_pc");
}
