// xattn-overhead-bench: what a call costs beyond its kernels, on a decode-sized
// call (1 request, E = 1, P = 4096, H_Q 32, H_KV 8, D = DV = 128):
//   extend_attention  xattn_extend_attention: plan + workspace + run + free
//   plan_run          xattn_plan_run of a plan made once (the decode loop)
//   plan_create       xattn_plan_create + xattn_plan_destroy alone (no kernel)
// Run with --benchmark_repetitions=N --benchmark_enable_random_interleaving=true
// (the defaults here) and compare medians of the same run; bench/README.md.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "xattn/xattn_introspect.h"
#include "xattn_bench/problem.h"

namespace {

struct Decode {
  xb_workload w{};
  int32_t prefix = 4096, extend = 1;
  xb_problem pb{};
  bool ok = false;
  Decode(xattn_dtype dt, int threads) {
    std::snprintf(w.name, sizeof w.name, "decode-p4096");
    w.batch = 1;
    w.prefix_lens = &prefix;
    w.extend_lens = &extend;
    w.heads_q = 32;
    w.heads_kv = 8;
    w.head_dim = w.head_dim_v = 128;
    w.mode = XATTN_MODE_CAUSAL;
    w.align = XATTN_ALIGN_BOTTOM_RIGHT;
    w.window_left = w.window_right = -1;
    w.seed = 42;
    char err[256];
    ok = xb_problem_build(&pb, &w, dt, 42, threads, err, sizeof err) == 0;
    if (!ok) std::fprintf(stderr, "xattn-overhead-bench: %s\n", err);
  }
  ~Decode() {
    if (ok) xb_problem_free(&pb);
  }
};

xattn_options options_for(int threads) {
  xattn_options o;
  xattn_options_init(&o);
  o.threads = threads;
  return o;
}

void label(benchmark::State &st, const xattn_problem &p, const xattn_options &o) {
  const char *v = nullptr, *l = nullptr, *isa = nullptr;
  int t = 0;
  if (xattn_resolve(&p, &o, &v, &l, &isa, &t) == XATTN_OK)
    st.SetLabel(std::string(isa) + "/" + v + "/" + l + "/t" + std::to_string(t));
}

void BM_extend_attention(benchmark::State &st, xattn_dtype dt) {
  const int threads = static_cast<int>(st.range(0));
  Decode d(dt, threads);
  if (!d.ok) return st.SkipWithError("problem build failed");
  const xattn_options o = options_for(threads);
  for (auto _ : st)
    if (xattn_extend_attention(&d.pb.p, &o) != XATTN_OK) return st.SkipWithError(xattn_last_error());
  label(st, d.pb.p, o);
}

void BM_plan_run(benchmark::State &st, xattn_dtype dt) {
  const int threads = static_cast<int>(st.range(0));
  Decode d(dt, threads);
  if (!d.ok) return st.SkipWithError("problem build failed");
  const xattn_options o = options_for(threads);
  xattn_plan *plan = nullptr;
  if (xattn_plan_create(&d.pb.p, &o, &plan) != XATTN_OK) return st.SkipWithError(xattn_last_error());
  const size_t n = xattn_plan_workspace_size(plan);
  void *ws = n ? std::aligned_alloc(64, n) : nullptr;
  for (auto _ : st)
    if (xattn_plan_run(plan, &d.pb.p, ws) != XATTN_OK) {
      st.SkipWithError(xattn_last_error());
      break;
    }
  label(st, d.pb.p, o);
  std::free(ws);
  xattn_plan_destroy(plan);
}

void BM_plan_create(benchmark::State &st, xattn_dtype dt) {
  const int threads = static_cast<int>(st.range(0));
  Decode d(dt, threads);
  if (!d.ok) return st.SkipWithError("problem build failed");
  const xattn_options o = options_for(threads);
  for (auto _ : st) {
    xattn_plan *plan = nullptr;
    if (xattn_plan_create(&d.pb.p, &o, &plan) != XATTN_OK) return st.SkipWithError(xattn_last_error());
    benchmark::DoNotOptimize(plan);
    xattn_plan_destroy(plan);
  }
}

}  // namespace

BENCHMARK_CAPTURE(BM_extend_attention, bf16, XATTN_BF16)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_plan_run, bf16, XATTN_BF16)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_plan_create, bf16, XATTN_BF16)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_extend_attention, f32, XATTN_F32)->Arg(1)->Arg(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_plan_run, f32, XATTN_F32)->Arg(1)->Arg(2)->UseRealTime();

int main(int argc, char **argv) {
  // interleaved repetitions by default, so that load drift hits both entry points alike
  std::vector<char *> args(argv, argv + argc);
  static char reps[] = "--benchmark_repetitions=9", inter[] = "--benchmark_enable_random_interleaving=true",
              aggr[] = "--benchmark_report_aggregates_only=true";
  bool has_reps = false;
  for (int i = 1; i < argc; i++) has_reps |= std::strncmp(argv[i], "--benchmark_repetitions", 23) == 0;
  if (!has_reps) {
    args.insert(args.begin() + 1, reps);
    args.insert(args.begin() + 1, inter);
    args.insert(args.begin() + 1, aggr);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
