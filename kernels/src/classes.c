/* Workload classes (docs/formats.md §4): the buckets the config header is keyed
 * by. One definition serves the kernels' dispatch and the tuner. */
#include <string.h>

#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"

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
