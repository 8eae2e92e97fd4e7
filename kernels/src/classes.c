/* Workload classes (docs/formats.md §4): the buckets the config header is keyed by, and
 * mode names. One definition serves the kernels' dispatch and the tuner. */
#include <string.h>

#include "xattn/xattn.h"

int xattn_extend_bucket(int64_t max_extend) {
  if (max_extend <= 64) return 0;
  if (max_extend <= 512) return 1;
  if (max_extend <= 2048) return 2;
  return 3;
}

int xattn_prefix_bucket(int64_t max_prefix) {
  if (max_prefix <= 0) return 0;
  if (max_prefix <= 1024) return 1;
  if (max_prefix <= 8192) return 2;
  return 3;
}

static const char *const mode_names[] = {"causal", "bidirectional", "cross", "tree"};

const char *xattn_mode_name(xattn_mode m) {
  return (unsigned)m < sizeof mode_names / sizeof mode_names[0] ? mode_names[m] : "?";
}

int xattn_mode_parse(const char *name, xattn_mode *m) {
  if (!name || !m) return -1;
  for (unsigned i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++)
    if (strcmp(name, mode_names[i]) == 0) { *m = (xattn_mode)i; return 0; }
  return -1;
}

static const char *const cache_layout_names[] = {"token_major", "head_major"};

const char *xattn_cache_layout_name(xattn_cache_layout l) {
  return (unsigned)l < sizeof cache_layout_names / sizeof cache_layout_names[0] ? cache_layout_names[l] : "?";
}

int xattn_cache_layout_parse(const char *name, xattn_cache_layout *l) {
  if (!name) return -1;
  for (unsigned i = 0; i < sizeof cache_layout_names / sizeof cache_layout_names[0]; i++)
    if (strcmp(name, cache_layout_names[i]) == 0) { *l = (xattn_cache_layout)i; return 0; }
  return -1;
}
