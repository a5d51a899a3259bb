/*
 * Volition's v3 name hash, written again for the tests that build packfiles
 * by hand (independently of the library's vpp_name_hash, which verify
 * checks against it): rotate left by 6, XOR each byte, A-Z lowered.
 */
#ifndef TROWEL_TEST_VPP_HASH_H
#define TROWEL_TEST_VPP_HASH_H

#include <stdint.h>

static inline uint32_t vhash(const char *s)
{
    uint32_t h = 0;
    for (; *s; s++) {
        unsigned c = *s >= 'A' && *s <= 'Z' ? (unsigned)*s + 32 : (unsigned char)*s;
        h = ((h << 6) | (h >> 26)) ^ c;
    }
    return h;
}

#endif
