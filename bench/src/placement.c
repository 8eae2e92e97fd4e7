/* Placement policies: which PU each of n threads runs on, and which thread
 * counts are worth sweeping on this topology. */
#define _POSIX_C_SOURCE 200809L
#include "topology_internal.h"
#include "xattn_bench/topology.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_int_list(const char *s, int *out, int max, int *count, char *bad, size_t badlen) {
  int n = 0;
  const char *c = s;
  while (*c) {
    char *end;
    errno = 0;
    long a = strtol(c, &end, 10);
    if (end == c || errno || a < 0 || a > 1000000) {
      snprintf(bad, badlen, "\"%s\" is not a non-negative integer list", s);
      return -1;
    }
    long b = a;
    if (*end == '-') {
      const char *c2 = end + 1;
      b = strtol(c2, &end, 10);
      if (end == c2 || b < a || b > 1000000) {
        snprintf(bad, badlen, "bad range in \"%s\"", s);
        return -1;
      }
    }
    for (long v = a; v <= b; v++) {
      if (n >= max) {
        snprintf(bad, badlen, "more than %d entries", max);
        return -1;
      }
      out[n++] = (int)v;
    }
    if (*end == ',') end++;
    else if (*end) {
      snprintf(bad, badlen, "unexpected '%c' in \"%s\"", *end, s);
      return -1;
    }
    c = end;
  }
  if (n == 0) {
    snprintf(bad, badlen, "empty list");
    return -1;
  }
  *count = n;
  return 0;
}

int xb_placement_parse(const char *s, xb_placement *p, char *err, size_t errlen) {
  memset(p, 0, sizeof *p);
  if (!s || !*s) s = "compact";
  if (strcmp(s, "compact") == 0) {
    p->kind = XB_PLACE_COMPACT;
  } else if (strcmp(s, "scatter") == 0) {
    p->kind = XB_PLACE_SCATTER;
  } else if (strcmp(s, "numa") == 0 || strncmp(s, "numa=", 5) == 0) {
    p->kind = XB_PLACE_NUMA;
    if (s[4] == '=') {
      char *end;
      long v = strtol(s + 5, &end, 10);
      if (end == s + 5 || *end || v < 0 || v > 4096) {
        snprintf(err, errlen, "placement \"%s\": numa node must be a non-negative integer", s);
        return -1;
      }
      p->numa_node = (int)v;
    }
  } else if (strncmp(s, "cores=", 6) == 0) {
    p->kind = XB_PLACE_CORES;
    char bad[160];
    if (parse_int_list(s + 6, p->cores, XB_MAX_CORES_LIST, &p->ncores, bad, sizeof bad) != 0) {
      snprintf(err, errlen, "placement \"%s\": %s", s, bad);
      return -1;
    }
    for (int i = 0; i < p->ncores; i++)
      for (int j = 0; j < i; j++)
        if (p->cores[i] == p->cores[j]) {
          snprintf(err, errlen, "placement \"%s\": core %d listed twice", s, p->cores[i]);
          return -1;
        }
  } else {
    snprintf(err, errlen, "placement \"%s\": unknown policy (compact, scatter, numa, numa=N, cores=0,2,4)", s);
    return -1;
  }
  if (strlen(s) >= sizeof p->name) {
    snprintf(err, errlen, "placement: name too long");
    return -1;
  }
  strcpy(p->name, s);
  return 0;
}

/* The k-th PU (logical order) of a core, or NULL. */
static hwloc_obj_t core_pu(hwloc_topology_t topo, hwloc_obj_t core, int k) {
  return hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU, (unsigned)k);
}

static int max_smt(hwloc_topology_t topo) {
  int m = 1, n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  for (int i = 0; i < n; i++) {
    hwloc_obj_t c = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)i);
    int k = hwloc_get_nbobjs_inside_cpuset_by_type(topo, c->cpuset, HWLOC_OBJ_PU);
    if (k > m) m = k;
  }
  return m;
}

