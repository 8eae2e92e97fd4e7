/* ctest suite of xattn-tune (label `tune`): strategies, constraints, noise
 * rule, cache resume after kill -9, foreign caches, wrong answers, and the
 * header round trip through a real compiler. No timing: every measurement
 * comes from the deterministic fake evaluator. Usage: test_tune <case>. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_eval.h"
#include "tune_header.h"
#include "tune_merge.h"
#include "tune_prune.h"
#include "tune_run.h"
#include "tune_store.h"
#include "xattn/xattn_introspect.h"

static int failures = 0;
#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fputc('\n', stderr);                                            \
      failures++;                                                     \
    }                                                                 \
  } while (0)

static char tmpdir[512];
static void make_tmpdir(void) {
  const char *base = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/tune-test-XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    exit(2);
  }
}
static void tmp_path(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", tmpdir, name); }

static tune_identity test_id(void) {
  tune_identity id;
  memset(&id, 0, sizeof id);
  snprintf(id.machine, sizeof id.machine, "test-machine-2c-12345678");
  snprintf(id.cpu_model, sizeof id.cpu_model, "Test CPU");
  snprintf(id.topology, sizeof id.topology, "1 package, 2 cores");
  snprintf(id.compiler, sizeof id.compiler, "GNU 12.2.0");
  snprintf(id.cflags, sizeof id.cflags, "-O3");
  snprintf(id.kernel_digest, sizeof id.kernel_digest, "abcdef0123456789");
  return id;
}

static const char *variants[] = {"16x64", "32x64", "64x64", "64x128", "128x128", "16x256", "32x256"};
static const char *layouts[] = {"flat", "gqa", "kvsplit"};
static const char *schedules[] = {"static", "dynamic"};
static const char *placements[] = {"compact", "scatter"};

static tune_axes test_axes(void) {
  tune_axes a;
  memset(&a, 0, sizeof a);
  a.n_variants = 7;
  for (int i = 0; i < 7; i++) a.variants[i] = variants[i];
  a.n_layouts = 3;
  for (int i = 0; i < 3; i++) a.layouts[i] = layouts[i];
  a.n_schedules = 2;
  for (int i = 0; i < 2; i++) a.schedules[i] = schedules[i];
  a.n_threads = 3;
  a.threads[0] = 1;
  a.threads[1] = 2;
  a.threads[2] = 4;
  a.n_placements = 2;
  for (int i = 0; i < 2; i++) a.placements[i] = placements[i];
  return a;
}

static tune_machine test_machine(void) {
  tune_machine m;
  memset(&m, 0, sizeof m);
  m.cores = 2;
  m.l1d_bytes = 48 << 10;
  m.l2_bytes = 2 << 20;
  m.l3_bytes = 480 << 20;
  return m; /* no placement_differs: every placement but the first is pruned */
}

static tune_class test_class(int prefix_bucket, int extend_bucket, const char *tag) {
  tune_class c;
  memset(&c, 0, sizeof c);
  snprintf(c.isa, sizeof c.isa, "avx512");
  snprintf(c.dtype, sizeof c.dtype, "f32");
  c.d = c.dv = 128;
  snprintf(c.mode, sizeof c.mode, "causal");
  c.extend_bucket = extend_bucket;
  c.prefix_bucket = prefix_bucket;
  c.max_extend = 1024;
  c.max_prefix = prefix_bucket ? 4096 : 0;
  c.max_keys = c.max_extend + c.max_prefix;
  c.heads_q = 32;
  c.heads_kv = 8;
  c.n_workloads = 1;
  snprintf(c.workloads_digest, sizeof c.workloads_digest, "%s", tag);
  tune_class_make_key(&c);
  return c;
}

static tune_settings quiet_settings(tune_strategy s) {
  tune_settings set;
  tune_settings_init(&set);
  set.strategy = s;
  set.progress = 0;
  return set;
}

static tune_result run_one(const tune_class *cls, const tune_cand *cands, int n, tune_settings set,
                           fake_eval *fe, const char *cache_name, int fresh) {
  /* durability is tested by `resume` and `torn`; here fsync would only be slow */
  char path[600];
  tmp_path(path, sizeof path, cache_name);
  tune_identity id = test_id();
  char err[512];
  tune_store *st = tune_store_open(path, &id, fresh, err, sizeof err);
  tune_result r;
  memset(&r, 0, sizeof r);
  if (!st) {
    fprintf(stderr, "cannot open cache: %s\n", err);
    failures++;
    return r;
  }
  tune_store_set_durable(st, 0);
  tune_budget b;
  memset(&b, 0, sizeof b);
  b.start = xc_now();
  b.classes_total = 1;
  tune_eval ev = fake_eval_iface(fe);
  tune_class_run(cls, cands, n, &set, &b, st, &ev, &r);
  tune_store_close(st);
  return r;
}

/* ---- the space and its constraints ------------------------------------- */
/* The candidates of a class of E 5-64 (extend bucket 2) on prefix bucket pb
 * with dtype: how many have prefetch auto (*on), off (*off), and off with the
 * key suffix /pf-1 (*off_key); returns how many there are. */
static int flash_prefetch_counts(int pb, const char *dtype, const tune_axes *a, const tune_machine *m, tune_cand *c,
                                  int *on, int *off, int *off_key) {
  tune_class cls = test_class(pb, 2, "sp4");
  snprintf(cls.dtype, sizeof cls.dtype, "%s", dtype);
  tune_class_make_key(&cls);
  const int n = tune_space_enumerate(&cls, a, m, c, 512);
  *on = *off = *off_key = 0;
  for (int i = 0; i < n; i++) {
    *on += c[i].prefetch == 0;
    *off += c[i].prefetch == -1;
    *off_key += c[i].prefetch == -1 && strstr(c[i].key, "/pf-1") != NULL;
  }
  return n;
}

