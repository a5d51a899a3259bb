/*
 * GIF output over giflib (see gif.h). giflib reports errors by return code;
 * the first failure stops the write and closes the encoder, which frees its
 * own memory. Output goes through giflib's write callback into our sink.
 */
#include "export/gif.h"

#include <gif_lib.h>
#include <string.h>

typedef struct gif_job {
    trowel_ctx *ctx;
    trowel_sink *out;
    trowel_status sink_status; /* a failed sink write, its message already set */
} gif_job;

static int on_gif_write(GifFileType *gif, const GifByteType *data, int n)
{
    gif_job *job = gif->UserData;
    if (job->sink_status != TROWEL_OK)
        return 0;
    job->sink_status = trowel_sink_write(job->out, data, (size_t)n);
    return job->sink_status == TROWEL_OK ? n : 0;
}

static trowel_status check_frame(trowel_ctx *ctx, const trowel_gif *g, const trowel_gif_frame *f,
                                 size_t i)
{
    const trowel_palette *pal = f->palette ? f->palette : g->palette;
    if (!pal || pal->count == 0 || pal->count > 256)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "GIF frame %zu has no palette",
                           i);
    if (f->w == 0 || f->h == 0 || f->x > g->width || f->y > g->height ||
        f->w > g->width - f->x || f->h > g->height - f->y)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "GIF frame %zu (%lux%lu at %lu,%lu) is not inside the %lux%lu screen", i,
                           (unsigned long)f->w, (unsigned long)f->h, (unsigned long)f->x,
                           (unsigned long)f->y, (unsigned long)g->width,
                           (unsigned long)g->height);
    if (f->delay_cs > 65535 || f->disposal > 3 || f->transparent >= (int)pal->count)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "GIF frame %zu: delay, disposal or transparent colour out of range", i);
    size_t n = (size_t)f->w * f->h;
    for (size_t p = 0; p < n; p++)
        if (f->pixels[p] >= pal->count)
            return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                               "GIF frame %zu: pixel %zu has colour %u, past its %u colours", i, p,
                               f->pixels[p], pal->count);
    return TROWEL_OK;
}

static trowel_status check_all(trowel_ctx *ctx, const trowel_gif *g,
                               const trowel_gif_frame *frames, size_t n)
{
    if (n == 0)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET, "a GIF needs a frame");
    if (g->width == 0 || g->height == 0 || g->width > 65535 || g->height > 65535 ||
        g->loops > 65535 || g->loops < -1 || (g->palette && g->background >= g->palette->count))
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "a GIF screen of %lux%lu (loops %ld) cannot be written",
                           (unsigned long)g->width, (unsigned long)g->height, g->loops);
    trowel_status s = TROWEL_OK;
    for (size_t i = 0; s == TROWEL_OK && i < n; i++)
        s = check_frame(ctx, g, &frames[i], i);
    return s;
}

/* A giflib colour map of pal (its size rounded up to a power of two, the
 * rest black); NULL when pal is NULL or giflib's malloc fails. */
static ColorMapObject *make_map(const trowel_palette *pal)
{
    if (!pal)
        return NULL;
    int size = 2;
    while (size < (int)pal->count)
        size *= 2;
    GifColorType colours[256];
    memset(colours, 0, sizeof colours);
    for (unsigned i = 0; i < pal->count; i++) {
        colours[i].Red = pal->rgba[i][0];
        colours[i].Green = pal->rgba[i][1];
        colours[i].Blue = pal->rgba[i][2];
    }
    return GifMakeMapObject(size, colours);
}

static int put_loop(GifFileType *gif, long loops)
{
    static const char netscape[] = "NETSCAPE2.0";
    GifByteType sub[3] = {1, (GifByteType)(loops & 0xFF), (GifByteType)(loops >> 8)};
    return EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK &&
                   EGifPutExtensionBlock(gif, 11, netscape) == GIF_OK &&
                   EGifPutExtensionBlock(gif, 3, sub) == GIF_OK &&
                   EGifPutExtensionTrailer(gif) == GIF_OK
               ? GIF_OK
               : GIF_ERROR;
}

static int put_frame(GifFileType *gif, const trowel_gif_frame *f, GifPixelType *row)
{
    GraphicsControlBlock gcb = {.DisposalMode = (int)f->disposal, .UserInputFlag = false,
                                .DelayTime = (int)f->delay_cs,
                                .TransparentColor = f->transparent < 0 ? NO_TRANSPARENT_COLOR
                                                                       : f->transparent};
    GifByteType ext[4];
    EGifGCBToExtension(&gcb, ext);
    if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, ext) != GIF_OK)
        return GIF_ERROR;
    ColorMapObject *local = make_map(f->palette);
    if (f->palette && !local)
        return GIF_ERROR;
    int r = EGifPutImageDesc(gif, (int)f->x, (int)f->y, (int)f->w, (int)f->h, false, local);
    GifFreeMapObject(local);
    for (uint32_t y = 0; r == GIF_OK && y < f->h; y++) {
        memcpy(row, f->pixels + (size_t)y * f->w, f->w);
        r = EGifPutLine(gif, row, (int)f->w);
    }
    /* giflib keeps a copy of the local map and drops it unfreed when the
     * next frame has none: free it here, frame by frame. */
    if (gif->Image.ColorMap) {
        GifFreeMapObject(gif->Image.ColorMap);
        gif->Image.ColorMap = NULL;
    }
    return r;
}

trowel_status trowel_gif_write(trowel_ctx *ctx, trowel_sink *out, const trowel_gif *g,
                               const trowel_gif_frame *frames, size_t n)
{
    trowel_status s = check_all(ctx, g, frames, n);
    if (s != TROWEL_OK)
        return s;
    GifPixelType *row;
    if ((s = trowel_mem_new(ctx, g->width, &row)) != TROWEL_OK)
        return s;
    gif_job job = {.ctx = ctx, .out = out, .sink_status = TROWEL_OK};
    int err = 0;
    GifFileType *gif = EGifOpen(&job, on_gif_write, &err);
    int r = gif ? GIF_OK : GIF_ERROR;
    ColorMapObject *global = make_map(g->palette);
    if (r == GIF_OK && g->palette && !global)
        r = GIF_ERROR;
    if (r == GIF_OK) {
        EGifSetGifVersion(gif, true);
        r = EGifPutScreenDesc(gif, (int)g->width, (int)g->height, 8, (int)g->background, global);
    }
    if (r == GIF_OK && g->loops >= 0)
        r = put_loop(gif, g->loops);
    for (size_t i = 0; r == GIF_OK && i < n; i++)
        r = put_frame(gif, &frames[i], row);
    GifFreeMapObject(global);
    if (r != GIF_OK && gif)
        err = gif->Error;
    int close_err = 0; /* closing writes the trailer and frees giflib's memory */
    if (gif && EGifCloseFile(gif, &close_err) != GIF_OK && r == GIF_OK) {
        r = GIF_ERROR;
        err = close_err;
    }
    trowel_mem_free(ctx, row);
    if (job.sink_status != TROWEL_OK)
        return job.sink_status;
    if (r != GIF_OK)
        return trowel_fail(ctx, TROWEL_ERR_NOMEM, TROWEL_NO_OFFSET, "the GIF writer failed: %s",
                           GifErrorString(err) ? GifErrorString(err) : "unknown error");
    return TROWEL_OK;
}
