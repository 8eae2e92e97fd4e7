#include "tune_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune_prune.h"

int tune_run_all(tune_run *run) {
  run->budget.classes_total = run->n_classes;
  run->budget.classes_done = 0;
  if (run->budget.start == 0) run->budget.start = xc_now();
  /* the few-rows layouts multiply by their split and prefetch values, the
     flash layouts by at most 2 (prefetch auto / off) */
  int per_layout = (run->axes->n_splits > 0 ? run->axes->n_splits : 1) *
                   (run->axes->n_prefetch > 0 ? run->axes->n_prefetch : 1);
  if (per_layout < 2) per_layout = 2;
  int cap = run->axes->n_variants * run->axes->n_layouts * per_layout * run->axes->n_schedules *
        run->axes->n_threads * run->axes->n_placements;
  if (cap < 1) cap = 1;
  tune_cand *cands = malloc(sizeof(tune_cand) * (size_t)cap);
  if (!cands) return -1;
  run->pruned = 0;
  run->space_total = 0;
  for (int c = 0; c < run->n_classes; c++) {
    int before = tune_prune_total();
    int n = tune_space_enumerate(&run->classes[c], run->axes, run->machine, cands, cap);
    int pruned = tune_prune_total() - before;
    run->pruned += pruned;
    run->space_total += n + pruned;
    if (run->set.progress)
      fprintf(stderr, "[tune] class %d/%d %s: %d candidates (%d pruned by constraints), %s\n",
              c + 1, run->n_classes, run->classes[c].key, n, pruned,
              tune_strategy_name(run->set.strategy));
    tune_class_run(&run->classes[c], cands, n, &run->set, &run->budget, run->store, &run->ev,
                   &run->results[c]);
    if (run->set.progress)
      fprintf(stderr, "[tune] class %d/%d %s: %s\n", c + 1, run->n_classes, run->classes[c].key,
              run->results[c].note);
  }
  free(cands);
  return 0;
}

static int same_key(const tune_row *a, const tune_row *b) {
  return !strcmp(a->isa, b->isa) && !strcmp(a->dtype, b->dtype) && a->d == b->d &&
         a->dv == b->dv && !strcmp(a->mode, b->mode) && a->extend_bucket == b->extend_bucket &&
         a->prefix_bucket == b->prefix_bucket;
}

int tune_make_rows(const tune_result *res, int n, const tune_row *base, int nbase, int cores,
                   tune_row *rows, int cap) {
  int k = 0;
  for (int i = 0; i < n && k < cap; i++) {
    const tune_result *r = &res[i];
    if (!r->adopt) continue;
    tune_row *w = &rows[k];
    memset(w, 0, sizeof *w);
    snprintf(w->isa, sizeof w->isa, "%s", r->cls.isa);
    snprintf(w->dtype, sizeof w->dtype, "%s", r->cls.dtype);
    w->d = r->cls.d;
    w->dv = r->cls.dv;
    snprintf(w->mode, sizeof w->mode, "%s", r->cls.mode);
    w->extend_bucket = r->cls.extend_bucket;
    w->prefix_bucket = r->cls.prefix_bucket;
    /* two suite classes may share a key (different workload sets): first wins */
    int dup = 0;
    for (int j = 0; j < k; j++) dup |= same_key(&rows[j], w);
    if (dup) continue;
    snprintf(w->variant, sizeof w->variant, "%s", r->best.variant);
    snprintf(w->layout, sizeof w->layout, "%s", r->best.layout);
    snprintf(w->schedule, sizeof w->schedule, "%s", r->best.schedule);
    w->threads = r->best.threads == cores ? 0 : r->best.threads;
    w->kv_splits = r->best.kv_splits;
    w->prefetch = r->best.prefetch;
    w->prefetch_level = r->best.prefetch_level;
    /* the group sizes from which decode hands a KV group to the lanes tile are
       not a search axis: the base row the class matched keeps saying it */
    for (int j = 0; j < nbase; j++)
      if (tune_row_matches(&base[j], w->isa, w->dtype, w->d, w->dv, w->mode, w->extend_bucket, w->prefix_bucket)) {
        w->lanes_rows = base[j].lanes_rows;
        w->lanes_rows_fp8 = base[j].lanes_rows_fp8;
        break;
      }
    snprintf(w->comment, sizeof w->comment,
             "%.3fx over the defaults (95%% CI %.3f-%.3f, %d interleaved reps; placement %s)",
             r->speedup.ratio, r->speedup.lo, r->speedup.hi, r->final_n, r->best.placement);
    k++;
  }
  int first_base = k;
  for (int i = 0; i < nbase && k < cap; i++) {
    int dup = 0;
    for (int j = 0; j < first_base; j++) dup |= same_key(&rows[j], &base[i]);
    if (dup) continue;
    rows[k] = base[i];
    if (i == 0) snprintf(rows[k].comment, sizeof rows[k].comment, "%s", "rows of the base header");
    else rows[k].comment[0] = '\0';
    k++;
  }
  return k;
}

double tune_overall_speedup(const tune_result *res, int n, int *adopted) {
  double s = 0;
  int a = 0, m = 0;
  for (int i = 0; i < n; i++) {
    double x = res[i].adopt ? res[i].speedup.ratio : 1.0;
    if (res[i].adopt) a++;
    s += log(x);
    m++;
  }
  if (adopted) *adopted = a;
  return m ? exp(s / m) : 1.0;
}

void tune_print_summary(FILE *f, const tune_result *res, int n, const char *prefix) {
  for (int i = 0; i < n; i++) {
    const tune_result *r = &res[i];
    fprintf(f, "%s%s: ", prefix, r->cls.key);
    if (r->found)
      fprintf(f, "best %s (%d of %d candidates considered, %d rejected): %s\n", r->best.key,
              r->n_considered, r->n_candidates, r->n_rejected, r->note);
    else
      fprintf(f, "%s\n", r->note);
  }
}