static int test_space(void) {
  tune_axes a = test_axes();
  tune_machine m = test_machine();
  tune_cand c[512];
  tune_prune_reset();
  tune_class nopfx = test_class(0, 2, "sp0");
  int n0 = tune_space_enumerate(&nopfx, &a, &m, c, 512);
  int kv = 0, over = 0, scatter = 0, t1dyn = 0;
  for (int i = 0; i < n0; i++) {
    kv += !strcmp(c[i].layout, "kvsplit");
    over += c[i].threads > 2;
    scatter += !strcmp(c[i].placement, "scatter");
    t1dyn += c[i].threads == 1 && !strcmp(c[i].schedule, "dynamic");
  }
  CHECK(kv == 0, "kvsplit kept for a class without prefix (%d)", kv);
  CHECK(over == 0, "threads beyond cores kept (%d)", over);
  CHECK(scatter == 0, "placement equivalent to compact kept (%d)", scatter);
  CHECK(t1dyn == 0, "schedule variants kept at 1 thread (%d)", t1dyn);
  CHECK(n0 == 7 * 2 * 3, "expected 42 candidates, got %d", n0);
  int total = 7 * 3 * 2 * 3 * 2;
  CHECK(tune_prune_total() == total - n0, "prune counts %d != %d", tune_prune_total(), total - n0);
  tune_class pfx = test_class(2, 0, "sp1");
  pfx.max_extend = 40; /* block_m >= 80 pruned: 128x128; 64x64 stays (64 < 80) */
  int n1 = tune_space_enumerate(&pfx, &a, &m, c, 512);
  int kv1 = 0, big = 0;
  for (int i = 0; i < n1; i++) {
    kv1 += !strcmp(c[i].layout, "kvsplit");
    big += c[i].block_m >= 80;
  }
  CHECK(kv1 > 0, "kvsplit pruned for a class with prefix");
  CHECK(big == 0, "BLOCK_M far beyond the longest extend kept (%d)", big);
  tune_class mla = test_class(0, 2, "sp2");
  mla.d = 576;
  mla.dv = 512;
  m.l2_bytes = 1 << 20;
  int n2 = tune_space_enumerate(&mla, &a, &m, c, 512);
  for (int i = 0; i < n2; i++)
    CHECK(tune_scratch_bytes(&mla, &c[i]) <= m.l2_bytes ||
              (c[i].block_m == 16 && c[i].block_n == 64),
          "%s exceeds L2", c[i].key);
  CHECK(n2 < n0, "scratch constraint pruned nothing for MLA dims");
  /* the decode layout: one variant, every (split, prefetch) pair; none when a
     request's rows exceed what the kernels run it with */
  tune_axes ad = test_axes();
  ad.layouts[ad.n_layouts++] = "decode";
  const int sv[] = {0, 1, 4}, pv[] = {0, -1, 64};
  ad.n_splits = 3;
  memcpy(ad.splits, sv, sizeof sv);
  ad.n_prefetch = 3;
  memcpy(ad.prefetch, pv, sizeof pv);
  tune_machine md = test_machine();
  tune_class dec = test_class(2, 0, "sp3");
  dec.max_extend = 4; /* 4 x 32 heads = 128 rows */
  static tune_cand cd[4096];
  int nd = tune_space_enumerate(&dec, &ad, &md, cd, 4096), ndec = 0, other_variant = 0, pairs = 0, kv_other = 0;
  for (int i = 0; i < nd; i++) {
    if (strcmp(cd[i].layout, "decode") != 0) {
      kv_other += cd[i].kv_splits != 0 || cd[i].prefetch != 0;
      continue;
    }
    ndec++;
    other_variant += strcmp(cd[i].variant, ad.variants[0]) != 0;
    pairs += cd[i].kv_splits == 4 && cd[i].prefetch == -1 && strstr(cd[i].key, "/s4/pf-1") != NULL;
  }
  CHECK(ndec == 9 * 3, "decode candidates %d, want 9 (split, prefetch) pairs x 3 (threads, schedule)", ndec);
  CHECK(other_variant == 0, "decode kept %d candidates of other variants", other_variant);
  CHECK(pairs == 3, "decode split 4 / prefetch off: %d candidates with the key suffix", pairs);
  CHECK(kv_other == 0, "split / prefetch values on a layout that ignores them (%d)", kv_other);
  /* the prefetch level rides on the prefetch axis: the auto distance into L2 and into L1 */
  ad.n_prefetch = 2;
  ad.prefetch[0] = ad.prefetch[1] = 0;
  ad.prefetch_level[0] = 0;
  ad.prefetch_level[1] = 1;
  nd = tune_space_enumerate(&dec, &ad, &md, cd, 4096);
  int n_l1 = 0, n_l2 = 0, l1_elsewhere = 0;
  for (int i = 0; i < nd; i++) {
    const int keyed = strstr(cd[i].key, "/pfl1") != NULL;
    if (strcmp(cd[i].layout, "decode") != 0) l1_elsewhere += cd[i].prefetch_level != 0 || keyed;
    else if (cd[i].prefetch_level == 1 && keyed) n_l1++;
    else if (cd[i].prefetch_level == 0 && !keyed) n_l2++;
  }
  CHECK(n_l1 == 9 && n_l2 == 9, "decode candidates into L1 / L2: %d / %d, want 9 each (3 splits x 3 threads/schedules)", n_l1, n_l2);
  CHECK(l1_elsewhere == 0, "a prefetch level on a layout without the decode prefetch (%d)", l1_elsewhere);
  /* the flash layouts' prefetch: {auto, off} for a 16-bit class of short
     extends on a long prefix, in pairs with the key suffix; none for f32 or a
     short prefix */
  int on, off, off_key;
  flash_prefetch_counts(2, "bf16", &a, &m, c, &on, &off, &off_key);
  CHECK(on > 0 && on == off && off_key == off, "flash prefetch axis: %d auto, %d off (%d keyed)", on, off, off_key);
  int nf = flash_prefetch_counts(2, "f32", &a, &m, c, &on, &off, &off_key);
  CHECK(on == nf, "flash prefetch axis on an f32 class (%d of %d not auto)", nf - on, nf);
  nf = flash_prefetch_counts(1, "bf16", &a, &m, c, &on, &off, &off_key);
  CHECK(on == nf, "flash prefetch axis on a short prefix (%d of %d not auto)", nf - on, nf);
  dec.max_extend = 128; /* 4096 rows */
  nd = tune_space_enumerate(&dec, &ad, &md, cd, 4096);
  ndec = 0;
  for (int i = 0; i < nd; i++) ndec += !strcmp(cd[i].layout, "decode");
  CHECK(ndec == 0, "decode kept for 4096-row requests (%d)", ndec);
  tune_prune_report(stderr, "  ");
  return 0;
}

static int space_for(const tune_class *cls, tune_cand *c, int cap) {
  tune_axes a = test_axes();
  tune_machine m = test_machine();
  return tune_space_enumerate(cls, &a, &m, c, cap);
}

/* ---- every strategy finds a planted optimum ------------------------------ */
static int test_planted(void) {
  tune_class cls = test_class(1, 2, "pl");
  tune_cand c[512];
  int n = space_for(&cls, c, 512);
  const char *planted = "16x256/flat/static/t2/compact"; /* far from the smooth optimum */
  int found = 0;
  for (int i = 0; i < n; i++) found |= !strcmp(c[i].key, planted);
  CHECK(found, "planted key not in the space");
  for (int s = 0; s < 3; s++) {
    fake_eval fe = {0};
    fe.planted_key = planted;
    fe.default_time = 1.2;
    fe.noise = 0.03;
    fe.seed = 11 + s;
    tune_settings set = quiet_settings((tune_strategy)s);
    set.random_count = n; /* random: a budget that covers the space, in random order */
    char name[64];
    snprintf(name, sizeof name, "planted-%d.jsonl", s);
    tune_result r = run_one(&cls, c, n, set, &fe, name, 1);
    CHECK(r.found && !strcmp(r.best.key, planted), "%s found %s, planted %s",
          tune_strategy_name((tune_strategy)s), r.best.key, planted);
    CHECK(r.adopt, "%s: planted optimum 2.4x faster than the defaults not adopted (%s)",
          tune_strategy_name((tune_strategy)s), r.note);
  }
  /* random with a budget smaller than the space: best of what it sampled */
  fake_eval fe = {0};
  fe.default_time = 1.2;
  fe.seed = 5;
  tune_settings set = quiet_settings(TUNE_RANDOM);
  set.random_count = n / 4;
  tune_result r = run_one(&cls, c, n, set, &fe, "random-budget.jsonl", 1);
  CHECK(r.n_considered == n / 4, "random considered %d, budget %d", r.n_considered, n / 4);
  CHECK(r.search_reps == (long)(n / 4) * set.reps, "random used %ld reps", r.search_reps);
  return 0;
}

