/* One class: verify -> search (exhaustive | random | successive halving) ->
 * interleaved comparison of the best with the defaults -> decision.
 *
 * Why successive halving for the smart strategy: the kernel's speed over
 * (tile, layout, schedule, threads) is lumpy (cache cliffs, tail effects of
 * triangles, GQA reuse) so a smooth cost model would need calibration per
 * machine; halving assumes nothing about the surface, only that one noisy
 * repetition already separates the clearly bad from the plausible. It spends
 * 1 repetition on every candidate, eta x more on the best 1/eta, ..., and the
 * full count only on the last few, so repetitions go where the best configs
 * are, and a budget cut still leaves the best of what was measured. */
#include "tune_search.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *strategy_names[] = {"exhaustive", "random", "halving"};
const char *tune_strategy_name(tune_strategy s) { return strategy_names[s]; }
int tune_strategy_parse(const char *name, tune_strategy *s) {
  for (int i = 0; i < 3; i++)
    if (!strcmp(name, strategy_names[i])) {
      *s = (tune_strategy)i;
      return 0;
    }
  if (!strcmp(name, "smart")) {
    *s = TUNE_HALVING;
    return 0;
  }
  return -1;
}

void tune_settings_init(tune_settings *s) {
  memset(s, 0, sizeof *s);
  s->strategy = TUNE_HALVING;
  s->reps = 9;
  s->eta = 3;
  s->final_reps = 15;
  s->finalists = 3;
  s->threshold = 0.03;
  s->seed = 42;
  s->progress = 1;
}

int tune_should_adopt(tune_ratio r, double threshold) {
  /* an interval like [1.245, 551.692] says the measurements disagree with each
     other by orders of magnitude: no evidence of any particular speedup */
  return r.ratio >= 1.0 + threshold && r.lo > 1.0 && r.hi <= TUNE_MAX_CI_SPREAD * r.lo;
}

enum { ST_OK = 0, ST_REJECTED = 1, ST_UNSUPPORTED = 2, ST_BUDGET = 3, ST_FAILED = 4 };

typedef struct run_ctx {
  const tune_class *cls;
  const tune_settings *set;
  tune_budget *b;
  tune_store *st;
  const tune_eval *ev;
  tune_result *out;
  double class_start, class_deadline; /* 0: none */
  long class_evals_limit;             /* absolute value of b->evals; 0: none */
  double t_est;                       /* seconds per repetition, running mean */
  int t_n;
  long planned, done;                 /* repetitions planned / done in this class */
  double last_progress;
  char stage[96];
  int failed; /* measurements that failed (the library refused the call) */
} run_ctx;

static int out_of_budget(const run_ctx *rc) {
  double now = xc_now();
  if (rc->b->deadline > 0 && now >= rc->b->deadline) return 1;
  if (rc->b->max_evals > 0 && rc->b->evals >= rc->b->max_evals) return 1;
  if (rc->class_deadline > 0 && now >= rc->class_deadline) return 1;
  if (rc->class_evals_limit > 0 && rc->b->evals >= rc->class_evals_limit) return 1;
  return 0;
}

