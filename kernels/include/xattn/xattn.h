/* xattn — CPU extend attention (the prefill step of a serving engine).
 *
 * One entry point, xattn_extend_attention(), computes docs/contract.md §1–2 for a batch of
 * requests: each request's new (extend) tokens attend to their own keys and to a
 * prefix read from a KV cache through a token table. xattn_reference() computes
 * the same thing in fp64 and defines the right answer for every test.
 *
 * Every input is validated before anything is read; a bad input returns a status
 * other than XATTN_OK and xattn_last_error() names the field and the reason.
 */
#ifndef XATTN_XATTN_H
#define XATTN_XATTN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XATTN_VERSION_MAJOR 0
#define XATTN_VERSION_MINOR 1

/* ---- status ------------------------------------------------------------- */
typedef enum xattn_status {
  XATTN_OK = 0,
  XATTN_ERR_NULL = 1,        /* a required pointer is NULL */
  XATTN_ERR_SHAPE = 2,       /* a length, head count or head dim is invalid */
  XATTN_ERR_INDEX = 3,       /* req_index / req_to_token / slot out of range */
  XATTN_ERR_STRIDE = 4,      /* a stride is invalid (too small, overlapping) */
  XATTN_ERR_MODE = 5,        /* unknown mode / align / window combination */
  XATTN_ERR_DTYPE = 6,       /* unknown dtype */
  XATTN_ERR_UNSUPPORTED = 7, /* variant / layout / ISA not built or not runnable */
  XATTN_ERR_NOMEM = 8,       /* scratch allocation failed */
  XATTN_ERR_IO = 9           /* file input/output (CLI and case loader only) */
} xattn_status;

/* Short name of a status ("ok", "null", "shape", ...). Never NULL. */
const char *xattn_status_string(xattn_status s);
const char *xattn_status_name(xattn_status s);                /* same, "?" when unknown */
int xattn_status_parse(const char *name, xattn_status *s);     /* 0 on success */
/* One line describing the last error on this thread, naming the field and the
 * reason, e.g. "extend_lens[3]: negative length -1". Empty after success. */
const char *xattn_last_error(void);

/* ---- problem description ------------------------------------------------ */
typedef enum xattn_dtype {
  XATTN_DTYPE_SAME = -1, /* cache_dtype only: the cache holds `dtype` like q (the default) */
  XATTN_F32 = 0, XATTN_BF16 = 1, XATTN_F16 = 2,
  XATTN_E4M3FN = 3,      /* fp8 KV caches only: 1-4-3, bias 7, no inf, NaN 0x7f/0xff, max 448 */
  XATTN_E5M2 = 4         /* fp8 KV caches only: 1-5-2, bias 15, inf and NaN (the top byte of an f16) */
} xattn_dtype;
typedef enum xattn_index_type { XATTN_I32 = 0, XATTN_I64 = 1 } xattn_index_type;

typedef enum xattn_mode {
  XATTN_MODE_CAUSAL = 0,        /* j <= p (bottom-right) or j <= i (top-left) */
  XATTN_MODE_BIDIRECTIONAL = 1, /* every j in 0..S_b-1, prefix included */
  XATTN_MODE_CROSS = 2,         /* keys are encoder tokens 0..enc_len_b-1 from the cache */
  XATTN_MODE_TREE = 3           /* every prefix key; extend key k iff tree_mask[b][i][k] */
} xattn_mode;

typedef enum xattn_cache_layout {
  XATTN_CACHE_TOKEN_MAJOR = 0, /* [blocks, page, H_KV, D] (with page 1: [slots, H_KV, D]) */
  XATTN_CACHE_HEAD_MAJOR = 1   /* [blocks, H_KV, page, D] */
} xattn_cache_layout;

typedef enum xattn_align {
  XATTN_ALIGN_BOTTOM_RIGHT = 0, /* default: query i of request b sits at p = P_b + i */
  XATTN_ALIGN_TOP_LEFT = 1      /* causal only, parity checks: j <= i */
} xattn_align;

/* A [tokens, heads, dim] tensor: element (t, h, d) is at
 * data + t * token_stride + h * head_stride + d   (strides in ELEMENTS).
 * Only the last dimension must be contiguous. */
typedef struct xattn_tensor {
  const void *data;
  int64_t token_stride;
  int64_t head_stride;
} xattn_tensor;

