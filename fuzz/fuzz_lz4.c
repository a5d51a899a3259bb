/*
 * libFuzzer target: the LZ4 frame decoder (src/codec/lz4.c), whole and
 * through the forward cursor. See codec_fuzz.h for what is checked.
 */
#include "codec/lz4_frame.h"
#include "codec_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_codec(&trowel_lz4_stream, "lz4", 0, data, size);
}
