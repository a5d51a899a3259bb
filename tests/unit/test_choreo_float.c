/*
 * choreo_format_float against the plain way it replaces: snprintf "%.*f"
 * for N = min_dec..10 until strtod reads the float back, else "%.9g". The
 * text VCDs trowel writes must not change by a byte, so the two must agree
 * on every float: all the edge cases (ties, powers of two, subnormals, the
 * limit where the exact path hands over, infinities, NaN), every float of
 * the forms Valve's scenes hold (a step of 1/1000, 1/255, 1/100), and
 * several million random bit patterns. choreo_format_fixed against
 * snprintf "%.*f" itself: every middle of a BVCD step (k + 0.5) / 255 and
 * / 4096 and every step k / scale, ties, subnormals, the limit where it
 * hands over to snprintf, and random doubles.
 */
#include "format/valve/choreo_float.h"
#include "test.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

static void reference(char *out, size_t cap, float v, int min_dec)
{
    if (isfinite(v)) {
        for (int d = min_dec; d <= 10; d++) {
            snprintf(out, cap, "%.*f", d, (double)v);
            float back = (float)strtod(out, NULL);
            if (memcmp(&back, &v, sizeof v) == 0)
                return;
        }
    }
    snprintf(out, cap, "%.9g", (double)v);
}

/* Checks v at every min_dec; the number of disagreements. */
static int disagreements(float v)
{
    int bad = 0;
    for (int min_dec = 0; min_dec <= 10; min_dec++) {
        char want[64], got[64];
        reference(want, sizeof want, v, min_dec);
        choreo_format_float(got, sizeof got, v, min_dec);
        if (strcmp(want, got) != 0) {
            if (bad < 5)
                fprintf(stderr, "  %a (min_dec %d): want \"%s\", got \"%s\"\n", (double)v,
                        min_dec, want, got);
            bad++;
        }
    }
    return bad;
}

static float from_bits(uint32_t bits)
{
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static void test_edge_cases(void)
{
    static const float values[] = {
        0.0f, -0.0f, 0.5f, 1.5f, 2.5f, -2.5f, 0.125f, 0.375f, 0.0625f, 1e-7f, -1e-7f, 1e-12f,
        0.1f, 0.2f, 0.3f, 1.0f / 3.0f, 2.0f / 3.0f, 123.456f, 999999.9f, 900719.9f, 899999.94f,
        1e6f, 8388607.5f, 8388608.0f, 16777215.0f, 16777216.0f, 1e9f, 4294967296.0f, 1e20f,
        3.4028235e38f, -3.4028235e38f, 1.17549435e-38f, 1.4e-45f, -1.4e-45f, 0.05f, 0.005f,
        0.0005f, 0.00005f, 5e-11f, 4.9999999e-11f, 1.0f / 255.0f, 254.5f / 255.0f, 0.999f,
        0.9995f, 0.99995f, INFINITY, -INFINITY, NAN};
    int bad = 0;
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        bad += disagreements(values[i]);
    /* Every power of two a float holds, and its neighbours. */
    for (uint32_t field = 0; field < 255; field++) {
        uint32_t bits = field << 23;
        bad += disagreements(from_bits(bits));
        bad += disagreements(from_bits(bits + 1));
        if (bits)
            bad += disagreements(from_bits(bits - 1));
    }
    CHECK_EQ_U64(bad, 0);
}

/* The forms a binary scene holds: times in steps of 1/1000 (and their
 * halves), ramp values k/255 and their step middles, k/100 tags. */
static void test_scene_values(void)
{
    int bad = 0;
    for (int k = -3000; k <= 60000; k++) {
        bad += disagreements((float)k / 1000.0f);
        bad += disagreements(((float)k + 0.5f) / 1000.0f);
    }
    for (int k = 0; k <= 255; k++) {
        bad += disagreements((float)k / 255.0f);
        bad += disagreements(((float)k + 0.5f) / 255.0f);
    }
    for (int k = 0; k <= 10000; k++)
        bad += disagreements((float)k / 100.0f);
    CHECK_EQ_U64(bad, 0);
}

/* The next of a fixed sequence of pseudo-random bit patterns. */
static void xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
}

