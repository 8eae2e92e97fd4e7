/* Internal contract between the portable driver (driver.c), the per-ISA kernels
 * (isa/isa_*.c) and the API layer (api.c). Not installed. */
#ifndef XATTN_INTERNAL_KERNEL_H
#define XATTN_INTERNAL_KERNEL_H

#include <stdint.h>
#include "xattn/xattn.h"

/* log2(e): kernels work in base 2 (exp2 is cheaper), so scores, caps and sinks
 * are multiplied by it once up front. */
#define XATTN_LOG2E 1.4426950408889634f

/* Most rows (query tokens x heads) one work item holds. A GQA item covers
 * BLOCK_M queries of several heads; this caps its accumulators and packed Q
 * so that a thread's working set stays in L2 (heads are split into groups). */
#define XATTN_MAX_ITEM_ROWS 512

/* Everything a kernel needs about the call, resolved once. */
typedef struct xattn_run {
  const xattn_problem *p;
  int bm, bn;            /* the variant */
  int heads_per_kv;      /* H_Q / H_KV */
  int heads_per_item;    /* query heads one item covers (1 for flat) */
  float score_scale2;    /* scale * log2(e) */
  float cap2;            /* logit_cap * log2(e), 0 = off */
  const int64_t *ext_start; /* [B] first row of request b (extend_start or prefix sum) */
  int prefetch;          /* decode layout: software prefetch distance in tokens, 0 = none */
} xattn_run;

/* One unit of work: rows = queries q0..q0+nq-1 of request b times query heads
 * h0..h0+nh-1 (all reading KV head kvh), keys restricted to [key_lo, key_hi). */
typedef struct xattn_item {
  int32_t b, kvh, h0, nh, q0, nq;
  int32_t key_lo, key_hi;
  int32_t part;          /* kvsplit: index of the partial slot, -1 = write o */
  int64_t cost;          /* visible pairs (for ordering), per head */
} xattn_item;

/* Partial result of one kvsplit item: unnormalised accumulators and the
 * running max / sum per row, in base 2. Rows ordered like the item's rows. */
typedef struct xattn_partial_view {
  float *acc;            /* [rows][dv] */
  float *m, *l;          /* [rows] */
} xattn_partial_view;

/* Runs one item. scratch: this thread's slice of the per-call scratch
 * (scratch_bytes(run) bytes, 64-byte aligned, allocated once per call by the
 * driver). part: kvsplit partial to fill, or NULL to write o. */
typedef void (*xattn_item_fn)(const xattn_run *run, const xattn_item *it,
                              void *scratch, const xattn_partial_view *part);
typedef size_t (*xattn_scratch_fn)(const xattn_run *run);

/* One ISA's kernels. items[v] is the kernel for variant v of the compiled
 * variant list (xattn_variant_name(v)); kernels handle every dtype. */
typedef struct xattn_isa_kernels {
  const char *name;
  xattn_scratch_fn scratch_bytes;
  const xattn_item_fn *items;
  /* the few-rows path (layout "decode", src/decode/decode.inc): one item = a
     request's rows over a key range, any variant */
  xattn_item_fn decode_item;
  xattn_scratch_fn decode_scratch_bytes;
  /* An ISA with bf16 code only names the ISA whose kernels run its f32 and f16
   * problems; resolution substitutes it, so what a call reports (xattn_resolve,
   * bench rows, the config class) is the code that really runs. NULL: itself. */
  const struct xattn_isa_kernels *non_bf16;
} xattn_isa_kernels;

/* Compiled ISAs, best first (index = xattn_isa_name order). */
extern const xattn_isa_kernels xattn_isa_scalar;
#ifdef XATTN_HAVE_X86_ISAS
extern const xattn_isa_kernels xattn_isa_avx2;
extern const xattn_isa_kernels xattn_isa_avx512;
extern const xattn_isa_kernels xattn_isa_avx512bf16;
extern const xattn_isa_kernels xattn_isa_amx;
/* isa_avx512.c's decode path, shared by the bf16-only ISAs */
void xattn_avx512_decode_item(const xattn_run *run, const xattn_item *it, void *scratch,
                              const xattn_partial_view *part);
size_t xattn_avx512_decode_scratch_bytes(const xattn_run *run);
#endif

/* cpu.c: can this CPU run the named ISA (built or not). */
int xattn_cpu_can_run(const char *isa);

/* config.c: the first config-header row matching the class. */
typedef struct xattn_config_row {
  const char *isa, *dtype;
  int d, dv;
  const char *mode;
  int extend_bucket, prefix_bucket;
  const char *variant, *layout, *schedule;
  int threads;
  int kv_splits;         /* kvsplit / decode: key-range splits, 0 = auto (optional column) */
  int prefetch;          /* decode: prefetch distance in tokens, 0 = auto, -1 = off (optional column) */
} xattn_config_row;
const xattn_config_row *xattn_config_lookup(const char *isa, xattn_dtype dt, int d, int dv,
                                            xattn_mode mode, int extend_bucket,
                                            int prefix_bucket);

/* variants: compiled list from variants.def filtered by XATTN_VARIANTS. */
int xattn_variant_index(const char *name);          /* -1 if not compiled */
int xattn_variant_nearest(const char *name);        /* nearest compiled, -1 if unparsable */
void xattn_variant_dims(int v, int *bm, int *bn);

typedef enum xattn_layout_kind {
  XATTN_LAYOUT_FLAT = 0,
  XATTN_LAYOUT_GQA = 1,
  XATTN_LAYOUT_KVSPLIT = 2,
  XATTN_LAYOUT_DECODE = 3
} xattn_layout_kind;

/* The decode layout holds every row of a request (E_b x H_Q) in one item;
 * past this many rows a call asking for it runs gqa instead (its rows would
 * no longer stay in L2). driver.c: 1 if p's longest request fits. */
#define XATTN_DECODE_MAX_ROWS 2048
int xattn_decode_fits(const xattn_problem *p);

/* driver.c: runs a validated problem with resolved choices. */
xattn_status xattn_drive(const xattn_problem *p, const xattn_isa_kernels *isa, int variant,
                         xattn_layout_kind layout, xattn_schedule sched, int threads,
                         int kv_splits, int prefetch);

#endif
