/*
 * libFuzzer target: the VPP reader (versions 1, 3, 4, 6, 10 and 17, little-
 * and big-endian; seeds for each in fuzz/corpus/vpp) through the public
 * archive API, as the CLI drives it (see archive_fuzz.h): header,
 * directory, names, every mode, the solid stream's cursor.
 */
#include "archive_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_archive(data, size, "vpp", "fuzz.vpp_pc");
}