/* Cores of the policy's domain, in logical order. */
static int domain_cores(const xb_topology *t, const xb_placement *p, hwloc_obj_t *cores, char *err,
                        size_t errlen) {
  hwloc_topology_t topo = t->topo;
  int n = 0, total = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  if (p->kind == XB_PLACE_CORES) {
    for (int i = 0; i < p->ncores; i++) {
      if (p->cores[i] >= total) {
        snprintf(err, errlen, "placement %s: core %d out of range (this machine has %d cores, 0..%d)",
                 p->name, p->cores[i], total, total - 1);
        return -1;
      }
      cores[n++] = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)p->cores[i]);
    }
    return n;
  }
  hwloc_const_cpuset_t domain = hwloc_topology_get_topology_cpuset(topo);
  if (p->kind == XB_PLACE_NUMA) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)p->numa_node);
    if (!node) {
      snprintf(err, errlen, "placement %s: numa node %d out of range (this machine has %d)", p->name,
               p->numa_node, t->numa);
      return -1;
    }
    domain = node->cpuset;
  }
  for (int i = 0; i < total; i++) {
    hwloc_obj_t c = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)i);
    if (hwloc_bitmap_isincluded(c->cpuset, domain)) cores[n++] = c;
  }
  return n;
}

int xb_placement_max_threads(const xb_topology *t, const xb_placement *p) {
  if (p->kind == XB_PLACE_CORES) return p->ncores;
  int total = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE);
  hwloc_obj_t *cores = malloc(sizeof *cores * (size_t)(total > 0 ? total : 1));
  char err[8];
  int n = domain_cores(t, p, cores, err, sizeof err), pus = 0;
  for (int i = 0; i < n; i++)
    pus += hwloc_get_nbobjs_inside_cpuset_by_type(t->topo, cores[i]->cpuset, HWLOC_OBJ_PU);
  free(cores);
  return pus;
}

/* Scatter: pick `want` of the n cores spread as evenly as possible over the
 * hierarchy (packages, then L3 groups, ...), using hwloc_distrib. */
static int scatter_pick(hwloc_topology_t topo, hwloc_obj_t *cores, int n, int want, int *picked) {
  int depth = hwloc_get_type_depth(topo, HWLOC_OBJ_CORE);
  /* hwloc_distrib allocates the sets itself (it stores hwloc_bitmap_dup()s) */
  hwloc_cpuset_t *sets = calloc((size_t)want, sizeof *sets);
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  int rc = hwloc_distrib(topo, &root, 1, sets, (unsigned)want, depth, 0);
  int m = 0;
  for (int i = 0; i < want && rc == 0; i++) {
    for (int c = 0; c < n; c++) {
      int used = 0;
      for (int k = 0; k < m; k++) used |= picked[k] == c;
      if (!used && hwloc_bitmap_isincluded(cores[c]->cpuset, sets[i])) {
        picked[m++] = c;
        break;
      }
    }
  }
  for (int i = 0; i < want; i++) hwloc_bitmap_free(sets[i]); /* NULL-safe */
  free(sets);
  /* distrib may merge sets on odd shapes: fill up in logical order. */
  for (int c = 0; c < n && m < want; c++) {
    int used = 0;
    for (int k = 0; k < m; k++) used |= picked[k] == c;
    if (!used) picked[m++] = c;
  }
  return m;
}

