/* CHECK for the C test programs: a failed condition is printed ("FAILED: ...") and counted in
 * `failures`, and the program goes on, so that one run reports every failure; its exit status
 * says whether there was any. */
#ifndef ZPMIX_TESTS_SUPPORT_CHECK_H
#define ZPMIX_TESTS_SUPPORT_CHECK_H
#include <stdio.h>

static int failures = 0;
#define CHECK(cond, ...)                  \
    do {                                  \
        if (!(cond)) {                    \
            fprintf(stderr, "FAILED: ");  \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n");        \
            ++failures;                   \
        }                                 \
    } while (0)

#endif