typedef struct xattn_problem {
  /* batch */
  int32_t batch;                /* B >= 0 */
  const int32_t *prefix_lens;   /* [B] P_b >= 0 */
  const int32_t *extend_lens;   /* [B] E_b >= 0 */
  const int32_t *extend_start;  /* [B] first row of request b in q/k_ext/v_ext/o;
                                   NULL: packed in order (prefix sum of extend_lens) */
  const int32_t *encoder_lens;  /* [B] cross mode only: enc_len_b */
  int64_t total_tokens;         /* T: rows of q, k_ext, v_ext and o */

  /* shapes */
  int32_t heads_q, heads_kv;    /* H_Q % H_KV == 0 */
  int32_t head_dim, head_dim_v; /* D, DV >= 1 */
  xattn_dtype dtype;            /* of q, k_ext, v_ext, o and (unless cache_dtype says fp8) the cache */

  /* tensors */
  xattn_tensor q;               /* [T, H_Q, D] */
  xattn_tensor k_ext;           /* [T, H_KV, D] */
  xattn_tensor v_ext;           /* [T, H_KV, DV] */
  xattn_tensor k_cache;         /* [slots, H_KV, D], or paged: see page_size */
  xattn_tensor v_cache;         /* [slots, H_KV, DV], or paged: see page_size */
  int64_t cache_slots;          /* rows of k_cache / v_cache; paged: blocks */
  /* fp8 KV cache (SGLang float8_e4m3fn / float8_e5m2, vLLM/IPEX kv_cache_dtype="fp8"):
   * cache_dtype XATTN_E4M3FN or XATTN_E5M2 stores k_cache / v_cache as bytes; an
   * element is decoded exactly and multiplied by k_scale (v_scale) and, when
   * given, k_scales[t * H_KV + h] (v_scales), t the cache token (the slot, or
   * block * page_size + i). q, k_ext, v_ext and o stay `dtype`. */
  xattn_dtype cache_dtype;      /* XATTN_DTYPE_SAME (default) or dtype: the cache holds dtype */
  float k_scale, v_scale;       /* per-tensor scales of an fp8 cache (default 1) */
  const float *k_scales, *v_scales; /* [cache tokens, H_KV] per-token-per-head scales or NULL */
  void *o;                      /* [T, H_Q, DV] output */
  int64_t o_token_stride, o_head_stride;

  /* token table */
  const void *req_to_token;     /* [max_reqs, max_ctx] of index_type */
  xattn_index_type req_to_token_type;
  int64_t max_reqs, max_ctx;
  const int64_t *req_index;     /* [B] row of req_to_token used by request b */
  const int64_t *req_start_col; /* [B] column of that row holding request b's key 0 (an
                                   encoder-decoder batch's decoder reads req_to_token[r, enc_b + j]);
                                   NULL: 0 for every request */

  /* paged cache (vLLM / IPEX / llama.cpp block tables). page_size <= 1: the
   * table holds slots, key j of request b is cache row req_to_token[r][c]
   * with c = start_b + j (SGLang). page_size > 1: the table holds blocks of
   * page_size tokens, key j is token c % page_size of block
   * req_to_token[r][c / page_size], and cache_slots counts blocks. Element
   * (block, i, h, d) of a cache tensor t is at
   *   block * block_stride + i * t.token_stride + h * t.head_stride + d
   * with block_stride = page_size * token_stride (token-major, [blocks, page,
   * H_KV, D]) or H_KV * head_stride (head-major, [blocks, H_KV, page, D]) unless
   * given. page_size 1, token-major is the slot table above, bit for bit. */
  int32_t page_size;
  xattn_cache_layout cache_layout;
  int64_t k_cache_block_stride, v_cache_block_stride; /* elements; 0: the layout's dense default */

  /* score */
  float scale;                  /* s = scale * <q, k> */
  float logit_cap;              /* > 0: s = cap * tanh(s / cap); 0: off */
  const float *sinks;           /* [H_Q] or NULL */

  /* mask */
  xattn_mode mode;
  xattn_align align;
  int32_t window_left, window_right; /* -1 = unbounded; p-left <= j <= p+right */
  const uint8_t *tree_mask;     /* tree mode: [B, tree_max_extend, tree_max_extend], 0/1 */
  int32_t tree_max_extend;      /* max_E: the tree_mask's per-request side */
} xattn_problem;

/* Fills *p with the defaults: causal, bottom-right, no window, no cap, no
 * sinks, f32, i32 token table, zero sizes and NULL pointers. */
void xattn_problem_init(xattn_problem *p);

/* ---- how to run it -------------------------------------------------------- */
typedef enum xattn_schedule { XATTN_SCHED_AUTO = 0, XATTN_SCHED_STATIC = 1, XATTN_SCHED_DYNAMIC = 2 } xattn_schedule;