static void fmt_dur(char *buf, size_t n, double s) {
  if (s < 0) s = 0;
  if (s < 60) snprintf(buf, n, "%.0fs", s);
  else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)s / 60, (int)s % 60);
  else snprintf(buf, n, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

static void progress(run_ctx *rc, int force) {
  if (!rc->set->progress) return;
  double now = xc_now();
  if (!force && now - rc->last_progress < 2.0) return;
  rc->last_progress = now;
  double left_here = (double)(rc->planned > rc->done ? rc->planned - rc->done : 0) * rc->t_est;
  int after = rc->b->classes_total - rc->b->classes_done - 1;
  double per_class = rc->b->classes_done > 0
                         ? (rc->class_start - rc->b->start) / rc->b->classes_done
                         : (now - rc->class_start) + left_here;
  double eta = left_here + (after > 0 ? after * per_class : 0);
  if (rc->b->deadline > 0 && now + eta > rc->b->deadline) eta = rc->b->deadline - now;
  char el[32], et[32];
  fmt_dur(el, sizeof el, now - rc->b->start);
  fmt_dur(et, sizeof et, eta);
  fprintf(stderr, "[tune] class %d/%d %s: %s | evals %ld | elapsed %s | ~%s left\n",
          rc->b->classes_done + 1, rc->b->classes_total, rc->cls->key, rc->stage, rc->b->evals,
          el, et);
}

static void note_rejected(run_ctx *rc, const tune_cand *c, const char *why) {
  tune_result *o = rc->out;
  if (o->n_rejected < TUNE_MAX_REJECTED) {
    snprintf(o->rejected_key[o->n_rejected], TUNE_KEY_MAX, "%s", c->key);
    snprintf(o->rejected_why[o->n_rejected], 200, "%.199s", why);
  }
  o->n_rejected++;
}

/* Verification before any timing; verdicts are cached like timings. */
static int verify(run_ctx *rc, const tune_cand *c) {
  int ok;
  const char *why;
  if (tune_store_verdict(rc->st, rc->cls->key, c->key, &ok, &why)) {
    if (ok == 1) return ST_OK;
    if (!strncmp(why, "unsupported:", 12)) return ST_UNSUPPORTED;
    note_rejected(rc, c, why);
    fprintf(stderr, "[tune] REJECTED (cached) %s %s: %s\n", rc->cls->key, c->key, why);
    return ST_REJECTED;
  }
  char buf[256] = "";
  int v = rc->ev->verify(rc->ev->ctx, rc->cls, c, buf, sizeof buf);
  char rec[300];
  if (v == 1) {
    tune_store_add_verdict(rc->st, rc->cls->key, c->key, 1, buf);
    return ST_OK;
  }
  if (v < 0) {
    snprintf(rec, sizeof rec, "unsupported: %s", buf);
    tune_store_add_verdict(rc->st, rc->cls->key, c->key, 0, rec);
    rc->out->n_unsupported++;
    return ST_UNSUPPORTED;
  }
  snprintf(rec, sizeof rec, "wrong answer: %s", buf);
  tune_store_add_verdict(rc->st, rc->cls->key, c->key, 0, rec);
  note_rejected(rc, c, rec);
  fprintf(stderr, "[tune] REJECTED %s %s: %s\n", rc->cls->key, c->key, rec);
  return ST_REJECTED;
}

/* Makes (cand, phase) have at least r repetitions; cached ones are reused. */
static int ensure_reps(run_ctx *rc, const tune_cand *c, const char *phase, int r, int warm_first,
                       const double **times, int *have) {
  const char *key = c ? c->key : "default";
  int n = tune_store_times(rc->st, rc->cls->key, key, phase, times);
  int first_new = 1;
  while (n < r) {
    if (out_of_budget(rc)) {
      *have = n;
      return ST_BUDGET;
    }
    double t = rc->ev->measure(rc->ev->ctx, rc->cls, c, warm_first && first_new);
    first_new = 0;
    if (!(t >= 0)) {
      rc->failed++;
      *have = n;
      return ST_FAILED;
    }
    rc->b->evals++;
    rc->done++;
    rc->t_est = (rc->t_est * rc->t_n + t) / (rc->t_n + 1);
    rc->t_n++;
    if (!strcmp(phase, "search")) rc->out->new_reps++;
    if (tune_store_add_time(rc->st, rc->cls->key, key, phase, n, t) != 0) {
      fprintf(stderr, "[tune] cannot append to cache %s\n", tune_store_path(rc->st));
      *have = n;
      return ST_FAILED;
    }
    n = tune_store_times(rc->st, rc->cls->key, key, phase, times);
    progress(rc, 0);
  }
  *have = n;
  return ST_OK;
}

/* Per candidate state during the search. */
typedef struct slot {
  int idx;      /* into cands */
  int alive;    /* verified and measured */
  int used;     /* repetitions the search has used */
  double med;   /* median of the first `used` */
} slot;

/* Measures a candidate up to r reps (verify first). Updates the slot. */
static int measure_to(run_ctx *rc, const tune_cand *cands, slot *s, int r) {
  if (s->used == 0) {
    int v = verify(rc, &cands[s->idx]);
    if (v != ST_OK) {
      s->alive = 0;
      return v;
    }
  }
  const double *t;
  int have;
  int st = ensure_reps(rc, &cands[s->idx], "search", r, 0, &t, &have);
  int use = have < r ? have : r;
  if (use > s->used) {
    rc->out->search_reps += use - s->used;
    s->used = use;
    s->med = xc_median(t, use);
  }
  if (st == ST_FAILED) {
    s->alive = 0;
    return st;
  }
  s->alive = s->used > 0 || st == ST_BUDGET;
  return st;
}

static int cmp_slot(const void *a, const void *b) {
  const slot *x = a, *y = b;
  if (x->alive != y->alive) return y->alive - x->alive;
  if (x->used == 0 || y->used == 0) return (y->used > 0) - (x->used > 0);
  if (x->med != y->med) return (x->med > y->med) - (x->med < y->med);
  return (x->idx > y->idx) - (x->idx < y->idx); /* ties: a stable, reproducible order */
}

/* Repetitions halving spends on n candidates. */
static long halving_cost(int n, int eta, int reps) {
  long cost = 0;
  int s = n, r = 1, prev = 0;
  while (s > 0) {
    cost += (long)s * (r - prev);
    if (s <= 1 || r >= reps) break;
    s = (s + eta - 1) / eta;
    prev = r;
    r = r * eta < reps ? r * eta : reps;
  }
  return cost;
}

static void shuffle(slot *s, int n, tune_rng *rng) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(tune_rng_next(rng) % (uint64_t)(i + 1));
    slot t = s[i];
    s[i] = s[j];
    s[j] = t;
  }
}

