/* layout: rank <-> coordinates round trip and placement of TP groups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../../workloads/layout.h"
#include "fixtures.h"

static void test_round_trip(void **state) {
  (void)state;
  ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 4, 2, 3, 24, 1);
  for (int order = 0; order < 6; order++) {
    static const ts_axis orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                         {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    memcpy(wl.order, orders[order], sizeof wl.order);
    for (long r = 0; r < wl.n_gpus; r++)
      assert_int_equal(ts_layout_rank(&wl, ts_layout_coords(&wl, r)), r);
  }
}

static void test_tp_innermost(void **state) {
  (void)state;
  ts_workload wl = test_workload(8, 1024, 16, 512, 1000, 8, 2, 4, 32, 1);
  /* tp-dp-pp: the 8 TP ranks of (dp, pp) are 8 consecutive ranks, i.e. one Frontier node. */
  for (long pp = 0; pp < 2; pp++)
    for (long dp = 0; dp < 4; dp++) {
      long first = ts_layout_rank(&wl, (ts_coords){0, dp, pp});
      assert_int_equal(first % 8, 0);
      for (long tp = 0; tp < 8; tp++)
        assert_int_equal(ts_layout_rank(&wl, (ts_coords){tp, dp, pp}), first + tp);
    }
  assert_int_equal(ts_layout_rank(&wl, (ts_coords){0, 1, 0}), 8);
  assert_int_equal(ts_layout_rank(&wl, (ts_coords){0, 0, 1}), 32);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_round_trip),
                                     cmocka_unit_test(test_tp_innermost)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
