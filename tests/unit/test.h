/*
 * A very small unit-test harness. Each test file defines test functions and
 * a TEST_LIST; main runs them all and ends with the line
 * "N passed, N failed, N skipped" that CTest output readers understand.
 *
 * Skips. A case whose required input is absent (a corpus file, a peer
 * library, a system file) calls test_skip("why") -- or SKIP("why"), which
 * also returns, or REQUIRE_INPUT(cond), which skips and returns unless cond
 * holds. The case is then reported "skip", never "ok", even when some of its
 * checks ran. The exit status says what the file did:
 *   1   any case failed (failures win over skips);
 *   77  nothing failed but some case skipped (CTest's SKIP_RETURN_CODE, so
 *       ctest lists the test as "Skipped" instead of "Passed");
 *   0   every case ran and passed.
 * With TROWEL_REQUIRE_ALL=1 in the environment (CI sets it) a skip is a
 * failure: exit 1, so nothing CI expects to run can silently not run.
 */
#ifndef TROWEL_TEST_H
#define TROWEL_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>

static int test_failures_in_current;
static int test_skips_in_current;

/* Records that the current case could not run all of itself, and why. */
static inline void test_skip(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static inline void test_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  skip: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    test_skips_in_current++;
}

/* Skips (with the reason) and stops the current case. */
#define SKIP(...)                                                                            \
    do {                                                                                     \
        test_skip(__VA_ARGS__);                                                              \
        return;                                                                              \
    } while (0)

/* Stops the current case as skipped unless an input it needs is there. A
 * helper that already said why (test_skip) is not repeated. */
#define REQUIRE_INPUT(cond)                                                                  \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            if (!test_skips_in_current)                                                      \
                test_skip("%s:%d: input absent: %s", __FILE__, __LINE__, #cond);            \
            return;                                                                          \
        }                                                                                    \
    } while (0)

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);      \
            test_failures_in_current++;                                                      \
        }                                                                                    \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                   \
    do {                                                                                     \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                     \
        if (a_ != b_) {                                                                      \
            fprintf(stderr, "  %s:%d: %s == %s failed: %" PRIu64 " != %" PRIu64 "\n",       \
                    __FILE__, __LINE__, #a, #b, a_, b_);                                     \
            test_failures_in_current++;                                                      \
        }                                                                                    \
    } while (0)

#define CHECK_STR(a, b)                                                                      \
    do {                                                                                     \
        const char *a_ = (a), *b_ = (b);                                                     \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                             \
            fprintf(stderr, "  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__,       \
                    __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");               \
            test_failures_in_current++;                                                      \
        }                                                                                    \
    } while (0)

/* Stops the current test (for preconditions later checks depend on). */
#define REQUIRE(cond)                                                                        \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "  %s:%d: requirement failed: %s\n", __FILE__, __LINE__, #cond); \
            test_failures_in_current++;                                                      \
            return;                                                                          \
        }                                                                                    \
    } while (0)

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case;

#define TEST(name) {#name, name}

/* The exit status for a skip: 77, or a failure under TROWEL_REQUIRE_ALL=1. */
static inline int test_skip_status(void)
{
    const char *all = getenv("TROWEL_REQUIRE_ALL");
    if (all && strcmp(all, "1") == 0) {
        printf("TROWEL_REQUIRE_ALL=1: a skipped case is a failure\n");
        return 1;
    }
    return 77;
}

/* Runs the cases whose name contains argv[1] (all when absent). */
static inline int test_main(int argc, char **argv, const test_case *cases, size_t n)
{
    int passed = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < n; i++) {
        if (argc > 1 && !strstr(cases[i].name, argv[1]))
            continue;
        test_failures_in_current = 0;
        test_skips_in_current = 0;
        cases[i].fn();
        if (test_failures_in_current) {
            failed++;
            printf("FAIL %s\n", cases[i].name);
        } else if (test_skips_in_current) {
            skipped++;
            printf("skip %s\n", cases[i].name);
        } else {
            passed++;
            printf("ok   %s\n", cases[i].name);
        }
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (failed)
        return 1;
    return skipped ? test_skip_status() : 0;
}

#define TEST_MAIN(...)                                                                       \
    int main(int argc, char **argv)                                                          \
    {                                                                                        \
        static const test_case cases_[] = {__VA_ARGS__};                                     \
        return test_main(argc, argv, cases_, sizeof cases_ / sizeof cases_[0]);              \
    }

/* Where the shared corpus is (set by CMake); tests needing it skip if absent. */
#ifndef TROWEL_CORPUS_DIR
#define TROWEL_CORPUS_DIR "../shared/corpus"
#endif

#endif
