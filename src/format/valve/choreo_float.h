/*
 * How a text VCD writes a float (choreo_float.c): the shortest "%.Nf",
 * N from a field's least number of decimals up to 10, that reads back
 * (strtod, then float) as the same float; %.9g when none does.
 */
#ifndef TROWEL_VALVE_CHOREO_FLOAT_H
#define TROWEL_VALVE_CHOREO_FLOAT_H

#include <stddef.h>

/* Writes v into out (cap >= 48 bytes) as described above; min_dec 0..10. */
void choreo_format_float(char *out, size_t cap, float v, int min_dec);

/* Writes v into out (cap >= 48 bytes) exactly as snprintf "%.*f" with dec
 * decimals does, without its multiple-precision arithmetic where integers
 * suffice (dec 0..10, |v| below about 9e18 / 10^dec). */
void choreo_format_fixed(char *out, size_t cap, double v, int dec);

#endif
