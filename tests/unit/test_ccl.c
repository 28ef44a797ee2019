/* ccl: the libraries' tuning models against the formulas of NCCL 2.30.7 and RCCL 2.21.5
 * (src/graph/tuning.cc), worked by hand for each case. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../../sim/engine/ccl.h"
#include "fixtures.h"

static const ts_ccl_config hopper = {.library = TS_CCL_NCCL,
                                     .version = TS_NCCL_VERSION,
                                     .arch = TS_ARCH_HOPPER,
                                     .cpu = TS_CPU_INTEL,
                                     .channels = 16,
                                     .node_link_efficiency = 0.824};
static const ts_ccl_config frontier = {.library = TS_CCL_RCCL,
                                       .version = TS_RCCL_VERSION,
                                       .tuning_model = 3,
                                       .cpu = TS_CPU_AMD,
                                       .node_link_efficiency = 0.72};

static ts_ccl_call cost(const ts_ccl_config *cfg, int ranks, int nodes, double bus, ts_coll_op op,
                        double bytes, ts_ccl_algo a, ts_ccl_proto p) {
  ts_ccl_comm comm = {ranks, nodes, bus};
  ts_ccl_call c;
  assert_true(ts_ccl_cost(cfg, &comm, op, bytes, a, p, &c));
  assert_rel(c.time_s, c.lat_s + bytes / c.alg_Bps, 1e-12);
  return c;
}

/* One DGX H100: 8 ranks on NVLink, the ring's bus 370.8 GB/s. */
static void test_nccl_one_node(void **state) {
  (void)state;
  double n = 1073741824.0;
  /* Simple: base 8.4 + 14 steps x NVLink ring 3.4 us; algorithm bandwidth bus x 8 / 14. */
  ts_ccl_call c = cost(&hopper, 8, 1, 370.8e9, TS_COLL_ALLREDUCE, n, TS_CCL_RING, TS_PROTO_SIMPLE);
  assert_rel(c.lat_s, 56.0e-6, 1e-12);
  assert_rel(c.alg_Bps, 370.8e9 * 8 / 14, 1e-12);
  assert_rel(c.bus_Bps, 370.8e9, 1e-12);
  assert_rel(c.wire, 1, 0);
  /* LL: 6.6 + 14 x 0.6 us; half the bus, capped at Hopper's single-node 141 GB/s; 2 wire
   * bytes per byte. */
  c = cost(&hopper, 8, 1, 370.8e9, TS_COLL_ALLREDUCE, n, TS_CCL_RING, TS_PROTO_LL);
  assert_rel(c.lat_s, 15.0e-6, 1e-12);
  assert_rel(c.bus_Bps, 141e9, 1e-12);
  assert_rel(c.wire, 2, 0);
  /* LL128: 14 + 14 x 1.9 us, 0.92 of the bus (16 channels x 36.7 GB/s do not bind). */
  c = cost(&hopper, 8, 1, 370.8e9, TS_COLL_ALLREDUCE, n, TS_CCL_RING, TS_PROTO_LL128);
  assert_rel(c.lat_s, 40.6e-6, 1e-12);
  assert_rel(c.bus_Bps, 0.92 * 370.8e9, 1e-12);
  assert_rel(c.wire, 128.0 / 120.0, 1e-15);
  /* The tuner: LL for small messages, Simple for large ones. */
  ts_ccl_comm comm = {8, 1, 370.8e9};
  assert_int_equal(ts_ccl_choose(&hopper, &comm, TS_COLL_ALLREDUCE, 1024, ~0u).proto, TS_PROTO_LL);
  ts_ccl_call big = ts_ccl_choose(&hopper, &comm, TS_COLL_ALLREDUCE, n, ~0u);
  assert_int_equal(big.algo, TS_CCL_RING);
  assert_int_equal(big.proto, TS_PROTO_SIMPLE);
  /* All-gather: 7 steps, bus x 8 / 7; no tree and no PAT with 8 ranks on one node. */
  c = cost(&hopper, 8, 1, 370.8e9, TS_COLL_ALLGATHER, n, TS_CCL_RING, TS_PROTO_SIMPLE);
  assert_rel(c.lat_s, (8.4 + 7 * 3.4) * 1e-6, 1e-12);
  assert_rel(c.alg_Bps, 370.8e9 * 8 / 7, 1e-12);
  assert_false(ts_ccl_cost(&hopper, &comm, TS_COLL_ALLGATHER, n, TS_CCL_TREE, TS_PROTO_SIMPLE, &c));
  assert_false(ts_ccl_cost(&hopper, &comm, TS_COLL_ALLGATHER, n, TS_CCL_PAT, TS_PROTO_SIMPLE, &c));
}

