/* units: every accepted form, and the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../../workloads/units.h"

static double parse_ok(const char *s, ts_unit_kind k) {
  double v = -1;
  assert_int_equal(ts_units_parse(s, k, &v, NULL), 0);
  return v;
}

static void refuse(const char *s, ts_unit_kind k) {
  double v = 42;
  const char *expected = NULL;
  assert_int_equal(ts_units_parse(s, k, &v, &expected), -1);
  assert_true(v == 42); /* untouched */
  assert_non_null(expected);
}

static void test_bytes(void **state) {
  (void)state;
  assert_true(parse_ok("64GiB", TS_UNITS_BYTES) == 64.0 * 1073741824.0);
  assert_true(parse_ok("1.5MB", TS_UNITS_BYTES) == 1.5e6);
  assert_true(parse_ok("512", TS_UNITS_BYTES) == 512);
  assert_true(parse_ok("2KiB", TS_UNITS_BYTES) == 2048);
  refuse("64G", TS_UNITS_BYTES);
  refuse("-1B", TS_UNITS_BYTES);
  refuse("GiB", TS_UNITS_BYTES);
  refuse("64 GiB", TS_UNITS_BYTES);
}

static void test_bandwidth(void **state) {
  (void)state;
  assert_true(parse_ok("25GBps", TS_UNITS_BANDWIDTH) == 25e9);
  assert_true(parse_ok("25GB/s", TS_UNITS_BANDWIDTH) == 25e9);
  assert_true(parse_ok("200Gbps", TS_UNITS_BANDWIDTH) == 25e9);
  assert_true(parse_ok("1.6TBps", TS_UNITS_BANDWIDTH) == 1.6e12);
  refuse("25", TS_UNITS_BANDWIDTH);
  refuse("25GB", TS_UNITS_BANDWIDTH);
  refuse("nanGBps", TS_UNITS_BANDWIDTH);
  refuse("0x10GBps", TS_UNITS_BANDWIDTH);
}

static void test_flops_and_time(void **state) {
  (void)state;
  assert_true(parse_ok("191.5Tf", TS_UNITS_FLOP_RATE) == 191.5e12);
  assert_true(parse_ok("47.9TFLOPS", TS_UNITS_FLOP_RATE) == 47.9e12);
  assert_true(parse_ok("2us", TS_UNITS_TIME) == 2e-6);
  assert_true(parse_ok("0.35us", TS_UNITS_TIME) == 0.35e-6);
  assert_true(parse_ok("1.5ms", TS_UNITS_TIME) == 1.5e-3);
  assert_true(parse_ok("350ns", TS_UNITS_TIME) == 350e-9);
  assert_true(parse_ok("1e-6s", TS_UNITS_TIME) == 1e-6);
  refuse("2", TS_UNITS_TIME);
  refuse("2 us", TS_UNITS_TIME);
  refuse("2Gus", TS_UNITS_TIME);
  refuse("infTf", TS_UNITS_FLOP_RATE);
  assert_true(parse_ok("250W", TS_UNITS_POWER) == 250);
  assert_true(parse_ok("1.5kW", TS_UNITS_POWER) == 1500);
  refuse("250", TS_UNITS_POWER);
  refuse("1e999Tf", TS_UNITS_FLOP_RATE);
}

static void test_spans_and_rates(void **state) {
  (void)state;
  assert_true(parse_ok("10min", TS_UNITS_SPAN) == 600);
  assert_true(parse_ok("2h", TS_UNITS_SPAN) == 7200);
  assert_true(parse_ok("1.5d", TS_UNITS_SPAN) == 129600);
  refuse("10m", TS_UNITS_SPAN); /* metres or minutes: refused */
  refuse("10", TS_UNITS_SPAN);
  assert_true(parse_ok("5e-3/day", TS_UNITS_RATE) == 5e-3 / 86400);
  assert_true(parse_ok("7.8e-7/h", TS_UNITS_RATE) == 7.8e-7 / 3600);
  assert_true(parse_ok("2/year", TS_UNITS_RATE) == 2 / 31557600.0);
  refuse("5e-3", TS_UNITS_RATE);
  refuse("-1/day", TS_UNITS_RATE);
  refuse("nan/day", TS_UNITS_RATE);
  refuse("1/fortnight", TS_UNITS_RATE);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bytes), cmocka_unit_test(test_bandwidth),
                                     cmocka_unit_test(test_flops_and_time),
                                     cmocka_unit_test(test_spans_and_rates)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
