/* variation: the slowest of n GPUs; see variation.h. */
#include "variation.h"

#include <math.h>

double ts_variation_expected_max(long n) {
  if (n <= 1)
    return 0;
  /* Simpson's rule on [-8, 10]: the integrand is below 1e-14 outside it for n up to 1e7. */
  const int steps = 9000; /* even */
  const double lo = -8, hi = 10, h = (hi - lo) / steps;
  double sum = 0;
  for (int i = 0; i <= steps; i++) {
    double x = lo + h * i;
    double phi = exp(-0.5 * x * x) / 2.5066282746310002; /* sqrt(2 pi) */
    double cdf = 0.5 * erfc(-x / sqrt(2));
    double f = cdf > 0 ? x * (double)n * phi * exp((double)(n - 1) * log(cdf)) : 0;
    sum += f * (i == 0 || i == steps ? 1 : i % 2 ? 4 : 2);
  }
  return sum * h / 3;
}

double ts_variation_slowdown(double spread, long n) {
  return 1 + spread * ts_variation_expected_max(n);
}
