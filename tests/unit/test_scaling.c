/* scaling: efficiencies and speed-ups on hand-computed points. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../../analysis/scaling.h"
#include "fixtures.h"

static void test_weak(void **state) {
  (void)state;
  /* 128 GPUs at 1e6 tokens/s; 1,024 GPUs at 7.2e6: per GPU 7,031.25 vs 7,812.5 = 0.9. */
  assert_rel(ts_scaling_weak_efficiency(1e6 / 128, 7.2e6 / 1024), 0.9, 1e-15);
  assert_rel(ts_scaling_weak_efficiency(7812.5, 7812.5), 1.0, 1e-15);
}

static void test_strong(void **state) {
  (void)state;
  /* 10 s on 384 GPUs, 1.5 s on 3,072: 3,840 / 4,608 = 0.8333... */
  assert_rel(ts_scaling_strong_efficiency(10.0, 384, 1.5, 3072), 3840.0 / 4608.0, 1e-15);
  assert_rel(ts_scaling_strong_efficiency(10.0, 384, 1.25, 3072), 1.0, 1e-15); /* linear */
}

/* A weak study by model size: 64 GPUs at 100 TFLOPS/GPU, 1,024 at 90, 3,072 at 80; and a
 * strong study: 8 s on 256 GPUs, 2.5 s on 1,024 (speed-up 3.2 of an ideal 4). */
static void test_fill(void **state) {
  (void)state;
  ts_scaling_point weak[3] = {{.gpus = 64, .model_tflops_per_gpu = 100},
                              {.gpus = 1024, .model_tflops_per_gpu = 90},
                              {.gpus = 3072, .model_tflops_per_gpu = 80}};
  ts_scaling_fill(true, 3, weak);
  assert_rel(weak[0].efficiency, 1.0, 1e-15);
  assert_rel(weak[0].speedup, 1.0, 1e-15);
  assert_rel(weak[1].efficiency, 0.9, 1e-15);
  assert_rel(weak[1].speedup, 14.4, 1e-15); /* 0.9 x 16 */
  assert_rel(weak[2].efficiency, 0.8, 1e-15);
  assert_rel(weak[2].speedup, 38.4, 1e-15); /* 0.8 x 48 */
  ts_scaling_point strong[2] = {{.gpus = 256, .iteration_s = 8},
                                {.gpus = 1024, .iteration_s = 2.5}};
  ts_scaling_fill(false, 2, strong);
  assert_rel(strong[1].efficiency, 0.8, 1e-15);
  assert_rel(strong[1].speedup, 3.2, 1e-15);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_weak), cmocka_unit_test(test_strong),
                                     cmocka_unit_test(test_fill)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
