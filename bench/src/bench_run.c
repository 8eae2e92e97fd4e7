/* xattn-bench's C side: flags, rows, one call per row, shared tables. */
#define _GNU_SOURCE
#include "bench_run.h"
#include "xattn/xattn_introspect.h"

#include "xattn_bench/machine.h"
#include "xattn_common/build_info.h"
#include "xattn_bench/mask.h"
#include "xattn_bench/peak.h"
#include "xattn_bench/timing.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static xb_peak_kind peak_kind_of(const xb_row *row);

/* ---- flags ---------------------------------------------------------------- */

void xb_options_usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [xattn-bench flags] [--benchmark_* flags]\n"
          "  --suite NAME|PATH        workload suite (default: default); --list-suites lists them\n"
          "  --workloads SUBSTR       only workloads whose name contains SUBSTR\n"
          "  --variants auto|all|64x64,..  kernel BMxBN variants (auto: what the config header picks;\n"
          "                           all: every variant this build compiled)\n"
          "  --layouts auto|all|flat,gqa,kvsplit\n"
          "  --isa auto|all|avx512,avx2,..  (all: every built ISA this CPU runs)\n"
          "  --schedules auto|static,dynamic  OpenMP schedule of the items (auto: the config header's)\n"
          "  --kv-splits auto|1,2,8,..  key-range splits of kvsplit/decode/lanes (auto: header, else 4 per thread)\n"
          "  --prefetch auto|off|16,64,..  decode/lanes prefetch distance in tokens (auto: header, else the library's;\n"
          "                                flash layouts: off turns off their next-tile prefetch)\n"
          "  --prefetch-level auto|l1|l2  the cache level that decode/lanes prefetch fills (auto: header, else L2)\n"
          "                           each value of these three is a row of its own, named /sched: /splits: /pf:\n"
          "  --threads auto|1,2,..    auto: one core, one L3, one NUMA node, one package, all\n"
          "  --placement compact|scatter|numa|numa=N|cores=0,2,4 (comma list of policies: use ';')\n"
          "  --dtypes f32,bf16,f16    (default: each workload's dtypes)\n"
          "  --seed N                 data seed (default 42)\n"
          "  --results-dir DIR|none   where results/<machine>/<commit>/ goes (default: the source tree's results/)\n"
          "  --label NAME             results file label (default: the suite name)\n"
          "  --resume                 measure only the rows no earlier run of the same command line (and\n"
          "                           label) into the same results folder measured, a killed run's kept\n"
          "                           rows (STAMP_<label>-killed.json) among them\n"
          "  --repetitions N          repetitions per row, median reported (default 5)\n"
          "  --no-baseline            skip the OpenBLAS rows (and speedup_vs_blas)\n"
          "  --blas-threading heads|gemm  OpenMP over heads + 1-thread BLAS (default), or BLAS threads\n"
          "  --reference-max-gflop X  fp64 reference rows for workloads up to X GFLOP (default 0.05; 0: none)\n"
          "  --check                  before timing, check each xattn row against the fp64 reference\n"
          "                           (calls up to --reference-max-gflop) or the BLAS baseline\n"
          "  --no-peak                skip the impl:peak rows (peaks are still measured for pct_peak)\n"
          "  --peak-seconds S         length of each start-up peak-probe run, best of 15 (default 0.02)\n"
          "  --roof-seconds S         time spent measuring each memory roof (stream at start-up, gather\n"
          "                           per problem), best pass kept (default 0.2)\n"
          "  --flush-caches           flush the problem's memory from every cache level before each timed\n"
          "                           call and each gather-roof pass (rows read from DRAM, as in serving)\n"
          "  --cache-pages default|huge  K/V caches on the allocator's pages (default) or on 2 MiB pages\n"
          "                           (madvise MADV_HUGEPAGE: transparent huge pages where granted)\n"
          "All --benchmark_* flags of Google Benchmark work as usual (filter, min_time, out, ...).\n",
          argv0);
}

static int split_list(char *s, const char **out, int max) {
  int n = 0;
  for (char *save = NULL, *t = strtok_r(s, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save)) out[n++] = t;
  return n;
}

/* split_list for a flag's value that must name something: n > 0, or -1 with one line in err */
static int split_flag_list(const char *flag, char *val, const char **out, char *err, size_t errlen) {
  const int n = split_list(val, out, XB_MAX_LIST);
  if (n == 0) snprintf(err, errlen, "--%s: empty list", flag);
  return n > 0 ? n : -1;
}

/* "auto" -> 0 (let the library choose), "all" -> every name the build has
 * (runnable ones only, for ISAs), else the comma list, every name of which
 * must be one the build has (and, for ISAs, that this CPU runs): rows of an
 * unknown name would only all fail. -1 with one line in err otherwise. */
static int name_list(const char *flag, char *val, const char **out, int count, const char *(*name)(int),
                     int (*usable)(const char *), char *err, size_t errlen) {
  if (strcmp(val, "auto") == 0) return 0;
  if (strcmp(val, "all") != 0) {
    const int n = split_flag_list(flag, val, out, err, errlen);
    for (int k = 0; k < n; k++) {
      int known = 0;
      for (int i = 0; i < count && !known; i++) known = strcmp(out[k], name(i)) == 0;
      char names[1024] = "";
      for (int i = 0; i < count; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? "," : "", name(i));
      if (!known) {
        snprintf(err, errlen, "--%s: \"%s\" is not one this build has (%s, auto or all)", flag, out[k], names);
        return -1;
      }
      if (usable && !usable(out[k])) {
        snprintf(err, errlen, "--%s: \"%s\" does not run on this CPU", flag, out[k]);
        return -1;
      }
    }
    return n;
  }
  int n = 0;
  for (int i = 0; i < count && n < XB_MAX_LIST; i++)
    if (!usable || usable(name(i))) out[n++] = name(i);
  return n;
}

/* A number in [lo, hi] (lo_open: (lo, hi]); one line in err otherwise. */
static int parse_double_in(const char *key, const char *val, double lo, int lo_open, double hi, double *out,
                           char *err, size_t errlen) {
  char *end;
  const double v = strtod(val, &end);
  if (end == val || *end || !(lo_open ? v > lo : v >= lo) || !(v <= hi)) {
    if (hi < 1e300) snprintf(err, errlen, "--%s: \"%s\" is not in %c%g, %g]", key, val, lo_open ? '(' : '[', lo, hi);
    else snprintf(err, errlen, "--%s: \"%s\" is not a number >= %g", key, val, lo);
    return -1;
  }
  *out = v;
  return 0;
}

