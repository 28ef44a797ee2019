/* scaling: efficiencies of a scaling study (DESIGN.md, "Metrics").
 *   weak   = throughput per GPU at N / throughput per GPU at N0 (the batch grows with N)
 *   strong = (T(N0) x N0) / (T(N) x N) (the batch stays)
 */
#ifndef TS_SCALING_H
#define TS_SCALING_H

double ts_scaling_weak_efficiency(double tokens_per_s0, long n0, double tokens_per_s, long n);
double ts_scaling_strong_efficiency(double iteration_s0, long n0, double iteration_s, long n);

#endif