int xb_placement_select(const xb_topology *t, const xb_placement *p, int nthreads, int *pus,
                        char *err, size_t errlen) {
  hwloc_topology_t topo = t->topo;
  if (nthreads < 1) {
    snprintf(err, errlen, "threads: %d is not a positive thread count", nthreads);
    return -1;
  }
  int total = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  if (total < 1) {
    snprintf(err, errlen, "topology: hwloc reports no cores");
    return -1;
  }
  hwloc_obj_t *cores = malloc(sizeof *cores * (size_t)(total + XB_MAX_CORES_LIST));
  int *picked = malloc(sizeof *picked * (size_t)(total + XB_MAX_CORES_LIST));
  int n = domain_cores(t, p, cores, err, errlen), rc = -1;
  if (n < 0) goto out;
  int cap = xb_placement_max_threads(t, p);
  if (p->kind == XB_PLACE_CORES && nthreads > p->ncores) {
    snprintf(err, errlen, "placement %s: %d threads but only %d cores listed", p->name, nthreads, p->ncores);
    goto out;
  }
  if (nthreads > cap) {
    snprintf(err, errlen, "placement %s: %d threads but its domain has only %d PUs", p->name, nthreads, cap);
    goto out;
  }
  /* Round k places threads on the k-th PU of cores (k = 0: one per core). */
  int placed = 0, smt = max_smt(topo);
  for (int k = 0; k < smt && placed < nthreads; k++) {
    int avail = 0;
    hwloc_obj_t *round = malloc(sizeof *round * (size_t)(n > 0 ? n : 1));
    for (int c = 0; c < n; c++)
      if (core_pu(topo, cores[c], k)) round[avail++] = cores[c];
    int want = nthreads - placed < avail ? nthreads - placed : avail;
    int got;
    if (p->kind == XB_PLACE_SCATTER && want < avail) {
      got = scatter_pick(topo, round, avail, want, picked);
      /* keep logical order among the picked cores: thread ids follow the machine */
      for (int a = 0; a < got; a++)
        for (int b = a + 1; b < got; b++)
          if (picked[b] < picked[a]) {
            int tmp = picked[a];
            picked[a] = picked[b];
            picked[b] = tmp;
          }
    } else {
      for (got = 0; got < want; got++) picked[got] = got;
    }
    for (int i = 0; i < got; i++) pus[placed++] = (int)core_pu(topo, round[picked[i]], k)->os_index;
    free(round);
  }
  if (placed < nthreads) {
    snprintf(err, errlen, "placement %s: could place only %d of %d threads", p->name, placed, nthreads);
    goto out;
  }
  rc = 0;
out:
  free(cores);
  free(picked);
  return rc;
}

static int cores_in_first(hwloc_topology_t topo, hwloc_obj_type_t type) {
  hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, 0);
  if (!o || !o->cpuset) return -1;
  return hwloc_get_nbobjs_inside_cpuset_by_type(topo, o->cpuset, HWLOC_OBJ_CORE);
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int xb_sweep_threads(const xb_topology *t, const xb_placement *p, int *out, int max) {
  hwloc_topology_t topo = t->topo;
  int cand[5] = {1, cores_in_first(topo, HWLOC_OBJ_L3CACHE), cores_in_first(topo, HWLOC_OBJ_NUMANODE),
                 cores_in_first(topo, HWLOC_OBJ_PACKAGE), t->cores};
  int cap = p->kind == XB_PLACE_CORES ? p->ncores : t->cores;
  if (p->kind == XB_PLACE_NUMA) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)p->numa_node);
    cap = node ? hwloc_get_nbobjs_inside_cpuset_by_type(topo, node->cpuset, HWLOC_OBJ_CORE) : 1;
  }
  int n = 0;
  for (int i = 0; i < 5; i++) {
    int v = cand[i];
    if (v < 1) continue;
    if (v > cap) v = cap;
    cand[n++] = v;
  }
  qsort(cand, (size_t)n, sizeof *cand, cmp_int);
  int m = 0;
  for (int i = 0; i < n && m < max; i++)
    if (m == 0 || out[m - 1] != cand[i]) out[m++] = cand[i];
  return m;
}

int xb_threads_parse(const char *s, const xb_topology *t, const xb_placement *p, int *out, int max,
                     char *err, size_t errlen) {
  if (!s || !*s || strcmp(s, "auto") == 0) return xb_sweep_threads(t, p, out, max);
  int n = 0;
  char bad[160];
  if (parse_int_list(s, out, max, &n, bad, sizeof bad) != 0) {
    snprintf(err, errlen, "threads \"%s\": %s", s, bad);
    return -1;
  }
  for (int i = 0; i < n; i++)
    if (out[i] < 1) {
      snprintf(err, errlen, "threads \"%s\": %d is not a positive thread count", s, out[i]);
      return -1;
    }
  return n;
}
