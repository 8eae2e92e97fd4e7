/* xattn-peers-plan — what the Python peers (run_peers.py) need from the C side,
 * so that suites are parsed, masks drawn, pairs counted and machines named in
 * one place (bench's library) and peer rows land next to xattn's:
 *
 *   xattn-peers-plan --suite NAME|PATH [--seed N] [--peak-threads 1,2|auto]
 *                    [--place compact]
 *
 * prints one JSON object on stdout: "suite", "context" (the xattn_* keys of
 * this machine and build), "workloads" (each expanded: requests [[P, E, enc]],
 * shape, mode, visible_pairs as xattn counts them, tree masks as rows of
 * '0'/'1'), and with --peak-threads "peaks" {"<threads>": {"f32": GFLOP/s,
 * "bf16": GFLOP/s}} measured like xattn-bench does for pct_peak.
 * Errors: one line on stderr, exit 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "xattn/xattn.h"
#include "xattn/xattn_introspect.h"
#include "xattn_bench/machine.h"
#include "xattn_common/build_info.h"
#include "xattn_bench/peak.h"
#include "xattn_bench/problem.h"
#include "xattn_bench/topology.h"
#include "xattn_bench/workload.h"

static int die(const char *msg) {
  fprintf(stderr, "xattn-peers-plan: %s\n", msg);
  return 1;
}

static cJSON *context(const xb_topology *t) {
  cJSON *c = cJSON_CreateObject();
  char machine[256], commit_dir[64];
  char err[256];
  if (xb_machine_name(xb_cpu_model(), xb_topology_cores(t), xb_topology_summary(t), machine, sizeof machine, err,
                      sizeof err) != 0) {
    fprintf(stderr, "xattn-peers-plan: %s\n", err);
    exit(2);
  }
  const int dirty = xc_build_dirty();
  xb_commit_dir_name(xc_build_commit(), dirty, commit_dir, sizeof commit_dir);
  cJSON_AddStringToObject(c, "xattn_commit", xc_build_commit());
  cJSON_AddStringToObject(c, "xattn_dirty", dirty < 0 ? "unknown" : dirty ? "true" : "false");
  cJSON_AddStringToObject(c, "xattn_commit_dir", commit_dir);
  cJSON_AddStringToObject(c, "xattn_machine", machine);
  cJSON_AddStringToObject(c, "xattn_cpu_model", xb_cpu_model());
  cJSON_AddStringToObject(c, "xattn_cpu_flags", xb_cpu_flags());
  cJSON_AddStringToObject(c, "xattn_topology", xb_topology_summary(t));
  cJSON_AddStringToObject(c, "xattn_compiler", xc_build_compiler());
  cJSON_AddStringToObject(c, "xattn_cflags", xc_build_cflags());
  cJSON_AddStringToObject(c, "xattn_config_header", xattn_config_header_path());
  cJSON_AddStringToObject(c, "xattn_config_provenance", xattn_config_provenance());
  return c;
}

/* One workload, expanded; visible pairs and tree masks from bench's problem
 * builder (the same seed as xattn-bench draws the same trees). */
static cJSON *workload(const xb_workload *w, uint64_t seed, char *err, size_t errlen) {
  xb_problem pb;
  if (xb_problem_build_shape(&pb, w, w->dtypes[0], seed, err, errlen) != 0) return NULL;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", w->name);
  cJSON *reqs = cJSON_AddArrayToObject(o, "requests");
  for (int b = 0; b < w->batch; b++) {
    int r[3] = {w->prefix_lens[b], w->extend_lens[b], w->encoder_lens ? w->encoder_lens[b] : 0};
    cJSON_AddItemToArray(reqs, cJSON_CreateIntArray(r, 3));
  }
  cJSON_AddNumberToObject(o, "heads_q", w->heads_q);
  cJSON_AddNumberToObject(o, "heads_kv", w->heads_kv);
  cJSON_AddNumberToObject(o, "head_dim", w->head_dim);
  cJSON_AddNumberToObject(o, "head_dim_v", w->head_dim_v);
  cJSON_AddStringToObject(o, "mode", xattn_mode_name(w->mode));
  cJSON_AddStringToObject(o, "align", xattn_align_name(w->align));
  int win[2] = {w->window_left, w->window_right};
  cJSON_AddItemToObject(o, "window", cJSON_CreateIntArray(win, 2));
  cJSON_AddNumberToObject(o, "logit_cap", w->logit_cap);
  cJSON_AddBoolToObject(o, "sinks", w->has_sinks);
  /* the token table's slot layout and an fp8 cache: a paged peer (ipex) lays its
     pages out alike and refuses what it cannot hold */
  char slots[32];
  cJSON_AddStringToObject(o, "slots", xb_slot_layout_name(w->slot_run, slots, sizeof slots));
  cJSON_AddStringToObject(o, "kv_cache", w->kv_cache == XATTN_DTYPE_SAME ? "same" : xattn_dtype_name(w->kv_cache));
  cJSON *dts = cJSON_AddArrayToObject(o, "dtypes");
  for (int i = 0; i < w->ndtypes; i++) cJSON_AddItemToArray(dts, cJSON_CreateString(xattn_dtype_name(w->dtypes[i])));
  cJSON_AddNumberToObject(o, "seed", (double)seed);
  cJSON_AddNumberToObject(o, "scale", pb.p.scale);
  cJSON_AddNumberToObject(o, "visible_pairs", (double)pb.visible_pairs);
  if (w->mode == XATTN_MODE_TREE) {
    const int m = pb.p.tree_max_extend;
    cJSON *masks = cJSON_AddArrayToObject(o, "tree_mask");
    char *row = malloc((size_t)m + 1);
    for (int b = 0; b < w->batch; b++) {
      cJSON *rows = cJSON_CreateArray();
      for (int i = 0; i < w->extend_lens[b]; i++) {
        for (int k = 0; k < w->extend_lens[b]; k++) row[k] = pb.tree_mask[((size_t)b * m + i) * m + k] ? '1' : '0';
        row[w->extend_lens[b]] = 0;
        cJSON_AddItemToArray(rows, cJSON_CreateString(row));
      }
      cJSON_AddItemToArray(masks, rows);
    }
    free(row);
  }
  xb_problem_free(&pb);
  return o;
}

