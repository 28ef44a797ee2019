/* layout: rank <-> (tp, dp, pp) coordinates <-> GPU.
 *
 * Ranks are numbered with the placement order's innermost axis fastest (Megatron-LM's default
 * is tp, then dp, then pp), and rank r runs on GPU r of a contiguous allocation starting at
 * the machine's first node. With tp <= GPUs per node and tp first, a TP group shares a node.
 */
#ifndef TS_LAYOUT_H
#define TS_LAYOUT_H

#include "workload.h"

/* dp is the rank's index among the dp x cp ranks of its (tp, pp): its context-parallel rank is
 * dp mod cp, its data-parallel replica dp / cp (Megatron-Core's order tp-cp-dp-pp, context
 * inside data). They hold the same weights, so the data-parallel axis groups all of them. */
typedef struct ts_coords {
  long tp, dp, pp;
} ts_coords;

long ts_layout_rank(const ts_workload *wl, ts_coords c);
ts_coords ts_layout_coords(const ts_workload *wl, long rank);

/* The expert grid (Megatron-Core's parallel folding, its expert RankGenerator "tp-ep-dp-pp"):
 * within a pipeline stage, rank (tp, dp) is number j = tp + tp_size x dp of the stage, and
 * j = etp + etp_size x (ep + ep_size x edp) on the grid of the experts. */
typedef struct ts_expert_coords {
  long etp, ep, edp, pp;
} ts_expert_coords;

long ts_layout_expert_rank(const ts_workload *wl, ts_expert_coords c);
ts_expert_coords ts_layout_expert_coords(const ts_workload *wl, long rank);

#endif
