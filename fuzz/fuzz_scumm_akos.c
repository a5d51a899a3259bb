/* libFuzzer target: the SCUMM AKOS decoder and AKSQ walker (the input is an
 * AKOS block). */
#include "scumm_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    scumm_fuzz_run(data, size, true);
    return 0;
}
