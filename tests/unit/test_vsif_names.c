/*
 * scenes.image name hashing with upper-case paths: the CRC-32 is of the
 * name in lower case with '\' separators ("scenes\zone_a\...vcd"), and only
 * 'A'..'Z' are lowered -- '@' and '[' (just outside the range) and '`' and
 * '{' (their lower-case neighbours) stay as they are. The expected CRCs
 * were computed apart from trowel (zlib.crc32 of the lower-cased name).
 * Checked when building an image from upper-case source names and when
 * naming entries from an upper-case list (with decoys one bit away).
 * And --names DIR served by a list hook alone, --names LIST by an open
 * hook alone (no file system).
 */
#include "files.h"
#include "test.h"
#include "trowel/trowel.h"

#include <stdbool.h>
#include <unistd.h>

/* zlib.crc32(b"scenes\\zone_a\\@alyxz[z]`a{.vcd") */
#define CRC_ZONE 0xb50a85bbu
/* zlib.crc32(b"scenes\\npc\\zz_top.vcd") */
#define CRC_TOP 0x57e0ae6eu

static const char scene[] = "// Choreo version 1\nactor \"a\"\n{\n  channel \"c\"\n  {\n"
                            "    event speak \"s\"\n    {\n      time 0 1\n      param \"a.s\"\n"
                            "    }\n  }\n}\n";

static size_t entry_by_crc(trowel_archive *a, uint32_t crc)
{
    for (size_t i = 0; i < trowel_archive_entry_count(a); i++)
        if (trowel_props_find(trowel_archive_entry(a, i)->extra, "crc")->u == crc)
            return i;
    return SIZE_MAX;
}

static bool write_temp(char *path, const char *text)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return false;
    bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    return close(fd) == 0 && ok;
}

/* An image of two scenes whose source names are in upper case (malloc'ed
 * into *img, *size bytes). */
static bool build_image(trowel_ctx *ctx, uint8_t **img, size_t *size)
{
    char vcd[] = "/tmp/trowel-names-vcd-XXXXXX";
    if (!write_temp(vcd, scene))
        return false;
    trowel_source src[2] = {{"SCENES/Zone_A/@AlyxZ[z]`a{.VCD", vcd},
                            {"scenes\\NPC\\ZZ_Top.vcd", vcd}};
    trowel_sink *s;
    if (trowel_sink_open_memory(ctx, &s) != TROWEL_OK)
        return false;
    trowel_create_params p = {.sources = src, .source_count = 2};
    bool ok = trowel_create(ctx, trowel_format_find("vsif"), &p, s) == TROWEL_OK;
    unlink(vcd);
    const uint8_t *d = trowel_sink_data(s, size);
    *img = malloc(*size ? *size : 1);
    if (*img)
        memcpy(*img, d, *size);
    trowel_sink_discard(s);
    return ok && *img;
}

