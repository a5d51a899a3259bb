/*
 * libFuzzer target: a PID texture directory and its page file. The input is
 * split: u16 LE n, then n bytes of PID, then the page file; bit 15 of n
 * says whether the page file is the compressed .spz (set) or an expanded
 * .swp. Both are written into a private folder (the PID finds its sibling
 * by path) and read through the archive API as the CLI would (see
 * archive_fuzz.h): info, JSON, every entry, verify.
 */
#include "archive_fuzz.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char folder[64];

static void write_all(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (n && fwrite(p, 1, n, f) != n)
        abort();
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    if (!folder[0]) {
        snprintf(folder, sizeof folder, "/tmp/fuzz-tres-pid-XXXXXX");
        if (!mkdtemp(folder))
            abort();
    }
    unsigned head = data[0] | data[1] << 8;
    size_t n = head & 0x7FFF;
    bool compressed = head & 0x8000;
    data += 2;
    size -= 2;
    if (n > size)
        n = size;
    char pid[128], spz[128], swp[128];
    snprintf(pid, sizeof pid, "%s/level-130.pid", folder);
    snprintf(spz, sizeof spz, "%s/level-130.spz", folder);
    snprintf(swp, sizeof swp, "%s/level-130.swp", folder);
    unlink(spz);
    unlink(swp);
    write_all(pid, data, n);
    write_all(compressed ? spz : swp, data + n, size - n);

    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return 0;
    trowel_ctx_set_mem_limit(ctx, 16u << 20);
    trowel_input *in = NULL;
    trowel_archive *a = NULL;
    if (trowel_input_open_file(ctx, pid, &in) == TROWEL_OK &&
        trowel_archive_open(ctx, in, trowel_format_find("tres-pid"), &a) == TROWEL_OK) {
        char *json = NULL;
        if (trowel_archive_to_json(a, TROWEL_JSON_INFO | TROWEL_JSON_ENTRIES, &json) == TROWEL_OK)
            trowel_free(json);
        fuzz_expand_entries(ctx, a);
        trowel_archive_verify(a, NULL, NULL);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
    return 0;
}
