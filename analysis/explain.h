/* explain: the loss model behind `trainsim explain` (and `run --explain`): what limits a
 * simulated iteration and what would help, worked on a result in memory.
 *
 * It ranks the iteration's losses (pipeline bubble, exposed TP, PP, DP, EP and CP
 * communication, recomputation, idle time, the optimizer step, the wait for the slowest GPU,
 * the wall time interruptions cost, a MoE layer's imbalance, small expert groups and routing,
 * as time per iteration, and unused memory), says for
 * each the mechanism with its numbers, and proposes the changes that address it: layout,
 * micro-batch, schedule, virtual stages, overlap options and a faster NIC, each as the flags
 * `trainsim run` would take. The caller vets every change (does it break a layout rule, does it
 * fit), estimates and simulates them (cli/explain.c: the analytic fidelity with one pipeline
 * playing for all, then the best of each loss at the run's fidelity), and the model orders and
 * prints the outcome. Changes that break a layout rule are not shown; those that do not fit in
 * memory are, with what they would need.
 */
#ifndef TS_EXPLAIN_H
#define TS_EXPLAIN_H

#include <stdbool.h>
#include <stdio.h>

#include "../workloads/reliability.h"
#include "../workloads/schedule.h"
#include "../workloads/workload.h"

#define TS_EXPLAIN_MAX_TOKENS 16 /* of one change */
#define TS_EXPLAIN_MAX_CHANGES 64
#define TS_EXPLAIN_MAX_LOSS_CHANGES 8
#define TS_EXPLAIN_SHOWN_CHANGES 3 /* per loss */

typedef enum ts_explain_loss_kind {
  TS_EXPLAIN_BUBBLE,
  TS_EXPLAIN_TP,
  TS_EXPLAIN_PP,
  TS_EXPLAIN_DP,
  TS_EXPLAIN_EP,
  TS_EXPLAIN_CP,
  TS_EXPLAIN_RECOMPUTE,
  TS_EXPLAIN_IDLE,
  TS_EXPLAIN_OPTIMIZER,
  TS_EXPLAIN_SLOWEST_GPU,
  TS_EXPLAIN_GOODPUT, /* wall time lost to interruptions (workloads/reliability.h) */
  /* Inside a mixture-of-experts layer's compute: the busiest expert's extra tokens, grouped
   * GEMMs of too few tokens an expert, the router and the token permutations. */
  TS_EXPLAIN_MOE_IMBALANCE,
  TS_EXPLAIN_MOE_SMALL_GROUPS,
  TS_EXPLAIN_MOE_ROUTING,
  TS_EXPLAIN_MEMORY
} ts_explain_loss_kind;

typedef struct ts_explain_change {
  char tokens[TS_EXPLAIN_MAX_TOKENS][96]; /* the flags added to the run's arguments */
  int n_tokens;
  char flags[TS_EXPLAIN_MAX_TOKENS * 96]; /* the tokens, as shown */
  char note[200]; /* what it changes, in plain words */
  bool is_no_fit; /* its fullest GPU exceeds what the framework can allocate */
  double peak_gib, usable_gib; /* its fullest GPU's bytes, and what it can allocate */
  double estimate_s, simulated_s; /* 0 until known */
  char failure[320]; /* why its estimate or simulation did not finish */
} ts_explain_change;

typedef struct ts_explain_loss {
  ts_explain_loss_kind kind;
  double seconds; /* mean over ranks; 0 for unused memory */
  char mechanism[1400];
  int changes[TS_EXPLAIN_MAX_LOSS_CHANGES]; /* into ts_explain.changes */
  int n_changes;
} ts_explain_loss;

/* Vets change c against the run: -1 when the run with c's flags breaks a layout rule (it is
 * then not offered), else 0 with the bytes its fullest GPU holds and what the framework can
 * allocate there (its layout's NCCL buffers out: ccl_memory.h). */
typedef int (*ts_explain_check_fn)(void *ctx, const ts_explain_change *c, double *peak_bytes,
                                   double *usable_bytes);

/* The run explained and what the model makes of it. Plain data: fill the inputs, call
 * ts_explain_analyse; the caller then fills the changes' estimate_s and simulated_s (and
 * base_estimate_s, compare_s) before ts_explain_print. */
typedef struct ts_explain {
  /* inputs: the run's resolved workload, its machine, its figures (result.json) */
  const ts_workload *wl;
  const char *platform_name, *gpu_model, *fidelity;
  int gpus_per_node;
  double usable_bytes; /* of a GPU's HBM, what the framework can allocate */
  int n_nics;
  const double *nic_Bps; /* [n_nics] of a node */
  double iteration_s, breakdown_s[TS_CAT_COUNT];
  long n_stages;
  const double *stage_work_s; /* [stage]: compute and recomputation */
  double slowest_gpu_slowdown; /* compute x this for the slowest GPU (1: none) */
  double speed_spread; /* the platform's gpu.speed_spread */
  const ts_reliability *reliability; /* NULL, or not modelled: no goodput loss */
  const ts_gpu *gpu; /* prices a MoE layer's parts (NULL: no MoE losses) */
  /* the model's */
  ts_explain_loss losses[TS_CAT_COUNT + 6];
  int n_losses;
  double peak_bytes; /* of the run's fullest GPU */
  ts_explain_change changes[TS_EXPLAIN_MAX_CHANGES];
  int n_changes;
  /* the caller's: the run's own layout estimated, and the iteration the simulated changes are
   * compared with (the run's, or this build's rerun of it: is_resimulated) */
  double base_estimate_s, compare_s;
  bool is_resimulated;
} ts_explain;

/* The losses that take at least 1% of the iteration, largest first (at most 5), then unused
 * memory when a fifth of HBM or more is free; each with its mechanism and its changes, vetted
 * by check. */
void ts_explain_analyse(ts_explain *x, ts_explain_check_fn check, void *ctx);

/* Orders loss l's changes by outcome: those with a figure by their gain, each against its own
 * fidelity's figure for the run's layout (simulated against compare_s, estimated against
 * base_estimate_s), then those whose estimate failed, then those that do not fit (by memory). */
void ts_explain_sort(const ts_explain *x, ts_explain_loss *l);

/* The explanation, as `trainsim explain` prints it; `simulated` is how many changes per loss the
 * caller simulated. */
void ts_explain_print(FILE *f, const ts_explain *x, long simulated);

#endif
