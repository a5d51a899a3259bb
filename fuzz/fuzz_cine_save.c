/* libFuzzer target: Future Wars / Operation Stealth savegames (cine-save),
 * info and the savegame JSON. */
#include "cine_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const cine_fuzz_conversion conv[] = {{"savejson", NULL, 0}, {"json", NULL, 0}};
    cine_fuzz_run(data, size, "cine-save", "FUZZ.SAV", conv, sizeof conv / sizeof conv[0]);
    return 0;
}
