/* Named correctness checks, one ctest each: `test_named NAME`; `test_named
 * --list` prints the names, and ctest's list is read from it.
 *
 * Every check runs its problems under the smoke run list (every runnable ISA,
 * variant, layout and kv_splits at least once; XATTN_TEST_LEVEL=reduced or full
 * for more, see tp_exec_list) against xattn_reference, and adds the structural property its name promises
 * (e.g. two documents give different outputs), checked on the reference AND on
 * the kernel's output so that neither can pass by being wrong the same way.
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <limits.h>
#include <math.h>
#include "xattn/xattn_introspect.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/check.h"
#include "support/tproblem.h"

static long n_problems, n_runs, n_checks, n_failures;
static tp_exec *g_execs, *g_smoke, *g_layouts;
static int g_nexec, g_nsmoke, g_nlayouts;


static const tp_mask M_CAUSAL = {XATTN_F32, XATTN_MODE_CAUSAL, XATTN_ALIGN_BOTTOM_RIGHT, -1, -1, 0, 0, 0, 0, 0};

static tp_mask with(tp_mask m, xattn_dtype dt, xattn_mode mode, xattn_align al, int wl, int wr) {
  m.dtype = dt, m.mode = mode, m.align = al, m.wl = wl, m.wr = wr;
  return m;
}

/* Builds a problem and its reference; aborts the test on failure (setup bug). */
static void build(tproblem *tp, const tp_shape *s, tp_mask m, uint64_t seed) {
  if (tp_build(tp, s, m, seed)) exit(1);
  xattn_status st = tp_reference(tp);
  if (st != XATTN_OK) {
    char d[256];
    tp_describe(tp, d, sizeof d);
    printf("FAIL reference %s: %s\n", d, xattn_last_error());
    exit(1);
  }
  n_problems++;
}

/* Work of a problem, roughly: rows x keys x heads x (D + DV). */
static double problem_work(const tproblem *tp) {
  const xattn_problem *p = &tp->p;
  int64_t max_s = 0;
  for (int b = 0; b < p->batch; ++b) {
    int64_t s = p->mode == XATTN_MODE_CROSS ? tp->encoder[b] : (int64_t)tp->prefix[b] + tp->extend[b];
    if (s > max_s) max_s = s;
  }
  return (double)p->total_tokens * (double)max_s * p->heads_q * (p->head_dim + p->head_dim_v);
}

/* Runs every configuration of the list against the reference (the smoke list
 * for big problems, to keep the sanitizer run short). */
static int check_list(tproblem *tp, const tp_exec *execs, int nexec) {
  int fails = 0;
  char d[256], e[160], r[400];
  tp_describe(tp, d, sizeof d);
  for (int i = 0; i < nexec; ++i) {
    xattn_status st;
    tp_result res = tp_run_check(tp, &execs[i], &st);
    n_runs++;
    n_checks++;
    if (tp_ok(&res)) continue;
    n_failures++;
    if (++fails > 10) continue;
    tp_exec_describe(&execs[i], e, sizeof e);
    if (st != XATTN_OK)
      snprintf(r, sizeof r, "status %s: %s", xattn_status_string(st), xattn_last_error());
    else
      tp_describe_result(&res, r, sizeof r);
    printf("FAIL %s %s: %s\n", d, e, r);
    if (fails == 1) tp_dump(tp);
  }
  return fails;
}

static int check_all(tproblem *tp) {
  return problem_work(tp) > 3e5 ? check_list(tp, g_smoke, g_nsmoke) : check_list(tp, g_execs, g_nexec);
}

/* The problem's output as it stands, dense [T, H_Q, DV] (unwritten rows 0). */
static double *output_dense(const tproblem *tp) {
  const xattn_problem *p = &tp->p;
  size_t n = (size_t)(p->total_tokens * p->heads_q * p->head_dim_v);
  double *out = calloc(n ? n : 1, sizeof *out);
  if (!out) {
    printf("FAIL out of memory for %zu outputs\n", n);
    exit(1);
  }
  for (int64_t t = 0; t < p->total_tokens; ++t)
    if (tp->row_written[t])
      for (int h = 0; h < p->heads_q; ++h)
        for (int d = 0; d < p->head_dim_v; ++d)
          out[(t * p->heads_q + h) * p->head_dim_v + d] = tp_out(tp, t, h, d);
  return out;
}

/* Output of a default-options call, dense [T, H_Q, DV] (unwritten rows 0). */
static double *run_default(tproblem *tp) {
  tp_reset_output(tp);
  xattn_status st = xattn_extend_attention(&tp->p, NULL);
  n_runs++;
  if (st != XATTN_OK) {
    printf("FAIL default run: %s\n", xattn_last_error());
    n_failures++;
  }
  return output_dense(tp);
}

/* max over heads and dims of |a - b| on row t of two dense outputs */
static double row_diff(const xattn_problem *p, const double *a, const double *b, int64_t t) {
  double m = 0;
  size_t n = (size_t)p->heads_q * (size_t)p->head_dim_v, at = (size_t)t * n;
  for (size_t i = 0; i < n; ++i) {
    double x = fabs(a[at + i] - b[at + i]);
    if (!(x <= m)) m = x;
  }
  return m;
}

static int row_bits_equal(const xattn_problem *p, const double *a, const double *b, int64_t t) {
  size_t n = (size_t)p->heads_q * (size_t)p->head_dim_v, at = (size_t)t * n;
  return memcmp(a + at, b + at, n * sizeof *a) == 0;
}

static double tol_of(xattn_dtype t) {
  double a, r;
  tp_tolerance(t, &a, &r);
  return a + r; /* outputs are O(1) */
}

static int64_t row_of(const tproblem *tp, int b, int i) { return tp->start[b] + i; }

/* name, B, prefix, extend, encoder, hq, hkv, d, dv, pad_head, pad_token, idx64,
 * gapped, scale, cap, sinks, tree_density */

/* ---- bidirectional_with_prefix -------------------------------------------- */
static void bidirectional_with_prefix(void) {
  tp_shape s = {"bidir_prefix", 2, {5, 9}, {6, 1}, {0}, 4, 2, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int dt = 0; dt < 3; ++dt) {
    tproblem bi, ca, bi3;
    build(&bi, &s, with(M_CAUSAL, dt, XATTN_MODE_BIDIRECTIONAL, 0, -1, -1), 11);
    build(&ca, &s, with(M_CAUSAL, dt, XATTN_MODE_CAUSAL, 0, -1, -1), 11);
    check_all(&bi);
    double *ob = run_default(&bi), *oc = run_default(&ca);
    double tol = tol_of(dt);
    /* row 0 sees the 5 later extend keys in bidirectional mode only */
    CHECK(row_diff(&bi.p, bi.ref, ca.ref, 0) > 10 * tol, "reference: bidirectional row 0 equals causal");
    CHECK(row_diff(&bi.p, ob, oc, 0) > 10 * tol, "kernel: bidirectional row 0 equals causal (%s)",
          xattn_dtype_name(dt));
    /* the prefix is part of what a bidirectional row sees: scaling the prefix's
     * values must move every row */
    build(&bi3, &s, with(M_CAUSAL, dt, XATTN_MODE_BIDIRECTIONAL, 0, -1, -1), 11);
    for (int64_t sl = 0; sl < bi3.p.cache_slots; ++sl)
      for (int h = 0; h < s.hkv; ++h)
        for (int d = 0; d < s.dv; ++d) {
          size_t at = (size_t)(sl * bi3.p.v_cache.token_stride + h * bi3.p.v_cache.head_stride + d);
          if (dt == XATTN_F32) ((float *)bi3.v_cache)[at] += 3.0f;
          else if (dt == XATTN_BF16) ((uint16_t *)bi3.v_cache)[at] = xattn_f32_to_bf16(xattn_bf16_to_f32(((uint16_t *)bi3.v_cache)[at]) + 3.0f);
          else ((uint16_t *)bi3.v_cache)[at] = xattn_f32_to_f16(xattn_f16_to_f32(((uint16_t *)bi3.v_cache)[at]) + 3.0f);
        }
    tp_reference(&bi3);
    check_all(&bi3);
    double *o3 = run_default(&bi3);
    for (int64_t t = 0; t < bi.p.total_tokens; ++t)
      CHECK(row_diff(&bi.p, ob, o3, t) > 10 * tol, "kernel: row %lld ignores the prefix", (long long)t);
    free(ob), free(oc), free(o3);
    tp_free(&bi), tp_free(&ca), tp_free(&bi3);
  }
}

/* ---- causal_top_left_vs_bottom_right ------------------------------------- */
static void causal_top_left_vs_bottom_right(void) {
  tp_shape s = {"tl_br", 3, {4, 0, 2}, {5, 3, 1}, {0}, 2, 1, 16, 16, 2, 0, 1, 0, 0, 0, 0, 0};
  for (int dt = 0; dt < 3; ++dt) {
    tproblem br, tl;
    build(&br, &s, with(M_CAUSAL, dt, XATTN_MODE_CAUSAL, XATTN_ALIGN_BOTTOM_RIGHT, -1, -1), 21);
    build(&tl, &s, with(M_CAUSAL, dt, XATTN_MODE_CAUSAL, XATTN_ALIGN_TOP_LEFT, -1, -1), 21);
    check_all(&br);
    check_all(&tl);
    double *ob = run_default(&br), *ot = run_default(&tl), tol = tol_of(dt);
    for (int b = 0; b < s.batch; ++b)
      for (int i = 0; i < s.extend[b]; ++i) {
        int64_t t = row_of(&br, b, i);
        if (s.prefix[b] > 0) { /* E < S: the alignments see different keys */
          CHECK(row_diff(&br.p, br.ref, tl.ref, t) > 10 * tol, "reference: request %d row %d: top-left == bottom-right", b, i);
          CHECK(row_diff(&br.p, ob, ot, t) > 10 * tol, "kernel: request %d row %d: top-left == bottom-right (%s)", b, i, xattn_dtype_name(dt));
        } else { /* E == S: the same mask */
          CHECK(row_diff(&br.p, ob, ot, t) <= 2 * tol, "kernel: request %d row %d: P=0 but alignments differ", b, i);
        }
      }
    free(ob), free(ot);
    tp_free(&br), tp_free(&tl);
  }
}

/* ---- tree_mask -------------------------------------------------------------- */
static void set_tree(tproblem *tp, int kind) { /* 0: causal (k <= i), 1: all ones */
  int64_t side = tp->p.tree_max_extend;
  for (int b = 0; b < tp->p.batch; ++b)
    for (int i = 0; i < tp->extend[b]; ++i)
      for (int k = 0; k < tp->extend[b]; ++k) tp->tree[(b * side + i) * side + k] = kind ? 1 : k <= i;
}

static void tree_mask(void) {
  tp_shape s = {"tree", 3, {6, 0, 30}, {7, 5, 1}, {0}, 4, 2, 16, 16, 1, 3, 0, 1, 0, 0, 1, 0.4};
  for (int dt = 0; dt < 3; ++dt) {
    tproblem tr, ca, bi;
    build(&tr, &s, with(M_CAUSAL, dt, XATTN_MODE_TREE, 0, -1, -1), 31);
    check_all(&tr);
    build(&ca, &s, with(M_CAUSAL, dt, XATTN_MODE_CAUSAL, 0, -1, -1), 31);
    build(&bi, &s, with(M_CAUSAL, dt, XATTN_MODE_BIDIRECTIONAL, 0, -1, -1), 31);
    double *o = run_default(&tr), tol = tol_of(dt);
    /* a random tree differs from plain causal somewhere */
    double dmax = 0;
    for (int64_t t = 0; t < tr.p.total_tokens; ++t)
      if (tr.row_written[t] && row_diff(&tr.p, o, ca.ref, t) > dmax) dmax = row_diff(&tr.p, o, ca.ref, t);
    CHECK(dmax > 10 * tol, "kernel: random tree mask gives the causal answer");
    free(o);
    /* a lower-triangular tree is causal; an all-ones tree is bidirectional */
    for (int kind = 0; kind < 2; ++kind) {
      tproblem *want = kind ? &bi : &ca;
      set_tree(&tr, kind);
      tp_reference(&tr);
      double rd = 0;
      for (int64_t t = 0; t < tr.p.total_tokens; ++t)
        if (tr.row_written[t] && row_diff(&tr.p, tr.ref, want->ref, t) > rd) rd = row_diff(&tr.p, tr.ref, want->ref, t);
      CHECK(rd < 1e-12, "reference: %s tree differs from %s by %g", kind ? "all-ones" : "triangular",
            kind ? "bidirectional" : "causal", rd);
      check_all(&tr);
    }
    tp_free(&tr), tp_free(&ca), tp_free(&bi);
  }
}

static void tree_mask_with_window(void) {
  tp_shape s = {"tree_win", 2, {9, 3}, {8, 12}, {0}, 2, 2, 24, 16, 0, 0, 1, 0, 0, 0, 0, 0.6};
  const int wins[][2] = {{2, 1}, {0, -1}, {-1, 0}, {5, 3}};
  for (int dt = 0; dt < 3; ++dt)
    for (int w = 0; w < 4; ++w) {
      tproblem tw, tn;
      build(&tw, &s, with(M_CAUSAL, dt, XATTN_MODE_TREE, 0, wins[w][0], wins[w][1]), 41);
      build(&tn, &s, with(M_CAUSAL, dt, XATTN_MODE_TREE, 0, -1, -1), 41);
      check_all(&tw);
      double *o = run_default(&tw), dmax = 0;
      for (int64_t t = 0; t < tw.p.total_tokens; ++t)
        if (tw.row_written[t] && row_diff(&tw.p, o, tn.ref, t) > dmax) dmax = row_diff(&tw.p, o, tn.ref, t);
      CHECK(dmax > 10 * tol_of(dt), "kernel: window (%d,%d) has no effect on the tree mask", wins[w][0], wins[w][1]);
      free(o);
      tp_free(&tw), tp_free(&tn);
    }
}

/* ---- two_documents_differ_bidirectional ---------------------------------- */
/* Copies token row `from` of request 0 onto token row `to` of request 1 in q,
 * k_ext and v_ext: the two documents start with the same token. */
static void copy_token(tproblem *tp, int64_t from, int64_t to) {
  size_t es = xattn_dtype_size(tp->p.dtype);
  const xattn_tensor *v[3] = {&tp->p.q, &tp->p.k_ext, &tp->p.v_ext};
  void *bufs[3] = {tp->q, tp->k_ext, tp->v_ext};
  for (int i = 0; i < 3; ++i)
    memcpy((char *)bufs[i] + (size_t)(to * v[i]->token_stride) * es,
           (char *)bufs[i] + (size_t)(from * v[i]->token_stride) * es, (size_t)v[i]->token_stride * es);
}