/* --kv-splits and --prefetch: "auto" -> 0, "off" -> -1 where allowed,
 * else integers in [1, max]; a row per value. -1 with one line in err. */
static int int_list(const char *flag, char *val, int allow_off, int max, int *out, char *err, size_t errlen) {
  const char *names[XB_MAX_LIST];
  const int n = split_flag_list(flag, val, names, err, errlen);
  for (int k = 0; k < n; k++) {
    char *end;
    errno = 0;
    const long v = strtol(names[k], &end, 10);
    if (strcmp(names[k], "auto") == 0) out[k] = 0;
    else if (allow_off && strcmp(names[k], "off") == 0) out[k] = -1;
    else if (end != names[k] && !*end && !errno && v >= 1 && v <= max) out[k] = (int)v;
    else {
      snprintf(err, errlen, "--%s: \"%s\" is not auto%s or an integer in 1..%d", flag, names[k],
               allow_off ? ", off" : "", max);
      return -1;
    }
  }
  return n;
}

/* --schedules: "auto", "static", "dynamic"; a row per value. */
static int schedule_list(char *val, xattn_schedule *out, char *err, size_t errlen) {
  const char *names[XB_MAX_LIST];
  const int n = split_flag_list("schedules", val, names, err, errlen);
  for (int k = 0; k < n; k++)
    if (xattn_schedule_parse(names[k], &out[k]) != 0) {
      snprintf(err, errlen, "--schedules: \"%s\" is not auto, static or dynamic", names[k]);
      return -1;
    }
  return n;
}

/* --prefetch-level: auto -> 0 (header / L2), l1 -> 1, l2 -> 2; a row per value. */
static int level_list(char *val, int *out, char *err, size_t errlen) {
  const char *names[XB_MAX_LIST];
  const int n = split_flag_list("prefetch-level", val, names, err, errlen);
  for (int k = 0; k < n; k++) {
    if (strcmp(names[k], "auto") == 0) out[k] = 0;
    else if (strcmp(names[k], "l1") == 0) out[k] = 1;
    else if (strcmp(names[k], "l2") == 0) out[k] = 2;
    else {
      snprintf(err, errlen, "--prefetch-level: \"%s\" is not auto, l1 or l2", names[k]);
      return -1;
    }
  }
  return n;
}

/* A flag with two values: *out = the index of val in names (the enum's
 * order), or -1 with one line in err. */
static int parse_choice2(const char *key, const char *val, const char *const names[2], int *out, char *err,
                         size_t errlen) {
  for (int k = 0; k < 2; k++)
    if (strcmp(val, names[k]) == 0) {
      *out = k;
      return 0;
    }
  snprintf(err, errlen, "--%s: \"%s\" is not %s or %s", key, val, names[0], names[1]);
  return -1;
}
_Static_assert(XB_CACHE_PAGES_DEFAULT == 0 && XB_CACHE_PAGES_HUGE == 1 && XB_BLAS_HEADS == 0 && XB_BLAS_GEMM == 1,
               "parse_choice2's names are in the enums' order");

/* One --key value pair. 0, or -1 with one line in err. */
static int apply_option(xb_options *o, const char *key, char *val, const char **placements, char *err,
                        size_t errlen) {
  if (strcmp(key, "suite") == 0) o->suite = val;
  else if (strcmp(key, "workloads") == 0) o->workloads = val;
  else if (strcmp(key, "variants") == 0)
    return (o->nvariants = name_list(key, val, o->variants, xattn_variant_count(), xattn_variant_name, NULL, err, errlen)) < 0 ? -1 : 0;
  else if (strcmp(key, "layouts") == 0)
    return (o->nlayouts = name_list(key, val, o->layouts, xattn_layout_count(), xattn_layout_name, NULL, err, errlen)) < 0 ? -1 : 0;
  else if (strcmp(key, "isa") == 0)
    return (o->nisas = name_list(key, val, o->isas, xattn_isa_count(), xattn_isa_name, xattn_isa_runnable, err, errlen)) < 0 ? -1 : 0;
  else if (strcmp(key, "schedules") == 0)
    return (o->nschedules = schedule_list(val, o->schedules, err, errlen)) < 0 ? -1 : 0;
  else if (strcmp(key, "kv-splits") == 0) /* the library takes at most 64 */
    return (o->nsplits = int_list(key, val, 0, 64, o->splits, err, errlen)) < 0 ? -1 : 0;
  else if (strcmp(key, "prefetch") == 0)
    return (o->nprefetch = int_list(key, val, 1, 1 << 16, o->prefetch, err, errlen)) < 0 ? -1 : 0;
  else if (strcmp(key, "prefetch-level") == 0)
    return (o->nlevels = level_list(val, o->levels, err, errlen)) < 0 ? -1 : 0;
  else if (strcmp(key, "threads") == 0) o->threads = val;
  else if (strcmp(key, "placement") == 0) *placements = val;
  else if (strcmp(key, "results-dir") == 0) o->results_dir = val;
  else if (strcmp(key, "label") == 0) o->label = val;
  else if (strcmp(key, "dtypes") == 0) {
    const char *names[3];
    int n = split_list(val, names, 3);
    for (int k = 0; k < n; k++)
      if (xattn_dtype_parse(names[k], &o->dtypes[k]) != 0) {
        snprintf(err, errlen, "--dtypes: \"%s\" is not f32, bf16 or f16", names[k]);
        return -1;
      }
    o->ndtypes = n;
  } else if (strcmp(key, "seed") == 0) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(val, &end, 10);
    if (end == val || *end || errno) {
      snprintf(err, errlen, "--seed: \"%s\" is not a non-negative integer", val);
      return -1;
    }
    o->seed = v;
    o->seed_given = 1;
  } else if (strcmp(key, "repetitions") == 0) {
    o->repetitions = atoi(val);
    if (o->repetitions < 1 || o->repetitions > 1000) {
      snprintf(err, errlen, "--repetitions: \"%s\" is not in 1..1000", val);
      return -1;
    }
  } else if (strcmp(key, "peak-seconds") == 0) {
    return parse_double_in(key, val, 0, 1, 60, &o->peak_seconds, err, errlen);
  } else if (strcmp(key, "roof-seconds") == 0) {
    return parse_double_in(key, val, 0, 1, 60, &o->roof_seconds, err, errlen);
  } else if (strcmp(key, "reference-max-gflop") == 0) {
    double v;
    if (parse_double_in(key, val, 0, 0, 1e308, &v, err, errlen)) return -1;
    o->reference_max_flops = v * 1e9;
  } else if (strcmp(key, "cache-pages") == 0) {
    static const char *const names[2] = {"default", "huge"}; /* XB_CACHE_PAGES_DEFAULT, _HUGE */
    int k;
    if (parse_choice2(key, val, names, &k, err, errlen)) return -1;
    o->cache_pages = (xb_cache_pages)k;
  } else if (strcmp(key, "blas-threading") == 0) {
    static const char *const names[2] = {"heads", "gemm"}; /* XB_BLAS_HEADS, XB_BLAS_GEMM */
    int k;
    if (parse_choice2(key, val, names, &k, err, errlen)) return -1;
    o->blas_threading = (xb_blas_threading)k;
  } else {
    snprintf(err, errlen, "--%s: unknown flag (see --help)", key);
    return -1;
  }
  return 0;
}

