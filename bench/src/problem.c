/* Workload -> fully populated xattn_problem with seeded unit-scale data,
 * first-touched by the bound OpenMP team. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "xattn_bench/problem.h"
#include "xattn_bench/flush.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "xattn_common/hash.h"

/* Counter-based hash: value (seed, stream, index) does not depend on which
 * thread computes it, so data are identical at every thread count. */
/* The counter hash every tensor's data comes from: (seed, tensor, index). */
static inline uint64_t counter_hash(uint64_t seed, uint64_t stream, uint64_t i) {
  return xc_mix64(seed * 0x9E3779B97F4A7C15ull + xc_mix64(stream * 0xD1B54A32D192ED03ull + i));
}

static inline float unit_value(uint64_t seed, uint64_t stream, uint64_t i) {
  const uint64_t h = counter_hash(seed, stream, i);
  return (float)((double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0); /* [-1, 1) */
}

enum { S_Q = 1, S_K_EXT, S_V_EXT, S_K_CACHE, S_V_CACHE, S_SINKS, S_SLOTS, S_ROWS, S_TREE };

static void *alloc_aligned(size_t bytes) {
  size_t rounded = (bytes + 63) / 64 * 64;
  return aligned_alloc(64, rounded ? rounded : 64);
}

static xb_cache_pages cache_pages = XB_CACHE_PAGES_DEFAULT;
void xb_set_cache_pages(xb_cache_pages how) { cache_pages = how; }
xb_cache_pages xb_get_cache_pages(void) { return cache_pages; }
const char *xb_cache_pages_name(xb_cache_pages how) { return how == XB_CACHE_PAGES_HUGE ? "huge" : "default"; }

int xb_huge_pages_available(void) {
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return 0;
  char line[128] = "";
  const int ok = fgets(line, sizeof line, f) != NULL && (strstr(line, "[always]") || strstr(line, "[madvise]"));
  fclose(f);
  return ok;
}

/* A K/V cache: alloc_aligned, or whole 2 MiB pages advised huge (before the
 * first touch, so that the fill faults them in as huge pages). */
#define XB_HUGE_PAGE ((size_t)2 << 20)
static void *alloc_cache(size_t bytes) {
  if (cache_pages != XB_CACHE_PAGES_HUGE) return alloc_aligned(bytes);
  const size_t rounded = bytes ? (bytes + XB_HUGE_PAGE - 1) / XB_HUGE_PAGE * XB_HUGE_PAGE : XB_HUGE_PAGE;
  void *p = aligned_alloc(XB_HUGE_PAGE, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p) (void)madvise(p, rounded, MADV_HUGEPAGE); /* advice: refused or not granted, the pages stay small */
#endif
  return p;
}

/* Fills n elements of dtype t, first touch by the team: static chunks over the
 * buffer, so each thread's pages land on its node. */
static void fill(void *dst, xattn_dtype t, int64_t n, uint64_t seed, uint64_t stream, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; i++) {
    xb_element_store(dst, t, i, unit_value(seed, stream, (uint64_t)i));
  }
}

/* fp8 cache codes: |value| < 2 in both formats (exponent field <= bias), sign and
 * low 6 bits from the same counter hash as the other tensors: subnormals included. */
static void fill_fp8(uint8_t *dst, int64_t n, uint64_t seed, uint64_t stream, int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; i++) {
    const uint64_t h = counter_hash(seed, stream, (uint64_t)i);
    dst[i] = (uint8_t)((h & 63) | ((h >> 8) & 128));
  }
}

static void zero(void *dst, size_t bytes, int threads) {
  const int64_t n = (int64_t)bytes;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; i += 4096) memset((char *)dst + i, 0, (size_t)(n - i < 4096 ? n - i : 4096));
}

/* Slots a request keeps in the cache: its prefix, or its encoder tokens. */
static int64_t cached_len(const xb_workload *w, int b) {
  int64_t cached = w->prefix_lens[b];
  if (w->encoder_lens && w->encoder_lens[b] > cached) cached = w->encoder_lens[b];
  return cached;
}

/* MemAvailable of /proc/meminfo in bytes, 0 when unknown. */
static double available_memory_bytes(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  double kb = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
  fclose(f);
  return kb * 1024.0;
}

