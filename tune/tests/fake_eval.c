#include "fake_eval.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune_stats.h"

static double planted_time(const fake_eval *f, const tune_cand *c) {
  if (f->planted_key && !strcmp(c->key, f->planted_key)) return 0.5;
  /* a smooth, lumpy-enough surface: best tiles near 64x128, gqa > flat, all threads */
  double t = 1.0 + 0.08 * fabs(log2(c->block_m / 64.0)) + 0.05 * fabs(log2(c->block_n / 128.0));
  if (!strcmp(c->layout, "flat")) t *= 1.1;
  if (!strcmp(c->layout, "kvsplit")) t *= 1.2;
  if (!strcmp(c->schedule, "static")) t *= 1.03;
  t *= 2.0 / (1.0 + c->threads);
  return t;
}

double fake_true_time(const fake_eval *f, const tune_cand *c) {
  if (!c) return f->default_time;
  if (f->wrong_key && !strcmp(c->key, f->wrong_key)) return 0.01; /* fastest, and wrong */
  if (f->n_table > 0) {
    for (int i = 0; i < f->n_table; i++)
      if (!strcmp(f->table_keys[i], c->key)) return f->table_times[i];
    return 1e9;
  }
  return planted_time(f, c);
}

static int verify(void *ctx, const tune_class *cls, const tune_cand *c, char *why, size_t n) {
  fake_eval *f = ctx;
  (void)cls;
  f->verifies++;
  if (f->wrong_key && !strcmp(c->key, f->wrong_key)) {
    snprintf(why, n, "max error 37.5x tolerance at o[3][1][7] (fake)");
    return 0;
  }
  if (f->unsupported_key && !strcmp(c->key, f->unsupported_key)) {
    snprintf(why, n, "not built (fake)");
    return -1;
  }
  snprintf(why, n, "max error 0.1x tolerance (fake)");
  return 1;
}

static double measure(void *ctx, const tune_class *cls, const tune_cand *c, int warm) {
  fake_eval *f = ctx;
  (void)warm;
  f->measures++;
  if (f->kill_after > 0 && f->measures >= f->kill_after) raise(SIGKILL);
  if (f->fail_measures) return -1;
  tune_rng r;
  tune_rng_seed(&r, f->seed ^ tune_hash64(c ? c->key : "default", (unsigned long long)f->measures) ^
                        tune_hash64(cls->key, 7));
  double t = fake_true_time(f, c);
  return t * exp(f->noise * tune_rng_normal(&r));
}

tune_eval fake_eval_iface(fake_eval *f) {
  tune_eval e = {f, verify, measure};
  return e;
}

int fake_cand_from_key(const char *key, tune_cand *c) {
  memset(c, 0, sizeof *c);
  char v[64], l[64], s[64], p[64];
  int t;
  if (sscanf(key, "%63[^/]/%63[^/]/%63[^/]/t%d/%63s", v, l, s, &t, p) != 5) return -1;
  snprintf(c->variant, sizeof c->variant, "%s", v);
  if (tune_parse_variant(v, &c->block_m, &c->block_n) != 0) return -1;
  snprintf(c->layout, sizeof c->layout, "%s", l);
  snprintf(c->schedule, sizeof c->schedule, "%s", s);
  snprintf(c->placement, sizeof c->placement, "%s", p);
  c->threads = t;
  tune_cand_make_key(c);
  return strcmp(c->key, key) == 0 ? 0 : -1;
}

int fake_load_table(fake_eval *f, const char *path) {
  FILE *fp = fopen(path, "r");
  if (!fp) return -1;
  int cap = 1024;
  f->table_keys = calloc((size_t)cap, TUNE_KEY_MAX);
  f->table_times = calloc((size_t)cap, sizeof(double));
  f->n_table = 0;
  char line[512];
  while (fgets(line, sizeof line, fp)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    char key[TUNE_KEY_MAX];
    double t;
    if (sscanf(line, "%159s %lf", key, &t) != 2) continue;
    if (!strcmp(key, "default")) {
      f->default_time = t;
      continue;
    }
    if (f->n_table == cap) break;
    snprintf(f->table_keys[f->n_table], TUNE_KEY_MAX, "%s", key);
    f->table_times[f->n_table++] = t;
  }
  fclose(fp);
  return f->n_table;
}
