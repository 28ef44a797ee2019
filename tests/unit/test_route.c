/* route: Frontier paths inside a node, through the NICs and across the dragonfly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>

#include "../../sim/network/route.h"
#include "fixtures.h"

static ts_platform pf;

static int names_with(const ts_route *r, const char *prefix) {
  int n = 0;
  for (int i = 0; i < r->n_links; i++) {
    double bw, lat;
    char name[64];
    ts_route_link_info(&pf, r->links[i], &bw, &lat, name, sizeof name);
    n += strncmp(name, prefix, strlen(prefix)) == 0;
  }
  return n;
}

static void test_inside_node(void **state) {
  (void)state;
  ts_route r;
  ts_route_between(&pf, 0, 1, &r);
  assert_int_equal(r.n_links, 1);
  assert_rel(r.bw_Bps, 200e9 * 0.72, 1e-15); /* x RCCL's xGMI efficiency */
  assert_rel(r.lat_s, 1e-6, 1e-12);
  ts_route_between(&pf, 0, 3, &r); /* no direct link: two hops, 0-1-3 or 0-2-3, 50 GB/s */
  assert_int_equal(r.n_links, 2);
  assert_rel(r.bw_Bps, 50e9 * 0.72, 1e-15);
  ts_route_between(&pf, 0, 6, &r); /* a double link (REFERENCE.md: 0-6 and 2-4, 100 GB/s) */
  assert_int_equal(r.n_links, 1);
  assert_rel(r.bw_Bps, 100e9 * 0.72, 1e-15);
  ts_route_between(&pf, 1, 3, &r); /* a single link, 50 GB/s */
  assert_int_equal(r.n_links, 1);
  assert_rel(r.bw_Bps, 50e9 * 0.72, 1e-15);
  ts_route_between(&pf, 0, 4, &r); /* 0-6-4 (100, 50) or 0-2-4 (50, 100): widest is 50 */
  assert_int_equal(r.n_links, 2);
  assert_int_equal(ts_platform_node_hops(&pf, 1, 6), 2);
}

static void test_between_nodes(void **state) {
  (void)state;
  ts_route r;
  /* GCD 0 of node 0 to GCD 0 of node 1 (same switch): IF to GCD 1, its NIC, back. */
  ts_route_between(&pf, 0, 8, &r);
  assert_int_equal(r.n_links, 6);
  assert_rel(r.bw_Bps, 25e9, 1e-15);
  assert_rel(r.lat_s, 1e-6 + 0.5e-6 + 1e-6 + 1e-6 + 0.5e-6 + 1e-6, 1e-12);
  assert_int_equal(names_with(&r, "fabric"), 0);
  /* Node 4 sits on the next switch: one local hop (fabric egress + ingress). */
  ts_route_between(&pf, 1, 4 * 8 + 1, &r);
  assert_int_equal(r.n_links, 6);
  assert_int_equal(names_with(&r, "fabric_out"), 1);
  assert_int_equal(names_with(&r, "fabric_in"), 1);
  /* Other groups: one global cable, at most 3 switch-to-switch hops, for every node pair in a
   * sample. */
  for (long a = 0; a < 9408; a += 97)
    for (long b = 5; b < 9408; b += 1013) {
      if (a == b)
        continue;
      ts_route_between(&pf, a * 8, b * 8 + 3, &r);
      int hops = names_with(&r, "fabric_out") + names_with(&r, "global_pair");
      assert_true(hops <= 3);
      long per_group = 128;
      bool across = a / per_group != b / per_group;
      assert_int_equal(names_with(&r, "global_pair"), across);
      assert_int_equal(names_with(&r, "global_out"), across);
      assert_int_equal(names_with(&r, "global_in"), across);
    }
  /* Adaptive routing between groups (route.h): group 0's pool of 73 x 4 cables out, the pair
   * link (the 4 direct cables plus half of the 288 others: 148 x 25 GB/s), group 1's pool in,
   * between both groups' fabric (NIC, PCIe and node links bind first). */
  ts_route_between(&pf, 0, 128 * 8, &r);
  double bw, lat;
  char name[64];
  const char *order[] = {"fabric_out_0_", "global_out_0_", "global_pair_0_1_", "global_in_1_",
                         "fabric_in_1_"};
  double expect[] = {31 * 25e9 / 2, 292 * 25e9, 148 * 25e9, 292 * 25e9, 31 * 25e9 / 2};
  int next = 0;
  for (int i = 0; i < r.n_links; i++) {
    ts_route_link_info(&pf, r.links[i], &bw, &lat, name, sizeof name);
    if (next < 5 && strncmp(name, order[next], strlen(order[next])) == 0) {
      assert_rel(bw, expect[next], 1e-15);
      next++;
    }
  }
  assert_int_equal(next, 5);
  assert_int_equal(names_with(&r, "fabric_out"), 1);
  assert_int_equal(names_with(&r, "fabric_in"), 1);
}

