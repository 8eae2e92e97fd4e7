/* xattn_case_save then xattn_case_load (caseio/case_io.c) gives back the same
 * problem: for strided, gapped, reversed test problems of every mode and dtype,
 * with slot tables, paged caches in both layouts and fp8 caches with scales,
 * the reference of the loaded case equals, bit for bit, the reference of the
 * original on every request's rows, and a bad folder is refused. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "case_io.h"
#include "support/tproblem.h"

int main(void) {
  char tmpl[] = "/tmp/xattn-roundtrip-XXXXXX";
  const char *root = mkdtemp(tmpl);
  if (!root) return 1;
  tp_shape shapes[2] = {
      {"rt_gapped", 3, {4, 0, 9}, {5, 0, 7}, {3, 6, 0}, 4, 2, 16, 24, 3, 5, 1, 2, 0.7f, 3.0f, 1, 0.5},
      {"rt_packed", 2, {0, 2}, {1, 6}, {2, 2}, 2, 1, 8, 8, 0, 0, 0, 0, 0.0f, 0.0f, 0, 0.5}};
  xattn_mode modes[4] = {XATTN_MODE_CAUSAL, XATTN_MODE_BIDIRECTIONAL, XATTN_MODE_CROSS, XATTN_MODE_TREE};
  /* KV cache storage: slot table, paged token-major with start columns, paged head-major */
  const struct { int page; xattn_cache_layout layout; int start_cols; xattn_dtype kv8; } storages[4] = {
      {0, XATTN_CACHE_TOKEN_MAJOR, 0, 0}, {4, XATTN_CACHE_TOKEN_MAJOR, 1, XATTN_E4M3FN},
      {3, XATTN_CACHE_HEAD_MAJOR, 0, 0}, {0, XATTN_CACHE_TOKEN_MAJOR, 1, XATTN_E5M2}};
  int checks = 0, failures = 0;
  for (int s = 0; s < 2; ++s)
    for (int m = 0; m < 4; ++m)
      for (int dt = 0; dt < 3; ++dt) {
        tproblem tp;
        const int k = (s + m + dt) % 4;
        tp_mask mask = {(xattn_dtype)dt, modes[m], XATTN_ALIGN_BOTTOM_RIGHT, m == 1 ? 3 : -1, -1,
                        storages[k].page, storages[k].layout, storages[k].start_cols, storages[k].kv8, 0};
        if (tp_build(&tp, &shapes[s], mask, 500 + (uint64_t)(s * 16 + m * 4 + dt)) || tp_reference(&tp)) return 1;
        char dir[256], err[1024], desc[256];
        snprintf(dir, sizeof dir, "%s/case_%d_%d_%d", root, s, m, dt);
        tp_describe(&tp, desc, sizeof desc);
        xattn_case c;
        checks++;
        if (xattn_case_save(dir, &tp.p, err, sizeof err) != XATTN_OK ||
            xattn_case_load(dir, &c, err, sizeof err) != XATTN_OK) {
          printf("FAIL %s: %s\n", desc, err);
          failures++;
          tp_free(&tp);
          continue;
        }
        size_t row = (size_t)tp.p.heads_q * (size_t)tp.p.head_dim_v;
        double *ref = malloc(sizeof(double) * row * (size_t)(c.problem.total_tokens + 1));
        float probe;
        c.problem.o.data = &probe;
        int same = xattn_reference(&c.problem, ref) == XATTN_OK;
        for (int b = 0, t = 0; same && b < tp.p.batch; ++b)
          for (int i = 0; i < tp.extend[b]; ++i, ++t)
            same &= !memcmp(ref + (size_t)t * row, tp.ref + (size_t)(tp.start[b] + i) * row, row * sizeof(double));
        if (!same) {
          printf("FAIL %s: the loaded case's reference differs from the original's\n", desc);
          failures++;
        }
        free(ref);
        xattn_case_free(&c);
        tp_free(&tp);
      }
  /* a problem that does not validate is not written */
  tproblem tp;
  tp_mask mask = {XATTN_F32, XATTN_MODE_CAUSAL, XATTN_ALIGN_BOTTOM_RIGHT, -1, -1, 0, XATTN_CACHE_TOKEN_MAJOR, 0, 0, 0};
  char dir[256], err[1024];
  if (tp_build(&tp, &shapes[0], mask, 9)) return 1;
  tp.p.heads_kv = 3;
  snprintf(dir, sizeof dir, "%s/invalid", root);
  checks++;
  if (xattn_case_save(dir, &tp.p, err, sizeof err) == XATTN_OK || !strstr(err, "heads")) {
    printf("FAIL an invalid problem was saved (%s)\n", err);
    failures++;
  }
  tp_free(&tp);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) printf("note: could not remove %s\n", root);
  printf("case_roundtrip: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