static void two_documents_differ_bidirectional(void) {
  /* equal lengths, and the reranker report's shape: a 2-token document ("hi")
   * next to a long one, both starting with the same token */
  tp_shape shapes[2] = {{"two_docs", 2, {0, 0}, {6, 6}, {0}, 2, 2, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0},
                        {"short_and_long_docs", 2, {0, 0}, {2, 40}, {0}, 4, 4, 32, 32, 0, 0, 0, 0, 0, 0, 0, 0}};
  for (int k = 0; k < 6; ++k) {
    const tp_shape s = shapes[k / 3];
    int dt = k % 3;
    tproblem bi, ca;
    build(&bi, &s, with(M_CAUSAL, dt, XATTN_MODE_BIDIRECTIONAL, 0, -1, -1), 51);
    build(&ca, &s, with(M_CAUSAL, dt, XATTN_MODE_CAUSAL, 0, -1, -1), 51);
    int64_t a0 = row_of(&bi, 0, 0), b0 = row_of(&bi, 1, 0);
    copy_token(&bi, a0, b0);
    copy_token(&ca, a0, b0);
    tp_reference(&bi);
    tp_reference(&ca);
    check_all(&bi);
    check_all(&ca);
    double *ob = run_default(&bi), *oc = run_default(&ca), tol = tol_of(dt);
    /* the engine's view: the first token's row (a CLS embedding) */
    CHECK(row_diff(&bi.p, bi.ref, bi.ref + (b0 - a0) * s.hq * s.dv, a0) > 10 * tol,
          "reference: two documents share the first row in bidirectional mode");
    CHECK(row_diff(&bi.p, ob, ob + (b0 - a0) * s.hq * s.dv, a0) > 10 * tol,
          "kernel: two different documents give the same first row in bidirectional mode (%s): "
          "the layer is causal-masked", xattn_dtype_name(dt));
    /* ... whereas a causal mask makes them equal: the test can tell */
    CHECK(row_diff(&ca.p, oc, oc + (b0 - a0) * s.hq * s.dv, a0) <= tol,
          "kernel: causal first rows of identical first tokens differ");
    /* mean-pooled embeddings differ too */
    double pa = 0, pb = 0;
    for (int i = 0; i < s.extend[0]; ++i)
      for (int c = 0; c < s.hq * s.dv; ++c) pa += ob[(row_of(&bi, 0, i)) * s.hq * s.dv + c] / s.extend[0];
    for (int i = 0; i < s.extend[1]; ++i)
      for (int c = 0; c < s.hq * s.dv; ++c) pb += ob[(row_of(&bi, 1, i)) * s.hq * s.dv + c] / s.extend[1];
    CHECK(fabs(pa - pb) > 10 * tol, "kernel: mean-pooled documents equal");
    free(ob), free(oc);
    tp_free(&bi), tp_free(&ca);
  }
}

/* ---- causal_vs_bidirectional_differ_where_masked ------------------------- */
static void causal_vs_bidirectional_differ_where_masked(void) {
  tp_shape s = {"cvb", 3, {0, 4, 2}, {7, 5, 1}, {0}, 4, 2, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int dt = 0; dt < 3; ++dt) {
    tproblem ca, bi;
    build(&ca, &s, with(M_CAUSAL, dt, XATTN_MODE_CAUSAL, 0, -1, -1), 61);
    build(&bi, &s, with(M_CAUSAL, dt, XATTN_MODE_BIDIRECTIONAL, 0, -1, -1), 61);
    check_all(&ca);
    check_all(&bi);
    double tol = tol_of(dt);
    /* same configuration for both modes: rows where the masks coincide (the
     * last row of each request sees every key either way) are equal bit for
     * bit; every other row sees fewer keys under causal and differs */
    for (int e = 0; e < g_nexec; ++e) {
      xattn_options o;
      tp_exec_options(&g_execs[e], &o);
      size_t n = (size_t)(ca.p.total_tokens * s.hq * s.dv);
      double *oc = calloc(n, sizeof *oc), *ob = calloc(n, sizeof *ob);
      tproblem *tps[2] = {&ca, &bi};
      double *outs[2] = {oc, ob};
      for (int k = 0; k < 2; ++k) {
        tp_reset_output(tps[k]);
        if (xattn_extend_attention(&tps[k]->p, &o) != XATTN_OK) {
          CHECK(0, "run failed: %s", xattn_last_error());
          continue;
        }
        n_runs++;
        for (int64_t t = 0; t < ca.p.total_tokens; ++t)
          for (int h = 0; h < s.hq; ++h)
            for (int d = 0; d < s.dv; ++d) outs[k][(t * s.hq + h) * s.dv + d] = tp_out(tps[k], t, h, d);
      }
      char ed[160];
      tp_exec_describe(&g_execs[e], ed, sizeof ed);
      for (int b = 0; b < s.batch; ++b)
        for (int i = 0; i < s.extend[b]; ++i) {
          int64_t t = row_of(&ca, b, i);
          if (i == s.extend[b] - 1)
            CHECK(row_bits_equal(&ca.p, oc, ob, t), "%s %s: request %d last row: causal != bidirectional (max diff %g)",
                  xattn_dtype_name(dt), ed, b, row_diff(&ca.p, oc, ob, t));
          else {
            /* the reference says how far apart they are; where that is well
             * above the tolerance the kernel's two answers must differ too */
            double rd = row_diff(&ca.p, ca.ref, bi.ref, t);
            CHECK(rd > 0, "reference: request %d row %d: causal == bidirectional", b, i);
            if (rd > 4 * tol)
              CHECK(row_diff(&ca.p, oc, ob, t) > 2 * tol, "%s %s: request %d row %d: causal == bidirectional",
                    xattn_dtype_name(dt), ed, b, i);
          }
        }
      free(oc), free(ob);
    }
    tp_free(&ca), tp_free(&bi);
  }
}

