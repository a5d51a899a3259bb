/*
 * Create sources through the open hook (source.h): the one place where a
 * format's create turns a source's path into bytes.
 */
#include "source.h"

#include "module.h"

trowel_status trowel_source_open(trowel_ctx *ctx, const trowel_source *src, trowel_input **out)
{
    return trowel_open_related(ctx, NULL, src->path, out);
}

trowel_status trowel_source_load(trowel_ctx *ctx, const trowel_source *src, uint8_t **data,
                                 size_t *size)
{
    *data = NULL;
    *size = 0;
    trowel_input *in;
    trowel_status s = trowel_source_open(ctx, src, &in);
    if (s != TROWEL_OK)
        return s;
    trowel_reader r;
    trowel_reader_init(&r, ctx, in);
    s = trowel_reader_load(&r, data, size);
    trowel_input_close(in);
    return s;
}

trowel_status trowel_source_size(trowel_ctx *ctx, const trowel_source *src, uint64_t *size)
{
    *size = 0;
    trowel_input *in;
    trowel_status s = trowel_source_open(ctx, src, &in);
    if (s != TROWEL_OK)
        return s;
    *size = trowel_input_size(in);
    trowel_input_close(in);
    return TROWEL_OK;
}
