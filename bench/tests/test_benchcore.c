/* ctest for xattn_benchcore: one sub-command per test (see CMakeLists.txt).
 * Every check prints what it compared, and a failure exits non-zero. */
#define _GNU_SOURCE
#include "xattn_bench/baseline.h"
#include "xattn_bench/machine.h"
#include "xattn_common/build_info.h"
#include "xattn_bench/mask.h"
#include "xattn_bench/memroof.h"
#include "xattn_bench/problem.h"
#include "xattn_bench/topology.h"
#include "xattn_bench/workload.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...)                                      \
  do {                                                        \
    if (!(cond)) {                                            \
      failures++;                                             \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);    \
      fprintf(stderr, __VA_ARGS__);                           \
      fputc('\n', stderr);                                    \
    }                                                         \
  } while (0)

/* ---- workload parsing ------------------------------------------------------ */

typedef struct bad_case {
  const char *text;
  const char *expect; /* substring of the one-line error */
} bad_case;

static int test_workload(const char *suites_dir) {
  char err[1024];
  /* every shipped suite parses */
  DIR *d = opendir(suites_dir);
  CHECK(d != NULL, "cannot open %s", suites_dir);
  int files = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (n <= 5 || strcmp(e->d_name + n - 5, ".json")) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", suites_dir, e->d_name);
    xb_suite *s = xb_suite_load(path, err, sizeof err);
    CHECK(s != NULL, "shipped suite %s: %s", path, err);
    if (s) {
      CHECK(s->count > 0, "%s has no workloads", path);
      for (int i = 0; i < s->count; i++) {
        CHECK(!strchr(s->workloads[i].name, '/') && !strchr(s->workloads[i].name, ':'), "bad name %s", s->workloads[i].name);
        CHECK(xb_workload_tokens(&s->workloads[i]) > 0, "%s: no tokens", s->workloads[i].name);
      }
      printf("suite %-16s %3d workloads  %s\n", s->name, s->count, path);
      xb_suite_free(s);
    }
    files++;
  }
  if (d) closedir(d);
  CHECK(files >= 6, "expected at least 6 shipped suites, found %d", files);

  /* a suite parsed from text: shapes multiply workloads, generate is seeded */
  const char *good =
      "{\"suite\":\"t\",\"seed\":7,\"dtypes\":[\"bf16\"],"
      "\"shapes\":{\"a\":{\"heads_q\":8,\"heads_kv\":2,\"head_dim\":64,\"head_dim_v\":64},\"b\":{\"head_dim\":192,\"head_dim_v\":128}},"
      "\"workloads\":[{\"name\":\"w\",\"batch\":[[0,16],{\"prefix\":5,\"extend\":3,\"count\":2}]},"
      "{\"name\":\"g\",\"shapes\":[\"b\"],\"generate\":{\"requests\":5,\"prefix\":{\"dist\":\"uniform\",\"min\":10,\"max\":20},"
      "\"extend\":{\"dist\":\"choice\",\"values\":[1,2,3]}}}]}";
  xb_suite *s = xb_suite_parse(good, "good.json", err, sizeof err);
  CHECK(s != NULL, "good suite: %s", err);
  if (s) {
    CHECK(s->count == 3, "3 expanded workloads, got %d", s->count);
    CHECK(strcmp(s->workloads[0].name, "w.a") == 0 && strcmp(s->workloads[1].name, "w.b") == 0 &&
              strcmp(s->workloads[2].name, "g.b") == 0,
          "names %s %s %s", s->workloads[0].name, s->workloads[1].name, s->workloads[2].name);
    CHECK(s->workloads[0].batch == 3 && s->workloads[0].prefix_lens[2] == 5 && s->workloads[0].extend_lens[2] == 3,
          "count expands the batch");
    CHECK(s->workloads[0].heads_q == 8 && s->workloads[1].head_dim == 192 && s->workloads[1].heads_q == 32,
          "shape parameters applied on top of defaults");
    CHECK(s->workloads[0].dtypes[0] == XATTN_BF16 && s->workloads[0].ndtypes == 1, "dtypes");
    const xb_workload *g = &s->workloads[2];
    CHECK(g->batch == 5, "generated 5 requests");
    for (int i = 0; i < g->batch; i++)
      CHECK(g->prefix_lens[i] >= 10 && g->prefix_lens[i] <= 20 && g->extend_lens[i] >= 1 && g->extend_lens[i] <= 3,
            "generated request %d = (%d, %d) outside its distributions", i, g->prefix_lens[i], g->extend_lens[i]);
    xb_suite *s2 = xb_suite_parse(good, "good.json", err, sizeof err);
    for (int i = 0; s2 && i < g->batch; i++)
      CHECK(s2->workloads[2].prefix_lens[i] == g->prefix_lens[i], "generation is deterministic");
    xb_suite_free(s2);
    xb_suite_free(s);
  }

  static const bad_case bad[] = {
      {"{\"workloads\": [", "bad.json: (json): invalid JSON near byte"},
      {"{\"workloads\": []} trailing", "bad.json: (json): trailing data"},
      {"{\"workloads\": [], \"workloads\": []}", "bad.json: (json): duplicate key 'workloads'"},
      {"[]", "bad.json: (top): expected an object"},
      {"{\"workload\": []}", "unknown field \"workload\""},
      {"{\"workloads\": []}", "workloads: expected a non-empty list"},
      {"{\"workloads\": [{\"batch\": [[0, 4]]}]}", "workloads[0].name: missing"},
      {"{\"workloads\": [{\"name\": \"a/b\", \"batch\": [[0, 4]]}]}", "workloads[0].name: must be a name"},
      {"{\"workloads\": [{\"name\": \"a\"}]}", "needs exactly one of \"batch\" or \"generate\""},
      {"{\"workloads\": [{\"name\": \"a\", \"batch\": [[0, -4]]}]}", "workloads[0] (a).batch[0]: -4 out of range"},
      {"{\"workloads\": [{\"name\": \"a\", \"batch\": [[0]]}]}", "batch[0]: expected [prefix, extend]"},
      {"{\"workloads\": [{\"name\": \"a\", \"batch\": [[0, 1.5]]}]}", "expected an integer, got 1.5"},
      {"{\"workloads\": [{\"name\": \"a\", \"extnd\": 3, \"batch\": [[0, 4]]}]}", "unknown field \"extnd\""},
      {"{\"workloads\": [{\"name\": \"a\", \"mode\": \"causl\", \"batch\": [[0, 4]]}]}", "workloads[0] (a).mode: expected"},
      {"{\"workloads\": [{\"name\": \"a\", \"heads_q\": 6, \"heads_kv\": 4, \"batch\": [[0, 4]]}]}", "heads_q 6 is not a multiple of heads_kv 4"},
      {"{\"workloads\": [{\"name\": \"a\", \"dtypes\": [\"f64\"], \"batch\": [[0, 4]]}]}", "dtypes: entry 0"},
      {"{\"workloads\": [{\"name\": \"a\", \"batch\": [[0, 0]]}]}", "no extend tokens"},
      {"{\"workloads\": [{\"name\": \"a\", \"batch\": [[0, 4]]}, {\"name\": \"a\", \"batch\": [[0, 4]]}]}", "duplicate workload name \"a\""},
      {"{\"workloads\": [{\"name\": \"a\", \"generate\": {\"requests\": 2, \"extend\": {\"dist\": \"normal\", \"min\": 1, \"max\": 2}}}]}", "unknown dist \"normal\""},
      {"{\"workloads\": [{\"name\": \"a\", \"generate\": {\"requests\": 2, \"prefix\": 4}}]}", "generate.extend: missing"},
      {"{\"workloads\": [{\"name\": \"a\", \"shapes\": [\"x\"], \"batch\": [[0, 4]]}]}", "the suite declares no shapes"},
      {"{\"workloads\": [{\"name\": \"a\", \"window\": [3], \"batch\": [[0, 4]]}]}", "window: expected [left, right]"},
      {"{\"workloads\": [{\"name\": \"a\", \"mode\": \"cross\", \"batch\": [[0, 4]]}]}", "cross mode needs an encoder length"},
      {"{\"workloads\": [{\"name\": \"a\", \"tree_density\": 2, \"batch\": [[0, 4]]}]}", "tree_density: expected a probability"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err[0] = 0;
    xb_suite *b = xb_suite_parse(bad[i].text, "bad.json", err, sizeof err);
    CHECK(b == NULL, "bad case %zu parsed: %s", i, bad[i].text);
    xb_suite_free(b);
    CHECK(strstr(err, bad[i].expect) != NULL, "bad case %zu: error \"%s\" lacks \"%s\"", i, err, bad[i].expect);
    CHECK(strncmp(err, "bad.json: ", 10) == 0, "bad case %zu: error \"%s\" does not start with the file", i, err);
    CHECK(strchr(err, '\n') == NULL, "bad case %zu: error is not one line", i);
    printf("refused: %s\n", err);
  }
  err[0] = 0;
  CHECK(xb_suite_load("/nonexistent/x.json", err, sizeof err) == NULL && strstr(err, "cannot open"), "missing file: %s", err);
  CHECK(xb_suite_load("no-such-suite", err, sizeof err) == NULL && strstr(err, "no suite of that name"), "unknown name: %s", err);
  return failures;
}