typedef struct xattn_options {
  const char *variant; /* "BMxBN", e.g. "64x128"; NULL: from the config header */
  const char *layout;  /* "flat", "gqa", "kvsplit", "decode"; NULL: from the config header.
                          "decode" (few rows: decode steps, small extends) runs gqa when a
                          request holds more than 2048 rows (E_b x H_Q) */
  const char *isa;     /* an xattn_isa_name() (kernels/src/isa/isas.def); NULL: best runnable */
  int threads;         /* <= 0: OpenMP's default */
  xattn_schedule schedule;
  int kv_splits;       /* kvsplit / decode layouts: number of key-range splits; <= 0: from the
                          config header, else auto */
  int prefetch;        /* decode layout: software prefetch distance in tokens; 0: from the
                          config header, else auto; < 0: off */
} xattn_options;

void xattn_options_init(xattn_options *o);

/* sizeof(xattn_problem) and sizeof(xattn_options): bindings that mirror the
 * structs (python/xattn/api.py) check their copy against these. */
size_t xattn_problem_size(void);
size_t xattn_options_size(void);

/* Computes o. opts may be NULL (all defaults). Returns XATTN_OK or an error
 * status; on error nothing has been read beyond what validation needs and o is
 * untouched. Thread-safe: concurrent calls on different outputs are fine. */
xattn_status xattn_extend_attention(const xattn_problem *p, const xattn_options *opts);

/* Validation alone (what xattn_extend_attention does first). */
xattn_status xattn_validate(const xattn_problem *p);

/* Address of head kvh of cache key j of request b (v = 0: k_cache, v = 1: v_cache):
 * the slot table or paged block table (page_size, cache_layout, req_start_col)
 * resolved exactly as the kernels do. For tools that read the cache (bench
 * memory roofs); p must have passed xattn_validate and key j must be a cache
 * key (j < prefix_lens[b], or any j < encoder_lens[b] in cross mode). */
const void *xattn_cache_row(const xattn_problem *p, int32_t b, int64_t j, int32_t kvh, int v);

/* fp64 reference, docs/contract.md's definition. Writes out[t][h][dv] as doubles into a
 * dense [T, H_Q, DV] array (p->o is ignored). Slow: O(T * S * (D + DV)). */
xattn_status xattn_reference(const xattn_problem *p, double *out);

/* Number of visible (query, key) pairs summed over query heads' positions,
 * i.e. V of docs/contract.md §5 (counted once per query token, not per head).
 * FLOPs = 2 * H_Q * (D + DV) * V. Returns -1 on invalid input. */
int64_t xattn_visible_pairs(const xattn_problem *p);

/* ---- what this build has -------------------------------------------------- */
/* Names are stable strings owned by the library. Counts are >= 1. */
int xattn_isa_count(void);
const char *xattn_isa_name(int i);    /* built ISA i, in preference order (best first) */
int xattn_isa_runnable(const char *isa); /* 1 if built and this CPU can run it */
const char *xattn_best_isa(void);     /* what NULL isa resolves to (honours XATTN_ISA env) */
/* The ISA whose kernels run a problem of this dtype when `isa` is asked for
 * (NULL: the best runnable): an ISA with bf16 code only (amx, avx512bf16) runs
 * f32/f16 with avx512. Config-header classes are keyed by this name. NULL if
 * `isa` is not built. */
const char *xattn_running_isa(const char *isa, xattn_dtype dtype);

int xattn_variant_count(void);
const char *xattn_variant_name(int i); /* "BMxBN" */
int xattn_layout_count(void);
const char *xattn_layout_name(int i);

/* The config header the build was compiled with: its path as given to CMake,
 * a one-line provenance summary, and the number of tuned classes it holds. */
const char *xattn_config_header_path(void);
const char *xattn_config_provenance(void);
int xattn_config_class_count(void);

/* What a call with these options would run (after config lookup and ISA
 * resolution), without running it. Any out pointer may be NULL. */
xattn_status xattn_resolve(const xattn_problem *p, const xattn_options *opts,
                           const char **variant, const char **layout,
                           const char **isa, int *threads);

/* ---- CPU classes (multi-CPU config headers; docs/formats.md) -------------
 * A header merged from the tuned headers of several machines (xattn-tune merge)
 * keys its rows by CPU class as well as by workload class. A CPU class holds
 * what tuned choices depend on between machines of one ISA: the vendor and
 * CPUID family/model (the microarchitecture: AMX, vdpbf16ps rate, L1), the L2
 * per core (which tiles stay in cache) and the cores per L3 (thread layouts). */
