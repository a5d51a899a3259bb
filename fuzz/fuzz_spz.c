/*
 * libFuzzer target: the SPZ reader through the public archive API, as the
 * CLI drives it (see archive_fuzz.h). The name makes detection accept it.
 */
#include "archive_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_archive(data, size, "spz", "FUZZ-130.spz");
}
