/* memread.h (internal to bench/) — the read loops behind the memory roofs
 * (memroof.h): they load every byte of a set of rows with the widest loads
 * this CPU has (AVX-512, AVX2, else 8-byte words) into register accumulators,
 * so that a pass is bound by memory, not by its own instructions. What they
 * sum is the rows' checksum (memroof.h: xb_read_checksum), which the tests use
 * to prove that a pass read every row once. */
#ifndef XATTN_BENCH_MEMREAD_H
#define XATTN_BENCH_MEMREAD_H

#include <stddef.h>
#include <stdint.h>

#include "xattn_bench/memroof.h"

typedef struct xb_read_sum {
  uint64_t sum;   /* xb_read_checksum of everything read */
  uint64_t bytes; /* bytes read */
} xb_read_sum;

/* Plan entries [from, to) in tiles of `tile` tokens: per KV head, the tile's
 * K rows then its V rows; before each tile the rows of the tokens `ahead` on
 * (all heads; 0: none) are prefetched into L2 (l1 0) or L1 (l1 1). tile 1 is
 * token-major. */
xb_read_sum xb_read_gather(const xb_gather_plan *plan, int64_t from, int64_t to, int64_t tile, int64_t ahead, int l1);

/* Bytes [from, to) of buf in 4 KiB steps, each prefetching the step
 * `prefetch_bytes` on (0: none). */
xb_read_sum xb_read_stream(const char *buf, size_t from, size_t to, size_t prefetch_bytes);

#endif