/* ---- FLOP counting --------------------------------------------------------- */

static int test_flops(void) {
  char err[1024];
  const char *text =
      "{\"suite\":\"f\",\"defaults\":{\"heads_q\":4,\"heads_kv\":2,\"head_dim\":16,\"head_dim_v\":8},\"workloads\":["
      "{\"name\":\"causal\",\"batch\":[[0,7],[5,3],[0,1]]},"
      "{\"name\":\"topleft\",\"align\":\"top_left\",\"batch\":[[6,5]]},"
      "{\"name\":\"bidir\",\"mode\":\"bidirectional\",\"batch\":[[4,6],[0,3]]},"
      "{\"name\":\"window\",\"window\":[3,0],\"batch\":[[10,6]]},"
      "{\"name\":\"bidir-window\",\"mode\":\"bidirectional\",\"window\":[2,2],\"batch\":[[3,9]]},"
      "{\"name\":\"tree\",\"mode\":\"tree\",\"tree_density\":0.3,\"batch\":[[9,7],[2,4]]},"
      "{\"name\":\"tree-window\",\"mode\":\"tree\",\"window\":[4,-1],\"batch\":[[9,7]]},"
      "{\"name\":\"cross\",\"mode\":\"cross\",\"batch\":[[0,5,11],[0,2,3]]}]}";
  xb_suite *s = xb_suite_parse(text, "flops.json", err, sizeof err);
  CHECK(s != NULL, "%s", err);
  if (!s) return failures;
  for (int i = 0; i < s->count; i++) {
    xb_problem pb;
    if (xb_problem_build_shape(&pb, &s->workloads[i], XATTN_F32, 3, err, sizeof err) != 0) {
      CHECK(0, "%s: %s", s->workloads[i].name, err);
      continue;
    }
    int64_t brute = xb_brute_visible_pairs(&pb.p), lib = xattn_visible_pairs(&pb.p);
    printf("%-14s visible pairs: library %lld, brute force %lld\n", s->workloads[i].name, (long long)lib, (long long)brute);
    CHECK(lib == brute, "%s: xattn_visible_pairs %lld != brute force %lld", s->workloads[i].name, (long long)lib, (long long)brute);
    CHECK(pb.flops == 2.0 * 4 * (16 + 8) * (double)brute, "%s: flops %g", s->workloads[i].name, pb.flops);
    xb_problem_free(&pb);
  }
  /* hand counts that do not come from either implementation */
  xb_problem pb;
  xb_problem_build_shape(&pb, &s->workloads[0], XATTN_F32, 3, err, sizeof err);
  /* (0,7): 1+..+7 = 28; (5,3): 6+7+8 = 21; (0,1): 1 */
  CHECK(xb_brute_visible_pairs(&pb.p) == 50, "causal hand count 50, got %lld", (long long)xb_brute_visible_pairs(&pb.p));
  xb_problem_free(&pb);
  xb_problem_build_shape(&pb, &s->workloads[1], XATTN_F32, 3, err, sizeof err);
  /* top-left, E=5: j <= i -> 1+2+3+4+5 = 15 */
  CHECK(xb_brute_visible_pairs(&pb.p) == 15, "top-left hand count 15, got %lld", (long long)xb_brute_visible_pairs(&pb.p));
  xb_problem_free(&pb);
  xb_problem_build_shape(&pb, &s->workloads[2], XATTN_F32, 3, err, sizeof err);
  /* bidirectional: 6*10 + 3*3 = 69 */
  CHECK(xb_brute_visible_pairs(&pb.p) == 69, "bidirectional hand count 69, got %lld", (long long)xb_brute_visible_pairs(&pb.p));
  xb_problem_free(&pb);
  xb_problem_build_shape(&pb, &s->workloads[3], XATTN_F32, 3, err, sizeof err);
  /* causal window left 3: each query sees p-3..p = 4 keys (p >= 10) */
  CHECK(xb_brute_visible_pairs(&pb.p) == 24, "window hand count 24, got %lld", (long long)xb_brute_visible_pairs(&pb.p));
  xb_problem_free(&pb);
  xb_problem_build_shape(&pb, &s->workloads[7], XATTN_F32, 3, err, sizeof err);
  /* cross: 5*11 + 2*3 = 61 */
  CHECK(xb_brute_visible_pairs(&pb.p) == 61, "cross hand count 61, got %lld", (long long)xb_brute_visible_pairs(&pb.p));
  xb_problem_free(&pb);
  xb_suite_free(s);
  return failures;
}

