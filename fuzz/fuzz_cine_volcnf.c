/*
 * libFuzzer target: VOL.CNF through the public archive API, as the CLI
 * drives it (see archive_fuzz.h). The input is named as if in a folder that
 * does not exist, so no volume is found beside it.
 */
#include "archive_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_archive(data, size, "cine-volcnf", "/nonexistent-trowel-fuzz/VOL.CNF");
}
