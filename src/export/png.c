/*
 * PNG output over libpng (see png.h). The image is streamed row by row into
 * a trowel_sink through png_set_write_fn; libpng's errors arrive by longjmp
 * into the one setjmp below, after which the write structures are destroyed
 * and the recorded status returned. Nothing is allocated between setjmp and
 * a possible longjmp except by libpng itself, which frees its own memory in
 * png_destroy_write_struct, so an error leaks nothing.
 */
#include "export/png.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

typedef struct png_job {
    trowel_ctx *ctx;
    trowel_sink *out;
    trowel_status status; /* the first failure, recorded before longjmp */
    bool sink_failed;     /* the sink's (or the allocator's) error is already
                           * on the context */
    char message[160];
    /* The last allocation the limit refused, kept aside: libpng treats
     * some refusals as warnings (an ancillary chunk it then skips) and
     * goes on; only when it stops does the refusal become the error. */
    trowel_status refused;
    trowel_error refusal;
} png_job;

static void on_png_error(png_structp png, png_const_charp msg)
{
    png_job *job = png_get_error_ptr(png);
    if (job->status == TROWEL_OK && job->refused != TROWEL_OK) {
        job->ctx->last_error = job->refusal; /* what needed the memory, and how much */
        job->status = job->refused;
        job->sink_failed = true;
    } else if (job->status == TROWEL_OK) {
        job->status = TROWEL_ERR_CORRUPT;
        snprintf(job->message, sizeof job->message, "%s", msg ? msg : "unknown error");
    }
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg; /* libpng warnings are about our own settings: nothing to tell */
}

/* libpng's memory comes from the context, under its limit. A refusal is
 * set aside (see png_job) and the context's error left as it was. */
static png_voidp on_png_malloc(png_structp png, png_alloc_size_t n)
{
    png_job *job = png_get_mem_ptr(png);
    trowel_error before = job->ctx->last_error;
    void *p;
    trowel_status s = trowel_mem_new(job->ctx, n, &p);
    if (s != TROWEL_OK) {
        job->refusal = job->ctx->last_error; /* kept whole: its message is told later */
        job->refused = s;
        job->ctx->last_error = before;
    }
    return p;
}

static void on_png_free(png_structp png, png_voidp p)
{
    png_job *job = png_get_mem_ptr(png);
    trowel_mem_free(job->ctx, p);
}

/* libpng could not set itself up: the limit's error when that refused its
 * memory, else the machine's. */
static trowel_status libpng_failed_to_start(trowel_ctx *ctx, const png_job *job)
{
    if (job->refused != TROWEL_OK) {
        ctx->last_error = job->refusal;
        return job->refused;
    }
    return trowel_fail(ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "libpng: out of memory");
}

static png_structp new_writer(png_job *job)
{
    return png_create_write_struct_2(PNG_LIBPNG_VER_STRING, job, on_png_error, on_png_warning,
                                     job, on_png_malloc, on_png_free);
}

static png_structp new_reader(png_job *job)
{
    return png_create_read_struct_2(PNG_LIBPNG_VER_STRING, job, on_png_error, on_png_warning,
                                    job, on_png_malloc, on_png_free);
}

static void on_png_write(png_structp png, png_bytep data, size_t n)
{
    png_job *job = png_get_io_ptr(png);
    trowel_status s = trowel_sink_write(job->out, data, n);
    if (s != TROWEL_OK) {
        job->status = s;
        job->sink_failed = true;
        png_error(png, "output refused");
    }
}

static void on_png_flush(png_structp png)
{
    (void)png;
}

typedef struct png_request {
    uint32_t w, h;
    const uint8_t *pixels;
    const trowel_palette *pal; /* NULL: RGBA (or gray16) */
    bool gray16;               /* 16-bit grayscale, two bytes a pixel, MSB first */
    bool gray8;                /* 8-bit grayscale, a byte a pixel */
    const trowel_png_text *text; /* tEXt chunks written before the pixels */
    size_t text_count;
} png_request;

