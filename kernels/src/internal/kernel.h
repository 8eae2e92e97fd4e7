/* Internal contract between the portable driver (driver.c), the per-ISA kernels
 * (isa/isa_*.c) and the API layer (api.c). Not installed. */
#ifndef XATTN_INTERNAL_KERNEL_H
#define XATTN_INTERNAL_KERNEL_H

#include <stdint.h>
#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"
#include "xattn_isa_list.h"

/* log2(e): kernels work in base 2 (exp2 is cheaper), so scores, caps and sinks
 * are multiplied by it once up front. */
#define XATTN_LOG2E 1.4426950408889634f

/* Most rows (query tokens x heads) one work item holds. A GQA item covers
 * BLOCK_M queries of several heads; this caps its accumulators and packed Q
 * so that a thread's working set stays in L2 (heads are split into groups). */
#define XATTN_MAX_ITEM_ROWS 512

/* K and V packed once per (request, KV head) for a whole call (kvpack.c
 * decides, the driver packs them in its first phase, isa/item.inc reads
 * them), instead of once per work item: the items of one (request, KV head)
 * are every block of queries and every head group, and each would gather and
 * pack the same keys again. Only for ISAs whose packed layouts are a plain
 * sequence of 32-key blocks (kernels->kv_pack set). buf: the packed spans of
 * the wave being run (NULL = off); pair_off[b * H_KV + kvh]: the byte offset
 * of that pair's region in buf, -1 = not packed; key_base[b] / key_count[b]:
 * the first packed key of request b (a multiple of 32) and how many. */
typedef struct xattn_kvpack {
  char *buf;
  const int64_t *pair_off;
  const int32_t *key_base, *key_count;
} xattn_kvpack;

/* From this many bytes of output (o) on, a call writes o with streaming
 * stores where the kernel can (xattn_run.stream_out): such an output is
 * several times the 2 MiB L2 of a core, so its lines would leave the cache
 * before the caller reads them, and ordinary stores first read each line
 * from memory (bf16 amx, 2 threads, kernels/README.md: bidirectional 16 x 256,
 * 32 MiB of output, 1.09x; causal E = 2048, 16 MiB, 1.02x). */
#define XATTN_STREAM_OUT_MIN_BYTES ((size_t)8 << 20)

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
  int prefetch_l1;       /* decode / lanes: that prefetch fills L1 (prefetcht0), else L2 (prefetcht1) */
  int tile_prefetch;     /* flash layouts: ask for the next gathered tile's rows while a tile computes */
  int lanes;             /* few-rows items: 1 = layout lanes (decode.inc's rows-in-lanes tiles) */
  xattn_kvpack kvp;      /* K/V packed per (request, KV head), or buf NULL */
  int stream_out;        /* 1: the call's output is too large to stay cached, so kernels that
                            can (HOOK_OUT_STREAM) write o with streaming stores */
} xattn_run;

/* One step of the packing phase: keys [k0, k0 + n) of (request b, KV head
 * kvh), n <= BLOCK_N, k0 - key_base[b] a multiple of 32. */
typedef struct xattn_kvpack_task {
  int32_t b, kvh, k0, n;
} xattn_kvpack_task;

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
typedef void (*xattn_kvpack_fn)(const xattn_run *run, const xattn_kvpack_task *t, void *scratch);
typedef size_t (*xattn_kvpack_bytes_fn)(const xattn_run *run, int32_t keys);

/* One ISA's kernels. items[v] is the kernel for variant v of the compiled
 * variant list (xattn_variant_name(v)); kernels handle every dtype. Each
 * src/isa/isa_<name>.c defines xattn_kernels_<name> with XATTN_ISA_KERNELS. */
typedef struct xattn_isa_kernels {
  xattn_scratch_fn scratch_bytes;
  const xattn_item_fn *items;
  /* the few-rows path (layouts "decode" and "lanes", src/decode/decode.inc):
     one item = a request's rows over a key range, any variant */
  xattn_item_fn decode_item;
  xattn_scratch_fn decode_scratch_bytes;
  /* K/V packed once per (request, KV head) (xattn_kvpack), NULL where the
     ISA's items pack per item: kv_pack runs one task with a thread's scratch,
     kv_pack_bytes sizes the region of one pair with `keys` keys */
  xattn_kvpack_fn kv_pack;
  xattn_kvpack_bytes_fn kv_pack_bytes;
} xattn_isa_kernels;
#define XATTN_ISA_KERNELS(name)                                                                  \
  const xattn_isa_kernels xattn_kernels_##name = {item_scratch_bytes, item_table, decode_item, \
                                                  decode_scratch_bytes, KV_PACK_FN, KV_PACK_BYTES_FN}

#define XATTN_ISA_DECLARE(name, features, f32_isa) extern const xattn_isa_kernels xattn_kernels_##name;
XATTN_ISA_LIST(XATTN_ISA_DECLARE)
#undef XATTN_ISA_DECLARE

/* A row of the ISA registry (src/isa/isas.def), built ones only, best first. */
typedef struct xattn_isa {
  const char *name;
  const char *cpu_features;   /* space-separated, checked by cpu.c */
  const xattn_isa_kernels *kernels;
  /* An ISA with bf16 code only names the ISA whose kernels run its f32 and f16
   * problems; resolution substitutes it, so what a call reports (xattn_resolve,
   * bench rows, the config class) is the code that really runs. NULL: itself. */
  const struct xattn_isa *f32_isa;
} xattn_isa;

/* api.c: the registry. NULL when i is out of range / the name is not built. */
const xattn_isa *xattn_isa_at(int i);
const xattn_isa *xattn_isa_find(const char *name);

/* cpu.c: does this CPU (and OS) offer every feature of a space-separated list
 * (an ISA's cpu_features)? An unknown feature name counts as missing. */
int xattn_cpu_has_features(const char *features);

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
  int lanes_rows;        /* decode: a KV group of at least this many rows (E_b x H_Q / H_KV, the
                            longest request's) runs the lanes layout instead; 0 = never (optional column) */
  int lanes_rows_fp8;    /* the same for a call with an fp8 cache (decode's fp8 blocks and the lanes
                            tiles' widening move the crossover); 0 = lanes_rows (optional column) */
  int prefetch_level;    /* decode / lanes: the level prefetch fills, 1 = L1, 2 = L2, 0 = L2 (optional column) */
} xattn_config_row;
/* config.c: fails (one line) when the header has CPU classes and this CPU's
 * class cannot be known (a malformed XATTN_CPU_CLASS); call before the lookup.
 * The lookup skips the rows of the other CPU classes. */
xattn_status xattn_config_cpu_check(void);
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
  XATTN_LAYOUT_DECODE = 3,
  XATTN_LAYOUT_LANES = 4
} xattn_layout_kind;

/* The few-rows layouts: `decode` (rows blocked by 4, keys reduced in vector
 * dot products) and `lanes` (a KV group's query rows across vector lanes,
 * for groups of ~16 to 256 rows); both run decode.inc's items, one item per
 * request and key range, with the same splits, prefetch and row limit. */
static inline int xattn_layout_is_few_rows(xattn_layout_kind l) {
  return l == XATTN_LAYOUT_DECODE || l == XATTN_LAYOUT_LANES;
}

/* The few-rows layouts hold every row of a request (E_b x H_Q) in one item;
 * past this many rows a call asking for it runs gqa instead (its rows would
 * no longer stay in L2). driver.c: 1 if p's longest request fits. */
#define XATTN_DECODE_MAX_ROWS 2048
int xattn_decode_fits(const xattn_problem *p);


#endif
