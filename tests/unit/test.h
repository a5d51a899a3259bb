/*
 * A very small unit-test harness. Each test file defines test functions and
 * a TEST_LIST; main runs them all and ends with the line
 * "N passed, N failed" that CTest output readers understand.
 */
#ifndef TROWEL_TEST_H
#define TROWEL_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures_in_current;

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

/* Runs the cases whose name contains argv[1] (all when absent). */
static inline int test_main(int argc, char **argv, const test_case *cases, size_t n)
{
    int passed = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (argc > 1 && !strstr(cases[i].name, argv[1]))
            continue;
        test_failures_in_current = 0;
        cases[i].fn();
        if (test_failures_in_current) {
            failed++;
            printf("FAIL %s\n", cases[i].name);
        } else {
            passed++;
            printf("ok   %s\n", cases[i].name);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
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
