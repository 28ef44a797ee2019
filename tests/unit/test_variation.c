/* variation: the expected slowest of n GPUs against order statistics of the normal. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../workloads/variation.h"

static void test_expected_max(void **state) {
  (void)state;
  assert_true(ts_variation_expected_max(1) == 0);
  /* Closed forms: E[max of 2] = 1/sqrt(pi); of 3 = 3 / (2 sqrt(pi)). */
  assert_true(fabs(ts_variation_expected_max(2) - 1 / sqrt(3.14159265358979)) < 1e-9);
  assert_true(fabs(ts_variation_expected_max(3) - 1.5 / sqrt(3.14159265358979)) < 1e-9);
  /* Tabled values (Harter 1961, expected values of normal order statistics): n = 10: 1.53875,
   * n = 100: 2.50759, n = 1000: 3.24144. */
  assert_true(fabs(ts_variation_expected_max(10) - 1.53875) < 1e-5);
  assert_true(fabs(ts_variation_expected_max(100) - 2.50759) < 1e-5);
  assert_true(fabs(ts_variation_expected_max(1000) - 3.24144) < 1e-5);
  /* It grows with n, slowly, to the whole machine. */
  double previous = 0;
  for (long n = 2; n <= 100000; n *= 2) {
    double e = ts_variation_expected_max(n);
    assert_true(e > previous);
    previous = e;
  }
  assert_true(previous < 4.5);
}

static void test_slowdown(void **state) {
  (void)state;
  assert_true(ts_variation_slowdown(0, 75264) == 1);
  assert_true(ts_variation_slowdown(0.02, 1) == 1);
  assert_true(fabs(ts_variation_slowdown(0.02, 100) - (1 + 0.02 * 2.50759)) < 1e-6);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_expected_max),
                                     cmocka_unit_test(test_slowdown)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