/* Eight DGX H100 nodes, 64 ranks, the rings' bus 8 NICs x 50 GB/s. */
static void test_nccl_nodes(void **state) {
  (void)state;
  double n = 536870912.0;
  /* Ring Simple: 8.4 + 112 intra steps x max(3.4, 3 x 1 us post overhead) + 14 network steps
   * x 14 us, then x 1.4 (the ring's plateau, multi-node all-reduce). */
  ts_ccl_call c = cost(&hopper, 64, 8, 400e9, TS_COLL_ALLREDUCE, n, TS_CCL_RING, TS_PROTO_SIMPLE);
  assert_rel(c.lat_s, (8.4 + 112 * 3.4 + 14 * 14) * 1.4e-6, 1e-12);
  assert_rel(c.alg_Bps, 400e9 * 64 / 126, 1e-12);
  /* Tree Simple: 8.4 + 2 (7 x 4.0 + log2(8) x 14); bus min(0.92 x 400, 16 x 36.0), halved;
   * at 2^23 x 64 bytes no correction applies. */
  c = cost(&hopper, 64, 8, 400e9, TS_COLL_ALLREDUCE, n, TS_CCL_TREE, TS_PROTO_SIMPLE);
  assert_rel(c.lat_s, (8.4 + 2 * (7 * 4.0 + 3 * 14)) * 1e-6, 1e-12);
  assert_rel(c.alg_Bps, 0.92 * 400e9 / 2, 1e-12);
  /* At 1 MiB (log2(2^20 / 64) = 14) the tree's Simple bandwidth is corrected by 0.5. */
  c = cost(&hopper, 64, 8, 400e9, TS_COLL_ALLREDUCE, 1048576, TS_CCL_TREE, TS_PROTO_SIMPLE);
  assert_rel(c.alg_Bps, 0.92 * 400e9 / 2 * 0.5, 1e-12);
  /* The tuner picks the tree at this size: its latency grows with log2(nodes). */
  ts_ccl_comm comm = {64, 8, 400e9};
  assert_int_equal(ts_ccl_choose(&hopper, &comm, TS_COLL_ALLREDUCE, n, ~0u).algo, TS_CCL_TREE);
  assert_int_equal(ts_ccl_choose(&hopper, &comm, TS_COLL_ALLREDUCE, n, 1u << TS_CCL_RING).algo,
                   TS_CCL_RING);
  /* One rank per node: the network latency is the tree's (all steps exposed), and all-gather
   * may use PAT: 8 + log2(16) x 14 / 3.5 + 16 x 2.8 us, 0.75 of the bus, unconverted. */
  c = cost(&hopper, 16, 16, 50e9, TS_COLL_ALLREDUCE, 8, TS_CCL_RING, TS_PROTO_LL);
  assert_rel(c.lat_s, (6.6 + 30 * 5.0) * 1e-6, 1e-12);
  c = cost(&hopper, 16, 16, 50e9, TS_COLL_ALLGATHER, n, TS_CCL_PAT, TS_PROTO_SIMPLE);
  assert_rel(c.lat_s, (8.0 + 4 * 14 / 3.5 + 16 * 2.8) * 1e-6, 1e-12);
  assert_rel(c.alg_Bps, 0.75 * 50e9, 1e-12);
}

/* RCCL with tuning model 3 (an 8-GCD MI250X node with 4 NICs): 2 nodes, 16 ranks. */
static void test_rccl(void **state) {
  (void)state;
  double n = 1073741824.0;
  /* Ring Simple: base 17 + (30 - 2 x 2) steps x max(3.6 xGMI, 3 x 2 us AMD post overhead) +
   * 4 network steps x 19.8 us; bus x 1.0 (bwRatio) x 16 / 30; at 1 GiB (log2 = 24) the ring
   * correction is 1.0, at 1 MiB (log2 = 14) 0.2. */
  ts_ccl_call c = cost(&frontier, 16, 2, 100e9, TS_COLL_ALLREDUCE, n, TS_CCL_RING, TS_PROTO_SIMPLE);
  assert_rel(c.lat_s, (17 + 26 * 6.0 + 4 * 19.8) * 1e-6, 1e-12);
  assert_rel(c.alg_Bps, 100e9 * 16 / 30, 1e-12);
  c = cost(&frontier, 16, 2, 100e9, TS_COLL_ALLREDUCE, 1048576, TS_CCL_RING, TS_PROTO_SIMPLE);
  assert_rel(c.alg_Bps, 100e9 * 16 / 30 * 0.2, 1e-12);
  /* Tree Simple on 2 nodes: bwRatio 1.75, halved; 17 + 2 (7 x 2.5 + 1 x 22.4) us; the
   * tree correction at 2^24 is 0.9. */
  c = cost(&frontier, 16, 2, 100e9, TS_COLL_ALLREDUCE, n, TS_CCL_TREE, TS_PROTO_SIMPLE);
  assert_rel(c.lat_s, (17 + 2 * (7 * 2.5 + 22.4)) * 1e-6, 1e-12);
  assert_rel(c.alg_Bps, 100e9 * 1.75 * 0.5 * 0.9, 1e-12);
  /* LL128 is off on this node type; all-gather runs on rings only. */
  ts_ccl_comm comm = {16, 2, 100e9};
  assert_false(
      ts_ccl_cost(&frontier, &comm, TS_COLL_ALLREDUCE, n, TS_CCL_RING, TS_PROTO_LL128, &c));
  assert_false(
      ts_ccl_cost(&frontier, &comm, TS_COLL_ALLGATHER, n, TS_CCL_TREE, TS_PROTO_SIMPLE, &c));
  /* All-gather: 15 steps, 1 network step. */
  c = cost(&frontier, 16, 2, 100e9, TS_COLL_ALLGATHER, n, TS_CCL_RING, TS_PROTO_SIMPLE);
  assert_rel(c.lat_s, (17 + 14 * 6.0 + 1 * 19.8) * 1e-6, 1e-12);
  /* Forbidding every algorithm the operation has leaves the ring with Simple. */
  ts_ccl_call r = ts_ccl_choose(&frontier, &comm, TS_COLL_ALLGATHER, n, 1u << TS_CCL_TREE);
  assert_int_equal(r.algo, TS_CCL_RING);
  assert_int_equal(r.proto, TS_PROTO_SIMPLE);
}

