/* coll: ring orders on Frontier's irregular node and step counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

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

static int setup(void **state) {
  (void)state;
  load_frontier(&pf);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_node_rings),
                                     cmocka_unit_test(test_steps)};
  return cmocka_run_group_tests(tests, setup, NULL);
}