/* Palette and transparency chunks; tRNS is cut after the last colour that
 * is not fully opaque, as PNG allows. */
static void set_palette(png_structp png, png_infop info, const trowel_palette *pal)
{
    png_color colors[256] = {{0, 0, 0}};
    png_byte alpha[256] = {0};
    int last_translucent = -1;
    for (unsigned i = 0; i < pal->count; i++) {
        colors[i].red = pal->rgba[i][0];
        colors[i].green = pal->rgba[i][1];
        colors[i].blue = pal->rgba[i][2];
        alpha[i] = pal->rgba[i][3];
        if (alpha[i] != 255)
            last_translucent = (int)i;
    }
    png_set_PLTE(png, info, colors, (int)pal->count);
    if (last_translucent >= 0)
        png_set_tRNS(png, info, alpha, last_translucent + 1, NULL);
}

/* Everything libpng may longjmp out of. */
static void write_body(png_structp png, png_infop info, const png_request *rq)
{
    int color_type = rq->pal                   ? PNG_COLOR_TYPE_PALETTE
                     : rq->gray16 || rq->gray8 ? PNG_COLOR_TYPE_GRAY
                                               : PNG_COLOR_TYPE_RGBA;
    png_set_IHDR(png, info, rq->w, rq->h, rq->gray16 ? 16 : 8, color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (rq->pal)
        set_palette(png, info, rq->pal);
    if (rq->text_count) {
        png_text chunks[TROWEL_PNG_MAX_TEXT];
        memset(chunks, 0, sizeof chunks);
        for (size_t i = 0; i < rq->text_count; i++) {
            chunks[i].compression = PNG_TEXT_COMPRESSION_NONE;
            /* libpng copies the text; its struct just is not const. */
            union {
                const char *in;
                png_charp out;
            } key = {rq->text[i].key}, text = {rq->text[i].value};
            chunks[i].key = key.out;
            chunks[i].text = text.out;
        }
        png_set_text(png, info, chunks, (int)rq->text_count);
    }
    png_write_info(png, info);
    size_t row = (size_t)rq->w * (rq->pal || rq->gray8 ? 1 : rq->gray16 ? 2 : 4);
    for (uint32_t y = 0; y < rq->h; y++)
        png_write_row(png, rq->pixels + (size_t)y * row);
    png_write_end(png, info);
}

/* The setjmp lives here, apart from the job it reports into, so no local
 * of this frame changes between setjmp and a longjmp. */
static void write_guarded(png_structp png, png_infop info, const png_request *rq)
{
    if (setjmp(png_jmpbuf(png)) == 0)
        write_body(png, info, rq);
}

static trowel_status write_png(trowel_ctx *ctx, trowel_sink *out, const png_request *rq)
{
    if (rq->w == 0 || rq->h == 0 || rq->w > TROWEL_PNG_MAX_SIDE || rq->h > TROWEL_PNG_MAX_SIDE)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "a %lux%lu image cannot be written as PNG (sides 1 to %u)",
                           (unsigned long)rq->w, (unsigned long)rq->h, TROWEL_PNG_MAX_SIDE);
    if (rq->text_count > TROWEL_PNG_MAX_TEXT)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "%zu PNG text chunks",
                           rq->text_count);
    if (rq->pal && (rq->pal->count == 0 || rq->pal->count > 256))
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "palette of %u colours",
                           rq->pal->count);
    png_job job = {.ctx = ctx, .out = out, .status = TROWEL_OK};
    png_structp png = new_writer(&job);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return libpng_failed_to_start(ctx, &job);
    }
    png_set_write_fn(png, &job, on_png_write, on_png_flush);
    write_guarded(png, info, rq);
    png_destroy_write_struct(&png, &info);
    if (job.status == TROWEL_OK || job.sink_failed)
        return job.status;
    return trowel_fail(ctx, job.status, TROWEL_NO_OFFSET, "writing PNG: %s", job.message);
}

