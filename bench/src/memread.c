/* The read loops behind the memory roofs (memread.h), one copy per ISA
 * (memread.inc). A row's whole vectors go into two vector accumulators held in
 * registers (two, so that consecutive loads do not wait on one add chain); the
 * 8-byte words and bytes past them into a scalar. The earlier loop summed
 * 64-byte generic vectors through a pointer: without AVX-512 in the bench's
 * flags GCC kept that accumulator on the stack, a store and a reload per 16
 * bytes, which capped a pass at ~8 GB/s per core — below what the decode path
 * reads (bench/README.md "Memory roofs"). */
#include "memread.h"

#include <immintrin.h>
#include <string.h>

#define MR_INLINE static inline __attribute__((always_inline))

/* the 8-byte words from byte i on, then the last bytes one at a time */
MR_INLINE uint64_t mr_words(const char *src, size_t i, size_t bytes) { return xb_read_checksum(src + i, bytes - i); }

uint64_t xb_read_checksum(const char *src, size_t bytes) {
  uint64_t s = 0;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    memcpy(&w, src + i, 8);
    s += w;
  }
  for (; i < bytes; i++) s += (unsigned char)src[i];
  return s;
}

/* into L2 (T1, as the decode path does by default: kernels/src/decode/decode.inc),
   or into L1 (T0) where l1 is set */
MR_INLINE void mr_prefetch(const char *src, size_t bytes, int l1) {
  if (l1)
    for (size_t i = 0; i < bytes; i += 64) __builtin_prefetch(src + i, 0, 3);
  else
    for (size_t i = 0; i < bytes; i += 64) __builtin_prefetch(src + i, 0, 2);
}

/* ---- AVX-512 ---- */
typedef struct acc512 {
  __m512i a, b;
} acc512;
__attribute__((target("avx512f"), always_inline)) static inline acc512 zero512(void) {
  return (acc512){_mm512_setzero_si512(), _mm512_setzero_si512()};
}
__attribute__((target("avx512f"), always_inline)) static inline acc512 row512(acc512 c, const char *src, size_t bytes,
                                                                               uint64_t *tail) {
  size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    c.a = _mm512_add_epi64(c.a, _mm512_loadu_si512(src + i));
    c.b = _mm512_add_epi64(c.b, _mm512_loadu_si512(src + i + 64));
  }
  if (i + 64 <= bytes) {
    c.a = _mm512_add_epi64(c.a, _mm512_loadu_si512(src + i));
    i += 64;
  }
  if (i < bytes) *tail += mr_words(src, i, bytes);
  return c;
}
/* unsigned lanes: _mm512_reduce_add_epi64 adds as signed, which may overflow */
__attribute__((target("avx512f"), always_inline)) static inline uint64_t total512(acc512 c) {
  uint64_t w[8], s = 0;
  _mm512_storeu_si512(w, _mm512_add_epi64(c.a, c.b));
  for (int i = 0; i < 8; i++) s += w[i];
  return s;
}
#define MR_NAME(x) x##_avx512
#define MR_TARGET __attribute__((target("avx512f")))
#define mr_acc acc512
#define mr_zero zero512
#define mr_row row512
#define mr_total total512
#include "memread.inc"

/* ---- AVX2 ---- */
typedef struct acc256 {
  __m256i a, b;
} acc256;
__attribute__((target("avx2"), always_inline)) static inline acc256 zero256(void) {
  return (acc256){_mm256_setzero_si256(), _mm256_setzero_si256()};
}
__attribute__((target("avx2"), always_inline)) static inline acc256 row256(acc256 c, const char *src, size_t bytes,
                                                                            uint64_t *tail) {
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    c.a = _mm256_add_epi64(c.a, _mm256_loadu_si256((const __m256i *)(src + i)));
    c.b = _mm256_add_epi64(c.b, _mm256_loadu_si256((const __m256i *)(src + i + 32)));
  }
  if (i + 32 <= bytes) {
    c.a = _mm256_add_epi64(c.a, _mm256_loadu_si256((const __m256i *)(src + i)));
    i += 32;
  }
  if (i < bytes) *tail += mr_words(src, i, bytes);
  return c;
}
__attribute__((target("avx2"), always_inline)) static inline uint64_t total256(acc256 c) {
  uint64_t w[4];
  _mm256_storeu_si256((__m256i *)w, _mm256_add_epi64(c.a, c.b));
  return w[0] + w[1] + w[2] + w[3];
}
#define MR_NAME(x) x##_avx2
#define MR_TARGET __attribute__((target("avx2")))
#define mr_acc acc256
#define mr_zero zero256
#define mr_row row256
#define mr_total total256
#include "memread.inc"

/* ---- any x86-64 / other CPUs: 8-byte words, two chains ---- */
typedef struct acc64 {
  uint64_t a, b;
} acc64;
MR_INLINE acc64 zero64(void) { return (acc64){0, 0}; }
MR_INLINE acc64 row64(acc64 c, const char *src, size_t bytes, uint64_t *tail) {
  size_t i = 0;
  for (; i + 16 <= bytes; i += 16) {
    uint64_t w[2];
    memcpy(w, src + i, 16);
    c.a += w[0];
    c.b += w[1];
  }
  if (i < bytes) *tail += mr_words(src, i, bytes);
  return c;
}
MR_INLINE uint64_t total64(acc64 c) { return c.a + c.b; }
#define MR_NAME(x) x##_words
#define MR_TARGET
#define mr_acc acc64
#define mr_zero zero64
#define mr_row row64
#define mr_total total64
#include "memread.inc"

static int forced_isa = -1; /* xb_read_force_isa (tests), set before any pass */

static int best_isa(void) { return __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0; }

/* 2: AVX-512, 1: AVX2, 0: words (a load and a bit test: cheap per call, and
   nothing written from the passes' threads) */
static int read_isa(void) {
  const int best = best_isa();
  return forced_isa >= 0 && forced_isa < best ? forced_isa : best;
}

int xb_read_force_isa(int isa) {
  forced_isa = isa;
  return read_isa();
}

xb_read_sum xb_read_gather(const xb_gather_plan *plan, int64_t from, int64_t to, int64_t tile, int64_t ahead, int l1) {
  if (tile < 1) tile = 1;
  switch (read_isa()) {
  case 2: return gather_avx512(plan, from, to, tile, ahead, l1);
  case 1: return gather_avx2(plan, from, to, tile, ahead, l1);
  default: return gather_words(plan, from, to, tile, ahead, l1);
  }
}

xb_read_sum xb_read_stream(const char *buf, size_t from, size_t to, size_t prefetch_bytes) {
  switch (read_isa()) {
  case 2: return stream_avx512(buf, from, to, prefetch_bytes);
  case 1: return stream_avx2(buf, from, to, prefetch_bytes);
  default: return stream_words(buf, from, to, prefetch_bytes);
  }
}