static void test_minimal_routing(void **state) {
  (void)state;
  ts_platform minimal = pf;
  minimal.net.routing = TS_ROUTING_MINIMAL;
  ts_route r;
  ts_route_between(&minimal, 1, 4 * 8 + 1, &r);
  double bw, lat;
  char name[64];
  ts_route_link_info(&minimal, r.links[2], &bw, &lat, name, sizeof name);
  assert_string_equal(name, "local_0_0_1");
  assert_rel(bw, 25e9, 1e-15);
  /* Minimal routing pins a node pair to one of the 4 cables between two groups. */
  ts_route_between(&minimal, 0, 128 * 8, &r);
  assert_int_equal(names_with(&r, "global_pair"), 0);
  assert_int_equal(names_with(&r, "global_out"), 0);
  assert_int_equal(names_with(&r, "global_0_1_"), 1);
  assert_rel(ts_route_fabric_Bps(&pf.net), 31 * 25e9 / 2, 1e-15);
}

/* DGX nodes on NVSwitch and rail-optimised fat trees (platforms/dgx-h100.yaml, 2 levels, 32
 * nodes a unit; platforms/dgx-a100.yaml, 3 levels, 20 nodes a unit, 20 leaves a pod). */
static void test_switch_and_fat_tree(void **state) {
  (void)state;
  static ts_platform h100, a100;
  ts_err err = {0};
  assert_int_equal(ts_platform_load_file(TS_SOURCE_DIR "/platforms/dgx-h100.yaml", &h100, &err), 0);
  assert_int_equal(ts_platform_load_file(TS_SOURCE_DIR "/platforms/dgx-a100.yaml", &a100, &err), 0);
  ts_route r;
  ts_route_between(&h100, 0, 5, &r); /* through the node's switch: up, down */
  assert_int_equal(r.n_links, 2);
  assert_rel(r.bw_Bps, 450e9 * 0.824, 1e-15); /* x NCCL's NVLink efficiency */
  assert_rel(r.lat_s, 2e-6, 1e-12);
  ts_route_between(&h100, 3, 8 + 3, &r); /* same rail, same unit: meet on the leaf */
  assert_int_equal(r.n_links, 4); /* PCIe, NIC, NIC, PCIe */
  assert_rel(r.bw_Bps, 50e9, 1e-15);
  assert_rel(r.lat_s, 0.5e-6 + 1e-6 + 1e-6 + 0.5e-6, 1e-12);
  ts_route_between(&h100, 3, 8 + 4, &r); /* another rail: up to the spines and down */
  assert_int_equal(r.n_links, 6);
  ts_route_between(&h100, 3, 40 * 8 + 3, &r); /* same rail, unit 1: leaf 3 -> spines -> leaf 11 */
  assert_int_equal(r.n_links, 6);
  double bw, lat;
  char name[64];
  ts_route_link_info(&h100, r.links[2], &bw, &lat, name, sizeof name);
  assert_string_equal(name, "leaf_up_3_0_0");
  assert_rel(bw, 32 * 50e9, 1e-15); /* 32 uplinks of 50 GB/s */
  ts_route_link_info(&h100, r.links[3], &bw, &lat, name, sizeof name);
  assert_string_equal(name, "leaf_down_11_0_0");
  assert_int_equal(names_with(&r, "pod_"), 0);
  /* 3 levels: unit 3's rail 0 is leaf 24, in pod 1 (20 leaves a pod): through the core. */
  ts_route_between(&a100, 0, 60 * 8, &r);
  assert_int_equal(r.n_links, 8);
  ts_route_link_info(&a100, r.links[3], &bw, &lat, name, sizeof name);
  assert_string_equal(name, "pod_up_0_0_0");
  assert_rel(bw, 20 * 20 * 25e9, 1e-15);
  ts_route_between(&a100, 0, 20 * 8, &r); /* unit 1, leaf 8, still pod 0 */
  assert_int_equal(r.n_links, 6);
}

static int setup(void **state) {
  (void)state;
  load_frontier(&pf);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_inside_node), cmocka_unit_test(test_between_nodes),
      cmocka_unit_test(test_minimal_routing), cmocka_unit_test(test_switch_and_fat_tree)};
  return cmocka_run_group_tests(tests, setup, NULL);
}
