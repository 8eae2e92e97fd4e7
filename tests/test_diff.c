/* Differential tests: xattn_extend_attention against xattn_reference over
 * modes x windows x dtypes x shapes, each problem run under a list of run
 * configurations (ISA x variant x layout x kv_splits x threads x schedule, see
 * tp_exec_list).
 *
 *   test_diff --modes causal_br,causal_tl,bidirectional,cross,tree
 *             --shapes small|large|groups --level full|reduced|smoke|layouts|auto [--seed N]
 *
 * small: three batches that between them hold lengths 1, 7, 33, E = 0, prefix
 *   0, GQA 2:1, MHA, MQA, D != DV, padded strides, gapped and reversed rows,
 *   int32/int64 tables, sinks, a soft cap and a custom scale; every mode and
 *   window sees every dtype; the shape rotates with (window, dtype) so that the
 *   full run-configuration grid stays affordable.
 * large: long prefixes with short extends (P=700, E=3), E = 130 and 257, GQA 4:1,
 *   D/DV = 192/128 and 576/512, a batch of 8 mixed requests (3:1, cap); run under the smoke list (every variant, layout
 *   and kv_splits at least once) or a larger one.
 * groups: large query groups at E 1..4 (MQA 32:1 and 16:1, groups of 8 and 12),
 *   the shapes the config header hands from decode to the lanes tile; with the
 *   large windows. Level "auto" runs each ISA x threads with the header's own
 *   choice (no variant or layout given), so that routing is what is checked.
 * --plant: NaN and +-Inf are planted in used rows of q, k and v (the last key of
 *   every request and a random key or query, tp_plant_nonfinite), so that they
 *   sit where queries may look and where they may not; the reference then
 *   defines which outputs are NaN or Inf (docs/contract.md) and every other
 *   element must still match. Level "layouts" runs every ISA x layout.
 * --page N (paged block table of N tokens per block), --cache token_major|head_major
 * --start-cols 1 (keys start at columns 1..4 of the table rows) and --kv e4m3fn|e5m2
 * (fp8 cache with a tensor scale and per-token-per-head scales; with
 * --kv-scales tensor the tensor scales alone, no per-token arrays) run every
 * problem with that KV-cache storage instead of the slot table.
 * --isa-if-runnable NAME narrows the runs to that ISA where this machine can run
 * it (xattn_isa_runnable, decided at run time: CPU flags and the OS's grant of
 * AMX tile state) and keeps every ISA elsewhere, for a path only one ISA takes.
 * Failures print the problem and the run configuration, which reproduce it
 * (XATTN_TEST_ISA/_VARIANT/_LAYOUT/_THREADS narrow the run list).
 */
#define _POSIX_C_SOURCE 200809L
#include "xattn_common/clock.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/tproblem.h"
#include "xattn/xattn_introspect.h"

/* name, B, prefix, extend, encoder, hq, hkv, d, dv, pad_head, pad_token, idx64,
 * gapped, scale, cap, sinks, tree_density */
static const tp_shape small_shapes[] = {
    {"mixed4_gqa", 4, {0, 3, 0, 9}, {1, 7, 0, 33}, {5, 0, 3, 12}, 4, 2, 16, 16, 3, 5, 0, 1, 0.0f,
     0.0f, 0, 0.5},
    {"mha_d40_dv24", 2, {5, 0}, {2, 13}, {4, 9}, 3, 3, 40, 24, 0, 0, 1, 0, 0.3f, 5.0f, 1, 0.3},
    {"mqa_reversed", 3, {2, 0, 11}, {1, 5, 8}, {0, 7, 2}, 4, 1, 8, 8, 1, 0, 0, 2, 1.3f, 0.0f, 1,
     0.7},
};
static const tp_shape large_shapes[] = {
    {"long_prefix_gqa4", 3, {700, 0, 64}, {3, 130, 257}, {40, 100, 300}, 8, 2, 32, 32, 0, 0, 1, 0,
     0.0f, 0.0f, 0, 0.2},
    {"decode_batch", 4, {1000, 517, 0, 2047}, {1, 4, 0, 1}, {1001, 30, 2, 700}, 8, 2, 64, 64, 0, 0, 0, 1,
     0.0f, 0.0f, 1, 0.4},
    {"mla_192_128", 2, {33, 0}, {17, 40}, {20, 50}, 2, 1, 192, 128, 8, 0, 0, 1, 0.0f, 2.5f, 1, 0.5},
    {"mla_576_512", 2, {10, 0}, {5, 3}, {9, 4}, 2, 1, 576, 512, 0, 0, 1, 0, 0.0f, 0.0f, 0, 0.5},
    {"many_requests", 8, {0, 17, 0, 64, 3, 0, 250, 1}, {31, 1, 64, 0, 100, 9, 2, 47},
     {12, 0, 70, 5, 33, 9, 1, 80}, 6, 2, 64, 64, 4, 2, 1, 2, 0.0f, 7.0f, 1, 0.5},
};