/* ---- empty_rows_write_zeros ------------------------------------------------ */
static void empty_rows_write_zeros(void) {
  /* cross: request 1 has no encoder tokens; window (0,0) empties rows with p >= enc_len */
  tp_shape cross = {"cross_empty", 3, {0, 2, 1}, {4, 3, 0}, {2, 0, 6}, 4, 2, 16, 8, 1, 2, 0, 1, 0, 0, 1, 0};
  /* top-left with a prefix and a window: j <= i and j >= P + i - 1 leaves nothing for P >= 2 */
  tp_shape tl = {"tl_empty", 2, {3, 0}, {5, 4}, {0}, 2, 1, 16, 16, 0, 0, 1, 0, 0, 0, 1, 0};
  /* tree rows whose mask row is empty and that have no prefix */
  tp_shape tree = {"tree_empty", 2, {0, 0}, {6, 0}, {0}, 2, 2, 8, 8, 0, 0, 0, 1, 0, 0, 0, 0.0};
  struct { const tp_shape *s; tp_mask m; } cases[] = {
      {&cross, {0, XATTN_MODE_CROSS, 0, 0, 0, 0, 0, 0, 0, 0}},
      {&cross, {0, XATTN_MODE_CROSS, 0, -1, -1, 0, 0, 0, 0, 0}},
      {&tl, {0, XATTN_MODE_CAUSAL, XATTN_ALIGN_TOP_LEFT, 1, 0, 0, 0, 0, 0, 0}},
      {&tree, {0, XATTN_MODE_TREE, 0, -1, -1, 0, 0, 0, 0, 0}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c)
    for (int dt = 0; dt < 3; ++dt) {
      tproblem tp;
      tp_mask m = cases[c].m;
      m.dtype = dt;
      build(&tp, cases[c].s, m, 71 + c);
      if (m.mode == XATTN_MODE_TREE) { /* request 0: only rows 0..2 see themselves */
        int64_t side = tp.p.tree_max_extend;
        for (int i = 0; i < 6; ++i)
          for (int k = 0; k < 6; ++k) tp.tree[i * side + k] = (i == k && i < 3);
        tp_reference(&tp);
      }
      check_all(&tp);
      /* empty rows: the reference row is all zeros (a row that sees keys never is) */
      const xattn_problem *p = &tp.p;
      size_t rowlen = (size_t)p->heads_q * (size_t)p->head_dim_v;
      int64_t empty = 0, *rows = malloc(sizeof *rows * (size_t)(p->total_tokens + 1));
      for (int64_t t = 0; t < p->total_tokens; ++t) {
        int zero = tp.row_written[t];
        for (size_t k = 0; zero && k < rowlen; ++k) zero &= tp.ref[(size_t)t * rowlen + k] == 0.0;
        if (zero) rows[empty++] = t;
      }
      for (int e = 0; empty && e < g_nexec; ++e) {
        xattn_status st;
        tp_result r = tp_run_check(&tp, &g_execs[e], &st);
        n_runs++;
        int64_t nonzero = st == XATTN_OK ? 0 : -1;
        for (int64_t k = 0; st == XATTN_OK && k < empty; ++k)
          for (int h = 0; h < p->heads_q; ++h)
            for (int d = 0; d < p->head_dim_v; ++d) nonzero += tp_out(&tp, rows[k], h, d) != 0.0;
        char ed[160];
        tp_exec_describe(&g_execs[e], ed, sizeof ed);
        CHECK(nonzero == 0 && tp_ok(&r), "%s %s %s: %lld non-zero elements in %lld empty rows",
              cases[c].s->name, xattn_dtype_name(dt), ed, (long long)nonzero, (long long)empty);
      }
      free(rows);
      CHECK(empty > 0, "%s: setup has no empty row", cases[c].s->name);
      tp_free(&tp);
    }
}

/* ---- softcap_applied_in_prefill ------------------------------------------- */
static void softcap_applied_in_prefill(void) {
  /* scale 3 makes |s| reach ~10; cap 2 squeezes it hard. Prefill extends (9, 33)
   * and a decode-like E = 1 on a prefix. */
  tp_shape capped = {"softcap", 3, {0, 0, 20}, {9, 33, 1}, {0}, 2, 1, 16, 16, 0, 0, 0, 0, 3.0f, 2.0f, 0, 0};
  tp_shape plain = capped;
  plain.cap = 0;
  for (int dt = 0; dt < 3; ++dt)
    for (int mode = 0; mode < 2; ++mode) {
      xattn_mode md = mode ? XATTN_MODE_BIDIRECTIONAL : XATTN_MODE_CAUSAL;
      tproblem c, n;
      build(&c, &capped, with(M_CAUSAL, dt, md, 0, -1, -1), 81);
      build(&n, &plain, with(M_CAUSAL, dt, md, 0, -1, -1), 81);
      check_all(&c);
      double *o = run_default(&c), tol = tol_of(dt);
      for (int b = 0; b < 3; ++b) {
        double dmax = 0;
        for (int i = 0; i < capped.extend[b]; ++i) {
          double x = row_diff(&c.p, o, n.ref, row_of(&c, b, i));
          if (x > dmax) dmax = x;
        }
        CHECK(dmax > 10 * tol, "kernel: %s %s request %d (E=%d): output equals the uncapped answer",
              xattn_mode_name(md), xattn_dtype_name(dt), b, capped.extend[b]);
      }
      free(o);
      tp_free(&c), tp_free(&n);
    }
}

/* ---- sinks ------------------------------------------------------------------- */
static void sinks(void) {
  tp_shape with_s = {"sinks", 3, {0, 5, 12}, {7, 1, 20}, {0}, 4, 2, 16, 16, 0, 0, 0, 1, 0, 0, 1, 0};
  tp_shape without = with_s;
  without.sinks = 0;
  for (int dt = 0; dt < 3; ++dt) {
    tproblem s, n;
    build(&s, &with_s, with(M_CAUSAL, dt, XATTN_MODE_CAUSAL, 0, -1, -1), 91);
    build(&n, &without, with(M_CAUSAL, dt, XATTN_MODE_CAUSAL, 0, -1, -1), 91);
    check_all(&s);
    double *o = run_default(&s), tol = tol_of(dt), dmax = 0;
    for (int64_t t = 0; t < s.p.total_tokens; ++t)
      if (s.row_written[t] && row_diff(&s.p, o, n.ref, t) > dmax) dmax = row_diff(&s.p, o, n.ref, t);
    CHECK(dmax > 10 * tol, "kernel: %s: sinks have no effect", xattn_dtype_name(dt));
    free(o);
    /* a huge sink takes all the mass: o ~ 0; a very negative one none: o = no-sink answer */
    for (int h = 0; h < 4; ++h) s.sinks[h] = 60.0f;
    tp_reference(&s);
    check_all(&s);
    o = run_default(&s);
    double omax = 0;
    for (int64_t t = 0; t < s.p.total_tokens; ++t)
      if (s.row_written[t])
        for (int k = 0; k < 4 * 16; ++k) omax = fmax(omax, fabs(o[t * 64 + k]));
    CHECK(omax < 1e-6, "kernel: %s: sink 60 leaves |o| up to %g", xattn_dtype_name(dt), omax);
    free(o);
    for (int h = 0; h < 4; ++h) s.sinks[h] = -1e4f;
    tp_reference(&s);
    check_all(&s);
    o = run_default(&s);
    dmax = 0;
    for (int64_t t = 0; t < s.p.total_tokens; ++t)
      if (s.row_written[t] && row_diff(&s.p, o, n.ref, t) > dmax) dmax = row_diff(&s.p, o, n.ref, t);
    CHECK(dmax <= 2 * tol, "kernel: %s: sink -1e4 changes the output by %g", xattn_dtype_name(dt), dmax);
    free(o);
    tp_free(&s), tp_free(&n);
  }
}

/* ---- partial_masked_tile_no_nan ------------------------------------------- */
static void partial_masked_tile_no_nan(void) {
  /* scale 40: |s| up to ~100, so exp() overflows unless the max is subtracted
   * and -inf masks must not turn into inf - inf; lengths cut tiles anywhere */
  tp_shape s = {"hot_logits", 4, {0, 3, 0, 40}, {1, 7, 33, 130}, {3, 9, 40, 17}, 2, 1, 16, 16, 0, 0, 0, 1, 40.0f, 0, 0, 0.3};
  struct { xattn_mode m; xattn_align a; int wl, wr; } masks[] = {
      {XATTN_MODE_CAUSAL, 0, -1, -1}, {XATTN_MODE_CAUSAL, 0, 5, 0}, {XATTN_MODE_CAUSAL, 1, 2, 0},
      {XATTN_MODE_BIDIRECTIONAL, 0, 3, 3}, {XATTN_MODE_TREE, 0, -1, -1}, {XATTN_MODE_CROSS, 0, 4, 4}};
  for (size_t k = 0; k < sizeof masks / sizeof *masks; ++k)
    for (int dt = 0; dt < 3; ++dt) {
      tproblem tp;
      build(&tp, &s, with(M_CAUSAL, dt, masks[k].m, masks[k].a, masks[k].wl, masks[k].wr), 101 + k);
      check_all(&tp); /* the tolerance check refuses any NaN or Inf */
      tp_free(&tp);
    }
}

/* ---- lazy_max_outgrown ---------------------------------------------------- */
static void lazy_max_outgrown(void) {
  /* The amx softmax keeps a row's running max (on its first tile: the max of
   * the tile's first 32 keys) while the scores stay below it + 8 (base 2), and
   * notices an outgrown max from its sums of p. Here every query meets keys
   * 40..47 (first tile, after the 32 that set the guess) with scores ~160
   * (base 2) above the others and keys 600..607 (a later 512-key tile) ~160
   * above those: a kernel that kept the stale max would overflow p to Inf.
   * bf16 only (the path that has the lazy max; f32 scores this large lose
   * more than f32's tolerance to rounding in any kernel). */
  tp_shape s = {"outgrown", 1, {0}, {700}, {0}, 1, 1, 32, 16, 0, 0, 0, 0, 0, 0, 0, 0};
  tproblem tp;
  build(&tp, &s, with(M_CAUSAL, XATTN_BF16, XATTN_MODE_BIDIRECTIONAL, 0, -1, -1), 171);
  for (int t = 0; t < 700; ++t) {
    tp_set(&tp, tp.q, &tp.p.q, t, 0, 0, 16.0f);
    tp_set(&tp, tp.k_ext, &tp.p.k_ext, t, 0, 0, t >= 40 && t < 48 ? 40.0f : t >= 600 && t < 608 ? 80.0f : 0.0f);
  }
  tp_reference(&tp);
  check_all(&tp); /* the tolerance check refuses any NaN or Inf */
  tp_free(&tp);
}

/* ---- lazy_max_outgrown_mixed ---------------------------------------------- */
static void lazy_max_outgrown_mixed(void) {
  /* The same keys as lazy_max_outgrown, but only every third query meets
   * them with large scores (the others have q = 0.25: flat, small scores), so
   * that the amx softmax's 16-row passes hold rows that settle beside rows
   * that outgrow their max and are redone one by one: a redo that touched a
   * settled row (its l counted twice) or skipped an outgrown one fails here. */
  tp_shape s = {"outgrown_mixed", 1, {0}, {700}, {0}, 1, 1, 32, 16, 0, 0, 0, 0, 0, 0, 0, 0};
  tproblem tp;
  build(&tp, &s, with(M_CAUSAL, XATTN_BF16, XATTN_MODE_BIDIRECTIONAL, 0, -1, -1), 172);
  for (int t = 0; t < 700; ++t) {
    tp_set(&tp, tp.q, &tp.p.q, t, 0, 0, t % 3 == 0 ? 16.0f : 0.25f);
    tp_set(&tp, tp.k_ext, &tp.p.k_ext, t, 0, 0, t >= 40 && t < 48 ? 40.0f : t >= 600 && t < 608 ? 80.0f : 0.0f);
  }
  tp_reference(&tp);
  check_all(&tp);
  tp_free(&tp);
}

/* ---- nonfinite_inputs ----------------------------------------------------- */
/* docs/contract.md, non-finite inputs: an output row depends only on the keys
 * it may see; what it sees propagates as IEEE arithmetic does. Each case sets a
 * few NaN/Inf elements, checks that the reference puts NaN/Inf exactly where
 * the contract says (so the case cannot pass vacuously), then runs every ISA x
 * layout against it (tp_check: NaN where the reference is NaN, the same Inf or
 * NaN where it is Inf, within tolerance everywhere else). */
static int64_t ref_count(const tproblem *tp, int want_nan) {
  const xattn_problem *p = &tp->p;
  int64_t n = 0;
  for (int64_t t = 0; t < p->total_tokens; ++t)
    for (int64_t k = 0; tp->row_written[t] && k < (int64_t)p->heads_q * p->head_dim_v; ++k) {
      const double x = tp->ref[t * p->heads_q * p->head_dim_v + k];
      n += want_nan ? isnan(x) : isinf(x);
    }
  return n;
}

static void nonfinite_inputs(void) {
  /* name, B, prefix, extend, encoder, hq, hkv, d, dv, pad_head, pad_token, idx64, gapped, scale, cap, sinks, tree */
  tp_shape causal64 = {"causal64", 1, {0}, {64}, {0}, 2, 1, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0};
  tp_shape prefixed = {"prefixed", 1, {5}, {20}, {0}, 2, 1, 16, 16, 0, 0, 0, 0, 0, 0, 1, 0};
  tp_shape bidir = {"bidir40", 1, {0}, {40}, {0}, 1, 1, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0};
  tp_shape bidir128 = {"bidir128", 1, {0}, {128}, {0}, 2, 1, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int dt = 0; dt < 3; ++dt) {
    tproblem tp;
    /* 1. +Inf in the last token's v: only the last query sees it (the issue's
       case: 0 x Inf made all 64 causal rows non-finite) */
    build(&tp, &causal64, with(M_CAUSAL, dt, XATTN_MODE_CAUSAL, 0, -1, -1), 151);
    tp_set(&tp, tp.v_ext, &tp.p.v_ext, 63, 0, 3, INFINITY);
    tp_reference(&tp);
    CHECK(ref_count(&tp, 0) == 2 && ref_count(&tp, 1) == 0, "%s: reference: %lld Inf, %lld NaN, want 2 Inf (last row, column 3, both heads)",
          xattn_dtype_name(dt), (long long)ref_count(&tp, 0), (long long)ref_count(&tp, 1));
    check_list(&tp, g_layouts, g_nlayouts);
    /* 2. and NaN in the last token's k: the last row is NaN, the others untouched */
    tp_set(&tp, tp.k_ext, &tp.p.k_ext, 63, 0, 5, NAN);
    tp_reference(&tp);
    CHECK(ref_count(&tp, 1) == 2 * 16 && ref_count(&tp, 0) == 0, "%s: reference: %lld NaN, want the last row's 32",
          xattn_dtype_name(dt), (long long)ref_count(&tp, 1));
    check_list(&tp, g_layouts, g_nlayouts);
    tp_free(&tp);

    /* 3. NaN in a visible key of the extend (rows >= 10 see it) and in one query
       (that row and head only), with a prefix and sinks */
    build(&tp, &prefixed, with(M_CAUSAL, dt, XATTN_MODE_CAUSAL, 0, -1, -1), 152);
    tp_set(&tp, tp.k_ext, &tp.p.k_ext, 10, 0, 2, NAN);
    tp_set(&tp, tp.q, &tp.p.q, 4, 1, 7, NAN);
    tp_reference(&tp);
    CHECK(ref_count(&tp, 1) == (10 * 2 + 1) * 16, "%s: reference: %lld NaN, want %d", xattn_dtype_name(dt),
          (long long)ref_count(&tp, 1), (10 * 2 + 1) * 16);
    check_list(&tp, g_layouts, g_nlayouts);
    tp_free(&tp);

    /* 4. +Inf in k with q of one sign per row: score +inf (odd rows: NaN row) or
       -inf (even rows: weight 0, finite row), in fully visible tiles without a
       cap (AMX's fast softmax path); then +Inf in that key's v too: the even
       rows' column becomes 0 x Inf = NaN */
    build(&tp, &bidir, with(M_CAUSAL, dt, XATTN_MODE_BIDIRECTIONAL, 0, -1, -1), 153);
    tp_set(&tp, tp.k_ext, &tp.p.k_ext, 7, 0, 0, INFINITY);
    for (int i = 0; i < 40; ++i) tp_set(&tp, tp.q, &tp.p.q, i, 0, 0, i % 2 ? 0.5f : -0.5f);
    tp_reference(&tp);
    CHECK(ref_count(&tp, 1) == 20 * 16 && ref_count(&tp, 0) == 0, "%s: reference: %lld NaN, %lld Inf, want 320 NaN",
          xattn_dtype_name(dt), (long long)ref_count(&tp, 1), (long long)ref_count(&tp, 0));
    check_list(&tp, g_layouts, g_nlayouts);
    tp_set(&tp, tp.v_ext, &tp.p.v_ext, 7, 0, 9, INFINITY);
    tp_reference(&tp);
    CHECK(ref_count(&tp, 1) == 20 * 16 + 20, "%s: reference: %lld NaN, want 340", xattn_dtype_name(dt),
          (long long)ref_count(&tp, 1));
    check_list(&tp, g_layouts, g_nlayouts);
    tp_free(&tp);

    /* 5. Rows whose first whole span of keys scores only -inf / NaN, before any
       finite score (the lanes tile's spans of 64 keys: 128 keys, every query
       sees both spans whole, so no partial tile repairs a row afterwards).
       +Inf in element 0 of keys 0..63 and q[0] = -0.5 (even queries: span 0
       all -inf, weight 0 with m and l kept, span 1 finite) or +0.5 (odd: +inf
       scores, NaN rows); then NaN in even query 4's head 1: every score NaN,
       and its l must turn NaN in span 0 although its m stays -inf. */
    build(&tp, &bidir128, with(M_CAUSAL, dt, XATTN_MODE_BIDIRECTIONAL, 0, -1, -1), 154);
    for (int j = 0; j < 64; ++j) tp_set(&tp, tp.k_ext, &tp.p.k_ext, j, 0, 0, INFINITY);
    for (int i = 0; i < 128; ++i)
      for (int h = 0; h < 2; ++h) tp_set(&tp, tp.q, &tp.p.q, i, h, 0, i % 2 ? 0.5f : -0.5f);
    tp_reference(&tp);
    CHECK(ref_count(&tp, 1) == 64 * 2 * 16 && ref_count(&tp, 0) == 0, "%s: reference: %lld NaN, %lld Inf, want 2048 NaN",
          xattn_dtype_name(dt), (long long)ref_count(&tp, 1), (long long)ref_count(&tp, 0));
    check_list(&tp, g_layouts, g_nlayouts);
    tp_set(&tp, tp.q, &tp.p.q, 4, 1, 7, NAN);
    tp_reference(&tp);
    CHECK(ref_count(&tp, 1) == 64 * 2 * 16 + 16, "%s: reference: %lld NaN, want 2064", xattn_dtype_name(dt),
          (long long)ref_count(&tp, 1));
    check_list(&tp, g_layouts, g_nlayouts);
    tp_free(&tp);
  }
}

/* ---- edge_tiles_do_not_write_past_extend ---------------------------------- */
static void edge_tiles_do_not_write_past_extend(void) {
  /* awkward lengths, padding after every head and token, gaps between
   * requests in reverse order, an empty request; tp_check verifies every
   * byte outside the requests' rows and heads keeps its sentinel */
  tp_shape s = {"edges", 5, {0, 2, 0, 7, 1}, {1, 7, 33, 0, 17}, {1, 7, 33, 0, 17}, 3, 1, 8, 12, 5, 9, 0, 2, 0, 0, 0, 0.5};
  xattn_mode modes[] = {XATTN_MODE_CAUSAL, XATTN_MODE_BIDIRECTIONAL, XATTN_MODE_CROSS, XATTN_MODE_TREE};
  for (int m = 0; m < 4; ++m)
    for (int dt = 0; dt < 3; ++dt) {
      tproblem tp;
      build(&tp, &s, with(M_CAUSAL, dt, modes[m], 0, -1, -1), 111);
      check_all(&tp);
      tp_free(&tp);
    }
}

/* ---- strides_noncontiguous ------------------------------------------------- */
static void strides_noncontiguous(void) {
  /* tp_build draws the same values for the same seed whatever the padding, so
   * the padded and the dense problem hold the same numbers */
  tp_shape dense = {"dense", 3, {4, 0, 9}, {5, 16, 2}, {0}, 4, 2, 16, 8, 0, 0, 1, 0, 0, 0, 0, 0};
  tp_shape padded = dense;
  padded.name = "padded";
  padded.pad_head = 3, padded.pad_token = 11;
  for (int dt = 0; dt < 3; ++dt)
    for (int mode = 0; mode < 2; ++mode) {
      xattn_mode md = mode ? XATTN_MODE_BIDIRECTIONAL : XATTN_MODE_CAUSAL;
      tproblem a, b;
      build(&a, &dense, with(M_CAUSAL, dt, md, 0, -1, -1), 121);
      build(&b, &padded, with(M_CAUSAL, dt, md, 0, -1, -1), 121);
      check_all(&b);
      double *oa = run_default(&a), *ob = run_default(&b), dmax = 0;
      for (int r = 0; r < 3; ++r)
        for (int i = 0; i < dense.extend[r]; ++i)
          for (int k = 0; k < 4 * 8; ++k)
            dmax = fmax(dmax, fabs(oa[(row_of(&a, r, i)) * 32 + k] - ob[(row_of(&b, r, i)) * 32 + k]));
      CHECK(dmax <= tol_of(dt), "kernel: %s %s: padded strides change the answer by %g",
            xattn_mode_name(md), xattn_dtype_name(dt), dmax);
      free(oa), free(ob);
      tp_free(&a), tp_free(&b);
    }
}

/* ---- gqa_mqa ------------------------------------------------------------------ */
static void gqa_mqa(void) {
  int heads[][2] = {{8, 2}, {4, 1}, {3, 3}, {6, 3}};
  for (int k = 0; k < 4; ++k)
    for (int dt = 0; dt < 3; ++dt) {
      tp_shape s = {"heads", 2, {3, 0}, {6, 9}, {0}, heads[k][0], heads[k][1], 16, 16, 0, 0, 0, 0, 0, 0, 0, 0};
      tproblem tp;
      build(&tp, &s, with(M_CAUSAL, dt, XATTN_MODE_CAUSAL, 0, -1, -1), 131);
      check_all(&tp);
      /* identical query heads: outputs equal within a KV group, differ across groups */
      size_t es = xattn_dtype_size(dt);
      for (int64_t t = 0; t < tp.p.total_tokens; ++t)
        for (int h = 1; h < s.hq; ++h)
          memcpy((char *)tp.q + (size_t)(t * tp.p.q.token_stride + h * tp.p.q.head_stride) * es,
                 (char *)tp.q + (size_t)(t * tp.p.q.token_stride) * es, (size_t)s.d * es);
      tp_reference(&tp);
      check_all(&tp);
      double *o = run_default(&tp);
      int group = s.hq / s.hkv;
      for (int64_t t = 0; t < tp.p.total_tokens; ++t)
        for (int h = 1; h < s.hq; ++h) {
          double dmax = 0;
          for (int d = 0; d < 16; ++d) dmax = fmax(dmax, fabs(o[(t * s.hq + h) * 16 + d] - o[(t * s.hq) * 16 + d]));
          if (h / group == 0)
            CHECK(dmax <= tol_of(dt), "kernel: H_Q/H_KV %d/%d: head %d differs from head 0 of its group", s.hq, s.hkv, h);
          else if (tp.row_written[t])
            CHECK(dmax > 10 * tol_of(dt), "kernel: H_Q/H_KV %d/%d row %lld: head %d (KV head %d) equals head 0",
                  s.hq, s.hkv, (long long)t, h, h / group);
        }
      free(o);
      tp_free(&tp);
    }
}

/* ---- d_neq_dv ------------------------------------------------------------------- */
static void d_neq_dv(void) {
  int dims[][4] = {{40, 24, 2, 1}, {24, 40, 2, 2}, {192, 128, 2, 1}, {576, 512, 2, 1}, {8, 1, 1, 1}};
  for (int k = 0; k < 5; ++k)
    for (int dt = 0; dt < 3; ++dt)
      for (int mode = 0; mode < 2; ++mode) {
        tp_shape s = {"dims", 2, {4, 0}, {3, 5}, {0}, dims[k][2], dims[k][3], dims[k][0], dims[k][1], 1, 0, 0, 0, 0, 0, 0, 0};
        tproblem tp;
        build(&tp, &s, with(M_CAUSAL, dt, mode ? XATTN_MODE_BIDIRECTIONAL : XATTN_MODE_CAUSAL, 0, -1, -1), 141);
        check_all(&tp);
        tp_free(&tp);
      }
}

/* ---- concurrent_calls ------------------------------------------------------- */
/* The header promises thread safety for calls on different outputs, and a
 * thread-local last error: four threads run different problems (one of them
 * also makes failing calls) at once, each checked against its reference. */
typedef struct worker {
  tproblem tp;
  int index, runs, wrong, leaked_error, missing_error;
} worker;

static void *worker_main(void *arg) {
  worker *w = arg;
  for (int it = 0; it < 12; ++it) {
    const tp_exec *e = &g_execs[(w->index * 5 + it) % g_nexec];
    if (w->index == 3 && it % 2) { /* a bad call: must fail with its own message */
      int32_t saved = w->tp.p.heads_kv;
      w->tp.p.heads_kv = 3;
      xattn_status st = xattn_extend_attention(&w->tp.p, NULL);
      w->missing_error += st == XATTN_OK || !strstr(xattn_last_error(), "heads");
      w->tp.p.heads_kv = saved;
      continue;
    }
    xattn_status st;
    tp_result r = tp_run_check(&w->tp, e, &st);
    w->runs++;
    w->wrong += !tp_ok(&r);
    w->leaked_error += st == XATTN_OK && xattn_last_error()[0] != '\0';
  }
  return NULL;
}

static void concurrent_calls(void) {
  tp_shape s = {"concurrent", 3, {0, 40, 7}, {37, 5, 20}, {9, 30, 4}, 4, 2, 32, 32, 0, 0, 0, 1, 0, 0, 1, 0.5};
  xattn_mode modes[4] = {XATTN_MODE_CAUSAL, XATTN_MODE_BIDIRECTIONAL, XATTN_MODE_TREE, XATTN_MODE_CROSS};
  worker w[4];
  pthread_t th[4];
  for (int i = 0; i < 4; ++i) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].index = i;
    build(&w[i].tp, &s, with(M_CAUSAL, (xattn_dtype)(i % 3), modes[i], 0, i == 1 ? 6 : -1, i == 1 ? 6 : -1), 151 + i);
  }
  for (int i = 0; i < 4; ++i) CHECK(pthread_create(&th[i], NULL, worker_main, &w[i]) == 0, "pthread_create");
  for (int i = 0; i < 4; ++i) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; ++i) {
    n_runs += w[i].runs;
    CHECK(w[i].wrong == 0, "thread %d (%s): %d of %d concurrent runs wrong", i, xattn_mode_name(modes[i]), w[i].wrong, w[i].runs);
    CHECK(w[i].leaked_error == 0, "thread %d: last_error not empty after a success (%d times)", i, w[i].leaked_error);
    CHECK(w[i].missing_error == 0, "thread %d: a failing call's message was missing or wrong", i);
    tp_free(&w[i].tp);
  }
}

