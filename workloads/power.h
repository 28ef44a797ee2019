/* power: the board's power limit and the clock a mix of kernels runs at (docs/model.md, "The
 * power limit").
 *
 * A GPU at its power limit lowers its clock until the board draws the limit. The controller
 * answers over tens of milliseconds (bench/device/power_response.py: 46-59 ms from idle on an
 * H100), longer than a kernel, so the kernels of a stretch of work share one clock set by their
 * mix's power: a GEMM-heavy mix runs every kernel slower than a mix with memory-bound kernels or
 * idle gaps. With x = f0 / f - 1 (0 at the boost clock f0), a kernel of class i whose time at the
 * boost clock is t takes t (1 + c_i x) and draws P_idle + (P_i - P_idle) (1 + x)^-g; an idle gap
 * draws P_idle. x is 0 where the mix's mean power at the boost clock is within the limit, else
 * the x at which it meets it. P_i, c_i and g are fitted by bench/power_fit.py to synthetic mixes
 * of kernels (bench/device/power_mix.py), never to training steps. */
#ifndef TS_POWER_H
#define TS_POWER_H

#include <stdbool.h>

#define TS_POWER_GEMM_TABLE_MAX 8

/* Kernels alike in power and in how their time follows the clock. */
typedef enum ts_power_class {
  TS_POWER_GEMM, /* matrix products (cuBLAS, grouped GEMMs, attention's batched GEMMs) */
  TS_POWER_SDPA, /* cuDNN's fused attention (PyTorch's SDPA on Hopper, MLA) */
  TS_POWER_FLASH, /* FlashAttention's kernels */
  TS_POWER_OTHER, /* memory-bound kernels: norms, element-wise, optimizer, copies */
  TS_POWER_CLASS_COUNT
} ts_power_class;

/* Lower-case names as in platform files ("gemm"), indexed by ts_power_class; NULL-terminated. */
extern const char *const ts_power_class_names[];

/* A table's GEMM times over their boost-clock times, by the point's table time: anchors in
 * increasing time, interpolated in log time, the end ones held beyond; none: 1. */
typedef struct ts_power_anchors {
  int n;
  double time_s[TS_POWER_GEMM_TABLE_MAX], ratio[TS_POWER_GEMM_TABLE_MAX];
} ts_power_anchors;

typedef struct ts_power_model {
  double limit_w; /* the board's power limit; 0: no model (kernels run as the tables say) */
  double idle_w; /* the board's draw while a kernel waits (a host gap) */
  double exponent; /* g: dynamic power ~ (f / f0)^g */
  double boost_w[TS_POWER_CLASS_COUNT]; /* P_i: the board's draw running class i at f0 */
  double slowdown[TS_POWER_CLASS_COUNT]; /* c_i: time ~ 1 + c_i x */
  /* The kernel table's dense GEMM points (gemm_fwd, gemm_dgrad, gemm_wgrad) over their times at
   * the boost clock, against the point's table time: kernel_table.py times them back to back,
   * the longer ones further into the limit (bench/device/gemm_bias.py). The table's other
   * kernels are taken at the boost clock. */
  ts_power_anchors gemm_table;
  /* The same for the FP8 GEMM tables (gemm_fp8_*, per-tensor and block-scaled, timed alike):
   * fp8_gemm_table. FP8 GEMMs are of the gemm class: power_mix.py --fp8 measured their mixes
   * within 2.6% of the bf16 GEMM's parameters (docs/validation/power.md). */
  ts_power_anchors fp8_gemm_table;
} ts_power_model;

static inline bool ts_power_on(const ts_power_model *m) {
  return m->limit_w > 0;
}

/* x of a mix whose kernels take busy_s[class] at the boost clock, beside idle_s of gaps. */
double ts_power_throttle(const ts_power_model *m, const double busy_s[TS_POWER_CLASS_COUNT],
                         double idle_s);

/* A GEMM table point's time over its time at the boost clock, from anchors (gemm_table or
 * fp8_gemm_table). */
double ts_power_table_ratio(const ts_power_anchors *a, double table_s);

/* Time of a class at throttle x over its time at the boost clock: 1 + c_i x. */
double ts_power_stretch(const ts_power_model *m, ts_power_class c, double x);

#endif
