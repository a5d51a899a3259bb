/*
 * libFuzzer target: the zlib decoder (src/codec/zlib.c), whole and through
 * the forward cursor; the first byte's bit 6 also selects raw deflate. See
 * codec_fuzz.h for what is checked.
 */
#include "codec/zlib.h"
#include "codec_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned flags = size && (data[0] & 0x40) ? TROWEL_CODEC_RAW : 0;
    return fuzz_codec(&trowel_zlib_stream, "zlib", flags, data, size);
}