/* Repetitions the budget lets this class's search use (LONG_MAX-ish: no limit). */
static long affordable_reps(const run_ctx *rc) {
  long a = 1L << 40;
  long reserve = (long)(rc->set->finalists + 3) * rc->set->final_reps;
  if (rc->class_evals_limit > 0) {
    long e = rc->class_evals_limit - rc->b->evals - reserve;
    if (e < a) a = e;
  }
  if (rc->class_deadline > 0 && rc->t_est > 0) {
    /* candidates are slower than the defaults on average: plan with 1.5x */
    long e = (long)((rc->class_deadline - xc_now()) / (1.5 * rc->t_est)) - reserve;
    if (e < a) a = e;
  }
  return a < 1 ? 1 : a;
}

/* Brings slots[0..count) to r repetitions, one repetition of every candidate
 * per pass (round robin), so that a drift of the machine's load spreads over
 * all candidates instead of favouring the ones measured in a quiet moment.
 * Returns ST_BUDGET if the budget ran out, else ST_OK; *ok counts the
 * candidates that reached r. */
static int measure_round(run_ctx *rc, const tune_cand *cands, slot *slots, int count, int r,
                         const char *what, int *ok) {
  *ok = 0;
  for (int rr = 1; rr <= r; rr++) {
    for (int i = 0; i < count; i++) {
      slot *s = &slots[i];
      if (s->used >= rr || !s->alive) continue; /* done, rejected or failed */
      snprintf(rc->stage, sizeof rc->stage, "%s: rep %d/%d, candidate %d/%d", what, rr, r, i + 1, count);
      int st = measure_to(rc, cands, s, rr);
      if (st == ST_BUDGET) return ST_BUDGET;
    }
  }
  for (int i = 0; i < count; i++) *ok += slots[i].alive && slots[i].used >= r;
  return ST_OK;
}