/* ---- paged_cache_bitwise_equals_slot_table -----------------------------------
 * A token-major paged cache is the slot table with slot = block * page + i: the
 * same call through both tables must give the same bits, on every ISA, variant
 * and layout (and page_size 0 and 1 are the slot table itself). */
static void paged_cache_bitwise_equals_slot_table(void) {
  tp_shape s = {"paged", 3, {37, 0, 70}, {5, 12, 1}, {20, 9, 33}, 4, 2, 16, 16, 3, 0, 0, 1, 0, 0, 0, 0.5};
  xattn_mode modes[] = {XATTN_MODE_CAUSAL, XATTN_MODE_CROSS};
  for (int k = 0; k < 2; ++k)
    for (int dt = 0; dt < 3; ++dt) {
      tp_mask m = with(M_CAUSAL, (xattn_dtype)dt, modes[k], 0, -1, -1);
      m.page_size = 16;
      m.start_cols = 1;
      tproblem tp;
      build(&tp, &s, m, 401 + (uint64_t)(k * 3 + dt));
      xattn_problem *p = &tp.p;
      const int64_t page = p->page_size, cols = p->max_ctx * page;
      int64_t *slots = malloc(sizeof *slots * (size_t)(p->max_reqs * cols));
      if (!slots) exit(1);
      for (int64_t r = 0; r < p->max_reqs; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          int64_t e = r * p->max_ctx + c / page;
          int64_t block = p->req_to_token_type == XATTN_I64 ? ((const int64_t *)p->req_to_token)[e]
                                                            : ((const int32_t *)p->req_to_token)[e];
          slots[r * cols + c] = block * page + c % page;
        }
      xattn_problem slot = *p;
      slot.page_size = k; /* 0 and 1 both mean a slot table */
      slot.req_to_token = slots;
      slot.req_to_token_type = XATTN_I64;
      slot.max_ctx = cols;
      slot.cache_slots = p->cache_slots * page;
      const size_t out_bytes = tp.o_bytes - 2 * tp.o_guard_bytes;
      unsigned char *paged_out = malloc(out_bytes);
      if (!paged_out) exit(1);
      for (int i = 0; i < g_nsmoke; ++i) {
        xattn_options o;
        tp_exec_options(&g_smoke[i], &o);
        tp_reset_output(&tp);
        xattn_status st = xattn_extend_attention(p, &o);
        memcpy(paged_out, p->o.data, out_bytes);
        tp_reset_output(&tp);
        xattn_status st2 = xattn_extend_attention(&slot, &o);
        n_runs += 2;
        char e[160];
        tp_exec_describe(&g_smoke[i], e, sizeof e);
        CHECK(st == XATTN_OK && st2 == XATTN_OK, "%s: %s", e, xattn_last_error());
        CHECK(memcmp(paged_out, p->o.data, out_bytes) == 0, "%s %s dtype %s: paged and slot-table outputs differ", e,
              xattn_mode_name(modes[k]), xattn_dtype_name((xattn_dtype)dt));
        tp_result r = tp_check(&tp);
        CHECK(tp_ok(&r), "%s: slot-table run disagrees with the reference", e);
      }
      free(paged_out);
      free(slots);
      tp_free(&tp);
    }
}

/* ---- fp8_codes_decode_exactly --------------------------------------------------
 * Every one of the 256 codes of both fp8 formats against a decode written
 * differently: e5m2 is the top byte of an f16, e4m3fn from its fields in
 * double; the landmarks by value (subnormals, e4m3fn max 448 and its NaNs,
 * e5m2 infinities); and encoding a decoded code gives the code back. */
static double e4m3fn_by_fields(int c) {
  const int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  if (e == 15 && m == 7) return NAN;
  const double v = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
  return s ? -v : v;
}

static void fp8_codes_decode_exactly(void) {
  int wrong[2] = {0, 0}, roundtrip[2] = {0, 0};
  for (int c = 0; c < 256; ++c) {
    const double want[2] = {e4m3fn_by_fields(c), xattn_f16_to_f32((uint16_t)(c << 8))};
    const xattn_dtype t[2] = {XATTN_E4M3FN, XATTN_E5M2};
    for (int k = 0; k < 2; ++k) {
      const float got = xattn_fp8_to_f32((uint8_t)c, t[k]);
      const int same = isnan(want[k]) ? isnan(got) : (double)got == want[k] && !signbit(got) == !signbit(want[k]);
      if (!same && wrong[k]++ < 5) printf("     %s code 0x%02x: got %g, want %g\n", xattn_dtype_name(t[k]), c, (double)got, want[k]);
      if (!isnan(got) && xattn_f32_to_fp8(got, t[k]) != c && roundtrip[k]++ < 5)
        printf("     %s code 0x%02x: %g encodes to 0x%02x\n", xattn_dtype_name(t[k]), c, (double)got, xattn_f32_to_fp8(got, t[k]));
    }
  }
  CHECK(!wrong[0] && !wrong[1], "decode: %d e4m3fn and %d e5m2 codes wrong", wrong[0], wrong[1]);
  CHECK(!roundtrip[0] && !roundtrip[1], "encode(decode(c)) != c: %d e4m3fn, %d e5m2", roundtrip[0], roundtrip[1]);
  CHECK(xattn_fp8_to_f32(0x7e, XATTN_E4M3FN) == 448.0f && xattn_fp8_to_f32(0xfe, XATTN_E4M3FN) == -448.0f, "e4m3fn max 448");
  CHECK(isnan(xattn_fp8_to_f32(0x7f, XATTN_E4M3FN)) && isnan(xattn_fp8_to_f32(0xff, XATTN_E4M3FN)), "e4m3fn NaN codes");
  CHECK(xattn_fp8_to_f32(0x01, XATTN_E4M3FN) == 0x1p-9f && xattn_fp8_to_f32(0x08, XATTN_E4M3FN) == 0x1p-6f, "e4m3fn subnormal/normal");
  CHECK(xattn_fp8_to_f32(0x7c, XATTN_E5M2) == INFINITY && xattn_fp8_to_f32(0xfc, XATTN_E5M2) == -INFINITY, "e5m2 inf");
  CHECK(isnan(xattn_fp8_to_f32(0x7d, XATTN_E5M2)) && xattn_fp8_to_f32(0x7b, XATTN_E5M2) == 57344.0f, "e5m2 NaN, max");
  CHECK(xattn_fp8_to_f32(0x01, XATTN_E5M2) == 0x1p-16f, "e5m2 smallest subnormal");
  CHECK(xattn_f32_to_fp8(464.0f, XATTN_E4M3FN) == 0x7f && xattn_f32_to_fp8(450.0f, XATTN_E4M3FN) == 0x7e,
        "e4m3fn overflow: 450 -> 448, 464 -> NaN");
  CHECK(xattn_f32_to_fp8(1e6f, XATTN_E5M2) == 0x7c && xattn_f32_to_fp8(0x1p-18f, XATTN_E5M2) == 0x00 &&
            xattn_f32_to_fp8(0x1.8p-16f, XATTN_E5M2) == 0x02,
        "e5m2: overflow to inf, underflow to 0, ties to even");
}

/* ---- fp8_codes_through_kernels ---------------------------------------------------
 * Every finite code of both formats through the load path of every ISA, variant
 * and layout: request b has one query and two encoder keys (cross mode).
 *  V test: both keys' V rows hold code b, K zeros: o = decode(b) * v_scale exactly.
 *  K test: key 0's K row holds code b, key 1's zeros, V = 1 and 0, q = e0:
 *          o = sigmoid(decode(b) * k_scale), against the reference. */
static void fp8_codes_through_kernels(void) {
  const xattn_dtype fmts[2] = {XATTN_E4M3FN, XATTN_E5M2};
  enum { D = 16 };
  for (int f = 0; f < 2; ++f)
    for (int dti = 0; dti < 2; ++dti)
      for (int ktest = 0; ktest < 2; ++ktest) {
        const xattn_dtype fmt = fmts[f], dt = dti ? XATTN_BF16 : XATTN_F32;
        uint8_t codes[256];
        int B = 0;
        for (int c = 0; c < 256; ++c)
          if (isfinite(xattn_fp8_to_f32((uint8_t)c, fmt))) codes[B++] = (uint8_t)c;
        const size_t es = xattn_dtype_size(dt);
        int32_t *zeros = calloc((size_t)B, sizeof(int32_t)), *enc = malloc(sizeof(int32_t) * (size_t)B);
        int64_t *ridx = malloc(sizeof(int64_t) * (size_t)B);
        int32_t *table = malloc(sizeof(int32_t) * (size_t)B * 2);
        uint8_t *kc = calloc((size_t)B * 2 * D, 1), *vc = calloc((size_t)B * 2 * D, 1);
        char *q = calloc((size_t)B * D, es), *o = calloc((size_t)B * D, es);
        double *ref = malloc(sizeof(double) * (size_t)B * D);
        if (!zeros || !enc || !ridx || !table || !kc || !vc || !q || !o || !ref) exit(1);
        const uint8_t one = xattn_f32_to_fp8(1.0f, fmt);
        for (int b = 0; b < B; ++b) {
          enc[b] = 2;
          ridx[b] = b;
          table[2 * b] = 2 * b;
          table[2 * b + 1] = 2 * b + 1;
          if (dt == XATTN_F32) ((float *)q)[b * D] = 1.0f;
          else ((uint16_t *)q)[b * D] = xattn_f32_to_bf16(1.0f);
          for (int d = 0; d < D; ++d) {
            if (ktest) {
              kc[(2 * b) * D + d] = codes[b];
              vc[(2 * b) * D + d] = one;
            } else {
              vc[(2 * b) * D + d] = vc[(2 * b + 1) * D + d] = codes[b];
            }
          }
        }
        xattn_problem p;
        xattn_problem_init(&p);
        p.batch = B;
        p.prefix_lens = zeros;
        p.extend_lens = enc; /* one query each: enc holds 2s, so use a separate array below */
        int32_t *ones = malloc(sizeof(int32_t) * (size_t)B);
        if (!ones) exit(1);
        for (int b = 0; b < B; ++b) ones[b] = 1;
        p.extend_lens = ones;
        p.encoder_lens = enc;
        p.total_tokens = B;
        p.heads_q = p.heads_kv = 1;
        p.head_dim = p.head_dim_v = D;
        p.dtype = dt;
        p.scale = 1.0f;
        p.mode = XATTN_MODE_CROSS;
        p.q = (xattn_tensor){q, D, D};
        p.k_cache = (xattn_tensor){kc, D, D};
        p.v_cache = (xattn_tensor){vc, D, D};
        p.cache_slots = 2 * B;
        p.cache_dtype = fmt;
        p.k_scale = 0.25f;
        p.v_scale = 0.5f;
        p.o.data = o;
        p.o.token_stride = p.o.head_stride = D;
        p.req_to_token = table;
        p.max_reqs = B;
        p.max_ctx = 2;
        p.req_index = ridx;
        CHECK(xattn_reference(&p, ref) == XATTN_OK, "reference: %s", xattn_last_error());
        int bad_runs = 0;
        for (int i = 0; i < g_nsmoke; ++i) {
          xattn_options opt;
          tp_exec_options(&g_smoke[i], &opt);
          memset(o, 0x7f, (size_t)B * D * es);
          xattn_status st = xattn_extend_attention(&p, &opt);
          n_runs++;
          int wrong = st != XATTN_OK;
          for (int b = 0; !wrong && b < B; ++b)
            for (int d = 0; d < D; ++d) {
              const double got = dt == XATTN_F32 ? ((float *)o)[b * D + d] : xattn_bf16_to_f32(((uint16_t *)o)[b * D + d]);
              double want = ref[b * D + d];
              if (!ktest) { /* exact: the kernel's own f32 decode times the scale, in the output dtype */
                const float x = xattn_fp8_to_f32(codes[b], fmt) * 0.5f;
                want = dt == XATTN_F32 ? x : xattn_bf16_to_f32(xattn_f32_to_bf16(x));
              }
              const double tol = ktest ? (dt == XATTN_F32 ? 1e-5 : 1e-2) * (1 + fabs(want)) : 0.0;
              if (!(fabs(got - want) <= tol)) {
                if (!wrong) {
                  char e[160];
                  tp_exec_describe(&g_smoke[i], e, sizeof e);
                  printf("     %s %s %s test, code 0x%02x: got %.9g want %.9g (%s)\n", xattn_dtype_name(fmt),
                         xattn_dtype_name(dt), ktest ? "K" : "V", codes[b], got, want, e);
                }
                wrong = 1;
                break;
              }
            }
          bad_runs += wrong;
        }
        CHECK(bad_runs == 0, "%s cache, %s, %s test: %d of %d runs wrong", xattn_dtype_name(fmt), xattn_dtype_name(dt),
              ktest ? "K" : "V", bad_runs, g_nsmoke);
        free(zeros), free(enc), free(ridx), free(table), free(kc), free(vc), free(q), free(o), free(ref), free(ones);
      }
}

/* ---- fp8_codes_through_full_tiles / fp8_codes_through_lanes_tile -----------
 * Every code of both formats through the decode layout's full-tile path (rows
 * read straight from the cache and widened in registers, scales folded into
 * scores and weights) on every ISA: D = 256 dims, one per code; each request
 * sees 32 cache keys (cross mode: two whole tiles of 16), H_Q 4 or 3 per KV
 * head (blocks of 4, 2 and 1 rows); per-tensor and per-token-per-head scales.
 *  V test: key 0's V row holds code c at dim c, the other 31 rows and K are 0:
 *          o[c] = decode(c) * v_scale / 32 exactly (Inf / NaN where e5m2's are).
 *          e4m3fn's NaN codes sit in a second request's rows: NaN in their dims,
 *          the others exact (that tile is screened off the bit-move path).
 *  K test: key 0's K row holds code c at dim c (finite codes: 0 x Inf would
 *          reach every query), its V row ones, the rest 0;
 *          request b's query is a power of two at dim c_b only, so the score
 *          is +-[1, 2) (0 for zeros): a wrong sign, subnormal or exponent moves
 *          it by >= 1/8, against the fp64 reference. e4m3fn NaN codes: NaN rows.
 * H_KV is 1 here: the per-token-per-head scale's head index is the diff grids'
 * (tproblem: H_KV > 1, a random scale per token and head). Head 0's scale for
 * every KV head fails diff_kv_e4m3fn_large_causal on the full tiles (decode.inc
 * K.ks / K.vs), diff_kv_e4m3fn on the flash path (item.inc's fp8 staging) and
 * both on decode's staged rows (decode_load_rows).
 * The same through the lanes layout (fp8_codes_through_lanes_tile): 64 keys
 * (one whole span), H_Q 16 and 17 (a whole 16-row block, and one with a
 * 1-row block beside it); on amx with bf16 that is the AMX lanes tile, which
 * widens the codes to bf16 and applies the scales to the scores and to P. */