/* ---- placement --------------------------------------------------------------- */

static int distinct(const int *v, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      if (v[i] == v[j]) return 0;
  return 1;
}

static int test_placement(void) {
  char err[1024];
  /* A two-socket shape this VM doesn't have: 2 packages x 4 cores x 2 PUs.
   * hwloc numbers PUs depth-first: package 0 holds PUs 0..7 (core c: 2c, 2c+1). */
  xb_topology *t = xb_topology_open("package:2 numa:1 l3:1 core:4 pu:2", err, sizeof err);
  CHECK(t != NULL, "synthetic topology: %s", err);
  if (!t) return failures;
  printf("synthetic: %s\n", xb_topology_summary(t));
  CHECK(xb_topology_packages(t) == 2 && xb_topology_cores(t) == 8 && xb_topology_pus(t) == 16 &&
            xb_topology_numa_nodes(t) == 2 && xb_topology_l3_groups(t) == 2,
        "counts: %s", xb_topology_summary(t));
  xb_placement compact, scatter, numa1, cores;
  CHECK(xb_placement_parse("compact", &compact, err, sizeof err) == 0, "%s", err);
  CHECK(xb_placement_parse("scatter", &scatter, err, sizeof err) == 0, "%s", err);
  CHECK(xb_placement_parse("numa=1", &numa1, err, sizeof err) == 0, "%s", err);
  CHECK(xb_placement_parse("cores=0,2,5", &cores, err, sizeof err) == 0, "%s", err);
  int pus[16];
  CHECK(xb_placement_select(t, &compact, 4, pus, err, sizeof err) == 0, "%s", err);
  printf("compact 4: %d %d %d %d\n", pus[0], pus[1], pus[2], pus[3]);
  CHECK(distinct(pus, 4), "compact PUs distinct");
  for (int i = 0; i < 4; i++) CHECK(pus[i] == 2 * i, "compact thread %d on PU %d, want %d (one per core, package 0)", i, pus[i], 2 * i);
  CHECK(xb_placement_select(t, &scatter, 4, pus, err, sizeof err) == 0, "%s", err);
  printf("scatter 4: %d %d %d %d\n", pus[0], pus[1], pus[2], pus[3]);
  CHECK(distinct(pus, 4), "scatter PUs distinct");
  int in0 = 0;
  for (int i = 0; i < 4; i++) {
    in0 += pus[i] < 8;
    CHECK(pus[i] % 2 == 0, "scatter uses one PU per core before SMT siblings (PU %d)", pus[i]);
  }
  CHECK(in0 == 2, "scatter puts 2 of 4 threads on each package, got %d on package 0", in0);
  CHECK(xb_placement_select(t, &scatter, 2, pus, err, sizeof err) == 0 && (pus[0] < 8) != (pus[1] < 8),
        "scatter 2 threads: one per package (%d, %d)", pus[0], pus[1]);
  CHECK(xb_placement_select(t, &compact, 2, pus, err, sizeof err) == 0 && pus[0] < 8 && pus[1] < 8,
        "compact 2 threads: same package (%d, %d)", pus[0], pus[1]);
  CHECK(xb_placement_select(t, &compact, 12, pus, err, sizeof err) == 0 && distinct(pus, 12), "compact 12 uses SMT, distinct");
  CHECK(xb_placement_select(t, &compact, 16, pus, err, sizeof err) == 0 && distinct(pus, 16), "compact 16 distinct");
  CHECK(xb_placement_select(t, &compact, 17, pus, err, sizeof err) != 0 && strstr(err, "only 16 PUs"), "17 threads refused: %s", err);
  printf("refused: %s\n", err);
  CHECK(xb_placement_select(t, &numa1, 4, pus, err, sizeof err) == 0, "%s", err);
  for (int i = 0; i < 4; i++) CHECK(pus[i] >= 8, "numa=1 thread %d on PU %d, outside node 1", i, pus[i]);
  CHECK(xb_placement_select(t, &numa1, 9, pus, err, sizeof err) != 0, "numa=1 9 threads refused");
  CHECK(xb_placement_select(t, &cores, 3, pus, err, sizeof err) == 0 && pus[0] == 0 && pus[1] == 4 && pus[2] == 10,
        "cores=0,2,5 -> PUs 0,4,10, got %d %d %d", pus[0], pus[1], pus[2]);
  CHECK(xb_placement_select(t, &cores, 4, pus, err, sizeof err) != 0 && strstr(err, "only 3 cores listed"), "%s", err);
  xb_placement far;
  xb_placement_parse("cores=0,9", &far, err, sizeof err);
  CHECK(xb_placement_select(t, &far, 2, pus, err, sizeof err) != 0 && strstr(err, "core 9 out of range"), "out of range: %s", err);
  printf("refused: %s\n", err);
  int sweep[8], n = xb_sweep_threads(t, &compact, sweep, 8);
  CHECK(n == 3 && sweep[0] == 1 && sweep[1] == 4 && sweep[2] == 8, "sweep 1,4,8: got %d entries (%d %d %d)", n, sweep[0],
        sweep[1], sweep[2]);
  n = xb_sweep_threads(t, &numa1, sweep, 8);
  CHECK(n == 2 && sweep[0] == 1 && sweep[1] == 4, "numa sweep 1,4");
  CHECK(xb_bind_threads(t, pus, 1, err, sizeof err) != 0, "binding on a synthetic topology refused");
  xb_topology_close(t);

  static const char *bad[] = {"spread", "cores=", "cores=a", "cores=1,1", "numa=x", "cores=3-1"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    xb_placement p;
    CHECK(xb_placement_parse(bad[i], &p, err, sizeof err) != 0, "placement \"%s\" accepted", bad[i]);
    printf("refused: %s\n", err);
  }

  /* This machine: every policy binds distinct PUs and the binding is checked. */
  t = xb_topology_open(NULL, err, sizeof err);
  CHECK(t != NULL, "%s", err);
  if (!t) return failures;
  printf("this machine: %s\n", xb_topology_summary(t));
  const char *pols[] = {"compact", "scatter", "numa"};
  for (int k = 0; k < 3; k++) {
    xb_placement p;
    xb_placement_parse(pols[k], &p, err, sizeof err);
    int max = xb_placement_max_threads(t, &p);
    for (int nt = 1; nt <= max && nt <= 4; nt++) {
      int sel[4];
      CHECK(xb_placement_select(t, &p, nt, sel, err, sizeof err) == 0, "%s %d: %s", pols[k], nt, err);
      CHECK(distinct(sel, nt), "%s %d: distinct", pols[k], nt);
      int rc = xb_bind_threads(t, sel, nt, err, sizeof err);
      CHECK(rc == 0, "%s %d: %s", pols[k], nt, err);
      printf("%s %d threads bound: PUs", pols[k], nt);
      for (int i = 0; i < nt; i++) printf(" %d", sel[i]);
      printf("\n");
    }
  }
  xb_placement p;
  char list[64];
  snprintf(list, sizeof list, "cores=0,%d", xb_topology_cores(t));
  xb_placement_parse(list, &p, err, sizeof err);
  CHECK(xb_place_threads(t, &p, 2, err, sizeof err) != 0 && strstr(err, "out of range"), "%s refused: %s", list, err);
  int th[8];
  CHECK(xb_threads_parse("1,2", t, &p, th, 8, err, sizeof err) == 2 && th[1] == 2, "threads list");
  CHECK(xb_threads_parse("0", t, &p, th, 8, err, sizeof err) < 0, "threads 0 refused");
  xb_topology_close(t);
  return failures;
}