/* Random bit patterns, all over the range and between 1e-4 and 1e6 where
 * real values lie (a fixed seed: the same floats every run). */
static void test_random_floats(void)
{
    uint64_t x = 0x9e3779b97f4a7c15u;
    int bad = 0;
    for (int i = 0; i < 100000 && bad < 20; i++) {
        xorshift(&x);
        bad += disagreements(from_bits((uint32_t)x));
        uint32_t field = 113 + (uint32_t)(x >> 40) % 34; /* 2^-14 .. 2^20 */
        bad += disagreements(from_bits((uint32_t)(x >> 32 & 0x807fffffu) | field << 23));
    }
    CHECK_EQ_U64(bad, 0);
}

/* Checks v with dec_from..dec_to decimals; the number of disagreements. */
static int fixed_disagreements_in(double v, int dec_from, int dec_to)
{
    int bad = 0;
    for (int dec = dec_from; dec <= dec_to; dec++) {
        char want[400], got[400];
        snprintf(want, sizeof want, "%.*f", dec, v);
        choreo_format_fixed(got, sizeof got, v, dec);
        if (strcmp(want, got) != 0) {
            if (bad < 5)
                fprintf(stderr, "  %a (%d decimals): want \"%s\", got \"%s\"\n", v, dec, want,
                        got);
            bad++;
        }
    }
    return bad;
}

static int fixed_disagreements(double v) { return fixed_disagreements_in(v, 0, 10); }

static double double_from_bits(uint64_t bits)
{
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* The writer's uses (ramps and tags: 4 and 6 decimals of steps of 1/255
 * and 1/4096) for every step, and every number of decimals on a sample. */
static void test_fixed_step_middles(void)
{
    int bad = 0;
    static const double scales[] = {255.0, 4096.0};
    for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++)
        for (int k = 0; k <= 65535 && bad < 20; k++) {
            double mid = (k + 0.5) / scales[s], step = k / scales[s];
            bad += fixed_disagreements_in(mid, 4, 4) + fixed_disagreements_in(mid, 6, 6);
            bad += fixed_disagreements_in(step, 4, 4) + fixed_disagreements_in(step, 6, 6);
            if (k % 61 == 0)
                bad += fixed_disagreements(mid) + fixed_disagreements(-mid) +
                       fixed_disagreements(k / 100.0 + 0.005);
        }
    CHECK_EQ_U64(bad, 0);
}

static void test_fixed_edges(void)
{
    static const double values[] = {0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 0.125, 0.375, 1e-5, 5e-11,
                                    4.9406564584124654e-324, 2.2250738585072014e-308, 1.0, 9.5,
                                    0.05, 0.15, 0.25, 1e6, 123456789.123456789, 9.2e18, 9.3e18,
                                    1.8e19, 1e22, 1e300, 1.7976931348623157e308, 4503599627370495.5,
                                    9007199254740993.0, INFINITY, -INFINITY, NAN};
    int bad = 0;
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        bad += fixed_disagreements(values[i]);
    CHECK_EQ_U64(bad, 0);
}

static void test_fixed_random(void)
{
    uint64_t x = 0x2545f4914f6cdd1du;
    int bad = 0;
    for (int i = 0; i < 20000 && bad < 20; i++) {
        xorshift(&x);
        bad += fixed_disagreements(double_from_bits(x));
        uint64_t field = 1000 + (x >> 40) % 90; /* 2^-23 .. 2^66 */
        bad += fixed_disagreements(double_from_bits((x & 0x800fffffffffffffu) | field << 52));
    }
    CHECK_EQ_U64(bad, 0);
}

TEST_MAIN(TEST(test_edge_cases), TEST(test_scene_values), TEST(test_random_floats),
          TEST(test_fixed_step_middles), TEST(test_fixed_edges), TEST(test_fixed_random))
