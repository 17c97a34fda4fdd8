/* check.h: the assertion every C test uses.  A failed CHECK prints where and what, counts, and
 * lets the test go on, so one run reports every failure; main returns failures != 0. */
#ifndef INSTBENCH_TEST_CHECK_H
#define INSTBENCH_TEST_CHECK_H

#include <stdio.h>

static int failures;
#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            failures++;                                                     \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

#endif