/* ---- results naming ---------------------------------------------------------- */

static int test_naming(const char *tmpdir) {
  char out[512], err[512];
  xb_model_slug("Intel(R) Xeon(R) Processor", out, sizeof out);
  CHECK(strcmp(out, "intel-xeon-processor") == 0, "slug %s", out);
  xb_model_slug("Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz", out, sizeof out);
  CHECK(strcmp(out, "intel-xeon-platinum-8480") == 0, "slug %s", out);
  xb_model_slug("AMD EPYC 7763 64-Core Processor", out, sizeof out);
  CHECK(strcmp(out, "amd-epyc-7763-64-core-processor") == 0, "slug %s", out);
  char merr[256];
  unsetenv("XATTN_MACHINE_ID");
  xb_machine_name("Intel(R) Xeon(R) Processor", 2, "1 package, 1 numa, 1 l3, 2 cores, 2 pus", out, sizeof out, merr,
                  sizeof merr);
  printf("machine: %s\n", out);
  CHECK(strncmp(out, "intel-xeon-processor-2c-", 24) == 0 && strlen(out) == 32, "machine name %s", out);
  /* The hash is pinned: results/<machine>/ folders and tune caches of earlier
   * versions must keep matching (the development machine's topology below is
   * results/intel-xeon-processor-2c-ff8d2a16/). */
  CHECK(strcmp(out, "intel-xeon-processor-2c-2d2b85cd") == 0, "machine name %s changed", out);
  char other[512];
  xb_machine_name("Intel(R) Xeon(R) Processor", 2, "1 package, 1 numa, 1 l3 (480MB), 2 cores, 2 pus", other,
                  sizeof other, merr, sizeof merr);
  CHECK(strcmp(other, "intel-xeon-processor-2c-ff8d2a16") == 0, "machine name %s changed", other);
  xb_machine_name("Intel(R) Xeon(R) Processor", 2, "2 packages, 2 numa, 2 l3, 2 cores, 2 pus", other, sizeof other,
                  merr, sizeof merr);
  CHECK(strcmp(out, other) != 0, "topology changes the hash");
  /* the test-only identity override (fleet tests): used as given, refused when malformed */
  setenv("XATTN_MACHINE_ID", "fleet-a.1", 1);
  CHECK(xb_machine_name("Intel(R) Xeon(R) Processor", 2, "x", other, sizeof other, merr, sizeof merr) == 0 &&
            strcmp(other, "fleet-a.1") == 0, "XATTN_MACHINE_ID override: %s", other);
  setenv("XATTN_MACHINE_ID", "../evil", 1);
  CHECK(xb_machine_name("Intel(R) Xeon(R) Processor", 2, "x", other, sizeof other, merr, sizeof merr) == -1 &&
            strstr(merr, "XATTN_MACHINE_ID") != NULL, "malformed XATTN_MACHINE_ID accepted: %s", merr);
  unsetenv("XATTN_MACHINE_ID");
  xb_commit_dir_name("0123456789ab", 1, out, sizeof out);
  CHECK(strcmp(out, "0123456789ab-dirty") == 0, "%s", out);
  xb_commit_dir_name("0123456789ab", 0, out, sizeof out);
  CHECK(strcmp(out, "0123456789ab") == 0, "%s", out);
  xb_commit_dir_name("nogit", -1, out, sizeof out);
  CHECK(strcmp(out, "nogit") == 0, "%s", out);
  const char *c = xc_build_commit();
  CHECK(strcmp(c, "nogit") == 0 || strlen(c) == 12, "build commit %s", c);
  printf("build commit %s dirty %d\n", c, xc_build_dirty());
  xb_utc_stamp(out, sizeof out);
  CHECK(strlen(out) == 16 && out[8] == 'T' && out[15] == 'Z', "stamp %s", out);
  xb_sanitize_label("my run/1", out, sizeof out);
  CHECK(strcmp(out, "my-run-1") == 0, "label %s", out);

  /* publishing never overwrites and leaves no temp file */
  char dir[1024], fresh[1024];
  snprintf(fresh, sizeof fresh, "%s/naming-XXXXXX", tmpdir); /* a new tree per run */
  CHECK(mkdtemp(fresh) != NULL, "mkdtemp %s", fresh);
  CHECK(xb_results_subdir(fresh, "m-2c-00000000", "0123456789ab", dir, sizeof dir, err, sizeof err) == 0, "%s", err);
  char paths[3][1200];
  for (int i = 0; i < 3; i++) {
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s/.tmp-%d", dir, i);
    FILE *f = fopen(tmp, "w");
    fprintf(f, "{\"n\": %d}\n", i);
    fclose(f);
    CHECK(xb_publish_result(tmp, dir, "20260101T000000Z", "lbl", paths[i], sizeof paths[i], err, sizeof err) == 0, "%s", err);
    CHECK(access(tmp, F_OK) != 0, "temp file %s removed", tmp);
    printf("published %s\n", paths[i]);
  }
  CHECK(strstr(paths[0], "/m-2c-00000000/0123456789ab/20260101T000000Z_lbl.json") != NULL, "%s", paths[0]);
  CHECK(strstr(paths[1], "20260101T000000Z_lbl_2.json") != NULL, "%s", paths[1]);
  CHECK(strstr(paths[2], "20260101T000000Z_lbl_3.json") != NULL, "%s", paths[2]);
  FILE *f = fopen(paths[0], "r");
  int n = -1;
  CHECK(f && fscanf(f, "{\"n\": %d}", &n) == 1 && n == 0, "first file kept its content");
  if (f) fclose(f);
  return failures;
}