/* --placement: ';'-separated policies (cores=0,2 contains commas). */
static int parse_placements(xb_options *o, const char *placements, char *err, size_t errlen) {
  char *pl = strdup(placements);
  int rc = pl ? 0 : -1;
  for (char *save = NULL, *t = pl ? strtok_r(pl, ";", &save) : NULL; t && rc == 0; t = strtok_r(NULL, ";", &save)) {
    if (o->nplacements >= 8) {
      snprintf(err, errlen, "--placement: at most 8 policies");
      rc = -1;
    } else if (xb_placement_parse(t, &o->placements[o->nplacements++], err, errlen) != 0) {
      rc = -1;
    }
  }
  free(pl);
  return rc;
}

int xb_options_parse(xb_options *o, int *argc, char **argv, char *err, size_t errlen) {
  memset(o, 0, sizeof *o);
  o->suite = "default";
  o->threads = "auto";
  o->seed = 42;
  o->repetitions = 5;
  o->peak_seconds = 0.02;
  o->roof_seconds = 0.2;
  o->reference_max_flops = 0.05e9;
  o->blas_threading = XB_BLAS_HEADS;
  const char *placements = "compact";
  int out = 1;
  for (int i = 1; i < *argc; i++) {
    char *a = argv[i];
    if (strncmp(a, "--benchmark_", 12) == 0 || strncmp(a, "--v=", 4) == 0 || strncmp(a, "--v", 4) == 0) {
      argv[out++] = a; /* Google Benchmark's own */
      continue;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      xb_options_usage(argv[0]);
      return 1;
    }
    if (strcmp(a, "--no-baseline") == 0) { o->no_baseline = 1; continue; }
    if (strcmp(a, "--no-peak") == 0) { o->no_peak = 1; continue; }
    if (strcmp(a, "--list-suites") == 0) { o->list_suites = 1; continue; }
    if (strcmp(a, "--check") == 0) { o->check = 1; continue; }
    if (strcmp(a, "--flush-caches") == 0) { o->flush_caches = 1; continue; }
    if (strcmp(a, "--resume") == 0) { o->resume = 1; continue; }
    if (strncmp(a, "--", 2) != 0) {
      snprintf(err, errlen, "argument \"%s\": unexpected (flags start with --)", a);
      return -1;
    }
    char *eq = strchr(a, '=');
    char *key = a + 2, *val;
    char keybuf[64];
    if (eq) {
      snprintf(keybuf, sizeof keybuf, "%.*s", (int)(eq - key), key);
      key = keybuf;
      val = eq + 1;
    } else {
      if (i + 1 >= *argc) {
        snprintf(err, errlen, "--%s: missing value", key);
        return -1;
      }
      val = argv[++i];
    }
    if (apply_option(o, key, val, &placements, err, errlen)) return -1;
  }
  argv[out] = NULL;
  *argc = out;
  return parse_placements(o, placements, err, errlen);
}

/* ---- rows ----------------------------------------------------------------- */

/* 1: added, 0: a row of that name is there already, -1: out of memory
 * (the rows so far stay valid). */
static int add_row(xb_session *s, int *cap, const xb_row *r) {
  for (int i = 0; i < s->nrows; i++)
    if (strcmp(s->rows[i].name, r->name) == 0) return 0; /* e.g. "auto" resolved to a listed variant */
  if (s->nrows == *cap) {
    const int grown = *cap ? 2 * *cap : 64;
    xb_row *rows = realloc(s->rows, sizeof *s->rows * (size_t)grown);
    if (!rows) return -1;
    s->rows = rows;
    *cap = grown;
  }
  s->rows[s->nrows++] = *r;
  return 1;
}

static void row_name(xb_session *s, xb_row *r, const char *wl, const char *impl, const char *variant,
                     const char *layout, const char *isa) {
  int at = snprintf(r->name, sizeof r->name,
                    "suite:%s/wl:%s/dtype:%s/impl:%s/variant:%s/layout:%s/isa:%s/threads:%d/place:%s", s->suite->name,
                    wl, xattn_dtype_name(r->dtype), impl, variant, layout, isa, r->threads,
                    s->opt.placements[r->placement].name);
  /* the run settings, only on xattn rows and only where a flag asked for
     them: every other name stays what earlier results files hold */
  const xb_options *o = &s->opt;
  if (r->impl != XB_IMPL_XATTN) return;
  char pf[16];
  if (r->prefetch < 0) snprintf(pf, sizeof pf, "off");
  else if (r->prefetch == 0) snprintf(pf, sizeof pf, "auto");
  else snprintf(pf, sizeof pf, "%d", r->prefetch);
  char splits[16];
  if (r->kv_splits > 0) snprintf(splits, sizeof splits, "%d", r->kv_splits);
  else snprintf(splits, sizeof splits, "auto");
  if (o->nschedules && at < (int)sizeof r->name)
    at += snprintf(r->name + at, sizeof r->name - at, "/sched:%s", xattn_schedule_name(r->schedule));
  if (o->nsplits && at < (int)sizeof r->name) at += snprintf(r->name + at, sizeof r->name - at, "/splits:%s", splits);
  if (o->nprefetch && at < (int)sizeof r->name) at += snprintf(r->name + at, sizeof r->name - at, "/pf:%s", pf);
  static const char *const level_names[3] = {"auto", "l1", "l2"};
  if (o->nlevels && at < (int)sizeof r->name)
    snprintf(r->name + at, sizeof r->name - at, "/pfl:%s", level_names[r->prefetch_level]);
}