/* k_once: the K test (one request per code: the cost) only at H_Q hq1, with
 * per-token scales (they multiply the tensor scale: both are applied) and
 * bf16 (the bf16 tiles' own widening, bf16_widen32 on amx and avx512bf16;
 * the f32 tile widens with v_load_widen, or stages NaN-code spans as decode does). */
static void fp8_codes_through_layout(const char *layout, const int N, int hq0, int hq1, int k_once) {
  const xattn_dtype fmts[2] = {XATTN_E4M3FN, XATTN_E5M2};
  enum { D = 256 }; /* dims (one per code); N: keys per request */
  for (int f = 0; f < 2; ++f)
    for (int dti = 0; dti < 2; ++dti)
      for (int ktest = 0; ktest < 2; ++ktest)
        for (int hq = hq0; hq <= hq1; ++hq)
          for (int per_token = 0; per_token < 2; ++per_token) {
            if (ktest && k_once && (hq != hq1 || !per_token || dti == 0)) continue;
            const xattn_dtype fmt = fmts[f], dt = dti ? XATTN_BF16 : XATTN_F32;
            const int e4 = fmt == XATTN_E4M3FN;
            /* the requests: V test 1 (+1 with e4m3fn's NaN codes); K test one per code */
            uint8_t codes[256];
            int B = 0;
            if (ktest)
              for (int c = 0; c < 256; ++c)
                if (!isinf(xattn_fp8_to_f32((uint8_t)c, fmt)) && !(isnan(xattn_fp8_to_f32((uint8_t)c, fmt)) && !e4))
                  codes[B++] = (uint8_t)c;
            if (!ktest) B = e4 ? 2 : 1;
            const size_t es = xattn_dtype_size(dt);
            const int slots = 2 * N; /* slots 0..N-1: the finite codes; N..2N-1: e4m3fn's NaN codes */
            int32_t *zeros = calloc((size_t)B, sizeof(int32_t)), *enc = malloc(sizeof(int32_t) * (size_t)B);
            int32_t *ones = malloc(sizeof(int32_t) * (size_t)B), *table = malloc(sizeof(int32_t) * (size_t)B * N);
            int64_t *ridx = malloc(sizeof(int64_t) * (size_t)B);
            uint8_t *kc = calloc((size_t)slots * D, 1), *vc = calloc((size_t)slots * D, 1);
            float *ks = malloc(sizeof(float) * slots), *vs = malloc(sizeof(float) * slots);
            char *q = calloc((size_t)B * hq * D, es), *o = calloc((size_t)B * hq * D, es);
            double *ref = malloc(sizeof(double) * (size_t)B * hq * D);
            if (!zeros || !enc || !ones || !table || !ridx || !kc || !vc || !ks || !vs || !q || !o || !ref) exit(1);
            const float kscale = 0.25f, vscale = 0.5f;
            for (int t = 0; t < slots; ++t) { /* powers of two: products stay exact */
              ks[t] = per_token ? ldexpf(1.0f, t % 3 - 1) : 1.0f;
              vs[t] = per_token ? ldexpf(1.0f, 1 - t % 3) : 1.0f;
            }
            for (int c = 0; c < 256; ++c) { /* slot 0: the finite codes (and e5m2's Inf / NaN in V); slot N: all */
              const int finite = isfinite(xattn_fp8_to_f32((uint8_t)c, fmt));
              uint8_t *row0 = ktest ? kc : vc, *row32 = (ktest ? kc : vc) + (size_t)N * D;
              row0[c] = finite || (!ktest && !e4) ? (uint8_t)c : 0; /* a K row's Inf / NaN meets every query */
              row32[c] = (uint8_t)c;
            }
            const uint8_t one = xattn_f32_to_fp8(1.0f, fmt);
            if (ktest) memset(vc, one, D), memset(vc + (size_t)N * D, one, D);
            for (int b = 0; b < B; ++b) {
              const int nan_req = ktest ? e4 && (codes[b] & 0x7f) == 0x7f : b == 1;
              enc[b] = N;
              ones[b] = 1;
              ridx[b] = b;
              for (int j = 0; j < N; ++j) table[b * N + j] = (nan_req ? N : 0) + j;
              if (!ktest) continue;
              const float v = xattn_fp8_to_f32(codes[b], fmt) * kscale * ks[nan_req ? N : 0];
              const float qv = nan_req || v == 0.0f ? 1.0f : ldexpf(1.0f, -ilogbf(v)); /* |score| in [1, 2) */
              for (int h = 0; h < hq; ++h) {
                const size_t at = ((size_t)b * hq + h) * D + codes[b];
                if (dt == XATTN_F32) ((float *)q)[at] = qv;
                else ((uint16_t *)q)[at] = xattn_f32_to_bf16(qv);
              }
            }
            xattn_problem p;
            xattn_problem_init(&p);
            p.batch = B;
            p.prefix_lens = zeros;
            p.extend_lens = ones;
            p.encoder_lens = enc;
            p.total_tokens = B;
            p.heads_q = hq;
            p.heads_kv = 1;
            p.head_dim = p.head_dim_v = D;
            p.dtype = dt;
            p.scale = 1.0f;
            p.mode = XATTN_MODE_CROSS;
            p.q = (xattn_tensor){q, (int64_t)hq * D, D};
            p.k_cache = (xattn_tensor){kc, D, D};
            p.v_cache = (xattn_tensor){vc, D, D};
            p.cache_slots = slots;
            p.cache_dtype = fmt;
            p.k_scale = kscale;
            p.v_scale = vscale;
            p.k_scales = per_token ? ks : NULL;
            p.v_scales = per_token ? vs : NULL;
            p.o = (xattn_tensor){o, (int64_t)hq * D, D};
            p.req_to_token = table;
            p.max_reqs = B;
            p.max_ctx = N;
            p.req_index = ridx;
            CHECK(xattn_reference(&p, ref) == XATTN_OK, "reference: %s", xattn_last_error());
            int bad_runs = 0, decode_runs = 0;
            for (int i = 0; i < g_nlayouts; ++i) {
              if (strcmp(g_layouts[i].layout, layout)) continue;
              xattn_options opt;
              tp_exec_options(&g_layouts[i], &opt);
              memset(o, 0x7f, (size_t)B * hq * D * es);
              const xattn_status st = xattn_extend_attention(&p, &opt);
              n_runs++, decode_runs++;
              int wrong = st != XATTN_OK;
              for (int r = 0; !wrong && r < B * hq; ++r)
                for (int d = 0; d < D; ++d) {
                  const size_t at = (size_t)r * D + d;
                  const double got = dt == XATTN_F32 ? ((float *)o)[at] : xattn_bf16_to_f32(((uint16_t *)o)[at]);
                  double want = ref[at];
                  if (!ktest) { /* exact: decode(c) * v_scale * its token's scale / N, in the output dtype */
                    const int t = r / hq == 1 ? N : 0;
                    const float x = xattn_fp8_to_f32(((const uint8_t *)vc)[(size_t)t * D + d], fmt) * vscale * vs[t] / N;
                    want = dt == XATTN_F32 ? x : xattn_bf16_to_f32(xattn_f32_to_bf16(x));
                  }
                  const double tol = ktest ? (dt == XATTN_F32 ? 1e-5 : 1e-2) * (1 + fabs(want)) : 0.0;
                  const int same = isnan(want) ? isnan(got) : isinf(want) ? got == want : fabs(got - want) <= tol;
                  if (!same) {
                    char e[160];
                    tp_exec_describe(&g_layouts[i], e, sizeof e);
                    printf("     %s %s %s test, H_Q %d, %s scales, row %d dim %d (code 0x%02x): got %.9g want %.9g (%s)\n",
                           xattn_dtype_name(fmt), xattn_dtype_name(dt), ktest ? "K" : "V", hq,
                           per_token ? "per-token" : "tensor", r, d, ktest ? codes[r / hq] : d, got, want, e);
                    wrong = 1;
                    break;
                  }
                }
              bad_runs += wrong;
            }
            CHECK(decode_runs > 0 && bad_runs == 0, "%s cache, %s, %s test, H_Q %d, %s scales: %d of %d %s runs wrong",
                  xattn_dtype_name(fmt), xattn_dtype_name(dt), ktest ? "K" : "V", hq, per_token ? "per-token" : "tensor",
                  bad_runs, decode_runs, layout);
            free(zeros), free(enc), free(ones), free(table), free(ridx), free(kc), free(vc), free(ks), free(vs);
            free(q), free(o), free(ref);
          }
}

static void fp8_codes_through_full_tiles(void) { fp8_codes_through_layout("decode", 32, 3, 4, 0); }
static void fp8_codes_through_lanes_tile(void) { fp8_codes_through_layout("lanes", 64, 16, 17, 1); }

/* ---- decode_full_tile_dims ------------------------------------------------------
 * The decode layout's full-tile blocks on every runnable ISA (on avx512bf16
 * with bf16 the bf16-dot block, decode/dots_bf16.inc: the raw bf16 query
 * against K rows as pairs along d, scale * log2 e on the summed scores, P in
 * bf16 against V rows interleaved in pairs of keys; fp8 codes widened to bf16
 * through byte tables, the query laid out in the K steps' element order):
 * head dims with 16-element tails (D 80: half a 32-element step of bf16 and a
 * 16-code fp8 step; DV 48: 3 of a block's 4 dv vectors; DV 208: 64-column
 * blocks and a 16-column one; D 16), D != DV both ways, 1 to 5 query heads per
 * KV head (row blocks of 4, 2 and 1), prefixes that end mid-tile (the partial
 * and masked tiles take the staged f32 path beside full ones), a left window,
 * E 1 and 3, a soft cap, sinks, bf16 / f32 and e4m3fn / e5m2 caches. Scale 0.5
 * makes the softmax peaky so that weights on the wrong key move the output far
 * past the bf16 tolerance: swapping the two keys of a V pair, dropping the
 * score scale or a wrong byte of the fp8 tables fails it. The last two shapes
 * (4 and 8 query heads per KV head, D and DV multiples of 64, with a cap and
 * with sinks) are the ones amx runs through the AMX tile block with an e4m3fn
 * cache (decode/tiles_amx.inc): one and two 4-row blocks per head, each with
 * its own query tiles; skipping its P V, or giving the second block the
 * first's query tiles, fails them. */
static void decode_full_tile_dims(void) {
  static const int dims[][4] = {{4, 1, 80, 48},  {5, 1, 48, 208},  {6, 2, 128, 128},
                                {2, 2, 192, 64}, {8, 2, 16, 32},   {8, 2, 128, 64}, {16, 2, 64, 192}};
  static const int windows[][2] = {{-1, -1}, {20, -1}};
  static const xattn_dtype kv8s[] = {0, XATTN_E4M3FN, XATTN_E5M2};
  const char *variant = tp_compiled_variant("64x64");
  for (size_t k = 0; k < sizeof dims / sizeof *dims; ++k)
    for (int wi = 0; wi < 2; ++wi)
      for (int dti = 0; dti < 2; ++dti)
        for (int f = 0; f < 3; ++f) {
          tp_shape s = {"full_tile_dims", 3, {37, 70, 133}, {1, 3, 1}, {0}, dims[k][0], dims[k][1], dims[k][2], dims[k][3],
                        0, 0, 0, 0, 0.5f, k == 1 || k == 5 ? 5.0f : 0.0f, k == 2 || k == 6, 0};
          tp_mask m = with(M_CAUSAL, dti ? XATTN_BF16 : XATTN_F32, XATTN_MODE_CAUSAL, 0, windows[wi][0], windows[wi][1]);
          m.kv8 = kv8s[f];
          tproblem tp;
          build(&tp, &s, m, 9100 + 10 * k + wi);
          for (int isa = 0; isa < xattn_isa_count(); ++isa) {
            const char *name = xattn_isa_name(isa);
            if (!xattn_isa_runnable(name)) continue;
            tp_exec e = {name, variant, "decode", 2, XATTN_SCHED_AUTO, 1, 0, 0};
            xattn_status st;
            tp_result r = tp_run_check(&tp, &e, &st);
            char d[256], why[400];
            tp_describe(&tp, d, sizeof d);
            tp_describe_result(&r, why, sizeof why);
            CHECK(st == XATTN_OK && tp_ok(&r), "%s on %s (decode): status %d, %s", d, name, (int)st, why);
            n_runs++;
          }
          tp_free(&tp);
        }
}

/* ---- decode_tile_rows -----------------------------------------------------------
 * The AMX tile block (decode/tiles_amx.inc) on runs of 4 to 16 consecutive
 * rows of a KV group: bf16 and e5m2 caches (from 8 rows a group) and e4m3fn
 * caches, 4, 8, 12 and 32 query heads per KV head (12: a 16-row run ends
 * inside a query; 32: two runs per query), E 2 to 8 per request, so that a head's full
 * tile takes runs of 16, 12, 8 and 4 rows (the column softmax from 8 rows,
 * the rows' own softmax at 4), the runs after the first reusing the staged K
 * and V; a left window of 40 gives each tile a different subset of full
 * queries; a soft cap, sinks, NaN / Inf planted in the inputs (and one row
 * whose scores are all -inf except one NaN in a full tile: its max stays
 * -inf, so only that tile can turn its l, and so its output, NaN), and 1 or
 * the automatic number of key splits. Every runnable ISA runs the same problems
 * (the others through their own blocks). Scale 0.5 makes the softmax peaky:
 * skipping the accumulator rescale of a row whose max grew, or a row given
 * another row's P, fails it. */
static void decode_tile_rows(void) {
  static const int dims[][4] = {{8, 2, 128, 128}, {16, 2, 64, 192}, {12, 1, 64, 128}, {32, 1, 128, 64}};
  static const int windows[][2] = {{-1, -1}, {40, -1}};
  static const xattn_dtype kv8s[] = {0, XATTN_E4M3FN, XATTN_E5M2};
  const char *variant = tp_compiled_variant("64x64");
  for (size_t k = 0; k < sizeof dims / sizeof *dims; ++k)
    for (int wi = 0; wi < 2; ++wi)
      for (int f = 0; f < 3; ++f)
        for (int plant = 0; plant < 2; ++plant) {
          tp_shape s = {"tile_rows", 3, {150, 301, 64}, {2, 8, 5}, {0}, dims[k][0], dims[k][1], dims[k][2], dims[k][3],
                        0, 0, 0, 0, 0.5f, k == 1 ? 5.0f : 0.0f, k == 2, 0};
          tp_mask m = with(M_CAUSAL, XATTN_BF16, XATTN_MODE_CAUSAL, 0, windows[wi][0], windows[wi][1]);
          m.kv8 = kv8s[f];
          const uint64_t seed = 9300 + 40 * k + 8 * wi + 2 * f + plant;
          tproblem tp;
          if (tp_build(&tp, &s, m, seed)) exit(1);
          if (plant) tp_plant_nonfinite(&tp, seed);
          if (plant && !f) { /* a row that stays at -inf but meets a NaN score in one full tile (bf16 cache) */
            const int g = 5 / (dims[k][0] / dims[k][1]);
            const int32_t *tab = (const int32_t *)tp.table;
            tp_set(&tp, tp.q, &tp.p.q, 2 + 7, 5, 7, INFINITY); /* request 1, query 7, head 5: element 7 = +inf */
            for (int j = 0; j < 301; ++j) /* K element 7 < 0: every score -inf, but key 40's 0: inf x 0 = NaN */
              tp_set(&tp, tp.k_cache, &tp.p.k_cache, tab[tp.req_index[1] * tp.p.max_ctx + j], g, 7, j == 40 ? 0.0f : -1.0f);
            for (int i = 0; i < 8; ++i) tp_set(&tp, tp.k_ext, &tp.p.k_ext, 2 + i, g, 7, -1.0f);
          }
          const xattn_status rs = tp_reference(&tp);
          CHECK(rs == XATTN_OK, "reference: %s", xattn_last_error());
          n_problems++;
          for (int isa = 0; isa < xattn_isa_count() && rs == XATTN_OK; ++isa) {
            const char *name = xattn_isa_name(isa);
            if (!xattn_isa_runnable(name)) continue;
            for (int splits = 0; splits < 2; ++splits) {
              tp_exec e = {name, variant, "decode", 2, XATTN_SCHED_AUTO, splits ? 1 : 0, 0, 0};
              xattn_status st;
              tp_result r = tp_run_check(&tp, &e, &st);
              char d[256], why[400];
              tp_describe(&tp, d, sizeof d);
              tp_describe_result(&r, why, sizeof why);
              CHECK(st == XATTN_OK && tp_ok(&r), "%s on %s (decode, %s splits): status %d, %s", d, name,
                    splits ? "1" : "auto", (int)st, why);
              n_runs++;
            }
          }
          tp_free(&tp);
        }
}