/* ---- BLAS baseline vs reference ---------------------------------------------- */

static int test_baseline(const char *suites_dir) {
  char err[1024], path[2048];
  snprintf(path, sizeof path, "%s/smoke.json", suites_dir);
  xb_suite *s = xb_suite_load(path, err, sizeof err);
  CHECK(s != NULL, "%s", err);
  if (!s) return failures;
  const char *extra =
      "{\"suite\":\"extra\",\"defaults\":{\"heads_q\":4,\"heads_kv\":2,\"head_dim\":16,\"head_dim_v\":24},\"workloads\":["
      "{\"name\":\"cross\",\"mode\":\"cross\",\"batch\":[[0,5,11],[0,7,3]]},"
      "{\"name\":\"topleft\",\"align\":\"top_left\",\"batch\":[[6,5]]},"
      "{\"name\":\"bidir-window\",\"mode\":\"bidirectional\",\"window\":[2,2],\"sinks\":true,\"batch\":[[3,9]]},"
      "{\"name\":\"long-rows\",\"logit_cap\":5,\"batch\":[[300,200]]},"
      "{\"name\":\"empty-rows\",\"mode\":\"cross\",\"window\":[0,-1],\"batch\":[[0,6,3]]}]}";
  xb_suite *x = xb_suite_parse(extra, "extra.json", err, sizeof err);
  CHECK(x != NULL, "%s", err);
  xb_suite *suites[2] = {s, x};
  for (int k = 0; k < 2; k++)
    for (int i = 0; suites[k] && i < suites[k]->count; i++)
      for (int dt = 0; dt < 3; dt++)
        for (int threads = 1; threads <= 2; threads++) {
          const xb_workload *w = &suites[k]->workloads[i];
          xb_problem pb;
          if (xb_problem_build(&pb, w, (xattn_dtype)dt, 11, threads, err, sizeof err) != 0) {
            CHECK(0, "%s", err);
            continue;
          }
          const int64_t n = pb.p.total_tokens * pb.p.heads_q * pb.p.head_dim_v;
          double *ref = malloc(sizeof(double) * (size_t)n);
          float *o = malloc(sizeof(float) * (size_t)n);
          CHECK(xattn_reference(&pb.p, ref) == XATTN_OK, "reference: %s", xattn_last_error());
          for (int how = 0; how < 2; how++) {
            xb_problem_clear_output(&pb);
            CHECK(xb_blas_attention(&pb, threads, (xb_blas_threading)how, err, sizeof err) == 0, "%s", err);
            xb_problem_output_f32(&pb, o);
            double r = xb_error_ratio(&pb, o, ref);
            printf("%-14s %-4s threads %d %-5s max error / tolerance %.3g\n", w->name, xattn_dtype_name((xattn_dtype)dt),
                   threads, how ? "gemm" : "heads", r);
            CHECK(r <= 1.0, "%s %s threads %d: blas baseline off the reference by %.3g x tolerance", w->name,
                  xattn_dtype_name((xattn_dtype)dt), threads, r);
          }
          /* a wrong output must fail the same check (the test can fail) */
          o[n / 2] += 1.0f;
          CHECK(xb_error_ratio(&pb, o, ref) > 1.0, "error ratio notices a wrong element");
          free(ref);
          free(o);
          xb_problem_free(&pb);
        }
  xb_suite_free(x);
  xb_suite_free(s);
  return failures;
}

/* ---- data determinism ---------------------------------------------------------- */

