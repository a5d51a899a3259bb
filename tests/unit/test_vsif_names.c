/*
 * scenes.image name hashing with upper-case paths: the CRC-32 is of the
 * name in lower case with '\' separators ("scenes\zone_a\...vcd"), and only
 * 'A'..'Z' are lowered -- '@' and '[' (just outside the range) and '`' and
 * '{' (their lower-case neighbours) stay as they are. The expected CRCs
 * were computed apart from trowel (zlib.crc32 of the lower-cased name).
 * Checked when building an image from upper-case source names and when
 * naming entries from an upper-case list (with decoys one bit away).
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

static void test_vsif_upper_case_names_hash_as_lower_case_with_backslashes(void)
{
    char vcd[] = "/tmp/trowel-names-vcd-XXXXXX", list[] = "/tmp/trowel-names-list-XXXXXX";
    REQUIRE(write_temp(vcd, scene));
    trowel_ctx *ctx = trowel_ctx_new();
    /* Decoys last: a wrong match would overwrite the right name. */
    REQUIRE(write_temp(list, "SCENES\\ZONE_A\\@ALYXZ[Z]`A{.VCD\n"
                             "scenes/npc/zz_top\n"
                             "scenes/zone_a/`alyxz[z]`a{.vcd\n"  /* '@' lowered by mistake */
                             "scenes/zone_a/@alyxz{z]`a{.vcd\n"  /* '[' lowered by mistake */
                             "scenes/zone_a/@alyxz[z]@a{.vcd\n"  /* '`' raised by mistake */
                             "scenes/npc/ZZ_TOP.vcd.txt\n"));
    trowel_source src[2] = {{"SCENES/Zone_A/@AlyxZ[z]`a{.VCD", vcd},
                            {"scenes\\NPC\\ZZ_Top.vcd", vcd}};
    trowel_sink *s;
    REQUIRE(trowel_sink_open_memory(ctx, &s) == TROWEL_OK);
    trowel_create_params p = {.sources = src, .source_count = 2};
    CHECK(trowel_create(ctx, trowel_format_find("vsif"), &p, s) == TROWEL_OK);
    unlink(vcd);
    size_t n = 0;
    const uint8_t *d = trowel_sink_data(s, &n);
    uint8_t *img = malloc(n ? n : 1);
    REQUIRE(img != NULL);
    memcpy(img, d, n);
    trowel_sink_discard(s);

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

TEST_MAIN(TEST(test_vsif_upper_case_names_hash_as_lower_case_with_backslashes))