/* Fisher-Yates over 0..n-1 with the seeded stream. */
static int32_t *shuffled_indices(int64_t n, uint64_t *state) {
  int32_t *perm = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
  if (!perm) return NULL;
  for (int64_t i = 0; i < n; i++) perm[i] = (int32_t)i;
  for (int64_t i = n - 1; i > 0; i--) {
    int64_t j = (int64_t)(xc_splitmix64(state) % (uint64_t)(i + 1));
    int32_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  return perm;
}

/* The token table's prefix slots in the workload's slot layout (workload.h):
 * shuffled (a random permutation of the pool: a pool after a long while),
 * runs of N (whole pages of N consecutive slots, pages in random order: what
 * a paged allocator gives) or contiguous (request after request). Positions
 * past the cached part (the extend's own future slots) still hold valid slot
 * numbers, as in a serving engine's table. 0, or -1 when out of memory. */
static int paged(const xb_workload *w) { return w->page_size > 1 || w->cache_layout == XATTN_CACHE_HEAD_MAJOR; }

/* A paged table: entries are blocks of page_size tokens, shuffled among the
 * pool (consecutive with "slots": "contiguous"); entries past the cached part
 * hold valid block numbers. */
static int assign_blocks(xb_problem *pb, const xb_workload *w, uint64_t seed, int64_t blocks, int64_t entries) {
  uint64_t ss = seed ^ ((uint64_t)S_SLOTS << 32);
  int32_t *perm = w->slot_run == XB_SLOTS_CONTIGUOUS ? NULL : shuffled_indices(blocks, &ss);
  if (w->slot_run != XB_SLOTS_CONTIGUOUS && !perm) return -1;
  int64_t next = 0;
  for (int b = 0; b < w->batch; b++) {
    int32_t *row = pb->req_to_token + pb->req_index[b] * entries;
    const int64_t used = (cached_len(w, b) + w->page_size - 1) / w->page_size;
    for (int64_t e = 0; e < entries; e++) {
      const int64_t at = e < used ? next + e : (next + e) % blocks;
      row[e] = perm ? perm[at % blocks] : (int32_t)(at % blocks);
    }
    next += used;
  }
  free(perm);
  return 0;
}

static int assign_slots(xb_problem *pb, const xb_workload *w, uint64_t seed, int64_t slots, int64_t max_ctx) {
  if (paged(w)) return assign_blocks(pb, w, seed, slots, max_ctx);
  uint64_t ss = seed ^ ((uint64_t)S_SLOTS << 32);
  const int64_t run = w->slot_run > 0 ? w->slot_run : 1;
  int32_t *perm = w->slot_run == XB_SLOTS_CONTIGUOUS ? NULL : shuffled_indices(slots / run, &ss);
  if (w->slot_run != XB_SLOTS_CONTIGUOUS && !perm) return -1;
  int64_t next = 0; /* first slot (contiguous, shuffled) or page (runs) of request b */
  for (int b = 0; b < w->batch; b++) {
    int32_t *row = pb->req_to_token + pb->req_index[b] * max_ctx;
    const int64_t cached = cached_len(w, b);
    for (int64_t j = 0; j < max_ctx; j++) {
      int64_t slot;
      if (w->slot_run == XB_SLOTS_CONTIGUOUS) slot = (next + j) % slots;
      else if (w->slot_run == XB_SLOTS_SHUFFLED) slot = j < cached ? perm[next + j] : perm[(next + j) % slots];
      else slot = j < cached ? (int64_t)perm[next + j / run] * run + j % run : j % slots;
      row[j] = (int32_t)slot;
    }
    next += w->slot_run > 0 ? (cached + run - 1) / run : cached;
  }
  free(perm);
  return 0;
}

void xb_problem_free(xb_problem *pb) {
  if (!pb) return;
  free(pb->q); free(pb->k_ext); free(pb->v_ext); free(pb->k_cache); free(pb->v_cache); free(pb->o);
  free(pb->prefix_lens); free(pb->extend_lens); free(pb->extend_start); free(pb->encoder_lens);
  free(pb->req_to_token); free(pb->req_index); free(pb->sinks); free(pb->tree_mask);
  memset(pb, 0, sizeof *pb);
}

/* A draft tree per request: token k's parent is k-1 with probability
 * tree_density (a chain), else a uniformly drawn earlier token; a query
 * sees itself and its ancestors. */
static int fill_tree_mask(xb_problem *pb, const xb_workload *w, uint64_t seed, int64_t max_e) {
  const int32_t B = w->batch;
  int32_t *parent = malloc(sizeof(int32_t) * (size_t)(max_e + 1));
  if (!parent) return -1;
  for (int b = 0; b < B; b++) {
    uint64_t ts = seed ^ ((uint64_t)S_TREE << 32) ^ (uint64_t)b * 0x9E37ull;
    const int32_t E = w->extend_lens[b];
    for (int32_t k = 0; k < E; k++) {
      double u = (double)(xc_splitmix64(&ts) >> 11) * (1.0 / 9007199254740992.0);
      parent[k] = k == 0 ? -1 : (u < w->tree_density ? k - 1 : (int32_t)(xc_splitmix64(&ts) % (uint64_t)k));
    }
    for (int32_t i = 0; i < E; i++)
      for (int32_t a = i; a >= 0; a = parent[a]) pb->tree_mask[((int64_t)b * max_e + i) * max_e + a] = 1;
  }
  free(parent);
  return 0;
}

/* Points pb->p at pb's buffers with the workload's shape, layout and
 * options: the one place a bench problem becomes an xattn_problem. */
static void wire_problem(xb_problem *pb, const xb_workload *w, int shape_only, int64_t slots, int64_t page,
                         int64_t max_ctx, int64_t max_e) {
  const int32_t B = w->batch, HQ = w->heads_q, HKV = w->heads_kv, D = w->head_dim, DV = w->head_dim_v;
  const xattn_dtype dtype = pb->dtype;
  const int64_t T = xb_workload_tokens(w);
  const int fp8 = w->kv_cache == XATTN_E4M3FN || w->kv_cache == XATTN_E5M2;
  xattn_problem *p = &pb->p;
  xattn_problem_init(p);
  p->batch = B;
  p->prefix_lens = pb->prefix_lens;
  p->extend_lens = pb->extend_lens;
  p->extend_start = pb->extend_start;
  p->encoder_lens = pb->encoder_lens;
  p->total_tokens = T;
  p->heads_q = HQ;
  p->heads_kv = HKV;
  p->head_dim = D;
  p->head_dim_v = DV;
  p->dtype = dtype;
  /* shape-only problems point every tensor at one small dummy: enough for
   * validation, resolution and counting, never for a call */
  static _Alignas(64) unsigned char dummy[64];
  if (shape_only) pb->q = pb->k_ext = pb->v_ext = pb->k_cache = pb->v_cache = pb->o = dummy;
  p->q = (xattn_tensor){pb->q, (int64_t)HQ * D, D};
  p->k_ext = (xattn_tensor){pb->k_ext, (int64_t)HKV * D, D};
  p->v_ext = (xattn_tensor){pb->v_ext, (int64_t)HKV * DV, DV};
  if (w->cache_layout == XATTN_CACHE_HEAD_MAJOR) { /* [blocks, H_KV, page, D] */
    p->k_cache = (xattn_tensor){pb->k_cache, D, (int64_t)page * D};
    p->v_cache = (xattn_tensor){pb->v_cache, DV, (int64_t)page * DV};
  } else { /* [blocks, page, H_KV, D]; page 1: [slots, H_KV, D] */
    p->k_cache = (xattn_tensor){pb->k_cache, (int64_t)HKV * D, D};
    p->v_cache = (xattn_tensor){pb->v_cache, (int64_t)HKV * DV, DV};
  }
  p->cache_slots = slots;
  p->page_size = (int32_t)page;
  p->cache_layout = w->cache_layout;
  p->cache_dtype = fp8 ? w->kv_cache : XATTN_DTYPE_SAME;
  p->o.data = pb->o;
  p->o.token_stride = (int64_t)HQ * DV;
  p->o.head_stride = DV;
  p->req_to_token = pb->req_to_token;
  p->req_to_token_type = XATTN_I32;
  p->max_reqs = B;
  p->max_ctx = max_ctx;
  p->req_index = pb->req_index;
  p->scale = (float)(1.0 / sqrt((double)D));
  p->logit_cap = w->logit_cap;
  p->sinks = pb->sinks;
  p->mode = w->mode;
  p->align = w->align;
  p->window_left = w->window_left;
  p->window_right = w->window_right;
  p->tree_mask = pb->tree_mask;
  p->tree_max_extend = (int32_t)max_e;
}

static int build(xb_problem *pb, const xb_workload *w, xattn_dtype dtype, uint64_t seed, int threads,
                 int shape_only, double extra_bytes, char *err, size_t errlen) {
  memset(pb, 0, sizeof *pb);
  if (threads < 1) threads = 1;
  pb->w = w;
  pb->dtype = dtype;
  pb->threads = threads;
  const int32_t B = w->batch, HQ = w->heads_q, HKV = w->heads_kv, D = w->head_dim, DV = w->head_dim_v;
  const size_t es = xattn_dtype_size(dtype);
  const int fp8 = w->kv_cache == XATTN_E4M3FN || w->kv_cache == XATTN_E5M2;
  const size_t ces = fp8 ? 1 : es; /* cache element size */
  const int64_t T = xb_workload_tokens(w);
  int64_t slots = 0, max_ctx = 1, max_e = 0;
  const int64_t run = w->slot_run > 0 ? w->slot_run : 1, page = paged(w) ? w->page_size : 1;
  for (int b = 0; b < B; b++) {
    const int64_t cached = cached_len(w, b);
    if (paged(w)) slots += (cached + page - 1) / page; /* blocks */
    else slots += w->slot_run > 0 ? (cached + run - 1) / run * run : cached; /* whole pages */
    int64_t ctx = (int64_t)w->prefix_lens[b] + w->extend_lens[b];
    if (cached > ctx) ctx = cached;
    if (ctx > max_ctx) max_ctx = ctx;
    if (w->extend_lens[b] > max_e) max_e = w->extend_lens[b];
  }
  if (slots < 1) slots = 1; /* an empty pool still needs a valid pointer */
  if (paged(w)) max_ctx = (max_ctx + page - 1) / page; /* table entries are blocks */
  const int64_t cache_tokens = slots * page;
  if ((double)max_ctx * B > 2e9) {
    snprintf(err, errlen, "workload %s: token table of %d x %lld entries is too large", w->name, B, (long long)max_ctx);
    return -1;
  }
  if (!shape_only) {
    const double need = (double)es * ((double)T * HQ * (D + DV) + (double)T * HKV * (D + DV)) +
                        (double)ces * (double)cache_tokens * HKV * (D + DV) + extra_bytes;
    const double avail = available_memory_bytes();
    if (avail > 0 && need > 0.5 * avail) {
      char extra[96] = "";
      if (extra_bytes > 0)
        snprintf(extra, sizeof extra, " (%.1f GiB of it the BLAS baseline's scratch)", extra_bytes / 1073741824.0);
      snprintf(err, errlen, "workload %s (%s): needs %.1f GiB%s, more than half of the %.1f GiB available; skipped",
               w->name, xattn_dtype_name(dtype), need / 1073741824.0, extra, avail / 1073741824.0);
      return -1;
    }
  }

  pb->prefix_lens = malloc(sizeof(int32_t) * (size_t)B);
  pb->extend_lens = malloc(sizeof(int32_t) * (size_t)B);
  pb->extend_start = malloc(sizeof(int32_t) * (size_t)B);
  pb->req_index = malloc(sizeof(int64_t) * (size_t)B);
  pb->req_to_token = alloc_aligned(sizeof(int32_t) * (size_t)(B * max_ctx));
  if (!shape_only) {
    pb->q = alloc_aligned(es * (size_t)(T * HQ * D));
    pb->k_ext = alloc_aligned(es * (size_t)(T * HKV * D));
    pb->v_ext = alloc_aligned(es * (size_t)(T * HKV * DV));
    pb->k_cache = alloc_cache(ces * (size_t)(cache_tokens * HKV * D));
    pb->v_cache = alloc_cache(ces * (size_t)(cache_tokens * HKV * DV));
    pb->o = alloc_aligned(es * (size_t)(T * HQ * DV));
  }
  if (w->encoder_lens) pb->encoder_lens = malloc(sizeof(int32_t) * (size_t)B);
  if (w->has_sinks) pb->sinks = malloc(sizeof(float) * (size_t)HQ);
  if (w->mode == XATTN_MODE_TREE) pb->tree_mask = calloc((size_t)(B * max_e * max_e) + 1, 1);
  if (!pb->prefix_lens || !pb->extend_lens || !pb->extend_start || !pb->req_index || !pb->req_to_token ||
      (!shape_only && (!pb->q || !pb->k_ext || !pb->v_ext || !pb->k_cache || !pb->v_cache || !pb->o)) || (w->encoder_lens && !pb->encoder_lens) ||
      (w->has_sinks && !pb->sinks) || (w->mode == XATTN_MODE_TREE && !pb->tree_mask)) {
    snprintf(err, errlen, "workload %s: out of memory building the problem", w->name);
    xb_problem_free(pb);
    return -1;
  }

  memcpy(pb->prefix_lens, w->prefix_lens, sizeof(int32_t) * (size_t)B);
  memcpy(pb->extend_lens, w->extend_lens, sizeof(int32_t) * (size_t)B);
  if (pb->encoder_lens) memcpy(pb->encoder_lens, w->encoder_lens, sizeof(int32_t) * (size_t)B);
  int64_t start = 0;
  for (int b = 0; b < B; b++) {
    pb->extend_start[b] = (int32_t)start;
    start += w->extend_lens[b];
  }

  /* Token table: requests use shuffled rows, prefixes shuffled slots — what a
   * paged pool looks like after a while, so no kernel can rely on contiguity. */
  uint64_t rs = seed ^ 0x5EEDull ^ ((uint64_t)S_ROWS << 32);
  for (int b = 0; b < B; b++) pb->req_index[b] = b;
  for (int b = B - 1; b > 0; b--) {
    int64_t j = (int64_t)(xc_splitmix64(&rs) % (uint64_t)(b + 1)), t = pb->req_index[b];
    pb->req_index[b] = pb->req_index[j];
    pb->req_index[j] = t;
  }
  if (assign_slots(pb, w, seed, slots, max_ctx) != 0) {
    snprintf(err, errlen, "workload %s: out of memory building the problem", w->name);
    xb_problem_free(pb);
    return -1;
  }

  if (!shape_only) {
    fill(pb->q, dtype, T * HQ * D, seed, S_Q, threads);
    fill(pb->k_ext, dtype, T * HKV * D, seed, S_K_EXT, threads);
    fill(pb->v_ext, dtype, T * HKV * DV, seed, S_V_EXT, threads);
    if (fp8) {
      fill_fp8(pb->k_cache, cache_tokens * HKV * D, seed, S_K_CACHE, threads);
      fill_fp8(pb->v_cache, cache_tokens * HKV * DV, seed, S_V_CACHE, threads);
    } else {
      fill(pb->k_cache, dtype, cache_tokens * HKV * D, seed, S_K_CACHE, threads);
      fill(pb->v_cache, dtype, cache_tokens * HKV * DV, seed, S_V_CACHE, threads);
    }
    zero(pb->o, es * (size_t)(T * HQ * DV), threads);
  }
  if (pb->sinks)
    for (int h = 0; h < HQ; h++) pb->sinks[h] = unit_value(seed, S_SINKS, (uint64_t)h);
  if (pb->tree_mask && fill_tree_mask(pb, w, seed, max_e) != 0) {
    snprintf(err, errlen, "workload %s: out of memory building the problem", w->name);
    xb_problem_free(pb);
    return -1;
  }

  xattn_problem *p = &pb->p;
  wire_problem(pb, w, shape_only, slots, page, max_ctx, max_e);

  pb->visible_pairs = xattn_visible_pairs(p);
  if (shape_only) pb->q = pb->k_ext = pb->v_ext = pb->k_cache = pb->v_cache = pb->o = NULL; /* not owned */
  if (pb->visible_pairs < 0) {
    snprintf(err, errlen, "workload %s: xattn_visible_pairs refused the problem: %s", w->name, xattn_last_error());
    xb_problem_free(pb);
    return -1;
  }
  pb->flops = xb_flops(w, pb->visible_pairs);
  pb->input_bytes = es * (size_t)(T * HQ * D + T * HKV * (D + DV)) + ces * (size_t)(cache_tokens * HKV * (D + DV)) +
                    sizeof(int32_t) * (size_t)(B * max_ctx) + (pb->tree_mask ? (size_t)(B * max_e * max_e) : 0);
  pb->output_bytes = es * (size_t)(T * HQ * DV);
  pb->q_bytes = es * (size_t)(T * HQ * D);
  pb->k_ext_bytes = es * (size_t)(T * HKV * D);
  pb->v_ext_bytes = es * (size_t)(T * HKV * DV);
  pb->k_cache_bytes = ces * (size_t)(cache_tokens * HKV * D);
  pb->v_cache_bytes = ces * (size_t)(cache_tokens * HKV * DV);
  pb->table_bytes = sizeof(int32_t) * (size_t)(B * max_ctx);
  pb->tree_bytes = pb->tree_mask ? (size_t)(B * max_e * max_e) : 0;
  return 0;
}

int xb_problem_build(xb_problem *pb, const xb_workload *w, xattn_dtype dtype, uint64_t seed, int threads,
                     char *err, size_t errlen) {
  return build(pb, w, dtype, seed, threads, 0, 0, err, errlen);
}

int xb_problem_build_with(xb_problem *pb, const xb_workload *w, xattn_dtype dtype, uint64_t seed, int threads,
                          double extra_bytes, char *err, size_t errlen) {
  return build(pb, w, dtype, seed, threads, 0, extra_bytes, err, errlen);
}

int xb_problem_build_shape(xb_problem *pb, const xb_workload *w, xattn_dtype dtype, uint64_t seed, char *err,
                           size_t errlen) {
  return build(pb, w, dtype, seed, 1, 1, 0, err, errlen);
}

void xb_problem_flush(const xb_problem *pb, int threads) {
  const void *p[] = {pb->q, pb->k_ext, pb->v_ext, pb->k_cache, pb->v_cache, pb->req_to_token, pb->tree_mask, pb->o};
  const size_t n[] = {pb->q_bytes,       pb->k_ext_bytes, pb->v_ext_bytes, pb->k_cache_bytes,
                      pb->v_cache_bytes, pb->table_bytes, pb->tree_bytes,  pb->output_bytes};
  xb_flush_ranges(p, n, (int)(sizeof p / sizeof *p), threads);
}

void xb_problem_clear_output(xb_problem *pb) { zero(pb->o, pb->output_bytes, pb->threads); }

float xb_element_f32(const void *base, xattn_dtype t, int64_t i) {
  if (t == XATTN_F32) return ((const float *)base)[i];
  if (t == XATTN_E4M3FN || t == XATTN_E5M2) return xattn_fp8_to_f32(((const uint8_t *)base)[i], t);
  if (t == XATTN_BF16) return xattn_bf16_to_f32(((const uint16_t *)base)[i]);
  return xattn_f16_to_f32(((const uint16_t *)base)[i]);
}

void xb_element_store(void *base, xattn_dtype t, int64_t i, float v) {
  if (t == XATTN_F32) ((float *)base)[i] = v;
  else if (t == XATTN_BF16) ((uint16_t *)base)[i] = xattn_f32_to_bf16(v);
  else ((uint16_t *)base)[i] = xattn_f32_to_f16(v);
}

void xb_problem_output_f32(const xb_problem *pb, float *dst) {
  const xattn_problem *p = &pb->p;
  const int64_t n = p->total_tokens * p->heads_q * p->head_dim_v;
  for (int64_t i = 0; i < n; i++) dst[i] = xb_element_f32(p->o.data, p->dtype, i);
}

double xb_error_ratio(const xb_problem *pb, const float *o, const double *ref) {
  double atol = 1e-5, rtol = 1e-5;
  if (pb->dtype == XATTN_BF16) atol = rtol = 1e-2;
  if (pb->dtype == XATTN_F16) atol = rtol = 2e-3;
  const xattn_problem *p = &pb->p;
  const int64_t n = p->total_tokens * p->heads_q * p->head_dim_v;
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs((double)o[i] - ref[i]) / (atol + rtol * fabs(ref[i]));
    if (!(e <= worst)) worst = e; /* NaN propagates as the worst */
    if (isnan(e)) return INFINITY;
  }
  return worst;
}