static int test_problem(const char *suites_dir) {
  char err[1024], path[2048];
  snprintf(path, sizeof path, "%s/smoke.json", suites_dir);
  xb_suite *s = xb_suite_load(path, err, sizeof err);
  CHECK(s != NULL, "%s", err);
  if (!s) return failures;
  for (int i = 0; i < s->count; i++) {
    xb_problem a, b;
    CHECK(xb_problem_build(&a, &s->workloads[i], XATTN_BF16, 5, 1, err, sizeof err) == 0, "%s", err);
    CHECK(xb_problem_build(&b, &s->workloads[i], XATTN_BF16, 5, 2, err, sizeof err) == 0, "%s", err);
    const xattn_problem *p = &a.p;
    size_t qb = (size_t)(p->total_tokens * p->heads_q * p->head_dim) * 2;
    CHECK(memcmp(a.q, b.q, qb) == 0, "%s: data independent of the thread count", s->workloads[i].name);
    CHECK(xattn_validate(p) == XATTN_OK, "%s: built problem validates: %s", s->workloads[i].name, xattn_last_error());
    /* unit scale: values in [-1, 1) */
    const uint16_t *q = a.q;
    int in_range = 1;
    for (size_t e = 0; e < qb / 2; e++) {
      float v = xattn_bf16_to_f32(q[e]);
      in_range &= v >= -1.0f && v <= 1.0f;
    }
    CHECK(in_range, "%s: unit-scale data", s->workloads[i].name);
    /* --flush-caches: the tensors' sizes as built, and flushing keeps every byte */
    const size_t kvb = (size_t)a.k_cache_bytes + a.v_cache_bytes + a.k_ext_bytes + a.v_ext_bytes;
    CHECK(a.q_bytes == qb && a.q_bytes + kvb + a.table_bytes + a.tree_bytes == a.input_bytes,
          "%s: tensor sizes %zu + %zu + %zu + %zu sum to input_bytes %zu", s->workloads[i].name, a.q_bytes, kvb,
          a.table_bytes, a.tree_bytes, a.input_bytes);
    {
      const size_t ob = (size_t)(p->total_tokens * p->heads_q * p->head_dim_v) * 2;
      CHECK(xattn_extend_attention(&a.p, NULL) == XATTN_OK, "%s: runs: %s", s->workloads[i].name, xattn_last_error());
      char *before = malloc(ob + a.k_cache_bytes), *q0 = malloc(qb);
      memcpy(before, a.o, ob);
      memcpy(before + ob, a.k_cache, a.k_cache_bytes);
      memcpy(q0, a.q, qb);
      xb_problem_flush(&a, 2);
      CHECK(memcmp(before, a.o, ob) == 0 && memcmp(before + ob, a.k_cache, a.k_cache_bytes) == 0 &&
                memcmp(q0, a.q, qb) == 0,
            "%s: flushing changes no byte", s->workloads[i].name);
      CHECK(xattn_extend_attention(&a.p, NULL) == XATTN_OK && memcmp(before, a.o, ob) == 0,
            "%s: the same output after a flush", s->workloads[i].name);
      free(before);
      free(q0);
    }
    xb_problem c;
    CHECK(xb_problem_build(&c, &s->workloads[i], XATTN_BF16, 6, 1, err, sizeof err) == 0, "%s", err);
    CHECK(memcmp(a.q, c.q, qb) != 0, "%s: the seed changes the data", s->workloads[i].name);
    /* --cache-pages huge: caches on whole 2 MiB pages, the same data, the same output */
    xb_problem h;
    xb_set_cache_pages(XB_CACHE_PAGES_HUGE);
    const int hb = xb_problem_build(&h, &s->workloads[i], XATTN_BF16, 5, 1, err, sizeof err);
    xb_set_cache_pages(XB_CACHE_PAGES_DEFAULT);
    CHECK(hb == 0, "%s", err);
    if (hb == 0) {
      CHECK((uintptr_t)h.k_cache % (2u << 20) == 0 && (uintptr_t)h.v_cache % (2u << 20) == 0,
            "%s: huge caches start on a 2 MiB page", s->workloads[i].name);
      CHECK(xb_get_cache_pages() == XB_CACHE_PAGES_DEFAULT && strcmp(xb_cache_pages_name(XB_CACHE_PAGES_HUGE), "huge") == 0,
            "cache pages setting");
      const size_t ob = (size_t)(p->total_tokens * p->heads_q * p->head_dim_v) * 2;
      CHECK(xattn_extend_attention(&a.p, NULL) == XATTN_OK && xattn_extend_attention(&h.p, NULL) == XATTN_OK,
            "%s: runs: %s", s->workloads[i].name, xattn_last_error());
      CHECK(memcmp(a.o, h.o, ob) == 0, "%s: huge-page caches give the same output", s->workloads[i].name);
      xb_problem_free(&h);
    }
    xb_problem_free(&a);
    xb_problem_free(&b);
    xb_problem_free(&c);
  }
  xb_suite_free(s);
  return failures;
}

/* ---- memory side: bytes that must be read, slot layouts, the roofs -------------- */

/* Keys of request b some query sees, one pair at a time (bench/mask.h). */
static int64_t brute_kv_tokens(const xattn_problem *p) {
  int64_t n = 0;
  for (int32_t b = 0; b < p->batch; b++)
    for (int32_t j = 0; j < xb_key_count(p, b); j++) {
      int seen = 0;
      for (int32_t i = 0; i < p->extend_lens[b] && !seen; i++) seen = xb_key_visible(p, b, i, j);
      n += seen;
    }
  return n;
}

static int32_t slot_of(const xattn_problem *p, int b, int64_t j) {
  return ((const int32_t *)p->req_to_token)[p->req_index[b] * p->max_ctx + j];
}

