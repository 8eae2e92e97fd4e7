/* Random problems: shapes, lengths, heads, dims, modes, windows, dtypes, caps,
 * sinks, strides and tables all drawn from a seed, each run under a few random
 * run configurations and compared with the reference. Complements the fixed
 * grids of test_diff with shapes nobody thought of.
 *
 *   test_fuzz [--iterations N] [--seed S] [--runs R] [--budget TOKENS] [--max-work W]
 *
 * --budget bounds the drawn prefix and total extend lengths (default 700),
 * --max-work the reference's rows x keys x heads x (D + DV) (default 2e7).
 *
 * A failure prints the seed and iteration; rerun with that --seed and
 * --iterations 1 to get only it (XATTN_TEST_DUMP=DIR writes it as a case).
 */
#define _POSIX_C_SOURCE 200809L
#include "xattn_common/clock.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/tproblem.h"

static int pick(uint64_t *r, int n) { return (int)(tp_rand(r) % (uint64_t)n); }

/* Lengths biased towards the interesting: 0, 1, block edges +-1, and a few long ones. */
static int32_t length(uint64_t *r, int max) {
  static const int32_t edges[] = {0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257};
  int32_t v = pick(r, 3) ? edges[pick(r, (int)(sizeof edges / sizeof *edges))] : pick(r, max + 1);
  return v > max ? max : v;
}