/* Older RCCL releases on the same node (rccl's src/graph/tuning.cc at each rocm-* tag): 2.17.1
 * (ROCm 5.7) has today's tables without the network post overhead on ring steps; 2.13.4 (ROCm
 * 5.4) tuning_model_3's older table; releases before 2.12.12, later than 2.21.5, NCCL other
 * than 2.30.7 and older tables of other tuning models are refused, saying why. */
static void test_rccl_versions(void **state) {
  (void)state;
  double n = 1073741824.0;
  ts_ccl_config rocm57 = frontier, rocm54 = frontier;
  rocm57.version = 21701;
  rocm54.version = 21304;
  ts_ccl_call c = cost(&rocm57, 16, 2, 100e9, TS_COLL_ALLREDUCE, n, TS_CCL_RING, TS_PROTO_SIMPLE);
  assert_rel(c.lat_s, (17 + 26 * 3.6 + 4 * 19.8) * 1e-6, 1e-12);
  /* 2.13.4: ring Simple 17 + 26 x 4.5 + 4 x 40.6 us; tree Simple bwRatio 0.95 (2 nodes), 0.41
   * beyond, and at 2^24 x 64 bytes the old tree correction 0.6. */
  c = cost(&rocm54, 16, 2, 100e9, TS_COLL_ALLREDUCE, n, TS_CCL_RING, TS_PROTO_SIMPLE);
  assert_rel(c.lat_s, (17 + 26 * 4.5 + 4 * 40.6) * 1e-6, 1e-12);
  c = cost(&rocm54, 16, 2, 100e9, TS_COLL_ALLREDUCE, n, TS_CCL_TREE, TS_PROTO_SIMPLE);
  assert_rel(c.lat_s, (17 + 2 * (7 * 4.5 + 40.3)) * 1e-6, 1e-12);
  assert_rel(c.alg_Bps, 100e9 * 0.95 * 0.5 * 0.6, 1e-12);
  c = cost(&rocm54, 64, 8, 100e9, TS_COLL_ALLREDUCE, n, TS_CCL_TREE, TS_PROTO_SIMPLE);
  assert_rel(c.alg_Bps, 100e9 * 0.41 * 0.5 * 0.6, 1e-12);
  /* So the older tuner keeps the ring for 1 GiB on 2 nodes, where today's picks the tree. */
  ts_ccl_comm comm = {16, 2, 100e9};
  assert_int_equal(ts_ccl_choose(&rocm54, &comm, TS_COLL_ALLREDUCE, n, ~0u).algo, TS_CCL_RING);
  assert_int_equal(ts_ccl_choose(&frontier, &comm, TS_COLL_ALLREDUCE, n, ~0u).algo, TS_CCL_TREE);
  char why[320];
  assert_true(ts_ccl_version_modelled(&frontier, 21212, why, sizeof why));
  assert_true(ts_ccl_version_modelled(&frontier, 22105, why, sizeof why));
  assert_false(ts_ccl_version_modelled(&frontier, 21104, why, sizeof why));
  assert_non_null(strstr(why, "2.11.4"));
  assert_false(ts_ccl_version_modelled(&frontier, 22201, why, sizeof why));
  assert_non_null(strstr(why, "up to 2.21.5"));
  ts_ccl_config model0 = frontier;
  model0.tuning_model = 0;
  assert_false(ts_ccl_version_modelled(&model0, 21304, why, sizeof why));
  assert_true(ts_ccl_version_modelled(&model0, 21701, why, sizeof why));
  assert_false(ts_ccl_version_modelled(&hopper, 22103, why, sizeof why));
  assert_true(ts_ccl_version_modelled(&hopper, TS_NCCL_VERSION, why, sizeof why));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nccl_one_node),
      cmocka_unit_test(test_rccl_versions),
      cmocka_unit_test(test_nccl_nodes),
      cmocka_unit_test(test_rccl),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
