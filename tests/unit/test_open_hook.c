/*
 * The context's open hook serves sibling files (here VOL.CNF's volume) from
 * memory: the format asks by the name it found, beside the input it reads;
 * a hook that declines leaves the volume missing, as on disk; NULL restores
 * the default (trowel_open_beside). Folders are listed through the io
 * hooks' list function, or by default from the file system beside the
 * input (trowel_list_beside), subfolders told from files.
 */
#include "files.h"
#include "open_hook_server.h"
#include "test.h"
#include "trowel/trowel.h"

#include "core/module.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void put_be16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    put_be16(p, v >> 16);
    put_be16(p + 2, v & 0xffff);
}

/* VOL.CNF: one volume PROCS00 of part_size bytes listing HELLO.TXT. */
static size_t build_volcnf(uint8_t *f, uint32_t part_size)
{
    memset(f, 0, 64);
    put_be16(f, 1);
    put_be16(f + 2, 20);
    memcpy(f + 4, "PROCS00", 7);
    put_be16(f + 4 + 14, 1);
    put_be32(f + 4 + 16, part_size);
    put_be32(f + 24, 11);
    memcpy(f + 28, "HELLO   TXT", 11);
    return 28 + 11;
}

static void test_open_hook_serves_volcnf_volume_from_memory(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    char *dir = make_temp_dir();
    REQUIRE(dir);
    char path[512];
    snprintf(path, sizeof path, "%s/HELLO.TXT", dir);
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    fputs("hello from memory\n", f);
    fclose(f);
    /* The part file, made in memory by trowel's own writer. */
    trowel_sink *part;
    REQUIRE(trowel_sink_open_memory(ctx, &part) == TROWEL_OK);
    trowel_source src = {"HELLO.TXT", path};
    trowel_create_params p = {.sources = &src, .source_count = 1};
    REQUIRE(trowel_create(ctx, trowel_format_find("cine-part"), &p, part) == TROWEL_OK);
    unlink(path);
    rmdir(dir);
    size_t part_size;
    const uint8_t *part_bytes = trowel_sink_data(part, &part_size);

    uint8_t cnf[64];
    size_t n = build_volcnf(cnf, (uint32_t)part_size);
    server sv = {.serves = "PROCS00", .data = part_bytes, .size = part_size};
    trowel_ctx_set_open_hook(ctx, serve, &sv);
    trowel_input *in;
    trowel_archive *a = NULL;
    REQUIRE(trowel_input_open_memory(ctx, cnf, n, "game/VOL.CNF", &in) == TROWEL_OK);
    CHECK(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    if (a) {
        CHECK_EQ_U64(trowel_archive_entry_count(a), 1);
        trowel_sink *out;
        REQUIRE(trowel_sink_open_memory(ctx, &out) == TROWEL_OK);
        CHECK(trowel_archive_read_entry(a, 0, out) == TROWEL_OK);
        size_t got;
        const uint8_t *d = trowel_sink_data(out, &got);
        CHECK(got == 18 && memcmp(d, "hello from memory\n", 18) == 0);
        trowel_sink_discard(out);
        CHECK(sv.calls >= 1);
        CHECK_STR(sv.base, "game/VOL.CNF");
        CHECK_STR(sv.name, "PROCS00");
    }
    trowel_archive_close(a);
    a = NULL;
    /* Declined: the volume is missing, as it would be on disk. */
    sv.data = NULL;
    CHECK(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    if (a) {
        trowel_sink *out;
        REQUIRE(trowel_sink_open_memory(ctx, &out) == TROWEL_OK);
        CHECK(trowel_archive_read_entry(a, 0, out) == TROWEL_ERR_IO);
        CHECK(strstr(trowel_ctx_last_error(ctx)->message, "not beside VOL.CNF") != NULL);
        trowel_sink_discard(out);
    }
    trowel_archive_close(a);
    /* NULL: back to the file system (no game/ folder here). */
    trowel_ctx_set_open_hook(ctx, NULL, NULL);
    int before = sv.calls;
    trowel_input *beside;
    CHECK(trowel_open_beside(ctx, "game/VOL.CNF", "PROCS00", &beside) == TROWEL_ERR_IO);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "PROCS00 is not beside game/VOL.CNF");
    CHECK(trowel_open_beside(ctx, "game/VOL.CNF", "../PROCS00", &beside) ==
          TROWEL_ERR_UNSAFE_PATH);
    CHECK(sv.calls == before);
    trowel_input_close(in);
    trowel_sink_discard(part);
    trowel_ctx_free(ctx);
}

/* What a listing gave: "name/" for folders, joined by spaces. */
typedef struct seen {
    char names[256];
    int stop_after; /* stop after this many (0: never) */
    int count;
} seen;

static bool note_name(void *user, const char *name, bool is_folder)
{
    seen *s = user;
    size_t at = strlen(s->names);
    snprintf(s->names + at, sizeof s->names - at, "%s%s%s", at ? " " : "", name,
             is_folder ? "/" : "");
    return ++s->count != s->stop_after;
}

/* A list hook serving one made-up folder "pics" beside the input. */
static trowel_status list_pics(void *user, trowel_ctx *ctx, const char *base, const char *dir,
                               trowel_list_each_fn each, void *each_user)
{
    (*(int *)user)++;
    if (!base || strcmp(base, "game/COST.json") != 0 || strcmp(dir, "pics") != 0)
        return trowel_fail(ctx, TROWEL_ERR_IO, TROWEL_NO_OFFSET, "no folder %s here", dir);
    const char *names[] = {"frame_000.png", "frame_001.png", "more"};
    for (int i = 0; i < 3 && each(each_user, names[i], i == 2); i++)
        ;
    return TROWEL_OK;
}

static void test_list_hook_and_default_listing(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    /* the default: the file system, beside base */
    char *dir = make_temp_dir();
    REQUIRE(dir);
    char path[512], base[512];
    snprintf(path, sizeof path, "%s/one.png", dir);
    write_file(path, "x", 1);
    snprintf(path, sizeof path, "%s/sub", dir);
    REQUIRE(mkdir(path, 0700) == 0);
    snprintf(base, sizeof base, "%s/COST.json", dir);
    seen s = {0};
    CHECK(trowel_list_related(ctx, base, ".", note_name, &s) == TROWEL_OK);
    CHECK(strcmp(s.names, "one.png sub/") == 0 || strcmp(s.names, "sub/ one.png") == 0);
    s = (seen){.stop_after = 1};
    CHECK(trowel_list_related(ctx, base, ".", note_name, &s) == TROWEL_OK);
    CHECK_EQ_U64(s.count, 1);
    s = (seen){0};
    CHECK(trowel_list_related(ctx, base, "absent", note_name, &s) == TROWEL_ERR_IO);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "cannot list folder") != NULL);
    CHECK(strstr(trowel_ctx_last_error(ctx)->message, "absent") != NULL);
    CHECK_EQ_U64(s.count, 0);
    /* a hook table: the list hook serves folders, opens stay the default */
    int calls = 0;
    trowel_ctx_set_io_hooks(ctx, &(trowel_io_hooks){.list = list_pics}, &calls);
    s = (seen){0};
    CHECK(trowel_list_related(ctx, "game/COST.json", "pics", note_name, &s) == TROWEL_OK);
    CHECK_STR(s.names, "frame_000.png frame_001.png more/");
    CHECK(trowel_list_related(ctx, "game/COST.json", "other", note_name, &s) == TROWEL_ERR_IO);
    CHECK_STR(trowel_ctx_last_error(ctx)->message, "no folder other here");
    CHECK_EQ_U64(calls, 2);
    trowel_input *in;
    CHECK(trowel_open_related(ctx, base, "one.png", &in) == TROWEL_OK);
    CHECK_EQ_U64(in ? trowel_input_size(in) : 0, 1);
    trowel_input_close(in);
    /* set_open_hook replaces the whole table: listing is the default again */
    trowel_ctx_set_open_hook(ctx, NULL, NULL);
    s = (seen){0};
    CHECK(trowel_list_related(ctx, base, "sub", note_name, &s) == TROWEL_OK);
    CHECK_STR(s.names, "");
    CHECK_EQ_U64(calls, 2);
    rmdir(path);
    snprintf(path, sizeof path, "%s/one.png", dir);
    unlink(path);
    rmdir(dir);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_open_hook_serves_volcnf_volume_from_memory),
          TEST(test_list_hook_and_default_listing))
