/* layout: rank <-> (tp, dp, pp) coordinates <-> GPU.
 *
 * Ranks are numbered with the placement order's innermost axis fastest (Megatron-LM's default
 * is tp, then dp, then pp), and rank r runs on GPU r of a contiguous allocation starting at
 * the machine's first node. With tp <= GPUs per node and tp first, a TP group shares a node.
 */
#ifndef TS_LAYOUT_H
#define TS_LAYOUT_H

#include "workload.h"

typedef struct ts_coords {
  long tp, dp, pp;
} ts_coords;

long ts_layout_rank(const ts_workload *wl, ts_coords c);
ts_coords ts_layout_coords(const ts_workload *wl, long rank);

#endif
