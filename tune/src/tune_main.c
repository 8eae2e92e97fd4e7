/* xattn-tune: the autotuner's command line.
 *
 *   xattn-tune run --suite NAME... --header OUT.h [options]   tune, write the header
 *   xattn-tune compare --suite NAME... --baseline H.h [...]  tuned (built-in) vs baseline
 *   xattn-tune variants HEADER                              ;-list for -DXATTN_VARIANTS
 *   xattn-tune space --suite NAME...                        classes, candidates, prunes
 *   xattn-tune identity                                     what the cache is keyed on
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tune_classes.h"
#include "tune_compare.h"
#include "tune_env.h"
#include "tune_header.h"
#include "tune_merge.h"
#include "tune_prune.h"
#include "tune_real_eval.h"
#include "tune_report.h"
#include "tune_run.h"
#include "xattn/xattn.h"
#include "xattn_bench/machine.h"
#include "xattn_bench/flush.h"
#include "xattn_common/files.h"

static void usage(FILE *f) {
  fputs("usage:\n"
        "  xattn-tune run --suite NAME [--suite NAME...] --header OUT.h [--report OUT.md]\n"
        "             [--cache PATH] [--fresh] [--strategy halving|exhaustive|random]\n"
        "             [--budget 20m] [--max-evals N] [--reps 9] [--eta 3] [--final-reps 15]\n"
        "             [--finalists 3] [--threshold 0.03] [--random-count N] [--seed N] [--only SUBSTR]\n"
        "             [--dump-space OUT.tsv] [--quiet] [--flush-caches]\n"
        "  xattn-tune compare --suite NAME [--suite NAME...] --baseline HEADER.h [--reps 9]\n"
        "             [--report OUT.md] [--json OUT.json] [--only SUBSTR] [--flush-caches]\n"
        "  xattn-tune variants HEADER.h\n"
        "  xattn-tune merge --out MERGED.h [--base DEFAULT.h] TUNED.h [TUNED.h...]\n"
        "  xattn-tune space --suite NAME [--suite NAME...] [--only SUBSTR]\n"
        "  xattn-tune identity\n",
        f);
}

/* "90", "90s", "20m", "1h", "1h30m" -> seconds; -1 if malformed */
static double parse_duration(const char *s) {
  double total = 0;
  const char *p = s;
  if (!*p) return -1;
  while (*p) {
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno || v < 0) return -1;
    double unit = 1;
    if (*end == 's') end++;
    else if (*end == 'm') unit = 60, end++;
    else if (*end == 'h') unit = 3600, end++;
    else if (*end != '\0') return -1;
    total += v * unit;
    p = end;
  }
  return total;
}

static int parse_long(const char *flag, const char *s, long lo, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end || errno || v < lo) {
    fprintf(stderr, "xattn-tune: %s: expected an integer >= %ld, got '%s'\n", flag, lo, s);
    return -1;
  }
  *out = v;
  return 0;
}

typedef struct args {
  const char *suites[TUNE_MAX_SUITES];
  int n_suites;
  const char *header, *report, *cache, *only, *baseline, *json, *dump;
  int fresh, quiet, flush_caches;
  double budget;
  long max_evals, compare_reps;
  tune_settings set;
} args;