static int thread_index(const xb_session *s, int threads) {
  for (int i = 0; i < s->nthreads; i++)
    if (s->threads[i] == threads) return i;
  return 0;
}

static int rows_oom(xb_problem *shape, char *err, size_t errlen) {
  if (shape) xb_problem_free(shape);
  snprintf(err, errlen, "rows: out of memory listing the benchmark rows");
  return -1;
}

static int build_rows(xb_session *s, char *err, size_t errlen) {
  int cap = 0;
  const xb_options *o = &s->opt;
  for (int pi = 0; pi < o->nplacements; pi++)
    for (int ti = 0; ti < s->nthreads; ti++) {
      xb_row r;
      memset(&r, 0, sizeof r);
      r.workload = -1;
      r.threads = s->threads[ti];
      r.placement = pi;
      if (!o->no_peak) {
        r.impl = XB_IMPL_PEAK;
        for (int k = XB_PEAK_FP32; k <= XB_PEAK_AMX_BF16; k++) {
          r.isa = xb_peak_isa((xb_peak_kind)k); /* the peak rows' isa names their kind */
          if (!r.isa) continue;
          r.dtype = k == XB_PEAK_FP32 ? XATTN_F32 : XATTN_BF16;
          row_name(s, &r, "-", "peak", "-", "-", r.isa);
          if (add_row(s, &cap, &r) < 0) return rows_oom(NULL, err, errlen);
        }
        r.isa = NULL;
      }
      for (int w = 0; w < s->suite->count; w++) {
        const xb_workload *wl = &s->suite->workloads[w];
        if (o->workloads && !strstr(wl->name, o->workloads)) continue;
        int nd = o->ndtypes ? o->ndtypes : wl->ndtypes;
        const xattn_dtype *dts = o->ndtypes ? o->dtypes : wl->dtypes;
        for (int di = 0; di < nd; di++) {
          xb_problem shape;
          if (xb_problem_build_shape(&shape, wl, dts[di], o->seed, err, errlen) != 0) return -1;
          r.workload = w;
          r.dtype = dts[di];
          snprintf(r.pair_key, sizeof r.pair_key, "%d/%d/%d/%d", w, (int)r.dtype, r.threads, pi);
          if (shape.flops <= o->reference_max_flops) {
            r.impl = XB_IMPL_REFERENCE;
            row_name(s, &r, wl->name, "reference", "-", "-", "-");
            if (add_row(s, &cap, &r) < 0) return rows_oom(&shape, err, errlen);
          }
          if (!o->no_baseline) {
            r.impl = XB_IMPL_BLAS;
            row_name(s, &r, wl->name, "blas", "-", "-", "-");
            if (add_row(s, &cap, &r) < 0) return rows_oom(&shape, err, errlen);
          }
          r.impl = XB_IMPL_XATTN;
          int nv = o->nvariants ? o->nvariants : 1, nl = o->nlayouts ? o->nlayouts : 1, ni = o->nisas ? o->nisas : 1;
          const int nsc = o->nschedules ? o->nschedules : 1, nsp = o->nsplits ? o->nsplits : 1,
                    npf = o->nprefetch ? o->nprefetch : 1, npl = o->nlevels ? o->nlevels : 1;
          for (int vi = 0; vi < nv; vi++)
            for (int li = 0; li < nl; li++)
              for (int ii = 0; ii < ni; ii++) {
                xattn_options xo;
                xattn_options_init(&xo);
                xo.variant = o->nvariants ? o->variants[vi] : NULL;
                xo.layout = o->nlayouts ? o->layouts[li] : NULL;
                xo.isa = o->nisas ? o->isas[ii] : NULL;
                xo.threads = r.threads;
                const char *rv = NULL, *rl = NULL, *ri = NULL;
                if (xattn_resolve(&shape.p, &xo, &rv, &rl, &ri, NULL) != XATTN_OK) {
                  /* names what was asked; the row reports the error when run */
                  rv = xo.variant ? xo.variant : "auto";
                  rl = xo.layout ? xo.layout : "auto";
                  ri = xo.isa ? xo.isa : "auto";
                }
                r.variant = xo.variant;
                r.layout = xo.layout;
                r.isa = xo.isa;
                for (int si = 0; si < nsc * nsp * npf * npl; si++) { /* the run settings: a row each */
                  r.schedule = o->nschedules ? o->schedules[si % nsc] : XATTN_SCHED_AUTO;
                  r.kv_splits = o->nsplits ? o->splits[si / nsc % nsp] : 0;
                  r.prefetch = o->nprefetch ? o->prefetch[si / nsc / nsp % npf] : 0;
                  r.prefetch_level = o->nlevels ? o->levels[si / nsc / nsp / npf] : 0;
                  row_name(s, &r, wl->name, "xattn", rv, rl, ri);
                  if (add_row(s, &cap, &r) < 0) return rows_oom(&shape, err, errlen);
                }
              }
          xb_problem_free(&shape);
        }
      }
    }
  if (s->nrows == 0) {
    snprintf(err, errlen, "no benchmarks: the suite, --workloads and --dtypes select nothing");
    return -1;
  }
  return 0;
}

/* ---- session -------------------------------------------------------------- */

typedef struct blas_entry {
  char key[256];
  int n;
  int64_t iters[256];
  double secs[256];
} blas_entry;
static blas_entry *blas_table;
static int blas_count;
static double *ref_out;
/* --check: the expected output of the current problem (fp64 reference or
 * BLAS baseline), computed once per problem */
