/* libFuzzer target: PRC/REL script tables (cine-script). The first byte
 * picks the name (.PRC or .REL), which picks the record layout. */
#include "cine_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const cine_fuzz_conversion conv[] = {{"json", NULL, 0}};
    if (size < 1)
        return 0;
    cine_fuzz_run(data + 1, size - 1, "cine-script", data[0] & 1 ? "F.REL" : "F.PRC", conv, 1);
    return 0;
}