/* ---- budgets: an evaluation budget is never exceeded, the search shrinks --- */
static int test_budget(void) {
  tune_class cls = test_class(1, 2, "bu");
  tune_cand c[512];
  int n = space_for(&cls, c, 512);
  for (int s = 0; s < 3; s++) {
    for (long max = 40; max <= 160; max += 60) {
      fake_eval fe = {0};
      fe.planted_key = "16x256/flat/static/t2/compact";
      fe.default_time = 1.2;
      fe.noise = 0.02;
      fe.seed = 1;
      char path[600], err[512];
      snprintf(path, sizeof path, "%s/budget-%d-%ld.jsonl", tmpdir, s, max);
      tune_identity id = test_id();
      tune_store *st = tune_store_open(path, &id, 1, err, sizeof err);
      tune_store_set_durable(st, 0);
      tune_budget b;
      memset(&b, 0, sizeof b);
      b.start = xc_now();
      b.classes_total = 1;
      b.max_evals = max;
      tune_settings set = quiet_settings((tune_strategy)s);
      tune_eval ev = fake_eval_iface(&fe);
      tune_result r;
      tune_class_run(&cls, c, n, &set, &b, st, &ev, &r);
      tune_store_close(st);
      CHECK(fe.measures <= max && b.evals <= max, "%s: %ld measurements with --max-evals %ld",
            tune_strategy_name((tune_strategy)s), fe.measures, max);
      CHECK(r.found, "%s with %ld evals found nothing: %s", tune_strategy_name((tune_strategy)s), max, r.note);
      if (s == TUNE_HALVING)
        CHECK(r.n_considered < n, "halving did not shrink its space for %ld evals", max);
    }
  }
  return 0;
}

/* ---- the recorded real space: halving vs exhaustive ----------------------- */
static int test_recorded(const char *table) {
  fake_eval base = {0};
  int nt = fake_load_table(&base, table);
  CHECK(nt > 10, "recorded space %s has %d candidates", table, nt);
  if (nt <= 10) {
    free(base.table_keys);
    free(base.table_times);
    return 0;
  }
  tune_cand *c = calloc((size_t)nt, sizeof *c);
  int n = 0;
  for (int i = 0; i < nt; i++)
    if (fake_cand_from_key(base.table_keys[i], &c[n]) == 0) n++;
  CHECK(n == nt, "unparsable keys in %s", table);
  tune_class cls = test_class(0, 1, "rec");
  double true_best = 1e30;
  for (int i = 0; i < n; i++)
    if (fake_true_time(&base, &c[i]) < true_best) true_best = fake_true_time(&base, &c[i]);
  for (int seed = 1; seed <= 5; seed++) {
    fake_eval ex = base, sh = base;
    ex.noise = sh.noise = 0.04;
    ex.seed = sh.seed = (unsigned long long)seed;
    char n1[64], n2[64];
    snprintf(n1, sizeof n1, "rec-ex-%d.jsonl", seed);
    snprintf(n2, sizeof n2, "rec-sh-%d.jsonl", seed);
    tune_result re = run_one(&cls, c, n, quiet_settings(TUNE_EXHAUSTIVE), &ex, n1, 1);
    tune_result rh = run_one(&cls, c, n, quiet_settings(TUNE_HALVING), &sh, n2, 1);
    double te = fake_true_time(&base, &re.best), th = fake_true_time(&base, &rh.best);
    fprintf(stderr, "seed %d: exhaustive %s %.4g (%ld reps) | halving %s %.4g (%ld reps, %.0f%%)\n",
            seed, re.best.key, te, re.search_reps, rh.best.key, th, rh.search_reps,
            100.0 * rh.search_reps / re.search_reps);
    CHECK(th <= 1.05 * te, "halving best %.4g not within 5%% of exhaustive %.4g", th, te);
    CHECK(rh.search_reps <= 0.30 * re.search_reps, "halving used %ld of %ld reps (> 30%%)",
          rh.search_reps, re.search_reps);
    CHECK(te <= 1.05 * true_best, "exhaustive best %.4g vs true %.4g", te, true_best);
  }
  free(c);
  free(base.table_keys);
  free(base.table_times);
  return 0;
}

/* ---- a wrong answer is never selected, and is reported ---------------------- */
static int count_lines_with(const char *path, const char *a, const char *b) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[2048];
  int n = 0;
  while (fgets(line, sizeof line, f)) n += strstr(line, a) && strstr(line, b);
  fclose(f);
  return n;
}

static int test_wrong(void) {
  tune_class cls = test_class(1, 2, "wr");
  tune_cand c[512];
  int n = space_for(&cls, c, 512);
  const char *wrong = "64x128/gqa/dynamic/t2/compact";
  for (int s = 0; s < 3; s++) {
    fake_eval fe = {0};
    fe.wrong_key = wrong;
    fe.unsupported_key = "32x64/gqa/dynamic/t2/compact";
    fe.default_time = 1.0;
    fe.seed = 3;
    fe.noise = 0.02;
    tune_settings set = quiet_settings((tune_strategy)s);
    set.random_count = n;
    char name[64], path[600];
    snprintf(name, sizeof name, "wrong-%d.jsonl", s);
    tmp_path(path, sizeof path, name);
    tune_result r = run_one(&cls, c, n, set, &fe, name, 1);
    CHECK(r.found && strcmp(r.best.key, wrong) != 0, "%s selected the wrong candidate",
          tune_strategy_name((tune_strategy)s));
    CHECK(r.n_rejected == 1 && !strcmp(r.rejected_key[0], wrong), "%s: rejected %d (%s)",
          tune_strategy_name((tune_strategy)s), r.n_rejected, r.rejected_key[0]);
    CHECK(strstr(r.rejected_why[0], "wrong answer") != NULL, "reason: %s", r.rejected_why[0]);
    CHECK(r.n_unsupported == 1, "unsupported %d", r.n_unsupported);
    CHECK(count_lines_with(path, "\"t\":\"v\"", wrong) == 1, "verdict not in the cache");
    CHECK(count_lines_with(path, "\"t\":\"m\"", wrong) == 0, "the wrong candidate was timed");
    /* resume: the cached verdict is reported again, not re-verified */
    fake_eval again = fe;
    again.verifies = 0;
    again.measures = 0;
    tune_result r2 = run_one(&cls, c, n, set, &again, name, 0);
    CHECK(r2.n_rejected == 1 && again.verifies == 0 && again.measures == 0,
          "resume re-verified %ld / re-measured %ld", again.verifies, again.measures);
  }
  return 0;
}