trowel_status trowel_png_write_indexed(trowel_ctx *ctx, trowel_sink *out, uint32_t w, uint32_t h,
                                       const uint8_t *pixels, const trowel_palette *pal)
{
    png_request rq = {w, h, pixels, pal, false, false, NULL, 0};
    /* An index past the palette would make libpng write an invalid file.
     * The largest index first (a loop the compiler vectorises), the pixel
     * that has it only when it is too large; 256 colours take any byte. */
    uint8_t largest = 0;
    for (size_t i = 0; pal && pal->count < 256 && i < (size_t)w * h; i++)
        largest = pixels[i] > largest ? pixels[i] : largest;
    for (size_t i = 0; pal && largest >= pal->count && i < (size_t)w * h; i++)
        if (pixels[i] >= pal->count)
            return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET,
                               "pixel %zu uses colour %u of a %u-colour palette", i, pixels[i],
                               pal->count);
    return write_png(ctx, out, &rq);
}

trowel_status trowel_png_write_rgba(trowel_ctx *ctx, trowel_sink *out, uint32_t w, uint32_t h,
                                    const uint8_t *pixels)
{
    png_request rq = {w, h, pixels, NULL, false, false, NULL, 0};
    return write_png(ctx, out, &rq);
}

trowel_status trowel_png_write_gray16(trowel_ctx *ctx, trowel_sink *out, uint32_t w, uint32_t h,
                                      const uint8_t *samples)
{
    png_request rq = {w, h, samples, NULL, true, false, NULL, 0};
    return write_png(ctx, out, &rq);
}

trowel_status trowel_png_write_gray(trowel_ctx *ctx, trowel_sink *out, uint32_t w, uint32_t h,
                                    unsigned depth, const uint8_t *samples,
                                    const trowel_png_text *text, size_t text_count)
{
    if (depth != 8 && depth != 16)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "grayscale PNGs are written with 8 or 16 bits, not %u", depth);
    png_request rq = {w, h, samples, NULL, depth == 16, depth == 8, text, text_count};
    return write_png(ctx, out, &rq);
}

/* --------------------------------------------------------------- reading */

typedef struct png_source {
    const uint8_t *data;
    size_t size, pos;
} png_source;

static void on_png_read(png_structp png, png_bytep out, size_t n)
{
    png_source *src = png_get_io_ptr(png);
    if (n > src->size - src->pos)
        png_error(png, "the file is cut short");
    memcpy(out, src->data + src->pos, n);
    src->pos += n;
}

typedef struct gray_read {
    trowel_ctx *ctx;
    png_job job;
    uint32_t w, h;
    unsigned depth;
    uint16_t *samples; /* trowel_mem_alloc'ed; freed by the caller of the guard */
    uint8_t *row;
    trowel_png_text_slot *want; /* text chunks asked for */
    size_t want_count;
} gray_read;

/* Copies the text of the text chunks asked for that are present. */
static void read_gray_text(png_structp png, png_infop info, gray_read *g)
{
    png_textp text = NULL;
    int n = png_get_text(png, info, &text, NULL);
    for (size_t k = 0; k < g->want_count; k++)
        for (int i = 0; i < n; i++)
            if (text[i].key && strcmp(text[i].key, g->want[k].key) == 0 && text[i].text)
                snprintf(g->want[k].value, sizeof g->want[k].value, "%s", text[i].text);
}

