/* libFuzzer target: TEXTE.DAT fonts (cine-font), to PNG sheet, one glyph,
 * and the glyph map. */
#include "cine_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const one[] = {"frame=1"};
    static const char *const cols[] = {"columns=7", "transparent=none"};
    const cine_fuzz_conversion conv[] = {
        {"png", NULL, 0}, {"png", one, 1}, {"png", cols, 2}, {"glyphmap", NULL, 0}, {"json", NULL, 0}};
    cine_fuzz_run(data, size, "cine-font", "TEXTE.DAT", conv, sizeof conv / sizeof conv[0]);
    return 0;
}
