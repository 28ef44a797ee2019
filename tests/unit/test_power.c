/* power: the clock a mix of kernels runs at under the board's power limit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../workloads/power.h"

/* A model of round numbers (not a GPU's): GEMMs draw 1,000 W at the boost clock, cuDNN's
 * attention 800, flash 650, the rest 500; idle 100; limit 700. */
static ts_power_model model(void) {
  ts_power_model m = {700, 100, 2, {1000, 800, 650, 500}, {1, 0.8, 0.6, 0.2}, {0}, {0}};
  return m;
}

/* The mix's mean power at x, as power.h defines it. */
static double mean_power(const ts_power_model *m, const double *busy, double idle, double x) {
  double t = idle, e = idle * m->idle_w;
  for (int c = 0; c < TS_POWER_CLASS_COUNT; c++) {
    double tc = busy[c] * (1 + m->slowdown[c] * x);
    t += tc;
    e += tc * (m->idle_w + (m->boost_w[c] - m->idle_w) * pow(1 + x, -m->exponent));
  }
  return e / t;
}

static void test_within_limit(void **state) {
  (void)state;
  ts_power_model m = model();
  /* Flash alone (650 W), GEMMs with as long idle (550 W), the rest: the boost clock. */
  assert_true(ts_power_throttle(&m, (double[]){0, 0, 1, 0}, 0) == 0);
  assert_true(ts_power_throttle(&m, (double[]){1, 0, 0, 0}, 1) == 0);
  assert_true(ts_power_throttle(&m, (double[]){0, 0, 0, 1}, 0) == 0);
  assert_true(ts_power_stretch(&m, TS_POWER_GEMM, 0) == 1);
  assert_true(ts_power_stretch(&m, TS_POWER_SDPA, 0) == 1);
  /* No model: no throttle. */
  ts_power_model none = {0};
  assert_false(ts_power_on(&none));
  assert_true(ts_power_throttle(&none, (double[]){1, 1, 1, 1}, 0) == 0);
}

static void test_meets_limit(void **state) {
  (void)state;
  ts_power_model m = model();
  /* GEMMs alone: (1 + x)^-2 900 + 100 = 700 -> x = sqrt(1.5) - 1. */
  double x = ts_power_throttle(&m, (double[]){1, 0, 0, 0}, 0);
  assert_true(fabs(x - (sqrt(1.5) - 1)) < 1e-9);
  /* Any mix over the limit settles where its mean power is the limit. */
  double mixes[][5] = {{0.4, 0.35, 0, 0.18, 0.07}, {0.5, 0.5, 0, 0, 0}, {0.3, 0, 0.6, 0.1, 0}};
  for (int i = 0; i < 3; i++) {
    double *b = mixes[i];
    x = ts_power_throttle(&m, b, b[4]);
    assert_true(x > 0);
    assert_true(fabs(mean_power(&m, b, b[4], x) - 700) < 1e-6);
  }
  /* More idle time lowers the throttle; a hungrier mix raises it. */
  double busy[] = {0.6, 0.4, 0, 0};
  double x0 = ts_power_throttle(&m, busy, 0), x1 = ts_power_throttle(&m, busy, 0.1);
  assert_true(x1 < x0);
  double hungrier[] = {0.8, 0.2, 0, 0};
  assert_true(ts_power_throttle(&m, hungrier, 0) > x0);
  /* Each class slows by its own coefficient at the shared clock. */
  assert_true(fabs(ts_power_stretch(&m, TS_POWER_SDPA, x0) - (1 + 0.8 * x0)) < 1e-12);
  assert_true(fabs(ts_power_stretch(&m, TS_POWER_GEMM, x0) - (1 + x0)) < 1e-12);
}

/* The table's GEMM points over the boost clock, by their time: the anchors, in between
 * linear in log time, the end ones held beyond; none: 1. */
static void test_gemm_table(void **state) {
  (void)state;
  ts_power_model m = model();
  ts_power_anchors *a = &m.gemm_table;
  assert_true(ts_power_table_ratio(a, 1e-3) == 1);
  a->n = 3;
  double t[] = {100e-6, 1e-3, 4e-3}, r[] = {1.0, 1.1, 1.12};
  for (int i = 0; i < 3; i++) {
    a->time_s[i] = t[i];
    a->ratio[i] = r[i];
  }
  assert_true(ts_power_table_ratio(a, 10e-6) == 1.0);
  assert_true(fabs(ts_power_table_ratio(a, 100e-6) - 1.0) < 1e-12);
  assert_true(fabs(ts_power_table_ratio(a, sqrt(100e-6 * 1e-3)) - 1.05) < 1e-12);
  assert_true(fabs(ts_power_table_ratio(a, 2e-3) - 1.11) < 1e-12);
  assert_true(ts_power_table_ratio(a, 1) == 1.12);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_within_limit),
                                     cmocka_unit_test(test_meets_limit),
                                     cmocka_unit_test(test_gemm_table)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