static int test_memroof(void) {
  char err[1024];
  const char *text =
      "{\"suite\":\"m\",\"defaults\":{\"heads_q\":4,\"heads_kv\":2,\"head_dim\":16,\"head_dim_v\":8},\"workloads\":["
      "{\"name\":\"causal\",\"batch\":[[0,7],[5,3],[0,1]]},"
      "{\"name\":\"window\",\"window\":[3,0],\"batch\":[[10,6]]},"
      "{\"name\":\"bidir-window\",\"mode\":\"bidirectional\",\"window\":[2,2],\"batch\":[[3,9]]},"
      "{\"name\":\"tree\",\"mode\":\"tree\",\"tree_density\":0.3,\"batch\":[[9,7],[2,4]]},"
      "{\"name\":\"tree-window\",\"mode\":\"tree\",\"window\":[4,-1],\"batch\":[[9,7]]},"
      "{\"name\":\"cross\",\"mode\":\"cross\",\"batch\":[[0,5,11],[0,2,3]]},"
      "{\"name\":\"runs4\",\"slots\":\"runs4\",\"batch\":[[13,1],[7,2],[4,1]]},"
      "{\"name\":\"contig\",\"slots\":\"contiguous\",\"batch\":[[13,1],[7,2],[4,1]]},"
      "{\"name\":\"shuf\",\"slots\":\"shuffled\",\"batch\":[[13,1],[7,2],[4,1]]}]}";
  xb_suite *s = xb_suite_parse(text, "memroof.json", err, sizeof err);
  CHECK(s != NULL, "%s", err);
  if (!s) return failures;
  for (int i = 0; i < s->count; i++) {
    xb_problem pb;
    if (xb_problem_build(&pb, &s->workloads[i], XATTN_BF16, 3, 1, err, sizeof err) != 0) {
      CHECK(0, "%s: %s", s->workloads[i].name, err);
      continue;
    }
    const xattn_problem *p = &pb.p;
    xb_must_read mr;
    CHECK(xb_bytes_must_read(p, &mr) == 0, "must_read");
    const int64_t brute = brute_kv_tokens(p);
    printf("%-14s kv tokens that must be read: %lld (brute force %lld)\n", s->workloads[i].name, (long long)mr.kv_tokens,
           (long long)brute);
    CHECK(mr.kv_tokens == brute, "%s: %lld kv tokens, brute force %lld", s->workloads[i].name, (long long)mr.kv_tokens,
          (long long)brute);
    CHECK(mr.kv_bytes == (double)brute * 2 * (16 + 8) * 2, "%s: kv bytes %g", s->workloads[i].name, mr.kv_bytes);
    CHECK(mr.total == mr.kv_bytes + (double)p->total_tokens * 4 * (16 + 8) * 2, "%s: total %g", s->workloads[i].name,
          mr.total);
    xb_gather_plan plan;
    CHECK(xb_gather_plan_build(p, &plan) == 0, "plan");
    CHECK(plan.n == brute, "%s: plan holds %lld rows, want %lld", s->workloads[i].name, (long long)plan.n, (long long)brute);
    CHECK(xb_gather_plan_bytes(&plan) == mr.kv_bytes, "%s: plan bytes", s->workloads[i].name);
    CHECK(xb_gather_roof_gbps(&plan, 2, 0.001) > 0, "%s: gather roof measured", s->workloads[i].name);
    xb_gather_plan_free(&plan);
    /* slot layouts: every prefix slot used once; runs keep N consecutive slots */
    const int32_t run = s->workloads[i].slot_run;
    int64_t total = 0;
    for (int b = 0; b < p->batch; b++) total += p->prefix_lens[b];
    uint8_t *used = calloc((size_t)p->cache_slots, 1);
    int distinct_ok = 1, layout_ok = 1;
    for (int b = 0; b < p->batch; b++)
      for (int64_t j = 0; j < p->prefix_lens[b]; j++) {
        const int32_t sl = slot_of(p, b, j);
        if (sl < 0 || sl >= p->cache_slots || used[sl]) distinct_ok = 0;
        else used[sl] = 1;
        if (j == 0) continue;
        const int32_t prev = slot_of(p, b, j - 1);
        if (run == XB_SLOTS_CONTIGUOUS && sl != prev + 1) layout_ok = 0;
        if (run > 0 && j % run != 0 && sl != prev + 1) layout_ok = 0;
        if (run > 0 && sl % run != j % run) layout_ok = 0;
      }
    free(used);
    CHECK(distinct_ok, "%s: prefix slots are distinct and in range", s->workloads[i].name);
    CHECK(layout_ok, "%s: slot layout %d not followed", s->workloads[i].name, run);
    if (strcmp(s->workloads[i].name, "shuf") == 0) {
      int consecutive = 1;
      for (int64_t j = 1; j < p->prefix_lens[0]; j++) consecutive &= slot_of(p, 0, j) == slot_of(p, 0, j - 1) + 1;
      CHECK(!consecutive, "shuffled: request 0's slots are not consecutive");
    }
    xb_problem_free(&pb);
  }
  /* hand counts: causal (0,7),(5,3),(0,1) -> 7 + 8 + 1; window left 3 on (10,6) -> keys 7..15 */
  xb_problem pb;
  xb_must_read mr;
  xb_problem_build_shape(&pb, &s->workloads[0], XATTN_F32, 3, err, sizeof err);
  xb_bytes_must_read(&pb.p, &mr);
  CHECK(mr.kv_tokens == 16, "causal hand count 16, got %lld", (long long)mr.kv_tokens);
  xb_problem_free(&pb);
  xb_problem_build_shape(&pb, &s->workloads[1], XATTN_F32, 3, err, sizeof err);
  xb_bytes_must_read(&pb.p, &mr);
  CHECK(mr.kv_tokens == 9, "window hand count 9, got %lld", (long long)mr.kv_tokens);
  xb_problem_free(&pb);
  CHECK(xb_stream_roof_gbps(2, (size_t)4 << 20, 0.001) > 0, "stream roof measured");
  const char *bad = "{\"workloads\":[{\"name\":\"a\",\"slots\":\"runs0\",\"batch\":[[4,1]]}]}";
  CHECK(xb_suite_parse(bad, "bad.json", err, sizeof err) == NULL && strstr(err, "slots"), "runs0 refused: %s", err);
  xb_suite_free(s);
  return failures;
}

/* The gather roof's passes read exactly the plan's rows, once each, in every
 * strategy and on every read ISA this CPU runs (their checksum against one
 * computed row by row here), and the roof is the fastest strategy. Rows of
 * awkward lengths (past whole vectors: 8-byte words and single bytes),
 * extend rows beside cache rows, fp8 caches, paged caches in both layouts. */
static uint64_t plan_checksum(const xb_gather_plan *pl) {
  uint64_t s = 0;
  for (int64_t t = 0; t < pl->n; t++) {
    const int e = pl->from_ext[t];
    for (int h = 0; h < pl->heads; h++) {
      s += xb_read_checksum(pl->k_rows[t] + (size_t)h * pl->k_head_step[e], pl->k_row_bytes[e]);
      s += xb_read_checksum(pl->v_rows[t] + (size_t)h * pl->v_head_step[e], pl->v_row_bytes[e]);
    }
  }
  return s;
}

static void count_call(void *ctx) { ++*(int *)ctx; }