/* ---- noise rule: no class gets slower ---------------------------------------- */
static int test_decision(void) {
  tune_ratio r = {1.10, 1.05, 1.15};
  CHECK(tune_should_adopt(r, 0.03), "clear win refused");
  r = (tune_ratio){1.10, 0.98, 1.2};
  CHECK(!tune_should_adopt(r, 0.03), "win inside the noise adopted");
  r = (tune_ratio){1.02, 1.01, 1.03};
  CHECK(!tune_should_adopt(r, 0.03), "win below the threshold adopted");
  /* issue 12: the smoke suite adopted rows with intervals like [1.245, 551.692]
     (a "162x speedup"); so wide an interval is no evidence */
  r.ratio = 162.0, r.lo = 1.245, r.hi = 551.692;
  CHECK(!tune_should_adopt(r, 0.03), "a 162x win with CI [1.245, 551.692] adopted");
  r.ratio = 1.09, r.lo = 1.019, r.hi = 1.129;
  CHECK(tune_should_adopt(r, 0.03), "a 1.09x win with CI [1.019, 1.129] refused");
  /* paired bootstrap: a 10% win under load that drifts 4x, shared by both
   * members of each pair, is clear when pairs are kept, lost when not */
  {
    double a[30], b[30];
    tune_rng rng;
    tune_rng_seed(&rng, 77);
    for (int i = 0; i < 30; i++) {
      double drift = 0.5 + 1.5 * tune_rng_uniform(&rng);
      a[i] = 1.10 * drift * (1 + 0.01 * tune_rng_normal(&rng));
      b[i] = 1.00 * drift * (1 + 0.01 * tune_rng_normal(&rng));
    }
    tune_ratio pr = tune_ratio_of_medians_paired(a, b, 30, 2000, 1);
    tune_ratio ur = tune_ratio_of_medians(a, 30, b, 30, 2000, 1);
    fprintf(stderr, "paired %.3f [%.3f, %.3f], unpaired %.3f [%.3f, %.3f]\n", pr.ratio, pr.lo, pr.hi,
            ur.ratio, ur.lo, ur.hi);
    CHECK(pr.lo > 1.03 && pr.hi < 1.2, "paired CI [%.3f, %.3f] misses the 10%% win", pr.lo, pr.hi);
    CHECK(ur.lo < 1.0, "unpaired CI [%.3f, %.3f] unexpectedly tight", ur.lo, ur.hi);
  }
  /* defaults faster than every candidate: keep them */
  tune_class cls = test_class(1, 2, "dec");
  tune_cand c[512];
  int n = space_for(&cls, c, 512);
  fake_eval fe = {0};
  fe.default_time = 0.3;
  fe.noise = 0.03;
  fe.seed = 9;
  tune_result res = run_one(&cls, c, n, quiet_settings(TUNE_HALVING), &fe, "dec.jsonl", 1);
  CHECK(res.found && !res.adopt, "slower config adopted: %s", res.note);
  CHECK(strstr(res.note, "no better config found") != NULL, "note: %s", res.note);
  /* equal to the defaults within noise: keep them */
  fake_eval eq = {0};
  eq.planted_key = "16x256/flat/static/t2/compact";
  eq.default_time = 0.5;
  eq.noise = 0.05;
  eq.seed = 10;
  res = run_one(&cls, c, n, quiet_settings(TUNE_HALVING), &eq, "dec2.jsonl", 1);
  CHECK(res.found && !res.adopt, "tie adopted: %s", res.note);
  return 0;
}

/* ---- resume after kill -9 measures nothing twice -------------------------- */
typedef struct rec_key { char k[400]; } rec_key;

static int cache_records(const char *path, rec_key **out) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[2048];
  int n = 0, cap = 4096;
  *out = calloc((size_t)cap, sizeof(rec_key));
  while (fgets(line, sizeof line, f)) {
    if (!strstr(line, "\"t\":\"m\"") || !strchr(line, '\n')) continue;
    char *sec = strstr(line, ",\"sec\"");
    if (sec) *sec = '\0'; /* the key: class, cand, phase, rep */
    if (n < cap) snprintf((*out)[n++].k, sizeof(rec_key), "%s", line);
  }
  fclose(f);
  return n;
}

static int run_classes(const char *cache, fake_eval *fe, int fresh, tune_result *res,
                       tune_class *classes, int nc) {
  tune_axes a = test_axes();
  tune_machine m = test_machine();
  tune_identity id = test_id();
  char err[512];
  tune_store *st = tune_store_open(cache, &id, fresh, err, sizeof err);
  if (!st) {
    fprintf(stderr, "%s\n", err);
    return -1;
  }
  tune_run run;
  memset(&run, 0, sizeof run);
  run.n_classes = nc;
  run.classes = classes;
  run.axes = &a;
  run.machine = &m;
  run.set = quiet_settings(TUNE_HALVING);
  run.store = st;
  run.ev = fake_eval_iface(fe);
  run.results = res;
  tune_run_all(&run);
  tune_store_close(st);
  return 0;
}

static int test_resume(void) {
  tune_class classes[3] = {test_class(0, 2, "r0"), test_class(2, 0, "r1"), test_class(0, 3, "r2")};
  char full[600], killed[600];
  tmp_path(full, sizeof full, "resume-full.jsonl");
  tmp_path(killed, sizeof killed, "resume-killed.jsonl");
  /* noise-free so that the uninterrupted run is the reference path */
  fake_eval fe = {0};
  fe.default_time = 1.3;
  fe.planted_key = "32x256/gqa/dynamic/t2/compact";
  tune_result ref[3], res[3];
  CHECK(run_classes(full, &fe, 1, ref, classes, 3) == 0, "full run");
  long total = fe.measures;
  rec_key *rk;
  int n_full = cache_records(full, &rk);
  free(rk);
  CHECK(n_full == total, "full run: %d records for %ld measurements", n_full, total);

  long kills[2] = {total / 3, (2 * total) / 3};
  unlink(killed);
  for (int k = 0; k < 2; k++) {
    pid_t pid = fork();
    if (pid == 0) {
      fake_eval child = {0};
      child.default_time = 1.3;
      child.planted_key = fe.planted_key;
      child.kill_after = kills[k];
      tune_result tmp[3];
      run_classes(killed, &child, k == 0, tmp, classes, 3);
      _exit(0); /* not reached if the kill fired */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child was not killed (%d)", status);
    if (k == 0) { /* and a torn last line, as a kill inside write() would leave */
      FILE *f = fopen(killed, "a");
      fputs("{\"t\":\"m\",\"class\":\"avx512/f32/d128/dv128/cau", f);
      fclose(f);
    }
  }
  int before = cache_records(killed, &rk);
  free(rk);
  fake_eval resume = {0};
  resume.default_time = 1.3;
  resume.planted_key = fe.planted_key;
  CHECK(run_classes(killed, &resume, 0, res, classes, 3) == 0, "resume refused");
  fprintf(stderr, "full run %ld measurements; killed runs left %d; resume measured %ld\n", total,
          before, resume.measures);
  CHECK(before + resume.measures == total, "resume measured %ld, expected %ld", resume.measures,
        total - before);
  int n = cache_records(killed, &rk);
  int dups = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) dups += !strcmp(rk[i].k, rk[j].k);
  free(rk);
  CHECK(dups == 0, "%d measurements recorded twice", dups);
  CHECK(n == total, "cache holds %d measurements, expected %ld", n, total);
  for (int i = 0; i < 3; i++) {
    CHECK(!strcmp(res[i].best.key, ref[i].best.key) && res[i].adopt == ref[i].adopt,
          "class %d: resumed chose %s, uninterrupted %s", i, res[i].best.key, ref[i].best.key);
  }
  /* the torn line is gone and every line parses as a record */
  FILE *f = fopen(killed, "r");
  char line[4096];
  int bad = 0;
  while (fgets(line, sizeof line, f)) bad += line[strlen(line) - 1] != '\n' || line[0] != '{';
  fclose(f);
  CHECK(bad == 0, "%d bad lines after resume", bad);
  return 0;
}