static double *check_expected;
static const char *check_source;

/* far beyond any cache level of the machines this runs on, small beside their memory */
#define STREAM_ROOF_BYTES ((size_t)256 << 20)

void xb_row_flush(const xb_session *s) { xb_problem_flush(&s->pb, s->pb.threads); }
static void flush_session_problem(void *ctx) { xb_row_flush((const xb_session *)ctx); }

/* What the freshly built problem must read, and its gather roof with the bound team. */
static int measure_problem_roof(xb_session *s, int threads, char *err, size_t errlen) {
  xb_gather_plan plan;
  if (xb_bytes_must_read(&s->pb.p, &s->pb_must_read) != 0 || xb_gather_plan_build(&s->pb.p, &plan) != 0) {
    snprintf(err, errlen, "gather roof: out of memory");
    return -1;
  }
  if (s->opt.flush_caches) { /* the roof reads from where the timed calls will */
    plan.before_pass = flush_session_problem;
    plan.before_ctx = s;
  }
  xb_gather_roof_measure(&plan, threads, s->opt.roof_seconds, &s->pb_gather);
  xb_gather_plan_free(&plan);
  return 0;
}

int xb_session_open(xb_session *s, char *err, size_t errlen) {
  s->topo = xb_topology_open(NULL, err, errlen);
  if (!s->topo) return -1;
  s->suite = xb_suite_load(s->opt.suite, err, errlen);
  if (!s->suite) return -1;
  if (!s->opt.seed_given && s->suite->count) s->opt.seed = s->suite->workloads[0].seed;
  xb_set_cache_pages(s->opt.cache_pages);
  if (s->opt.cache_pages == XB_CACHE_PAGES_HUGE && !xb_huge_pages_available())
    fprintf(stderr, "xattn-bench: --cache-pages huge: transparent huge pages are off on this machine; the caches "
                    "stay on small pages (context xattn_cache_pages says so)\n");
  for (int pi = 0; pi < s->opt.nplacements; pi++) {
    int n = xb_threads_parse(s->opt.threads, s->topo, &s->opt.placements[pi], s->threads, XB_MAX_LIST, err, errlen);
    if (n < 0) return -1;
    s->nthreads = n;
    /* every count must be placeable under every policy */
    for (int i = 0; i < n; i++) {
      int pus[4096];
      if (s->threads[i] > 4096 || xb_placement_select(s->topo, &s->opt.placements[pi], s->threads[i], pus, err, errlen) != 0) {
        if (s->threads[i] > 4096) snprintf(err, errlen, "threads: %d is too many", s->threads[i]);
        return -1;
      }
    }
  }
  if (build_rows(s, err, errlen) != 0) return -1;
  /* Peaks first, at every (threads, placement): pct_peak of every row reads them. */
  for (int pi = 0; pi < s->opt.nplacements; pi++)
    for (int ti = 0; ti < s->nthreads; ti++) {
      if (xb_place_threads(s->topo, &s->opt.placements[pi], s->threads[ti], err, errlen) != 0) return -1;
      s->peak_fp32[ti][pi] = xb_peak_gflops(XB_PEAK_FP32, s->threads[ti], s->opt.peak_seconds);
      s->peak_bf16[ti][pi] = xb_peak_gflops(XB_PEAK_BF16, s->threads[ti], s->opt.peak_seconds);
      s->peak_amx[ti][pi] = xb_peak_gflops(XB_PEAK_AMX_BF16, s->threads[ti], s->opt.peak_seconds);
      s->stream_gbps[ti][pi] = xb_stream_roof_gbps(s->threads[ti], STREAM_ROOF_BYTES, s->opt.roof_seconds);
    }
  s->bound_threads = -1;
  s->bound_placement = -1;
  if (xb_machine_name(xb_cpu_model(), xb_topology_cores(s->topo), xb_topology_summary(s->topo), s->machine,
                      sizeof s->machine, err, errlen) != 0)
    return -1;
  xb_commit_dir_name(xc_build_commit(), xc_build_dirty(), s->commit_dir, sizeof s->commit_dir);
  s->progress_last_row = -1;
  return 0;
}

void xb_session_close(xb_session *s) {
  if (s->pb_valid) xb_problem_free(&s->pb);
  free(ref_out);
  ref_out = NULL;
  free(check_expected);
  check_expected = NULL;
  free(blas_table);
  blas_table = NULL;
  blas_count = 0;
  free(s->rows);
  xb_suite_free(s->suite);
  xb_topology_close(s->topo);
}

static int check_row(xb_session *s, int r, char *err, size_t errlen);

int xb_row_prepare(xb_session *s, int r, char *err, size_t errlen) {
  const xb_row *row = &s->rows[r];
  if (s->bound_threads != row->threads || s->bound_placement != row->placement) {
    if (xb_place_threads(s->topo, &s->opt.placements[row->placement], row->threads, err, errlen) != 0) return -1;
    s->bound_threads = row->threads;
    s->bound_placement = row->placement;
  }
  if (row->impl == XB_IMPL_PEAK) return 0;
  if (!s->pb_valid || s->pb_workload != row->workload || s->pb_dtype != row->dtype || s->pb_threads != row->threads ||
      s->pb_placement != row->placement) {
    if (s->pb_valid) xb_problem_free(&s->pb);
    s->pb_valid = 0;
    free(ref_out);
    ref_out = NULL;
    free(check_expected);
    check_expected = NULL;
    /* first touch by the bound team of this row's size; the memory estimate
     * counts the BLAS baseline's scratch when the baseline runs on it (its
     * rows, speedup_vs_blas, or the check of a problem past the reference) */
    const xb_workload *w = &s->suite->workloads[row->workload];
    const double blas_bytes = !s->opt.no_baseline || s->opt.check
                                  ? xb_blas_scratch_bytes(w, row->threads, s->opt.blas_threading)
                                  : 0;
    if (xb_problem_build_with(&s->pb, w, row->dtype, s->opt.seed, row->threads, blas_bytes, err, errlen) != 0)
      return -1;
    s->pb_valid = 1;
    if (measure_problem_roof(s, row->threads, err, errlen) != 0) return -1;
    s->pb_workload = row->workload;
    s->pb_dtype = row->dtype;
    s->pb_threads = row->threads;
    s->pb_placement = row->placement;
  }
  if (row->impl == XB_IMPL_XATTN && s->opt.check && !row->checked) {
    if (check_row(s, r, err, errlen) != 0) return -1;
    s->rows[r].checked = 1;
  }
  if (row->impl == XB_IMPL_REFERENCE && !ref_out) {
    const xattn_problem *p = &s->pb.p;
    ref_out = malloc(sizeof(double) * (size_t)(p->total_tokens * p->heads_q * p->head_dim_v));
    if (!ref_out) {
      snprintf(err, errlen, "reference: out of memory");
      return -1;
    }
  }
  return 0;
}

