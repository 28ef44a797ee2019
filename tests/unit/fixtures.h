/* Shared test fixtures: small workloads built in code, Frontier loaded from the source tree. */
#ifndef TS_TEST_FIXTURES_H
#define TS_TEST_FIXTURES_H

#include <math.h>
#include <string.h>

#include "../../sim/network/platform.h"
#include "../../workloads/workload.h"

static inline ts_workload test_workload(long layers, long hidden, long heads, long seq, long vocab,
                                        long tp, long pp, long dp, long global_batch,
                                        long micro_batch) {
  ts_workload wl;
  memset(&wl, 0, sizeof wl);
  strcpy(wl.name, "test");
  wl.model = (ts_model){layers,
                        hidden,
                        heads,
                        heads,
                        seq,
                        vocab,
                        4 * hidden,
                        .bias = true,
                        .rotary_percent = 1.0,
                        .attention_dropout = 0.1,
                        .hidden_dropout = 0.1};
  wl.global_batch = global_batch;
  wl.micro_batch = micro_batch;
  wl.precision = TS_PREC_BF16;
  wl.tp = tp;
  wl.pp = pp;
  wl.dp = dp;
  wl.ep = 1;
  wl.cp = 1;
  wl.n_gpus = tp * pp * dp;
  wl.schedule = TS_SCHED_1F1B;
  wl.virtual_stages = 1;
  wl.recompute = TS_RECOMPUTE_NONE;
  wl.flash_attention = true;
  wl.fusions = ts_framework_default_fusions(TS_FRAMEWORK_MEGATRON);
  wl.order[0] = TS_AXIS_TP;
  wl.order[1] = TS_AXIS_DP;
  wl.order[2] = TS_AXIS_PP;
  wl.contiguous_gradients = true; /* DeepSpeed's default from 0.4.3, as a read workload has it */
  return wl;
}

/* A Llama layer as torchtitan builds it: SwiGLU with separate gate and up GEMMs, RMSNorm,
 * rotary embeddings, no biases or dropout, grouped queries, a plain PyTorch model calling SDPA's
 * flash backend. */
static inline void titan_llama(ts_workload *wl, long query_groups, long ffn_hidden) {
  wl->model.n_query_groups = query_groups;
  wl->model.ffn_hidden = ffn_hidden;
  wl->model.swiglu = wl->model.rms_norm = wl->model.rope = true;
  wl->model.bias = false;
  wl->model.attention_dropout = wl->model.hidden_dropout = 0;
  wl->framework = TS_FRAMEWORK_PYTORCH;
  wl->attention = TS_ATTENTION_SDPA_FLASH;
  wl->gate_up = TS_GATE_UP_SEPARATE;
}

static inline int rel_close(double a, double b, double tol) {
  return fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

#define assert_rel(a, b, tol)                                                                      \
  do {                                                                                             \
    double a_ = (a), b_ = (b);                                                                     \
    if (!rel_close(a_, b_, tol))                                                                   \
      fail_msg("%s = %.17g, expected %.17g (rel. tol. %g)", #a, a_, b_, (double)(tol));            \
  } while (0)

static inline void load_frontier(ts_platform *pf) {
  ts_err err = {0};
  if (ts_platform_load_file(TS_SOURCE_DIR "/platforms/frontier.yaml", pf, &err) != 0)
    fail_msg("%s", err.msg);
}

#endif
