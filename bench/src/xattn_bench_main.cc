// xattn-bench: Google Benchmark glue only. Everything else (flags, rows,
// calls, counters, context, results naming) is C in bench_run.c and the
// xattn_benchcore library.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cstring>
#include <strings.h>
#include <dirent.h>
#include <regex>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "bench_run.h"
#include "xattn_bench/machine.h"
#include "xattn_bench/salvage.h"
#include "xattn_common/build_info.h"
#include "xattn_common/hash.h"
#include "xattn_bench/timing.h"
#include "xattn_common/process.h"

namespace {

xb_session g_session;
// per row: measured at least once / failed at least once (exit status, publishing)
std::vector<char> g_measured, g_failed;

std::string g_first_error; // shown in the summary line

void skip_row(benchmark::State &state, int r, const char *err) {
  g_failed[r] = 1;
  if (g_first_error.empty()) g_first_error = err;
  state.SkipWithError(err);
}

void run_row(benchmark::State &state, int r) {
  char err[512];
  xb_progress(&g_session, r);
  if (xb_row_prepare(&g_session, r, err, sizeof err) != 0) {
    skip_row(state, r, err);
    return;
  }
  int64_t iters = 0;
  double t0 = xc_now(), called = 0;
  /* --flush-caches: each call starts with its problem in memory only; the
     flush is untimed (paused), so sec counts the calls alone */
  const bool flush = g_session.opt.flush_caches && g_session.rows[r].impl != XB_IMPL_PEAK;
  for (auto _ : state) {
    if (flush) {
      state.PauseTiming();
      xb_row_flush(&g_session);
      state.ResumeTiming();
    }
    const double c0 = flush ? xc_now() : 0;
    if (xb_row_call(&g_session, r, err, sizeof err) != 0) {
      skip_row(state, r, err);
      break;
    }
    if (flush) called += xc_now() - c0;
    iters++;
  }
  double sec = iters ? (flush ? called : xc_now() - t0) / (double)iters : 0;
  if (!iters || sec <= 0) return;
  const xb_row &row = g_session.rows[r];
  if (row.impl == XB_IMPL_BLAS) xb_blas_record(&g_session, r, iters, sec);
  xb_counters c;
  if (xb_row_counters(&g_session, r, sec, &c, err, sizeof err) != 0) {
    skip_row(state, r, err);
    return;
  }
  g_measured[r] = 1;
  state.counters["gflops"] = c.gflops;
  state.counters["pct_peak"] = c.pct_peak;
  state.counters["flops"] = c.flops;
  if (row.impl != XB_IMPL_PEAK) {
    state.counters["tokens_per_s"] = c.tokens_per_s;
    state.counters["visible_pairs"] = c.visible_pairs;
    state.counters["input_bytes"] = benchmark::Counter(c.input_bytes, benchmark::Counter::kDefaults, benchmark::Counter::kIs1024);
    state.counters["bytes_must_read"] = c.bytes_must_read;
    state.counters["gbps"] = c.gbps;
    state.counters["pct_mem_roof"] = c.pct_mem_roof;
    state.counters["gather_roof_gbps"] = c.gather_roof_gbps;
    state.counters["stream_roof_gbps"] = c.stream_roof_gbps;
    state.counters["gather_roof_tile"] = c.gather_roof_tile;
    state.counters["gather_roof_prefetch_kib"] = c.gather_roof_prefetch_kib;
    state.counters["gather_roof_prefetch_l1"] = c.gather_roof_prefetch_l1;
  }
  if (c.has_speedup) state.counters["speedup_vs_blas"] = c.speedup_vs_blas;
}

void add_context(const char *key, const char *value, void *) { benchmark::AddCustomContext(key, value); }

// Benchmarks Google Benchmark will run: its filter, with its "-" negation,
// over the rows registered (those --resume leaves).
int count_selected(const std::string &filter, const std::set<std::string> &done) {
  std::string f = filter.empty() || filter == "all" ? "." : filter;
  bool negate = !f.empty() && f[0] == '-';
  if (negate) f = f.substr(1);
  std::regex re;
  bool every = false; // a filter std::regex cannot read: count every row, as before
  try {
    re = std::regex(f, std::regex::extended);
  } catch (...) {
    every = true;
  }
  int n = 0;
  for (int i = 0; i < g_session.nrows; i++)
    n += !done.count(g_session.rows[i].name) && (every || std::regex_search(g_session.rows[i].name, re) != negate);
  return n;
}

std::string default_results_dir() {
  const char *env = std::getenv("XATTN_RESULTS_DIR");
  if (env && *env) return env;
  // the source tree's results/ while it exists (a build tree), else ./results
  // (an installed binary on another machine)
  struct stat st;
  if (stat(xc_build_source_dir(), &st) == 0 && S_ISDIR(st.st_mode)) return std::string(xc_build_source_dir()) + "/results";
  return "results";
}

// A killed run leaves its Google Benchmark temp file (.tmp-STAMP-PID.json,
// a JSON document cut anywhere) next to the results. The next run into the
// same folder, once that writer is gone (xc_pid_running, the rule
// tune/release_cleanup.sh applies too), keeps its complete benchmarks as
// STAMP_<label>-killed.json (xb_salvage_killed), removes the temp file, and
// says both.
void settle_stale_tmp(const char *subdir) {
  DIR *d = opendir(subdir);
  if (!d) return;
  while (struct dirent *e = readdir(d)) {
    char stamp[64];
    long pid = 0;
    if (std::sscanf(e->d_name, ".tmp-%63[0-9TZ]-%ld.json", stamp, &pid) != 2 || pid <= 0) continue;
    if (xc_pid_running(pid)) continue; // its writer may still be at work (a zombie is not)
    std::string path = std::string(subdir) + "/" + e->d_name;
    char kept_path[4300], why[1024];
    const int kept = xb_salvage_killed(path.c_str(), subdir, stamp, pid, kept_path, sizeof kept_path, why, sizeof why);
    if (kept < 0) {
      std::fprintf(stderr, "xattn-bench: %s (left in place)\n", why);
      continue;
    }
    if (kept > 0)
      std::fprintf(stderr, "xattn-bench: kept the %d complete benchmark(s) of a killed run (pid %ld) as %s\n", kept, pid,
                   kept_path);
    if (std::remove(path.c_str()) == 0)
      std::fprintf(stderr, "xattn-bench: removed %s, the partial results of a killed run (pid %ld)%s\n", path.c_str(),
                   pid, kept ? "" : ": no benchmark in it was complete");
  }
  closedir(d);
}

// --resume's key: which runs count as earlier runs of this one. An FNV-1a
// hash of the command line less --resume and --results-dir (the folder
// searched is the results folder itself), taken before xb_options_parse
// consumes it; the label goes in with the rest. Written to the context as
// xattn_resume_key.
std::string resume_key_of(int argc, char **argv) {
  uint64_t h = XC_FNV1A64_OFFSET;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--resume") == 0 || std::strncmp(argv[i], "--results-dir=", 14) == 0) continue;
    if (std::strcmp(argv[i], "--results-dir") == 0) {
      i++;
      continue;
    }
    h = xc_fnv1a64_str(h, argv[i]);
    h = xc_fnv1a64_bytes(h, "", 1); // argument boundaries count: "a b" is not "ab"
  }
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
  return hex;
}