static int parse_args(int argc, char **argv, args *a) {
  memset(a, 0, sizeof *a);
  tune_settings_init(&a->set);
  a->compare_reps = 9;
  for (int i = 0; i < argc; i++) {
    const char *f = argv[i];
    int has = i + 1 < argc;
    const char *v = has ? argv[i + 1] : NULL;
    long x;
#define NEED_VALUE                                                  \
  if (!has) {                                                       \
    fprintf(stderr, "xattn-tune: %s: needs a value\n", f);          \
    return -1;                                                      \
  }                                                                 \
  i++;
    if (!strcmp(f, "--suite")) {
      NEED_VALUE
      if (a->n_suites == TUNE_MAX_SUITES) {
        fprintf(stderr, "xattn-tune: --suite: at most %d\n", TUNE_MAX_SUITES);
        return -1;
      }
      a->suites[a->n_suites++] = v;
    } else if (!strcmp(f, "--header")) { NEED_VALUE a->header = v; }
    else if (!strcmp(f, "--report")) { NEED_VALUE a->report = v; }
    else if (!strcmp(f, "--cache")) { NEED_VALUE a->cache = v; }
    else if (!strcmp(f, "--only")) { NEED_VALUE a->only = v; }
    else if (!strcmp(f, "--baseline")) { NEED_VALUE a->baseline = v; }
    else if (!strcmp(f, "--json")) { NEED_VALUE a->json = v; }
    else if (!strcmp(f, "--dump-space")) { NEED_VALUE a->dump = v; }
    else if (!strcmp(f, "--fresh")) a->fresh = 1;
    else if (!strcmp(f, "--flush-caches")) a->flush_caches = 1;
    else if (!strcmp(f, "--quiet")) a->quiet = 1, a->set.progress = 0;
    else if (!strcmp(f, "--strategy")) {
      NEED_VALUE
      if (tune_strategy_parse(v, &a->set.strategy) != 0) {
        fprintf(stderr, "xattn-tune: --strategy: unknown '%s' (halving, exhaustive, random)\n", v);
        return -1;
      }
    } else if (!strcmp(f, "--budget")) {
      NEED_VALUE
      a->budget = parse_duration(v);
      if (a->budget <= 0) {
        fprintf(stderr, "xattn-tune: --budget: expected a duration like 90s, 20m, 1h; got '%s'\n", v);
        return -1;
      }
    } else if (!strcmp(f, "--max-evals")) {
      NEED_VALUE if (parse_long(f, v, 1, &a->max_evals)) return -1;
    } else if (!strcmp(f, "--reps")) {
      NEED_VALUE if (parse_long(f, v, 1, &x)) return -1;
      a->set.reps = (int)x;
      a->compare_reps = x;
    } else if (!strcmp(f, "--eta")) {
      NEED_VALUE if (parse_long(f, v, 2, &x)) return -1;
      a->set.eta = (int)x;
    } else if (!strcmp(f, "--final-reps")) {
      NEED_VALUE if (parse_long(f, v, 3, &x)) return -1;
      a->set.final_reps = (int)x;
    } else if (!strcmp(f, "--finalists")) {
      NEED_VALUE if (parse_long(f, v, 1, &x)) return -1;
      a->set.finalists = (int)x;
    } else if (!strcmp(f, "--random-count")) {
      NEED_VALUE if (parse_long(f, v, 1, &x)) return -1;
      a->set.random_count = (int)x;
    } else if (!strcmp(f, "--seed")) {
      NEED_VALUE if (parse_long(f, v, 0, &x)) return -1;
      a->set.seed = (uint64_t)x;
    } else if (!strcmp(f, "--threshold")) {
      NEED_VALUE
      char *end;
      a->set.threshold = strtod(v, &end);
      if (end == v || *end || a->set.threshold < 0 || a->set.threshold > 1) {
        fprintf(stderr, "xattn-tune: --threshold: expected a fraction in [0, 1], got '%s'\n", v);
        return -1;
      }
    } else {
      fprintf(stderr, "xattn-tune: unknown option '%s'\n", f);
      return -1;
    }
#undef NEED_VALUE
  }
  return 0;
}

static void utc_date(char *out, size_t n) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int cmd_variants(int argc, char **argv) {
  if (argc != 1) {
    fprintf(stderr, "xattn-tune variants: expected one header path\n");
    return 2;
  }
  static tune_row rows[1024];
  char err[512];
  int n = tune_header_parse(argv[0], rows, 1024, NULL, 0, err, sizeof err);
  if (n < 0) {
    fprintf(stderr, "xattn-tune variants: %s\n", err);
    return 1;
  }
  char out[4096];
  tune_rows_variants(rows, n, out, sizeof out);
  printf("%s\n", out);
  return 0;
}

