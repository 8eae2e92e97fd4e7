#include "tune_compare.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_header.h"
#include "tune_real_eval.h"
#include "tune_report.h"
#include "tune_search.h"
#include "tune_stats.h"
#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"
#include "xattn_bench/machine.h"

#define MAX_ROWS 512

static const tune_row *lookup(const tune_row *rows, int n, const tune_class *c) {
  for (int i = 0; i < n; i++)
    if (tune_row_matches(&rows[i], c->isa, c->dtype, c->d, c->dv, c->mode, c->extend_bucket,
                         c->prefix_bucket))
      return &rows[i];
  return NULL;
}

static void row_cand(const tune_row *r, int cores, tune_cand *c) {
  memset(c, 0, sizeof *c);
  snprintf(c->variant, sizeof c->variant, "%s", r->variant);
  tune_parse_variant(c->variant, &c->block_m, &c->block_n);
  snprintf(c->layout, sizeof c->layout, "%s", r->layout);
  snprintf(c->schedule, sizeof c->schedule, "%s", r->schedule);
  c->threads = r->threads > 0 ? r->threads : cores;
  c->kv_splits = r->kv_splits;
  c->prefetch = r->prefetch;
  c->prefetch_level = r->prefetch_level;
  snprintf(c->placement, sizeof c->placement, "compact");
  tune_cand_make_key(c);
}

typedef struct cmp_row {
  char base[TUNE_KEY_MAX], tuned[TUNE_KEY_MAX];
  int identical, ok, n;
  double mb, mt;
  tune_ratio r;
  char note[300];
} cmp_row;

/* The two headers' rows and provenance lines. */
typedef struct cmp_headers {
  tune_row base[MAX_ROWS], tuned[MAX_ROWS];
  int nb, nt;
  char bprov[1024], tprov[2048];
} cmp_headers;

/* Reads the baseline header and the one this binary was built with. */
static int load_headers(cmp_headers *h, const char *baseline, char *err, size_t errn) {
  h->nb = tune_header_parse(baseline, h->base, MAX_ROWS, h->bprov, sizeof h->bprov, err, errn);
  if (h->nb < 0) return -1;
  h->nt = tune_header_parse(xattn_config_header_path(), h->tuned, MAX_ROWS, h->tprov, sizeof h->tprov, err, errn);
  return h->nt < 0 ? -1 : 0;
}

/* ABBA-ordered repetitions of baseline `bc` (explicit options) against the
 * built-in header (NULL candidate); fills R. 0, or 1 when it failed. */
static int measure_class(tune_eval *ev, const tune_class *c, const tune_cand *bc, const tune_compare_opts *o,
                         cmp_row *R) {
  double *tb = calloc((size_t)o->reps, sizeof(double)), *tt = calloc((size_t)o->reps, sizeof(double));
  int n = 0;
  for (int k = 0; tb && tt && k < o->reps; k++) {
    /* neither side always runs first; every timed run follows an untimed run
     * of the same configuration, as in the tuner's comparisons */
    double a, b;
    if (k % 2 == 0) {
      a = ev->measure(ev->ctx, c, bc, 1);
      b = ev->measure(ev->ctx, c, NULL, 1);
    } else {
      b = ev->measure(ev->ctx, c, NULL, 1);
      a = ev->measure(ev->ctx, c, bc, 1);
    }
    if (a < 0 || b < 0) break;
    tb[n] = a;
    tt[n] = b;
    n++;
  }
  R->n = n;
  int bad = 0;
  if (n >= 3) {
    R->ok = 1;
    R->mb = xc_median(tb, n);
    R->mt = xc_median(tt, n);
    R->r = tune_ratio_of_medians_paired(tb, tt, n, 2000, o->seed ^ tune_hash64(c->key, 3));
    const char *verdict = R->r.lo > 1.0 ? "faster beyond the noise"
                          : R->r.hi < 1.0 ? "SLOWER beyond the noise"
                                          : "within the noise";
    snprintf(R->note, sizeof R->note, "%.3fx [%.3f, %.3f]: %s", R->r.ratio, R->r.lo, R->r.hi, verdict);
  } else {
    snprintf(R->note, sizeof R->note, "measurement failed");
    bad = 1;
  }
  free(tb);
  free(tt);
  return bad;
}