// A boolean flag's value as Google Benchmark reads it (IsTruthyFlagValue in
// its commandlineflags.cc): empty is true; one character is true when it is a
// letter or digit other than 0, f, n; else anything but false, no, off (any
// case). NULL (an unset variable): false.
bool truthy(const char *v) {
  if (!v) return false;
  if (!v[0]) return true;
  if (!v[1]) return std::isalnum((unsigned char)v[0]) && !std::strchr("0fFnN", v[0]);
  return strcasecmp(v, "false") != 0 && strcasecmp(v, "no") != 0 && strcasecmp(v, "off") != 0;
}

// Whether arg is Google Benchmark's boolean flag `name` ("--name" or
// "--name=VALUE"); if so, *on takes its value as Google Benchmark reads it.
bool gb_bool_flag(const char *arg, const char *name, bool *on) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, "--", 2) != 0 || std::strncmp(arg + 2, name, n) != 0) return false;
  const char *rest = arg + 2 + n;
  if (*rest != '\0' && *rest != '=') return false;
  *on = *rest == '\0' || truthy(rest + 1);
  return true;
}

void add_measured(const char *name, void *set) { static_cast<std::set<std::string> *>(set)->insert(name); }

// The rows earlier runs with this key measured, from every result in subdir
// (hidden temp files excepted: settle_stale_tmp has published what they
// held); the files that held any are counted in *files.
std::set<std::string> measured_rows(const char *subdir, const std::string &key, int *files) {
  std::set<std::string> done;
  *files = 0;
  DIR *d = opendir(subdir);
  if (!d) return done;
  while (struct dirent *e = readdir(d)) {
    const size_t len = std::strlen(e->d_name);
    if (e->d_name[0] == '.' || len < 5 || std::strcmp(e->d_name + len - 5, ".json") != 0) continue;
    std::string path = std::string(subdir) + "/" + e->d_name;
    *files += xb_measured_rows(path.c_str(), key.c_str(), add_measured, &done) > 0;
  }
  closedir(d);
  return done;
}

}  // namespace