static int search(run_ctx *rc, const tune_cand *cands, int n, slot *slots) {
  const tune_settings *set = rc->set;
  tune_rng rng;
  tune_rng_seed(&rng, set->seed ^ tune_hash64(rc->cls->key, 0));
  for (int i = 0; i < n; i++) slots[i] = (slot){i, 1, 0, 0};
  /* a seeded random order: the enumeration order (variant-major) must not
   * line up with slow drifts of the machine */
  shuffle(slots, n, &rng);
  long afford = affordable_reps(rc);
  int ok;

  if (set->strategy == TUNE_EXHAUSTIVE) {
    rc->out->n_considered = n;
    rc->planned = rc->done + (long)n * set->reps + (long)(set->finalists + 3) * set->final_reps;
    return measure_round(rc, cands, slots, n, set->reps, "exhaustive", &ok) == ST_OK;
  }

  if (set->strategy == TUNE_RANDOM) {
    long k = set->random_count > 0 ? set->random_count : n;
    if (k > n) k = n;
    if (k > afford / set->reps) k = afford / set->reps > 0 ? afford / set->reps : 1;
    rc->out->n_considered = (int)k;
    rc->planned = rc->done + k * set->reps + (long)(set->finalists + 3) * set->final_reps;
    /* the first k that verify: rejected ones are replaced by the next in line */
    int complete = 1, take = (int)k;
    for (;;) {
      if (measure_round(rc, cands, slots, take, set->reps, "random", &ok) != ST_OK) {
        complete = 0;
        break;
      }
      if (ok >= k || take >= n) break;
      take += (int)k - ok;
      if (take > n) take = n;
    }
    return complete;
  }

  /* successive halving, on a random subsample if the budget cannot pay for all */
  int m = n, complete = 1;
  while (m > 1 && halving_cost(m, set->eta, set->reps) > afford) m--;
  if (m < n) {
    complete = 0;
    fprintf(stderr, "[tune] class %s: budget pays for halving over %d of %d candidates\n",
            rc->cls->key, m, n);
  }
  rc->out->n_considered = m;
  rc->planned = rc->done + halving_cost(m, set->eta, set->reps) + (long)(set->finalists + 3) * set->final_reps;
  int alive = m, r = 1, round = 0;
  for (;;) {
    char what[48];
    snprintf(what, sizeof what, "halving round %d (%d cands)", round, alive);
    if (measure_round(rc, cands, slots, alive, r, what, &ok) != ST_OK) return 0;
    /* order: survivors first, by median of their first r repetitions */
    qsort(slots, (size_t)alive, sizeof(slot), cmp_slot);
    alive = ok;
    if (alive <= 1 || r >= set->reps) break;
    alive = (alive + set->eta - 1) / set->eta;
    r = r * set->eta < set->reps ? r * set->eta : set->reps;
    round++;
  }
  return complete;
}

/* The k best of the candidates measured the most (by search median). */
static int pick_top(slot *slots, int n, int k, const slot **top) {
  int max_used = 0, m = 0;
  for (int i = 0; i < n; i++)
    if (slots[i].alive && slots[i].used > max_used) max_used = slots[i].used;
  for (int i = 0; i < n; i++) {
    const slot *s = &slots[i];
    if (!s->alive || s->used == 0 || s->used < max_used) continue;
    int j = m < k ? m++ : k; /* insertion into the sorted top list */
    while (j > 0 && (top[j - 1]->med > s->med ||
                     (top[j - 1]->med == s->med && top[j - 1]->idx > s->idx))) {
      if (j < k) top[j] = top[j - 1];
      j--;
    }
    if (j < k) top[j] = s;
  }
  return m;
}