/* Everything libpng may longjmp out of: the header, then row by row. */
static void read_gray_body(png_structp png, png_infop info, gray_read *g)
{
    png_read_info(png, info);
    int color = png_get_color_type(png, info);
    unsigned depth = png_get_bit_depth(png, info);
    if (color != PNG_COLOR_TYPE_GRAY || (depth != 8 && depth != 16) ||
        png_get_interlace_type(png, info) != PNG_INTERLACE_NONE) {
        g->job.status = TROWEL_ERR_UNSUPPORTED;
        snprintf(g->job.message, sizeof g->job.message,
                 "only 8- or 16-bit grayscale PNGs without interlacing are height maps");
        return;
    }
    g->w = png_get_image_width(png, info);
    g->h = png_get_image_height(png, info);
    g->depth = depth;
    read_gray_text(png, info, g);
    uint64_t count;
    if (g->w == 0 || g->h == 0 || g->w > TROWEL_PNG_MAX_SIDE || g->h > TROWEL_PNG_MAX_SIDE ||
        trowel_mul_overflows(g->w, g->h, &count)) {
        g->job.status = TROWEL_ERR_UNSUPPORTED;
        snprintf(g->job.message, sizeof g->job.message, "a %lux%lu PNG is out of range",
                 (unsigned long)g->w, (unsigned long)g->h);
        return;
    }
    trowel_status s = trowel_mem_new(g->ctx, (size_t)count * sizeof *g->samples, &g->samples);
    if (s == TROWEL_OK)
        s = trowel_mem_new(g->ctx, (size_t)g->w * 2, &g->row);
    if (s != TROWEL_OK) {
        g->job.status = s;
        g->job.sink_failed = true; /* the allocator's message stands */
        return;
    }
    for (uint32_t y = 0; y < g->h; y++) {
        png_read_row(png, g->row, NULL);
        uint16_t *dst = g->samples + (size_t)y * g->w;
        for (uint32_t x = 0; x < g->w; x++)
            dst[x] = depth == 16 ? (uint16_t)(g->row[2 * x] << 8 | g->row[2 * x + 1]) : g->row[x];
    }
}

static void read_gray_guarded(png_structp png, png_infop info, gray_read *g)
{
    if (setjmp(png_jmpbuf(png)) == 0)
        read_gray_body(png, info, g);
}

trowel_status trowel_png_read_gray(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                   uint32_t *w, uint32_t *h, unsigned *depth, uint16_t **samples)
{
    return trowel_png_read_gray_text(ctx, data, size, w, h, depth, samples, NULL, 0);
}

trowel_status trowel_png_read_gray_text(trowel_ctx *ctx, const uint8_t *data, size_t size,
                                        uint32_t *w, uint32_t *h, unsigned *depth,
                                        uint16_t **samples, trowel_png_text_slot *want,
                                        size_t want_count)
{
    *samples = NULL;
    for (size_t k = 0; k < want_count; k++)
        want[k].value[0] = 0;
    if (size < 8 || png_sig_cmp(data, 0, 8) != 0)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, 0, "not a PNG file");
    gray_read g = {.ctx = ctx,
                   .job = {.ctx = ctx, .status = TROWEL_OK},
                   .want = want,
                   .want_count = want_count};
    png_source src = {data, size, 0};
    png_structp png = new_reader(&g.job);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return libpng_failed_to_start(ctx, &g.job);
    }
    png_set_read_fn(png, &src, on_png_read);
    read_gray_guarded(png, info, &g);
    png_destroy_read_struct(&png, &info, NULL);
    trowel_mem_free(ctx, g.row);
    if (g.job.status != TROWEL_OK) {
        trowel_mem_free(ctx, g.samples);
        if (g.job.sink_failed)
            return g.job.status;
        return trowel_fail(ctx, g.job.status, TROWEL_NO_OFFSET, "reading PNG: %s", g.job.message);
    }
    *w = g.w;
    *h = g.h;
    *depth = g.depth;
    *samples = g.samples;
    return TROWEL_OK;
}

/* ---------------------------------------------------------------- sheets */