/* xattn-tune merge: one multi-CPU header from the tuned headers of several machines */
static int cmd_merge(int argc, char **argv) {
  const char *out = NULL, *base = TUNE_SOURCE_DIR "/kernels/config/xattn_config_default.h";
  const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
  int n = 0;
  for (int i = 0; i < argc; i++) {
    if ((!strcmp(argv[i], "--out") || !strcmp(argv[i], "--base")) && i + 1 >= argc) {
      fprintf(stderr, "xattn-tune merge: %s: a path is needed\n", argv[i]);
      free(inputs);
      return 2;
    }
    if (!strcmp(argv[i], "--out")) out = argv[++i];
    else if (!strcmp(argv[i], "--base")) base = argv[++i];
    else if (argv[i][0] == '-') {
      fprintf(stderr, "xattn-tune merge: unknown option '%s'\n", argv[i]);
      free(inputs);
      return 2;
    } else inputs[n++] = argv[i];
  }
  if (!out || n == 0) {
    fprintf(stderr, "xattn-tune merge: needs --out MERGED.h and at least one tuned header\n");
    free(inputs);
    return 2;
  }
  char date[64], err[2048];
  utc_date(date, sizeof date);
  tune_merge_opts o = {inputs, n, base, out, date};
  int rc = tune_merge(&o, stderr, err, sizeof err);
  free(inputs);
  if (rc != 0) {
    fprintf(stderr, "xattn-tune merge: %s\n", err);
    return 1;
  }
  fprintf(stderr, "[merge] wrote %s\n", out);
  return 0;
}

static int load_classes(const args *a, tune_class_set *cs) {
  char err[1024];
  if (a->n_suites == 0) {
    fprintf(stderr, "xattn-tune: --suite: at least one suite is needed\n");
    return -1;
  }
  if (tune_classes_load(cs, a->suites, a->n_suites, a->only, err, sizeof err) != 0) {
    fprintf(stderr, "xattn-tune: %s\n", err);
    return -1;
  }
  return 0;
}

static int cmd_space(const args *a, tune_env *env) {
  tune_class_set cs;
  if (load_classes(a, &cs) != 0) return 2;
  tune_cand *c = malloc(sizeof(tune_cand) * 8192);
  long total = 0;
  for (int i = 0; i < cs.n; i++) {
    int before = tune_prune_total();
    int n = tune_space_enumerate(&cs.classes[i], &env->axes, &env->machine, c, 8192);
    printf("%-60s %3d workload(s), %4d candidates (%d pruned), max E %lld, max P %lld\n",
           cs.classes[i].key, cs.n_members[i], n, tune_prune_total() - before,
           (long long)cs.classes[i].max_extend, (long long)cs.classes[i].max_prefix);
    total += n;
  }
  printf("%d classes, %ld candidates in all; constraints:\n", cs.n, total);
  tune_prune_report(stdout, "  ");
  free(c);
  tune_classes_free(&cs);
  return 0;
}

static void dump_space(const char *path, tune_store *st, const tune_class *cls, const tune_env *env) {
  tune_cand *c = malloc(sizeof(tune_cand) * 8192);
  int n = tune_space_enumerate(cls, &env->axes, &env->machine, c, 8192);
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    free(c);
    return;
  }
  fprintf(f, "# recorded by xattn-tune run --dump-space: median seconds of the search repetitions\n"
             "# class %s\n# machine %s (%s), compiler %s, kernels %.16s\n",
          cls->key, env->id.machine, env->id.cpu_model, env->id.compiler, env->id.kernel_digest);
  const double *t;
  int k = tune_store_times(st, cls->key, "default", "final", &t);
  if (k > 0) fprintf(f, "default\t%.6g\n", xc_median(t, k));
  for (int i = 0; i < n; i++) {
    k = tune_store_times(st, cls->key, c[i].key, "search", &t);
    if (k > 0) fprintf(f, "%s\t%.6g\n", c[i].key, xc_median(t, k));
  }
  fclose(f);
  rename(tmp, path);
  free(c);
}

/* Outputs are checked before anything is measured: a header or report path
 * in a missing folder used to fail (or be skipped silently) only after the
 * whole tuning run. 0, or -1 after one line on stderr. */
