#include "tune_real_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_search.h"
#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"
#include "xattn_bench/problem.h"

/* A small problem of the class, with its fp64 reference output. */
typedef struct small_case {
  xb_workload w;
  int32_t lens[3][8]; /* prefix, extend, encoder of up to 8 requests */
  xb_problem pb;
  double *ref;
  float *out;
  int built;
} small_case;

struct real_eval {
  tune_env *env;
  const tune_class_set *cs;
  uint64_t seed;
  int cur;              /* class whose problems are built, -1 none */
  xb_problem *probs;
  int nprobs;
  small_case *small;
  int nsmall;
  int bound_threads;
  char bound_place[32];
  int bind_warned;
  int flush; /* real_eval_set_flush */
};

static int class_index(const real_eval *r, const tune_class *cls) {
  for (int i = 0; i < r->cs->n; i++)
    if (!strcmp(r->cs->classes[i].key, cls->key)) return i;
  return -1;
}

static void release_class(real_eval *r) {
  for (int i = 0; i < r->nprobs; i++) xb_problem_free(&r->probs[i]);
  free(r->probs);
  for (int i = 0; i < r->nsmall; i++) {
    if (r->small[i].built) xb_problem_free(&r->small[i].pb);
    free(r->small[i].ref);
    free(r->small[i].out);
  }
  free(r->small);
  r->probs = NULL;
  r->small = NULL;
  r->nprobs = r->nsmall = 0;
  r->cur = -1;
}

static int shrink(int32_t v, int32_t keep, int32_t base, int32_t mod) {
  return v <= keep ? v : base + v % mod;
}

/* The class's shape at a size the fp64 reference computes in well under a
 * second: same dtype, D, DV, mode, window, cap, sinks, tree density and GQA
 * ratio; at most 3 requests (the one with the longest extend, the one with
 * the longest prefix, the first); lengths cut to odd sizes (edge tiles) but
 * zero prefixes stay zero and non-zero ones non-zero; 2 KV heads at most.
 * The mask and prefix paths of the class are exercised, the cost is not. */
static void shrink_workload(const xb_workload *w, small_case *s) {
  s->w = *w;
  int pick[3], n = 0;
  int be = 0, bp = 0;
  for (int b = 0; b < w->batch; b++) {
    if (w->extend_lens[b] > w->extend_lens[be]) be = b;
    if (w->prefix_lens[b] > w->prefix_lens[bp]) bp = b;
  }
  int cand[3] = {be, bp, 0};
  for (int i = 0; i < 3; i++) {
    int dup = 0;
    for (int j = 0; j < n; j++) dup |= pick[j] == cand[i];
    if (!dup) pick[n++] = cand[i];
  }
  for (int i = 0; i < n; i++) {
    int b = pick[i];
    s->lens[0][i] = shrink(w->prefix_lens[b], 200, 131, 67);
    s->lens[1][i] = shrink(w->extend_lens[b], 150, 97, 53);
    if (w->extend_lens[b] > 0 && s->lens[1][i] == 0) s->lens[1][i] = 1;
    if (w->encoder_lens) s->lens[2][i] = shrink(w->encoder_lens[b], 200, 131, 67);
  }
  s->w.batch = n;
  s->w.prefix_lens = s->lens[0];
  s->w.extend_lens = s->lens[1];
  s->w.encoder_lens = w->encoder_lens ? s->lens[2] : NULL;
  int g = w->heads_kv > 0 ? w->heads_q / w->heads_kv : 1;
  s->w.heads_kv = w->heads_kv < 2 ? w->heads_kv : 2;
  s->w.heads_q = s->w.heads_kv * g;
  snprintf(s->w.name, sizeof s->w.name, "%.100s.small", w->name);
}

static int prepare(real_eval *r, const tune_class *cls) {
  int ci = class_index(r, cls);
  if (ci < 0) return -1;
  if (ci == r->cur) return 0;
  release_class(r);
  int n = r->cs->n_members[ci];
  const tune_member *m = r->cs->members[ci];
  r->probs = calloc((size_t)n, sizeof(xb_problem));
  r->small = calloc((size_t)n, sizeof(small_case));
  if (!r->probs || !r->small) return -1;
  char err[512];
  int threads = r->env->machine.cores > 0 ? r->env->machine.cores : 1;
  double t0 = xc_now();
  for (int i = 0; i < n; i++) {
    if (xb_problem_build(&r->probs[i], m[i].w, m[i].dtype, r->seed, threads, err, sizeof err) != 0) {
      fprintf(stderr, "[tune] class %s: workload %s: %s\n", cls->key, m[i].w->name, err);
      release_class(r);
      return -1;
    }
    r->nprobs++;
  }
  for (int i = 0; i < n; i++) {
    small_case *s = &r->small[i];
    shrink_workload(m[i].w, s);
    if (xb_problem_build(&s->pb, &s->w, m[i].dtype, r->seed + 1, threads, err, sizeof err) != 0) {
      fprintf(stderr, "[tune] class %s: small %s: %s\n", cls->key, s->w.name, err);
      release_class(r);
      return -1;
    }
    s->built = 1;
    r->nsmall++;
    size_t outn = (size_t)s->pb.p.total_tokens * (size_t)s->pb.p.heads_q * (size_t)s->pb.p.head_dim_v;
    s->ref = malloc(sizeof(double) * (outn ? outn : 1));
    s->out = malloc(sizeof(float) * (outn ? outn : 1));
    if (!s->ref || !s->out || xattn_reference(&s->pb.p, s->ref) != XATTN_OK) {
      fprintf(stderr, "[tune] class %s: reference failed: %s\n", cls->key, xattn_last_error());
      release_class(r);
      return -1;
    }
  }
  r->cur = ci;
  fprintf(stderr, "[tune] class %s: built %d workload(s) + small reference cases in %.1fs\n",
          cls->key, n, xc_now() - t0);
  return 0;
}