int main(int argc, char **argv) {
  int iterations = 40, runs = 4, budget = 700;
  double max_work = 2e7;
  uint64_t seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--iterations")) iterations = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--budget")) budget = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--max-work")) max_work = atof(argv[i + 1]);
    else {
      fprintf(stderr, "usage: test_fuzz [--iterations N] [--seed S] [--runs R] [--budget TOKENS] [--max-work W]\n");
      return 2;
    }
  }
  tp_exec *execs;
  int nexec = tp_exec_list(TP_LEVEL_REDUCED, &execs);
  if (nexec <= 0) return 1;
  static const int heads[][2] = {{1, 1}, {2, 1}, {4, 1}, {4, 2}, {8, 2}, {3, 3}, {6, 2}, {5, 5}};
  static const int dims[][2] = {{8, 8}, {16, 16}, {24, 40}, {32, 32}, {40, 24}, {64, 64}, {80, 80},
                                {96, 64}, {128, 128}, {192, 128}, {7, 5}, {1, 1}};
  long failures = 0, total_runs = 0;
  const double t0 = xc_now();
  for (int it = 0; it < iterations; ++it) {
    uint64_t r = seed * 0x9e3779b97f4a7c15ull + (uint64_t)it;
    tp_rand(&r);
    tp_shape s;
    memset(&s, 0, sizeof s);
    s.name = "fuzz";
    s.batch = 1 + pick(&r, TP_MAX_BATCH);
    for (int b = 0; b < s.batch; ++b) {
      s.prefix[b] = pick(&r, 3) ? length(&r, budget) : 0;
      s.extend[b] = length(&r, budget / s.batch > 1 ? budget / s.batch : 1);
      s.encoder[b] = length(&r, 300);
    }
    const int *hh = heads[pick(&r, 8)], *dd = dims[pick(&r, 12)];
    s.hq = hh[0], s.hkv = hh[1], s.d = dd[0], s.dv = dd[1];
    /* shrink until the fp64 reference stays around 20 ms */
    for (;;) {
      double T = 0, S = 0;
      for (int b = 0; b < s.batch; ++b) {
        T += s.extend[b];
        double sb = s.prefix[b] + s.extend[b] > s.encoder[b] ? s.prefix[b] + s.extend[b] : s.encoder[b];
        if (sb > S) S = sb;
      }
      if (T * S * s.hq * (s.d + s.dv) < max_work) break;
      for (int b = 0; b < s.batch; ++b) s.prefix[b] /= 2, s.extend[b] /= 2, s.encoder[b] /= 2;
    }
    s.pad_head = pick(&r, 2) ? pick(&r, 9) : 0;
    s.pad_token = pick(&r, 2) ? pick(&r, 17) : 0;
    s.idx64 = pick(&r, 2);
    s.gapped = pick(&r, 3);
    /* docs/contract.md §3's tolerances hold for unit-scale logits: scale = f / sqrt(D),
     * f up to 3 (logits of standard deviation about f / 3); larger scales
     * make the f32 rounding of the logits alone exceed 1e-5 */
    s.scale = pick(&r, 2) ? 0.0f : (float)((0.1 + 1.45 * (tp_uniform(&r) + 1.0)) / sqrt((double)s.d));
    s.cap = pick(&r, 3) ? 0.0f : (float)(1.0 + 10.0 * (tp_uniform(&r) + 1.0));
    s.sinks = pick(&r, 3) == 0;
    s.tree_density = 0.5 * (tp_uniform(&r) + 1.0);
    static const xattn_mode modes[] = {XATTN_MODE_CAUSAL, XATTN_MODE_CAUSAL, XATTN_MODE_BIDIRECTIONAL,
                                       XATTN_MODE_CROSS, XATTN_MODE_TREE};
    tp_mask m;
    memset(&m, 0, sizeof m);
    m.mode = modes[pick(&r, 5)];
    m.align = m.mode == XATTN_MODE_CAUSAL && pick(&r, 3) == 0 ? XATTN_ALIGN_TOP_LEFT : XATTN_ALIGN_BOTTOM_RIGHT;
    m.dtype = (xattn_dtype)pick(&r, 3);
    m.wl = pick(&r, 2) ? -1 : pick(&r, 80);
    m.wr = pick(&r, 2) ? -1 : pick(&r, 20);
    /* cache storage: slot table or pages of 1..20 tokens, either layout, table start columns */
    m.page_size = pick(&r, 2) ? 0 : 1 + pick(&r, 20);
    m.cache_layout = (xattn_cache_layout)pick(&r, 2);
    m.start_cols = pick(&r, 2);
    tproblem tp;
    if (tp_build(&tp, &s, m, r)) return 1;
    char desc[256], shp[512];
    tp_describe(&tp, desc, sizeof desc);
    int n = 0;
    for (int b = 0; b < s.batch; ++b)
      n += snprintf(shp + n, sizeof shp - (size_t)n, "%s(%d,%d,%d)", b ? " " : "", s.prefix[b], s.extend[b],
                    s.encoder[b]);
    xattn_status st = tp_reference(&tp);
    if (st != XATTN_OK) {
      printf("FAIL iteration %d (--seed %llu): reference: %s\n", it, (unsigned long long)seed, xattn_last_error());
      failures++;
      tp_free(&tp);
      continue;
    }
    int dumped = 0;
    for (int k = 0; k < runs; ++k) {
      const tp_exec *e = &execs[pick(&r, nexec)];
      tp_result res = tp_run_check(&tp, e, &st);
      total_runs++;
      if (tp_ok(&res)) continue;
      failures++;
      char ed[160], rd[400];
      tp_exec_describe(e, ed, sizeof ed);
      if (st != XATTN_OK)
        snprintf(rd, sizeof rd, "status %s: %s", xattn_status_string(st), xattn_last_error());
      else
        tp_describe_result(&res, rd, sizeof rd);
      printf("FAIL iteration %d (--seed %llu) %s heads %d/%d dims %d/%d pads %d/%d gapped %d idx64 %d scale %g "
             "cap %g sinks %d (P,E,enc) %s; %s: %s\n",
             it, (unsigned long long)seed, desc, s.hq, s.hkv, s.d, s.dv, s.pad_head, s.pad_token, s.gapped, s.idx64,
             (double)tp.p.scale, (double)s.cap, s.sinks, shp, ed, rd);
      if (!dumped++) tp_dump(&tp);
    }
    tp_free(&tp);
  }
  printf("test_fuzz --seed %llu: %d random problems, %ld runs, %ld failures; %.1f s\n", (unsigned long long)seed,
         iterations, total_runs, failures, xc_now() - t0);
  free(execs);
  return failures ? 1 : 0;
}