/* groups: large query groups on few new tokens (MQA decode steps, a few drafts
 * on a group of 8 to 16), where the config header hands decode's KV groups to
 * the lanes tile (lanes_rows, docs/formats.md §4): 8 to 64 rows per KV group
 * (one to four 16-row AMX blocks, partial ones too), E 1..4 mixed in a batch,
 * prefixes that hold whole 64-key spans and a ragged tail, D 32..128 and odd
 * D / DV, sinks, caps, padded and gapped rows. */
static const tp_shape group_shapes[] = {
    {"mqa32_e1", 3, {300, 129, 70}, {1, 1, 1}, {40, 200, 9}, 32, 1, 64, 64, 0, 0, 0, 1, 0.0f, 0.0f, 1, 0.5},
    {"group12_e3", 3, {190, 0, 260}, {3, 2, 1}, {100, 33, 70}, 24, 2, 40, 24, 2, 3, 1, 2, 0.4f, 6.0f, 0, 0.4},
    {"mqa16_mixed", 4, {520, 64, 0, 130}, {1, 4, 3, 2}, {64, 10, 128, 1}, 16, 1, 128, 128, 0, 0, 0, 0, 0.0f,
     3.0f, 1, 0.3},
    {"group8_e2", 2, {700, 257}, {2, 1}, {5, 300}, 16, 2, 32, 48, 0, 0, 0, 1, 0.0f, 0.0f, 0, 0.5},
};

/* (left, right): none, left only, right only, both, self only (empties rows in
 * cross mode past enc_len and top-left rows with a prefix) */
static const int windows[][2] = {{-1, -1}, {3, -1}, {-1, 2}, {4, 1}, {0, 0}};
static const int large_windows[][2] = {{-1, -1}, {96, 5}};

typedef struct mode_spec {
  const char *name;
  xattn_mode mode;
  xattn_align align;
} mode_spec;
static const mode_spec all_modes[] = {
    {"causal_br", XATTN_MODE_CAUSAL, XATTN_ALIGN_BOTTOM_RIGHT},
    {"causal_tl", XATTN_MODE_CAUSAL, XATTN_ALIGN_TOP_LEFT},
    {"bidirectional", XATTN_MODE_BIDIRECTIONAL, XATTN_ALIGN_BOTTOM_RIGHT},
    {"cross", XATTN_MODE_CROSS, XATTN_ALIGN_BOTTOM_RIGHT},
    {"tree", XATTN_MODE_TREE, XATTN_ALIGN_BOTTOM_RIGHT},
};
#define NMODES (int)(sizeof all_modes / sizeof *all_modes)

#define MAX_PRINTED_FAILURES 25


/* 1 when the run packs K/V once per (request, KV head) for some pair (the
 * kernels' other path than packing per work item): the grids must cover both. */
static int runs_packed_kv(const tproblem *tp, const tp_exec *e) {
  xattn_options o;
  tp_exec_options(e, &o);
  xattn_plan *pl = NULL;
  if (xattn_plan_create(&tp->p, &o, &pl) != XATTN_OK) return 0;
  const int64_t pairs = xattn_plan_kv_packed_pairs(pl, NULL);
  xattn_plan_destroy(pl);
  return pairs > 0;
}

