/* coll: ring orders on Frontier's irregular node and step counts. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "../../sim/engine/coll.h"
#include "../../sim/network/route.h"
#include "fixtures.h"

static ts_platform pf;

static double ring_bottleneck(const long *ring, int n, int *links) {
  double w = 1e300;
  *links = 0;
  for (int i = 0; i < n; i++) {
    ts_route r;
    ts_route_between(&pf, ring[i], ring[(i + 1) % n], &r);
    w = r.bw_Bps < w ? r.bw_Bps : w;
    *links += r.n_links;
  }
  return w;
}

static void test_node_rings(void **state) {
  (void)state;
  /* Four GCDs 0-3: 0-1 and 2-3 are 200 GB/s, 0-2 and 1-3 50 GB/s; 0-3 and 1-2 have no link.
   * The best ring uses direct links only: 0-1-3-2, bottleneck 50 GB/s, 4 links. */
  long four[4] = {3, 1, 2, 0}, ring[8];
  int order[8];
  ts_coll_ring_order(&pf, four, 4, order);
  const int expect[4] = {3, 1, 0, 2}; /* indices of GPUs 0, 1, 3, 2 in `four` */
  assert_memory_equal(order, expect, sizeof expect);
  /* A full node: every hop can be a direct link (e.g. 0-1-3-2-4-5-7-6), so 8 links. */
  long eight[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  ts_coll_ring_order(&pf, eight, 8, order);
  for (int i = 0; i < 8; i++)
    ring[i] = eight[order[i]];
  int links = 0;
  assert_rel(ring_bottleneck(ring, 8, &links), 50e9 * 0.72, 1e-15);
  assert_int_equal(links, 8);
  /* Natural order 0..7 would cross links 1-2, 3-4, 5-6, 7-0 that do not exist. */
  assert_true(ring_bottleneck(eight, 8, &links) <= 50e9 * 0.72 && links > 8);
  /* Groups spanning nodes go in GPU order. */
  long spread[3] = {16, 0, 8};
  ts_coll_ring_order(&pf, spread, 3, order);
  const int sorted[3] = {1, 2, 0};
  assert_memory_equal(order, sorted, sizeof sorted);
}

static void test_steps(void **state) {
  (void)state;
  assert_int_equal(ts_coll_steps(TS_COLL_ALLREDUCE, 8), 14);
  assert_int_equal(ts_coll_steps(TS_COLL_REDUCE_SCATTER, 8), 7);
  assert_int_equal(ts_coll_steps(TS_COLL_ALLGATHER, 2), 1);
}

/* g: a group of GPUs 0 .. n - 1 of p (n <= 64), planned; ring: its rings' GPUs. */
static void plan_first_gpus(const ts_platform *p, int n, ts_coll_group *g, long *ring) {
  long gpus[64];
  int order[64 * TS_COLL_MAX_RINGS];
  for (int i = 0; i < n; i++)
    gpus[i] = i;
  *g = (ts_coll_group){.n = n};
  g->n_rings = ts_coll_rings(p, gpus, n, order);
  g->per_node = ts_coll_per_node(p, gpus, order, n);
  for (int i = 0; i < n * g->n_rings; i++)
    ring[i] = gpus[order[i]];
  ts_coll_plan(p, g, ring);
}

/* An all-to-all on 64 GCDs over 8 Frontier nodes: NCCL's sends every copy to its expert's
 * member; DeepEP (ts_coll_node_dispatch), routed as DeepSeek-V3 routes (top 8 of 256 experts
 * within 4 of 8 groups), a token once to each of the 4 (1 - 0.75^8) = 3.60 nodes it reaches,
 * 0.450 of its 8 copies, then every copy inside the node. Either runs its network stage and its
 * in-node stage at once, the call the longer of the two. */