/* The library options a row asks for: the timed call and the peak choice resolve the same. */
static xattn_options row_options(const xb_row *row) {
  xattn_options xo;
  xattn_options_init(&xo);
  xo.variant = row->variant;
  xo.layout = row->layout;
  xo.isa = row->isa;
  xo.threads = row->threads;
  xo.schedule = row->schedule;
  xo.kv_splits = row->kv_splits;
  xo.prefetch = row->prefetch;
  xo.prefetch_level = row->prefetch_level;
  return xo;
}

static void likwid_region_name(const xb_session *s, const xb_row *row, char *out, size_t outlen) {
  /* likwid region tags: no spaces; workload, dtype and variant identify a region */
  const char *rv = row->variant ? row->variant : "auto", *rl = row->layout ? row->layout : "auto";
  int at = snprintf(out, outlen, "%s_%s_%s_%s_t%d", s->suite->workloads[row->workload].name,
                    xattn_dtype_name(row->dtype), rv, rl, row->threads);
  /* rows that differ only in a run setting get regions of their own */
  if (at > 0 && (size_t)at < outlen && (row->schedule || row->kv_splits || row->prefetch))
    at += snprintf(out + at, outlen - (size_t)at, "_%s_s%d_pf%d", xattn_schedule_name(row->schedule), row->kv_splits,
                   row->prefetch);
  if (at > 0 && (size_t)at < outlen && row->prefetch_level)
    snprintf(out + at, outlen - (size_t)at, "_pfl%d", row->prefetch_level);
}

int xb_row_call(xb_session *s, int r, char *err, size_t errlen) {
  const xb_row *row = &s->rows[r];
  switch (row->impl) {
  case XB_IMPL_PEAK:
    xb_peak_run(peak_kind_of(row), row->threads, 1 << 16);
    return 0;
  case XB_IMPL_REFERENCE:
    if (xattn_reference(&s->pb.p, ref_out) != XATTN_OK) {
      snprintf(err, errlen, "reference: %s", xattn_last_error());
      return -1;
    }
    return 0;
  case XB_IMPL_BLAS:
    return xb_blas_attention(&s->pb, row->threads, s->opt.blas_threading, err, errlen);
  case XB_IMPL_XATTN: {
    xattn_options xo = row_options(row);
    char region[256];
    if (xb_likwid_enabled()) {
      likwid_region_name(s, row, region, sizeof region);
      xb_likwid_begin(region, row->threads);
    }
    xattn_status st = xattn_extend_attention(&s->pb.p, &xo);
    if (xb_likwid_enabled()) xb_likwid_end(region, row->threads);
    if (st != XATTN_OK) {
      snprintf(err, errlen, "xattn: %s: %s", xattn_status_string(st), xattn_last_error());
      return -1;
    }
    return 0;
  }
  }
  return -1;
}

/* --check: one untimed call, compared with the expected output (docs/contract.md §3
 * tolerances). A failure skips the row with the worst element's error. */
static int check_row(xb_session *s, int r, char *err, size_t errlen) {
  xb_problem *pb = &s->pb;
  const xattn_problem *p = &pb->p;
  const int64_t n = p->total_tokens * p->heads_q * p->head_dim_v;
  float *got = malloc(sizeof(float) * (size_t)n);
  if (!got) {
    snprintf(err, errlen, "check: out of memory");
    return -1;
  }
  if (!check_expected) {
    check_expected = malloc(sizeof(double) * (size_t)n);
    if (!check_expected) {
      free(got);
      snprintf(err, errlen, "check: out of memory");
      return -1;
    }
    if (pb->flops <= s->opt.reference_max_flops) {
      check_source = "reference";
      if (xattn_reference(p, check_expected) != XATTN_OK) {
        snprintf(err, errlen, "check: reference: %s", xattn_last_error());
        free(got);
        return -1;
      }
    } else {
      /* the baseline accumulates in f32 and stores in the problem's dtype,
       * like the kernel: within docs/contract.md §3 tolerances of the reference (ctest
       * bench.baseline_vs_reference), so a kernel within them of it is right */
      check_source = "blas baseline";
      if (xb_blas_attention(pb, s->rows[r].threads, s->opt.blas_threading, err, errlen) != 0) {
        free(got);
        return -1;
      }
      xb_problem_output_f32(pb, got);
      for (int64_t i = 0; i < n; i++) check_expected[i] = got[i];
    }
  }
  xb_problem_clear_output(pb);
  if (xb_row_call(s, r, err, errlen) != 0) {
    free(got);
    return -1;
  }
  xb_problem_output_f32(pb, got);
  double ratio = xb_error_ratio(pb, got, check_expected);
  free(got);
  if (!(ratio <= 1.0)) {
    snprintf(err, errlen, "check: output differs from the %s by %.3g x the %s tolerance", check_source, ratio,
             xattn_dtype_name(p->dtype));
    return -1;
  }
  return 0;
}

static xb_peak_kind peak_kind_of(const xb_row *row) {
  if (row->isa && strcmp(row->isa, "amx") == 0) return XB_PEAK_AMX_BF16;
  return row->dtype == XATTN_BF16 ? XB_PEAK_BF16 : XB_PEAK_FP32;
}

static blas_entry *blas_find(const char *key, int create) {
  for (int i = 0; i < blas_count; i++)
    if (strcmp(blas_table[i].key, key) == 0) return &blas_table[i];
  if (!create) return NULL;
  blas_entry *grown = realloc(blas_table, sizeof *blas_table * (size_t)(blas_count + 1));
  if (!grown) return NULL; /* out of memory: the table so far stays */
  blas_table = grown;
  blas_entry *e = &blas_table[blas_count++];
  memset(e, 0, sizeof *e);
  snprintf(e->key, sizeof e->key, "%s", key);
  return e;
}

