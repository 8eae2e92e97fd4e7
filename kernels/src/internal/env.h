/* Test-only numeric overrides read from the environment (kvpack.c, driver.c):
 * they let small test problems reach paths that only large calls take. */
#ifndef XATTN_INTERNAL_ENV_H
#define XATTN_INTERNAL_ENV_H

#include <stdlib.h>

/* The value of environment variable `name` as a number >= 0, or dflt when it
 * is unset, empty or does not parse as one. */
static inline double xattn_env_number(const char *name, double dflt) {
  const char *env = getenv(name);
  if (!env || !*env) return dflt;
  char *end;
  const double v = strtod(env, &end);
  return *end || !(v >= 0.0) ? dflt : v;
}

#endif
