/*
 * The two checksums of Volition packfiles, which reading, writing and
 * verify all compute (so they sit below all three, in a file of their
 * own): the v3 directory's name hash and the v10/v17 header's CRC-32.
 * Facts: ../shared/formats/volition-vpp-asm.md; vpp_verify.c compares
 * them with the stored values.
 */
#include "vpp.h"

uint32_t vpp_name_hash(const char *name)
{
    uint32_t h = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        unsigned c = *p >= 'A' && *p <= 'Z' ? *p + 32u : *p;
        h = ((h << 6) | (h >> 26)) ^ c;
    }
    return h;
}

uint32_t vpp_header_crc(const uint8_t *data, size_t n)
{
    /* trowel_crc32_update pre- and post-inverts (zlib's convention):
     * starting it from ~0 and inverting the result cancels both. */
    return ~trowel_crc32_update(0xFFFFFFFFu, data, n);
}
