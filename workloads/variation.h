/* variation: GPUs of one model differ in sustained speed (clocks under power limits, the
 * silicon), and a synchronous training step runs at the pace of its slowest GPU: every tensor-
 * and data-parallel collective and every pipeline hand-off waits for it. With speeds spread
 * normally by a relative standard deviation s (platform gpu.speed_spread), the slowest of n
 * GPUs is expected 1 + s E[max of n standard normals] times slower than the typical one. */
#ifndef TS_VARIATION_H
#define TS_VARIATION_H

/* E[max of n independent standard normal draws] (0 for n = 1), by quadrature of
 * x n phi(x) Phi(x)^(n-1). */
double ts_variation_expected_max(long n);
/* The compute slowdown of a job of n GPUs whose speeds spread by `spread`: 1 + spread x
 * ts_variation_expected_max(n). */
double ts_variation_slowdown(double spread, long n);

#endif
