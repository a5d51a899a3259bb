/* libFuzzer target: the Cinematique image readers. The first byte picks
 * cine-msk, cine-ani, cine-set or cine-bg; the rest is the file, converted
 * to a PNG sheet and to single frames. */
#include "cine_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const formats[4] = {"cine-msk", "cine-ani", "cine-set", "cine-bg"};
    static const char *const names[4] = {"F.MSK", "F.ANI", "F.SET", "F.PI1"};
    static const char *const first[] = {"frame=0"};
    static const char *const last[] = {"frame=2", "transparent=3"};
    static const char *const cols[] = {"columns=1"};
    const cine_fuzz_conversion conv[] = {
        {"png", NULL, 0}, {"png", first, 1}, {"png", last, 2}, {"png", cols, 1}};
    if (size < 1)
        return 0;
    unsigned pick = data[0] % 4;
    cine_fuzz_run(data + 1, size - 1, formats[pick], names[pick], conv,
                  sizeof conv / sizeof conv[0]);
    return 0;
}