/* ---- a foreign cache is refused ----------------------------------------------- */
static int test_foreign(void) {
  char path[600], err[512];
  tmp_path(path, sizeof path, "foreign.jsonl");
  tune_identity id = test_id();
  tune_store *st = tune_store_open(path, &id, 1, err, sizeof err);
  CHECK(st != NULL, "create: %s", err);
  if (!st) return 0;
  CHECK(tune_store_add_time(st, "cls", "cand", "search", 0, 0.5) == 0, "append");
  tune_store_close(st);
  const char *fields[] = {"kernel_digest", "machine", "compiler", "timing"};
  for (int i = 0; i < 4; i++) {
    tune_identity other = test_id();
    if (i == 0) snprintf(other.kernel_digest, sizeof other.kernel_digest, "ffff");
    if (i == 1) snprintf(other.machine, sizeof other.machine, "other-box-64c-00000000");
    if (i == 2) snprintf(other.compiler, sizeof other.compiler, "Clang 16");
    if (i == 3) snprintf(other.timing, sizeof other.timing, "flushed"); /* xattn-tune --flush-caches */
    err[0] = '\0';
    st = tune_store_open(path, &other, 0, err, sizeof err);
    CHECK(st == NULL, "foreign cache (%s) accepted", fields[i]);
    if (st) tune_store_close(st);
    CHECK(strstr(err, fields[i]) != NULL && !strchr(err, '\n'), "message does not name %s: %s",
          fields[i], err);
    fprintf(stderr, "refused: %s\n", err);
  }
  /* a cache written before the timing field existed was timed warm: reused by a
     warm run, refused by a flushed one */
  char old[600];
  tmp_path(old, sizeof old, "no_timing.jsonl");
  FILE *f = fopen(old, "w");
  CHECK(f != NULL, "write %s", old);
  if (f) {
    const tune_identity w = test_id();
    fprintf(f,
            "{\"t\":\"id\",\"format\":\"xattn-tune-cache-1\",\"machine\":\"%s\",\"cpu_model\":\"%s\","
            "\"topology\":\"%s\",\"compiler\":\"%s\",\"cflags\":\"%s\",\"kernel_digest\":\"%s\"}\n"
            "{\"t\":\"m\",\"class\":\"cls\",\"cand\":\"cand\",\"phase\":\"search\",\"rep\":0,\"sec\":0.5}\n",
            w.machine, w.cpu_model, w.topology, w.compiler, w.cflags, w.kernel_digest);
    fclose(f);
    tune_identity warm = test_id();
    st = tune_store_open(old, &warm, 0, err, sizeof err);
    CHECK(st != NULL, "a cache without a timing field refused by a warm run: %s", err);
    if (st) {
      CHECK(tune_store_times(st, "cls", "cand", "search", NULL) == 1, "its measurement was not reused");
      tune_store_close(st);
    }
    tune_identity flushed = test_id();
    snprintf(flushed.timing, sizeof flushed.timing, "flushed");
    err[0] = '\0';
    st = tune_store_open(old, &flushed, 0, err, sizeof err);
    CHECK(st == NULL && strstr(err, "timing") != NULL, "a warm cache without a timing field reused by a flushed run (%s)", err);
    if (st) tune_store_close(st);
  }
  /* --fresh starts a new cache and keeps the old one aside */
  tune_identity other = test_id();
  snprintf(other.kernel_digest, sizeof other.kernel_digest, "ffff");
  st = tune_store_open(path, &other, 1, err, sizeof err);
  CHECK(st != NULL, "fresh refused: %s", err);
  if (st) {
    CHECK(tune_store_times(st, "cls", "cand", "search", NULL) == 0, "fresh cache reused data");
    tune_store_close(st);
  }
  /* the same identity reuses it */
  st = tune_store_open(path, &other, 0, err, sizeof err);
  CHECK(st != NULL, "own cache refused: %s", err);
  if (st) tune_store_close(st);
  return 0;
}

/* ---- the header round trip, through the C compiler ------------------------- */
static int test_header(const char *cc) {
  tune_class cls = test_class(0, 2, "hd");
  tune_result res[2];
  memset(res, 0, sizeof res);
  res[0].cls = cls;
  res[0].adopt = 1;
  fake_cand_from_key("32x256/flat/static/t1/compact", &res[0].best);
  res[0].best.prefetch_level = 1; /* a search axis: the tuned row must carry it */
  res[0].speedup = (tune_ratio){1.2, 1.1, 1.3};
  res[1].cls = test_class(1, 0, "hd2");
  res[1].adopt = 0;
  fake_cand_from_key("16x64/gqa/static/t1/compact", &res[1].best);
  tune_row base[2];
  memset(base, 0, sizeof base);
  tune_row b0 = {"*", "*", -1, -1, "*", 0, 2, "16x256", "kvsplit", "static", 0, 0, 0, 0, 0, 0, ""};
  tune_row b1 = {"*", "*", -1, -1, "*", -1, -1, "64x64", "gqa", "dynamic", 0, 0, 0, 16, 48, 0, ""};
  base[0] = b0;
  base[1] = b1;
  tune_row rows[8];
  int n = tune_make_rows(res, 2, base, 2, 2, rows, 8);
  CHECK(n == 3, "rows %d", n);
  /* lanes_rows is no search axis: a tuned row keeps the base row's that its class matched */
  CHECK(rows[0].lanes_rows == 16, "tuned row: lanes_rows %d, want the base row's 16 (the row its class matched)", rows[0].lanes_rows);
  CHECK(rows[0].lanes_rows_fp8 == 48, "tuned row: lanes_rows_fp8 %d, want the base row's 48", rows[0].lanes_rows_fp8);
  CHECK(rows[0].prefetch_level == 1, "tuned row: prefetch_level %d, want the best candidate's 1", rows[0].prefetch_level);
  /* a decode row with its optional columns survives the round trip */
  tune_row dec = {"*", "bf16", -1, -1, "*", 0, 3, "64x64", "decode", "static", 0, 4, -1, 24, 40, 1, "decode"};
  rows[3] = rows[2];
  rows[2] = rows[1];
  rows[1] = dec;
  n = 4;
  char hpath[600], err[512];
  tmp_path(hpath, sizeof hpath, "tuned_config.h");
  CHECK(tune_header_write(hpath, "machine: test */ not closed early\nspeedup: 1.2", "xattn-tune; \"q\"",
                          rows, n, err, sizeof err) == 0,
        "write: %s", err);
  /* parse back */
  tune_row back[8];
  char prov[256];
  int nb = tune_header_parse(hpath, back, 8, prov, sizeof prov, err, sizeof err);
  CHECK(nb == n, "parsed %d rows (%s)", nb, err);
  for (int i = 0; i < nb && i < n; i++)
    CHECK(!strcmp(back[i].variant, rows[i].variant) && back[i].d == rows[i].d &&
              back[i].extend_bucket == rows[i].extend_bucket && back[i].threads == rows[i].threads &&
              back[i].kv_splits == rows[i].kv_splits && back[i].prefetch == rows[i].prefetch &&
              back[i].lanes_rows == rows[i].lanes_rows && back[i].lanes_rows_fp8 == rows[i].lanes_rows_fp8 &&
              back[i].prefetch_level == rows[i].prefetch_level,
          "row %d differs", i);
  CHECK(nb > 1 && back[1].prefetch_level == 1, "the decode row's prefetch_level (1: into L1) survives the round trip");
  CHECK(!strcmp(prov, "xattn-tune; \"q\""), "provenance %s", prov);
  char vars[256];
  tune_rows_variants(back, nb, vars, sizeof vars);
  CHECK(!strcmp(vars, "32x256;64x64;16x256"), "variants %s", vars);
  /* compile a TU that expands the table with the kernel's lookup rule */
  char tu[600], exe[600], cmd[2048];
  tmp_path(tu, sizeof tu, "lookup.c");
  tmp_path(exe, sizeof exe, "lookup");
  FILE *f = fopen(tu, "w");
  fprintf(f,
          "#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n"
          "#include \"%s\"\n"
          "struct row { const char *isa, *dtype; int d, dv; const char *mode; int eb, pb;"
          " const char *variant, *layout, *schedule; int threads, kv_splits, prefetch, lanes_rows, lanes_rows_fp8, prefetch_level; };\n"
          "#define ROW(i,t,d,dv,m,eb,pb,v,l,s,...) {i,t,d,dv,m,eb,pb,v,l,s,__VA_ARGS__},\n"
          "static const struct row rows[] = { XATTN_CONFIG_CLASSES(ROW) };\n"
          "static int sm(const char *p, const char *v) { return !strcmp(p, \"*\") || !strcmp(p, v); }\n"
          "int main(int argc, char **argv) {\n"
          "  if (argc != 8) return 2;\n"
          "  int d = atoi(argv[3]), dv = atoi(argv[4]), eb = atoi(argv[6]), pb = atoi(argv[7]);\n"
          "  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {\n"
          "    const struct row *r = &rows[i];\n"
          "    if (sm(r->isa, argv[1]) && sm(r->dtype, argv[2]) && (r->d == -1 || r->d == d) &&\n"
          "        (r->dv == -1 || r->dv == dv) && sm(r->mode, argv[5]) && (r->eb == -1 || r->eb == eb) &&\n"
          "        (r->pb == -1 || r->pb == pb)) {\n"
          "      printf(\"%%s %%s %%s %%d %%d %%d %%d %%d %%d|%%s\\n\", r->variant, r->layout, r->schedule, r->threads,"
          " r->kv_splits, r->prefetch, r->lanes_rows, r->lanes_rows_fp8, r->prefetch_level,"
          " XATTN_CONFIG_PROVENANCE);\n"
          "      return 0;\n    }\n  }\n  return 1;\n}\n",
          hpath);
  fclose(f);
  snprintf(cmd, sizeof cmd, "'%s' -std=c11 -Wall -Werror -o '%s' '%s'", cc, exe, tu);
  int rc = system(cmd);
  CHECK(rc == 0, "the written header does not compile: %s", cmd);
  if (rc != 0) return 0;
  struct { const char *args, *want; } q[] = {
      {"avx512 f32 128 128 causal 2 0", "32x256 flat static 1 0 0 16 48 1|xattn-tune; \"q\""},
      {"avx512 f32 128 128 causal 0 2", "16x256 kvsplit static 0 0 0 0 0 0|"},
      {"avx512 f32 128 128 causal 1 0", "64x64 gqa dynamic 0 0 0 16 48 0|"},
      {"avx2 f32 128 128 causal 2 0", "64x64 gqa dynamic 0 0 0 16 48 0|"},
      {"avx512 bf16 128 128 causal 0 3", "64x64 decode static 0 4 -1 24 40 1|"},
  };
  for (int i = 0; i < 5; i++) {
    snprintf(cmd, sizeof cmd, "'%s' %s", exe, q[i].args);
    FILE *p = popen(cmd, "r");
    char out[512] = "";
    if (!fgets(out, sizeof out, p)) out[0] = '\0';
    pclose(p);
    out[strcspn(out, "\n")] = '\0';
    CHECK(!strncmp(out, q[i].want, strlen(q[i].want)), "lookup %s gave '%s', want '%s'", q[i].args,
          out, q[i].want);
  }
  /* a header whose last row does not match everything is not written */
  CHECK(tune_header_write(hpath, "", "x", rows, 1, err, sizeof err) != 0, "catch-all not enforced");
  return 0;
}