/* One class: the two headers' rows, both verified, then measured. 0, or 1
 * when a configuration is missing, wrong or failed. */
static int compare_class(tune_eval *ev, const cmp_headers *h, const tune_class *c, int cores,
                         const tune_compare_opts *o, cmp_row *R) {
  const tune_row *br = lookup(h->base, h->nb, c), *tr = lookup(h->tuned, h->nt, c);
  if (!br || !tr) {
    snprintf(R->note, sizeof R->note, "no matching row in %s", !br ? "the baseline" : "the built-in header");
    return 1;
  }
  tune_cand bc, tc;
  row_cand(br, cores, &bc);
  row_cand(tr, cores, &tc);
  snprintf(R->base, sizeof R->base, "%s", bc.key);
  snprintf(R->tuned, sizeof R->tuned, "%s", tc.key);
  if (!strcmp(bc.key, tc.key)) {
    R->identical = 1;
    R->ok = 1;
    snprintf(R->note, sizeof R->note, "same configuration in both headers (not tuned): 1.000x by construction");
    return 0;
  }
  char why[256];
  const int vb = ev->verify(ev->ctx, c, &bc, why, sizeof why);
  if (vb != 1) {
    snprintf(R->note, sizeof R->note, "baseline %s: %s", vb == 0 ? "WRONG ANSWER" : "cannot run", why);
    return 1;
  }
  const int vt = ev->verify(ev->ctx, c, NULL, why, sizeof why);
  if (vt != 1) {
    snprintf(R->note, sizeof R->note, "tuned %s: %s", vt == 0 ? "WRONG ANSWER" : "cannot run", why);
    return 1;
  }
  return measure_class(ev, c, &bc, o, R);
}

/* Geometric means of the speedups: over the classes with a tuned row, and
 * over all classes that ran (untuned ones count as 1). */
typedef struct cmp_summary {
  double g_tuned, g_all;
  int n_tuned, n_all;
} cmp_summary;

static cmp_summary summarize(const cmp_row *rows, int n) {
  double lsum = 0, lall = 0;
  cmp_summary S = {1.0, 1.0, 0, 0};
  for (int i = 0; i < n; i++) {
    if (!rows[i].ok) continue;
    const double x = rows[i].identical ? 1.0 : rows[i].r.ratio;
    lall += log(x);
    S.n_all++;
    if (!rows[i].identical) {
      lsum += log(x);
      S.n_tuned++;
    }
  }
  if (S.n_tuned) S.g_tuned = exp(lsum / S.n_tuned);
  if (S.n_all) S.g_all = exp(lall / S.n_all);
  return S;
}

static void write_markdown(const char *path, const tune_env *env, const tune_class_set *cs,
                           const tune_compare_opts *o, const cmp_headers *h, const cmp_row *rows,
                           cmp_summary S) {
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "# Tuned vs default header (one run, interleaved, same cores)\n\n");
  fprintf(f, "- machine: %s (%s; %s)\n- commit: %s\n", env->id.machine, env->id.cpu_model, env->id.topology,
          env->commit);
  char rel[4096];
  fprintf(f, "- built with: `%s`\n  - provenance: %s\n", xb_repo_relative(xattn_config_header_path(), rel, sizeof rel),
          h->tprov);
  fprintf(f, "- baseline: `%s`\n  - provenance: %s\n", xb_repo_relative(o->baseline_header, rel, sizeof rel),
          h->bprov);
  fprintf(f, "- suites: %s; %d repetitions each side, ABBA order, 95%% paired bootstrap CI of the "
             "ratio of medians\n",
          cs->inputs, o->reps);
  fprintf(f, "- timing: %s\n", tune_timing_words(o->flush_caches ? "flushed" : "warm"));
  fprintf(f, "- **geomean speedup: %.3fx over the %d tuned classes, %.3fx over all %d classes**\n\n", S.g_tuned,
          S.n_tuned, S.g_all, S.n_all);
  fprintf(f, "| class | default config | tuned config | default ms | tuned ms | speedup [95%% CI] |\n");
  fprintf(f, "|---|---|---|---|---|---|\n");
  for (int i = 0; i < cs->n; i++) {
    const cmp_row *R = &rows[i];
    fprintf(f, "| `%s` | %s | %s | ", cs->classes[i].key, R->base, R->tuned);
    if (R->identical) fprintf(f, "- | - | no better config found: defaults kept |\n");
    else if (R->n >= 3) fprintf(f, "%.3f | %.3f | %s |\n", 1e3 * R->mb, 1e3 * R->mt, R->note);
    else fprintf(f, "- | - | %s |\n", R->note);
  }
  fclose(f);
  fprintf(stderr, "[compare] report: %s\n", path);
}

