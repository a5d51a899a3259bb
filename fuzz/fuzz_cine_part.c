/*
 * libFuzzer target: a Cinematique part file through the public archive API,
 * as the CLI drives it (see archive_fuzz.h).
 */
#include "archive_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_archive(data, size, "cine-part", "FUZZ.PRT");
}