/* Near-ties at the top of a noisy search are common: the finalists and the
 * defaults run interleaved (each repetition after an untimed run of itself)
 * and the lowest median wins. Returns the winning finalist, or -1 if the
 * defaults won (nothing to adopt). The decision against the defaults then
 * uses fresh repetitions, so this pick does not bias it. If the budget ends
 * first, the search's best goes on. */
static int pick_finalist(run_ctx *rc, const tune_cand *cands, const slot **top, int nt,
                         double *def_med, double *win_med) {
  rc->class_deadline = 0; /* reserved in the plan, like the final comparison */
  rc->class_evals_limit = 0;
  int reps = rc->set->final_reps, n = reps;
  const double *t;
  int have;
  for (int i = 0; i < reps && n == reps; i++)
    for (int f = -1; f < nt; f++) {
      snprintf(rc->stage, sizeof rc->stage, "finalists (%d + defaults), interleaved %d/%d", nt,
               i + 1, reps);
      if (ensure_reps(rc, f < 0 ? NULL : &cands[top[f]->idx], "finalists", i + 1, 1, &t, &have) !=
          ST_OK) {
        n = i;
        break;
      }
    }
  if (n < 3) return 0;
  int best = -1;
  int k = tune_store_times(rc->st, rc->cls->key, "default", "finalists", &t);
  double best_med = xc_median(t, k < n ? k : n);
  *def_med = best_med;
  double top_med = 0; /* the best finalist's, for the report */
  for (int f = 0; f < nt; f++) {
    k = tune_store_times(rc->st, rc->cls->key, cands[top[f]->idx].key, "finalists", &t);
    double m = xc_median(t, k < n ? k : n);
    if (f == 0 || m < top_med) top_med = m;
    if (m < best_med) {
      best = f;
      best_med = m;
    }
  }
  *win_med = top_med;
  return best;
}

/* Default and best alternate, repetition by repetition, so drifts in machine
 * load hit both alike. The comparison was reserved in the class's plan, so
 * only the run's own budget (not the class's share) stops it. While the
 * answer is still open (the CI holds 1 and reaches the threshold) it goes on
 * in steps of final_reps, up to 3 x final_reps: noisy machines get more
 * repetitions, clear cases stop early. Every step is a pure function of the
 * recorded times, so a resumed run takes the same steps. */
static int compare_with_default(run_ctx *rc, const tune_cand *best) {
  tune_result *o = rc->out;
  const double *td = NULL, *tb = NULL;
  int hd = 0, hb = 0;
  int step = rc->set->final_reps, target = step, most = 3 * step;
  uint64_t seed = tune_hash64(rc->cls->key, rc->set->seed);
  rc->class_deadline = 0;
  rc->class_evals_limit = 0;
  rc->planned = rc->done + 2L * step;
  int n = 0;
  for (int i = 0; i < target; i++) {
    snprintf(rc->stage, sizeof rc->stage, "default vs best, interleaved %d/%d", i + 1, target);
    if (ensure_reps(rc, NULL, "final", i + 1, 1, &td, &hd) != ST_OK) break;
    if (ensure_reps(rc, best, "final", i + 1, 1, &tb, &hb) != ST_OK) break;
    n = i + 1;
    if (n == target && target < most) {
      tune_ratio r = tune_ratio_of_medians_paired(td, tb, n, 2000, seed);
      if (r.lo <= 1.0 && r.hi >= 1.0 + rc->set->threshold) {
        target += step;
        rc->planned += 2L * step;
      }
    }
  }
  o->final_n = n;
  if (n < 3) return -1;
  hd = tune_store_times(rc->st, rc->cls->key, "default", "final", &td);
  hb = tune_store_times(rc->st, rc->cls->key, best->key, "final", &tb);
  o->default_median = xc_median(td, n);
  o->tuned_median = xc_median(tb, n);
  o->speedup = tune_ratio_of_medians_paired(td, tb, n, 2000, seed);
  return 0;
}

