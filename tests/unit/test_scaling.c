/* scaling: efficiencies on hand-computed points. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../../analysis/scaling.h"
#include "fixtures.h"

static void test_weak(void **state) {
  (void)state;
  /* 128 GPUs at 1e6 tokens/s; 1,024 GPUs at 7.2e6: per GPU 7,031.25 vs 7,812.5 = 0.9. */
  assert_rel(ts_scaling_weak_efficiency(1e6, 128, 7.2e6, 1024), 0.9, 1e-15);
  assert_rel(ts_scaling_weak_efficiency(1e6, 128, 1e6, 128), 1.0, 1e-15);
}

static void test_strong(void **state) {
  (void)state;
  /* 10 s on 384 GPUs, 1.5 s on 3,072: 3,840 / 4,608 = 0.8333... */
  assert_rel(ts_scaling_strong_efficiency(10.0, 384, 1.5, 3072), 3840.0 / 4608.0, 1e-15);
  assert_rel(ts_scaling_strong_efficiency(10.0, 384, 1.25, 3072), 1.0, 1e-15); /* linear */
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_weak), cmocka_unit_test(test_strong)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
