/* libFuzzer target: AMI/SPL samples (cine-sample) to WAV. */
#include "cine_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const rate[] = {"rate=22050"};
    const cine_fuzz_conversion conv[] = {{"wav", NULL, 0}, {"wav", rate, 1}};
    cine_fuzz_run(data, size, "cine-sample", "FUZZ.AMI", conv, sizeof conv / sizeof conv[0]);
    return 0;
}
