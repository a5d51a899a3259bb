/*
 * create -t scumm-cost reads its folder (costume.json and the pictures it
 * names, as convert --to png writes them) through the context's open hook,
 * like every create source (issue 21, B4): a program that serves the
 * files from memory gets the same COST block as a create from the folder
 * on disk, and no file is read behind the hook's back.
 */
#include "cost_sample.h"
#include "files.h"
#include "test.h"
#include "trowel/trowel.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

typedef struct served_file {
    char name[600]; /* "mem/<file>" */
    char path[600]; /* where convert wrote it */
    bytes b;
} served_file;

typedef struct shelf {
    served_file files[16];
    size_t n;
    int served, refused;
} shelf;

static trowel_status serve(void *user, trowel_ctx *ctx, const char *base, const char *name,
                           trowel_input **out)
{
    (void)base;
    shelf *sh = user;
    for (size_t i = 0; i < sh->n; i++)
        if (strcmp(sh->files[i].name, name) == 0) {
            sh->served++;
            return trowel_input_open_memory(ctx, sh->files[i].b.data, sh->files[i].b.size, name,
                                            out);
        }
    sh->refused++;
    return TROWEL_ERR_IO;
}

/* convert --to png of the sample costume into dir. */
static void convert_sample(const char *dir)
{
    uint8_t cost[256];
    size_t n = make_cost(cost);
    trowel_ctx *ctx = trowel_ctx_new();
    REQUIRE(ctx);
    trowel_input *in;
    trowel_archive *a;
    trowel_outdir *od;
    REQUIRE(trowel_input_open_memory(ctx, cost, n, "actor.cost", &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, trowel_format_find("scumm-cost"), &a) == TROWEL_OK);
    REQUIRE(trowel_outdir_open(ctx, dir, 0, &od) == TROWEL_OK);
    CHECK(trowel_convert_folder(ctx, a, "png", NULL, 0, od) == TROWEL_OK);
    trowel_outdir_close(od);
    trowel_archive_close(a);
    trowel_input_close(in);
    trowel_ctx_free(ctx);
}

/* Every file of dir onto the shelf, as "mem/<file>". */
static void shelve_folder(shelf *sh, const char *dir)
{
    DIR *d = opendir(dir);
    REQUIRE(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        REQUIRE(sh->n < sizeof sh->files / sizeof sh->files[0]);
        served_file *f = &sh->files[sh->n++];
        snprintf(f->name, sizeof f->name, "mem/%s", e->d_name);
        snprintf(f->path, sizeof f->path, "%s/%s", dir, e->d_name);
        f->b = read_file(f->path);
        CHECK(f->b.data != NULL);
    }
    closedir(d);
}

/* create -t scumm-cost from the shelf's files, by name (mem/...) or by
 * their paths on disk; the block into *out (malloc'd). */
static trowel_status create_cost(shelf *sh, bool from_memory, bytes *out)
{
    trowel_ctx *ctx = trowel_ctx_new();
    if (!ctx)
        return TROWEL_ERR_NOMEM;
    if (from_memory)
        trowel_ctx_set_open_hook(ctx, serve, sh);
    trowel_source src[16];
    for (size_t i = 0; i < sh->n; i++)
        src[i] = (trowel_source){sh->files[i].name + 4,
                                 from_memory ? sh->files[i].name : sh->files[i].path};
    trowel_sink *s;
    trowel_status st = trowel_sink_open_memory(ctx, &s);
    trowel_create_params p = {.sources = src, .source_count = sh->n};
    if (st == TROWEL_OK)
        st = trowel_create(ctx, trowel_format_find("scumm-cost"), &p, s);
    size_t len = 0;
    const uint8_t *d = st == TROWEL_OK ? trowel_sink_data(s, &len) : NULL;
    out->data = d ? malloc(len ? len : 1) : NULL;
    out->size = out->data ? len : 0;
    if (out->data)
        memcpy(out->data, d, len);
    if (st != TROWEL_OK)
        fprintf(stderr, "  create: %s\n", trowel_ctx_last_error(ctx)->message);
    trowel_sink_discard(s);
    trowel_ctx_free(ctx);
    return st;
}

static void test_cost_create_reads_its_folder_through_the_hook(void)
{
    const char *tmp = getenv("TMPDIR");
    char dir[256];
    snprintf(dir, sizeof dir, "%s/trowel-cost-hook-XXXXXX", tmp ? tmp : "/tmp");
    REQUIRE(mkdtemp(dir));
    convert_sample(dir);
    shelf sh = {0};
    shelve_folder(&sh, dir);
    size_t pictures = 0;
    for (size_t i = 0; i < sh.n; i++)
        pictures += strncmp(sh.files[i].name, "mem/pic_", 8) == 0;
    CHECK_EQ_U64(pictures, 1);
    bytes disk, memory;
    CHECK(create_cost(&sh, false, &disk) == TROWEL_OK);
    CHECK_EQ_U64(sh.served, 0);
    CHECK(create_cost(&sh, true, &memory) == TROWEL_OK);
    CHECK_EQ_U64(sh.served, 1 + pictures); /* costume.json, then each picture it names */
    CHECK_EQ_U64(sh.refused, 0);
    CHECK(disk.data && memory.data && disk.size == memory.size &&
          memcmp(disk.data, memory.data, disk.size) == 0);
    uint8_t cost[256];
    size_t n = make_cost(cost);
    CHECK(memory.data && memory.size == n && memcmp(memory.data, cost, n) == 0); /* round trip */
    free(disk.data);
    free(memory.data);
    for (size_t i = 0; i < sh.n; i++) {
        free(sh.files[i].b.data);
        remove(sh.files[i].path);
    }
    rmdir(dir);
}

TEST_MAIN(TEST(test_cost_create_reads_its_folder_through_the_hook))
