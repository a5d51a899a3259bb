/*
 * WAV output: a RIFF file with one "fmt " chunk (PCM, mono, 8 bits) and one
 * "data" chunk. WAV's 8-bit PCM is unsigned with silence at 128, so signed
 * samples are converted by flipping their top bit (x ^ 0x80 == x + 128
 * modulo 256). An odd data size gets the pad byte RIFF requires.
 */
#include "export/wav.h"

#include "core/reader.h"

#include <string.h>

#define WAV_RATE_MAX 1000000u

static void put_u32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put_u16le(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static trowel_status write_header(trowel_ctx *ctx, trowel_sink *out, uint64_t n, uint32_t rate)
{
    if (rate == 0 || rate > WAV_RATE_MAX)
        return trowel_fail(ctx, TROWEL_ERR_USAGE, TROWEL_NO_OFFSET,
                           "sample rate %lu is outside 1..%u", (unsigned long)rate, WAV_RATE_MAX);
    /* RIFF sizes are 32-bit and count the header and the pad byte. */
    if (n > UINT32_MAX - TROWEL_WAV_HEADER_SIZE - 1)
        return trowel_fail(ctx, TROWEL_ERR_UNSUPPORTED, TROWEL_NO_OFFSET,
                           "%llu samples do not fit in a WAV file", (unsigned long long)n);
    uint8_t h[TROWEL_WAV_HEADER_SIZE];
    memcpy(h, "RIFF", 4);
    put_u32le(h + 4, (uint32_t)(36 + n + (n & 1)));
    memcpy(h + 8, "WAVEfmt ", 8);
    put_u32le(h + 16, 16);   /* fmt chunk size */
    put_u16le(h + 20, 1);    /* PCM */
    put_u16le(h + 22, 1);    /* mono */
    put_u32le(h + 24, rate); /* samples per second */
    put_u32le(h + 28, rate); /* bytes per second: one byte per sample */
    put_u16le(h + 32, 1);    /* block align */
    put_u16le(h + 34, 8);    /* bits per sample */
    memcpy(h + 36, "data", 4);
    put_u32le(h + 40, (uint32_t)n);
    return trowel_sink_write(out, h, sizeof h);
}

static trowel_status write_samples(trowel_sink *out, const uint8_t *p, size_t n, bool is_signed)
{
    uint8_t buf[4096];
    while (n > 0) {
        size_t k = n < sizeof buf ? n : sizeof buf;
        for (size_t i = 0; i < k; i++)
            buf[i] = is_signed ? (uint8_t)(p[i] ^ 0x80) : p[i];
        trowel_status s = trowel_sink_write(out, buf, k);
        if (s != TROWEL_OK)
            return s;
        p += k;
        n -= k;
    }
    return TROWEL_OK;
}

static trowel_status write_pad(trowel_sink *out, uint64_t n)
{
    static const uint8_t zero = 0;
    return (n & 1) ? trowel_sink_write(out, &zero, 1) : TROWEL_OK;
}

trowel_status trowel_wav_write_u8(trowel_ctx *ctx, trowel_sink *out, const uint8_t *samples,
                                  size_t n, uint32_t rate, bool is_signed)
{
    trowel_status s = write_header(ctx, out, n, rate);
    if (s == TROWEL_OK)
        s = write_samples(out, samples, n, is_signed);
    if (s == TROWEL_OK)
        s = write_pad(out, n);
    return s;
}

trowel_status trowel_wav_write_reader(trowel_ctx *ctx, trowel_sink *out, trowel_reader *r,
                                      uint32_t rate, bool is_signed)
{
    uint64_t n = trowel_reader_remaining(r);
    trowel_status s = write_header(ctx, out, n, rate);
    while (s == TROWEL_OK) {
        const uint8_t *p;
        size_t got;
        s = trowel_reader_borrow(r, TROWEL_READER_SPAN_MAX, &p, &got);
        if (s != TROWEL_OK || got == 0)
            break;
        s = write_samples(out, p, got, is_signed);
    }
    if (s == TROWEL_OK)
        s = write_pad(out, n);
    return s;
}