trowel_status trowel_sheet_plan(trowel_ctx *ctx, size_t n, const uint32_t *w, const uint32_t *h,
                                uint32_t columns, size_t bytes_per_pixel, trowel_sheet *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET, "no frames to lay out");
    for (size_t i = 0; i < n; i++) {
        out->cell_w = w[i] > out->cell_w ? w[i] : out->cell_w;
        out->cell_h = h[i] > out->cell_h ? h[i] : out->cell_h;
    }
    if (out->cell_w == 0 || out->cell_h == 0)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET, "every frame is empty");
    if (columns == 0)
        while ((uint64_t)columns * columns < n)
            columns++;
    if (columns > n)
        columns = (uint32_t)n;
    uint64_t rows = (n + columns - 1) / columns;
    uint64_t width = (uint64_t)columns * out->cell_w, height = rows * out->cell_h;
    if (width > TROWEL_PNG_MAX_SIDE || height > TROWEL_PNG_MAX_SIDE)
        return trowel_fail(ctx, TROWEL_ERR_LIMIT, TROWEL_NO_OFFSET,
                           "a sheet of %zu frames would be %llux%llu pixels; sides stop at %u "
                           "(try -O columns=N or -O frame=N)",
                           n, (unsigned long long)width, (unsigned long long)height,
                           TROWEL_PNG_MAX_SIDE);
    trowel_status s = trowel_mem_check(ctx, width * height * bytes_per_pixel, "the sheet");
    if (s != TROWEL_OK)
        return s;
    out->columns = columns;
    out->rows = (uint32_t)rows;
    out->width = (uint32_t)width;
    out->height = (uint32_t)height;
    return TROWEL_OK;
}

void trowel_sheet_cell(const trowel_sheet *s, size_t i, uint32_t *x, uint32_t *y)
{
    *x = (uint32_t)(i % s->columns) * s->cell_w;
    *y = (uint32_t)(i / s->columns) * s->cell_h;
}

void trowel_sheet_blit(const trowel_sheet *s, uint8_t *sheet, size_t i, const uint8_t *frame,
                       uint32_t fw, uint32_t fh, size_t bpp)
{
    uint32_t x0, y0;
    trowel_sheet_cell(s, i, &x0, &y0);
    for (uint32_t y = 0; y < fh && y < s->cell_h; y++)
        memcpy(sheet + (((size_t)(y0 + y) * s->width) + x0) * bpp, frame + (size_t)y * fw * bpp,
               (size_t)(fw < s->cell_w ? fw : s->cell_w) * bpp);
}

/* ------------------------------------------------------------- reading */

typedef struct png_reading {
    png_job job;
    png_source src;
    uint8_t *pixels;   /* ours, freed by the caller of the setjmp frame on failure */
    png_bytep *rows;
    uint32_t w, h;
    trowel_palette *pal;
    bool not_indexed;
    bool rgba; /* any PNG, as 8-bit RGBA (4 bytes a pixel); pal unused */
} png_reading;

/* Any colour type and depth to 8-bit RGBA (palettes and tRNS expanded,
 * grey to RGB, an opaque alpha added where there is none). */
static void read_rgba_transforms(png_structp png, png_infop info, int type, int depth)
{
    if (type == PNG_COLOR_TYPE_PALETTE || png_get_valid(png, info, PNG_INFO_tRNS) ||
        (type == PNG_COLOR_TYPE_GRAY && depth < 8))
        png_set_expand(png);
    if (depth == 16)
        png_set_strip_16(png);
    if (type == PNG_COLOR_TYPE_GRAY || type == PNG_COLOR_TYPE_GRAY_ALPHA)
        png_set_gray_to_rgb(png);
    if (!(type & PNG_COLOR_MASK_ALPHA) && !png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
    (void)png_set_interlace_handling(png);
}

/* The rows, bytes_per_pixel each pixel, into rd->pixels. */
static void read_pixels(png_structp png, png_infop info, png_reading *rd, png_uint_32 w,
                        png_uint_32 h, unsigned bytes_per_pixel)
{
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)w * bytes_per_pixel)
        png_error(png, "unexpected row size after conversion");
    rd->w = w;
    rd->h = h;
    trowel_status s = trowel_mem_new(rd->job.ctx, (size_t)w * h * bytes_per_pixel, &rd->pixels);
    if (s == TROWEL_OK)
        s = trowel_mem_new(rd->job.ctx, h * sizeof *rd->rows, &rd->rows);
    if (s != TROWEL_OK) {
        rd->job.status = s;
        png_error(png, "out of memory");
    }
    for (png_uint_32 y = 0; y < h; y++)
        rd->rows[y] = rd->pixels + (size_t)y * w * bytes_per_pixel;
    png_read_image(png, rd->rows);
    png_read_end(png, NULL);
}

