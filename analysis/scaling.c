/* scaling: see scaling.h. */
#include "scaling.h"

double ts_scaling_weak_efficiency(double tokens_per_s0, long n0, double tokens_per_s, long n) {
  return (tokens_per_s / (double)n) / (tokens_per_s0 / (double)n0);
}

double ts_scaling_strong_efficiency(double iteration_s0, long n0, double iteration_s, long n) {
  return (iteration_s0 * (double)n0) / (iteration_s * (double)n);
}
