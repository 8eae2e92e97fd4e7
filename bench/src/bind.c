/* Binds an OpenMP team to chosen PUs and checks that the binding took. */
#define _GNU_SOURCE
#include "topology_internal.h"
#include "xattn_bench/topology.h"

#include <omp.h>
#include <stdio.h>
#include <string.h>

int xb_bind_threads(const xb_topology *t, const int *pus, int nthreads, char *err, size_t errlen) {
  if (t->synthetic) {
    snprintf(err, errlen, "bind: refusing to bind on a synthetic topology");
    return -1;
  }
  if (nthreads < 1) {
    snprintf(err, errlen, "bind: %d is not a positive thread count", nthreads);
    return -1;
  }
  hwloc_topology_t topo = t->topo;
  int failed = 0, team = 0;
  char msg[256] = "";
  /* One region of exactly nthreads: libgomp then reuses these threads for the
   * kernel's regions of the same size. Dynamic teams would hand us fewer. */
  omp_set_dynamic(0);
#pragma omp parallel num_threads(nthreads) shared(failed, team, msg)
  {
    int tid = omp_get_thread_num();
#pragma omp single
    team = omp_get_num_threads();
    hwloc_bitmap_t want = hwloc_bitmap_alloc(), got = hwloc_bitmap_alloc(), last = hwloc_bitmap_alloc();
    hwloc_bitmap_only(want, (unsigned)pus[tid]);
    int ok = hwloc_set_cpubind(topo, want, HWLOC_CPUBIND_THREAD) == 0 &&
             hwloc_get_cpubind(topo, got, HWLOC_CPUBIND_THREAD) == 0 && hwloc_bitmap_isequal(want, got);
    /* After the bind the scheduler must move us: the last CPU we ran on is the PU. */
    if (ok) {
      volatile double spin = 0;
      for (int i = 0; i < 1000; i++) spin += i;
      ok = hwloc_get_last_cpu_location(topo, last, HWLOC_CPUBIND_THREAD) == 0 &&
           hwloc_bitmap_isincluded(last, want);
    }
    if (!ok) {
#pragma omp critical
      {
        failed = 1;
        char a[64], b[64];
        hwloc_bitmap_list_snprintf(a, sizeof a, got);
        hwloc_bitmap_list_snprintf(b, sizeof b, last);
        snprintf(msg, sizeof msg, "bind: thread %d to PU %d failed (cpubind %s, last cpu %s)", tid, pus[tid], a, b);
      }
    }
    hwloc_bitmap_free(want);
    hwloc_bitmap_free(got);
    hwloc_bitmap_free(last);
  }
  if (team != nthreads) {
    snprintf(err, errlen, "bind: asked OpenMP for %d threads, got %d (OMP_THREAD_LIMIT?)", nthreads, team);
    return -1;
  }
  if (failed) {
    snprintf(err, errlen, "%s", msg);
    return -1;
  }
  return 0;
}

int xb_place_threads(const xb_topology *t, const xb_placement *p, int nthreads, char *err, size_t errlen) {
  int pus[XB_MAX_CORES_LIST * 4];
  if (nthreads > (int)(sizeof pus / sizeof *pus)) {
    snprintf(err, errlen, "threads: %d is too many", nthreads);
    return -1;
  }
  if (xb_placement_select(t, p, nthreads, pus, err, errlen) != 0) return -1;
  return xb_bind_threads(t, pus, nthreads, err, errlen);
}