static void read_image(png_structp png, png_infop info, png_reading *rd)
{
    png_set_read_fn(png, &rd->src, on_png_read);
    png_read_info(png, info);
    png_uint_32 w, h;
    int depth, type;
    png_get_IHDR(png, info, &w, &h, &depth, &type, NULL, NULL, NULL);
    if (rd->rgba) {
        read_rgba_transforms(png, info, type, depth);
    } else if (type != PNG_COLOR_TYPE_PALETTE) {
        rd->not_indexed = true;
        png_error(png, "not an indexed PNG");
    }
    if (w == 0 || h == 0 || w > TROWEL_PNG_MAX_SIDE || h > TROWEL_PNG_MAX_SIDE)
        png_error(png, "image sides out of range");
    if (rd->rgba) {
        read_pixels(png, info, rd, w, h, 4);
        return;
    }
    if (depth < 8)
        png_set_packing(png);
    png_colorp plte;
    int count = 0;
    png_get_PLTE(png, info, &plte, &count);
    png_bytep trns = NULL;
    int ntrns = 0;
    if (png_get_valid(png, info, PNG_INFO_tRNS))
        png_get_tRNS(png, info, &trns, &ntrns, NULL);
    memset(rd->pal, 0, sizeof *rd->pal);
    rd->pal->count = (unsigned)count;
    for (int i = 0; i < count && i < 256; i++) {
        rd->pal->rgba[i][0] = plte[i].red;
        rd->pal->rgba[i][1] = plte[i].green;
        rd->pal->rgba[i][2] = plte[i].blue;
        rd->pal->rgba[i][3] = i < ntrns ? trns[i] : 255;
    }
    read_pixels(png, info, rd, w, h, 1);
}

static bool run_read(png_structp png, png_infop info, png_reading *rd)
{
    if (setjmp(png_jmpbuf(png)) == 0) {
        read_image(png, info, rd);
        return true;
    }
    return false;
}

static trowel_status read_png(trowel_ctx *ctx, const char *name, const uint8_t *data,
                              size_t size, uint8_t **pixels, uint32_t *w, uint32_t *h,
                              trowel_palette *pal, bool rgba)
{
    *pixels = NULL;
    png_reading rd = {.job = {.ctx = ctx}, .src = {data, size, 0}, .pal = pal, .rgba = rgba};
    png_structp png = new_reader(&rd.job);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    bool ok = info && run_read(png, info, &rd);
    png_destroy_read_struct(png ? &png : NULL, info ? &info : NULL, NULL);
    trowel_mem_free(ctx, rd.rows);
    if (ok) {
        *pixels = rd.pixels;
        *w = rd.w;
        *h = rd.h;
        return TROWEL_OK;
    }
    trowel_mem_free(ctx, rd.pixels);
    if (rd.not_indexed)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET, "%s: not an indexed PNG",
                           name);
    if (rd.job.status == TROWEL_ERR_LIMIT || rd.job.status == TROWEL_ERR_NOMEM)
        return rd.job.status;
    return trowel_fail(ctx, TROWEL_ERR_CORRUPT, TROWEL_NO_OFFSET, "%s: %s", name,
                       rd.job.message[0] ? rd.job.message : "not a PNG");
}

trowel_status trowel_png_read_indexed(trowel_ctx *ctx, const char *name, const uint8_t *data,
                                      size_t size, uint8_t **pixels, uint32_t *w, uint32_t *h,
                                      trowel_palette *pal)
{
    return read_png(ctx, name, data, size, pixels, w, h, pal, false);
}

trowel_status trowel_png_read_rgba(trowel_ctx *ctx, const char *name, const uint8_t *data,
                                   size_t size, uint8_t **rgba, uint32_t *w, uint32_t *h)
{
    return read_png(ctx, name, data, size, rgba, w, h, NULL, true);
}