static void write_json(const char *path, const tune_env *env, const tune_class_set *cs,
                       const tune_compare_opts *o, const cmp_row *rows, cmp_summary S) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "machine", env->id.machine);
  cJSON_AddStringToObject(root, "commit", env->commit);
  char rel[4096];
  cJSON_AddStringToObject(root, "tuned_header", xb_repo_relative(xattn_config_header_path(), rel, sizeof rel));
  cJSON_AddStringToObject(root, "baseline_header", xb_repo_relative(o->baseline_header, rel, sizeof rel));
  cJSON_AddNumberToObject(root, "geomean_tuned_classes", S.g_tuned);
  cJSON_AddNumberToObject(root, "geomean_all_classes", S.g_all);
  cJSON *arr = cJSON_AddArrayToObject(root, "classes");
  for (int i = 0; i < cs->n; i++) {
    const cmp_row *R = &rows[i];
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "class", cs->classes[i].key);
    cJSON_AddStringToObject(e, "default", R->base);
    cJSON_AddStringToObject(e, "tuned", R->tuned);
    cJSON_AddBoolToObject(e, "identical", R->identical);
    cJSON_AddNumberToObject(e, "reps", R->n);
    if (R->n >= 3) {
      cJSON_AddNumberToObject(e, "default_median_s", R->mb);
      cJSON_AddNumberToObject(e, "tuned_median_s", R->mt);
      cJSON_AddNumberToObject(e, "speedup", R->r.ratio);
      cJSON_AddNumberToObject(e, "ci_lo", R->r.lo);
      cJSON_AddNumberToObject(e, "ci_hi", R->r.hi);
    }
    cJSON_AddStringToObject(e, "note", R->note);
    cJSON_AddItemToArray(arr, e);
  }
  char *txt = cJSON_Print(root);
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (f && txt) {
    fputs(txt, f);
    fputc('\n', f);
    fclose(f);
    rename(tmp, path);
  } else if (f) {
    fclose(f);
  }
  free(txt);
  cJSON_Delete(root);
}

int tune_compare(tune_env *env, tune_class_set *cs, const tune_compare_opts *o, char *err,
                 size_t errn) {
  cmp_headers *h = calloc(1, sizeof *h);
  cmp_row *rows = calloc((size_t)(cs->n > 0 ? cs->n : 1), sizeof(cmp_row));
  int bad = -1;
  if (!h || !rows) {
    snprintf(err, errn, "compare: out of memory");
    goto out;
  }
  if (load_headers(h, o->baseline_header, err, errn)) goto out;
  real_eval *re = real_eval_open(env, cs, o->seed);
  if (re) real_eval_set_flush(re, o->flush_caches);
  tune_eval ev = real_eval_iface(re);
  const int cores = env->machine.cores > 0 ? env->machine.cores : 1;
  const double t_start = xc_now();
  bad = 0;
  for (int i = 0; i < cs->n; i++) {
    bad |= compare_class(&ev, h, &cs->classes[i], cores, o, &rows[i]);
    fprintf(stderr, "[compare] %d/%d %s: baseline %s vs tuned %s: %s (%.0fs elapsed)\n", i + 1, cs->n,
            cs->classes[i].key, rows[i].base, rows[i].tuned, rows[i].note, xc_now() - t_start);
  }
  real_eval_close(re);
  const cmp_summary S = summarize(rows, cs->n);
  printf("compare: %d classes, %d with a tuned row: geomean %.3fx over those, %.3fx over all\n", cs->n,
         S.n_tuned, S.g_tuned, S.g_all);
  if (o->report_md) write_markdown(o->report_md, env, cs, o, h, rows, S);
  if (o->report_json) write_json(o->report_json, env, cs, o, rows, S);
out:
  free(rows);
  free(h);
  return bad;
}