/* ---- resolve_reports_running_isa --------------------------------------------
 * An ISA with bf16 code only (amx, avx512bf16) runs f32/f16 problems with the
 * avx512 kernels; what xattn_resolve reports (and so what bench rows and config
 * classes are named after) must be that ISA, not the one asked for. The
 * tuner's key (xattn_running_isa) is a table lookup and is checked on every
 * CPU; where the CPU cannot run an ISA (an AVX2-only Zen 3) asking for it must
 * be refused in one line naming it, and the default resolution must report the
 * running ISA of the best one for every dtype. */
static void resolve_reports_running_isa(void) {
  tp_shape s = {"resolve", 1, {3}, {5}, {0}, 2, 1, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0};
  const char *bf16_only[] = {"amx", "avx512bf16"};
  for (int k = 0; k < 2; ++k) {
    if (!xattn_running_isa(bf16_only[k], XATTN_F32)) continue; /* NULL: not in this build */
    const int runnable = xattn_isa_runnable(bf16_only[k]);
    for (int dt = 0; dt < 3; ++dt) {
      const char *want = dt == XATTN_BF16 ? bf16_only[k] : "avx512";
      /* the tuner keys its classes with xattn_running_isa: it must name the same */
      const char *keyed = xattn_running_isa(bf16_only[k], (xattn_dtype)dt);
      CHECK(keyed && !strcmp(keyed, want), "xattn_running_isa(%s, %s) = %s, expected %s", bf16_only[k],
            xattn_dtype_name((xattn_dtype)dt), keyed ? keyed : "(null)", want);
      tproblem tp;
      build(&tp, &s, with(M_CAUSAL, (xattn_dtype)dt, XATTN_MODE_CAUSAL, 0, -1, -1), 311 + dt);
      xattn_options o;
      xattn_options_init(&o);
      o.isa = bf16_only[k];
      const char *isa = NULL;
      const xattn_status st = xattn_resolve(&tp.p, &o, NULL, NULL, &isa, NULL);
      if (runnable) {
        CHECK(st == XATTN_OK, "resolve %s: %s", bf16_only[k], xattn_last_error());
        CHECK(isa && !strcmp(isa, want), "isa %s on %s resolves to %s, expected %s", bf16_only[k],
              xattn_dtype_name((xattn_dtype)dt), isa ? isa : "(null)", want);
      } else {
        const char *e = xattn_last_error();
        CHECK(st == XATTN_ERR_UNSUPPORTED && e && strstr(e, "options.isa") && strstr(e, bf16_only[k]) &&
                  !strchr(e, '\n'),
              "isa %s on a CPU that cannot run it: status %d, error '%s' (want one line naming options.isa and it)",
              bf16_only[k], (int)st, e ? e : "(null)");
      }
      n_runs++;
      tp_free(&tp);
    }
  }
  /* no ISA asked for: the best this CPU runs, handed on as for an explicit one
     (once per dtype, whichever ISAs are built) */
  const char *best = xattn_best_isa();
  for (int dt = 0; dt < 3; ++dt) {
    tproblem tp;
    build(&tp, &s, with(M_CAUSAL, (xattn_dtype)dt, XATTN_MODE_CAUSAL, 0, -1, -1), 311 + dt);
    const char *dflt = NULL, *dwant = xattn_running_isa(best, (xattn_dtype)dt);
    CHECK(xattn_resolve(&tp.p, NULL, NULL, NULL, &dflt, NULL) == XATTN_OK, "default resolve: %s", xattn_last_error());
    CHECK(dflt && dwant && !strcmp(dflt, dwant), "default resolution on %s: %s, expected %s (best %s)",
          xattn_dtype_name((xattn_dtype)dt), dflt ? dflt : "(null)", dwant ? dwant : "(null)", best);
    n_runs++;
    tp_free(&tp);
  }
}

/* ---- config_extend_buckets ---------------------------------------------------
 * The extend buckets of config header format 2 (docs/formats.md §4) split
 * format 1's "<= 64" at E = 1 and E = 4; a format-1 header's bucket must hold
 * exactly the calls it held before, and the default header's E = 1 row must
 * make dispatch run the few-rows decode layout. E 2-4 on a long prefix
 * (speculative drafts) is still bound by the gathered K/V rows: a few-rows
 * layout there too (lanes for bf16 on AMX tiles and, from 16 rows per KV
 * group, on avx512bf16; decode elsewhere; the header's comment has the
 * measurements); from E 5 the flash layouts, except bf16 on avx512bf16 and
 * f32 on avx512 (Zen 4): lanes from 16 rows per KV group, decode below; those
 * f32 rows also turn software prefetch off (prefetch -1, Ice Lake). */
static int format1_bucket(int64_t e) { return e <= 64 ? 0 : e <= 512 ? 1 : e <= 2048 ? 2 : 3; }

static void config_extend_buckets(void) {
  const int64_t e[] = {1, 2, 4, 5, 63, 64, 65, 512, 513, 2048, 2049, 1 << 20};
  const int want[] = {0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5};
  for (size_t i = 0; i < sizeof e / sizeof *e; ++i) {
    const int b = xattn_extend_bucket(e[i]);
    CHECK(b == want[i], "xattn_extend_bucket(%lld) = %d, want %d", (long long)e[i], b, want[i]);
    CHECK(xattn_extend_bucket_in_format(XATTN_CONFIG_FORMAT_CURRENT, b) == b, "bucket %d in the current format", b);
    CHECK(xattn_extend_bucket_in_format(1, b) == format1_bucket(e[i]), "E %lld: format-1 bucket %d, want %d",
          (long long)e[i], xattn_extend_bucket_in_format(1, b), format1_bucket(e[i]));
    n_runs++;
  }
  CHECK(xattn_extend_bucket_in_format(3, 0) == -1 && xattn_extend_bucket_in_format(0, 0) == -1,
        "unknown header formats must map to -1");
  CHECK(xattn_extend_bucket_in_format(1, XATTN_EXTEND_BUCKETS) == -1 && xattn_extend_bucket_in_format(2, -1) == -1,
        "buckets out of range must map to -1");
  const char *hdr = xattn_config_header_path();
  const char *base = strrchr(hdr, '/');
  if (strcmp(base ? base + 1 : hdr, "xattn_config_default.h") != 0) {
    printf("config_extend_buckets: built with %s, not the default header: dispatch part not checked\n", hdr);
    return;
  }
  CHECK(xattn_config_format() == XATTN_CONFIG_FORMAT_CURRENT, "the default header is format %d, want %d",
        xattn_config_format(), XATTN_CONFIG_FORMAT_CURRENT);
  /* one decode step per request on cached prefixes; then a few drafts each */
  tp_shape step = {"decode_step", 3, {300, 41, 2000}, {1, 1, 1}, {0}, 8, 2, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0};
  tp_shape drafts = {"drafts", 2, {300, 2000}, {1, 8}, {0}, 8, 2, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0};
  tp_shape spec = {"spec_drafts", 2, {1500, 3000}, {2, 4}, {0}, 8, 2, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0};
  /* E 8 on one KV head per query head: 8 rows per group, under lanes_rows */
  tp_shape mha8 = {"mha_e8", 2, {300, 2000}, {1, 8}, {0}, 4, 4, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int dt = 0; dt < 3; ++dt) {
    tproblem a, b, c, d;
    build(&a, &step, with(M_CAUSAL, (xattn_dtype)dt, XATTN_MODE_CAUSAL, 0, -1, -1), 77 + dt);
    build(&b, &drafts, with(M_CAUSAL, (xattn_dtype)dt, XATTN_MODE_CAUSAL, 0, -1, -1), 88 + dt);
    build(&c, &spec, with(M_CAUSAL, (xattn_dtype)dt, XATTN_MODE_CAUSAL, 0, -1, -1), 99 + dt);
    build(&d, &mha8, with(M_CAUSAL, (xattn_dtype)dt, XATTN_MODE_CAUSAL, 0, -1, -1), 111 + dt);
    const char *la = NULL, *lb = NULL, *lc = NULL, *ld = NULL, *isa_b = NULL, *isa_c = NULL;
    CHECK(xattn_resolve(&a.p, NULL, NULL, &la, NULL, NULL) == XATTN_OK, "resolve: %s", xattn_last_error());
    CHECK(xattn_resolve(&b.p, NULL, NULL, &lb, &isa_b, NULL) == XATTN_OK, "resolve: %s", xattn_last_error());
    CHECK(xattn_resolve(&c.p, NULL, NULL, &lc, &isa_c, NULL) == XATTN_OK, "resolve: %s", xattn_last_error());
    CHECK(xattn_resolve(&d.p, NULL, NULL, &ld, NULL, NULL) == XATTN_OK, "resolve: %s", xattn_last_error());
    CHECK(la && !strcmp(la, "decode"), "%s, E = 1: the default header's row resolves layout %s, want decode",
          xattn_dtype_name((xattn_dtype)dt), la ? la : "(null)");
    /* E 8: lanes (32 rows per group) where the Zen 4 rows apply, else a flash layout */
    const int zen_rows = isa_b && ((dt == XATTN_BF16 && !strcmp(isa_b, "avx512bf16")) ||
                                   (dt == XATTN_F32 && !strcmp(isa_b, "avx512")));
    CHECK(lb && (zen_rows ? !strcmp(lb, "lanes") : strcmp(lb, "decode") != 0 && strcmp(lb, "lanes") != 0),
          "%s on %s, E = 8: layout %s, want %s", xattn_dtype_name((xattn_dtype)dt), isa_b ? isa_b : "(null)",
          lb ? lb : "(null)", zen_rows ? "lanes" : "a flash layout");
    CHECK(ld && (zen_rows ? !strcmp(ld, "decode") : strcmp(ld, "decode") != 0 && strcmp(ld, "lanes") != 0),
          "%s on %s, E = 8 with 8 rows per group: layout %s, want %s", xattn_dtype_name((xattn_dtype)dt),
          isa_b ? isa_b : "(null)", ld ? ld : "(null)", zen_rows ? "decode" : "a flash layout");
    /* the row's prefetch column reaches the plan: f32 on avx512 at E 5-64 on a
       long prefix runs without software prefetch (-1), every other row here
       says auto (0); an option the caller sets wins over the row */
    {
      xattn_options o;
      xattn_options_init(&o);
      const int want_pf = dt == XATTN_F32 && isa_b && !strcmp(isa_b, "avx512") ? -1 : 0;
      const tproblem *probs[2] = {&a, &b};
      const int wants[2] = {0, want_pf};
      for (int k = 0; k < 2; ++k)
        for (int set = 0; set < 2; ++set) {
          o.prefetch = set ? 16 : 0;
          xattn_plan *pl = NULL;
          int pf = 99;
          CHECK(xattn_plan_create(&probs[k]->p, &o, &pl) == XATTN_OK, "plan: %s", xattn_last_error());
          xattn_plan_run_settings(pl, NULL, &pf);
          xattn_plan_destroy(pl);
          CHECK(pf == (set ? 16 : wants[k]), "%s on %s, E = %d, options.prefetch %d: the plan's prefetch %d, want %d",
                xattn_dtype_name((xattn_dtype)dt), isa_b ? isa_b : "(null)", k ? 8 : 1, o.prefetch, pf,
                set ? 16 : wants[k]);
        }
    }
    /* bf16: lanes on amx; on avx512bf16 from 16 rows per group (E 4 x 4 heads here) */
    const char *want_c = dt == XATTN_BF16 && isa_c && (!strcmp(isa_c, "amx") || !strcmp(isa_c, "avx512bf16")) ? "lanes" : "decode";
    CHECK(lc && !strcmp(lc, want_c), "%s on %s, E 2-4 on a 3000-token prefix: layout %s, want %s",
          xattn_dtype_name((xattn_dtype)dt), isa_c ? isa_c : "(null)", lc ? lc : "(null)", want_c);
    n_runs += 4;
    tp_free(&a);
    tp_free(&b);
    tp_free(&c);
    tp_free(&d);
  }
}

/* ---- config_lanes_rows ---------------------------------------------------------
 * Large query groups: the default header's few-rows rows carry lanes_rows
 * (docs/formats.md §4), the rows per KV group (longest E_b x H_Q / H_KV) from
 * which a call runs the lanes tile instead of decode: bf16 on AMX from 64 rows
 * (E 2-4: always lanes), bf16 on avx512bf16 from 16, AVX2 from 16 (E 2-4: 32),
 * the rest (f32 on AVX-512 here) from 32. An fp8 cache follows lanes_rows_fp8:
 * 64 on AMX, 32 everywhere else. The reference shape (4 rows) stays on decode
 * everywhere; a layout the caller names is never changed. */
