/* Workload classes (docs/formats.md §4): the buckets the config header is keyed
 * by. One definition serves the kernels' dispatch and the tuner. */
#include <stdint.h>
#include <string.h>

#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"

/* Upper bounds of the extend buckets (max E_b), the last bucket is open.
 * Format 2 splits format 1's "<= 64" where the best path changed in the
 * small-extend sweep (bench/README.md "Few rows: the extend buckets"): at
 * E = 1 the few-rows `decode` layout wins in f32 and bf16; at E = 2..4 it wins
 * or ties in f32 but loses in bf16 from E = 4; from E = 8 the flash layouts win
 * everywhere. Every format-1 bound is a format-2 bound, so a format-2 bucket
 * lies in one format-1 bucket. */
static const int64_t extend_bounds_v1[] = {64, 512, 2048};
static const int64_t extend_bounds_v2[] = {1, 4, 64, 512, 2048};
_Static_assert(sizeof extend_bounds_v1 / sizeof extend_bounds_v1[0] + 1 == XATTN_EXTEND_BUCKETS_FORMAT1,
               "XATTN_EXTEND_BUCKETS_FORMAT1 counts the format-1 buckets");
_Static_assert(sizeof extend_bounds_v2 / sizeof extend_bounds_v2[0] + 1 == XATTN_EXTEND_BUCKETS,
               "XATTN_EXTEND_BUCKETS counts the format-2 buckets");

static int bucket_of(const int64_t *bounds, int n, int64_t v) {
  for (int i = 0; i < n; i++)
    if (v <= bounds[i]) return i;
  return n;
}
#define BUCKET_OF(bounds, v) bucket_of(bounds, (int)(sizeof bounds / sizeof bounds[0]), v)

int xattn_extend_bucket(int64_t max_extend) { return BUCKET_OF(extend_bounds_v2, max_extend); }

int xattn_extend_bucket_in_format(int format, int bucket) {
  if (bucket < 0 || bucket >= XATTN_EXTEND_BUCKETS) return -1;
  if (format == XATTN_CONFIG_FORMAT_CURRENT) return bucket;
  if (format != 1) return -1;
  /* the format-1 bucket holding this one: that of its upper bound (the open
     last bucket lies in format 1's open last bucket) */
  const int last = XATTN_EXTEND_BUCKETS - 1;
  return bucket == last ? BUCKET_OF(extend_bounds_v1, INT64_MAX) : BUCKET_OF(extend_bounds_v1, extend_bounds_v2[bucket]);
}

int xattn_prefix_bucket(int64_t max_prefix) {
  if (max_prefix <= 0) return 0;
  if (max_prefix <= 1024) return 1;
  if (max_prefix <= 8192) return 2;
  return 3;
}
