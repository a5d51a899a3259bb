/*
 * Text VCD floats: the shortest "%.Nf" (N >= a field's least number of
 * decimals, up to 10) that reads back as the same float, else %.9g. Valve's
 * own files write fields such as "time" with a fixed number of decimals;
 * more are added only where that many would not give the float back, so a
 * binary scene decompiles to text that compiles to the same bits.
 *
 * The plain way (snprintf "%.*f", strtod, compare; up to ten times) is the
 * slowest step of decompiling a scenes.image: glibc prints a float's exact
 * binary value with multiple-precision arithmetic. A float is m * 2^e with
 * m < 2^24, so for N <= 10 its value times 10^N is m * 5^N * 2^(e+N), with
 * m * 5^N < 2^48: an integer shifted left or right. Rounding it to the
 * nearest integer, ties to even (as glibc's printf does under the default
 * rounding mode), gives exactly the digits "%.*f" prints. Reading back is
 * q / 10^N in double: both are exact doubles below 2^53, and IEEE division
 * rounds once, to the same double strtod gives for the same decimal; the
 * same double then rounds to the same float. Values whose q would not stay
 * below 2^53 (|v| of about 900,000 and more with ten decimals) and
 * non-finite ones go the plain way. tests/unit/test_choreo_float.c checks
 * both ways agree.
 *
 * choreo_format_fixed prints a double with a fixed number of decimals the
 * same way: m < 2^53 times 5^N (N <= 10) fits 128 bits, the shift rounds
 * ties to even, and the digits are those of "%.*f". The text writer uses
 * it for the middles of the steps a BVCD stores (ramps, tags).
 */
#include "choreo_float.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_LIMIT ((uint64_t)1 << 53)

static const uint64_t pow5[11] = {1, 5, 25, 125, 625, 3125, 15625, 78125, 390625, 1953125,
                                  9765625};
static const double pow10d[11] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10};

static bool same_float(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* |v| * 10^dec rounded to the nearest integer, ties to even, into *q;
 * false when that is 2^53 or more. m and e: |v| = m * 2^e. */
static bool scaled(uint32_t m, int e, int dec, uint64_t *q)
{
    uint64_t n = (uint64_t)m * pow5[dec]; /* < 2^48 */
    int shift = e + dec;
    if (shift >= 0) {
        if (shift >= 53 || n >= EXACT_LIMIT >> shift)
            return false;
        *q = n << shift;
        return true;
    }
    int k = -shift;
    if (k > 60) { /* n < 2^48 is below half of 2^k: rounds to 0 */
        *q = 0;
        return true;
    }
    uint64_t whole = n >> k, rest = n & (((uint64_t)1 << k) - 1), half = (uint64_t)1 << (k - 1);
    if (rest > half || (rest == half && (whole & 1)))
        whole++;
    *q = whole;
    return whole < EXACT_LIMIT;
}

/* q / 10^dec with dec decimals, after a '-' when negative. */
static void print_fixed(char *out, bool negative, uint64_t q, int dec)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + q % 10);
        q /= 10;
    } while (q > 0);
    while (n <= dec) /* at least one digit before the point */
        digits[n++] = '0';
    char *p = out;
    if (negative)
        *p++ = '-';
    while (n > dec)
        *p++ = digits[--n];
    if (dec > 0)
        *p++ = '.';
    while (n > 0)
        *p++ = digits[--n];
    *p = '\0';
}

/* One candidate the plain way. */
static bool plain_candidate(char *out, size_t cap, float v, int dec)
{
    snprintf(out, cap, "%.*f", dec, (double)v);
    return same_float((float)strtod(out, NULL), v);
}

void choreo_format_fixed(char *out, size_t cap, double v, int dec)
{
#ifdef __SIZEOF_INT128__
    __extension__ typedef unsigned __int128 u128;
    if (isfinite(v) && dec >= 0 && dec <= 10) {
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        bool negative = bits >> 63;
        unsigned field = (unsigned)(bits >> 52) & 0x7ff;
        uint64_t m = bits & (((uint64_t)1 << 52) - 1);
        int e = field ? (int)field - 1075 : -1074;
        if (field)
            m |= (uint64_t)1 << 52;
        u128 n = (u128)m * pow5[dec]; /* < 2^77 */
        int shift = e + dec;
        u128 q;
        if (shift >= 0) {
            q = shift < 64 && n < ((u128)1 << (127 - shift)) ? n << shift : (u128)-1;
        } else if (-shift >= 100) {
            q = 0; /* n < 2^77 is below half of 2^100 */
        } else {
            int k = -shift;
            u128 rest = n & (((u128)1 << k) - 1), half = (u128)1 << (k - 1);
            q = n >> k;
            if (rest > half || (rest == half && (q & 1)))
                q++;
        }
        if (q < ((u128)1 << 63)) {
            print_fixed(out, negative, (uint64_t)q, dec);
            return;
        }
    }
#endif
    snprintf(out, cap, "%.*f", dec, v);
}

void choreo_format_float(char *out, size_t cap, float v, int min_dec)
{
    if (isfinite(v)) {
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        bool negative = bits >> 31;
        uint32_t field = (bits >> 23) & 0xff, m = bits & 0x7fffff;
        int e = field ? (int)field - 150 : -149;
        if (field)
            m |= (uint32_t)1 << 23;
        for (int dec = min_dec; dec <= 10; dec++) {
            uint64_t q;
            if (!scaled(m, e, dec, &q)) {
                if (plain_candidate(out, cap, v, dec))
                    return;
                continue;
            }
            double back = (double)q / pow10d[dec];
            if (same_float((float)(negative ? -back : back), v)) {
                print_fixed(out, negative, q, dec);
                return;
            }
        }
    }
    snprintf(out, cap, "%.9g", (double)v);
}