static void config_lanes_rows(void) {
  const char *hdr = xattn_config_header_path();
  const char *base = strrchr(hdr, '/');
  if (strcmp(base ? base + 1 : hdr, "xattn_config_default.h") != 0) {
    printf("config_lanes_rows: built with %s, not the default header: not checked\n", hdr);
    return;
  }
  /* name, B, prefix, extend, encoder, hq, hkv, d, dv, ...: rows per group = E x hq / hkv */
  tp_shape ref = {"ref_e1", 2, {300, 2000}, {1, 1}, {0}, 8, 2, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0};     /* 4 */
  tp_shape g8 = {"group8_e1", 2, {300, 2000}, {1, 1}, {0}, 16, 2, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0};  /* 8 */
  tp_shape g16 = {"group16_e1", 2, {300, 2000}, {1, 1}, {0}, 16, 1, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0}; /* 16 */
  tp_shape mqa = {"mqa_e1", 2, {300, 2000}, {1, 1}, {0}, 32, 1, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0};    /* 32 */
  tp_shape mqa64 = {"mqa64_e1", 2, {300, 2000}, {1, 1}, {0}, 64, 1, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0}; /* 64 */
  tp_shape d16 = {"drafts16", 2, {1500, 3000}, {2, 1}, {0}, 16, 2, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0}; /* 16 */
  tp_shape d32 = {"drafts32", 2, {1500, 3000}, {4, 2}, {0}, 16, 2, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0}; /* 32 */
  /* the header's thresholds per (isa, dtype) this test knows, for E = 1 and E 2-4,
     native and fp8 caches; 0: the row names lanes itself */
  struct { const char *isa; xattn_dtype dt; int e1, drafts, e1_fp8, drafts_fp8; } cases[] = {
      {"amx", XATTN_BF16, 64, 0, 64, 0},           {"avx512bf16", XATTN_BF16, 16, 16, 32, 32},
      {"avx512", XATTN_F32, 32, 32, 32, 32},     {"avx512", XATTN_F16, 32, 32, 32, 32},
      {"avx2", XATTN_F32, 16, 32, 32, 32},       {"avx2", XATTN_BF16, 16, 32, 32, 32}};
  const struct { const tp_shape *s; int rows, drafts; } shapes[] = {
      {&ref, 4, 0}, {&g8, 8, 0}, {&g16, 16, 0}, {&mqa, 32, 0}, {&mqa64, 64, 0}, {&d16, 16, 1}, {&d32, 32, 1}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
    if (!xattn_isa_runnable(cases[c].isa)) continue;
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; ++k) {
      tproblem tp;
      if (tp_build(&tp, shapes[k].s, with(M_CAUSAL, cases[c].dt, XATTN_MODE_CAUSAL, 0, -1, -1), 300 + k)) exit(1);
      xattn_options o;
      xattn_options_init(&o);
      o.isa = cases[c].isa;
      const char *layout = NULL, *isa = NULL;
      CHECK(xattn_resolve(&tp.p, &o, NULL, &layout, &isa, NULL) == XATTN_OK, "resolve: %s", xattn_last_error());
      const int threshold = shapes[k].drafts ? cases[c].drafts : cases[c].e1;
      const char *want = shapes[k].rows >= threshold ? "lanes" : "decode";
      CHECK(layout && !strcmp(layout, want), "%s %s, %s (%d rows per KV group): layout %s, want %s",
            isa ? isa : "(null)", xattn_dtype_name(cases[c].dt), shapes[k].s->name, shapes[k].rows,
            layout ? layout : "(null)", want);
      /* a layout the caller names stays */
      o.layout = "decode";
      CHECK(xattn_resolve(&tp.p, &o, NULL, &layout, NULL, NULL) == XATTN_OK && layout && !strcmp(layout, "decode"),
            "%s, options.layout decode: resolved %s", shapes[k].s->name, layout ? layout : "(null)");
      tp_free(&tp);
      /* an fp8 cache: the row's lanes_rows_fp8 */
      tp_mask m8 = with(M_CAUSAL, cases[c].dt, XATTN_MODE_CAUSAL, 0, -1, -1);
      m8.kv8 = XATTN_E4M3FN;
      if (tp_build(&tp, shapes[k].s, m8, 400 + k)) exit(1);
      o.layout = NULL;
      CHECK(xattn_resolve(&tp.p, &o, NULL, &layout, NULL, NULL) == XATTN_OK, "resolve: %s", xattn_last_error());
      const int threshold8 = shapes[k].drafts ? cases[c].drafts_fp8 : cases[c].e1_fp8;
      const char *want8 = shapes[k].rows >= threshold8 ? "lanes" : "decode";
      CHECK(layout && !strcmp(layout, want8), "%s %s, %s with an e4m3fn cache: layout %s, want %s",
            isa ? isa : "(null)", xattn_dtype_name(cases[c].dt), shapes[k].s->name, layout ? layout : "(null)", want8);
      n_runs += 3;
      tp_free(&tp);
    }
  }
}

/* ---- decode_split_merge_exact --------------------------------------------------
 * The few-rows layouts (decode, lanes) cut a request's keys into ranges run by different threads
 * and merges their partial softmax states by log-sum-exp. The merge is exact
 * algebra: every split count (more parts than keys included: empty ranges;
 * a window that leaves parts fully masked) must give the unsplit answer to
 * fp32 rounding, far tighter than the reference tolerance. */
static void decode_split_merge_exact(void) {
  /* 3 requests on 2 threads: a thread merges whole requests; 2 requests of
     8 and 72 rows on 8 threads: fewer requests than threads, so each is
     merged in row chunks (2 or 4 of them) by several threads */
  const tp_shape shapes[] = {{"decode_split", 3, {3000, 700, 5}, {1, 3, 2}, {0}, 8, 2, 64, 48, 0, 0, 0, 1, 0, 0, 1, 0},
                             {"decode_split_chunks", 2, {2000, 900}, {1, 9}, {0}, 8, 2, 64, 48, 0, 0, 0, 1, 0, 0, 1, 0}};
  const int threads[] = {2, 8};
  const int splits[] = {2, 3, 7, 64, 5000};
  const int windows[][2] = {{-1, -1}, {40, -1}};
  static const char *const few_rows[] = {"decode", "lanes"}; /* both few-rows layouts */
  const char *variant = tp_compiled_variant("64x64");
  for (int si = 0; si < 2; ++si)
  for (int lay = 0; lay < 2; ++lay)
  for (int wi = 0; wi < 2; ++wi)
    for (int isa = 0; isa < xattn_isa_count(); ++isa) {
      const char *name = xattn_isa_name(isa);
      if (!xattn_isa_runnable(name)) continue;
      tproblem tp;
      const int nt = threads[si];
      build(&tp, &shapes[si], with(M_CAUSAL, XATTN_F32, XATTN_MODE_CAUSAL, 0, windows[wi][0], windows[wi][1]), 4242 + wi);
      const int64_t n = tp.p.total_tokens * tp.p.heads_q * tp.p.head_dim_v;
      xattn_status st;
      tp_exec e = {name, variant, few_rows[lay], nt, XATTN_SCHED_AUTO, 1, 0, 0};
      tp_result r = tp_run_check(&tp, &e, &st);
      CHECK(st == XATTN_OK && tp_ok(&r), "%s unsplit: status %d, %lld bad", name, (int)st, (long long)r.bad);
      double *whole = output_dense(&tp);
      for (size_t k = 0; k < sizeof splits / sizeof *splits; ++k) {
        tp_exec es = {name, variant, few_rows[lay], nt, XATTN_SCHED_AUTO, splits[k], 0, 0};
        r = tp_run_check(&tp, &es, &st);
        CHECK(st == XATTN_OK && tp_ok(&r), "%s %d splits: status %d, %lld bad", name, splits[k], (int)st, (long long)r.bad);
        /* values are averages of V entries in [-1, 1): a few fp32 ulps of 1 */
        double *split = output_dense(&tp), worst = 0;
        for (int64_t i = 0; i < n; ++i) {
          const double diff = fabs(split[i] - whole[i]);
          if (!(diff <= worst)) worst = diff;
        }
        free(split);
        CHECK(worst <= 8 * FLT_EPSILON, "%s %s %s window %d, %d splits vs unsplit: max |diff| %.3g > 8 fp32 ulps of 1",
              shapes[si].name, few_rows[lay], name, windows[wi][0], splits[k], worst);
        n_runs++;
      }
      /* absurd split counts and prefetch distances are clamped, not overflowed */
      tp_exec ex = {name, variant, few_rows[lay], nt, XATTN_SCHED_AUTO, INT_MAX, INT_MAX, 0};
      r = tp_run_check(&tp, &ex, &st);
      CHECK(st == XATTN_OK && tp_ok(&r), "%s INT_MAX splits / prefetch: status %d, %lld bad", name, (int)st,
            (long long)r.bad);
      free(whole);
      tp_free(&tp);
    }
}

/* ---- lanes_prefetch_exact, decode_prefetch_exact ---------------------------
 * The lanes layout looks a span's rows up once per key for every head and
 * takes the rows it looked up for the span `prefetch` tokens on as that
 * span's own when it gets there (the distance rounded up to whole spans of
 * 64). The decode layout keeps the rows it walked to prefetch a tile (a ring
 * of 8 tiles) as that tile's own when the distance is whole tiles of 16, up
 * to 7 tiles. Prefetching never changes the answer: every distance must give
 * bit for bit the output of no prefetch, on every ISA (bf16 on amx runs the
 * lanes span on tiles) and pass the reference; decode and lanes into L2 and
 * into L1 (prefetch_level 2, 1). Long prefixes make many whole spans and tiles. */
static void prefetch_exact(const char *layout, const int *distances, int nd) {
  tp_shape s = {"prefetch_exact", 2, {700, 300}, {8, 3}, {0}, 8, 2, 64, 64, 0, 0, 0, 1, 0, 0, 1, 0};
  const xattn_dtype dtypes[] = {XATTN_F32, XATTN_BF16};
  const char *variant = tp_compiled_variant("64x64");
  for (int dt = 0; dt < 2; ++dt)
    for (int isa = 0; isa < xattn_isa_count(); ++isa) {
      const char *name = xattn_isa_name(isa);
      if (!xattn_isa_runnable(name)) continue;
      tproblem tp;
      build(&tp, &s, with(M_CAUSAL, dtypes[dt], XATTN_MODE_CAUSAL, 0, -1, -1), 777 + dt);
      const int64_t n = tp.p.total_tokens * tp.p.heads_q * tp.p.head_dim_v;
      xattn_status st;
      tp_exec e = {name, variant, layout, 2, XATTN_SCHED_AUTO, 1, -1, 0};
      tp_result r = tp_run_check(&tp, &e, &st);
      CHECK(st == XATTN_OK && tp_ok(&r), "%s %s dtype %d no prefetch: status %d, %lld bad", layout, name, dt, (int)st,
            (long long)r.bad);
      double *none = output_dense(&tp);
      /* the level only on the few-rows layouts: the flash layouts' next-tile
         prefetch has none, so a second level there could not fail */
      const int levels = !strcmp(layout, "decode") || !strcmp(layout, "lanes") ? 2 : 1;
      for (int k = 0; k < levels * nd; ++k) {
        const int dist = distances[k / levels], level = 2 - k % levels; /* into L2, then into L1 */
        tp_exec ep = {name, variant, layout, 2, XATTN_SCHED_AUTO, 1, dist, level};
        r = tp_run_check(&tp, &ep, &st);
        CHECK(st == XATTN_OK && tp_ok(&r), "%s %s dtype %d prefetch %d level %d: status %d, %lld bad", layout, name, dt,
              dist, level, (int)st, (long long)r.bad);
        double *got = output_dense(&tp);
        int64_t differ = 0;
        for (int64_t i = 0; i < n; ++i) differ += got[i] != none[i];
        free(got);
        CHECK(differ == 0, "%s %s dtype %d prefetch %d level %d: %lld outputs differ from no prefetch", layout, name, dt,
              dist, level, (long long)differ);
        n_runs++;
      }
      free(none);
      tp_free(&tp);
    }
}

static void lanes_prefetch_exact(void) {
  const int distances[] = {1, 64, 65, 200, 0}; /* one span (reuses each lookup), two, four, auto */
  prefetch_exact("lanes", distances, (int)(sizeof distances / sizeof *distances));
}

static void decode_prefetch_exact(void) {
  /* one tile (reused), 2 and 7 tiles (reused), 8 (the running tile's slot: not
     kept), off the tile grid, 13 tiles (overwrites a slot still ahead), auto */
  const int distances[] = {16, 32, 112, 128, 17, 208, 0};
  prefetch_exact("decode", distances, (int)(sizeof distances / sizeof *distances));
}

/* ---- flash_prefetch_exact ---------------------------------------------------
 * The flash layouts ask for the next gathered tile's K/V rows while a tile
 * computes (on by default for 16-bit and fp8 caches, off with prefetch -1):
 * the same bit-for-bit rule as above, for kvsplit and gqa. */
static void flash_prefetch_exact(void) {
  const int distances[] = {0, 16}; /* auto, and a distance (the flash layouts take one tile whatever it is) */
  prefetch_exact("kvsplit", distances, (int)(sizeof distances / sizeof *distances));
  prefetch_exact("gqa", distances, (int)(sizeof distances / sizeof *distances));
}

/* ---- lanes_heads_staged --------------------------------------------------------
 * On AMX the lanes layout packs every KV head's rows of a span into one
 * scratch (head g at its own offset, read a few tokens at a time with the
 * heads inside) before any head runs. A KV group's answer must not depend on
 * the other groups: each group g of a problem with several KV heads must give
 * bit for bit the output of the same group run alone (a problem of one KV
 * head whose tensors start at group g's heads), where nothing else is
 * staged. Awkward sizes: D not a multiple of 32 (tile rows padded), DV not a
 * multiple of 64 (a partial round of P V tiles), an odd head count, several
 * 16-row blocks per group and a request short of one span. Every runnable
 * ISA (the others run the f32 lanes span; the property holds there too). */
static void lanes_heads_staged(void) {
  const tp_shape shapes[] = {
      {"lanes_heads_odd", 2, {700, 130}, {5, 2}, {0}, 12, 3, 72, 40, 0, 0, 0, 1, 0, 0, 1, 0},
      {"lanes_heads_ref", 1, {400}, {3}, {0}, 32, 8, 128, 128, 0, 0, 0, 0, 0, 0, 0, 0},
  };
  const char *variant = tp_compiled_variant("64x64");
  for (size_t si = 0; si < sizeof shapes / sizeof *shapes; ++si)
    for (int isa = 0; isa < xattn_isa_count(); ++isa) {
      const char *name = xattn_isa_name(isa);
      if (!xattn_isa_runnable(name)) continue;
      tproblem tp;
      build(&tp, &shapes[si], with(M_CAUSAL, XATTN_BF16, XATTN_MODE_CAUSAL, 0, -1, -1), 991 + si);
      /* one thread, unsplit: the same key ranges whatever the head count */
      tp_exec e = {name, variant, "lanes", 1, XATTN_SCHED_AUTO, 1, 0, 0};
      xattn_status st;
      tp_result r = tp_run_check(&tp, &e, &st);
      CHECK(st == XATTN_OK && tp_ok(&r), "%s %s all heads: status %d, %lld bad", shapes[si].name, name, (int)st,
            (long long)r.bad);
      double *all = output_dense(&tp);
      const xattn_problem *p = &tp.p;
      const int hkv = p->heads_kv, hpk = p->heads_q / hkv;
      const int64_t es = (int64_t)xattn_dtype_size(p->dtype);
      xattn_options o;
      tp_exec_options(&e, &o);
      for (int g = 0; g < hkv; ++g) {
        xattn_problem one = *p; /* group g alone: its query heads, KV head g, its output heads */
        one.heads_q = hpk;
        one.heads_kv = 1;
        one.q.data = (const char *)p->q.data + (int64_t)g * hpk * p->q.head_stride * es;
        one.o.data = (const char *)p->o.data + (int64_t)g * hpk * p->o.head_stride * es;
        one.k_ext.data = (const char *)p->k_ext.data + (int64_t)g * p->k_ext.head_stride * es;
        one.v_ext.data = (const char *)p->v_ext.data + (int64_t)g * p->v_ext.head_stride * es;
        one.k_cache.data = (const char *)p->k_cache.data + (int64_t)g * p->k_cache.head_stride * es;
        one.v_cache.data = (const char *)p->v_cache.data + (int64_t)g * p->v_cache.head_stride * es;
        if (p->sinks) one.sinks = p->sinks + g * hpk;
        tp_reset_output(&tp);
        st = xattn_extend_attention(&one, &o);
        CHECK(st == XATTN_OK, "%s %s group %d alone: %s", shapes[si].name, name, g, xattn_last_error());
        int64_t differ = 0;
        for (int64_t t = 0; t < p->total_tokens; ++t)
          if (tp.row_written[t])
            for (int h = g * hpk; h < (g + 1) * hpk; ++h)
              for (int d = 0; d < p->head_dim_v; ++d)
                differ += tp_out(&tp, t, h, d) != all[(t * p->heads_q + h) * p->head_dim_v + d];
        CHECK(differ == 0, "%s %s group %d: %lld outputs differ from the group run alone", shapes[si].name, name, g,
              (long long)differ);
        n_runs++;
      }
      free(all);
      tp_free(&tp);
    }
}

