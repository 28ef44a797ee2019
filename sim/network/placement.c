/* placement: see placement.h. */
#include "placement.h"

#include <stdlib.h>

#include "../../workloads/alloc.h"

const char *const ts_placement_names[] = {"contiguous", "spread", "random", NULL};

/* splitmix64: small, fast and the same everywhere (rand() is not). */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static int by_value(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* Fills nodes[0..k) for the policy; returns 0, or -1 when the machine is too small. */
static int pick_nodes(const ts_platform *pf, ts_placement how, uint64_t seed, long k, long *nodes) {
  long total = pf->n_nodes;
  if (k > total)
    return -1;
  if (how == TS_PLACEMENT_CONTIGUOUS) {
    for (long i = 0; i < k; i++)
      nodes[i] = i;
    return 0;
  }
  if (how == TS_PLACEMENT_SPREAD) {
    long per_group = ts_platform_unit_nodes(pf);
    long groups = (total + per_group - 1) / per_group;
    long n = 0;
    for (long slot = 0; n < k && slot < per_group; slot++)
      for (long g = 0; n < k && g < groups; g++)
        if (g * per_group + slot < total) /* the last group may be partly filled */
          nodes[n++] = g * per_group + slot;
    return n == k ? 0 : -1;
  }
  long *all = malloc((size_t)total * sizeof *all);
  TS_ASSERT(all != NULL);
  for (long i = 0; i < total; i++)
    all[i] = i;
  uint64_t state = seed;
  for (long i = 0; i < k; i++) { /* the first k steps of a Fisher-Yates shuffle */
    long j = i + (long)(next_random(&state) % (uint64_t)(total - i));
    long tmp = all[i];
    all[i] = all[j];
    all[j] = tmp;
  }
  for (long i = 0; i < k; i++)
    nodes[i] = all[i];
  free(all);
  qsort(nodes, (size_t)k, sizeof *nodes, by_value);
  return 0;
}

long *ts_placement_gpus(const ts_platform *pf, ts_placement how, uint64_t seed, long n_ranks) {
  long gpn = pf->gpus_per_node, k = (n_ranks + gpn - 1) / gpn;
  long *nodes = malloc((size_t)(k > 0 ? k : 1) * sizeof *nodes);
  TS_ASSERT(nodes != NULL);
  if (pick_nodes(pf, how, seed, k, nodes) != 0) {
    free(nodes);
    return NULL;
  }
  long *gpus = malloc((size_t)(n_ranks > 0 ? n_ranks : 1) * sizeof *gpus);
  TS_ASSERT(gpus != NULL);
  for (long r = 0; r < n_ranks; r++)
    gpus[r] = nodes[r / gpn] * gpn + r % gpn;
  free(nodes);
  return gpus;
}

/* Sorts ids[0..n), keeps each value once and returns how many there are. */
static long unique(long *ids, long n) {
  qsort(ids, (size_t)n, sizeof *ids, by_value);
  long k = 0;
  for (long i = 0; i < n; i++)
    if (k == 0 || ids[i] != ids[k - 1])
      ids[k++] = ids[i];
  return k;
}

void ts_placement_parts(const ts_platform *pf, const long *rank_gpu, long n_ranks,
                        long parts[TS_PART_COUNT]) {
  long *nodes = ts_alloc((size_t)n_ranks, sizeof *nodes);
  for (long r = 0; r < n_ranks; r++)
    nodes[r] = (rank_gpu != NULL ? rank_gpu[r] : r) / pf->gpus_per_node;
  long n_nodes = unique(nodes, n_ranks), n = 0;
  long *switches = ts_alloc((size_t)(n_nodes * pf->n_nics), sizeof *switches);
  for (long i = 0; i < n_nodes; i++)
    for (int k = 0; k < pf->n_nics; k++)
      switches[n++] = pf->topology == TS_TOPO_DRAGONFLY ? nodes[i] / pf->net.nodes_per_switch
                                                        : ts_platform_leaf(pf, nodes[i], k);
  parts[TS_PART_GPU] = n_ranks;
  parts[TS_PART_NODE] = n_nodes;
  parts[TS_PART_LINK] = n_nodes * pf->n_nics;
  parts[TS_PART_SWITCH] = unique(switches, n);
  free(switches);
  free(nodes);
}
