/* CHECK(cond, fmt, ...): counts a check and, when cond is false, a failure,
 * printing "FAIL function:line: message". The including test defines
 * `static long n_checks, n_failures;` and reports them at the end. */
#ifndef XATTN_TESTS_CHECK_H
#define XATTN_TESTS_CHECK_H

#include <stdio.h>

#define CHECK(cond, ...)                          \
  do {                                            \
    n_checks++;                                   \
    if (!(cond)) {                                \
      n_failures++;                               \
      printf("FAIL %s:%d: ", __func__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
    }                                             \
  } while (0)

#endif
