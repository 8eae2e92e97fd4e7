/* xattn — CPU extend attention (the prefill step of a serving engine).
 *
 * xattn_extend_attention() computes docs/contract.md §1–2 for a batch of
 * requests: each request's new (extend) tokens attend to their own keys and to
 * a prefix read from a KV cache through a token table. A caller that runs the
 * same shape many times (a decode loop) makes a plan once (xattn_plan_create)
 * and runs it (xattn_plan_run) without re-resolving or allocating.
 * xattn_reference() computes the same thing in fp64 and defines the right
 * answer for every test. What this build has and how a call resolves (ISAs,
 * variants, the config header) is in xattn/xattn_introspect.h.
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
#define XATTN_VERSION_MINOR 2

/* The library is built with -fvisibility=hidden: exactly the declarations
 * marked XATTN_API are its interface. */
#if defined(XATTN_BUILDING_LIBRARY) && (defined(__GNUC__) || defined(__clang__))
#define XATTN_API __attribute__((visibility("default")))
#else
#define XATTN_API
#endif

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
XATTN_API const char *xattn_status_string(xattn_status s);
XATTN_API const char *xattn_status_name(xattn_status s);                /* same, "?" when unknown */
XATTN_API int xattn_status_parse(const char *name, xattn_status *s);     /* 0 on success */
/* One line describing the last error on this thread, naming the field and the
 * reason, e.g. "extend_lens[3]: negative length -1". Empty after success. */
XATTN_API const char *xattn_last_error(void);

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
 * Only the last dimension must be contiguous. The output o is a tensor too:
 * the library writes through its data pointer (which must not point at
 * read-only memory); every other tensor is only read. */
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
  xattn_tensor o;               /* [T, H_Q, DV] output (dtype), written through o.data */

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
XATTN_API void xattn_problem_init(xattn_problem *p);

/* ---- how to run it -------------------------------------------------------- */
typedef enum xattn_schedule { XATTN_SCHED_AUTO = 0, XATTN_SCHED_STATIC = 1, XATTN_SCHED_DYNAMIC = 2 } xattn_schedule;

typedef struct xattn_options {
  const char *variant; /* "BMxBN", e.g. "64x128"; NULL: from the config header */
  const char *layout;  /* "flat", "gqa", "kvsplit", "decode", "lanes"; NULL: from the config
                          header. "decode" (few rows: decode steps, small extends) and
                          "lanes" (the same items, a KV group's query rows across vector
                          lanes: small extends of ~4 to 64 tokens) run gqa when a request
                          holds more than 2048 rows (E_b x H_Q) */
  const char *isa;     /* an xattn_isa_name() (kernels/src/isa/isas.def); NULL: best runnable */
  int threads;         /* <= 0: OpenMP's default */
  xattn_schedule schedule;
  int kv_splits;       /* kvsplit / decode / lanes layouts: number of key-range splits; <= 0: from the
                          config header, else auto */
  int prefetch;        /* decode / lanes layouts: software prefetch distance in tokens; 0: from the
                          config header, else auto (xattn_auto_prefetch_tokens: ~64 KiB of
                          rows ahead); < 0: off. flat / gqa / kvsplit: any value but < 0
                          asks for the next gathered tile's rows (16-bit and fp8 caches); < 0: off */
  int prefetch_level;  /* decode / lanes layouts: the cache level that prefetch fills: 1 L1
                          (prefetcht0), 2 L2 (prefetcht1); 0: from the config header, else 2.
                          The best level is the CPU's (bench/README.md "prefetch into L1") */
} xattn_options;

XATTN_API void xattn_options_init(xattn_options *o);

/* sizeof(xattn_problem) and sizeof(xattn_options): bindings that mirror the
 * structs (python/xattn/api.py) check their copy against these. */
XATTN_API size_t xattn_problem_size(void);
XATTN_API size_t xattn_options_size(void);

/* Computes o. opts may be NULL (all defaults). Returns XATTN_OK or an error
 * status; on error nothing has been read beyond what validation needs and o is
 * untouched. Thread-safe: concurrent calls on different outputs are fine. */
XATTN_API xattn_status xattn_extend_attention(const xattn_problem *p, const xattn_options *opts);

/* Validation alone (what xattn_extend_attention does first). */
XATTN_API xattn_status xattn_validate(const xattn_problem *p);

/* ---- plans: resolve once, run many times ----------------------------------
 * xattn_extend_attention(p, opts) is xattn_plan_create + a workspace +
 * xattn_plan_run + xattn_plan_destroy. */
typedef struct xattn_plan xattn_plan;

/* Validates the shape of `shape` (batch, lengths, extend_start, total_tokens,
 * heads, dims, dtype, cache_dtype, mode, align, window, scale, logit_cap; its
 * tensors, token table, req_index, sinks and tree_mask may be NULL and are
 * not read),
 * resolves variant, layout, ISA, schedule and threads as
 * xattn_extend_attention would, and cuts the call into work items. The plan
 * keeps copies: `shape`'s arrays may change or be freed afterwards. On error
 * *plan is NULL. A plan is immutable and may be run from several threads at
 * once, each with its own workspace and output. */