/* ---- kv_packed_once ------------------------------------------------------------
 * The AMX kernels pack K and V once per (request, KV head) for every query
 * block and head group of a call (kvpack.c), where a request's items would
 * pack each key many times: here request 0 (800 queries) does, request 1
 * (5 queries, one item per head group) packs per item. Both kinds in one
 * batch, tiles that start below a window's first key (rounded down to the
 * packed 32-key blocks), kvsplit parts, and several waves of packing
 * (XATTN_KVPACK_WAVE_BYTES, down to a bound below one pair, which packs
 * nothing) must all match the reference. Other ISAs pack per item. */
static void kv_packed_once(void) {
  tp_shape s = {"kv_packed", 2, {0, 40}, {800, 5}, {0}, 4, 4, 64, 48, 0, 0, 0, 1, 0, 0, 0, 0};
  const int windows[][2] = {{-1, -1}, {300, -1}};
  const char *layouts[] = {"gqa", "flat", "kvsplit"};
  const char *bounds[] = {NULL, "1", "190000", "370000", "540000"}; /* a pair: ~180 KB */
  /* 32-query blocks, or the nearest this build compiled */
  const char *variant = tp_compiled_variant("32x64");
  /* one problem (and its fp64 reference) per window, run by every ISA, layout
     and bound: the reference is most of this test's time under the sanitizers */
  tproblem tps[2];
  for (int wi = 0; wi < 2; ++wi)
    build(&tps[wi], &s, with(M_CAUSAL, XATTN_BF16, XATTN_MODE_CAUSAL, 0, windows[wi][0], windows[wi][1]), 777 + wi);
  for (int isa = 0; isa < xattn_isa_count(); ++isa) {
    const char *name = xattn_isa_name(isa);
    if (!xattn_isa_runnable(name)) continue;
    const int packs = !strcmp(name, "amx");
    int most_waves = 0;
    for (int wi = 0; wi < 2; ++wi)
      for (int li = 0; li < 3; ++li)
        for (int bi = 0; bi < (packs ? 5 : 1); ++bi) {
          if (bounds[bi]) setenv("XATTN_KVPACK_WAVE_BYTES", bounds[bi], 1);
          else unsetenv("XATTN_KVPACK_WAVE_BYTES");
          tproblem *tp = &tps[wi];
          tp_exec e = {name, variant, layouts[li], 2, XATTN_SCHED_AUTO, li == 2 ? 3 : 0, 0, 0};
          xattn_options o;
          tp_exec_options(&e, &o);
          xattn_plan *pl = NULL;
          CHECK(xattn_plan_create(&tp->p, &o, &pl) == XATTN_OK, "%s plan: %s", name, xattn_last_error());
          int waves = 0;
          const int64_t pairs = xattn_plan_kv_packed_pairs(pl, &waves);
          xattn_plan_destroy(pl);
          /* request 0's 4 KV heads, or none when one pair passes the bound */
          const int64_t want = packs && !(bounds[bi] && !strcmp(bounds[bi], "1")) ? 4 : 0;
          CHECK(pairs == want, "%s %s window %d bound %s: %lld pairs packed once, expected %lld", name, layouts[li],
                windows[wi][0], bounds[bi] ? bounds[bi] : "default", (long long)pairs, (long long)want);
          CHECK((pairs > 0) == (waves > 0) && waves <= pairs, "%s: %d waves for %lld pairs", name, waves, (long long)pairs);
          if (waves > most_waves) most_waves = waves;
          xattn_status st;
          tp_result r = tp_run_check(tp, &e, &st);
          CHECK(st == XATTN_OK && tp_ok(&r), "%s %s window %d bound %s: status %d, %lld bad", name, layouts[li],
                windows[wi][0], bounds[bi] ? bounds[bi] : "default", (int)st, (long long)r.bad);
          n_runs++;
        }
    unsetenv("XATTN_KVPACK_WAVE_BYTES");
    if (packs) CHECK(most_waves >= 4, "amx: at most %d waves, the small bounds should give one per pair", most_waves);
  }
  for (int wi = 0; wi < 2; ++wi) tp_free(&tps[wi]);
}

/* ---- kv_packed_local ------------------------------------------------------------
 * Requests whose items would pack each key only a few times (2 to 8) are
 * packed per (request, KV head) by the thread that then runs all of that
 * pair's items, in its own buffer (kvpack.c, "local"). Bidirectional, one
 * batch: request 0 (600 queries) packs once for the call (a wave), request 1
 * (100 queries, 4 or 7 query blocks) locally, request 2 (16 queries, one
 * block) per item, and request 3 (40 queries on a 5000-key prefix) per item
 * too because one pair's packed keys pass the local bound (1 MiB). Then the
 * same without request 0: local pairs and no wave. Each run, under gqa, flat
 * and kvsplit with the dynamic and the static schedule on 2 threads, must
 * match the reference; other ISAs pack nothing. */
static void kv_packed_local(void) {
  tp_shape all = {"kv_local", 4, {0, 0, 0, 5000}, {600, 100, 16, 40}, {0}, 2, 2, 64, 48, 0, 0, 0, 1, 0, 0, 0, 0};
  tp_shape no_wave = {"kv_local_only", 3, {0, 0, 5000}, {100, 16, 40}, {0}, 2, 2, 64, 48, 0, 0, 0, 1, 0, 0, 0, 0};
  const tp_shape *shapes[] = {&all, &no_wave};
  const int want_pairs[] = {4, 2}, want_waves[] = {1, 0};
  const char *layouts[] = {"gqa", "flat", "kvsplit"};
  const xattn_schedule scheds[] = {XATTN_SCHED_DYNAMIC, XATTN_SCHED_STATIC};
  const char *variant = tp_compiled_variant("32x64");
  tproblem tps[2]; /* one problem and reference per shape, run by every ISA (as kv_packed_once) */
  for (int si = 0; si < 2; ++si)
    build(&tps[si], shapes[si], with(M_CAUSAL, XATTN_BF16, XATTN_MODE_BIDIRECTIONAL, 0, -1, -1), 881 + si);
  for (int isa = 0; isa < xattn_isa_count(); ++isa) {
    const char *name = xattn_isa_name(isa);
    if (!xattn_isa_runnable(name)) continue;
    const int packs = !strcmp(name, "amx");
    for (int si = 0; si < 2; ++si) {
      tproblem *tp = &tps[si];
      for (int li = 0; li < 3; ++li)
        for (int ci = 0; ci < (packs ? 2 : 1); ++ci) {
          tp_exec e = {name, variant, layouts[li], 2, scheds[ci], li == 2 ? 3 : 0, 0, 0};
          xattn_options o;
          tp_exec_options(&e, &o);
          xattn_plan *pl = NULL;
          CHECK(xattn_plan_create(&tp->p, &o, &pl) == XATTN_OK, "%s plan: %s", name, xattn_last_error());
          int waves = -1;
          const int64_t pairs = xattn_plan_kv_packed_pairs(pl, &waves);
          xattn_plan_destroy(pl);
          CHECK(pairs == (packs ? want_pairs[si] : 0) && waves == (packs ? want_waves[si] : 0),
                "%s %s %s: %lld pairs packed in %d waves, expected %d in %d", name, shapes[si]->name, layouts[li],
                (long long)pairs, waves, packs ? want_pairs[si] : 0, packs ? want_waves[si] : 0);
          xattn_status st;
          tp_result r = tp_run_check(tp, &e, &st);
          CHECK(st == XATTN_OK && tp_ok(&r), "%s %s %s schedule %d: status %d, %lld bad", name, shapes[si]->name,
                layouts[li], (int)scheds[ci], (int)st, (long long)r.bad);
          n_runs++;
        }
    }
  }
  for (int si = 0; si < 2; ++si) tp_free(&tps[si]);
}

/* ---- cpu_class_match ---------------------------------------------------------
 * Multi-CPU config headers: a CPU uses its own class's rows, else the nearest
 * class of its ISA (microarchitecture before caches), else none (the hand
 * default rows); the test-only XATTN_CPU_CLASS override is parsed strictly. */
static void cpu_class_match(void) {
  xattn_cpu_class cls[4] = {
      {"", "amx", "GenuineIntel", 6, 143, 2048, 56},   /* Sapphire Rapids, 56 cores */
      {"", "amx", "GenuineIntel", 6, 207, 2048, 64},   /* Emerald Rapids */
      {"", "amx", "GenuineIntel", 6, 143, 2048, 32},   /* Sapphire Rapids, 32 cores */
      {"", "avx512", "AuthenticAMD", 25, 17, 1024, 8}, /* Zen 4 */
  };
  for (int i = 0; i < 4; i++) xattn_cpu_class_set_name(&cls[i]);
  CHECK(!strcmp(cls[0].name, "intel-6-143-l2_2048k-l3_56c-amx") && !strcmp(cls[3].name, "amd-25-17-l2_1024k-l3_8c-avx512"),
        "class names %s, %s", cls[0].name, cls[3].name);
  char why[512];
  xattn_cpu_class self = cls[2];
  CHECK(xattn_cpu_class_nearest(&self, cls, 4, why, sizeof why) == 2 && !strncmp(why, "exact", 5), "exact: %s", why);
  /* same model, 40 cores per L3: the 32-core SPR class, not the EMR one with equal caches */
  self.cores_per_l3 = 40;
  xattn_cpu_class_set_name(&self);
  CHECK(xattn_cpu_class_nearest(&self, cls, 4, why, sizeof why) == 2 && !strncmp(why, "nearest", 7) &&
            strstr(why, "40 vs 32 cores/L3"), "nearest by cores per L3: %s", why);
  self.cores_per_l3 = 50;
  CHECK(xattn_cpu_class_nearest(&self, cls, 4, why, sizeof why) == 0, "nearest (56 cores is closer): %s", why);
  /* an unknown model of the ISA: the closest caches among the amx classes */
  xattn_cpu_class gnr = {"", "amx", "GenuineIntel", 6, 173, 2048, 64};
  xattn_cpu_class_set_name(&gnr);
  CHECK(xattn_cpu_class_nearest(&gnr, cls, 4, why, sizeof why) == 1 && strstr(why, "model 173 vs 207"),
        "unknown model: %s", why);
  /* no class of the ISA: -1, the hand default rows */
  xattn_cpu_class old = {"", "avx2", "GenuineIntel", 6, 85, 1024, 28};
  xattn_cpu_class_set_name(&old);
  CHECK(xattn_cpu_class_nearest(&old, cls, 4, why, sizeof why) == -1 && strstr(why, "hand default"), "none: %s", why);
  CHECK(xattn_cpu_class_nearest(&old, cls, 0, NULL, 0) == -1, "empty table");
  /* the override */
  setenv("XATTN_CPU_CLASS", "GenuineIntel:6:143:1024:2", 1);
  xattn_cpu_class got;
  const char *best = "scalar"; /* without an isa in the override: the best this CPU runs */
  for (int i = xattn_isa_count() - 1; i >= 0; i--)
    if (xattn_isa_runnable(xattn_isa_name(i))) best = xattn_isa_name(i);
  CHECK(xattn_cpu_class_get(&got) == XATTN_OK && got.model == 143 && got.l2_kib == 1024 && got.cores_per_l3 == 2 &&
            !strcmp(got.isa, best), "override: %s (best isa %s)", got.name, best);
  setenv("XATTN_CPU_CLASS", "GenuineIntel:6:143:1024:2:avx2", 1);
  CHECK(xattn_cpu_class_get(&got) == XATTN_OK && !strcmp(got.isa, "avx2") && !strcmp(got.name, "intel-6-143-l2_1024k-l3_2c-avx2"),
        "override with isa: %s", got.name);
  const char *bad[] = {"GenuineIntel:6:143", "GenuineIntel:6:143:1024:2:", "GenuineIntel:6:x:1024:2",
                       "GenuineIntel:6:143:-1:2", "GenuineIntel:6:143:1024:2:avx2:extra"};
  for (int i = 0; i < 5; i++) {
    setenv("XATTN_CPU_CLASS", bad[i], 1);
    CHECK(xattn_cpu_class_get(&got) != XATTN_OK && strstr(xattn_last_error(), "XATTN_CPU_CLASS"),
          "malformed override '%s' accepted", bad[i]);
  }
  unsetenv("XATTN_CPU_CLASS");
  CHECK(xattn_cpu_class_get(&got) == XATTN_OK && got.name[0], "detection: %s", xattn_last_error());
  n_runs++;
}

static const struct {
  const char *name;
  void (*fn)(void);
} tests[] = {
#define T(n) {#n, n}
    T(bidirectional_with_prefix), T(causal_top_left_vs_bottom_right), T(tree_mask),
    T(tree_mask_with_window), T(two_documents_differ_bidirectional),
    T(causal_vs_bidirectional_differ_where_masked), T(empty_rows_write_zeros),
    T(softcap_applied_in_prefill), T(sinks), T(partial_masked_tile_no_nan), T(lazy_max_outgrown), T(lazy_max_outgrown_mixed), T(nonfinite_inputs),
    T(edge_tiles_do_not_write_past_extend), T(strides_noncontiguous), T(gqa_mqa), T(d_neq_dv), T(concurrent_calls),
    T(resolve_reports_running_isa), T(paged_cache_bitwise_equals_slot_table),
    T(fp8_codes_decode_exactly), T(fp8_codes_through_kernels), T(fp8_codes_through_full_tiles), T(decode_full_tile_dims), T(decode_tile_rows), T(fp8_codes_through_lanes_tile),
    T(cpu_class_match),
    T(decode_split_merge_exact), T(lanes_prefetch_exact), T(decode_prefetch_exact), T(flash_prefetch_exact), T(lanes_heads_staged), T(kv_packed_once), T(kv_packed_local), T(config_extend_buckets), T(config_lanes_rows),
#undef T
};

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--list")) { /* ctest's list (tests/CMakeLists.txt) */
    for (size_t i = 0; i < sizeof tests / sizeof *tests; ++i) printf("%s\n", tests[i].name);
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: test_named NAME | --list\n");
    return 2;
  }
  /* the differential grid covers the cross product; the named checks run the
   * smoke list (every ISA, variant and layout at least once) unless asked for
   * more with XATTN_TEST_LEVEL=reduced|full */
  const char *lv = getenv("XATTN_TEST_LEVEL");
  tp_level level = lv && !strcmp(lv, "full") ? TP_LEVEL_FULL : lv && !strcmp(lv, "reduced") ? TP_LEVEL_REDUCED : TP_LEVEL_SMOKE;
  g_nexec = tp_exec_list(level, &g_execs);
  g_nsmoke = tp_exec_list(TP_LEVEL_SMOKE, &g_smoke);
  g_nlayouts = tp_exec_list(TP_LEVEL_LAYOUTS, &g_layouts);
  for (size_t i = 0; i < sizeof tests / sizeof *tests; ++i)
    if (!strcmp(argv[1], tests[i].name)) {
      tests[i].fn();
      printf("%s: %ld problems, %ld runs over %d run configurations, %ld checks, %ld failures\n",
             argv[1], n_problems, n_runs, g_nexec, n_checks, n_failures);
      free(g_execs), free(g_smoke), free(g_layouts);
      return n_failures || n_checks == 0 ? 1 : 0;
    }
  fprintf(stderr, "test_named: unknown test '%s'\n", argv[1]);
  return 2;
}