typedef struct xattn_cpu_class {
  char name[96];     /* "intel-6-143-l2_2048k-l3_2c-amx" (xattn_cpu_class_set_name) */
  char isa[16];      /* the best ISA this CPU runs */
  char vendor[16];   /* CPUID vendor string, "GenuineIntel" */
  int family, model; /* CPUID display family and model */
  int l2_kib;        /* L2 KiB per core; 0 unknown */
  int cores_per_l3;  /* cores sharing one L3; 0 unknown */
} xattn_cpu_class;
/* This CPU's class, from CPUID and the caches in sysfs; or, for tests only,
 * from XATTN_CPU_CLASS="vendor:family:model:l2_kib:cores_per_l3[:isa]", which
 * lets one host present itself as another machine. A malformed override is an
 * error (reason in xattn_last_error()). */
xattn_status xattn_cpu_class_get(xattn_cpu_class *out);
void xattn_cpu_class_set_name(xattn_cpu_class *c); /* c->name from the other fields */
/* The class of `classes` whose rows a CPU `self` uses: the exact match; else
 * the nearest one with the same ISA (same vendor, family, model first, then the
 * closest L2 per core and cores per L3); -1 when no class has its ISA. `why`
 * gets one line saying which and why. */
int xattn_cpu_class_nearest(const xattn_cpu_class *self, const xattn_cpu_class *classes, int n,
                            char *why, size_t whyn);
/* Which CPU class of the compiled-in config header this process uses (what
 * xattn_resolve and every call look up): *cls its name, "*" for a header
 * without CPU classes (its rows serve every CPU), "" when no class has this
 * CPU's ISA (the hand default rows serve); *why one line. Read once per process. */
xattn_status xattn_resolve_cpu_class(const char **cls, const char **why);
int xattn_config_cpu_class_count(void); /* CPU classes in the header; 0 for a one-machine header */

/* ---- workload classes (docs/formats.md §4) ------------------------------------------
 * The config header's table is keyed by ISA, dtype, D, DV, mode and two buckets
 * of the batch: the longest extend and the longest prefix. The bucket bounds
 * live here and nowhere else; the tuner and the kernels both call these. */
#define XATTN_EXTEND_BUCKETS 4 /* max E_b: <=64, <=512, <=2048, >2048 */
#define XATTN_PREFIX_BUCKETS 4 /* max P_b: 0, <=1024, <=8192, >8192 */
int xattn_extend_bucket(int64_t max_extend);
int xattn_prefix_bucket(int64_t max_prefix);

/* ---- enum names ----------------------------------------------------------
 * Every public enum has a stable name (never NULL; "?" for a value outside
 * the enum) and a parser (0 on success, -1 for an unknown name). */
const char *xattn_mode_name(xattn_mode m);              /* "causal", "bidirectional", "cross", "tree" */
int xattn_mode_parse(const char *name, xattn_mode *m);
const char *xattn_align_name(xattn_align a);            /* "bottom_right", "top_left" */
int xattn_align_parse(const char *name, xattn_align *a);
const char *xattn_schedule_name(xattn_schedule s);      /* "auto", "static", "dynamic" */
int xattn_schedule_parse(const char *name, xattn_schedule *s);
const char *xattn_index_type_name(xattn_index_type t);  /* "i32", "i64" */
int xattn_index_type_parse(const char *name, xattn_index_type *t);
const char *xattn_cache_layout_name(xattn_cache_layout l);  /* "token_major", "head_major" */
int xattn_cache_layout_parse(const char *name, xattn_cache_layout *l);

/* ---- dtype helpers -------------------------------------------------------- */
size_t xattn_dtype_size(xattn_dtype t);
const char *xattn_dtype_name(xattn_dtype t);              /* "f32", "bf16", "f16", "e4m3fn", "e5m2", "same" */
int xattn_dtype_parse(const char *name, xattn_dtype *t);  /* 0 on success */
float xattn_bf16_to_f32(uint16_t x);
uint16_t xattn_f32_to_bf16(float x); /* round to nearest even, NaN kept */
float xattn_f16_to_f32(uint16_t x);
uint16_t xattn_f32_to_f16(float x);  /* round to nearest even */
/* fp8 codes -> float, exact (subnormals, NaN; e5m2 infinities; e4m3fn max 448).
 * t is XATTN_E4M3FN or XATTN_E5M2 (anything else: NaN). */
float xattn_fp8_to_f32(uint8_t code, xattn_dtype t);
/* float -> fp8 code, round to nearest even; NaN -> NaN; beyond the largest finite
 * value: e4m3fn NaN (it has no inf), e5m2 inf (non-saturating, like PyTorch). */
uint8_t xattn_f32_to_fp8(float x, xattn_dtype t);

#ifdef __cplusplus
}
#endif
#endif /* XATTN_XATTN_H */
