/* scaling: the points of a scaling study and their efficiencies (DESIGN.md, "Metrics").
 *   weak   = model FLOP/s per GPU at N / at N0. When the batch grows with N this is the
 *            tokens/s per GPU ratio (the FLOPs per token stay); when the model grows, it still
 *            compares work done per GPU.
 *   strong = (T(N0) x N0) / (T(N) x N) (the batch stays)
 * Speed-up over the first point = efficiency x N / N0 (weak: throughput ratio; strong:
 * T(N0) / T(N)); ideal is N / N0.
 */
#ifndef TS_SCALING_H
#define TS_SCALING_H

#include <stdbool.h>

#include "../workloads/schedule.h"

typedef struct ts_scaling_point {
  char workload[64]; /* the model's name */
  long gpus, tp, pp, dp, global_batch;
  double iteration_s, tokens_per_s, model_tflops_per_gpu;
  double megatron_percent, mfu_percent, peak_memory_gib;
  double breakdown_s[TS_CAT_COUNT]; /* mean over ranks */
  double goodput; /* useful training over wall time once parts fail; -1: not modelled */
  double efficiency, speedup; /* against the first point (ts_scaling_fill) */
} ts_scaling_point;

/* Both rates per GPU (FLOP/s or tokens/s). */
double ts_scaling_weak_efficiency(double per_gpu_rate0, double per_gpu_rate);
double ts_scaling_strong_efficiency(double iteration_s0, long n0, double iteration_s, long n);
/* Sets efficiency and speed-up of every point against points[0]. */
void ts_scaling_fill(bool is_weak, int n_points, ts_scaling_point *points);

#endif