static int usage(void) {
  fprintf(stderr, "usage: test_diff --modes LIST --shapes small|large|groups --level full|reduced|smoke|layouts|auto "
                  "[--seed N] [--plant] [--page N] [--cache token_major|head_major] [--start-cols 0|1] [--kv e4m3fn|e5m2] [--kv-scales token|tensor] [--isa-if-runnable NAME]\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *modes_arg = "causal_br,causal_tl,bidirectional,cross,tree", *shapes_arg = "small";
  tp_level level = TP_LEVEL_FULL;
  uint64_t seed = 1;
  int plant = 0;
  tp_mask storage = {0}; /* the KV cache's storage for every problem (--page, --cache, --start-cols) */
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--plant")) {
      plant = 1;
      continue;
    }
    if (i + 1 >= argc) return usage();
    const char *v = argv[++i];
    if (!strcmp(argv[i - 1], "--modes"))
      modes_arg = v;
    else if (!strcmp(argv[i - 1], "--shapes"))
      shapes_arg = v;
    else if (!strcmp(argv[i - 1], "--seed"))
      seed = strtoull(v, NULL, 10);
    else if (!strcmp(argv[i - 1], "--page"))
      storage.page_size = atoi(v);
    else if (!strcmp(argv[i - 1], "--cache")) {
      if (xattn_cache_layout_parse(v, &storage.cache_layout)) return usage();
    } else if (!strcmp(argv[i - 1], "--start-cols"))
      storage.start_cols = atoi(v);
    else if (!strcmp(argv[i - 1], "--kv")) {
      if (xattn_dtype_parse(v, &storage.kv8) || (storage.kv8 != XATTN_E4M3FN && storage.kv8 != XATTN_E5M2))
        return usage();
    }
    else if (!strcmp(argv[i - 1], "--kv-scales")) {
      if (strcmp(v, "token") && strcmp(v, "tensor")) return usage();
      storage.kv_tensor_scales = !strcmp(v, "tensor");
    }
    else if (!strcmp(argv[i - 1], "--isa-if-runnable")) {
      /* an explicit XATTN_TEST_ISA (reproducing a failure) still wins; a
         build without that ISA runs every ISA it has, and says so */
      int known = 0;
      for (int k = 0; k < xattn_isa_count(); ++k) known |= !strcmp(xattn_isa_name(k), v);
      if (!known) fprintf(stderr, "test_diff: --isa-if-runnable: '%s' is not an ISA of this build; every ISA runs\n", v);
      const char *f = getenv("XATTN_TEST_ISA");
      if (xattn_isa_runnable(v) && (!f || !*f)) setenv("XATTN_TEST_ISA", v, 1);
    }
    else if (!strcmp(argv[i - 1], "--level")) {
      if (!strcmp(v, "full"))
        level = TP_LEVEL_FULL;
      else if (!strcmp(v, "reduced"))
        level = TP_LEVEL_REDUCED;
      else if (!strcmp(v, "smoke"))
        level = TP_LEVEL_SMOKE;
      else if (!strcmp(v, "layouts"))
        level = TP_LEVEL_LAYOUTS;
      else if (!strcmp(v, "auto"))
        level = TP_LEVEL_AUTO;
      else
        return usage();
    } else
      return usage();
  }
  const int groups = !strcmp(shapes_arg, "groups");
  int large = !strcmp(shapes_arg, "large") || groups; /* groups: every shape runs, the large windows */
  if (!large && strcmp(shapes_arg, "small")) return usage();
  const tp_shape *shapes = groups ? group_shapes : large ? large_shapes : small_shapes;
  int nshapes = groups ? (int)(sizeof group_shapes / sizeof *group_shapes)
                : large ? (int)(sizeof large_shapes / sizeof *large_shapes) : 3;
  const int(*wins)[2] = large ? large_windows : windows;
  int nwins = large ? 2 : 5;

  int selected[NMODES] = {0}, nsel = 0;
  for (int m = 0; m < NMODES; ++m) {
    const char *s = strstr(modes_arg, all_modes[m].name);
    size_t n = strlen(all_modes[m].name);
    /* whole comma-separated tokens only */
    while (s && !((s == modes_arg || s[-1] == ',') && (s[n] == ',' || s[n] == '\0')))
      s = strstr(s + 1, all_modes[m].name);
    if (s) selected[m] = 1, nsel++;
  }
  if (!nsel) return usage();

  tp_exec *execs;
  int nexec = tp_exec_list(level, &execs);
  if (nexec <= 0) {
    fprintf(stderr, "test_diff: no run configuration (ISA/variant filters exclude everything?)\n");
    return 1;
  }

  double t0 = xc_now(), worst[3] = {0, 0, 0};
  long problems = 0, runs = 0, failed_runs = 0, failed_refs = 0, printed = 0, packed_runs = 0;
  for (int m = 0; m < NMODES; ++m) {
    if (!selected[m]) continue;
    for (int w = 0; w < nwins; ++w)
      for (int dt = 0; dt < 3; ++dt)
        for (int sh = 0; sh < nshapes; ++sh) {
          /* small shapes rotate with (window, dtype); large ones all run */
          if (!large && sh != (w + dt) % nshapes) continue;
          tp_mask mask = storage;
          mask.dtype = (xattn_dtype)dt;
          mask.mode = all_modes[m].mode;
          mask.align = all_modes[m].align;
          mask.wl = wins[w][0];
          mask.wr = wins[w][1];
          uint64_t pseed = seed * 1000003u + (uint64_t)((m * 16 + w) * 4 + dt) * 8 + (uint64_t)sh;
          tproblem tp;
          char desc[256], edesc[160], rdesc[400];
          if (tp_build(&tp, &shapes[sh], mask, pseed)) return 1;
          if (plant) tp_plant_nonfinite(&tp, pseed);
          tp_describe(&tp, desc, sizeof desc);
          problems++;
          xattn_status st = tp_reference(&tp);
          if (st != XATTN_OK) {
            printf("FAIL reference %s: %s: %s\n", desc, xattn_status_string(st), xattn_last_error());
            failed_refs++;
            tp_free(&tp);
            continue;
          }
          int64_t vp = xattn_visible_pairs(&tp.p), vc = tp_count_visible(&tp);
          if (vp != vc) {
            printf("FAIL xattn_visible_pairs %s: %lld, counted pair by pair %lld\n", desc,
                   (long long)vp, (long long)vc);
            failed_refs++;
          }
          double pworst = 0;
          int dumped = 0;
          for (int e = 0; e < nexec; ++e) {
            tp_result r = tp_run_check(&tp, &execs[e], &st);
            runs++;
            packed_runs += runs_packed_kv(&tp, &execs[e]);
            if (tp_ok(&r)) {
              if (r.worst_ratio > pworst) pworst = r.worst_ratio;
              continue;
            }
            failed_runs++;
            if (printed++ >= MAX_PRINTED_FAILURES) continue;
            tp_exec_describe(&execs[e], edesc, sizeof edesc);
            if (st != XATTN_OK)
              snprintf(rdesc, sizeof rdesc, "status %s: %s", xattn_status_string(st),
                       xattn_last_error());
            else
              tp_describe_result(&r, rdesc, sizeof rdesc);
            printf("FAIL %s %s: %s\n", desc, edesc, rdesc);
            if (!dumped++) tp_dump(&tp);
          }
          if (pworst > worst[dt]) worst[dt] = pworst;
          tp_free(&tp);
        }
  }
  free(execs);
  if (printed > MAX_PRINTED_FAILURES)
    printf("... %ld more failures not printed\n", printed - MAX_PRINTED_FAILURES);
  static const char *const level_names[] = {"full", "reduced", "smoke", "layouts", "auto"};
  printf("test_diff modes=%s shapes=%s level=%s%s: %ld problems x %d run configurations = %ld runs, "
         "%ld failed runs, %ld failed references or pair counts; worst passing |err|/tol f32 %.3g, bf16 %.3g, "
         "f16 %.3g; K/V packed once per (request, KV head) in %ld runs; %.1f s\n",
         modes_arg, shapes_arg, level_names[level], plant ? " (NaN/Inf planted)" : "", problems, nexec, runs,
         failed_runs, failed_refs, worst[0], worst[1], worst[2], packed_runs, xc_now() - t0);
  return failed_runs || failed_refs ? 1 : 0;
}
