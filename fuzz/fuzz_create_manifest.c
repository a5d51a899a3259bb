/*
 * libFuzzer target: create from a manifest (`trowel create --manifest M`),
 * the JSON a user hands in. The manifest names its format (szdd, groff,
 * cine-part, vsif, vpp: each reads its own keys, and vpp's creation layout
 * and base= come from it). No file is read from disk: an open hook serves
 * every file the manifest names with a slice of fixed bytes chosen by its
 * name (so a base archive named by base= is not an archive, and is
 * refused), a scene (*.vcd) with one fixed scene's text, and every folder
 * is empty. Whatever builds must open again as an archive of
 * the format, list and read every entry. Nothing may leak on any path.
 * Seeds: the manifests of the samples `make run` makes
 * (fuzz/corpus/create_manifest/).
 */
#include "trowel/trowel.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes served for every file: a named file gets a slice of them, at
 * an offset and of a length made from its name, so entries differ. */
typedef struct served {
    uint8_t bytes[8192];
} served;

/* A scene's text, for a file named *.vcd: a scenes.image compiles each
 * one, and a slice of bytes would stop every build at its first scene. */
static const char SCENE[] = "// Choreo version 1\n"
                            "actor \"Kleiner\"\n{\n  channel \"audio\"\n  {\n"
                            "    event speak \"kleiner.welcome\"\n    {\n"
                            "      time 1.000000 4.000000\n      param \"kleiner.welcome\"\n"
                            "      fixedlength\n    }\n  }\n}\nfps 60\nsnap off\n";

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

static trowel_status serve_open(void *user, trowel_ctx *ctx, const char *base, const char *name,
                                trowel_input **out)
{
    (void)base;
    if (ends_with(name, ".vcd"))
        return trowel_input_open_memory(ctx, SCENE, sizeof SCENE - 1, name, out);
    const served *all = user;
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    size_t off = h % 1024, len = (h >> 10) % (sizeof all->bytes - off);
    return trowel_input_open_memory(ctx, all->bytes + off, len, name, out);
}

static trowel_status serve_list(void *user, trowel_ctx *ctx, const char *base, const char *dir,
                                trowel_list_each_fn each, void *each_user)
{
    (void)user, (void)ctx, (void)base, (void)dir, (void)each, (void)each_user;
    return TROWEL_OK; /* every folder is empty */
}

/* What was built opens as an archive of format f, and every entry reads. */
static void read_back(trowel_ctx *ctx, const trowel_format *f, const uint8_t *bytes, size_t n)
{
    trowel_input *in = NULL;
    if (trowel_input_open_memory(ctx, bytes, n, "fuzz.out", &in) != TROWEL_OK)
        return;
    trowel_archive *a = NULL;
    if (trowel_archive_open(ctx, in, f, &a) != TROWEL_OK)
        abort(); /* trowel wrote a file it cannot read */
    size_t count = trowel_archive_entry_count(a);
    for (size_t i = 0; i < count; i++) {
        trowel_sink *sink = NULL;
        if (trowel_sink_open_null(ctx, &sink) != TROWEL_OK)
            break;
        (void)trowel_archive_read_entry(a, i, sink);
        trowel_sink_discard(sink);
    }
    trowel_archive_close(a);
    trowel_input_close(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    trowel_ctx *ctx = text ? trowel_ctx_new() : NULL;
    if (!ctx) {
        free(text);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    trowel_ctx_set_mem_limit(ctx, 64u << 20);
    served files;
    for (size_t i = 0; i < sizeof files.bytes; i++)
        files.bytes[i] = (uint8_t)(i * 131u + (i >> 7) + 1u);
    trowel_ctx_set_io_hooks(ctx, &(trowel_io_hooks){serve_open, serve_list}, &files);

    const trowel_format *f = NULL;
    trowel_sink *out = NULL;
    if (trowel_manifest_format(ctx, text, &f) == TROWEL_OK &&
        trowel_sink_open_memory(ctx, &out) == TROWEL_OK) {
        trowel_create_params p = {.manifest_json = text, .base_dir = "fuzz"};
        if (trowel_create(ctx, f, &p, out) == TROWEL_OK) {
            size_t n = 0;
            const uint8_t *bytes = trowel_sink_data(out, &n);
            read_back(ctx, f, bytes, n);
        }
        trowel_sink_discard(out);
    }
    if (trowel_ctx_mem_in_use(ctx) != 0)
        abort(); /* nothing leaked on any path */
    trowel_ctx_free(ctx);
    free(text);
    return 0;
}
