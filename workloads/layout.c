/* layout: see layout.h. */
#include "layout.h"

static long axis_size(const ts_workload *wl, ts_axis a) {
  return a == TS_AXIS_TP ? wl->tp : a == TS_AXIS_DP ? ts_workload_dp_cp(wl) : wl->pp;
}

static long *axis_field(ts_coords *c, ts_axis a) {
  return a == TS_AXIS_TP ? &c->tp : a == TS_AXIS_DP ? &c->dp : &c->pp;
}

long ts_layout_rank(const ts_workload *wl, ts_coords c) {
  long rank = 0;
  for (int i = TS_AXIS_COUNT - 1; i >= 0; i--)
    rank = rank * axis_size(wl, wl->order[i]) + *axis_field(&c, wl->order[i]);
  return rank;
}

ts_coords ts_layout_coords(const ts_workload *wl, long rank) {
  ts_coords c = {0, 0, 0};
  for (int i = 0; i < TS_AXIS_COUNT; i++) {
    long n = axis_size(wl, wl->order[i]);
    *axis_field(&c, wl->order[i]) = rank % n;
    rank /= n;
  }
  return c;
}

long ts_layout_expert_rank(const ts_workload *wl, ts_expert_coords c) {
  long etp = ts_workload_etp(wl), j = c.etp + etp * (c.ep + wl->ep * c.edp);
  return ts_layout_rank(wl, (ts_coords){j % wl->tp, j / wl->tp, c.pp});
}

ts_expert_coords ts_layout_expert_coords(const ts_workload *wl, long rank) {
  ts_coords c = ts_layout_coords(wl, rank);
  long etp = ts_workload_etp(wl), j = c.tp + wl->tp * c.dp;
  return (ts_expert_coords){j % etp, (j / etp) % wl->ep, j / (etp * wl->ep), c.pp};
}