XATTN_API xattn_status xattn_plan_create(const xattn_problem *shape, const xattn_options *opts,
                                         xattn_plan **plan);

/* Bytes of workspace xattn_plan_run needs (per-thread scratch, kvsplit
 * partials). The workspace must be 64-byte aligned; 0 means none. */
XATTN_API size_t xattn_plan_workspace_size(const xattn_plan *plan);

/* Runs the plan on `data`, which must describe the same call: its batch and
 * total_tokens must equal the plan's (checked). What the plan fixed (lengths,
 * extend_start, heads, dims, dtype, cache_dtype, scale, logit_cap, mode,
 * align, window) comes from the plan; everything else from `data`: the
 * tensors (pointers and strides), the cache's storage and scales, the token
 * table, req_index, sinks, the tree mask. Those are checked as xattn_validate
 * checks them, then the kernels run. No memory is allocated. */
XATTN_API xattn_status xattn_plan_run(const xattn_plan *plan, const xattn_problem *data, void *workspace);

XATTN_API void xattn_plan_destroy(xattn_plan *plan); /* NULL is fine */

/* Address of head kvh of cache key j of request b (v = 0: k_cache, v = 1: v_cache):
 * the slot table or paged block table (page_size, cache_layout, req_start_col)
 * resolved exactly as the kernels do. For tools that read the cache (bench
 * memory roofs); p must have passed xattn_validate and key j must be a cache
 * key (j < prefix_lens[b], or any j < encoder_lens[b] in cross mode). */
const void *xattn_cache_row(const xattn_problem *p, int32_t b, int64_t j, int32_t kvh, int v);

/* fp64 reference, docs/contract.md's definition. Writes out[t][h][dv] as doubles into a
 * dense [T, H_Q, DV] array (p->o is ignored). Slow: O(T * S * (D + DV)). */
XATTN_API xattn_status xattn_reference(const xattn_problem *p, double *out);

/* Number of visible (query, key) pairs summed over query heads' positions,
 * i.e. V of docs/contract.md §5 (counted once per query token, not per head).
 * FLOPs = 2 * H_Q * (D + DV) * V. Returns -1 on invalid input. */
XATTN_API int64_t xattn_visible_pairs(const xattn_problem *p);

/* ---- enum names ----------------------------------------------------------
 * Every public enum has a stable name (never NULL; "?" for a value outside
 * the enum) and a parser (0 on success, -1 for an unknown name). */
XATTN_API const char *xattn_mode_name(xattn_mode m);              /* "causal", "bidirectional", "cross", "tree" */
XATTN_API int xattn_mode_parse(const char *name, xattn_mode *m);
XATTN_API const char *xattn_align_name(xattn_align a);            /* "bottom_right", "top_left" */
XATTN_API int xattn_align_parse(const char *name, xattn_align *a);
XATTN_API const char *xattn_schedule_name(xattn_schedule s);      /* "auto", "static", "dynamic" */
XATTN_API int xattn_schedule_parse(const char *name, xattn_schedule *s);
XATTN_API const char *xattn_index_type_name(xattn_index_type t);  /* "i32", "i64" */
XATTN_API int xattn_index_type_parse(const char *name, xattn_index_type *t);
XATTN_API const char *xattn_cache_layout_name(xattn_cache_layout l);  /* "token_major", "head_major" */
XATTN_API int xattn_cache_layout_parse(const char *name, xattn_cache_layout *l);

/* ---- dtype helpers -------------------------------------------------------- */
XATTN_API size_t xattn_dtype_size(xattn_dtype t);
XATTN_API const char *xattn_dtype_name(xattn_dtype t);              /* "f32", "bf16", "f16", "e4m3fn", "e5m2", "same" */
XATTN_API int xattn_dtype_parse(const char *name, xattn_dtype *t);  /* 0 on success */
XATTN_API float xattn_bf16_to_f32(uint16_t x);
XATTN_API uint16_t xattn_f32_to_bf16(float x); /* round to nearest even, NaN kept */
XATTN_API float xattn_f16_to_f32(uint16_t x);
XATTN_API uint16_t xattn_f32_to_f16(float x);  /* round to nearest even */
/* fp8 codes -> float, exact (subnormals, NaN; e5m2 infinities; e4m3fn max 448).
 * t is XATTN_E4M3FN or XATTN_E5M2 (anything else: NaN). */
XATTN_API float xattn_fp8_to_f32(uint8_t code, xattn_dtype t);
/* float -> fp8 code, round to nearest even; NaN -> NaN; beyond the largest finite
 * value: e4m3fn NaN (it has no inf), e5m2 inf (non-saturating, like PyTorch). */
XATTN_API uint8_t xattn_f32_to_fp8(float x, xattn_dtype t);

#ifdef __cplusplus
}
#endif
#endif /* XATTN_XATTN_H */