static int check_output(const char *flag, const char *path) {
  if (!path) return 0;
  const char *why = NULL;
  if (xc_output_path_ok(path, &why)) {
    fprintf(stderr, "xattn-tune: %s %s: is %s, not a regular file\n", flag, path, why);
    return -1;
  }
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  const char *d = !slash ? "." : slash == dir ? "/" : (*slash = '\0', dir);
  struct stat st;
  if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "xattn-tune: %s %s: folder %s does not exist\n", flag, path, d);
    return -1;
  }
  if (access(d, W_OK) != 0) {
    fprintf(stderr, "xattn-tune: %s %s: folder %s is not writable\n", flag, path, d);
    return -1;
  }
  return 0;
}

static int cmd_run(const args *a, tune_env *env) {
  if (!a->header) {
    fprintf(stderr, "xattn-tune run: --header: the output header path is needed\n");
    return 2;
  }
  char report_path[2200];
  if (a->report) snprintf(report_path, sizeof report_path, "%s", a->report);
  else snprintf(report_path, sizeof report_path, "%s.md", a->header);
  if (check_output("--header", a->header) || check_output("--report", report_path) ||
      check_output("--dump", a->dump))
    return 2;
  tune_class_set cs;
  if (load_classes(a, &cs) != 0) return 2;
  char cache[2048], err[2048];
  if (a->cache) {
    snprintf(cache, sizeof cache, "%s", a->cache);
  } else {
    char dir[1024];
    snprintf(dir, sizeof dir, "results/%s", env->id.machine);
    if (xb_mkdirs(dir, err, sizeof err) != 0) {
      fprintf(stderr, "xattn-tune: %s\n", err);
      return 2;
    }
    snprintf(cache, sizeof cache, "%s/tune-cache.jsonl", dir);
  }
  /* flushed timings are another measurement than warm ones: the cache says which */
  snprintf(env->id.timing, sizeof env->id.timing, "%s", a->flush_caches ? "flushed" : "warm");
  tune_store *st = tune_store_open(cache, &env->id, a->fresh, err, sizeof err);
  if (!st) {
    fprintf(stderr, "xattn-tune: %s\n", err);
    tune_classes_free(&cs);
    return 2;
  }
  if (tune_store_loaded(st) || tune_store_dropped(st))
    fprintf(stderr, "[tune] cache %s: resuming with %d recorded measurements%s\n", cache,
            tune_store_loaded(st), tune_store_dropped(st) ? " (dropped a torn last line)" : "");
  if (tune_store_loaded(st) && a->budget > 0)
    fprintf(stderr, "[tune] note: --budget counts this run only: the recorded measurements are reused without being "
                    "charged to it, so a resumed run may measure further and choose differently than one "
                    "uninterrupted run with the same budget\n");
  real_eval *re = real_eval_open(env, &cs, a->set.seed);
  if (re) real_eval_set_flush(re, a->flush_caches);
  tune_run run;
  memset(&run, 0, sizeof run);
  run.n_classes = cs.n;
  run.classes = cs.classes;
  run.axes = &env->axes;
  run.machine = &env->machine;
  run.set = a->set;
  run.store = st;
  run.ev = real_eval_iface(re);
  run.results = calloc((size_t)cs.n, sizeof(tune_result));
  run.budget.start = xc_now();
  if (a->budget > 0) run.budget.deadline = run.budget.start + a->budget;
  run.budget.max_evals = a->max_evals;
  fprintf(stderr, "[tune] %d classes from %d suite(s), strategy %s, budget %s%s, cache %s\n", cs.n,
          cs.n_suites, tune_strategy_name(a->set.strategy), a->budget > 0 ? "" : "none",
          a->budget > 0 ? "set" : "", cache);
  tune_run_all(&run);
  double elapsed = xc_now() - run.budget.start;
  if (a->flush_caches) /* the flag's effect, counted where the flushing happens */
    fprintf(stderr, "[tune] caches flushed before %llu timed calls\n", xb_flush_count());

  /* header: tuned rows first, then the base header's rows (catch-all last) */
  const tune_row *base;
  int nbase = tune_base_rows(&base);
  int cap = cs.n + nbase + 1;
  tune_row *rows = calloc((size_t)cap, sizeof(tune_row));
  int nrows = tune_make_rows(run.results, cs.n, base, nbase, env->machine.cores, rows, cap);
  char date[64];
  utc_date(date, sizeof date);
  char *comment = malloc(65536), line[2048];
  tune_provenance(env, &cs, &run, elapsed, date, comment, 65536, line, sizeof line);
  int rc = 0;
  tune_header_cpu *cpu = calloc(1, sizeof *cpu); /* the class it was tuned on, for xattn-tune merge */
  if (cpu) {
    cpu->has_tuned_on = 1;
    cpu->tuned_on = env->cpu;
  }
  const int wrote = tune_header_write_cpu(a->header, comment, line, rows, nrows, cpu, err, sizeof err);
  free(cpu);
  if (wrote != 0) {
    fprintf(stderr, "xattn-tune: %s\n", err);
    rc = 1;
  } else {
    fprintf(stderr, "[tune] wrote %s (%d rows)\n", a->header, nrows);
  }
  const char *report = report_path;
  FILE *f = fopen(report, "w");
  if (f) {
    tune_report_run(f, env, &cs, &run, elapsed, date, a->header);
    fclose(f);
    fprintf(stderr, "[tune] report %s\n", report);
  } else {
    fprintf(stderr, "xattn-tune: --report %s: cannot write it: %s\n", report, strerror(errno));
    rc = 1;
  }
  if (a->dump && cs.n > 0) dump_space(a->dump, st, &cs.classes[0], env);
  int adopted = 0;
  double overall = tune_overall_speedup(run.results, cs.n, &adopted);
  tune_print_summary(stdout, run.results, cs.n, "");
  int rejected = 0;
  for (int i = 0; i < cs.n; i++) rejected += run.results[i].n_rejected;
  printf("tuned %d of %d classes, geomean speedup %.3fx over the defaults, %ld timed reps, %.0fs%s\n",
         adopted, cs.n, overall, run.budget.evals, elapsed,
         rejected ? "; SOME CANDIDATES GAVE WRONG ANSWERS (see the report)" : "");
  free(comment);
  free(rows);
  free(run.results);
  real_eval_close(re);
  tune_store_close(st);
  tune_classes_free(&cs);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "variants")) return cmd_variants(argc - 2, argv + 2);
  if (!strcmp(cmd, "merge")) return cmd_merge(argc - 2, argv + 2);
  args a;
  if (parse_args(argc - 2, argv + 2, &a) != 0) return 2;
  tune_env env;
  char err[512];
  if (tune_env_open(&env, err, sizeof err) != 0) {
    fprintf(stderr, "xattn-tune: %s\n", err);
    return 2;
  }
  int rc;
  if (!strcmp(cmd, "identity")) {
    tune_env_print(&env, stdout);
    rc = 0;
  } else if (!strcmp(cmd, "space")) {
    rc = cmd_space(&a, &env);
  } else if (!strcmp(cmd, "run")) {
    rc = cmd_run(&a, &env);
  } else if (!strcmp(cmd, "compare")) {
    tune_class_set cs;
    if (!a.baseline) {
      fprintf(stderr, "xattn-tune compare: --baseline: the header to compare against is needed\n");
      rc = 2;
    } else if (check_output("--report", a.report) || check_output("--json", a.json) || load_classes(&a, &cs) != 0) {
      rc = 2;
    } else {
      tune_compare_opts o = {a.baseline, (int)a.compare_reps, a.report, a.json, a.set.seed,
                             a.set.threshold, a.flush_caches};
      char cerr[1024];
      rc = tune_compare(&env, &cs, &o, cerr, sizeof cerr);
      if (a.flush_caches) fprintf(stderr, "[compare] caches flushed before %llu timed calls\n", xb_flush_count());
      if (rc < 0) {
        fprintf(stderr, "xattn-tune compare: %s\n", cerr);
        rc = 2;
      }
      tune_classes_free(&cs);
    }
  } else {
    fprintf(stderr, "xattn-tune: unknown command '%s' (run, compare, variants, merge, space, identity; --help)\n", cmd);
    rc = 2;
  }
  tune_env_close(&env);
  return rc;
}