/* ---- xattn-tune merge: one header for several CPU classes ----------------------- */
static void write_tuned(const char *path, const char *machine, const char *digest, const char *cls_name,
                        int model, int l2, const char *variant) {
  tune_row rows[2] = {{"avx512", "f32", 128, 128, "causal", 1, 0, "", "gqa", "static", 0, 0, 0, 0, 0, 0, "tuned"},
                      {"*", "*", -1, -1, "*", -1, -1, "64x64", "gqa", "dynamic", 0, 0, 0, 0, 0, 0, ""}};
  snprintf(rows[0].variant, sizeof rows[0].variant, "%s", variant);
  static tune_header_cpu cpu;
  memset(&cpu, 0, sizeof cpu);
  cpu.has_tuned_on = 1;
  xattn_cpu_class c = {"", "avx512", "GenuineIntel", 6, model, l2, 8};
  snprintf(c.name, sizeof c.name, "%s", cls_name);
  cpu.tuned_on = c;
  char prov[512], err[512];
  snprintf(prov, sizeof prov, "xattn-tune halving; machine: %s; commit: abc; speedup: 1.100 (geomean); "
                              "kernels sha256:%s", machine, digest);
  CHECK(tune_header_write_cpu(path, "test", prov, rows, 2, &cpu, err, sizeof err) == 0, "write %s: %s", path,
        err);
}

static int test_merge(void) {
  char a[600], b[600], c[600], d[600], base[600], out[600], out2[600], err[1024];
  tmp_path(a, sizeof a, "tuned_a.h");
  tmp_path(b, sizeof b, "tuned_b.h");
  tmp_path(c, sizeof c, "tuned_c_same_class_as_a.h");
  tmp_path(d, sizeof d, "tuned_d_other_kernels.h");
  tmp_path(base, sizeof base, "base.h");
  tmp_path(out, sizeof out, "merged.h");
  tmp_path(out2, sizeof out2, "merged2.h");
  write_tuned(a, "node-a", "0123456789abcdef", "intel-6-143-l2_2048k-l3_8c-avx512", 143, 2048, "128x32");
  write_tuned(b, "node-b", "0123456789abcdef", "intel-6-207-l2_1024k-l3_8c-avx512", 207, 1024, "32x256");
  write_tuned(c, "node-c", "0123456789abcdef", "intel-6-143-l2_2048k-l3_8c-avx512", 143, 2048, "16x64");
  write_tuned(d, "node-d", "fedcba9876543210", "intel-6-106-l2_1280k-l3_8c-avx512", 106, 1280, "64x32");
  tune_row brow = {"*", "*", -1, -1, "*", -1, -1, "64x64", "gqa", "dynamic", 0, 0, 0, 0, 0, 0, ""};
  CHECK(tune_header_write(base, "base", "hand-written default", &brow, 1, err, sizeof err) == 0, "%s", err);

  const char *in1[] = {a, b, c};
  tune_merge_opts o = {in1, 3, base, out, "2026-01-01T00:00:00Z"};
  CHECK(tune_merge(&o, NULL, err, sizeof err) == 0, "merge: %s", err);
  static tune_row rows[64];
  static tune_header_cpu cpu;
  char prov[2048];
  int n = tune_header_parse(out, rows, 64, prov, sizeof prov, err, sizeof err);
  CHECK(n == 5, "merged rows %d (%s)", n, err);
  CHECK(tune_header_parse_cpu(out, &cpu, err, sizeof err) == 0, "parse cpu: %s", err);
  CHECK(cpu.n_classes == 2, "classes %d (the third input repeats the first's class)", cpu.n_classes);
  CHECK(!strcmp(cpu.classes[0].name, "intel-6-143-l2_2048k-l3_8c-avx512") && cpu.classes[1].model == 207 &&
            cpu.classes[1].l2_kib == 1024, "classes %s / %d", cpu.classes[0].name, cpu.classes[1].model);
  const int want_class[] = {0, 0, 1, 1, -1};
  for (int i = 0; i < 5; i++) CHECK(cpu.row_class[i] == want_class[i], "row %d class %d", i, cpu.row_class[i]);
  CHECK(!strcmp(rows[0].variant, "128x32") && !strcmp(rows[2].variant, "32x256"), "rows %s %s", rows[0].variant,
        rows[2].variant);
  CHECK(!strcmp(cpu.kernel_digest, "0123456789abcdef"), "digest %s", cpu.kernel_digest);
  CHECK(strstr(prov, "node-a (class intel-6-143") && strstr(prov, "node-b (class intel-6-207") &&
            strstr(prov, "node-c") && strstr(prov, "left out") && strstr(prov, "speedup 1.100"),
        "provenance does not list every machine: %s", prov);

  /* refusals, each one line naming the file */
  const char *in2[] = {a, d};
  o.inputs = in2;
  o.n_inputs = 2;
  o.out = out2;
  CHECK(tune_merge(&o, NULL, err, sizeof err) != 0 && strstr(err, d) && strstr(err, "sha256"),
        "other kernels' tuning not refused: %s", err);
  const char *in3[] = {a, base};
  o.inputs = in3;
  CHECK(tune_merge(&o, NULL, err, sizeof err) != 0 && strstr(err, base) && strstr(err, "XATTN_CONFIG_TUNED_CPU"),
        "a header without its CPU class not refused: %s", err);
  const char *in4[] = {out};
  o.inputs = in4;
  o.n_inputs = 1;
  CHECK(tune_merge(&o, NULL, err, sizeof err) != 0 && strstr(err, "already a merged header"),
        "a merged header as input not refused: %s", err);
  char field[64];
  tune_provenance_field("xattn-tune x; machine: m1; commit: c1; kernels sha256:00ff", "kernels sha256", field,
                        sizeof field);
  CHECK(!strcmp(field, "00ff"), "field '%s'", field);
  tune_provenance_field("xattn-tune x; cpu machine: no; machine: m1", "machine", field, sizeof field);
  CHECK(!strcmp(field, "m1"), "field '%s'", field);
  return 0;
}

