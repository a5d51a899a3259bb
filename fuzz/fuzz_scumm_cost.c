/* libFuzzer target: the SCUMM COST decoder (the input is a COST block). */
#include "scumm_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    scumm_fuzz_run(data, size, false);
    return 0;
}