void xb_blas_record(xb_session *s, int r, int64_t iterations, double seconds_per_call) {
  blas_entry *e = blas_find(s->rows[r].pair_key, 1);
  if (e && e->n < 256) { /* no entry (out of memory): the xattn row measures its own */
    e->iters[e->n] = iterations;
    e->secs[e->n++] = seconds_per_call;
  }
}

/* Median over the calls Google Benchmark reports: its repetitions all use the
 * final (largest) iteration count; smaller counts were its estimation runs. */
static double blas_median(const blas_entry *e) {
  int64_t most = 0;
  for (int i = 0; i < e->n; i++)
    if (e->iters[i] > most) most = e->iters[i];
  double v[256];
  int n = 0;
  for (int i = 0; i < e->n; i++)
    if (e->iters[i] == most) v[n++] = e->secs[i];
  return xc_median(v, n);
}

int xb_row_counters(xb_session *s, int r, double sec, xb_counters *c, char *err, size_t errlen) {
  const xb_row *row = &s->rows[r];
  memset(c, 0, sizeof *c);
  const int ti = thread_index(s, row->threads);
  double peak = s->peak_fp32[ti][row->placement];
  if (row->impl == XB_IMPL_PEAK) {
    const xb_peak_kind k = peak_kind_of(row);
    c->flops = xb_peak_flops_per_thread(k, 1 << 16) * row->threads;
    c->gflops = c->flops / sec * 1e-9;
    const double own = k == XB_PEAK_AMX_BF16 ? s->peak_amx[ti][row->placement]
                       : k == XB_PEAK_BF16   ? s->peak_bf16[ti][row->placement]
                                             : peak;
    c->pct_peak = own > 0 ? 100.0 * c->gflops / own : 0;
    return 0;
  }
  c->flops = s->pb.flops;
  c->visible_pairs = (double)s->pb.visible_pairs;
  c->input_bytes = (double)s->pb.input_bytes;
  c->gflops = s->pb.flops / sec * 1e-9;
  c->tokens_per_s = (double)s->pb.p.total_tokens / sec;
  if (row->impl == XB_IMPL_XATTN && row->dtype == XATTN_BF16) {
    /* bf16 rows count against the peak of the instructions their ISA uses:
     * AMX tiles ("amx"), the bf16 dot product ("*bf16*"), else (converted to
     * fp32) the fp32 FMA peak */
    xattn_options xo = row_options(row);
    const char *isa = NULL;
    if (xattn_resolve(&s->pb.p, &xo, NULL, NULL, &isa, NULL) == XATTN_OK && isa) {
      if (strcmp(isa, "amx") == 0 && s->peak_amx[ti][row->placement] > 0) peak = s->peak_amx[ti][row->placement];
      else if (strstr(isa, "bf16") && s->peak_bf16[ti][row->placement] > 0) peak = s->peak_bf16[ti][row->placement];
    }
  }
  c->pct_peak = peak > 0 ? 100.0 * c->gflops / peak : 0;
  c->bytes_must_read = s->pb_must_read.total;
  c->gbps = c->bytes_must_read / sec * 1e-9;
  c->gather_roof_gbps = s->pb_gather.gbps;
  if (s->pb_gather.best >= 0) {
    c->gather_roof_tile = xb_gather_strategies[s->pb_gather.best].tile_tokens;
    c->gather_roof_prefetch_kib = xb_gather_strategies[s->pb_gather.best].prefetch_kib;
    c->gather_roof_prefetch_l1 = xb_gather_strategies[s->pb_gather.best].prefetch_l1;
  }
  c->stream_roof_gbps = s->stream_gbps[ti][row->placement];
  c->pct_mem_roof = c->gather_roof_gbps > 0 ? 100.0 * c->gbps / c->gather_roof_gbps : 0;
  if (row->impl == XB_IMPL_XATTN && !s->opt.no_baseline) {
    blas_entry *e = blas_find(row->pair_key, 0);
    if (!e) {
      /* the BLAS row was filtered out: measure it here, outside the timed loop */
      e = blas_find(row->pair_key, 1);
      if (!e) {
        snprintf(err, errlen, "blas baseline: out of memory");
        return -1;
      }
      if (xb_blas_attention(&s->pb, row->threads, s->opt.blas_threading, err, errlen) != 0) return -1; /* warm-up */
      for (int i = 0; i < 3; i++) {
        if (s->opt.flush_caches) xb_row_flush(s); /* as its own row would have run */
        double t0 = xc_now();
        if (xb_blas_attention(&s->pb, row->threads, s->opt.blas_threading, err, errlen) != 0) return -1;
        e->iters[e->n] = 1;
        e->secs[e->n++] = xc_now() - t0;
      }
    }
    double base = blas_median(e);
    c->speedup_vs_blas = base > 0 ? base / sec : 0;
    c->has_speedup = 1;
  }
  return 0;
}

void xb_progress(xb_session *s, int r) {
  if (r == s->progress_last_row) return;
  s->progress_last_row = r;
  double now = xc_now();
  if (s->progress_done == 0) s->progress_t0 = now;
  s->progress_done++;
  char eta[32] = "?";
  if (s->progress_done > 1) {
    double per = (now - s->progress_t0) / (s->progress_done - 1);
    xb_format_duration(per * (s->progress_total - s->progress_done + 1), eta, sizeof eta);
  }
  fprintf(stderr, "[%d/%d] %s eta %s\n", s->progress_done, s->progress_total, s->rows[r].name, eta);
  fflush(stderr);
}

/* ---- context -------------------------------------------------------------- */

/* Context key xattn_workload_classes: per workload name its mode, longest
 * prefix and longest extend, as one JSON object (the row names carry only the
 * workload's name; the report groups rows by mode and tells the memory-bound
 * few-row workloads from the rest with it, without parsing suites again). */
