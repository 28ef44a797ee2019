/* placement: which GPUs a job gets on Frontier under each policy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdlib.h>

#include "../../sim/network/placement.h"
#include "fixtures.h"

static ts_platform pf;

static void test_contiguous_and_spread(void **state) {
  (void)state;
  long *g = ts_placement_gpus(&pf, TS_PLACEMENT_CONTIGUOUS, 1, 20);
  for (long r = 0; r < 20; r++)
    assert_int_equal(g[r], r);
  free(g);
  /* Round robin over the 74 groups of 128 nodes: job nodes 0, 1, 2 are nodes 0, 128, 256. */
  g = ts_placement_gpus(&pf, TS_PLACEMENT_SPREAD, 1, 20);
  assert_int_equal(g[0], 0);
  assert_int_equal(g[7], 7);
  assert_int_equal(g[8], 128 * 8);
  assert_int_equal(g[19], 2 * 128 * 8 + 3);
  free(g);
  /* Node 74 of the job is the second node of group 0; group 73 holds only 64 nodes (9,408 =
   * 73.5 x 128), so the whole machine still fits, each node once. */
  long n = 9408 * 8;
  g = ts_placement_gpus(&pf, TS_PLACEMENT_SPREAD, 1, n);
  assert_non_null(g);
  assert_int_equal(g[74 * 8], 1 * 8);
  char *seen = calloc((size_t)n, 1);
  for (long r = 0; r < n; r++) {
    assert_true(g[r] >= 0 && g[r] < n && !seen[g[r]]);
    seen[g[r]] = 1;
  }
  free(seen);
  free(g);
  assert_null(ts_placement_gpus(&pf, TS_PLACEMENT_SPREAD, 1, n + 1));
}

static void test_random(void **state) {
  (void)state;
  long *a = ts_placement_gpus(&pf, TS_PLACEMENT_RANDOM, 7, 64);
  long *b = ts_placement_gpus(&pf, TS_PLACEMENT_RANDOM, 7, 64);
  long *c = ts_placement_gpus(&pf, TS_PLACEMENT_RANDOM, 8, 64);
  assert_memory_equal(a, b, 64 * sizeof(long)); /* the seed decides */
  bool differs = false;
  for (long r = 0; r < 64; r++) {
    differs = differs || a[r] != c[r];
    assert_int_equal(a[r] % 8, r % 8); /* whole nodes */
    if (r % 8 == 0 && r > 0)
      assert_true(a[r] > a[r - 1]); /* listed in node order */
  }
  assert_true(differs);
  assert_true(a[56] / 8 - a[0] / 8 > 7); /* 8 random nodes of 9,408 are not all adjacent */
  free(a);
  free(b);
  free(c);
}

static int setup(void **state) {
  (void)state;
  load_frontier(&pf);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_contiguous_and_spread),
                                     cmocka_unit_test(test_random)};
  return cmocka_run_group_tests(tests, setup, NULL);
}
