/* libFuzzer target: the GIF writer's inputs. The bytes choose the screen,
 * the palettes, up to four frames (rectangles, delays, disposal,
 * transparency) and their pixels; the writer must refuse what does not fit
 * and write the rest into a null sink without a fault. */
#include "core/core.h"
#include "export/gif.h"

#include <string.h>
#include <trowel/trowel.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct feed {
    const uint8_t *p;
    size_t n;
} feed;

static unsigned next(feed *f)
{
    if (f->n == 0)
        return 0;
    f->n--;
    return *f->p++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    feed f = {data, size};
    trowel_palette global = {.count = next(&f) + 1}, local = {.count = next(&f) % 17 + 1};
    for (unsigned i = 0; i < 256; i++)
        memset(global.rgba[i], (int)(i * 3), 4);
    trowel_gif g = {.width = next(&f) % 70, .height = next(&f) % 70, .palette = &global,
                    .background = next(&f), .loops = (long)next(&f) - 2};
    size_t n = next(&f) % 5;
    trowel_gif_frame frames[4];
    static uint8_t pixels[4][80 * 80];
    for (size_t i = 0; i < n; i++) {
        trowel_gif_frame *fr = &frames[i];
        fr->x = next(&f) % 80;
        fr->y = next(&f) % 80;
        fr->w = next(&f) % 80;
        fr->h = next(&f) % 80;
        fr->palette = next(&f) & 1 ? &local : NULL;
        fr->transparent = (int)next(&f) - 1;
        fr->delay_cs = next(&f) * 300;
        fr->disposal = next(&f) % 5;
        for (size_t k = 0; k < (size_t)fr->w * fr->h; k++)
            pixels[i][k] = (uint8_t)(next(&f) % 20);
        fr->pixels = pixels[i];
    }
    trowel_ctx *ctx = trowel_ctx_new();
    trowel_sink *out;
    if (ctx && trowel_sink_open_null(ctx, &out) == TROWEL_OK) {
        if (trowel_gif_write(ctx, out, &g, frames, n) == TROWEL_OK)
            trowel_sink_finish(out);
        else
            trowel_sink_discard(out);
    }
    trowel_ctx_free(ctx);
    return 0;
}