static void test_vsif_upper_case_names_hash_as_lower_case_with_backslashes(void)
{
    char list[] = "/tmp/trowel-names-list-XXXXXX";
    trowel_ctx *ctx = trowel_ctx_new();
    /* Decoys last: a wrong match would overwrite the right name. */
    REQUIRE(write_temp(list, "SCENES\\ZONE_A\\@ALYXZ[Z]`A{.VCD\n"
                             "scenes/npc/zz_top\n"
                             "scenes/zone_a/`alyxz[z]`a{.vcd\n"  /* '@' lowered by mistake */
                             "scenes/zone_a/@alyxz{z]`a{.vcd\n"  /* '[' lowered by mistake */
                             "scenes/zone_a/@alyxz[z]@a{.vcd\n"  /* '`' raised by mistake */
                             "scenes/npc/ZZ_TOP.vcd.txt\n"));
    uint8_t *img;
    size_t n = 0;
    REQUIRE(build_image(ctx, &img, &n));

    trowel_input *in;
    trowel_archive *a;
    REQUIRE(trowel_input_open_memory(ctx, img, n, "names.image", &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    REQUIRE(trowel_archive_entry_count(a) == 2);
    size_t zone = entry_by_crc(a, CRC_ZONE), top = entry_by_crc(a, CRC_TOP);
    CHECK(zone != SIZE_MAX);
    CHECK(top != SIZE_MAX);
    /* Sorted by unsigned CRC: 0x57... before 0xb5... */
    CHECK_EQ_U64(top, 0);
    CHECK_EQ_U64(zone, 1);
    REQUIRE(zone != SIZE_MAX && top != SIZE_MAX);
    CHECK_STR(trowel_archive_entry(a, zone)->name, "b50a85bb.vcd");

    CHECK(trowel_archive_set_names(a, list) == TROWEL_OK);
    unlink(list);
    CHECK_STR(trowel_archive_entry(a, zone)->name, "SCENES/ZONE_A/@ALYXZ[Z]`A{.VCD");
    CHECK_STR(trowel_archive_entry(a, top)->name, "scenes/npc/zz_top.vcd");
    trowel_archive_close(a);
    trowel_input_close(in);
    free(img);
    trowel_ctx_free(ctx);
}

/* A game folder that exists only in a list hook: game/ holds Scenes/ (the
 * scenes folder, in its own spelling), which holds npc/ with one scene and
 * a file that is not one. */
static trowel_status list_game(void *user, trowel_ctx *ctx, const char *base, const char *dir,
                               trowel_list_each_fn each, void *each_user)
{
    static const struct {
        const char *dir, *name;
        bool folder;
    } tree[] = {{"game", "readme.txt", false},
                {"game", "Scenes", true},
                {"game/Scenes", "npc", true},
                {"game/Scenes/npc", "zz_top.wav", false},
                {"game/Scenes/npc", "zz_top.vcd", false}};
    (void)ctx;
    (*(int *)user)++;
    bool found = false;
    for (size_t i = 0; !base && i < sizeof tree / sizeof *tree; i++)
        if (strcmp(tree[i].dir, dir) == 0) {
            found = true;
            if (!each(each_user, tree[i].name, tree[i].folder))
                break;
        }
    return found ? TROWEL_OK : TROWEL_ERR_IO;
}

/* --names DIR reads the folder through the io hooks only: a folder no file
 * system holds names the scene, with the "Scenes" spelling it was listed
 * with, and the hook is asked for each folder of the walk. */
static void test_vsif_names_folder_through_the_list_hook(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    uint8_t *img;
    size_t n = 0;
    REQUIRE(build_image(ctx, &img, &n));
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(trowel_input_open_memory(ctx, img, n, "names.image", &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    size_t top = entry_by_crc(a, CRC_TOP), zone = entry_by_crc(a, CRC_ZONE);
    REQUIRE(top != SIZE_MAX && zone != SIZE_MAX);
    int calls = 0;
    trowel_ctx_set_io_hooks(ctx, &(trowel_io_hooks){.list = list_game}, &calls);
    CHECK(trowel_archive_set_names(a, "game") == TROWEL_OK);
    CHECK_STR(trowel_archive_entry(a, top)->name, "Scenes/npc/zz_top.vcd");
    CHECK_STR(trowel_archive_entry(a, zone)->name, "b50a85bb.vcd");
    /* is it a folder, its scenes child, Scenes/, Scenes/npc/ */
    CHECK_EQ_U64(calls, 4);
    trowel_archive_close(a);
    trowel_input_close(in);
    free(img);
    trowel_ctx_free(ctx);
}

/* An open hook serving one list of names, "mem-list", from memory. */
static trowel_status open_list(void *user, trowel_ctx *ctx, const char *base, const char *name,
                               trowel_input **out)
{
    static const char text[] = "# from memory\nscenes/npc/zz_top\n";
    (*(int *)user)++;
    if (base || strcmp(name, "mem-list") != 0)
        return TROWEL_ERR_IO;
    return trowel_input_open_memory(ctx, text, sizeof text - 1, name, out);
}

/* --names LIST that no file system holds: with an open hook (and no list
 * hook) a name that is not a folder on disk goes to the hook as a list. */
static void test_vsif_names_list_through_the_open_hook(void)
{
    trowel_ctx *ctx = trowel_ctx_new();
    uint8_t *img;
    size_t n = 0;
    REQUIRE(build_image(ctx, &img, &n));
    trowel_input *in;
    trowel_archive *a;
    REQUIRE(trowel_input_open_memory(ctx, img, n, "names.image", &in) == TROWEL_OK);
    REQUIRE(trowel_archive_open(ctx, in, NULL, &a) == TROWEL_OK);
    size_t top = entry_by_crc(a, CRC_TOP);
    REQUIRE(top != SIZE_MAX);
    int calls = 0;
    trowel_ctx_set_open_hook(ctx, open_list, &calls);
    CHECK(trowel_archive_set_names(a, "mem-list") == TROWEL_OK);
    CHECK_STR(trowel_archive_entry(a, top)->name, "scenes/npc/zz_top.vcd");
    CHECK_EQ_U64(calls, 1);
    trowel_archive_close(a);
    trowel_input_close(in);
    free(img);
    trowel_ctx_free(ctx);
}

TEST_MAIN(TEST(test_vsif_upper_case_names_hash_as_lower_case_with_backslashes),
          TEST(test_vsif_names_folder_through_the_list_hook),
          TEST(test_vsif_names_list_through_the_open_hook))