int tune_class_run(const tune_class *cls, const tune_cand *cands, int n, const tune_settings *set,
                   tune_budget *b, tune_store *st, const tune_eval *ev, tune_result *out) {
  memset(out, 0, sizeof *out);
  out->cls = *cls;
  out->n_candidates = n;
  run_ctx rc = {cls, set, b, st, ev, out, xc_now(), 0, 0, 0, 0, 0, 0, 0, "", 0};
  int left = b->classes_total - b->classes_done;
  if (left < 1) left = 1;
  if (b->deadline > 0) rc.class_deadline = rc.class_start + (b->deadline - rc.class_start) / left;
  if (b->max_evals > 0) rc.class_evals_limit = b->evals + (b->max_evals - b->evals) / left;

  /* cost probe: one repetition of the defaults sizes the plan and the ETA */
  const double *tp;
  int hp;
  snprintf(rc.stage, sizeof rc.stage, "probing the defaults");
  const int probe = ensure_reps(&rc, NULL, "probe", 1, 1, &tp, &hp);
  if (probe == ST_OK && hp > 0) {
    rc.t_est = tp[0];
    rc.t_n = 1;
  } else if (probe == ST_FAILED) { /* not a budget matter: nothing to compare against */
    snprintf(out->note, sizeof out->note,
             "the defaults failed on this class's workloads (the library refused them, see the error above): nothing tuned");
    b->classes_done++;
    return 0;
  }

  slot *slots = calloc((size_t)(n > 0 ? n : 1), sizeof(slot));
  if (!slots) return -1;
  out->complete = search(&rc, cands, n, slots);
  int k = set->finalists > 0 ? set->finalists : 1;
  const slot **top = calloc((size_t)k, sizeof(slot *));
  int nt = top ? pick_top(slots, n, k, top) : 0;
  const slot *best = NULL;
  int defaults_won = 0;
  double def_med = 0, win_med = 0;
  if (nt > 0) {
    out->n_finalists = nt;
    int w = pick_finalist(&rc, cands, top, nt, &def_med, &win_med);
    defaults_won = w < 0;
    best = top[w < 0 ? 0 : w];
  }
  free(top);
  if (!best) {
    snprintf(out->note, sizeof out->note, "%s", n == 0 ? "no candidate survived the constraints"
                                               : out->n_rejected + out->n_unsupported >= n
                                                   ? "every candidate was rejected or unsupported"
                                               : rc.failed > 0 && !out_of_budget(&rc)
                                                   ? "every measurement failed (the library refused the calls, see the errors above)"
                                                   : "budget exhausted before any measurement");
    free(slots);
    b->classes_done++;
    return 0;
  }
  out->found = 1;
  out->best = cands[best->idx];
  out->best_search_median = best->med;
  free(slots);

  progress(&rc, 1);
  if (defaults_won) {
    snprintf(out->note, sizeof out->note,
             "no better config found: the defaults beat the %d finalists (median %.3g ms vs best "
             "finalist %.3g ms)",
             out->n_finalists, 1e3 * def_med, 1e3 * win_med);
  } else if (compare_with_default(&rc, &out->best) != 0) {
    snprintf(out->note, sizeof out->note,
             "budget exhausted before the comparison with the defaults (%d reps): kept the defaults",
             out->final_n);
  } else {
    out->adopt = tune_should_adopt(out->speedup, set->threshold);
    if (out->adopt)
      snprintf(out->note, sizeof out->note, "tuned: %.3fx faster (95%% CI %.3f-%.3f)",
               out->speedup.ratio, out->speedup.lo, out->speedup.hi);
    else
      snprintf(out->note, sizeof out->note,
               "no better config found: best %.3fx (95%% CI %.3f-%.3f), needs >= %.2fx and CI above 1",
               out->speedup.ratio, out->speedup.lo, out->speedup.hi, 1.0 + set->threshold);
  }
  b->classes_done++;
  return 0;
}
