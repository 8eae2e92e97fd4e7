#include "tune_compare.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_header.h"
#include "tune_real_eval.h"
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

int tune_compare(tune_env *env, tune_class_set *cs, const tune_compare_opts *o, char *err,
                 size_t errn) {
  tune_row *brows = calloc(MAX_ROWS, sizeof(tune_row)), *trows = calloc(MAX_ROWS, sizeof(tune_row));
  char bprov[1024], tprov[2048];
  int nb = tune_header_parse(o->baseline_header, brows, MAX_ROWS, bprov, sizeof bprov, err, errn);
  if (nb < 0) return -1;
  int nt = tune_header_parse(xattn_config_header_path(), trows, MAX_ROWS, tprov, sizeof tprov, err, errn);
  if (nt < 0) return -1;
  real_eval *re = real_eval_open(env, cs, o->seed);
  tune_eval ev = real_eval_iface(re);
  cmp_row *rows = calloc((size_t)cs->n, sizeof(cmp_row));
  int bad = 0;
  int cores = env->machine.cores > 0 ? env->machine.cores : 1;
  double t_start = xc_now();
  for (int i = 0; i < cs->n; i++) {
    const tune_class *c = &cs->classes[i];
    cmp_row *R = &rows[i];
    const tune_row *br = lookup(brows, nb, c), *tr = lookup(trows, nt, c);
    if (!br || !tr) {
      snprintf(R->note, sizeof R->note, "no matching row in %s", !br ? "the baseline" : "the built-in header");
      bad = 1;
      continue;
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
      fprintf(stderr, "[compare] %d/%d %s: %s\n", i + 1, cs->n, c->key, R->note);
      continue;
    }
    char why[256];
    int vb = ev.verify(ev.ctx, c, &bc, why, sizeof why);
    if (vb != 1) {
      snprintf(R->note, sizeof R->note, "baseline %s: %s", vb == 0 ? "WRONG ANSWER" : "cannot run", why);
      fprintf(stderr, "[compare] %s: %s\n", c->key, R->note);
      bad = 1;
      continue;
    }
    int vt = ev.verify(ev.ctx, c, NULL, why, sizeof why);
    if (vt != 1) {
      snprintf(R->note, sizeof R->note, "tuned %s: %s", vt == 0 ? "WRONG ANSWER" : "cannot run", why);
      fprintf(stderr, "[compare] %s: %s\n", c->key, R->note);
      bad = 1;
      continue;
    }
    double *tb = calloc((size_t)o->reps, sizeof(double)), *tt = calloc((size_t)o->reps, sizeof(double));
    int n = 0;
    for (int k = 0; k < o->reps; k++) {
      /* ABBA order: neither side always runs first; every timed run follows an
       * untimed run of the same configuration, as in the tuner's comparisons */
      double a, b;
      if (k % 2 == 0) {
        a = ev.measure(ev.ctx, c, &bc, 1);
        b = ev.measure(ev.ctx, c, NULL, 1);
      } else {
        b = ev.measure(ev.ctx, c, NULL, 1);
        a = ev.measure(ev.ctx, c, &bc, 1);
      }
      if (a < 0 || b < 0) break;
      tb[n] = a;
      tt[n] = b;
      n++;
    }
    R->n = n;
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
    fprintf(stderr, "[compare] %d/%d %s: baseline %s vs tuned %s: %s (%.0fs elapsed)\n", i + 1, cs->n,
            c->key, bc.key, tc.key, R->note, xc_now() - t_start);
    free(tb);
    free(tt);
  }
  real_eval_close(re);

  double lsum = 0;
  int nm = 0, nall = 0;
  double lall = 0;
  for (int i = 0; i < cs->n; i++) {
    if (!rows[i].ok) continue;
    double x = rows[i].identical ? 1.0 : rows[i].r.ratio;
    lall += log(x);
    nall++;
    if (!rows[i].identical) {
      lsum += log(x);
      nm++;
    }
  }
  double g_tuned = nm ? exp(lsum / nm) : 1.0, g_all = nall ? exp(lall / nall) : 1.0;
  printf("compare: %d classes, %d with a tuned row: geomean %.3fx over those, %.3fx over all\n", cs->n,
         nm, g_tuned, g_all);

  if (o->report_md) {
    FILE *f = fopen(o->report_md, "w");
    if (f) {
      fprintf(f, "# Tuned vs default header (one run, interleaved, same cores)\n\n");
      fprintf(f, "- machine: %s (%s; %s)\n- commit: %s\n", env->id.machine, env->id.cpu_model,
              env->id.topology, env->commit);
      char rel[4096];
      fprintf(f, "- built with: `%s`\n  - provenance: %s\n",
              xb_repo_relative(xattn_config_header_path(), rel, sizeof rel), tprov);
      fprintf(f, "- baseline: `%s`\n  - provenance: %s\n", xb_repo_relative(o->baseline_header, rel, sizeof rel),
              bprov);
      fprintf(f, "- suites: %s; %d repetitions each side, ABBA order, 95%% paired bootstrap CI of the "
                 "ratio of medians\n",
              cs->inputs, o->reps);
      fprintf(f, "- **geomean speedup: %.3fx over the %d tuned classes, %.3fx over all %d classes**\n\n",
              g_tuned, nm, g_all, nall);
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
      fprintf(stderr, "[compare] report: %s\n", o->report_md);
    }
  }
  if (o->report_json) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "machine", env->id.machine);
    cJSON_AddStringToObject(root, "commit", env->commit);
    char rel[4096];
    cJSON_AddStringToObject(root, "tuned_header", xb_repo_relative(xattn_config_header_path(), rel, sizeof rel));
    cJSON_AddStringToObject(root, "baseline_header", xb_repo_relative(o->baseline_header, rel, sizeof rel));
    cJSON_AddNumberToObject(root, "geomean_tuned_classes", g_tuned);
    cJSON_AddNumberToObject(root, "geomean_all_classes", g_all);
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
    snprintf(tmp, sizeof tmp, "%s.tmp", o->report_json);
    FILE *f = fopen(tmp, "w");
    if (f && txt) {
      fputs(txt, f);
      fputc('\n', f);
      fclose(f);
      rename(tmp, o->report_json);
    } else if (f) {
      fclose(f);
    }
    free(txt);
    cJSON_Delete(root);
  }
  free(rows);
  free(brows);
  free(trows);
  return bad;
}