void real_eval_options(const tune_cand *c, void *out) {
  xattn_options *o = out;
  xattn_options_init(o);
  if (!c) return;
  o->variant = c->variant;
  o->layout = c->layout;
  if (xattn_schedule_parse(c->schedule, &o->schedule)) o->schedule = XATTN_SCHED_DYNAMIC;
  o->threads = c->threads;
  o->kv_splits = c->kv_splits;
  o->prefetch = c->prefetch;
  o->prefetch_level = c->prefetch_level;
}

/* Binds the team the call will use; a no-op when nothing changed. */
static void bind(real_eval *r, const char *placement, int threads) {
  if (threads == r->bound_threads && !strcmp(placement, r->bound_place)) return;
  xb_placement p;
  char err[512];
  if (xb_placement_parse(placement, &p, err, sizeof err) != 0 ||
      xb_place_threads(r->env->topo, &p, threads, err, sizeof err) != 0) {
    if (!r->bind_warned) fprintf(stderr, "[tune] warning: cannot bind threads (%s); running unbound\n", err);
    r->bind_warned = 1;
  }
  r->bound_threads = threads;
  snprintf(r->bound_place, sizeof r->bound_place, "%s", placement);
}

static int resolved_threads(const xattn_problem *p, const xattn_options *o) {
  int t = 0;
  if (xattn_resolve(p, o, NULL, NULL, NULL, &t) != XATTN_OK || t < 1) t = 1;
  return t;
}

static int verify(void *ctx, const tune_class *cls, const tune_cand *c, char *why, size_t n) {
  real_eval *r = ctx;
  if (prepare(r, cls) != 0) {
    snprintf(why, n, "cannot build the class's problems");
    return -1;
  }
  xattn_options o;
  real_eval_options(c, &o);
  double worst = 0;
  const char *worst_wl = "";
  for (int i = 0; i < r->nsmall; i++) {
    small_case *s = &r->small[i];
    bind(r, c ? c->placement : "compact", resolved_threads(&s->pb.p, &o));
    xb_problem_clear_output(&s->pb);
    xattn_status st = xattn_extend_attention(&s->pb.p, &o);
    if (st == XATTN_ERR_UNSUPPORTED) {
      snprintf(why, n, "%s", xattn_last_error());
      return -1;
    }
    if (st != XATTN_OK) {
      snprintf(why, n, "status %s on %s: %s", xattn_status_string(st), s->w.name, xattn_last_error());
      return 0;
    }
    xb_problem_output_f32(&s->pb, s->out);
    double e = xb_error_ratio(&s->pb, s->out, s->ref);
    if (!(e <= worst)) { /* NaN counts as worst */
      worst = e;
      worst_wl = s->w.name;
    }
  }
  snprintf(why, n, "max |o-ref|/(atol+rtol|ref|) = %.3g on %s (%d small case(s))", worst, worst_wl,
           r->nsmall);
  return worst <= 1.0 ? 1 : 0;
}

static double measure(void *ctx, const tune_class *cls, const tune_cand *c, int warm) {
  real_eval *r = ctx;
  if (prepare(r, cls) != 0) return -1;
  xattn_options o;
  real_eval_options(c, &o);
  const int threads = resolved_threads(&r->probs[0].p, &o);
  bind(r, c ? c->placement : "compact", threads);
  double total = 0;
  for (int pass = warm ? 0 : 1; pass < 2; pass++) {
    total = 0;
    for (int i = 0; i < r->nprobs; i++) {
      if (r->flush) xb_problem_flush(&r->probs[i], threads);
      double t0 = xc_now();
      xattn_status st = xattn_extend_attention(&r->probs[i].p, &o);
      double t1 = xc_now();
      if (st != XATTN_OK) {
        fprintf(stderr, "[tune] %s %s: %s\n", cls->key, c ? c->key : "default", xattn_last_error());
        return -1;
      }
      total += t1 - t0;
    }
  }
  return total;
}

real_eval *real_eval_open(tune_env *env, const tune_class_set *cs, uint64_t seed) {
  real_eval *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->env = env;
  r->cs = cs;
  r->seed = seed;
  r->cur = -1;
  return r;
}

void real_eval_close(real_eval *r) {
  if (!r) return;
  release_class(r);
  free(r);
}

void real_eval_set_flush(real_eval *r, int on) { r->flush = on != 0; }

tune_eval real_eval_iface(real_eval *r) {
  tune_eval e = {r, verify, measure};
  return e;
}
