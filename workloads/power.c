/* power: the clock a mix of kernels runs at under the power limit; see power.h. */
#include "power.h"

#include <math.h>
#include <stddef.h>

const char *const ts_power_class_names[] = {"gemm", "sdpa", "flash", "other", NULL};

/* Mean board power of the mix at throttle x. */
static double mean_power(const ts_power_model *m, const double *busy_s, double idle_s, double x) {
  double time = idle_s, energy = idle_s * m->idle_w, scale = pow(1 + x, -m->exponent);
  for (int c = 0; c < TS_POWER_CLASS_COUNT; c++) {
    double t = busy_s[c] * (1 + m->slowdown[c] * x);
    time += t;
    energy += t * (m->idle_w + (m->boost_w[c] - m->idle_w) * scale);
  }
  return time > 0 ? energy / time : m->idle_w;
}

double ts_power_throttle(const ts_power_model *m, const double busy_s[TS_POWER_CLASS_COUNT],
                         double idle_s) {
  if (!ts_power_on(m) || mean_power(m, busy_s, idle_s, 0) <= m->limit_w)
    return 0;
  /* The mean power falls as x grows (each class's draw falls, and the slowest-drawing share of
   * the time grows only with the larger c of hungrier classes); bisect to 1e-9 of the clock. */
  double lo = 0, hi = 1;
  while (mean_power(m, busy_s, idle_s, hi) > m->limit_w && hi < 64)
    hi *= 2;
  for (int i = 0; i < 80 && hi - lo > 1e-12; i++) {
    double mid = (lo + hi) / 2;
    if (mean_power(m, busy_s, idle_s, mid) > m->limit_w)
      lo = mid;
    else
      hi = mid;
  }
  return hi;
}

double ts_power_table_ratio(const ts_power_anchors *a, double table_s) {
  int n = a->n;
  if (n == 0)
    return 1.0;
  if (table_s <= a->time_s[0])
    return a->ratio[0];
  for (int i = 1; i < n; i++)
    if (table_s < a->time_s[i]) {
      double f = log(table_s / a->time_s[i - 1]) / log(a->time_s[i] / a->time_s[i - 1]);
      return a->ratio[i - 1] + f * (a->ratio[i] - a->ratio[i - 1]);
    }
  return a->ratio[n - 1];
}

double ts_power_stretch(const ts_power_model *m, ts_power_class c, double x) {
  return 1 + m->slowdown[c] * x;
}
