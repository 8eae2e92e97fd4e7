/* Plans (xattn_plan_create / xattn_plan_run): `test_plan NAME`, one ctest
 * each; `test_plan --list` prints the names (ctest's list comes from it).
 *
 *   reuse_same_bits   one plan run many times on changing data gives, bit for
 *                     bit, what xattn_extend_attention gives on the same data,
 *                     and passes the reference (every mode, layout incl. the
 *                     decode path, ISA, dtype)
 *   run_allocates_nothing  xattn_plan_run calls no allocator (malloc and
 *                     friends are counted by wrappers in this binary)
 *   refusals          NULL plan / data / workspace, a misaligned workspace, a
 *                     different batch, bad data and bad shapes: a status, one
 *                     line naming the field, the output untouched
 *   describe_matches_resolve  what a plan runs is what xattn_resolve says
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/check.h"
#include "support/tproblem.h"
#include "xattn/xattn_introspect.h"

static long n_checks, n_failures;

/* ---- counting allocator --------------------------------------------------
 * glibc's own entry points behind wrappers, so that every allocation of this
 * process (libxattn, libgomp) is counted while `counting` is set. Not under
 * ASan, which owns malloc itself. */
#if defined(__SANITIZE_ADDRESS__)
#define HAVE_COUNTER 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_COUNTER 0
#endif
#endif
#ifndef HAVE_COUNTER
#define HAVE_COUNTER 1
#endif
#if HAVE_COUNTER
static atomic_int counting; /* only the counter reads them: under ASan neither exists */
static atomic_long n_allocs;
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
static inline void count(void) {
  if (atomic_load_explicit(&counting, memory_order_relaxed)) atomic_fetch_add(&n_allocs, 1);
}
void *malloc(size_t n) { count(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { count(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { count(); return __libc_realloc(p, n); }
void *aligned_alloc(size_t a, size_t n) { count(); return __libc_memalign(a, n); }
void *memalign(size_t a, size_t n) { count(); return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
  count();
  *out = __libc_memalign(a, n);
  return *out ? 0 : 12 /* ENOMEM */;
}
#endif

/* ---- problems ------------------------------------------------------------- */
static const tp_shape SHAPES[] = {
    {.name = "mixed", .batch = 3, .prefix = {5, 0, 40}, .extend = {7, 33, 1}, .hq = 4, .hkv = 2, .d = 16, .dv = 24,
     .pad_head = 1, .pad_token = 3, .gapped = 1, .sinks = 1, .tree_density = 0.5},
    {.name = "decode", .batch = 2, .prefix = {130, 17}, .extend = {1, 1}, .encoder = {9, 0}, .hq = 8, .hkv = 2,
     .d = 32, .dv = 32, .idx64 = 1, .cap = 5.0f, .tree_density = 0.5},
};
static const xattn_mode MODES[] = {XATTN_MODE_CAUSAL, XATTN_MODE_BIDIRECTIONAL, XATTN_MODE_CROSS, XATTN_MODE_TREE};
static const char *const LAYOUTS[] = {"flat", "gqa", "kvsplit", "decode", "lanes"};
enum { N_LAYOUTS = sizeof LAYOUTS / sizeof *LAYOUTS };

/* The whole output buffer: guards, padding and rows (o_bytes covers all). */
static unsigned char *copy_output(const tproblem *tp) {
  unsigned char *c = malloc(tp->o_bytes);
  memcpy(c, tp->o_buf, tp->o_bytes);
  return c;
}

static void *workspace_for(const xattn_plan *plan) {
  const size_t n = xattn_plan_workspace_size(plan);
  return n ? aligned_alloc(64, n) : NULL;
}

/* ---- checks --------------------------------------------------------------- */
static void reuse_same_bits(void) {
  enum { COPIES = 3, RUNS = 7 };
  for (size_t si = 0; si < sizeof SHAPES / sizeof *SHAPES; si++)
    for (size_t mi = 0; mi < sizeof MODES / sizeof *MODES; mi++)
      for (int dt = 0; dt < 2; dt++)
        for (int li = 0; li < N_LAYOUTS; li++)
          for (int i = 0; i < xattn_isa_count(); i++) {
            const char *isa = xattn_isa_name(i);
            if (!xattn_isa_runnable(isa)) continue;
            tp_mask m = {.dtype = dt ? XATTN_BF16 : XATTN_F32, .mode = MODES[mi], .align = XATTN_ALIGN_BOTTOM_RIGHT, .wl = -1, .wr = -1};
            if (mi == 0 && li == 1) m.wl = 9, m.wr = 0;
            tproblem tp[COPIES];
            int built = 0;
            for (; built < COPIES; built++)
              if (tp_build(&tp[built], &SHAPES[si], m, 100 + 17 * built + si)) break;
            if (built < COPIES) {
              CHECK(0, "setup: tp_build failed");
              for (int k = 0; k < built; k++) tp_free(&tp[k]);
              return;
            }
            xattn_options o;
            xattn_options_init(&o);
            o.isa = isa;
            o.layout = LAYOUTS[li];
            o.threads = 2;
            o.kv_splits = li >= 2 ? 3 : 0; /* kvsplit and decode cut key ranges */
            xattn_plan *plan = NULL;
            xattn_status s = xattn_plan_create(&tp[0].p, &o, &plan);
            char d[256];
            tp_describe(&tp[0], d, sizeof d);
            CHECK(s == XATTN_OK && plan, "%s %s %s: plan_create: %s", d, isa, o.layout, xattn_last_error());
            void *ws = workspace_for(plan);
            for (int r = 0; plan && r < RUNS; r++) {
              tproblem *t = &tp[r % COPIES];
              tp_reset_output(t);
              s = xattn_plan_run(plan, &t->p, ws);
              CHECK(s == XATTN_OK, "%s %s %s run %d: plan_run: %s", d, isa, o.layout, r, xattn_last_error());
              unsigned char *planned = copy_output(t);
              if (r < COPIES) { /* each copy against the reference once */
                if (tp_reference(t) == XATTN_OK) {
                  tp_result res = tp_check(t);
                  char rd[400];
                  tp_describe_result(&res, rd, sizeof rd);
                  CHECK(tp_ok(&res), "%s %s %s copy %d: plan output vs reference: %s", d, isa, o.layout, r, rd);
                }
              }
              tp_reset_output(t);
              s = xattn_extend_attention(&t->p, &o);
              CHECK(s == XATTN_OK, "%s: extend_attention: %s", d, xattn_last_error());
              CHECK(memcmp(planned, t->o_buf, t->o_bytes) == 0,
                    "%s %s %s run %d: plan output differs from xattn_extend_attention's", d, isa, o.layout, r);
              free(planned);
            }
            free(ws);
            xattn_plan_destroy(plan);
            for (int k = 0; k < COPIES; k++) tp_free(&tp[k]);
          }
}

static void run_allocates_nothing(void) {
#if !HAVE_COUNTER
  printf("run_allocates_nothing: skipped under AddressSanitizer (it owns malloc)\n");
  n_checks++;
#else
  const tp_mask masks[] = {{.dtype = XATTN_F32, .mode = XATTN_MODE_CAUSAL, .align = XATTN_ALIGN_BOTTOM_RIGHT, .wl = -1, .wr = -1},
                           {.dtype = XATTN_BF16, .mode = XATTN_MODE_TREE, .align = XATTN_ALIGN_BOTTOM_RIGHT, .wl = -1, .wr = -1}};
  for (int k = 0; k < 2; k++)
    for (int li = 0; li < N_LAYOUTS; li++) {
      tproblem tp;
      if (tp_build(&tp, &SHAPES[k], masks[k], 7)) {
        CHECK(0, "setup: tp_build failed");
        return;
      }
      xattn_options o;
      xattn_options_init(&o);
      o.layout = LAYOUTS[li];
      o.threads = 2;
      xattn_plan *plan = NULL;
      CHECK(xattn_plan_create(&tp.p, &o, &plan) == XATTN_OK, "plan_create: %s", xattn_last_error());
      void *ws = workspace_for(plan);
      CHECK(xattn_plan_run(plan, &tp.p, ws) == XATTN_OK, "warm-up run: %s", xattn_last_error());
      atomic_store(&n_allocs, 0);
      atomic_store(&counting, 1);
      for (int r = 0; r < 10; r++) xattn_plan_run(plan, &tp.p, ws);
      atomic_store(&counting, 0);
      CHECK(atomic_load(&n_allocs) == 0, "%s layout %s: 10 plan runs made %ld allocations", SHAPES[k].name,
            o.layout, atomic_load(&n_allocs));
      /* the counter counts: the one-call path allocates its plan */
      atomic_store(&counting, 1);
      xattn_extend_attention(&tp.p, &o);
      atomic_store(&counting, 0);
      CHECK(atomic_load(&n_allocs) > 0, "the allocation counter saw nothing of xattn_extend_attention");
      free(ws);
      xattn_plan_destroy(plan);
      tp_free(&tp);
    }
#endif
}

/* One refused call: the status, one line naming `field`, output untouched. */
static void expect_refusal(const char *what, xattn_status got, xattn_status want, const char *field,
                           const tproblem *tp, const unsigned char *before) {
  const char *e = xattn_last_error();
  CHECK(got == want, "%s: status %s, want %s (\"%s\")", what, xattn_status_string(got), xattn_status_string(want), e);
  CHECK(strstr(e, field) != NULL, "%s: error \"%s\" does not name %s", what, e, field);
  CHECK(strchr(e, '\n') == NULL && e[0], "%s: error is not one line: \"%s\"", what, e);
  if (tp && before)
    CHECK(memcmp(before, tp->o_buf, tp->o_bytes) == 0, "%s: refused run wrote the output", what);
}

static void refusals(void) {
  tproblem tp;
  const tp_mask m = {.dtype = XATTN_F32, .mode = XATTN_MODE_CAUSAL, .align = XATTN_ALIGN_BOTTOM_RIGHT, .wl = -1, .wr = -1};
  if (tp_build(&tp, &SHAPES[0], m, 3)) {
    CHECK(0, "setup: tp_build failed");
    return;
  }
  xattn_plan *plan = NULL;
  CHECK(xattn_plan_create(&tp.p, NULL, &plan) == XATTN_OK, "plan_create: %s", xattn_last_error());
  const size_t n = xattn_plan_workspace_size(plan);
  CHECK(n > 0 && n % 64 == 0, "workspace size %zu: want a positive multiple of 64", n);
  unsigned char *ws = aligned_alloc(64, n + 64);
  tp_reset_output(&tp);
  unsigned char *before = copy_output(&tp);

  expect_refusal("NULL plan", xattn_plan_run(NULL, &tp.p, ws), XATTN_ERR_NULL, "plan", &tp, before);
  expect_refusal("NULL data", xattn_plan_run(plan, NULL, ws), XATTN_ERR_NULL, "problem", &tp, before);
  expect_refusal("NULL workspace", xattn_plan_run(plan, &tp.p, NULL), XATTN_ERR_NULL, "workspace", &tp, before);
  expect_refusal("misaligned workspace", xattn_plan_run(plan, &tp.p, ws + 8), XATTN_ERR_STRIDE, "workspace", &tp,
                 before);
  xattn_problem bad = tp.p;
  bad.batch = 2;
  expect_refusal("other batch", xattn_plan_run(plan, &bad, ws), XATTN_ERR_SHAPE, "batch", &tp, before);
  bad = tp.p;
  bad.total_tokens += 1;
  expect_refusal("other total_tokens", xattn_plan_run(plan, &bad, ws), XATTN_ERR_SHAPE, "total_tokens", &tp, before);
  bad = tp.p;
  bad.q.data = NULL;
  expect_refusal("NULL q", xattn_plan_run(plan, &bad, ws), XATTN_ERR_NULL, "q", &tp, before);
  bad = tp.p;
  bad.o.token_stride = bad.o.head_stride;
  expect_refusal("overlapping o", xattn_plan_run(plan, &bad, ws), XATTN_ERR_STRIDE, "o", &tp, before);
  bad = tp.p;
  bad.cache_slots = 1;
  expect_refusal("slot outside the cache", xattn_plan_run(plan, &bad, ws), XATTN_ERR_INDEX, "req_to_token", &tp,
                 before);
  /* after all that, the plan still runs */
  CHECK(xattn_plan_run(plan, &tp.p, ws) == XATTN_OK, "good run after refusals: %s", xattn_last_error());

  xattn_plan *p2 = (xattn_plan *)&p2; /* must be set to NULL on failure */
  expect_refusal("NULL out pointer", xattn_plan_create(&tp.p, NULL, NULL), XATTN_ERR_NULL, "plan", NULL, NULL);
  bad = tp.p;
  int32_t ext[TP_MAX_BATCH];
  memcpy(ext, tp.p.extend_lens, sizeof(int32_t) * (size_t)tp.p.batch);
  ext[1] = -2;
  bad.extend_lens = ext;
  expect_refusal("negative extend", xattn_plan_create(&bad, NULL, &p2), XATTN_ERR_SHAPE, "extend_lens[1]", NULL, NULL);
  CHECK(p2 == NULL, "a refused plan_create left *plan set");
  xattn_options o;
  xattn_options_init(&o);
  o.variant = "7x9";
  p2 = (xattn_plan *)&p2;
  expect_refusal("unknown variant", xattn_plan_create(&tp.p, &o, &p2), XATTN_ERR_UNSUPPORTED, "variant", NULL, NULL);
  CHECK(p2 == NULL, "a refused plan_create left *plan set");
  /* a shape without any data pointer is a valid plan */
  xattn_problem shape = tp.p;
  shape.q = shape.k_ext = shape.v_ext = shape.k_cache = shape.v_cache = shape.o = (xattn_tensor){NULL, 0, 0};
  shape.req_to_token = NULL;
  shape.req_index = NULL;
  CHECK(xattn_plan_create(&shape, NULL, &p2) == XATTN_OK, "plan from a shape alone: %s", xattn_last_error());
  CHECK(p2 && xattn_plan_run(p2, &tp.p, ws) == XATTN_OK, "run of a plan made from a shape: %s", xattn_last_error());
  xattn_plan_destroy(p2);
  xattn_plan_destroy(NULL);
  free(before);
  free(ws);
  xattn_plan_destroy(plan);
  tp_free(&tp);
}

static void describe_matches_resolve(void) {
  tproblem tp;
  const tp_mask m = {.dtype = XATTN_BF16, .mode = XATTN_MODE_CAUSAL, .align = XATTN_ALIGN_BOTTOM_RIGHT, .wl = -1, .wr = -1};
  if (tp_build(&tp, &SHAPES[1], m, 5)) {
    CHECK(0, "setup: tp_build failed");
    return;
  }
  for (int li = 0; li <= N_LAYOUTS; li++) {
    xattn_options o;
    xattn_options_init(&o);
    o.layout = li < N_LAYOUTS ? LAYOUTS[li] : NULL; /* NULL: from the config header */
    const char *v1, *l1, *i1, *v2, *l2, *i2;
    int t1, t2;
    CHECK(xattn_resolve(&tp.p, &o, &v1, &l1, &i1, &t1) == XATTN_OK, "resolve: %s", xattn_last_error());
    xattn_plan *plan = NULL;
    CHECK(xattn_plan_create(&tp.p, &o, &plan) == XATTN_OK, "plan_create: %s", xattn_last_error());
    xattn_plan_describe(plan, &v2, &l2, &i2, &t2);
    CHECK(!strcmp(v1, v2) && !strcmp(l1, l2) && !strcmp(i1, i2) && t1 == t2,
          "plan runs %s/%s/%s/t%d, resolve says %s/%s/%s/t%d", v2, l2, i2, t2, v1, l1, i1, t1);
    xattn_plan_destroy(plan);
  }
  tp_free(&tp);
}

/* The few-rows layouts' auto prefetch distance: the tokens of ~64 KiB of K and
 * V rows of every KV head in the cache's storage type, rounded, 1 to 256. */
static void auto_prefetch_distance(void) {
  static const struct {
    int hkv, d, dv;
    xattn_dtype dtype, cache;
    int want;
  } cases[] = {
      {8, 128, 128, XATTN_BF16, XATTN_DTYPE_SAME, 16}, /* the reference shape: 4 KiB a token */
      {8, 128, 128, XATTN_F32, XATTN_DTYPE_SAME, 8},
      {8, 128, 128, XATTN_F16, XATTN_DTYPE_SAME, 16},
      {8, 128, 128, XATTN_BF16, XATTN_E4M3FN, 32}, /* the cache's bytes, not the problem's */
      {8, 128, 128, XATTN_F32, XATTN_E5M2, 32},
      {32, 128, 128, XATTN_BF16, XATTN_DTYPE_SAME, 4}, /* MHA */
      {32, 256, 256, XATTN_F32, XATTN_DTYPE_SAME, 1},  /* 64 KiB a token: at least 1 */
      {64, 256, 256, XATTN_F32, XATTN_DTYPE_SAME, 1},
      {1, 128, 128, XATTN_BF16, XATTN_DTYPE_SAME, 128}, /* MQA */
      {1, 16, 8, XATTN_BF16, XATTN_E4M3FN, 256},       /* 24 bytes a token: at most 256 */
      {8, 192, 128, XATTN_BF16, XATTN_DTYPE_SAME, 13}, /* D != DV: 5 KiB a token, rounded */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    xattn_problem p;
    memset(&p, 0, sizeof p);
    p.heads_kv = cases[i].hkv;
    p.heads_q = cases[i].hkv;
    p.head_dim = cases[i].d;
    p.head_dim_v = cases[i].dv;
    p.dtype = cases[i].dtype;
    p.cache_dtype = cases[i].cache;
    const int got = xattn_auto_prefetch_tokens(&p);
    CHECK(got == cases[i].want, "H_KV %d, D %d, DV %d, %s rows (cache %s): %d tokens, want %d", cases[i].hkv,
          cases[i].d, cases[i].dv, xattn_dtype_name(cases[i].dtype), xattn_dtype_name(cases[i].cache), got,
          cases[i].want);
  }
  xattn_problem empty;
  memset(&empty, 0, sizeof empty);
  CHECK(xattn_auto_prefetch_tokens(&empty) == 1, "a shape without heads or dims: 1 token");
  CHECK(xattn_auto_prefetch_tokens(NULL) == 1, "NULL: 1 token");
}

static const struct {
  const char *name;
  void (*fn)(void);
} tests[] = {
    {"auto_prefetch_distance", auto_prefetch_distance},
    {"reuse_same_bits", reuse_same_bits},
    {"run_allocates_nothing", run_allocates_nothing},
    {"refusals", refusals},
    {"describe_matches_resolve", describe_matches_resolve},
};

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--list")) {
    for (size_t i = 0; i < sizeof tests / sizeof *tests; ++i) printf("%s\n", tests[i].name);
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: test_plan NAME | --list\n");
    return 2;
  }
  for (size_t i = 0; i < sizeof tests / sizeof *tests; ++i)
    if (!strcmp(argv[1], tests[i].name)) {
      tests[i].fn();
      printf("%s: %ld checks, %ld failures\n", argv[1], n_checks, n_failures);
      return n_failures || n_checks == 0 ? 1 : 0;
    }
  fprintf(stderr, "test_plan: unknown test '%s'\n", argv[1]);
  return 2;
}