static void add_workload_classes(const xb_suite *su, void (*add)(const char *, const char *, void *), void *ctx) {
  cJSON *o = cJSON_CreateObject();
  for (int i = 0; o && i < su->count; i++) {
    const xb_workload *w = &su->workloads[i];
    int64_t max_p = 0, max_e = 0;
    for (int b = 0; b < w->batch; b++) {
      if (w->prefix_lens[b] > max_p) max_p = w->prefix_lens[b];
      if (w->extend_lens[b] > max_e) max_e = w->extend_lens[b];
    }
    cJSON *c = cJSON_CreateObject();
    if (!c) break;
    cJSON_AddStringToObject(c, "mode", xattn_mode_name(w->mode));
    cJSON_AddNumberToObject(c, "max_prefix", (double)max_p);
    cJSON_AddNumberToObject(c, "max_extend", (double)max_e);
    cJSON_AddItemToObject(o, w->name, c);
  }
  char *text = o ? cJSON_PrintUnformatted(o) : NULL;
  add("xattn_workload_classes", text ? text : "{}", ctx);
  cJSON_free(text);
  cJSON_Delete(o);
}

void xb_context(xb_session *s, void (*add)(const char *, const char *, void *), void *ctx) {
  char buf[1024];
  add("xattn_commit", xc_build_commit(), ctx);
  int dirty = xc_build_dirty();
  add("xattn_dirty", dirty < 0 ? "unknown" : dirty ? "true" : "false", ctx);
  add("xattn_machine", s->machine, ctx);
  add("xattn_cpu_model", xb_cpu_model(), ctx);
  add("xattn_cpu_flags", xb_cpu_flags(), ctx);
  add("xattn_topology", xb_topology_summary(s->topo), ctx);
  add("xattn_compiler", xc_build_compiler(), ctx);
  add("xattn_cflags", xc_build_cflags(), ctx);
  char rel[4096];
  add("xattn_config_header", xb_repo_relative(xattn_config_header_path(), rel, sizeof rel), ctx);
  add("xattn_config_provenance", xattn_config_provenance(), ctx);
  /* the CPU class (docs/formats.md §4.1) and the one whose config rows ran */
  xattn_cpu_class cpu;
  const char *cls = "", *why = "";
  if (xattn_cpu_class_get(&cpu) != XATTN_OK) snprintf(cpu.name, sizeof cpu.name, "unknown");
  xattn_resolve_cpu_class(&cls, &why);
  add("xattn_cpu_class", cpu.name, ctx);
  add("xattn_config_cpu_class", cls, ctx);
  snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->opt.seed);
  add("xattn_seed", buf, ctx);
  buf[0] = 0;
  for (int i = 0; i < s->opt.nplacements; i++)
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? ";" : "", s->opt.placements[i].name);
  add("xattn_placement", buf, ctx);
  buf[0] = 0;
  for (int i = 0; i < s->nthreads; i++)
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%d", i ? "," : "", s->threads[i]);
  add("xattn_threads", buf, ctx);
  /* the plain keys hold the peak at the largest thread count of the first
   * placement; the _by_threads keys hold every measured one */
  const int last = s->nthreads - 1;
  snprintf(buf, sizeof buf, "%.2f", s->peak_fp32[last][0]);
  add("xattn_peak_fp32_gflops", buf, ctx);
  snprintf(buf, sizeof buf, "%.2f", s->peak_bf16[last][0]);
  add("xattn_peak_bf16_gflops", buf, ctx);
  snprintf(buf, sizeof buf, "%.2f", s->peak_amx[last][0]);
  add("xattn_peak_amx_gflops", buf, ctx);
  static const char *keys[3] = {"xattn_peak_fp32_gflops_by_threads", "xattn_peak_bf16_gflops_by_threads",
                                "xattn_peak_amx_gflops_by_threads"};
  for (int k = 0; k < 3; k++) {
    buf[0] = 0;
    for (int pi = 0; pi < s->opt.nplacements; pi++)
      for (int ti = 0; ti < s->nthreads; ti++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s:%d=%.2f", buf[0] ? ";" : "",
                 s->opt.placements[pi].name, s->threads[ti],
                 k == 2 ? s->peak_amx[ti][pi] : k ? s->peak_bf16[ti][pi] : s->peak_fp32[ti][pi]);
    add(keys[k], buf, ctx);
  }
  buf[0] = 0;
  for (int pi = 0; pi < s->opt.nplacements; pi++)
    for (int ti = 0; ti < s->nthreads; ti++)
      snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s:%d=%.2f", buf[0] ? ";" : "",
               s->opt.placements[pi].name, s->threads[ti], s->stream_gbps[ti][pi]);
  add("xattn_stream_roof_gbps_by_threads", buf, ctx);
  snprintf(buf, sizeof buf, "%.2f", s->stream_gbps[last][0]);
  add("xattn_stream_roof_gbps", buf, ctx);
  add("xattn_peak_fp32_isa", xb_peak_isa(XB_PEAK_FP32), ctx);
  add("xattn_peak_bf16_isa", xb_peak_isa(XB_PEAK_BF16) ? xb_peak_isa(XB_PEAK_BF16) : "none", ctx);
  add("xattn_peak_amx_isa", xb_peak_isa(XB_PEAK_AMX_BF16) ? "amx" : "none", ctx);
  add("xattn_suite", s->suite->name, ctx);
  add("xattn_label", s->opt.label ? s->opt.label : s->suite->name, ctx);
  add("xattn_suite_path", xb_repo_relative(s->suite->path, rel, sizeof rel), ctx);
  add_workload_classes(s->suite, add, ctx);
  add("xattn_best_isa", xattn_best_isa(), ctx);
  add("xattn_blas_threading", s->opt.no_baseline ? "none" : xb_blas_threading_name(s->opt.blas_threading), ctx);
  add("xattn_likwid", xb_likwid_enabled() ? "marker" : "off", ctx);
  add("xattn_flush_caches", s->opt.flush_caches ? "true" : "false", ctx);
  add("xattn_cache_pages",
      s->opt.cache_pages == XB_CACHE_PAGES_HUGE && !xb_huge_pages_available() ? "huge-unavailable"
                                                                              : xb_cache_pages_name(s->opt.cache_pages),
      ctx);
  snprintf(buf, sizeof buf, "%d.%d", XATTN_VERSION_MAJOR, XATTN_VERSION_MINOR);
  add("xattn_version", buf, ctx);
}
