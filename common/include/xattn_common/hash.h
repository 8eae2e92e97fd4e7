/* FNV-1a 64 and splitmix64, written once for every tool that hashes names
 * and files (machine folders, suite and class digests) or draws seeded
 * numbers (generated batches, test data, the tuner's bootstrap). */
#ifndef XATTN_COMMON_HASH_H
#define XATTN_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

#define XC_FNV1A64_OFFSET 0xcbf29ce484222325ULL
#define XC_FNV1A64_PRIME 0x100000001b3ULL
/* The start value the bench used for machine names and generated-workload
 * seeds before the hashes were shared here: FNV's offset basis with its last
 * digit lost (14695981039346656037 -> 1469598103934665603). Results folders
 * (results/<machine>/), tune caches and generated batches depend on it, so
 * those hashes keep it: history across versions stays one machine and one
 * workload. */
#define XC_FNV1A64_BENCH_SEED 1469598103934665603ULL

/* FNV-1a 64 of n bytes, continuing from h (start with XC_FNV1A64_OFFSET). */
static inline uint64_t xc_fnv1a64_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * XC_FNV1A64_PRIME;
  return h;
}

/* FNV-1a 64 of a NUL-terminated string, continuing from h. */
static inline uint64_t xc_fnv1a64_str(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * XC_FNV1A64_PRIME;
  return h;
}

/* splitmix64's output function: a bijective mix of 64 bits. */
static inline uint64_t xc_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* splitmix64: advances *state and returns the next number. */
static inline uint64_t xc_splitmix64(uint64_t *state) {
  *state += 0x9e3779b97f4a7c15ULL;
  return xc_mix64(*state);
}

/* A double uniform in [0, 1) from the top 53 bits of splitmix64. */
static inline double xc_uniform01(uint64_t *state) { return (double)(xc_splitmix64(state) >> 11) * 0x1.0p-53; }

#endif