static int test_gather_reads(void) {
  char err[1024];
  const char *text =
      "{\"suite\":\"g\",\"defaults\":{\"heads_q\":6,\"heads_kv\":3,\"head_dim\":50,\"head_dim_v\":37},\"workloads\":["
      "{\"name\":\"shuf\",\"batch\":[[41,3],[0,5],[77,1]]},"
      "{\"name\":\"runs4\",\"slots\":\"runs4\",\"batch\":[[30,2],[9,1]]},"
      "{\"name\":\"page16-hm\",\"page_size\":16,\"cache_layout\":\"head_major\",\"batch\":[[45,2],[17,1]]},"
      "{\"name\":\"page8\",\"page_size\":8,\"batch\":[[45,2],[17,1]]},"
      "{\"name\":\"fp8\",\"kv_cache\":\"e4m3fn\",\"batch\":[[45,3],[17,1]]},"
      "{\"name\":\"d128\",\"head_dim\":128,\"head_dim_v\":128,\"batch\":[[70,1],[33,1]]}]}";
  xb_suite *s = xb_suite_parse(text, "gather.json", err, sizeof err);
  CHECK(s != NULL, "%s", err);
  if (!s) return failures;
  const xattn_dtype dts[2] = {XATTN_F32, XATTN_BF16};
  for (int i = 0; i < s->count; i++)
    for (int di = 0; di < 2; di++) {
      const char *name = s->workloads[i].name;
      xb_problem pb;
      if (xb_problem_build(&pb, &s->workloads[i], dts[di], 5, 2, err, sizeof err) != 0) {
        CHECK(0, "%s: %s", name, err);
        continue;
      }
      xb_gather_plan plan;
      CHECK(xb_gather_plan_build(&pb.p, &plan) == 0, "%s: plan", name);
      const double bytes = xb_gather_plan_bytes(&plan);
      const uint64_t want = plan_checksum(&plan);
      int isas = 0;
      for (int isa = 2; isa >= 0; isa--) {
        if (xb_read_force_isa(isa) != isa) continue; /* not on this CPU */
        isas++;
        for (int k = 0; k < XB_GATHER_STRATEGIES; k++) {
          const xb_gather_strategy st = xb_gather_strategies[k];
          const xb_read_pass r = xb_gather_pass(&plan, 2, st);
          CHECK(r.bytes == bytes, "%s %s isa %d tile %d prefetch %d KiB (l1 %d): read %.0f bytes, the plan holds %.0f", name,
                xattn_dtype_name(dts[di]), isa, st.tile_tokens, st.prefetch_kib, st.prefetch_l1, r.bytes, bytes);
          CHECK(r.checksum == want, "%s %s isa %d tile %d prefetch %d KiB (l1 %d): checksum %llx, rows sum to %llx", name,
                xattn_dtype_name(dts[di]), isa, st.tile_tokens, st.prefetch_kib, st.prefetch_l1, (unsigned long long)r.checksum,
                (unsigned long long)want);
        }
      }
      xb_read_force_isa(-1);
      CHECK(isas >= 1, "no read ISA ran");
      xb_gather_roof roof;
      /* the untimed hook (--flush-caches): once before every pass of every strategy */
      int passes = 0;
      plan.before_pass = count_call;
      plan.before_ctx = &passes;
      CHECK(xb_gather_roof_measure(&plan, 2, 0.001, &roof) == 0, "%s: roof measured", name);
      CHECK(passes >= 1 + 3 * XB_GATHER_STRATEGIES && (passes - 1) % XB_GATHER_STRATEGIES == 0,
            "%s: %d calls of before_pass, want the warm-up and whole rounds of %d", name, passes, XB_GATHER_STRATEGIES);
      CHECK(roof.best >= 0 && roof.best < XB_GATHER_STRATEGIES && roof.gbps == roof.gbps_of[roof.best], "%s: roof is strategy %d", name,
            roof.best);
      for (int k = 0; k < XB_GATHER_STRATEGIES; k++)
        CHECK(roof.gbps_of[k] > 0 && roof.gbps_of[k] <= roof.gbps, "%s: strategy %d %.3f GB/s, roof %.3f", name, k,
              roof.gbps_of[k], roof.gbps);
      xb_gather_plan_free(&plan);
      xb_problem_free(&pb);
    }
  xb_suite_free(s);
  /* the strategy set: token-major and head-major tiles, with and without prefetch */
  int token_major = 0, tiled = 0, no_prefetch = 0, prefetch = 0, into_l1 = 0, into_l2 = 0;
  for (int k = 0; k < XB_GATHER_STRATEGIES; k++) {
    token_major += xb_gather_strategies[k].tile_tokens == 1;
    tiled += xb_gather_strategies[k].tile_tokens > 1;
    no_prefetch += xb_gather_strategies[k].prefetch_kib == 0;
    prefetch += xb_gather_strategies[k].prefetch_kib > 0;
    into_l1 += xb_gather_strategies[k].prefetch_kib > 0 && xb_gather_strategies[k].prefetch_l1;
    into_l2 += xb_gather_strategies[k].prefetch_kib > 0 && !xb_gather_strategies[k].prefetch_l1;
    CHECK(xb_gather_strategies[k].prefetch_kib > 0 || !xb_gather_strategies[k].prefetch_l1, "strategy %d: a level without prefetch", k);
  }
  CHECK(token_major && tiled && no_prefetch && prefetch && into_l1 && into_l2,
        "strategies cover token-major, tiles, prefetch on and off, into L1 and into L2");
  /* the fastest: the fewest seconds > 0 */
  const double a[4] = {0.5, 0.2, 0.3, 0.2}, b[3] = {0, 0.4, 0.1}, c[2] = {0, -1};
  CHECK(xb_gather_fastest(a, 4) == 1, "fastest of {0.5,0.2,0.3,0.2}: %d", xb_gather_fastest(a, 4));
  CHECK(xb_gather_fastest(b, 3) == 2, "fastest of {0,0.4,0.1}: %d", xb_gather_fastest(b, 3));
  CHECK(xb_gather_fastest(c, 2) == -1 && xb_gather_fastest(a, 0) == -1, "no time measured: -1");
  return failures;
}

static int flops_test(const char *dir) { (void)dir; return test_flops(); }
static int placement_test(const char *dir) { (void)dir; return test_placement(); }
static int memroof_test(const char *dir) { (void)dir; return test_memroof(); }
static int gather_reads_test(const char *dir) { (void)dir; return test_gather_reads(); }

/* Every test: its ctest name (bench.<name>), its argument and the directory
 * it takes (`--list` prints the command lines; @SUITES@ and @TMP@ are filled
 * in by bench/tests/CMakeLists.txt). */
static const struct {
  const char *ctest_name, *arg, *dir;
  int (*fn)(const char *dir);
} tests[] = {
    {"workload_parse", "workload", "@SUITES@", test_workload},
    {"flop_count", "flops", "@SUITES@", flops_test},
    {"placement", "placement", "@SUITES@", placement_test},
    {"results_naming", "naming", "@TMP@", test_naming},
    {"baseline_vs_reference", "baseline", "@SUITES@", test_baseline},
    {"problem_builder", "problem", "@SUITES@", test_problem},
    {"memory_roofs", "memroof", "@SUITES@", memroof_test},
    {"gather_roof_reads", "gatherreads", "@SUITES@", gather_reads_test},
};

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--list")) {
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++)
      printf("%s %s %s\n", tests[i].ctest_name, tests[i].arg, tests[i].dir);
    return 0;
  }
  if (argc < 3) {
    fprintf(stderr, "usage: %s --list | workload|flops|placement|naming|baseline|problem|memroof|gatherreads SUITES_DIR|TMPDIR\n", argv[0]);
    return 2;
  }
  const char *what = argv[1];
  size_t i = 0;
  while (i < sizeof tests / sizeof *tests && strcmp(what, tests[i].arg)) i++;
  if (i == sizeof tests / sizeof *tests) {
    fprintf(stderr, "unknown test %s\n", what);
    return 2;
  }
  const int f = tests[i].fn(argv[2]);
  printf("%s: %d failure(s)\n", what, f);
  return f ? 1 : 0;
}