static cJSON *peaks(xb_topology *t, const char *threads, const char *place, char *err, size_t errlen) {
  xb_placement pl;
  int list[64];
  if (xb_placement_parse(place, &pl, err, errlen) != 0) return NULL;
  const int n = xb_threads_parse(threads, t, &pl, list, 64, err, errlen);
  if (n < 0) return NULL;
  cJSON *o = cJSON_CreateObject();
  for (int i = 0; i < n; i++) {
    if (xb_place_threads(t, &pl, list[i], err, errlen) != 0) {
      cJSON_Delete(o);
      return NULL;
    }
    char key[16];
    snprintf(key, sizeof key, "%d", list[i]);
    cJSON *p = cJSON_AddObjectToObject(o, key);
    cJSON_AddNumberToObject(p, "f32", xb_peak_gflops(XB_PEAK_FP32, list[i], 0.05));
    cJSON_AddNumberToObject(p, "bf16", xb_peak_gflops(XB_PEAK_BF16, list[i], 0.05));
  }
  return o;
}

int main(int argc, char **argv) {
  const char *suite_name = NULL, *peak_threads = NULL, *place = "compact";
  uint64_t seed = 42;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      puts("usage: xattn-peers-plan --suite NAME|PATH [--seed N] [--peak-threads LIST|auto] [--place P]");
      return 0;
    }
    if (!v) {
      fprintf(stderr, "xattn-peers-plan: %s: unknown option or missing value\n", a);
      return 1;
    }
    if (!strcmp(a, "--suite")) suite_name = v;
    else if (!strcmp(a, "--peak-threads")) peak_threads = v;
    else if (!strcmp(a, "--place")) place = v;
    else if (!strcmp(a, "--seed")) {
      char *end;
      unsigned long long s = strtoull(v, &end, 10);
      if (end == v || *end) return die("--seed: expected a non-negative integer");
      seed = s;
    } else {
      fprintf(stderr, "xattn-peers-plan: %s: unknown option\n", a);
      return 1;
    }
    i++;
  }
  if (!suite_name) return die("--suite: missing");
  char err[1024] = "";
  xb_suite *s = xb_suite_load(suite_name, err, sizeof err);
  if (!s) return die(err);
  xb_topology *t = xb_topology_open(NULL, err, sizeof err);
  if (!t) {
    xb_suite_free(s);
    return die(err);
  }
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "suite", s->name);
  cJSON_AddStringToObject(root, "suite_path", s->path);
  cJSON *ctx = context(t);
  cJSON_AddStringToObject(ctx, "xattn_suite", s->name);
  cJSON_AddStringToObject(ctx, "xattn_suite_path", s->path);
  cJSON_AddItemToObject(root, "context", ctx);
  cJSON *wls = cJSON_AddArrayToObject(root, "workloads");
  int rc = 0;
  for (int i = 0; i < s->count && !rc; i++) {
    cJSON *w = workload(&s->workloads[i], seed, err, sizeof err);
    if (!w) rc = die(err);
    else cJSON_AddItemToArray(wls, w);
  }
  if (!rc && peak_threads) {
    cJSON *p = peaks(t, peak_threads, place, err, sizeof err);
    if (!p) rc = die(err);
    else cJSON_AddItemToObject(root, "peaks", p);
  }
  if (!rc) {
    char *text = cJSON_Print(root);
    fputs(text, stdout);
    fputc('\n', stdout);
    free(text);
  }
  cJSON_Delete(root);
  xb_topology_close(t);
  xb_suite_free(s);
  return rc;
}