static void test_node_dispatch(void **state) {
  (void)state;
  ts_coll_group g;
  long ring[64 * TS_COLL_MAX_RINGS];
  plan_first_gpus(&pf, 64, &g, ring);
  assert_int_equal(g.per_node, 8);
  double bytes = 1e9, plain = ts_coll_estimate_s(&g, TS_COLL_ALLTOALL, bytes);
  ts_coll_node_dispatch(&g, 8, 8, 4);
  assert_rel(g.node_share, 4 * (1 - pow(0.75, 8)) / 8, 1e-12);
  g.n_memo = 0; /* the decision above was memoised for the plain all-to-all */
  double flex = ts_coll_estimate_s(&g, TS_COLL_ALLTOALL, bytes);
  double cross = 7 * g.cross_lat_s + g.node_share * 7.0 / 8 * bytes / g.cross_Bps;
  double intra = 7 * g.intra_lat_s + 7.0 / 8 * bytes / g.intra_Bps;
  /* NCCL's: every copy to its expert's member, 7/8 of them over the network, 7/64 inside */
  double cross_nccl = 7 * g.cross_lat_s + 7.0 / 8 * bytes / g.cross_Bps;
  double intra_nccl = 7 * g.intra_lat_s + 7.0 / 64 * bytes / g.intra_Bps;
  /* the library's launch latency (the ring's Simple base) comes on top of either */
  assert_rel(flex - fmax(cross, intra), plain - fmax(cross_nccl, intra_nccl), 1e-9);
  assert_true(flex < plain);
  /* one node: a plain all-to-all */
  ts_coll_group one;
  plan_first_gpus(&pf, 8, &one, ring);
  ts_coll_node_dispatch(&one, 8, 8, 4);
  assert_true(one.node_share == 0);
  free(g.tree_children);
  free(one.tree_children);
}

/* NCCL's all-to-all through PXN (ts_coll_plan_pxn): on DGX H100 nodes (NVSwitch, a NIC per GPU)
 * a group of whole nodes runs DeepEP's two stages with every copy sent (node_share 1), which
 * moves the same bytes over the network as the pairwise exchange and each member's bytes / m
 * to each local other over NVLink; not where the members of a node sit on different local GPUs,
 * on one node, or with RCCL (Frontier). */
static void test_pxn(void **state) {
  (void)state;
  ts_platform dgx;
  ts_err err = {0};
  assert_int_equal(ts_platform_load_file(TS_SOURCE_DIR "/platforms/dgx-h100.yaml", &dgx, &err), 0);
  ts_coll_group g;
  long ring[32 * TS_COLL_MAX_RINGS];
  plan_first_gpus(&dgx, 32, &g, ring);
  double bytes = 1e9, plain = ts_coll_estimate_s(&g, TS_COLL_ALLTOALL, bytes);
  ts_coll_plan_pxn(&dgx, &g, ring);
  assert_true(g.node_share == 1 && g.is_pxn);
  g.n_memo = 0;
  double pxn = ts_coll_estimate_s(&g, TS_COLL_ALLTOALL, bytes);
  double cross = 3 * g.cross_lat_s + 3.0 / 4 * bytes / g.cross_Bps;
  double intra = 7 * g.intra_lat_s + 7.0 / 8 * bytes / g.intra_Bps;
  double intra_plain = 7 * g.intra_lat_s + 7.0 / 32 * bytes / g.intra_Bps;
  assert_rel(pxn - fmax(cross, intra), plain - fmax(cross, intra_plain), 1e-9);
  /* node 1's members on other local GPUs than node 0's: the pairwise exchange */
  ts_coll_group skew = g;
  skew.node_share = 0;
  skew.is_pxn = false;
  long swapped[32 * TS_COLL_MAX_RINGS];
  for (int i = 0; i < 32 * g.n_rings; i++)
    swapped[i] = ring[i];
  swapped[8] = ring[9];
  swapped[9] = ring[8];
  ts_coll_plan_pxn(&dgx, &skew, swapped);
  assert_true(skew.node_share == 0 && !skew.is_pxn);
  /* Frontier runs RCCL */
  ts_coll_group rccl;
  plan_first_gpus(&pf, 32, &rccl, ring);
  ts_coll_plan_pxn(&pf, &rccl, ring);
  assert_true(rccl.node_share == 0);
  free(g.tree_children);
  free(rccl.tree_children);
}

static int setup(void **state) {
  (void)state;
  load_frontier(&pf);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_node_rings), cmocka_unit_test(test_steps),
      cmocka_unit_test(test_node_dispatch), cmocka_unit_test(test_pxn)};
  return cmocka_run_group_tests(tests, setup, NULL);
}
