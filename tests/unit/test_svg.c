/* svg: tick choice, coordinate mapping and escaping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../analysis/svg.h"
#include "fixtures.h"

static void test_linear_ticks(void **state) {
  (void)state;
  double t[16];
  /* 60 s in at most 8 ticks: steps of 10 (5 would need 13). */
  assert_int_equal(ts_svg_ticks(0, 60, false, t, 8), 7);
  for (int i = 0; i < 7; i++)
    assert_rel(t[i], 10.0 * i, 1e-12);
  /* 0.37 s: steps of 0.05 (0.37 / 8 = 0.046). */
  int n = ts_svg_ticks(0, 0.37, false, t, 9);
  assert_int_equal(n, 8);
  assert_rel(t[7], 0.35, 1e-12);
  assert_int_equal(ts_svg_ticks(5, 5, false, t, 8), 0); /* empty range: no ticks */
  assert_rel(ts_svg_nice_max(47), 50, 1e-12);
  assert_rel(ts_svg_nice_max(64), 80, 1e-12); /* steps of 20 (64 / 5 = 12.8) */
}

static void test_log2_ticks(void **state) {
  (void)state;
  double t[16];
  assert_int_equal(ts_svg_ticks(1, 40, true, t, 12), 6); /* 1 2 4 8 16 32 */
  assert_rel(t[5], 32, 1e-12);
  /* 1 .. 1024 in at most 4 ticks: 11 powers thin out to every fourth one, 1 16 256. */
  assert_int_equal(ts_svg_ticks(1, 1024, true, t, 4), 3);
  assert_rel(t[1], 16, 1e-12);
  assert_rel(t[2], 256, 1e-12);
}

static void test_frame(void **state) {
  (void)state;
  ts_svg_frame f = {100, 50, 800, 300, 0, 10, 0, 100, false, false};
  assert_rel(ts_svg_x(&f, 0), 100, 1e-12);
  assert_rel(ts_svg_x(&f, 10), 900, 1e-12);
  assert_rel(ts_svg_y(&f, 0), 350, 1e-12); /* data up, pixels down */
  assert_rel(ts_svg_y(&f, 100), 50, 1e-12);
  ts_svg_frame g = {0, 0, 300, 300, 128, 1024, 1, 8, true, true};
  assert_rel(ts_svg_x(&g, 256), 100, 1e-12); /* one doubling of three */
  assert_rel(ts_svg_y(&g, 2), 200, 1e-12);
}

static void test_escape(void **state) {
  (void)state;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ts_svg_text(f, 1, 2, "start", NULL, "<a & \"b\">");
  fclose(f);
  assert_string_equal(buf, "<text x=\"1.0\" y=\"2.0\" text-anchor=\"start\">"
                           "&lt;a &amp; &quot;b&quot;&gt;</text>\n");
  free(buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_linear_ticks),
                                     cmocka_unit_test(test_log2_ticks),
                                     cmocka_unit_test(test_frame), cmocka_unit_test(test_escape)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