/* ---- torn last line ------------------------------------------------------------ */
static int test_torn(void) {
  char path[600], err[512];
  tmp_path(path, sizeof path, "torn.jsonl");
  tune_identity id = test_id();
  tune_store *st = tune_store_open(path, &id, 1, err, sizeof err);
  for (int i = 0; i < 3; i++) tune_store_add_time(st, "c", "k", "search", i, 1.0 + i);
  tune_store_close(st);
  FILE *f = fopen(path, "a");
  fputs("{\"t\":\"m\",\"class\":\"c\",\"cand\":\"k\",\"phase\":\"search\",\"rep\":3,\"se", f);
  fclose(f);
  st = tune_store_open(path, &id, 0, err, sizeof err);
  CHECK(st != NULL, "torn cache refused: %s", err);
  if (!st) return 0;
  CHECK(tune_store_dropped(st) == 1 && tune_store_loaded(st) == 3, "loaded %d dropped %d",
        tune_store_loaded(st), tune_store_dropped(st));
  CHECK(tune_store_add_time(st, "c", "k", "search", 3, 4.0) == 0, "append after torn");
  tune_store_close(st);
  st = tune_store_open(path, &id, 0, err, sizeof err);
  const double *t;
  int n = tune_store_times(st, "c", "k", "search", &t);
  CHECK(n == 4 && t[3] == 4.0 && tune_store_dropped(st) == 0, "after repair: %d reps, dropped %d", n,
        tune_store_dropped(st));
  tune_store_close(st);
  return 0;
}

/* ---- damage other than a torn last line is refused, not "repaired" ---------- */
static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A cache of 6 measurement records (lines 2-7) with line `line` replaced. */
static void damaged_cache(const char *path, int line, const char *text, size_t len) {
  tune_identity id = test_id();
  unlink(path);
  char err[512];
  tune_store *st = tune_store_open(path, &id, 1, err, sizeof err);
  tune_store_set_durable(st, 0);
  for (int i = 0; i < 6; i++) tune_store_add_time(st, "c", "k", "search", i, 1.0 + i);
  tune_store_close(st);
  FILE *f = fopen(path, "rb");
  char buf[8192];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  f = fopen(path, "wb");
  int ln = 1;
  for (size_t i = 0; i < n; i++) {
    if (ln == line) {
      fwrite(text, 1, len, f);
      while (i < n && buf[i] != '\n') i++;
      fputc('\n', f);
      ln++;
      continue;
    }
    fputc(buf[i], f);
    if (buf[i] == '\n') ln++;
  }
  fclose(f);
}

static int test_damaged(void) {
  char path[600], err[512];
  tmp_path(path, sizeof path, "damaged.jsonl");
  tune_identity id = test_id();
  static const char nul_line[] = "{\"t\":\"m\",\"class\":\"c\",\"cand\":\"k\",\"phase\":\"search\",\"rep\":2,\"sec\":3\0}";
  static const char garbled[] = "{garbled";
  static const char neg_sec[] = "{\"t\":\"m\",\"class\":\"c\",\"cand\":\"k\",\"phase\":\"search\",\"rep\":2,\"sec\":-3}";
  static const char frac_rep[] = "{\"t\":\"m\",\"class\":\"c\",\"cand\":\"k\",\"phase\":\"search\",\"rep\":2.5,\"sec\":3}";
  static const char twice[] = "{\"t\":\"m\",\"class\":\"c\",\"cand\":\"k\",\"phase\":\"search\",\"rep\":1,\"sec\":3}";
  static const char trailing[] = "{\"t\":\"m\",\"class\":\"c\",\"cand\":\"k\",\"phase\":\"search\",\"rep\":3,\"sec\":4} x";
  const struct { int line; const char *text; size_t len; const char *want; } cases[] = {
      /* one NUL byte mid-file: the old loader stopped there and cut every record after it */
      {4, nul_line, sizeof nul_line - 1, "NUL byte"},
      {3, garbled, sizeof garbled - 1, "invalid JSON"},
      {4, neg_sec, sizeof neg_sec - 1, "sec"},
      {4, frac_rep, sizeof frac_rep - 1, "rep"},
      {4, twice, sizeof twice - 1, "recorded twice"},
      {5, trailing, sizeof trailing - 1, "trailing data"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    damaged_cache(path, cases[c].line, cases[c].text, cases[c].len);
    const long before = file_size(path);
    err[0] = '\0';
    tune_store *st = tune_store_open(path, &id, 0, err, sizeof err);
    char want_line[32];
    snprintf(want_line, sizeof want_line, "line %d", cases[c].line);
    CHECK(st == NULL, "case %zu: damaged cache accepted", c);
    if (st) tune_store_close(st);
    CHECK(strstr(err, want_line) && strstr(err, cases[c].want) && !strchr(err, '\n'),
          "case %zu: message does not say %s, %s: %s", c, want_line, cases[c].want, err);
    CHECK(file_size(path) == before, "case %zu: the refused cache was changed (%ld -> %ld bytes)", c, before,
          file_size(path));
    fprintf(stderr, "refused: %s\n", err);
  }
  return 0;
}

/* ---- workloads the library refuses are not "budget exhausted" ------------------ */
static int test_refused(void) {
  tune_class classes[1] = {test_class(0, 2, "refused")};
  char path[600];
  tmp_path(path, sizeof path, "refused.jsonl");
  fake_eval fe = {0};
  fe.default_time = 1.0;
  fe.fail_measures = 1;
  tune_result res[1];
  CHECK(run_classes(path, &fe, 1, res, classes, 1) == 0, "run");
  CHECK(!res[0].adopt && !strstr(res[0].note, "budget") && strstr(res[0].note, "refused"),
        "note for refused workloads: %s", res[0].note);
  fprintf(stderr, "note: %s\n", res[0].note);
  return 0;
}

/* ---- one tuner per cache, and the refusal names the holder --------------------- */
static int test_lock(void) {
  char path[600], err[512];
  tmp_path(path, sizeof path, "locked.jsonl");
  tune_identity id = test_id();
  tune_store *a = tune_store_open(path, &id, 1, err, sizeof err);
  CHECK(a != NULL, "first open: %s", err);
  if (!a) return 0;
  CHECK(tune_store_add_time(a, "c", "k", "search", 0, 1.0) == 0, "append");
  const long size = file_size(path);
  err[0] = '\0';
  tune_store *b = tune_store_open(path, &id, 0, err, sizeof err); /* a second tuner */
  char pid[32];
  snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
  CHECK(b == NULL, "a second store opened a locked cache");
  if (b) tune_store_close(b);
  CHECK(strstr(err, "in use") && strstr(err, pid), "refusal does not name the holder (%s): %s", pid, err);
  b = tune_store_open(path, &id, 1, err, sizeof err); /* not even --fresh */
  CHECK(b == NULL && file_size(path) == size, "--fresh moved a locked cache aside");
  if (b) tune_store_close(b);
  tune_store_close(a);
  b = tune_store_open(path, &id, 0, err, sizeof err);
  CHECK(b != NULL && tune_store_times(b, "c", "k", "search", NULL) == 1, "after the holder closed: %s", err);
  if (b) tune_store_close(b);
  return 0;
}

/* ---- header formats: format 1 is read with its meaning, others refused ---------
 * A header without XATTN_CONFIG_FORMAT (format 1) had extend buckets <= 64,
 * <= 512, <= 2048, more; its rows come back in the current format, a format-1
 * bucket as every current bucket it holds, so a tuner working from an old
 * header changes no choice. A format this tuner does not know is refused. */
static int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(text, f);
  return fclose(f);
}

