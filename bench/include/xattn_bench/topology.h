/* xattn_bench/topology.h — what the machine looks like and where threads run.
 *
 * hwloc discovers packages, NUMA nodes, L3 groups, cores and SMT siblings; a
 * placement policy turns "n threads, compact/scatter/numa/cores=..." into one
 * PU per thread; xb_bind_threads() binds OpenMP's threads to those PUs inside a
 * parallel region of exactly n threads (the team the kernel will reuse) and
 * checks the binding took. Shared by xattn-bench and xattn-tune.
 */
#ifndef XATTN_BENCH_TOPOLOGY_H
#define XATTN_BENCH_TOPOLOGY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xb_topology xb_topology;

/* Loads this machine's topology (synthetic == NULL) or an hwloc synthetic
 * description such as "package:2 numa:1 l3:1 core:4 pu:2" (tests: shapes this
 * machine doesn't have; binding is then refused). NULL on error, reason in err. */
xb_topology *xb_topology_open(const char *synthetic, char *err, size_t errlen);
void xb_topology_close(xb_topology *t);

int xb_topology_packages(const xb_topology *t);
int xb_topology_numa_nodes(const xb_topology *t);
int xb_topology_l3_groups(const xb_topology *t); /* 1 if the machine reports no L3 */
int xb_topology_cores(const xb_topology *t);
int xb_topology_pus(const xb_topology *t);
int xb_topology_is_synthetic(const xb_topology *t);
/* One line, e.g. "1 package, 1 numa, 1 l3 (480MB), 2 cores, 2 pus". */
const char *xb_topology_summary(const xb_topology *t);
/* The underlying hwloc_topology_t (as void * so callers need no hwloc.h). */
void *xb_topology_hwloc(const xb_topology *t);

/* ---- placement ---------------------------------------------------------- */
typedef enum xb_place_kind {
  XB_PLACE_COMPACT = 0, /* consecutive cores (one PU each), then SMT siblings */
  XB_PLACE_SCATTER = 1, /* spread over packages, then L3 groups (hwloc_distrib) */
  XB_PLACE_NUMA = 2,    /* compact inside one NUMA node ("numa" = node 0, "numa=N") */
  XB_PLACE_CORES = 3    /* explicit logical core indices "cores=0,2,4" */
} xb_place_kind;

#define XB_MAX_CORES_LIST 1024
typedef struct xb_placement {
  xb_place_kind kind;
  int numa_node;               /* XB_PLACE_NUMA */
  int ncores;                  /* XB_PLACE_CORES */
  int cores[XB_MAX_CORES_LIST];
  char name[256];              /* canonical name as used in benchmark names */
} xb_placement;

/* Parses "compact", "scatter", "numa", "numa=N", "cores=0,2,4" or
 * "cores=0-3". 0 on success; else -1 and one line in err. Ranges are checked
 * against a topology only by xb_placement_select(). */
int xb_placement_parse(const char *s, xb_placement *p, char *err, size_t errlen);

/* Chooses nthreads distinct PUs (hwloc OS indices into pus[]) for the policy.
 * 0 on success; -1 with one line in err (too many threads for the policy's
 * domain, core or node index out of range). */
int xb_placement_select(const xb_topology *t, const xb_placement *p, int nthreads,
                        int *pus, char *err, size_t errlen);

/* Most threads the policy can place (one per PU of its domain). */
int xb_placement_max_threads(const xb_topology *t, const xb_placement *p);

/* Binds thread i of an OpenMP team of nthreads to pus[i] (one PU per thread),
 * inside "#pragma omp parallel num_threads(nthreads)", and checks each binding
 * with hwloc_get_cpubind and hwloc_get_last_cpu_location. Later parallel
 * regions with the same team size reuse these bound threads (libgomp keeps its
 * pool). 0 on success; -1 with one line in err. Refused on synthetic topologies. */
int xb_bind_threads(const xb_topology *t, const int *pus, int nthreads, char *err, size_t errlen);

/* Convenience: select + bind. */
int xb_place_threads(const xb_topology *t, const xb_placement *p, int nthreads,
                     char *err, size_t errlen);

/* Thread counts worth sweeping: one core, one L3 group, one NUMA node, one
 * package, all cores — capped by what the placement can place, sorted,
 * deduplicated. Returns how many were written to out (at most max). */
int xb_sweep_threads(const xb_topology *t, const xb_placement *p, int *out, int max);

/* Parses a thread list "1,2,4" or "auto" (= xb_sweep_threads). Returns the
 * count written to out, or -1 with one line in err. */
int xb_threads_parse(const char *s, const xb_topology *t, const xb_placement *p,
                     int *out, int max, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