int main(int argc, char **argv) {
  char err[1024];
  const std::string resume_key = resume_key_of(argc, argv);
  int rc = xb_options_parse(&g_session.opt, &argc, argv, err, sizeof err);
  if (rc == 1) return 0;
  if (rc != 0) {
    std::fprintf(stderr, "xattn-bench: %s\n", err);
    return 2;
  }
  if (g_session.opt.list_suites) {
    std::vector<char> buf(1 << 16);
    xb_suite_list(buf.data(), buf.size());
    std::fputs(buf.data(), stdout);
    return 0;
  }
  // Our results file: Google Benchmark's own JSON file reporter writes to a
  // temp file next to the final name, which we then publish with link().
  // Google Benchmark's boolean flags we act on, read as it reads them: its
  // environment variable first, then the flags (the last one counts)
  bool user_out = false, user_reps = false, user_display = false,
       interleaved = truthy(std::getenv("BENCHMARK_ENABLE_RANDOM_INTERLEAVING")),
       listing = truthy(std::getenv("BENCHMARK_LIST_TESTS"));
  int reps = g_session.opt.repetitions;
  for (int i = 1; i < argc; i++) {
    if (std::strncmp(argv[i], "--benchmark_out=", 16) == 0) user_out = true;
    if (std::strncmp(argv[i], "--benchmark_repetitions=", 24) == 0) user_reps = true, reps = std::atoi(argv[i] + 24);
    // Google Benchmark's own flag: every repetition of every row in a random
    // order, so that rows compared within one run (--prefetch, --layouts,
    // --variants values) share the machine's drift (bench/README.md)
    gb_bool_flag(argv[i], "benchmark_enable_random_interleaving", &interleaved);
    gb_bool_flag(argv[i], "benchmark_list_tests", &listing);
    if (std::strncmp(argv[i], "--benchmark_display_aggregates_only", 35) == 0) user_display = true;
  }
  if (listing) user_out = true; // listing runs nothing: no results file
  if (xb_session_open(&g_session, err, sizeof err) != 0) {
    std::fprintf(stderr, "xattn-bench: %s\n", err);
    return 2;
  }
  std::string results_dir = g_session.opt.results_dir ? g_session.opt.results_dir : default_results_dir();
  // an explicit --benchmark_out (or a listing) means the user decides where output goes
  bool write_results = !user_out && !results_dir.empty() && results_dir != "none";
  char subdir[4096] = "", tmp_path[4200] = "", stamp[32];
  xb_utc_stamp(stamp, sizeof stamp);
  std::vector<std::string> args(argv, argv + argc);
  if (write_results) {
    if (xb_results_subdir(results_dir.c_str(), g_session.machine, g_session.commit_dir, subdir, sizeof subdir, err,
                          sizeof err) != 0) {
      std::fprintf(stderr, "xattn-bench: %s\n", err);
      return 2;
    }
    settle_stale_tmp(subdir);
    std::snprintf(tmp_path, sizeof tmp_path, "%s/.tmp-%s-%d.json", subdir, stamp, (int)getpid());
    args.push_back(std::string("--benchmark_out=") + tmp_path);
    args.push_back("--benchmark_out_format=json");
  }
  // Repetitions as Google Benchmark's flag, not per benchmark: per-benchmark
  // Repetitions() would append "/repeats:N" to every name (docs/formats.md §3 names
  // must not depend on the repetition count).
  if (!user_reps) args.push_back("--benchmark_repetitions=" + std::to_string(g_session.opt.repetitions));
  if (!user_display) args.push_back("--benchmark_display_aggregates_only=true");
  std::vector<char *> gargv;
  for (auto &a : args) gargv.push_back(a.data());
  gargv.push_back(nullptr);
  int gargc = (int)gargv.size() - 1;

  g_measured.assign((size_t)g_session.nrows, 0);
  g_failed.assign((size_t)g_session.nrows, 0);
  std::set<std::string> done;
  if (g_session.opt.resume) {
    if (!write_results) {
      std::fprintf(stderr, "xattn-bench: --resume: needs the results folder (not --results-dir none or --benchmark_out)\n");
      return 2;
    }
    int files = 0;
    done = measured_rows(subdir, resume_key, &files);
    int left = 0;
    for (int r = 0; r < g_session.nrows; r++) left += !done.count(g_session.rows[r].name);
    std::fprintf(stderr, "xattn-bench: --resume: %d of %d rows measured by %d earlier run(s) of this command in %s; %d to measure\n",
                 g_session.nrows - left, g_session.nrows, files, subdir, left);
    if (left == 0) {
      xb_session_close(&g_session);
      return 0;
    }
  }
  for (int r = 0; r < g_session.nrows; r++) {
    if (done.count(g_session.rows[r].name)) continue;
    auto *b = benchmark::RegisterBenchmark(g_session.rows[r].name, run_row, r);
    b->UseRealTime()->Unit(benchmark::kMillisecond);
    b->ComputeStatistics("min", [](const std::vector<double> &v) {
      double m = v.empty() ? 0 : v[0];
      for (double x : v) m = x < m ? x : m;
      return m;
    });
  }
  benchmark::Initialize(&gargc, gargv.data());
  if (benchmark::ReportUnrecognizedArguments(gargc, gargv.data())) return 2;
  g_session.progress_total = count_selected(benchmark::GetBenchmarkFilter(), done);
  // interleaved, a row comes back once per repetition: progress counts visits
  // (two repetitions of one row in a row count once, so it may end short)
  if (interleaved) g_session.progress_total *= reps > 1 ? reps : 1;
  xb_context(&g_session, add_context, nullptr);
  add_context("xattn_resume_key", resume_key.c_str(), nullptr);
  xb_likwid_init();
  size_t ran = benchmark::RunSpecifiedBenchmarks();
  xb_likwid_close();
  benchmark::Shutdown();
  int measured = 0, failed = 0;
  for (int r = 0; r < g_session.nrows; r++) measured += g_measured[r], failed += g_failed[r] && !g_measured[r];
  int status = 0;
  if (failed) std::fprintf(stderr, "xattn-bench: %d row(s) failed (error_occurred in the results)\n", failed);
  if (!listing && (!ran || !measured)) { // a listing ran nothing on purpose: it succeeds
    // nothing to compare or plot: a results file would only look like a run
    std::fprintf(stderr, "xattn-bench: no row was measured (%zu run, %d failed%s%s); no results file written\n", ran,
                 failed, g_first_error.empty() ? "" : ", first: ", g_first_error.c_str());
    if (write_results) std::remove(tmp_path);
    write_results = false;
    status = 1;
  }
  if (write_results) {
    char final_path[4300];
    const char *label = g_session.opt.label ? g_session.opt.label : g_session.suite->name;
    if (xb_publish_result(tmp_path, subdir, stamp, label, final_path, sizeof final_path, err, sizeof err) != 0) {
      std::fprintf(stderr, "xattn-bench: %s\n", err);
      status = 2;
    } else {
      std::fprintf(stderr, "xattn-bench: results in %s\n", final_path);
    }
  }
  xb_session_close(&g_session);
  return status;
}
