/* scaling: see scaling.h. */
#include "scaling.h"

double ts_scaling_weak_efficiency(double per_gpu_rate0, double per_gpu_rate) {
  return per_gpu_rate / per_gpu_rate0;
}

double ts_scaling_strong_efficiency(double iteration_s0, long n0, double iteration_s, long n) {
  return (iteration_s0 * (double)n0) / (iteration_s * (double)n);
}

void ts_scaling_fill(bool is_weak, int n_points, ts_scaling_point *points) {
  const ts_scaling_point *p0 = &points[0];
  for (int i = 0; i < n_points; i++) {
    ts_scaling_point *p = &points[i];
    p->efficiency =
        is_weak ? ts_scaling_weak_efficiency(p0->model_tflops_per_gpu, p->model_tflops_per_gpu)
                : ts_scaling_strong_efficiency(p0->iteration_s, p0->gpus, p->iteration_s, p->gpus);
    p->speedup = p->efficiency * (double)p->gpus / (double)p0->gpus;
  }
}
