/* Names of the public enums, each written once: name() gives the stable
 * string the command line, case folders, suites, config headers and results
 * use; parse() reads it back (0 on success, -1 for an unknown name, *out
 * untouched). */
#include <string.h>

#include "xattn/xattn.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *name_of(const char *const *names, int n, int v) {
  return v >= 0 && v < n ? names[v] : "?";
}

static int index_of(const char *const *names, int n, const char *name) {
  if (!name) return -1;
  for (int i = 0; i < n; i++)
    if (strcmp(name, names[i]) == 0) return i;
  return -1;
}

#define NAMED_ENUM(type, fn, ...)                                              \
  static const char *const fn##_names[] = {__VA_ARGS__};                       \
  const char *xattn_##fn##_name(type v) { return name_of(fn##_names, COUNT(fn##_names), (int)v); } \
  int xattn_##fn##_parse(const char *name, type *out) {                        \
    const int i = index_of(fn##_names, COUNT(fn##_names), name);               \
    if (i < 0 || !out) return -1;                                              \
    *out = (type)i;                                                            \
    return 0;                                                                  \
  }

/* in enum order */
NAMED_ENUM(xattn_mode, mode, "causal", "bidirectional", "cross", "tree")
NAMED_ENUM(xattn_align, align, "bottom_right", "top_left")
NAMED_ENUM(xattn_schedule, schedule, "auto", "static", "dynamic")
NAMED_ENUM(xattn_index_type, index_type, "i32", "i64")
NAMED_ENUM(xattn_cache_layout, cache_layout, "token_major", "head_major")
NAMED_ENUM(xattn_status, status, "ok", "null", "shape", "index", "stride", "mode", "dtype", "unsupported",
           "nomem", "io")

const char *xattn_status_string(xattn_status s) {
  const char *n = xattn_status_name(s);
  return n[0] == '?' ? "unknown" : n;
}
