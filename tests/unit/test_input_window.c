/*
 * The file input's cache window (src/core/input.c): a file read straight
 * through slides the 256 KiB window and is never pulled into memory whole
 * (a streaming decoder must not pay page faults for the whole file); a file
 * read with jumps (a directory, then data elsewhere) is read whole once the
 * window has jumped, and all give the file's bytes; detection's bids do not
 * count as jumps.
 */
#include "codec_data.h"
#include "files.h"
#include "test.h"

#include "core/input.h"
#include "core/reader.h"

#include <stdlib.h>
#include <unistd.h>

#define FILE_SIZE ((size_t)3 << 20)

static char *write_pattern(uint8_t **expect)
{
    char *dir = make_temp_dir();
    if (!dir)
        return NULL;
    static char path[128];
    snprintf(path, sizeof path, "%s/pattern.bin", dir);
    uint8_t *b = malloc(FILE_SIZE);
    for (size_t i = 0; i < FILE_SIZE; i++)
        b[i] = (uint8_t)(i * 131 + (i >> 12));
    FILE *f = fopen(path, "wb");
    fwrite(b, 1, FILE_SIZE, f);
    fclose(f);
    *expect = b;
    return path;
}

static void remove_pattern(const char *path)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    unlink(path);
    rmdir(dir);
}

/* The pattern file opened as a file input on a context of its own. */
typedef struct pattern_input {
    uint8_t *expect; /* the file's bytes */
    char *path;
    trowel_ctx *ctx;
    trowel_input *in;
} pattern_input;

static bool open_pattern(pattern_input *f)
{
    *f = (pattern_input){0};
    if (!(f->path = write_pattern(&f->expect)))
        return false;
    f->ctx = new_ctx();
    return trowel_input_open_file(f->ctx, f->path, &f->in) == TROWEL_OK;
}

/* Closes the input (and checks it gave back all its memory) and removes
 * the file. */
static void close_pattern(pattern_input *f)
{
    trowel_input_close(f->in);
    CHECK_EQ_U64(f->ctx->mem_in_use, 0);
    trowel_ctx_free(f->ctx);
    remove_pattern(f->path);
    free(f->expect);
}

static void test_straight_reads_slide_the_window(void)
{
    pattern_input f;
    REQUIRE(open_pattern(&f));
    trowel_input *in = f.in;
    const uint8_t *expect = f.expect;
    trowel_reader r;
    trowel_reader_init(&r, f.ctx, in);
    size_t at = 0;
    bool same = true;
    for (;;) {
        const uint8_t *p;
        size_t got;
        REQUIRE(trowel_reader_borrow(&r, TROWEL_READER_SPAN_MAX, &p, &got) == TROWEL_OK);
        if (!got)
            break;
        same = same && memcmp(p, expect + at, got) == 0;
        at += got;
    }
    CHECK_EQ_U64(at, FILE_SIZE);
    CHECK(same);
    CHECK(in->mem == NULL); /* never read whole */
    CHECK(in->refills >= FILE_SIZE / ((size_t)1 << 18));
    close_pattern(&f);
}

static void test_jumps_read_the_file_whole(void)
{
    pattern_input f;
    REQUIRE(open_pattern(&f));
    trowel_input *in = f.in;
    const uint8_t *expect = f.expect;
    static const size_t offsets[] = {0, 2 << 20, 100, (3 << 20) - 10, 1 << 20};
    bool same = true;
    for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++) {
        uint8_t got[10];
        REQUIRE(trowel_input_copy(in, offsets[k], got, sizeof got) == TROWEL_OK);
        same = same && memcmp(got, expect + offsets[k], sizeof got) == 0;
    }
    CHECK(same);
    CHECK(in->mem != NULL); /* the first jump read it whole */
    close_pattern(&f);
}

/* Detection's bids read anywhere, jumping back and forth without reading
 * the file whole; after them the count starts again, so only the chosen
 * format's own jumps read the file whole. */
static void test_forgotten_jumps_do_not_count(void)
{
    pattern_input f;
    REQUIRE(open_pattern(&f));
    trowel_input *in = f.in;
    const uint8_t *expect = f.expect;
    uint8_t got[4];
    trowel_input_begin_detection(in);
    REQUIRE(trowel_input_copy(in, (3 << 20) - 4, got, 4) == TROWEL_OK); /* a bid at the end */
    REQUIRE(trowel_input_copy(in, 0, got, 4) == TROWEL_OK);             /* the next at 0 */
    REQUIRE(trowel_input_copy(in, 1 << 20, got, 4) == TROWEL_OK);       /* a scan */
    CHECK(in->mem == NULL);
    trowel_input_end_detection(in);
    REQUIRE(trowel_input_copy(in, 0, got, 4) == TROWEL_OK); /* the format starts over */
    CHECK(in->mem == NULL);
    CHECK(memcmp(got, expect, 4) == 0);
    REQUIRE(trowel_input_copy(in, 2 << 20, got, 4) == TROWEL_OK); /* its own jump */
    CHECK(in->mem != NULL);
    CHECK(memcmp(got, expect + (2 << 20), 4) == 0);
    close_pattern(&f);
}

/* Bids on a nested archive (a window over the file) and on an XOR input
 * read through to the file below: detection on them must not read that
 * file whole either, and reading on afterwards still works. */
static void test_detection_through_windows_and_xor(void)
{
    pattern_input f;
    REQUIRE(open_pattern(&f));
    trowel_input *file = f.in, *win, *x;
    REQUIRE(trowel_input_open_window(f.ctx, file, 4096, (2 << 20) + 8192, "nested", &win) ==
            TROWEL_OK);
    REQUIRE(trowel_input_open_xor(f.ctx, win, 0x69, &x) == TROWEL_OK);
    uint8_t got[4];
    for (trowel_input *in = win; in; in = in == win ? x : NULL) {
        trowel_input_begin_detection(in);
        REQUIRE(trowel_input_copy(in, (2 << 20) + 8188, got, 4) == TROWEL_OK); /* the end */
        REQUIRE(trowel_input_copy(in, 0, got, 4) == TROWEL_OK);                /* back to 0 */
        REQUIRE(trowel_input_copy(in, 1 << 20, got, 4) == TROWEL_OK);          /* a scan */
        trowel_input_end_detection(in);
        CHECK(file->mem == NULL && x->mem == NULL);
        CHECK(file->detecting == 0 && win->detecting == 0 && x->detecting == 0);
    }
    CHECK(got[0] == (uint8_t)(f.expect[4096 + (1 << 20)] ^ 0x69));
    trowel_input_close(x);
    trowel_input_close(win);
    close_pattern(&f);
}

TEST_MAIN(TEST(test_straight_reads_slide_the_window), TEST(test_jumps_read_the_file_whole),
          TEST(test_forgotten_jumps_do_not_count), TEST(test_detection_through_windows_and_xor))