static int test_header_format(void) {
  char path[600], err[512];
  tmp_path(path, sizeof path, "format1.h");
  const char *v1 =
      "#define XATTN_CONFIG_PROVENANCE \"old\"\n"
      "#define XATTN_CONFIG_CLASSES(X) \\\n"
      "  X(\"*\", \"*\", -1, -1, \"*\", 0, 2, \"64x64\", \"kvsplit\", \"static\", 0) \\\n"
      "  X(\"*\", \"f32\", -1, -1, \"*\", 1, -1, \"32x128\", \"gqa\", \"static\", 0) \\\n"
      "  X(\"*\", \"*\", -1, -1, \"*\", 3, -1, \"128x64\", \"gqa\", \"static\", 0) \\\n"
      "  X(\"*\", \"*\", -1, -1, \"*\", -1, -1, \"64x64\", \"gqa\", \"dynamic\", 0)\n";
  CHECK(write_text(path, v1) == 0, "cannot write %s", path);
  tune_row rows[16];
  int n = tune_header_parse(path, rows, 16, NULL, 0, err, sizeof err);
  /* format 1's bucket 0 holds E <= 1, <= 4 and <= 64 of the current format */
  const int want_eb[] = {0, 1, 2, 3, 5, -1};
  const char *want_variant[] = {"64x64", "64x64", "64x64", "32x128", "128x64", "64x64"};
  CHECK(n == 6, "format-1 header: %d rows, want 6 (%s)", n, n < 0 ? err : "");
  for (int i = 0; i < n && i < 6; i++)
    CHECK(rows[i].extend_bucket == want_eb[i] && !strcmp(rows[i].variant, want_variant[i]),
          "row %d: bucket %d variant %s, want %d %s", i, rows[i].extend_bucket, rows[i].variant, want_eb[i],
          want_variant[i]);
  /* every E lands on a row with the choice format 1 gave it */
  const int64_t e[] = {1, 3, 64, 65, 600, 4096};
  const char *want_choice[] = {"64x64", "64x64", "64x64", "32x128", "64x64", "128x64"};
  for (int k = 0; k < 6; k++) {
    const char *got = NULL;
    for (int i = 0; i < n && !got; i++)
      if (tune_row_matches(&rows[i], "avx512", "f32", 128, 128, "causal", xattn_extend_bucket(e[k]), 2))
        got = rows[i].variant;
    CHECK(got && !strcmp(got, want_choice[k]), "E %lld: %s, want %s", (long long)e[k], got ? got : "none",
          want_choice[k]);
  }
  /* a written header says its format and parses back unchanged */
  char out[600];
  tmp_path(out, sizeof out, "format2.h");
  CHECK(n == 6 && tune_header_write(out, "", "new", rows, n, err, sizeof err) == 0, "write: %s", err);
  tune_row back[16];
  CHECK(tune_header_parse(out, back, 16, NULL, 0, err, sizeof err) == 6, "parse back: %s", err);
  for (int i = 0; i < 6; i++)
    CHECK(back[i].extend_bucket == want_eb[i], "written row %d: bucket %d, want %d", i, back[i].extend_bucket,
          want_eb[i]);
  /* a format-1 bucket beyond format 1, and an unknown format: refused by name */
  char bad[2048];
  snprintf(bad, sizeof bad, "%s", v1);
  char *four = strstr(bad, ", 3, -1");
  if (four) four[2] = '4';
  CHECK(write_text(path, bad) == 0, "cannot write %s", path);
  CHECK(tune_header_parse(path, rows, 16, NULL, 0, err, sizeof err) < 0 && strstr(err, "extend bucket 4"),
        "format-1 bucket 4 not refused: %s", err);
  snprintf(bad, sizeof bad, "#define XATTN_CONFIG_FORMAT 9\n%s", v1);
  CHECK(write_text(path, bad) == 0, "cannot write %s", path);
  CHECK(tune_header_parse(path, rows, 16, NULL, 0, err, sizeof err) < 0 && strstr(err, "XATTN_CONFIG_FORMAT"),
        "format 9 not refused: %s", err);
  return 0;
}

/* Every test, with the command line ctest runs it with (`--list`; @KEY@ is a
 * path the build fills in, see tune/CMakeLists.txt). */
static const struct {
  const char *name, *list_args;
  int (*fn0)(void);
  int (*fn1)(const char *);
} tests[] = {
    {"space", NULL, test_space, NULL},       {"planted", NULL, test_planted, NULL},
    {"budget", NULL, test_budget, NULL},     {"recorded", "recorded @TESTDATA@/recorded_space.tsv", NULL, test_recorded},
    {"wrong", NULL, test_wrong, NULL},       {"decision", NULL, test_decision, NULL},
    {"resume", NULL, test_resume, NULL},     {"foreign", NULL, test_foreign, NULL},
    {"header", "header @CC@", NULL, test_header}, {"torn", NULL, test_torn, NULL},
    {"merge", NULL, test_merge, NULL},       {"damaged", NULL, test_damaged, NULL},
    {"refused", NULL, test_refused, NULL},   {"lock", NULL, test_lock, NULL},
    {"header_format", NULL, test_header_format, NULL},
};

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--list")) {
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++)
      printf("%s%s%s\n", tests[i].name, tests[i].list_args ? " " : "", tests[i].list_args ? tests[i].list_args : "");
    return 0;
  }
  if (argc < 2) {
    fprintf(stderr, "usage: test_tune --list | NAME [ARG]\n");
    return 2;
  }
  const char *t = argv[1];
  size_t i = 0;
  while (i < sizeof tests / sizeof *tests && strcmp(t, tests[i].name)) i++;
  if (i == sizeof tests / sizeof *tests || (tests[i].fn1 && argc < 3)) {
    fprintf(stderr, "unknown test or missing argument: %s\n", t);
    return 2;
  }
  make_tmpdir();
  if (tests[i].fn1) tests[i].fn1(argv[2]);
  else tests[i].fn0();
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (failures == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
  fprintf(stderr, "%s: %s (%d failures)\n", t, failures ? "FAILED" : "ok", failures);
  return failures ? 1 : 0;
}
